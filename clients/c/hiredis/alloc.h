/* A counter of the bytes this process asks malloc for (alloc.c), on only while counting. */
#ifndef KVPERF_ALLOC_H
#define KVPERF_ALLOC_H

void alloc_count(int on);              /* start (from zero) or stop counting */
long long alloc_bytes(void);           /* bytes counted since the last start */

#endif
