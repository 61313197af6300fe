// kvperf client harness for node-redis (npm `redis`, contract v1, issue 23).
// single: one client; async: workers loops with requests in flight on one client;
// pool: workers loops sharing createClientPool (minimum = maximum = workers clients).
"use strict";
const { createClient, createClientPool } = require("redis");
const { main, refuse, SET, GET } = require("../kit");

function clientOptions(wl) {
  const ep = wl.spec.endpoint;
  const socket = { host: ep.host, port: ep.port, connectTimeout: 5000, socketTimeout: 10000,
                   reconnectStrategy: false };
  if (wl.tls) Object.assign(socket, wl.tls, { tls: true });
  return { socket, password: wl.password || undefined };
}

async function open(wl) {
  const { model, workers } = wl.spec.concurrency;
  if (!["single", "async", "pool"].includes(model)) refuse(`concurrency model ${model} is not supported by node-redis`);
  const client = model === "pool"
    ? createClientPool(clientOptions(wl), { minimum: workers, maximum: workers, acquireTimeout: 10000 })
    : createClient(clientOptions(wl));
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
      const m = client.multi();
      for (let j = 0; j < n; j++) {
        if (ops[j] === SET) m.set(keys[j], value);
        else if (ops[j] === GET) m.get(keys[j]);
        else m.incr(keys[j]);
      }
      try {
        await (tx ? m.exec() : m.execAsPipeline());
        errs.fill(null, 0, n);
      } catch (e) {
        if (Array.isArray(e.errorIndexes)) {
          errs.fill(null, 0, n);
          for (const i of e.errorIndexes) errs[i] = e.replies[i];
        } else {
          errs.fill(e, 0, n);
        }
      }
    },
  };
  return { conn: () => conn, close: () => (model === "pool" ? client.close() : client.destroy()) };
}

main({ name: "node-redis", library: "node-redis", package: "redis" }, open);
