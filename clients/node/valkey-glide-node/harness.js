// kvperf client harness for Valkey GLIDE for Node (@valkey/valkey-glide, contract v1, issue 23).
// GLIDE multiplexes one connection (Rust core): single, and async = workers loops with their
// requests in flight on it. No pool. TLS: the CA file is passed as rootCertificates; GLIDE's
// Node API takes no client certificate, so a spec with cert_file/key_file is refused.
"use strict";
const fs = require("fs");
const { GlideClient, Batch } = require("@valkey/valkey-glide");
const { main, refuse, SET, GET } = require("../kit");

function config(wl) {
  const ep = wl.spec.endpoint;
  const cfg = { addresses: [{ host: ep.host, port: ep.port }], requestTimeout: 10000,
                advancedConfiguration: { connectionTimeout: 5000 } };
  if (wl.password) cfg.credentials = { password: wl.password };
  if (ep.tls) {
    if (ep.cert_file || ep.key_file) refuse("TLS client certificates are not supported by valkey-glide-node");
    cfg.useTLS = true;
    if (ep.ca_file) cfg.advancedConfiguration.tlsAdvancedConfiguration = { rootCertificates: fs.readFileSync(ep.ca_file) };
  }
  return cfg;
}

async function open(wl) {
  const model = wl.spec.concurrency.model;
  if (model !== "single" && model !== "async") refuse(`concurrency model ${model} is not supported by valkey-glide-node`);
  const client = await GlideClient.createClient(config(wl));
  const value = wl.value;
  const conn = {
    call(op, key) {
      if (op === SET) return client.set(key, value);
      if (op === GET) return client.get(key);
      return client.incr(key);
    },
    async batch(ops, keys, n, tx, errs) {
      const b = new Batch(tx);
      for (let j = 0; j < n; j++) {
        if (ops[j] === SET) b.set(keys[j], value);
        else if (ops[j] === GET) b.get(keys[j]);
        else b.incr(keys[j]);
      }
      try {
        const replies = await client.exec(b, false);
        for (let j = 0; j < n; j++) {
          const r = replies ? replies[j] : new Error("transaction aborted");
          errs[j] = r instanceof Error ? r : null;
        }
      } catch (e) {
        errs.fill(e, 0, n);
      }
    },
  };
  return { conn: () => conn, close: () => client.close() };
}

main({ name: "valkey-glide-node", library: "valkey-glide", package: "@valkey/valkey-glide" }, open);
