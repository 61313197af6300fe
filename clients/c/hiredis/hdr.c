/* HDR histogram recording and the V2 compressed encoding (see hdr.h).
 *
 * Encoding, as HdrHistogram's V2 format defines it (all integers big-endian):
 *   outer: int32 cookie 0x1c849314, int32 length of the zlib stream, the zlib stream of
 *   inner: int32 cookie 0x1c849313, int32 length of the counts section,
 *          int32 normalizing index offset (0), int32 significant figures,
 *          int64 lowest discernible value, int64 highest trackable value,
 *          float64 integer-to-double conversion ratio (1.0),
 *          counts[0..max index]: each a ZigZag LEB128 varint (at most 9 bytes, the 9th carrying
 *          8 bits); a run of k > 1 zero counts is written as the single value -k. */
#include "hdr.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define COOKIE_INNER 0x1c849313u
#define COOKIE_OUTER 0x1c849314u
#define HEADER_BYTES 40

void hdr_init(hdr_hist *h) {
    memset(h->counts, 0, sizeof h->counts);
    h->total = 0;
    h->max_index = -1;
}

/* Index of value's count: bucket = position of its highest bit above the 2048 sub-buckets. */
static int counts_index(int64_t value) {
    const uint64_t mask = (uint64_t)(2 * HDR_SUB_BUCKET_HALF - 1);
    int bucket = 64 - HDR_SUB_BUCKET_HALF_MAG - 1 - __builtin_clzll((uint64_t)value | mask);
    int sub = (int)(value >> bucket);
    return ((bucket + 1) << HDR_SUB_BUCKET_HALF_MAG) + (sub - HDR_SUB_BUCKET_HALF);
}

void hdr_record(hdr_hist *h, int64_t value, int64_t n) {
    if (value < 1) value = 1;
    if (value > HDR_HIGHEST) value = HDR_HIGHEST;
    int i = counts_index(value);
    h->counts[i] += n;
    h->total += n;
    if (i > h->max_index) h->max_index = i;
}

void hdr_merge(hdr_hist *into, const hdr_hist *from) {
    for (int i = 0; i <= from->max_index; i++) into->counts[i] += from->counts[i];
    into->total += from->total;
    if (from->max_index > into->max_index) into->max_index = from->max_index;
}

static unsigned char *put_be(unsigned char *p, uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; i--) *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static unsigned char *put_varint(unsigned char *p, int64_t v) {
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);     /* ZigZag */
    for (int i = 0; i < 8; i++) {
        if (z < 0x80) {
            *p++ = (unsigned char)z;
            return p;
        }
        *p++ = (unsigned char)((z & 0x7f) | 0x80);
        z >>= 7;
    }
    *p++ = (unsigned char)z;                                     /* 9th byte: all 8 bits */
    return p;
}

/* The uncompressed inner encoding into buf (large enough: 40 + 9 per count). */
static size_t encode_inner(const hdr_hist *h, unsigned char *buf) {
    unsigned char *p = buf + HEADER_BYTES;
    for (int i = 0; i <= h->max_index;) {
        int64_t c = h->counts[i];
        int run = 1;
        if (c == 0)
            while (i + run <= h->max_index && h->counts[i + run] == 0) run++;
        p = put_varint(p, (c == 0 && run > 1) ? -(int64_t)run : c);
        i += run;
    }
    size_t counts_len = (size_t)(p - buf) - HEADER_BYTES;
    union { double d; uint64_t u; } ratio = {1.0};
    unsigned char *q = put_be(buf, COOKIE_INNER, 4);
    q = put_be(q, counts_len, 4);
    q = put_be(q, 0, 4);
    q = put_be(q, HDR_SIG_FIGS, 4);
    q = put_be(q, 1, 8);
    q = put_be(q, (uint64_t)HDR_HIGHEST, 8);
    put_be(q, ratio.u, 8);
    return (size_t)(p - buf);
}

static char *base64(const unsigned char *in, size_t n) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(4 * ((n + 2) / 3) + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n) v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n) v |= in[i + 2];
        *o++ = abc[(v >> 18) & 63];
        *o++ = abc[(v >> 12) & 63];
        *o++ = i + 1 < n ? abc[(v >> 6) & 63] : '=';
        *o++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

char *hdr_encode_base64(const hdr_hist *h) {
    size_t cap = HEADER_BYTES + 9 * (size_t)(h->max_index + 1);
    unsigned char *inner = malloc(cap);
    uLongf zlen = compressBound(cap);
    unsigned char *outer = malloc(8 + zlen);
    char *text = NULL;
    if (inner && outer) {
        size_t n = encode_inner(h, inner);
        if (compress2(outer + 8, &zlen, inner, n, Z_DEFAULT_COMPRESSION) == Z_OK) {
            put_be(put_be(outer, COOKIE_OUTER, 4), zlen, 4);
            text = base64(outer, 8 + zlen);
        }
    }
    free(inner);
    free(outer);
    return text;
}
