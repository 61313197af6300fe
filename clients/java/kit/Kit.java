// The library-independent part of kvperf's Java client harnesses (contract v1, issue 23): the
// workload spec (a small JSON reader: no JSON library is a dependency), the per-worker loop
// (blocking threads, or callbacks for an async library), HdrHistogram recording and the result.
import java.io.ByteArrayInputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.HdrHistogram.Histogram;

final class Kit {
    static final int SET = 0, GET = 1, INCR = 2;
    static final String[] OPS = {"SET", "GET", "INCR"};
    static final long STALL_NANOS = 5_000_000_000L;
    static final long DEFAULT_ALLOCATION_OPS = 1000;

    private Kit() {}

    /** A spec the harness cannot honour: exit 2. */
    static final class Refusal extends RuntimeException {
        Refusal(String msg) { super(msg); }
    }

    /** One worker's connection. Blocking libraries implement call/batch; async ones start/startBatch. */
    interface Conn {
        default void call(int op, String key) throws Exception { throw new Refusal("no blocking API"); }

        default void batch(int[] ops, String[] keys, int n, boolean tx, Throwable[] errs) {
            throw new Refusal("no blocking API");
        }

        /** Sends n commands (one when n == 1 and !tx); fills errs and runs done when all replied. */
        default void start(int[] ops, String[] keys, int n, boolean tx, Throwable[] errs, Runnable done) {
            throw new Refusal("no async API");
        }
    }

    interface Driver {
        Conn conn(int worker);

        /** True when the workers' calls complete through callbacks (start), not blocking calls. */
        default boolean async() { return false; }

        void close();
    }

    // ------------------------------------------------------------------ spec

    static final class Spec {
        String host, prefix, pattern, model;
        String caFile, certFile, keyFile;
        int port, count, valueSize, pipeline, workers;
        boolean tls, transaction, noop;
        long requests = -1, seed, allocationOps = DEFAULT_ALLOCATION_OPS;
        double durationS = -1, warmupS, rps;  // rps > 0: the open loop
        boolean poisson;
        int[] ops;
        double[] cum;
        String password = System.getenv("KVPERF_CLIENT_PASSWORD");
    }

    @SuppressWarnings("unchecked")
    static Spec loadSpec(String path) {
        Map<String, Object> j;
        try {
            j = (Map<String, Object>) new Json(Files.readString(Path.of(path))).value();
        } catch (Exception e) {
            throw new Refusal("cannot read spec " + path + ": " + e.getMessage());
        }
        if (!"kvperf-client-workload".equals(j.get("format")) || num(j, "version") != 1) {
            throw new Refusal("unsupported spec format " + j.get("format"));
        }
        Spec s = new Spec();
        Map<String, Object> ep = (Map<String, Object>) j.get("endpoint");
        Map<String, Object> keys = (Map<String, Object>) j.get("keys");
        Map<String, Object> conc = (Map<String, Object>) j.get("concurrency");
        s.host = (String) ep.get("host");
        s.port = (int) num(ep, "port");
        s.tls = Boolean.TRUE.equals(ep.get("tls"));
        s.caFile = (String) ep.get("ca_file");
        s.certFile = (String) ep.get("cert_file");
        s.keyFile = (String) ep.get("key_file");
        List<Object> cmds = (List<Object>) j.get("commands");
        if (cmds == null || cmds.isEmpty()) throw new Refusal("spec has no commands");
        s.ops = new int[cmds.size()];
        s.cum = new double[cmds.size()];
        double total = 0;
        for (int i = 0; i < cmds.size(); i++) {
            Map<String, Object> c = (Map<String, Object>) cmds.get(i);
            s.ops[i] = List.of(OPS).indexOf(c.get("command"));
            if (s.ops[i] < 0) throw new Refusal("command " + c.get("command") + " is not in the v1 vocabulary (SET, GET, INCR)");
            total += num(c, "ratio");
            s.cum[i] = total;
        }
        s.prefix = (String) keys.get("prefix");
        s.count = (int) num(keys, "count");
        s.pattern = (String) keys.get("pattern");
        s.valueSize = (int) num(j, "value_size");
        s.pipeline = (int) num(j, "pipeline");
        s.transaction = Boolean.TRUE.equals(j.get("transaction"));
        s.model = (String) conc.get("model");
        s.workers = (int) num(conc, "workers");
        if (j.get("requests") != null) s.requests = (long) num(j, "requests");
        if (j.get("duration_s") != null) s.durationS = num(j, "duration_s");
        s.warmupS = num(j, "warmup_s");
        s.seed = (long) num(j, "seed");
        s.noop = Boolean.TRUE.equals(j.get("noop"));
        if (j.get("allocation_ops") != null) s.allocationOps = (long) num(j, "allocation_ops");
        parseRate(s, j.get("rate"));
        validate(s, j);
        return s;
    }

    /** The open loop, if any: {"rps": > 0, "arrivals": "uniform" | "poisson"}. */
    @SuppressWarnings("unchecked")
    private static void parseRate(Spec s, Object rate) {
        if (rate == null) return;
        String wrong = "rate must be {\"rps\": > 0, \"arrivals\": \"uniform\" or \"poisson\"}";
        if (!(rate instanceof Map)) throw new Refusal(wrong);
        Map<String, Object> r = (Map<String, Object>) rate;
        Object arrivals = r.get("arrivals");
        if (!(r.get("rps") instanceof Double) || !((Double) r.get("rps") > 0)
                || !("uniform".equals(arrivals) || "poisson".equals(arrivals))) throw new Refusal(wrong);
        s.rps = (Double) r.get("rps");
        s.poisson = "poisson".equals(arrivals);
    }

    private static void validate(Spec s, Map<String, Object> j) {
        if (s.count < 1 || s.pipeline < 1 || s.workers < 1) throw new Refusal("keys.count, pipeline and workers must be >= 1");
        if (!"random".equals(s.pattern) && !"sequential".equals(s.pattern)) throw new Refusal("unknown key pattern " + s.pattern);
        if ((j.get("requests") == null) == (j.get("duration_s") == null)) {
            throw new Refusal("exactly one of requests and duration_s must be set");
        }
        if ("single".equals(s.model) && s.workers != 1) throw new Refusal("concurrency model single needs workers = 1");
        if (s.allocationOps < 1) throw new Refusal("allocation_ops must be >= 1");
    }

    private static double num(Map<String, Object> m, String key) {
        Object v = m.get(key);
        if (!(v instanceof Double)) throw new Refusal("spec field " + key + " must be a number");
        return (Double) v;
    }

    /** Refuses a model the harness does not list. */
    static void requireModel(Spec s, String name, String... models) {
        if (!List.of(models).contains(s.model)) {
            throw new Refusal("concurrency model " + s.model + " is not supported by " + name);
        }
    }

    /** An SSLContext from PEM files (CA; client certificate with a PKCS#8 key). */
    static SSLContext sslContext(Spec s) throws Exception {
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        TrustManagerFactory tmf = null;
        if (s.caFile != null) {
            KeyStore ts = KeyStore.getInstance(KeyStore.getDefaultType());
            ts.load(null, null);
            int i = 0;
            for (Certificate c : cf.generateCertificates(new ByteArrayInputStream(Files.readAllBytes(Path.of(s.caFile))))) {
                ts.setCertificateEntry("ca" + i++, c);
            }
            tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ts);
        }
        KeyManagerFactory kmf = null;
        if (s.certFile != null && s.keyFile != null) {
            String pem = Files.readString(Path.of(s.keyFile));
            if (!pem.contains("BEGIN PRIVATE KEY")) throw new Refusal("key_file must be an unencrypted PKCS#8 PEM key");
            byte[] der = Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
            java.security.PrivateKey key;
            try {
                key = KeyFactory.getInstance("RSA").generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (Exception e) {
                key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der));
            }
            Certificate[] chain = cf.generateCertificates(new ByteArrayInputStream(Files.readAllBytes(Path.of(s.certFile))))
                    .toArray(new Certificate[0]);
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            ks.setKeyEntry("client", key, new char[0], chain);
            kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, new char[0]);
        }
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf == null ? null : tmf.getTrustManagers(), null);
        return ctx;
    }

    // ------------------------------------------------------------------ workload and worker

    /** Keys and value built once, before any loop. */
    static final class Workload {
        final Spec spec;
        final String[] keys, incrKeys;
        final String value;

        Workload(Spec s) {
            spec = s;
            keys = new String[s.count];
            incrKeys = new String[s.count];
            for (int i = 0; i < s.count; i++) {
                keys[i] = s.prefix + i;
                incrKeys[i] = s.prefix + "incr:" + i;
            }
            value = "x".repeat(s.valueSize);
        }
    }

    static final class Worker {
        final Workload wl;
        final Spec s;
        final Conn conn;
        final SplittableRandom rng;
        final int[] batchOps;
        final String[] batchKeys;
        final Throwable[] errs;
        final long[] per = new long[3], ops = new long[3], failed = new long[3], warm = new long[3];
        final Histogram[] hist = new Histogram[3];
        long tx, warmTx, endNanos, limit, done, t0, passTx, passStart, passEnd;
        double due;  // the open loop: the next batch's intended send time (nanoTime)
        SplittableRandom paceRng;
        final long[] pass = new long[3];
        int seq, n;
        final boolean random;
        boolean measuring, passing;
        String firstError;
        final long warmEnd, measureEnd;
        CountDownLatch finished;

        Worker(Workload wl, Conn conn, int idx, long warmEnd, long measureEnd, CountDownLatch finished) {
            this.wl = wl;
            this.s = wl.spec;
            this.conn = conn;
            this.rng = new SplittableRandom(s.seed + idx);
            this.seq = idx % s.count;
            this.random = s.pattern.equals("random");
            this.batchOps = new int[s.pipeline];
            this.batchKeys = new String[s.pipeline];
            this.errs = new Throwable[s.pipeline];
            for (int i = 0; i < 3; i++) hist[i] = new Histogram(1, 60_000_000, 3);
            this.warmEnd = warmEnd;
            this.measureEnd = measureEnd;
            this.finished = finished;
            this.measuring = s.warmupS <= 0;
            this.limit = measuring ? share(s.requests, s.workers, idx) : -1;
            this.shareOf = share(s.requests, s.workers, idx);
            this.paceRng = new SplittableRandom(s.seed * 7919 + idx);
            this.due = System.nanoTime();
        }

        /** Paced: the open loop outside the allocation pass. */
        private boolean paced() {
            return s.rps > 0 && !passing;
        }

        /** The next batch's intended send time, the schedule moved on (uniform or Poisson). */
        private long takeDue() {
            double gap = s.workers * (double) s.pipeline / s.rps * 1e9;
            long at = (long) due;
            due += s.poisson ? -Math.log(1 - paceRng.nextDouble()) * gap : gap;
            return at;
        }

        private final long shareOf;

        private void draw(int j) {
            double u = rng.nextDouble() * s.cum[s.cum.length - 1];
            int op = s.ops[s.ops.length - 1];
            for (int k = 0; k < s.cum.length; k++) {
                if (u < s.cum[k]) {
                    op = s.ops[k];
                    break;
                }
            }
            int i;
            if (random) {
                i = rng.nextInt(s.count);
            } else {
                i = seq;
                seq = (seq + s.workers) % s.count;
            }
            batchOps[j] = op;
            batchKeys[j] = op == INCR ? wl.incrKeys[i] : wl.keys[i];
        }

        /** Draws the next batch; false when the phase's limit is reached. */
        private boolean prepare() {
            n = s.pipeline;
            if (limit >= 0) {
                if (done >= limit) return false;
                n = (int) Math.min(n, limit - done);
            }
            for (int j = 0; j < n; j++) draw(j);
            return true;
        }

        /** Books the batch that just completed; true when the worker is finished. */
        private boolean complete(long t1) {
            if (t1 - t0 >= STALL_NANOS) checkStall();
            done += n;
            if (passing) {
                for (int j = 0; j < n; j++) pass[batchOps[j]]++;
                if (s.transaction) passTx++;
                return done >= limit;
            }
            // warmup books its calls too, then forgets them: the measured window runs no code
            // the JIT has not compiled yet (recording only from warmup's end, C2 compiled the
            // histogram and recompiled the loop inside the window: 2 s trials ~9% dearer a call)
            record(t1 - t0);
            if (measuring) {
                endNanos = t1;
                return limit >= 0 ? done >= limit : t1 >= measureEnd;
            }
            for (int j = 0; j < n; j++) warm[batchOps[j]]++;
            if (s.transaction) warmTx++;
            if (t1 >= warmEnd) {
                forgetWarmup();
                measuring = true;
                done = 0;
                limit = shareOf;
                return limit == 0;
            }
            return false;
        }

        /** What warmup booked in the measured window's counters and histograms, cleared. */
        private void forgetWarmup() {
            for (int op = 0; op < 3; op++) {
                ops[op] = 0;
                failed[op] = 0;
                hist[op].reset();
            }
            tx = 0;
            firstError = null;
        }

        /** A call failing after STALL_NANOS: the server stopped answering (timeouts are 10 s). */
        private void checkStall() {
            for (int j = 0; j < n; j++) {
                if (errs[j] != null && !s.noop) {
                    fail(1, "server " + s.host + ":" + s.port + " stopped answering: " + errs[j]);
                }
            }
        }

        private void record(long nanos) {
            long us = Math.max(1, nanos / 1000);
            if (s.transaction) tx++;
            for (int j = 0; j < n; j++) {
                int op = batchOps[j];
                if (errs[j] != null && !s.noop) {
                    failed[op]++;
                    if (firstError == null) firstError = String.valueOf(errs[j].getMessage());
                } else {
                    per[op]++;
                }
            }
            for (int op = 0; op < 3; op++) {
                if (per[op] > 0) {
                    ops[op] += per[op];
                    hist[op].recordValueWithCount(Math.min(us, 60_000_000), per[op]);
                    per[op] = 0;
                }
            }
        }

        /** The blocking loop, on this worker's own thread. */
        void runBlocking() {
            boolean single = s.pipeline == 1 && !s.transaction;
            while (prepare()) {
                t0 = System.nanoTime();
                if (paced()) {
                    long at = takeDue();
                    for (long wait; (wait = at - System.nanoTime()) > 0; ) LockSupport.parkNanos(wait);
                    t0 = at;  // the open loop: from the intended send time
                }
                if (s.noop) {
                    noop(batchOps[0], batchKeys[0]);
                } else if (single) {
                    try {
                        conn.call(batchOps[0], batchKeys[0]);
                        errs[0] = null;
                    } catch (Exception e) {
                        errs[0] = e;
                    }
                } else {
                    conn.batch(batchOps, batchKeys, n, s.transaction, errs);
                }
                if (complete(System.nanoTime())) break;
            }
            finished.countDown();
        }

        /** The allocation pass's share (untimed, counted apart), done counted down at its end. */
        void startPass(long share, CountDownLatch done) {
            passing = true;
            measuring = false;
            this.done = 0;
            limit = share;
            finished = done;
        }

        /** The blocking pass on its own thread, between two reads of the thread's allocated bytes. */
        void runPassBlocking() {
            passStart = threadAllocated();
            runBlocking();
            passEnd = threadAllocated();
        }

        /** The async chain: each completion books its batch and sends the next one. */
        void runAsync() {
            if (!prepare()) {
                finished.countDown();
                return;
            }
            if (!paced()) {
                send(System.nanoTime());
                return;
            }
            long at = takeDue(), wait = at - System.nanoTime();  // sent by the pacer at its time
            if (wait > 0) PACER.schedule(() -> send(at), wait, TimeUnit.NANOSECONDS);
            else send(at);
        }

        /** Sends the prepared batch, timed from t (its intended send time when paced). */
        private void send(long t) {
            t0 = t;
            conn.start(batchOps, batchKeys, n, s.transaction, errs, this::onReply);
        }

        private void onReply() {
            if (complete(System.nanoTime())) finished.countDown();
            else runAsync();
        }
    }

    /** The open loop's async sends wait here for their intended times (not on the library's
     *  I/O threads). */
    static final ScheduledExecutorService PACER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pacer");
        t.setDaemon(true);
        return t;
    });

    static long share(long requests, int n, int i) {
        if (requests < 0) return -1;
        return requests / n + (i < requests % n ? 1 : 0);
    }

    static Object noopSink;

    static void noop(int op, String key) {
        noopSink = key;
    }

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    static long threadAllocated() {
        return THREADS.getCurrentThreadAllocatedBytes();
    }

    // ------------------------------------------------------------------ main and result

    /** Runs the harness: spec → driver → workers → result on stdout. Never returns. */
    static void main(String[] args, Map<String, String> client, Function<Workload, Driver> open) {
        PrintStream out = System.out;
        if (args.length != 1) fail(2, "usage: Harness SPEC.json");
        Workload wl;
        try {
            wl = new Workload(loadSpec(args[0]));
        } catch (Refusal r) {
            fail(2, r.getMessage());
            return;
        }
        Driver driver;
        try {
            driver = open.apply(wl);
        } catch (Refusal r) {
            fail(2, r.getMessage());
            return;
        } catch (Exception e) {
            fail(1, "cannot reach " + wl.spec.host + ":" + wl.spec.port + ": " + rootMessage(e));
            return;
        }
        String result;
        try {
            result = run(wl, driver, client);
        } catch (Refusal r) {
            fail(2, r.getMessage());
            return;
        }
        out.println(result);
        out.flush();
        driver.close();
        System.exit(0);
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) t = t.getCause();
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    static void fail(int code, String msg) {
        System.err.println(msg == null ? "failed" : msg.split("\n")[0]);
        System.exit(code);
    }

    private static String run(Workload wl, Driver driver, Map<String, String> client) {
        Spec s = wl.spec;
        long start = System.nanoTime();
        long warmEnd = start + (long) (s.warmupS * 1e9);
        long measureEnd = s.durationS >= 0 ? warmEnd + (long) (s.durationS * 1e9) : Long.MAX_VALUE;
        CountDownLatch finished = new CountDownLatch(s.workers);
        List<Worker> workers = new ArrayList<>();
        for (int i = 0; i < s.workers; i++) {
            workers.add(new Worker(wl, driver.conn(i), i, warmEnd, measureEnd, finished));
        }
        boolean async = driver.async() && !s.noop;
        List<Thread> threads = new ArrayList<>();
        for (Worker w : workers) {
            Thread t = new Thread(async ? w::runAsync : w::runBlocking, "worker");
            threads.add(t);
            t.start();
        }
        long[] cpuStart = null, cpuEnd = null;
        try {
            long wait = warmEnd - System.nanoTime();
            if (wait > 0) Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
            cpuStart = processCpuTicks();  // the measured window's start: warmup's end
            finished.await();
            for (Thread t : threads) t.join();
            cpuEnd = processCpuTicks();  // … and its end: the last worker done
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String cpu = cpuStart == null || cpuEnd == null ? null
                : String.format("{\"user_s\":%.2f,\"system_s\":%.2f,\"source\":\"/proc/self/stat utime and stime "
                        + "(every thread, 10 ms ticks), from warmup's end to the last worker's\"}",
                        Math.max(0, cpuEnd[0] - cpuStart[0]) / (double) USER_HZ,
                        Math.max(0, cpuEnd[1] - cpuStart[1]) / (double) USER_HZ);
        return merge(wl, workers, warmEnd, client, cpu, allocationPass(s, workers, async));
    }

    /** The untimed allocation pass after the measured window: allocationOps more operations by
     *  the same workers and model; the bytes every thread allocated in it (HotSpot's per-thread
     *  counters, ThreadMXBean.getThreadAllocatedBytes): the pass's own threads read theirs, the
     *  library's threads (an async library's I/O threads) are read before and after. */
    private static String allocationPass(Spec s, List<Worker> workers, boolean async) {
        CountDownLatch done = new CountDownLatch(s.workers);
        for (int i = 0; i < s.workers; i++) workers.get(i).startPass(share(s.allocationOps, s.workers, i), done);
        Map<Long, Long> before = otherThreadsAllocated();
        long mine = threadAllocated();
        List<Thread> threads = new ArrayList<>();
        for (Worker w : workers) {
            if (async) {
                w.runAsync();  // from this thread: the library's threads send the rest
            } else {
                Thread t = new Thread(w::runPassBlocking, "allocation-pass");
                threads.add(t);
                t.start();
            }
        }
        try {
            done.await();
            for (Thread t : threads) t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        long bytes = threadAllocated() - mine;
        for (Map.Entry<Long, Long> e : otherThreadsAllocated().entrySet()) {
            Long b = before.get(e.getKey());
            if (b != null && b >= 0 && e.getValue() >= 0) bytes += e.getValue() - b;
        }
        long tx = 0;
        long[] calls = new long[3];
        for (Worker w : workers) {
            bytes += Math.max(0, w.passEnd - w.passStart);
            tx += w.passTx;
            for (int op = 0; op < 3; op++) calls[op] += w.pass[op];
        }
        StringBuilder c = new StringBuilder();
        for (int op : s.ops) c.append(quote(OPS[op])).append(':').append(calls[op]).append(',');
        c.append("\"MULTI\":").append(tx).append(",\"EXEC\":").append(tx);
        return String.format("{\"bytes_per_op\":%.3f,\"ops\":%d,\"calls\":{%s},\"exact\":true,\"method\":"
                + "\"ThreadMXBean.getThreadAllocatedBytes over an untimed pass after the measured window: every "
                + "live thread's (the library's own threads included), HotSpot's per-thread counters\"}",
                (double) bytes / s.allocationOps, s.allocationOps, c);
    }

    /** USER_HZ: the unit of /proc's CPU times, 100 on Linux whatever the kernel's HZ. */
    static final int USER_HZ = 100;

    /** The process's user and system CPU so far in USER_HZ ticks, every thread (the JVM's
     *  own: JIT and GC included); null when /proc cannot be read. */
    static long[] processCpuTicks() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};  // fields 14, 15
        } catch (Exception e) {
            return null;
        }
    }

    /** Allocated bytes of every live thread but this one (the library's own threads). */
    private static Map<Long, Long> otherThreadsAllocated() {
        long self = Thread.currentThread().getId();
        long[] ids = THREADS.getAllThreadIds();
        long[] bytes = THREADS.getThreadAllocatedBytes(ids);
        Map<Long, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < ids.length; i++) if (ids[i] != self) m.put(ids[i], bytes[i]);
        return m;
    }

    private static String merge(Workload wl, List<Worker> workers, long measureStart,
                                Map<String, String> client, String cpu, String alloc) {
        Spec s = wl.spec;
        StringBuilder warmup = new StringBuilder(), commands = new StringBuilder();
        long tx = 0, warmTx = 0, end = measureStart;
        String firstError = null;
        for (Worker w : workers) {
            tx += w.tx;
            warmTx += w.warmTx;
            end = Math.max(end, w.endNanos);
            if (firstError == null) firstError = w.firstError;
        }
        for (int op : s.ops) {
            Histogram h = new Histogram(1, 60_000_000, 3);
            long ops = 0, failed = 0, warm = 0;
            for (Worker w : workers) {
                h.add(w.hist[op]);
                ops += w.ops[op];
                failed += w.failed[op];
                warm += w.warm[op];
            }
            ByteBuffer buf = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
            int len = h.encodeIntoCompressedByteBuffer(buf);
            String b64 = Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(buf.array(), len));
            if (commands.length() > 0) commands.append(',');
            commands.append(quote(OPS[op])).append(":{\"ops\":").append(ops).append(",\"errors\":").append(failed)
                    .append(",\"histogram\":").append(quote(b64)).append('}');
            warmup.append(quote(OPS[op])).append(':').append(warm).append(',');
        }
        warmup.append("\"MULTI\":").append(warmTx).append(",\"EXEC\":").append(warmTx);
        StringBuilder c = new StringBuilder();
        for (Map.Entry<String, String> e : client.entrySet()) {
            if (c.length() > 0) c.append(',');
            c.append(quote(e.getKey())).append(':').append(quote(e.getValue()));
        }
        return "{\"format\":\"kvperf-client-result\",\"version\":1,\"client\":{" + c + "},\"duration_s\":"
                + String.format("%.6f", (end - measureStart) / 1e9) + ",\"warmup\":{" + warmup + "},\"commands\":{"
                + commands + "},\"transactions\":" + tx + ",\"first_error\":"
                + (firstError == null ? "null" : quote(firstError)) + ",\"allocations\":" + alloc
                + (cpu == null ? "" : ",\"cpu\":" + cpu)
                + (s.rps > 0 ? ",\"rate\":{\"rps\":" + s.rps + ",\"arrivals\":\"" + (s.poisson ? "poisson" : "uniform") + "\"}" : "")
                + "}";
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') b.append('\\').append(ch);
            else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
        }
        return b.append('"').toString();
    }

    static Map<String, String> client(String name, String library, String version) {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("library", library);
        m.put("version", version);
        m.put("language", "java");
        m.put("runtime", "java " + System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
        return m;
    }

    /** A minimal JSON reader: objects, arrays, strings, numbers (as Double), true/false/null. */
    static final class Json {
        private final String s;
        private int i;

        Json(String text) { s = text; }

        Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') return object();
            if (c == '[') return array();
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int st = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            if (st == i) throw new IllegalArgumentException("unexpected '" + c + "' at " + i);
            return Double.parseDouble(s.substring(st, i));
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            ws();
            if (s.charAt(i) == '}') { i++; return m; }
            while (true) {
                ws();
                String k = string();
                ws();
                expect(':');
                m.put(k, value());
                ws();
                if (s.charAt(i++) == '}') return m;
            }
        }

        private List<Object> array() {
            List<Object> l = new ArrayList<>();
            i++;
            ws();
            if (s.charAt(i) == ']') { i++; return l; }
            while (true) {
                l.add(value());
                ws();
                if (s.charAt(i++) == ']') return l;
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
            i++;
            return b.toString();
        }

        private void expect(char c) {
            if (s.charAt(i++) != c) throw new IllegalArgumentException("expected '" + c + "' at " + (i - 1));
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
        }
    }
}
