// The library-independent part of kvperf's Node client harnesses (contract v1, issue 23):
// the workload spec, the per-worker loop with preallocated histograms, the result JSON.
// A harness supplies a driver: open(workload) → {call(op, key), batch(ops, keys, n, tx, errs), close()}.
"use strict";

const fs = require("fs");
const path = require("path");
const v8 = require("v8");
const { performance } = require("perf_hooks");
const hdr = require("hdr-histogram-js");

const OPS = ["SET", "GET", "INCR"];
const SET = 0, GET = 1, INCR = 2;

class Refusal extends Error {}

function refuse(msg) {
  throw new Refusal(msg);
}

function loadSpec(file) {
  let s;
  try {
    s = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    refuse(`cannot read spec ${file}: ${e.message}`);
  }
  if (s.format !== "kvperf-client-workload" || s.version !== 1) refuse(`unsupported spec format ${s.format} v${s.version}`);
  if (!s.commands || !s.commands.length) refuse("spec has no commands");
  for (const c of s.commands) if (!OPS.includes(c.command)) refuse(`command ${c.command} is not in the v1 vocabulary (SET, GET, INCR)`);
  if (!(s.keys.count >= 1)) refuse("keys.count must be >= 1");
  if (!["random", "sequential"].includes(s.keys.pattern)) refuse(`unknown key pattern ${s.keys.pattern}`);
  if (!(s.pipeline >= 1)) refuse("pipeline must be >= 1");
  if (!(s.concurrency.workers >= 1)) refuse("concurrency.workers must be >= 1");
  if ((s.requests == null) === (s.duration_s == null)) refuse("exactly one of requests and duration_s must be set");
  if (s.concurrency.model === "single" && s.concurrency.workers !== 1) refuse("concurrency model single needs workers = 1");
  if (s.rate != null && !(typeof s.rate === "object" && s.rate.rps > 0 && ["uniform", "poisson"].includes(s.rate.arrivals))) {
    refuse('rate must be {"rps": > 0, "arrivals": "uniform" or "poisson"}');
  }
  if (s.allocation_ops != null && !(Number.isInteger(s.allocation_ops) && s.allocation_ops >= 1)) refuse("allocation_ops must be an integer >= 1");
  return s;
}

// Everything built once, before any loop runs.
function workload(spec) {
  const n = spec.keys.count;
  const keys = new Array(n);
  for (let i = 0; i < n; i++) keys[i] = spec.keys.prefix + i;
  const usesIncr = spec.commands.some((c) => c.command === "INCR");
  const incrKeys = usesIncr ? keys.map((_, i) => spec.keys.prefix + "incr:" + i) : null;
  let total = 0;
  const ops = [], cum = [];
  for (const c of spec.commands) {
    total += c.ratio;
    ops.push(OPS.indexOf(c.command));
    cum.push(total);
  }
  return { spec, keys, incrKeys, value: "x".repeat(spec.value_size), ops, cum, total,
           password: process.env.KVPERF_CLIENT_PASSWORD || null, tls: tlsOptions(spec.endpoint) };
}

function tlsOptions(ep) {
  if (!ep.tls) return null;
  const opts = { servername: ep.host };
  if (ep.ca_file) opts.ca = fs.readFileSync(ep.ca_file);
  if (ep.cert_file) opts.cert = fs.readFileSync(ep.cert_file);
  if (ep.key_file) opts.key = fs.readFileSync(ep.key_file);
  return opts;
}

// mulberry32: a small seeded PRNG (uniform 32-bit outputs).
function prng(seed) {
  let a = seed >>> 0;
  return function () {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STALL_MS = 5000;
const RESOLVED = Promise.resolve(null);
function noop() {
  return RESOLVED;
}

// Resolves at t (performance.now ms): a timer to within a millisecond of it (Node's timers
// have millisecond resolution), then turns of the event loop (setImmediate: replies of other
// workers are read meanwhile) until it has passed.
async function until(t) {
  const ahead = t - performance.now();
  if (ahead > 1.5) await new Promise((resolve) => setTimeout(resolve, ahead - 1));
  while (performance.now() < t) await new Promise(setImmediate);
}

function newHistogram() {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 60000000,
                     numberOfSignificantValueDigits: 3, bitBucketSize: 64 });
}

class Worker {
  constructor(wl, conn, idx) {
    const s = wl.spec;
    this.wl = wl; this.conn = conn; this.idx = idx;
    this.rand = prng(s.seed + idx);
    this.seq = idx % s.keys.count;
    this.opBuf = new Uint8Array(s.pipeline);
    this.keyBuf = new Array(s.pipeline).fill("");
    this.errs = new Array(s.pipeline).fill(null);
    this.perBatch = new Float64Array(3);
    this.hist = [newHistogram(), newHistogram(), newHistogram()];
    this.ops = new Float64Array(3); this.failed = new Float64Array(3); this.warm = new Float64Array(3);
    this.tx = 0; this.warmTx = 0; this.firstError = null; this.end = 0;
    this.passing = false; this.pass = new Float64Array(3); this.passTx = 0;  // the allocation pass
    const rate = s.rate;  // the open loop: this worker's batches' intended send times (ms)
    this.gap = rate ? s.concurrency.workers * s.pipeline / rate.rps * 1000 : 0;
    this.poisson = rate ? rate.arrivals === "poisson" : false;
    this.paceRand = prng(s.seed * 7919 + idx);
    this.due = performance.now();
  }

  // The next batch's intended send time (ms), the schedule moved on.
  take() {
    const due = this.due;
    this.due += this.poisson ? -Math.log(1 - this.paceRand()) * this.gap : this.gap;
    return due;
  }

  draw(j) {
    const wl = this.wl;
    const u = this.rand() * wl.total;
    let op = wl.ops[wl.ops.length - 1];
    for (let i = 0; i < wl.cum.length; i++) if (u < wl.cum[i]) { op = wl.ops[i]; break; }
    let i;
    if (wl.spec.keys.pattern === "random") {
      i = Math.floor(this.rand() * wl.spec.keys.count);
    } else {
      i = this.seq;
      this.seq = (this.seq + wl.spec.concurrency.workers) % wl.spec.keys.count;
    }
    this.opBuf[j] = op;
    this.keyBuf[j] = op === INCR ? wl.incrKeys[i] : wl.keys[i];
  }

  // Runs until deadline (ms, performance.now clock; 0 = none) or limit commands (-1 = none).
  async phase(measure, deadline, limit) {
    const s = this.wl.spec, p = s.pipeline, tx = s.transaction, single = p === 1 && !tx;
    const conn = this.conn, errs = this.errs;
    for (let done = 0; limit < 0 || done < limit;) {
      const n = limit >= 0 ? Math.min(p, limit - done) : p;
      for (let j = 0; j < n; j++) this.draw(j);
      const due = this.gap && !this.passing ? this.take() : 0;
      if (due) await until(due);
      const t0 = due || performance.now();
      if (s.noop) {
        await noop();
      } else if (single) {
        try {
          await conn.call(this.opBuf[0], this.keyBuf[0]);
          errs[0] = null;
        } catch (e) {
          errs[0] = e;
        }
      } else {
        await conn.batch(this.opBuf, this.keyBuf, n, tx, errs);
      }
      const t1 = performance.now();
      if (t1 - t0 >= STALL_MS) this.checkStall(n);
      done += n;
      // warmup records too (forgotten at its end): the measured window runs no code the JIT
      // meets for the first time (Kit.java: C2 compiled the histogram inside the window)
      if (measure || !this.passing) this.record(n, t1 - t0);
      if (measure) this.end = t1;
      else this.countWarmup(n);
      if (deadline && t1 >= deadline) break;
    }
  }

  // A call failing after STALL_MS means the server stopped answering (the libraries' timeouts are
  // 10 s): exit 1 rather than time out once per remaining request.
  checkStall(n) {
    for (let j = 0; j < n; j++) {
      if (this.errs[j] && !this.wl.spec.noop) {
        const ep = this.wl.spec.endpoint;
        fail(1, `server ${ep.host}:${ep.port} stopped answering: ${this.errs[j].message || this.errs[j]}`);
      }
    }
  }

  record(n, ms) {
    const us = Math.max(1, Math.floor(ms * 1000));
    if (this.wl.spec.transaction) this.tx++;
    const noopRun = this.wl.spec.noop;
    for (let j = 0; j < n; j++) {
      const op = this.opBuf[j], err = this.errs[j];
      if (err && !noopRun) {
        this.failed[op]++;
        if (this.firstError === null) this.firstError = String(err.message || err);
      } else {
        this.perBatch[op]++;
      }
    }
    for (let op = 0; op < 3; op++) {
      const k = this.perBatch[op];
      if (k > 0) {
        this.ops[op] += k;
        this.hist[op].recordValueWithCount(us, k);
        this.perBatch[op] = 0;
      }
    }
  }

  // What warmup recorded in the measured window's counters and histograms, cleared.
  forgetWarmup() {
    for (let op = 0; op < 3; op++) this.hist[op].reset();
    this.ops.fill(0); this.failed.fill(0);
    this.tx = 0; this.firstError = null;
  }

  countWarmup(n) {
    const counts = this.passing ? this.pass : this.warm;
    for (let j = 0; j < n; j++) counts[this.opBuf[j]]++;
    if (!this.wl.spec.transaction) return;
    if (this.passing) this.passTx++;
    else this.warmTx++;
  }
}

function share(requests, n, i) {
  if (requests == null) return -1;
  return Math.floor(requests / n) + (i < requests % n ? 1 : 0);
}

async function runWorkers(wl, driver) {
  const s = wl.spec, n = s.concurrency.workers;
  const workers = [];
  for (let i = 0; i < n; i++) workers.push(new Worker(wl, driver.conn(i), i));
  const start = performance.now();
  const warmEnd = start + s.warmup_s * 1000;
  const measureEnd = s.duration_s != null ? warmEnd + s.duration_s * 1000 : 0;
  // The process's CPU (every thread: V8's, libuv's pool, a native core's) when warmup ends —
  // a timer on the event loop the workers share — and when the last worker is done.
  let cpuStart = null, timer = null;
  if (s.warmup_s > 0) timer = setTimeout(() => { cpuStart = process.cpuUsage(); }, warmEnd - performance.now());
  else cpuStart = process.cpuUsage();
  await Promise.all(workers.map(async (w, i) => {
    if (s.warmup_s > 0) {
      await w.phase(false, warmEnd, -1);
      w.forgetWarmup();
    }
    await w.phase(true, measureEnd, share(s.requests, n, i));
  }));
  if (timer) clearTimeout(timer);
  const res = merge(wl, workers, warmEnd);
  if (cpuStart) {
    const used = process.cpuUsage(cpuStart);
    res.cpu = { user_s: used.user / 1e6, system_s: used.system / 1e6,
                source: "process.cpuUsage (getrusage RUSAGE_SELF): every thread, from warmup's end to the last worker's" };
  }
  res.allocations = await allocationPass(wl, workers);
  if (s.rate) res.rate = s.rate;
  return res;
}

const DEFAULT_ALLOCATION_OPS = 1000;

// The untimed allocation pass after the measured window: allocation_ops more operations by the
// same workers and model, the JS heap's bytes allocated in it = V8's used heap size's growth
// plus what each garbage collection in the pass freed (v8.GCProfiler's before/after figures).
async function allocationPass(wl, workers) {
  const s = wl.spec, ops = s.allocation_ops ?? DEFAULT_ALLOCATION_OPS;
  const profiler = new v8.GCProfiler();
  profiler.start();
  const before = v8.getHeapStatistics().used_heap_size;
  await Promise.all(workers.map((w, i) => {
    w.passing = true;
    return w.phase(false, 0, share(ops, workers.length, i));
  }));
  const after = v8.getHeapStatistics().used_heap_size;
  let freed = 0;
  for (const gc of profiler.stop().statistics) {
    freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
  }
  const calls = {};
  for (const c of s.commands) {
    const op = OPS.indexOf(c.command);
    calls[c.command] = workers.reduce((t, w) => t + w.pass[op], 0);
  }
  if (s.transaction) calls.MULTI = calls.EXEC = workers.reduce((t, w) => t + w.passTx, 0);
  return { bytes_per_op: Math.max(after - before + freed, 0) / ops, ops, calls, exact: false,
           method: "v8 used heap size's growth over an untimed pass after the measured window plus what " +
                   "each GC in it freed (v8.GCProfiler): JS heap only (Buffers' backing stores and a native " +
                   "core's memory not counted)" };
}

function merge(wl, workers, measureStart) {
  const res = { format: "kvperf-client-result", version: 1, client: null, duration_s: 0,
                warmup: {}, commands: {}, transactions: 0, first_error: null, allocations: null };
  let end = measureStart, warmTx = 0;
  for (const c of wl.spec.commands) {
    const op = OPS.indexOf(c.command);
    const h = newHistogram();
    let ops = 0, failed = 0, warm = 0;
    for (const w of workers) {
      h.add(w.hist[op]);
      ops += w.ops[op]; failed += w.failed[op]; warm += w.warm[op];
    }
    res.commands[c.command] = { ops, errors: failed, histogram: hdr.encodeIntoCompressedBase64(h) };
    res.warmup[c.command] = warm;
  }
  for (const w of workers) {
    res.transactions += w.tx;
    warmTx += w.warmTx;
    if (w.end > end) end = w.end;
    if (res.first_error === null) res.first_error = w.firstError;
  }
  res.warmup.MULTI = warmTx;
  res.warmup.EXEC = warmTx;
  res.duration_s = (end - measureStart) / 1000;
  return res;
}

// The installed version of an npm package, read from its package.json on NODE_PATH.
function packageVersion(name) {
  const dirs = (process.env.NODE_PATH || "").split(path.delimiter).filter(Boolean);
  for (const dir of dirs) {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, name, "package.json"), "utf8")).version;
    } catch (e) {
      // not in this directory
    }
  }
  return "unknown";
}

function fail(code, msg) {
  process.stderr.write(msg.split("\n")[0] + "\n");
  process.exit(code);
}

function withTimeout(promise, ms, what) {
  let timer;
  const t = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms); });
  return Promise.race([promise, t]).finally(() => clearTimeout(timer));
}

// main(info, open): spec → driver → workers → result on stdout.
// info = {name, library, package}; open(wl) may throw a Refusal (exit 2); a failure to connect exits 1.
async function main(info, open) {
  if (process.argv.length !== 3) fail(2, "usage: harness.js SPEC.json");
  let wl, driver;
  try {
    wl = workload(loadSpec(process.argv[2]));
    driver = await withTimeout(open(wl), 10000, "connecting");
  } catch (e) {
    if (e instanceof Refusal) fail(2, e.message);
    const ep = wl ? `${wl.spec.endpoint.host}:${wl.spec.endpoint.port}` : "the server";
    fail(1, `cannot reach ${ep}: ${e.message || e}`);
  }
  const res = await runWorkers(wl, driver);
  res.client = { name: info.name, library: info.library, version: packageVersion(info.package),
                 language: "node", runtime: `node ${process.version}` };
  try {
    await withTimeout(Promise.resolve(driver.close()), 5000, "closing");
  } catch (e) {
    // closing is best effort: the result is complete
  }
  process.stdout.write(JSON.stringify(res) + "\n", () => process.exit(0));
}

module.exports = { main, refuse, Refusal, SET, GET, INCR, OPS };
