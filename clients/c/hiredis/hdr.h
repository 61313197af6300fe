/* A fixed-geometry HDR histogram (lowest 1, highest 60,000,000, 3 significant figures) and its
 * V2 compressed encoding in base64, written for kvperf's C harness (contract v1, issue 23).
 * Only what the harness needs: record, merge, encode. */
#ifndef KVPERF_HDR_H
#define KVPERF_HDR_H

#include <stdint.h>

#define HDR_HIGHEST 60000000LL
#define HDR_SIG_FIGS 3
#define HDR_SUB_BUCKET_HALF_MAG 10                 /* 2 * 10^3 → 2048 sub-buckets, half 1024 */
#define HDR_SUB_BUCKET_HALF (1 << HDR_SUB_BUCKET_HALF_MAG)
#define HDR_BUCKETS 16                             /* 2048 << 15 > 60,000,000 */
#define HDR_COUNTS ((HDR_BUCKETS + 1) * HDR_SUB_BUCKET_HALF)

typedef struct {
    int64_t counts[HDR_COUNTS];
    int64_t total;
    int max_index;                                 /* highest index with a count, -1 if none */
} hdr_hist;

void hdr_init(hdr_hist *h);
void hdr_record(hdr_hist *h, int64_t value, int64_t n);
void hdr_merge(hdr_hist *into, const hdr_hist *from);
/* The base64 text of the V2 compressed encoding; malloc'd, NULL on failure. */
char *hdr_encode_base64(const hdr_hist *h);

#endif
