// kvperf client harness for iovalkey (the Valkey fork of ioredis, contract v1, issue 23):
// single and async; no pool.
"use strict";
const Redis = require("iovalkey");
const { main } = require("../kit");
const { openIoredis } = require("../ioredis-family");

main({ name: "iovalkey", library: "iovalkey", package: "iovalkey" }, openIoredis(Redis.Redis || Redis, "iovalkey"));
