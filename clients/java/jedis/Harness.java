// kvperf client harness for Jedis (contract v1, issue 23). Models: single (one Jedis
// connection) and pool (workers threads borrowing from a JedisPool of workers connections for
// each call or batch). Jedis is blocking: async is refused.
import java.util.List;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisClientConfig;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Transaction;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

public final class Harness {
    private Harness() {}

    /** Queues or sends one command on Jedis, a Pipeline or a Transaction (all share these names). */
    private static void send(Jedis j, Pipeline p, Transaction t, int op, String key, String value) {
        switch (op) {
            case Kit.SET: if (p != null) p.set(key, value); else if (t != null) t.set(key, value); else j.set(key, value); break;
            case Kit.GET: if (p != null) p.get(key); else if (t != null) t.get(key); else j.get(key); break;
            default: if (p != null) p.incr(key); else if (t != null) t.incr(key); else j.incr(key);
        }
    }

    private static void batch(Jedis j, int[] ops, String[] keys, int n, boolean tx, Throwable[] errs, String value) {
        List<Object> replies;
        try {
            if (tx) {
                Transaction t = j.multi();
                for (int i = 0; i < n; i++) send(j, null, t, ops[i], keys[i], value);
                replies = t.exec();
            } else {
                Pipeline p = j.pipelined();
                for (int i = 0; i < n; i++) send(j, p, null, ops[i], keys[i], value);
                replies = p.syncAndReturnAll();
            }
        } catch (RuntimeException e) {
            for (int i = 0; i < n; i++) errs[i] = e;
            return;
        }
        for (int i = 0; i < n; i++) {
            Object r = replies == null || i >= replies.size() ? new IllegalStateException("transaction aborted") : replies.get(i);
            errs[i] = r instanceof Throwable ? (Throwable) r : null;
        }
    }

    private static JedisClientConfig config(Kit.Spec s) throws Exception {
        DefaultJedisClientConfig.Builder b = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(5000).socketTimeoutMillis(10000);
        if (s.password != null && !s.password.isEmpty()) b.password(s.password);
        if (s.tls) b.ssl(true).sslSocketFactory(Kit.sslContext(s).getSocketFactory());
        return b.build();
    }

    private static Kit.Driver open(Kit.Workload wl) {
        Kit.Spec s = wl.spec;
        Kit.requireModel(s, "jedis", "single", "pool");
        try {
            HostAndPort hp = new HostAndPort(s.host, s.port);
            JedisClientConfig cfg = config(s);
            String value = wl.value;
            if (s.model.equals("single")) {
                Jedis j = new Jedis(hp, cfg);
                j.ping();
                return new Kit.Driver() {
                    public Kit.Conn conn(int w) {
                        return new Kit.Conn() {
                            public void call(int op, String key) { send(j, null, null, op, key, value); }

                            public void batch(int[] ops, String[] keys, int n, boolean tx, Throwable[] errs) {
                                Harness.batch(j, ops, keys, n, tx, errs, value);
                            }
                        };
                    }

                    public void close() { j.close(); }
                };
            }
            GenericObjectPoolConfig<Jedis> pc = new GenericObjectPoolConfig<>();
            pc.setMaxTotal(s.workers);
            pc.setMaxIdle(s.workers);
            pc.setMinIdle(s.workers);
            JedisPool pool = new JedisPool(pc, hp, cfg);
            try (Jedis j = pool.getResource()) {
                j.ping();
            }
            return new Kit.Driver() {
                public Kit.Conn conn(int w) {
                    return new Kit.Conn() {
                        public void call(int op, String key) {
                            try (Jedis j = pool.getResource()) {
                                send(j, null, null, op, key, value);
                            }
                        }

                        public void batch(int[] ops, String[] keys, int n, boolean tx, Throwable[] errs) {
                            try (Jedis j = pool.getResource()) {
                                Harness.batch(j, ops, keys, n, tx, errs, value);
                            }
                        }
                    };
                }

                public void close() { pool.close(); }
            };
        } catch (Kit.Refusal r) {
            throw r;
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) {
        String version = Jedis.class.getPackage().getImplementationVersion();
        Kit.main(args, Kit.client("jedis", "jedis", version == null ? "8.0.2" : version), Harness::open);
    }
}
