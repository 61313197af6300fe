/* floor_client: the floor of a pipelined SET client — what sending `-n` SETs over `-c`
 * connections, `-P` at a time, costs with nothing extra (no latency histogram, no
 * statistics but the request count and the elapsed time).
 *
 * One thread, epoll (level-triggered), closed loop: each connection writes a batch of P
 * commands with ONE write, then reads the P replies with reads as large as its buffer
 * (64 KiB: one read per readiness, unless the buffer filled) and sends the next batch
 * when the last reply is in. Replies are scanned for SET only: each is one line, "+..."
 * or "-..." (errors counted), cut anywhere across reads.
 *
 * The requests are kvload's for `-t set -d D -r R`: `SET key:<12 digits> <D bytes>`, the
 * key drawn uniformly in 0..R by wyrand (multiply-high, as kvload's Rng::below) and
 * written as 12 zero-padded digits two at a time into the batch's buffer, built once per
 * connection (only the digits change from batch to batch).
 *
 * Usage (the flags valkey-benchmark takes, so a harness can run either):
 *   floor_client -p PORT [-h HOST] -t set -c CONNS -d BYTES -r KEYSPACE -P PIPELINE
 *                -n REQUESTS [--csv]
 * Prints rps (with --csv as valkey-benchmark does: "SET","<rps>"). Exit 1 on an error
 * reply or a lost connection, 2 on bad flags.
 *
 * Build: cc -O2 -o floor_client floor_client.c (libc only).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RBUF (64 * 1024)
#define DIGITS 12

struct conn {
    int fd;
    char *wbuf;       /* P commands, one after another */
    size_t wlen;      /* bytes of the current batch */
    size_t written;   /* of them, written so far */
    long expected;    /* replies still due for the current batch */
    int at_line_start; /* the next byte read begins a reply */
};

static struct {
    const char *host;
    int port, conns, data, pipeline, csv;
    long keyspace, requests;
} opt = {"127.0.0.1", 6379, 50, 3, 1, 0, 100000, 100000};

static uint64_t rng_state;
static long issued, answered, errors;
static size_t cmd_len, digit_at; /* one command's length; where its key's digits start */
static int ep;

static const char pairs[] = "0001020304050607080910111213141516171819"
                            "2021222324252627282930313233343536373839"
                            "4041424344454647484950515253545556575859"
                            "6061626364656667686970717273747576777879"
                            "8081828384858687888990919293949596979899";

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void usage(const char *why) {
    fprintf(stderr, "floor_client: %s\nusage: floor_client -p PORT [-h HOST] -t set -c CONNS -d BYTES "
                    "-r KEYSPACE -P PIPELINE -n REQUESTS [--csv]\n", why);
    exit(2);
}

static long number(const char *flag, const char *s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v <= 0) {
        fprintf(stderr, "floor_client: %s wants a positive number, got '%s'\n", flag, s);
        exit(2);
    }
    return v;
}

static void parse_flags(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (strcmp(f, "--csv") == 0) {
            opt.csv = 1;
            continue;
        }
        if (i + 1 >= argc) usage("a flag without its value");
        const char *v = argv[++i];
        if (strcmp(f, "-h") == 0) opt.host = v;
        else if (strcmp(f, "-p") == 0) opt.port = (int)number(f, v);
        else if (strcmp(f, "-c") == 0) opt.conns = (int)number(f, v);
        else if (strcmp(f, "-d") == 0) opt.data = (int)number(f, v);
        else if (strcmp(f, "-P") == 0) opt.pipeline = (int)number(f, v);
        else if (strcmp(f, "-r") == 0) opt.keyspace = number(f, v);
        else if (strcmp(f, "-n") == 0) opt.requests = number(f, v);
        else if (strcmp(f, "-t") == 0) {
            if (strcasecmp(v, "set") != 0) usage("only -t set is supported");
        } else usage("unknown flag");
    }
}

/* wyrand, as kvload's base::rng::Rng. */
static inline uint64_t rng_next(void) {
    rng_state += 0xa0761d6478bd642fULL;
    __uint128_t t = (__uint128_t)rng_state * (rng_state ^ 0xe7037ed1a0b428dbULL);
    return (uint64_t)(t >> 64) ^ (uint64_t)t;
}

static inline uint64_t rng_below(uint64_t n) {
    return (uint64_t)(((__uint128_t)rng_next() * n) >> 64);
}

static inline void write_digits(char *at, uint64_t v) {
    for (int i = DIGITS - 2; i >= 0; i -= 2) {
        memcpy(at + i, pairs + (v % 100) * 2, 2);
        v /= 100;
    }
}

/* "*3\r\n$3\r\nSET\r\n$16\r\nkey:<12 digits>\r\n$D\r\n<D bytes>\r\n" into out (NULL: length). */
static size_t encode_set(char *out) {
    char head[64];
    int n = snprintf(head, sizeof head, "*3\r\n$3\r\nSET\r\n$%d\r\nkey:", 4 + DIGITS);
    char tail[32];
    int m = snprintf(tail, sizeof tail, "\r\n$%d\r\n", opt.data);
    size_t len = (size_t)n + DIGITS + (size_t)m + (size_t)opt.data + 2;
    if (out) {
        memcpy(out, head, (size_t)n);
        memset(out + n, '0', DIGITS);
        memcpy(out + n + DIGITS, tail, (size_t)m);
        for (int i = 0; i < opt.data; i++) out[n + DIGITS + m + i] = (char)('a' + i % 26);
        memcpy(out + len - 2, "\r\n", 2);
    }
    digit_at = (size_t)n;
    return len;
}

static int open_conn(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)opt.port)};
    if (inet_pton(AF_INET, opt.host, &a.sin_addr) != 1) usage("-h wants an IPv4 address");
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) die("fcntl");
    return fd;
}

static void want_write(struct conn *c, int on) {
    struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl");
}

/* Writes the rest of the batch; a short write waits for EPOLLOUT. */
static void flush_conn(struct conn *c) {
    while (c->written < c->wlen) {
        ssize_t n = write(c->fd, c->wbuf + c->written, c->wlen - c->written);
        if (n < 0 && errno == EAGAIN) {
            want_write(c, 1);
            return;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die("write");
        c->written += (size_t)n;
    }
}

/* The next batch: min(P, requests not issued yet) commands, new keys, one write. */
static void send_batch(struct conn *c) {
    long count = opt.requests - issued;
    if (count > opt.pipeline) count = opt.pipeline;
    if (count <= 0) return;
    for (long i = 0; i < count; i++)
        write_digits(c->wbuf + (size_t)i * cmd_len + digit_at, rng_below((uint64_t)opt.keyspace));
    c->wlen = (size_t)count * cmd_len;
    c->written = 0;
    c->expected = count;
    issued += count;
    flush_conn(c);
}

/* Counts the complete replies in buf[0..n] (lines: "+..." or "-..."), which may begin
 * or end mid-reply. */
static long scan_replies(struct conn *c, const char *buf, size_t n) {
    long replies = 0;
    const char *p = buf, *end = buf + n;
    while (p < end) {
        if (c->at_line_start) {
            if (*p == '-') errors++;
            else if (*p != '+') {
                fprintf(stderr, "floor_client: unexpected reply byte '%c'\n", *p);
                exit(1);
            }
        }
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            c->at_line_start = 0;
            break;
        }
        replies++;
        c->at_line_start = 1;
        p = nl + 1;
    }
    return replies;
}

static void on_readable(struct conn *c, char *rbuf) {
    for (;;) {
        ssize_t n = read(c->fd, rbuf, RBUF);
        if (n < 0 && errno == EAGAIN) return;
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) die("read");
        if (n == 0) {
            fprintf(stderr, "floor_client: server closed the connection\n");
            exit(1);
        }
        long r = scan_replies(c, rbuf, (size_t)n);
        if (r > c->expected) {
            fprintf(stderr, "floor_client: more replies than requests\n");
            exit(1);
        }
        c->expected -= r;
        answered += r;
        if (c->expected == 0) send_batch(c);
        if (n < RBUF) return;
    }
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    parse_flags(argc, argv);
    rng_state = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    cmd_len = encode_set(NULL);
    ep = epoll_create1(0);
    if (ep < 0) die("epoll_create1");
    struct conn *conns = calloc((size_t)opt.conns, sizeof *conns);
    char *rbuf = malloc(RBUF);
    if (!conns || !rbuf) die("malloc");
    for (int i = 0; i < opt.conns; i++) {
        struct conn *c = &conns[i];
        c->fd = open_conn();
        c->wbuf = malloc(cmd_len * (size_t)opt.pipeline);
        if (!c->wbuf) die("malloc");
        for (int k = 0; k < opt.pipeline; k++) encode_set(c->wbuf + (size_t)k * cmd_len);
        c->at_line_start = 1;
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
    }
    double t0 = seconds();
    for (int i = 0; i < opt.conns; i++) send_batch(&conns[i]);
    struct epoll_event evs[1024];
    while (answered < opt.requests) {
        int k = epoll_wait(ep, evs, 1024, -1);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) die("epoll_wait");
        for (int i = 0; i < k; i++) {
            struct conn *c = evs[i].data.ptr;
            if (evs[i].events & EPOLLOUT) {
                flush_conn(c);
                if (c->written == c->wlen) want_write(c, 0);
            }
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c, rbuf);
        }
    }
    double rps = (double)opt.requests / (seconds() - t0);
    if (errors) {
        fprintf(stderr, "floor_client: %ld error replies\n", errors);
        return 1;
    }
    if (opt.csv) printf("\"test\",\"rps\"\n\"SET\",\"%.2f\"\n", rps);
    else printf("SET: %.2f requests per second\n", rps);
    return 0;
}
