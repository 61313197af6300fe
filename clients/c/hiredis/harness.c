/* kvperf client harness for hiredis (Debian's libhiredis 0.14; contract v1, issue 23).
 *
 * Models: single (one connection) and pool (workers threads, one connection each).
 * Pipelines use redisAppendCommandArgv + redisGetReply; transactions wrap a batch in
 * MULTI … EXEC. hiredis 0.14 has no TLS, and its async API needs an event loop adapter this
 * harness does not use: a TLS endpoint and the async model are refused (exit 2). */
#include <cjson/cJSON.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>

#include "alloc.h"
#include "hdr.h"

enum { SET, GET, INCR, NOPS };
#define STALL_S 5.0
#define DEFAULT_ALLOCATION_OPS 1000
static const char *OP_NAMES[NOPS] = {"SET", "GET", "INCR"};

typedef struct {
    const char *host;
    int port;
    int tls;
    int ops[NOPS], nops;                 /* the spec's commands in order, with cumulative ratios */
    double cum[NOPS], total;
    const char *prefix;
    int count, sequential;
    int value_size, pipeline, transaction, pool, workers;
    long long requests;                  /* -1 when duration_s is set */
    double duration_s, warmup_s;
    long long seed;
    int noop;
    long long allocation_ops;            /* the untimed allocation pass's operations */
    double rps;                          /* the open loop's rate (0: closed loop) */
    int poisson;                         /* its arrivals: Poisson (else uniform) */
} spec_t;

typedef struct {
    char **keys, **incr_keys;
    size_t *key_lens, *incr_lens;
    char *value;
    const char *password;
} prebuilt_t;

typedef struct {
    int idx;
    redisContext *c;
    uint64_t rng;
    int seq;
    int *batch_ops;
    const char **argv;                   /* 3 slots per batched command (+ MULTI/EXEC) */
    size_t *argvlen;
    int *errs;
    hdr_hist hist[NOPS];
    long long ops[NOPS], failed[NOPS], warm[NOPS], tx, warm_tx;
    long long pass[NOPS], pass_tx;       /* the allocation pass's calls */
    int passing;
    double due;                          /* the open loop: the next batch's intended send time */
    uint64_t pace_rng;
    char first_error[256];
    double end;
} worker_t;

static spec_t S;
static prebuilt_t P;
static double warm_end, measure_end;

static void die(int code, const char *fmt, const char *arg) {
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(code);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------ spec */

static cJSON *field(const cJSON *obj, const char *name) {
    cJSON *f = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!f) die(2, "spec lacks field %s", name);
    return f;
}

static void parse_commands(const cJSON *cmds) {
    const cJSON *c;
    cJSON_ArrayForEach(c, cmds) {
        const char *name = cJSON_GetStringValue(field(c, "command"));
        int op = -1;
        for (int i = 0; i < NOPS; i++)
            if (name && strcmp(name, OP_NAMES[i]) == 0) op = i;
        if (op < 0) die(2, "command %s is not in the v1 vocabulary (SET, GET, INCR)", name ? name : "?");
        if (S.nops == NOPS) die(2, "%s", "too many commands in the spec");
        S.total += field(c, "ratio")->valuedouble;
        S.ops[S.nops] = op;
        S.cum[S.nops++] = S.total;
    }
    if (S.nops == 0) die(2, "%s", "spec has no commands");
}

/* The open loop, if any: {"rps": > 0, "arrivals": "uniform" | "poisson"}. */
static void parse_rate(const cJSON *rate) {
    if (!rate || cJSON_IsNull(rate)) return;
    const cJSON *rps = cJSON_GetObjectItemCaseSensitive(rate, "rps");
    const char *arrivals = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rate, "arrivals"));
    if (!cJSON_IsNumber(rps) || !(rps->valuedouble > 0) || !arrivals
        || (strcmp(arrivals, "uniform") != 0 && strcmp(arrivals, "poisson") != 0))
        die(2, "%s", "rate must be {\"rps\": > 0, \"arrivals\": \"uniform\" or \"poisson\"}");
    S.rps = rps->valuedouble;
    S.poisson = strcmp(arrivals, "poisson") == 0;
}

static void parse_spec(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die(2, "cannot read spec %s", path);
    static char text[1 << 16];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *j = cJSON_Parse(text);
    if (!j) die(2, "spec %s is not valid JSON", path);
    if (strcmp(cJSON_GetStringValue(field(j, "format")) ?: "", "kvperf-client-workload") != 0
        || field(j, "version")->valueint != 1)
        die(2, "%s", "unsupported spec format or version");
    cJSON *ep = field(j, "endpoint"), *keys = field(j, "keys"), *conc = field(j, "concurrency");
    S.host = strdup(cJSON_GetStringValue(field(ep, "host")) ?: "127.0.0.1");
    S.port = field(ep, "port")->valueint;
    S.tls = cJSON_IsTrue(field(ep, "tls"));
    parse_commands(field(j, "commands"));
    S.prefix = strdup(cJSON_GetStringValue(field(keys, "prefix")) ?: "");
    S.count = field(keys, "count")->valueint;
    const char *pattern = cJSON_GetStringValue(field(keys, "pattern")) ?: "";
    S.sequential = strcmp(pattern, "sequential") == 0;
    if (!S.sequential && strcmp(pattern, "random") != 0) die(2, "unknown key pattern %s", pattern);
    S.value_size = field(j, "value_size")->valueint;
    S.pipeline = field(j, "pipeline")->valueint;
    S.transaction = cJSON_IsTrue(field(j, "transaction"));
    const char *model = cJSON_GetStringValue(field(conc, "model")) ?: "";
    S.workers = field(conc, "workers")->valueint;
    S.pool = strcmp(model, "pool") == 0;
    if (!S.pool && strcmp(model, "single") != 0) die(2, "concurrency model %s is not supported by hiredis", model);
    if (!S.pool && S.workers != 1) die(2, "%s", "concurrency model single needs workers = 1");
    cJSON *req = field(j, "requests"), *dur = field(j, "duration_s");
    if (cJSON_IsNull(req) == cJSON_IsNull(dur)) die(2, "%s", "exactly one of requests and duration_s must be set");
    S.requests = cJSON_IsNull(req) ? -1 : (long long)req->valuedouble;
    S.duration_s = cJSON_IsNull(dur) ? 0 : dur->valuedouble;
    S.warmup_s = field(j, "warmup_s")->valuedouble;
    S.seed = (long long)field(j, "seed")->valuedouble;
    S.noop = cJSON_IsTrue(field(j, "noop"));
    cJSON *pass_ops = cJSON_GetObjectItemCaseSensitive(j, "allocation_ops");
    S.allocation_ops = pass_ops ? (long long)pass_ops->valuedouble : DEFAULT_ALLOCATION_OPS;
    if (S.allocation_ops < 1) die(2, "%s", "allocation_ops must be >= 1");
    parse_rate(cJSON_GetObjectItemCaseSensitive(j, "rate"));
    if (S.count < 1 || S.pipeline < 1 || S.workers < 1 || S.value_size < 0) die(2, "%s", "count, pipeline and workers must be >= 1");
    if (S.tls) die(2, "%s", "TLS is not supported by hiredis 0.14 (Debian's libhiredis)");
    cJSON_Delete(j);
}

/* ------------------------------------------------------------------ prebuilt keys and value */

static void prebuild(void) {
    P.keys = malloc(sizeof(char *) * (size_t)S.count);
    P.key_lens = malloc(sizeof(size_t) * (size_t)S.count);
    P.incr_keys = malloc(sizeof(char *) * (size_t)S.count);
    P.incr_lens = malloc(sizeof(size_t) * (size_t)S.count);
    char buf[512];
    for (int i = 0; i < S.count; i++) {
        P.key_lens[i] = (size_t)snprintf(buf, sizeof buf, "%s%d", S.prefix, i);
        P.keys[i] = strdup(buf);
        P.incr_lens[i] = (size_t)snprintf(buf, sizeof buf, "%sincr:%d", S.prefix, i);
        P.incr_keys[i] = strdup(buf);
    }
    P.value = malloc((size_t)S.value_size + 1);
    memset(P.value, 'x', (size_t)S.value_size);
    P.value[S.value_size] = '\0';
    P.password = getenv("KVPERF_CLIENT_PASSWORD");
}

/* ------------------------------------------------------------------ connection */

static redisContext *connect_server(void) {
    struct timeval tv = {5, 0}, rw = {10, 0};
    redisContext *c = redisConnectWithTimeout(S.host, S.port, tv);
    if (!c || c->err) {
        fprintf(stderr, "cannot reach %s:%d: %s\n", S.host, S.port, c ? c->errstr : "out of memory");
        exit(1);
    }
    redisSetTimeout(c, rw);
    if (P.password && *P.password) {
        redisReply *r = redisCommand(c, "AUTH %s", P.password);
        if (!r || r->type == REDIS_REPLY_ERROR) {
            fprintf(stderr, "cannot authenticate to %s:%d: %s\n", S.host, S.port, r ? r->str : c->errstr);
            exit(1);
        }
        freeReplyObject(r);
    }
    return c;
}

/* ------------------------------------------------------------------ the per-worker loop */

static uint64_t next_u64(worker_t *w) {            /* splitmix64 */
    uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Fills command j of the batch: its op and argv slots (argv[3*j + off]). */
static void draw(worker_t *w, int j, int off) {
    double u = (double)(next_u64(w) >> 11) * 0x1.0p-53 * S.total;
    int op = S.ops[S.nops - 1];
    for (int i = 0; i < S.nops; i++)
        if (u < S.cum[i]) { op = S.ops[i]; break; }
    int i;
    if (S.sequential) {
        i = w->seq;
        w->seq = (w->seq + S.workers) % S.count;
    } else {
        i = (int)(next_u64(w) % (uint64_t)S.count);
    }
    const char **a = w->argv + 3 * j + off;
    size_t *l = w->argvlen + 3 * j + off;
    w->batch_ops[j] = op;
    a[0] = OP_NAMES[op];
    l[0] = strlen(OP_NAMES[op]);
    a[1] = op == INCR ? P.incr_keys[i] : P.keys[i];
    l[1] = op == INCR ? P.incr_lens[i] : P.key_lens[i];
    a[2] = P.value;
    l[2] = (size_t)S.value_size;
}

static void set_error(worker_t *w, int j, const char *msg) {
    w->errs[j] = 1;
    if (!w->first_error[0]) snprintf(w->first_error, sizeof w->first_error, "%s", msg);
}

__attribute__((noinline)) static void *noop_call(redisContext *c, int argc, const char **argv, const size_t *len) {
    (void)c; (void)argc; (void)argv; (void)len;
    __asm__ volatile("" ::: "memory");
    return NULL;
}

static void call_one(worker_t *w) {
    int argc = w->batch_ops[0] == SET ? 3 : 2;
    redisReply *r = redisCommandArgv(w->c, argc, w->argv, w->argvlen);
    w->errs[0] = 0;
    if (!r) set_error(w, 0, w->c->errstr);
    else if (r->type == REDIS_REPLY_ERROR) set_error(w, 0, r->str);
    if (r) freeReplyObject(r);
}

static int get_reply(worker_t *w, redisReply **r) {
    if (redisGetReply(w->c, (void **)r) != REDIS_OK) {
        fprintf(stderr, "connection lost: %s\n", w->c->errstr);
        exit(1);
    }
    return (*r)->type;
}

/* n commands in argv slots 3..3n+2 (slot 0 is MULTI, slot 3n+3 EXEC when tx). */
static void call_batch(worker_t *w, int n) {
    static const char *multi = "MULTI", *exec = "EXEC";
    static const size_t five = 5, four = 4;
    if (S.transaction) redisAppendCommandArgv(w->c, 1, &multi, &five);
    for (int j = 0; j < n; j++) {
        int argc = w->batch_ops[j] == SET ? 3 : 2;
        redisAppendCommandArgv(w->c, argc, w->argv + 3 * j + 3, w->argvlen + 3 * j + 3);
        w->errs[j] = 0;
    }
    if (S.transaction) redisAppendCommandArgv(w->c, 1, &exec, &four);
    redisReply *r;
    if (S.transaction) {
        get_reply(w, &r);
        freeReplyObject(r);
    }
    for (int j = 0; j < n; j++) {
        if (get_reply(w, &r) == REDIS_REPLY_ERROR) set_error(w, j, r->str);
        freeReplyObject(r);
    }
    if (!S.transaction) return;
    int t = get_reply(w, &r);
    for (int j = 0; j < n; j++) {
        if (t != REDIS_REPLY_ARRAY || (size_t)j >= r->elements) set_error(w, j, t == REDIS_REPLY_ERROR ? r->str : "transaction aborted");
        else if (r->element[j]->type == REDIS_REPLY_ERROR) set_error(w, j, r->element[j]->str);
    }
    freeReplyObject(r);
}

/* A call failing after STALL_S: the server stopped answering (the read timeout is 10 s). */
static void check_stall(worker_t *w, int n) {
    for (int j = 0; j < n; j++)
        if (w->errs[j] && !S.noop) {
            fprintf(stderr, "server %s:%d stopped answering: %s\n", S.host, S.port, w->first_error);
            exit(1);
        }
}

static void record(worker_t *w, int n, double seconds) {
    int64_t us = (int64_t)(seconds * 1e6);
    long long per[NOPS] = {0};
    if (S.transaction) w->tx++;
    for (int j = 0; j < n; j++) {
        int op = w->batch_ops[j];
        if (w->errs[j] && !S.noop) w->failed[op]++;
        else per[op]++;
    }
    for (int op = 0; op < NOPS; op++)
        if (per[op]) {
            w->ops[op] += per[op];
            hdr_record(&w->hist[op], us, per[op]);
        }
}

/* The open loop: the next batch's intended send time, slept to (clock_nanosleep to the
 * absolute time), the schedule moved on by a uniform or exponential gap. */
static double await_due(worker_t *w) {
    double due = w->due, gap = (double)S.workers * S.pipeline / S.rps;
    if (S.poisson) {
        uint64_t z = (w->pace_rng += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        gap *= -log(1.0 - (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53);
    }
    w->due += gap;
    struct timespec ts = {(time_t)due, (long)((due - (time_t)due) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
    return due;
}

/* Runs until deadline (if > 0) or limit commands (if >= 0). */
static void phase(worker_t *w, int measure, double deadline, long long limit) {
    int single = S.pipeline == 1 && !S.transaction;
    for (long long done = 0; limit < 0 || done < limit;) {
        int n = S.pipeline;
        if (limit >= 0 && limit - done < n) n = (int)(limit - done);
        for (int j = 0; j < n; j++) draw(w, j, single ? 0 : 3);
        double t0 = S.rps > 0 && !w->passing ? await_due(w) : now();
        if (S.noop) noop_call(w->c, 2, w->argv, w->argvlen);
        else if (single) call_one(w);
        else call_batch(w, n);
        double t1 = now();
        if (t1 - t0 >= STALL_S) check_stall(w, n);
        done += n;
        if (measure) {
            record(w, n, t1 - t0);
            w->end = t1;
        } else {
            long long *counts = w->passing ? w->pass : w->warm;
            for (int j = 0; j < n; j++) counts[w->batch_ops[j]]++;
            if (S.transaction) *(w->passing ? &w->pass_tx : &w->warm_tx) += 1;
        }
        if (deadline > 0 && t1 >= deadline) break;
    }
}

static void *worker_main(void *arg) {
    worker_t *w = arg;
    if (S.warmup_s > 0) phase(w, 0, warm_end, -1);
    long long share = -1;
    if (S.requests >= 0) share = S.requests / S.workers + (w->idx < S.requests % S.workers ? 1 : 0);
    phase(w, 1, S.requests >= 0 ? 0 : measure_end, share);
    return NULL;
}

/* ------------------------------------------------------------------ the allocation pass */

static pthread_barrier_t pass_go;

static void *pass_main(void *arg) {
    worker_t *w = arg;
    long long ops = S.allocation_ops, share = ops / S.workers + (w->idx < ops % S.workers ? 1 : 0);
    w->passing = 1;
    pthread_barrier_wait(&pass_go);  /* every pass thread started: the counter is on */
    phase(w, 0, 0, share);
    return NULL;
}

/* The untimed allocation pass after the measured window: allocation_ops more operations by the
 * same workers (a thread each), the process's malloc'd bytes counted (alloc.c) from when every
 * pass thread is ready to when the last is done. Prints the result's allocations object. */
static void allocation_pass(worker_t **ws, pthread_t *threads) {
    pthread_barrier_init(&pass_go, NULL, (unsigned)S.workers + 1);
    for (int i = 0; i < S.workers; i++)
        if (pthread_create(&threads[i], NULL, pass_main, ws[i]) != 0) die(1, "cannot start thread: %s", strerror(errno));
    alloc_count(1);
    pthread_barrier_wait(&pass_go);
    for (int i = 0; i < S.workers; i++) pthread_join(threads[i], NULL);
    alloc_count(0);
    long long calls[NOPS] = {0}, tx = 0;
    for (int i = 0; i < S.workers; i++) {
        for (int op = 0; op < NOPS; op++) calls[op] += ws[i]->pass[op];
        tx += ws[i]->pass_tx;
    }
    printf(",\"allocations\":{\"bytes_per_op\":%.3f,\"ops\":%lld,\"calls\":{",
           (double)alloc_bytes() / (double)S.allocation_ops, S.allocation_ops);
    for (int k = 0; k < S.nops; k++) printf("\"%s\":%lld,", OP_NAMES[S.ops[k]], calls[S.ops[k]]);
    printf("\"MULTI\":%lld,\"EXEC\":%lld},\"exact\":true,\"method\":\"malloc, calloc and realloc "
           "interposed in the executable (alloc.c) over an untimed pass after the measured window: "
           "bytes requested (realloc: its growth), every thread's, libhiredis's included\"}", tx, tx);
}

static worker_t *new_worker(int idx) {
    worker_t *w = calloc(1, sizeof *w);
    size_t slots = 3 * (size_t)S.pipeline + 6;
    w->idx = idx;
    w->c = connect_server();
    w->rng = (uint64_t)(S.seed + idx);
    w->pace_rng = (uint64_t)(S.seed * 7919 + idx);
    w->due = now();
    w->seq = idx % S.count;
    w->batch_ops = calloc((size_t)S.pipeline, sizeof(int));
    w->errs = calloc((size_t)S.pipeline, sizeof(int));
    w->argv = calloc(slots, sizeof(char *));
    w->argvlen = calloc(slots, sizeof(size_t));
    for (int op = 0; op < NOPS; op++) hdr_init(&w->hist[op]);
    return w;
}

/* ------------------------------------------------------------------ result */

static void sleep_until(double t) {
    double wait = t - now();
    if (wait <= 0) return;
    struct timespec ts = {(time_t)wait, (long)((wait - (time_t)wait) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

/* The process's user and system CPU seconds so far (every thread). */
static void process_cpu(double *user, double *sys) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    *sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void print_result(worker_t **ws, double measure_start, const double cpu[2]) {
    double end = measure_start;
    long long tx = 0, warm_tx = 0;
    const char *first_error = NULL;
    for (int i = 0; i < S.workers; i++) {
        if (ws[i]->end > end) end = ws[i]->end;
        tx += ws[i]->tx;
        warm_tx += ws[i]->warm_tx;
        if (!first_error && ws[i]->first_error[0]) first_error = ws[i]->first_error;
    }
    printf("{\"format\":\"kvperf-client-result\",\"version\":1,\"client\":{\"name\":\"hiredis\","
           "\"library\":\"hiredis\",\"version\":\"%d.%d.%d\",\"language\":\"c\",\"runtime\":\"%s\"},",
           HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH, "C, cc " __VERSION__);
    printf("\"duration_s\":%.6f,\"warmup\":{", end - measure_start);
    static hdr_hist merged;
    char commands[NOPS][160];
    char *encoded[NOPS] = {0};
    for (int k = 0; k < S.nops; k++) {
        int op = S.ops[k];
        long long ops = 0, failed = 0, warm = 0;
        hdr_init(&merged);
        for (int i = 0; i < S.workers; i++) {
            hdr_merge(&merged, &ws[i]->hist[op]);
            ops += ws[i]->ops[op];
            failed += ws[i]->failed[op];
            warm += ws[i]->warm[op];
        }
        encoded[k] = hdr_encode_base64(&merged);
        snprintf(commands[k], sizeof commands[k], "\"%s\":{\"ops\":%lld,\"errors\":%lld,\"histogram\":\"", OP_NAMES[op], ops, failed);
        printf("\"%s\":%lld,", OP_NAMES[op], warm);
    }
    printf("\"MULTI\":%lld,\"EXEC\":%lld},\"commands\":{", warm_tx, warm_tx);
    for (int k = 0; k < S.nops; k++) printf("%s%s%s\"}", k ? "," : "", commands[k], encoded[k] ? encoded[k] : "");
    printf("},\"transactions\":%lld,\"first_error\":", tx);
    if (first_error) {
        cJSON *s = cJSON_CreateString(first_error);
        char *text = cJSON_PrintUnformatted(s);
        printf("%s", text);
    } else {
        printf("null");
    }
    if (S.rps > 0) printf(",\"rate\":{\"rps\":%.17g,\"arrivals\":\"%s\"}", S.rps, S.poisson ? "poisson" : "uniform");
    printf(",\"cpu\":{\"user_s\":%.6f,\"system_s\":%.6f,\"source\":"
           "\"getrusage(RUSAGE_SELF): every thread, from warmup's end to the last worker's\"}",
           cpu[0] > 0 ? cpu[0] : 0.0, cpu[1] > 0 ? cpu[1] : 0.0);
}

int main(int argc, char **argv) {
    if (argc != 2) die(2, "%s", "usage: harness SPEC.json");
    parse_spec(argv[1]);
    prebuild();
    worker_t **ws = calloc((size_t)S.workers, sizeof *ws);
    pthread_t *threads = calloc((size_t)S.workers, sizeof *threads);
    for (int i = 0; i < S.workers; i++) ws[i] = new_worker(i);
    double start = now();
    warm_end = start + S.warmup_s;
    measure_end = warm_end + S.duration_s;
    for (int i = 0; i < S.workers; i++)
        if (pthread_create(&threads[i], NULL, worker_main, ws[i]) != 0) die(1, "cannot start thread: %s", strerror(errno));
    double user0, sys0, user1, sys1;
    sleep_until(warm_end);
    process_cpu(&user0, &sys0);  /* the measured window's start: warmup's end */
    for (int i = 0; i < S.workers; i++) pthread_join(threads[i], NULL);
    process_cpu(&user1, &sys1);  /* ... and its end: the last worker done */
    double cpu[2] = {user1 - user0, sys1 - sys0};
    print_result(ws, warm_end, cpu);
    allocation_pass(ws, threads);
    printf("}\n");
    return 0;
}
