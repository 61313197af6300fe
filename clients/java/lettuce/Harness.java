// kvperf client harness for Lettuce (contract v1, issue 23). One connection in every model:
// single = the sync API (batches: the async API with auto-flush off, flushed once per batch);
// async = workers chains of async calls in flight on the shared connection (each reply's
// callback sends that worker's next call or batch; a batch is written with auto-flush off
// and flushed once, under a lock, since auto-flush is the connection's: one write per batch,
// issue 37 — with auto-flush on, each command of a "batch" was its own write). No pool
// (Lettuce multiplexes); async transactions with workers > 1 are refused (MULTI state
// belongs to the connection).
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.TransactionResult;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.File;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

public final class Harness {
    private Harness() {}

    private static RedisFuture<?> send(RedisAsyncCommands<String, String> a, int op, String key, String value) {
        switch (op) {
            case Kit.SET: return a.set(key, value);
            case Kit.GET: return a.get(key);
            default: return a.incr(key);
        }
    }

    /** Sends a batch; returns the future whose completion means every reply is in. */
    private static CompletableFuture<?> sendBatch(RedisAsyncCommands<String, String> a, RedisFuture<?>[] futures,
                                                  int[] ops, String[] keys, int n, boolean tx, String value) {
        if (tx) a.multi();
        for (int i = 0; i < n; i++) futures[i] = send(a, ops[i], keys[i], value);
        return tx ? a.exec().toCompletableFuture() : futures[n - 1].toCompletableFuture();
    }

    /** Once last is complete: each command's error (a transaction that was discarded fails all). */
    private static void collect(RedisFuture<?>[] futures, CompletableFuture<?> last, int n, boolean tx, Throwable[] errs) {
        Throwable batchErr = null;
        try {
            Object r = last.join();
            if (tx && r instanceof TransactionResult && ((TransactionResult) r).wasDiscarded()) {
                batchErr = new IllegalStateException("transaction discarded");
            }
        } catch (RuntimeException e) {
            batchErr = e.getCause() != null ? e.getCause() : e;
        }
        for (int i = 0; i < n; i++) {
            errs[i] = batchErr;
            CompletableFuture<?> f = futures[i].toCompletableFuture();
            if (batchErr == null && f.isCompletedExceptionally()) {
                try {
                    f.join();
                } catch (RuntimeException e) {
                    errs[i] = e.getCause() != null ? e.getCause() : e;
                }
            }
        }
    }

    private static RedisClient client(Kit.Spec s) {
        RedisURI.Builder uri = RedisURI.builder().withHost(s.host).withPort(s.port)
                .withTimeout(Duration.ofSeconds(10)).withSsl(s.tls);
        if (s.password != null && !s.password.isEmpty()) uri.withPassword(s.password.toCharArray());
        RedisClient c = RedisClient.create(uri.build());
        ClientOptions.Builder opts = ClientOptions.builder().autoReconnect(false)
                .timeoutOptions(TimeoutOptions.enabled(Duration.ofSeconds(10)))
                .socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(5)).build());
        if (s.tls) {
            SslOptions.Builder ssl = SslOptions.builder();
            if (s.caFile != null) ssl.trustManager(new File(s.caFile));
            if (s.certFile != null && s.keyFile != null) ssl.keyManager(new File(s.certFile), new File(s.keyFile), null);
            opts.sslOptions(ssl.build());
        }
        c.setOptions(opts.build());
        return c;
    }

    private static Kit.Driver open(Kit.Workload wl) {
        Kit.Spec s = wl.spec;
        Kit.requireModel(s, "lettuce", "single", "async");
        boolean async = s.model.equals("async");
        if (async && s.transaction && s.workers > 1) {
            throw new Kit.Refusal("transactions with the async model need workers = 1 in lettuce (one shared connection)");
        }
        RedisClient client = client(s);
        StatefulRedisConnection<String, String> conn = client.connect();
        RedisCommands<String, String> sync = conn.sync();
        RedisAsyncCommands<String, String> a = conn.async();
        sync.ping();
        String value = wl.value;
        Object flushing = new Object();  // auto-flush is the connection's: one batch at a time
        return new Kit.Driver() {
            public Kit.Conn conn(int w) {
                RedisFuture<?>[] futures = new RedisFuture<?>[s.pipeline];
                return new Kit.Conn() {
                    public void call(int op, String key) {
                        switch (op) {
                            case Kit.SET: sync.set(key, value); break;
                            case Kit.GET: sync.get(key); break;
                            default: sync.incr(key);
                        }
                    }

                    /** The batch queued with auto-flush off and written by one flush. */
                    private CompletableFuture<?> write(int[] ops, String[] keys, int n, boolean tx) {
                        synchronized (flushing) {
                            conn.setAutoFlushCommands(false);
                            try {
                                CompletableFuture<?> last = sendBatch(a, futures, ops, keys, n, tx, value);
                                conn.flushCommands();
                                return last;
                            } finally {
                                conn.setAutoFlushCommands(true);
                            }
                        }
                    }

                    public void batch(int[] ops, String[] keys, int n, boolean tx, Throwable[] errs) {
                        CompletableFuture<?> last = write(ops, keys, n, tx);
                        try {
                            last.get(10, TimeUnit.SECONDS);
                        } catch (Exception e) {
                            // collect() reports it per command
                        }
                        collect(futures, last, n, tx, errs);
                    }

                    public void start(int[] ops, String[] keys, int n, boolean tx, Throwable[] errs, Runnable done) {
                        if (s.pipeline == 1 && !tx) {  // auto-flush stays on: no batch toggles it
                            send(a, ops[0], keys[0], value).whenComplete((r, e) -> {
                                errs[0] = e;
                                done.run();
                            });
                            return;
                        }
                        CompletableFuture<?> last = write(ops, keys, n, tx);
                        last.whenComplete((r, e) -> {
                            collect(futures, last, n, tx, errs);
                            done.run();
                        });
                    }
                };
            }

            public boolean async() { return async; }

            public void close() {
                conn.close();
                client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            }
        };
    }

    public static void main(String[] args) {
        String version = RedisClient.class.getPackage().getImplementationVersion();  // "7.7.0.RELEASE/<commit>"
        version = version == null ? "7.7.0.RELEASE" : version.split("/")[0];
        Kit.main(args, Kit.client("lettuce", "lettuce", version), Harness::open);
    }
}
