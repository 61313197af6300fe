/* Allocation counter for the untimed allocation pass (issue 37): malloc, calloc, realloc and
 * free defined in the harness's executable interpose on glibc's for the whole process — the
 * dynamic linker resolves libhiredis's (and libc's own) calls to them first — and forward to
 * glibc's allocator (__libc_malloc …). While counting is on, malloc and calloc add the bytes
 * requested and realloc its growth over the block's usable size; off, they add nothing (one
 * relaxed atomic load). glibc's memalign family is left to glibc (same heap; nothing here
 * uses it on the hot path). */
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>

#include "alloc.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static atomic_int counting;
static atomic_llong counted;

static inline void add(size_t n) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&counted, (long long)n, memory_order_relaxed);
}

void *malloc(size_t n) {
    add(n);
    return __libc_malloc(n);
}

void *calloc(size_t count, size_t size) {
    add(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *p, size_t n) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        size_t had = p ? malloc_usable_size(p) : 0;
        add(n > had ? n - had : 0);
    }
    return __libc_realloc(p, n);
}

void free(void *p) {
    __libc_free(p);
}

void alloc_count(int on) {
    if (on) atomic_store(&counted, 0);
    atomic_store(&counting, on);
}

long long alloc_bytes(void) {
    return atomic_load(&counted);
}
