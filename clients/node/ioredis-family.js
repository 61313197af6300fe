// The driver shared by ioredis and its fork iovalkey (same API): one connection; async =
// workers loops with their requests in flight on it; no pool in these libraries.
"use strict";

const { refuse, SET, GET } = require("./kit");

function openIoredis(Redis, label) {
  return async function open(wl) {
    const model = wl.spec.concurrency.model;
    if (model !== "single" && model !== "async") refuse(`concurrency model ${model} is not supported by ${label}`);
    const ep = wl.spec.endpoint;
    const client = new Redis({
      host: ep.host, port: ep.port, password: wl.password || undefined, tls: wl.tls || undefined,
      lazyConnect: true, connectTimeout: 5000, commandTimeout: 10000, maxRetriesPerRequest: 0,
      retryStrategy: () => null, enableAutoPipelining: false, enableOfflineQueue: true,
    });
    client.on("error", () => {}); // reported through the failing call instead
    await client.connect();
    const value = wl.value;
    const conn = {
      call(op, key) {
        if (op === SET) return client.set(key, value);
        if (op === GET) return client.get(key);
        return client.incr(key);
      },
      async batch(ops, keys, n, tx, errs) {
        const p = tx ? client.multi() : client.pipeline();
        for (let j = 0; j < n; j++) {
          if (ops[j] === SET) p.set(keys[j], value);
          else if (ops[j] === GET) p.get(keys[j]);
          else p.incr(keys[j]);
        }
        try {
          const replies = await p.exec();
          for (let j = 0; j < n; j++) errs[j] = replies && replies[j] ? replies[j][0] : new Error("transaction aborted");
        } catch (e) {
          errs.fill(e, 0, n);
        }
      },
    };
    return { conn: () => conn, close: () => client.disconnect() };
  };
}

module.exports = { openIoredis };
