// kvperf client harness for ioredis (contract v1, issue 23): single and async; no pool.
"use strict";
const { Redis } = require("ioredis");
const { main } = require("../kit");
const { openIoredis } = require("../ioredis-family");

main({ name: "ioredis", library: "ioredis", package: "ioredis" }, openIoredis(Redis, "ioredis"));
