/*
 * bench/families/alloc.c - the `alloc` benchmark family: what one allocation and its free cost,
 * from a sweepfill cache and from malloc.
 *
 * Runs, each for object sizes 64 B and 4 KiB, on 1 and on 2 threads (each thread its own loop,
 * all threads on one shared cache; wall-clock time):
 *   alloc_pair/cache_nowait     swf_cache_alloc(c, SWF_NOWAIT) then swf_cache_free(c, p)
 *   alloc_pair/cache_wait       swf_cache_alloc(c, SWF_WAIT) then swf_cache_free(c, p)
 *   alloc_pair/malloc           malloc(size) then free(p)
 *   alloc_pairs64/...           alloc+free pairs, 64 per step of the benchmark loop, so that the
 *                               loop's own cost (about 2 ns here) is spread over 64 pairs:
 *     cache_nowait              swf_cache_alloc(c, SWF_NOWAIT), swf_cache_free(c, p)
 *     cache_inline              cache.h's inline path: swf_cache_alloc_fast(c) then
 *                               swf_cache_free_fast(c, p), no call in the common case
 *     cache_unbound             cache_nowait's pair on a thread that never made a blocking
 *                               call (no grow, no WAIT): a fresh thread for each run, which
 *                               the benchmark's thread starts and joins
 *     floor_freelist            a thread-local free list, inline: pop, push. The floor: no
 *                               allocator does less for an alloc and a free
 *     malloc                    malloc(size), free(p)
 *   alloc_batch64/cache_nowait  64 NOWAIT allocations, then the 64 frees in the same order
 *   alloc_batch64/cache_bulk    swf_cache_alloc_bulk(c, SWF_NOWAIT, objs, 64) then
 *                               swf_cache_free_bulk(c, objs, 64)
 *   alloc_batch64/malloc        64 mallocs, then the 64 frees in the same order
 * One iteration is one object allocated and freed, so the batch runs report time per object too.
 * The objects are not written to: this is the allocators' own cost.
 *
 * The same source is built once per malloc (meson: bench_alloc_glibc, _jemalloc, _mimalloc,
 * _tcmalloc), selected with -DALLOC_PEER_<NAME>. At start-up each binary checks that the `malloc`
 * the dynamic linker resolves lives in the same library as a symbol only that allocator defines
 * (gnu_get_libc_version, mallocx, mi_malloc, tc_malloc) and that this library is the expected
 * one, and refuses to run otherwise. The allocator's name is each run's label ("sweepfill" for
 * the cache runs) and the report's context ("allocator", "malloc_library").
 *
 * The caches are created before the runs with enough objects made ready (prefill, then
 * swf_cache_grow by each thread before its loop) that NOWAIT never has to fail; failures are
 * still counted (counters nowait_fails, and fails for WAIT and malloc) and must read 0.
 * Google Benchmark's flags are accepted (--benchmark_filter=malloc runs only the malloc runs).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/cache.h>

#include "shim/swfb.h"

#if defined(ALLOC_PEER_GLIBC)
#include <gnu/libc-version.h>
#define PEER_NAME        "glibc"
#define PEER_LIB         "/libc.so"
#define PEER_ANCHOR      gnu_get_libc_version
#define PEER_ANCHOR_NAME "gnu_get_libc_version"
#elif defined(ALLOC_PEER_JEMALLOC)
void *mallocx(size_t size, int flags); /* jemalloc's own API (Debian builds it unprefixed) */
#define PEER_NAME        "jemalloc"
#define PEER_LIB         "/libjemalloc.so"
#define PEER_ANCHOR      mallocx
#define PEER_ANCHOR_NAME "mallocx"
#elif defined(ALLOC_PEER_MIMALLOC)
void *mi_malloc(size_t size);
#define PEER_NAME        "mimalloc"
#define PEER_LIB         "/libmimalloc.so"
#define PEER_ANCHOR      mi_malloc
#define PEER_ANCHOR_NAME "mi_malloc"
#elif defined(ALLOC_PEER_TCMALLOC)
void *tc_malloc(size_t size);
#define PEER_NAME        "tcmalloc"
#define PEER_LIB         "/libtcmalloc_minimal.so"
#define PEER_ANCHOR      tc_malloc
#define PEER_ANCHOR_NAME "tc_malloc"
#else
#error \
    "define one of ALLOC_PEER_GLIBC, ALLOC_PEER_JEMALLOC, ALLOC_PEER_MIMALLOC, ALLOC_PEER_TCMALLOC"
#endif

#define BATCH 64

/* Objects made ready at creation: more than two threads' magazines and batches can hold. */
static const struct {
    size_t size;
    size_t prefill;
} cache_sizes[] = {{64, 4096}, {4096, 1024}};
#define NCACHES (sizeof(cache_sizes) / sizeof(cache_sizes[0]))

static struct swf_cache *caches[NCACHES];

static char malloc_library[4096];

static struct swf_cache *cache_for(int64_t size)
{
    for (size_t i = 0; i < NCACHES; i++)
        if ((int64_t)cache_sizes[i].size == size)
            return caches[i];
    return NULL;
}

/* The cache for this run's size, with BATCH objects ready for this thread; NULL after an error. */
static struct swf_cache *setup_cache(swfb_state *st)
{
    struct swf_cache *c = cache_for(swfb_range(st, 0));
    if (c == NULL) {
        swfb_skip_with_error(st, "no cache for this object size");
        return NULL;
    }
    if (swf_cache_grow(c, 2 * BATCH) != 0) {
        swfb_skip_with_error(st, "swf_cache_grow failed");
        return NULL;
    }
    return c;
}

static void finish(swfb_state *st, const char *label, const char *fails_name, uint64_t fails)
{
    swfb_counter_set(st, fails_name, (double)fails, SWFB_COUNTER_PLAIN);
    swfb_set_items_processed(st, swfb_iterations(st));
    if (swfb_thread_index(st) == 0)
        swfb_set_label(st, label);
}

static void bm_pair_cache_nowait(swfb_state *st)
{
    struct swf_cache *c = setup_cache(st);
    if (c == NULL)
        return;
    uint64_t fails = 0;
    while (swfb_keep_running(st)) {
        void *p = swf_cache_alloc(c, SWF_NOWAIT);
        swfb_do_not_optimize(p);
        if (__builtin_expect(p == NULL, 0)) {
            fails++;
            continue;
        }
        swf_cache_free(c, p);
    }
    finish(st, "sweepfill", "nowait_fails", fails);
}

/* The floor's free list: a singly linked list in a thread-local head, objects from the cache. */
static __thread void *freelist;

static void bm_pair_cache_wait(swfb_state *st)
{
    struct swf_cache *c = setup_cache(st);
    if (c == NULL)
        return;
    uint64_t fails = 0;
    while (swfb_keep_running(st)) {
        void *p = swf_cache_alloc(c, SWF_WAIT);
        swfb_do_not_optimize(p);
        if (__builtin_expect(p == NULL, 0)) {
            fails++;
            continue;
        }
        swf_cache_free(c, p);
    }
    finish(st, "sweepfill", "fails", fails);
}

static void bm_pair_malloc(swfb_state *st)
{
    size_t size = (size_t)swfb_range(st, 0);
    uint64_t fails = 0;
    while (swfb_keep_running(st)) {
        void *p = malloc(size);
        swfb_do_not_optimize(p);
        if (__builtin_expect(p == NULL, 0))
            fails++;
        free(p);
    }
    finish(st, PEER_NAME, "fails", fails);
}

static void bm_batch_cache_nowait(swfb_state *st)
{
    struct swf_cache *c = setup_cache(st);
    if (c == NULL)
        return;
    void *obj[BATCH];
    uint64_t fails = 0;
    while (swfb_keep_running_batch(st, BATCH)) {
        for (int i = 0; i < BATCH; i++) {
            obj[i] = swf_cache_alloc(c, SWF_NOWAIT);
            swfb_do_not_optimize(obj[i]);
            fails += obj[i] == NULL;
        }
        for (int i = 0; i < BATCH; i++)
            swf_cache_free(c, obj[i]); /* NULL: nothing to do */
    }
    finish(st, "sweepfill", "nowait_fails", fails);
}

static void bm_batch_cache_bulk(swfb_state *st)
{
    struct swf_cache *c = setup_cache(st);
    if (c == NULL)
        return;
    void *obj[BATCH];
    uint64_t fails = 0;
    while (swfb_keep_running_batch(st, BATCH)) {
        memset(obj, 0, sizeof(obj));
        fails += BATCH - swf_cache_alloc_bulk(c, SWF_NOWAIT, obj, BATCH);
        swfb_do_not_optimize(obj);
        swf_cache_free_bulk(c, obj, BATCH);
    }
    finish(st, "sweepfill", "nowait_fails", fails);
}

static void bm_batch_malloc(swfb_state *st)
{
    size_t size = (size_t)swfb_range(st, 0);
    void *obj[BATCH];
    uint64_t fails = 0;
    while (swfb_keep_running_batch(st, BATCH)) {
        for (int i = 0; i < BATCH; i++) {
            obj[i] = malloc(size);
            swfb_do_not_optimize(obj[i]);
            fails += obj[i] == NULL;
        }
        for (int i = 0; i < BATCH; i++)
            free(obj[i]);
    }
    finish(st, PEER_NAME, "fails", fails);
}

/* Keep p alive without a memory clobber: the compiler must produce p, but may keep what it
 * loaded (the cache's fields, the thread's table) in registers across pairs, as it would in a
 * real loop around an allocator (swfb_do_not_optimize's clobber forces every load again). */
static inline void keep(const void *p)
{
    __asm__ volatile("" : : "r"(p));
}

/* 64 alloc+free pairs per step: ALLOC and FREE name the pair's two halves; setup and teardown
 * run around the loop. */
#define PAIRS64(name, label, setup, teardown, ALLOC, FREE) \
    static void name(swfb_state *st)                       \
    {                                                      \
        struct swf_cache *c = setup_cache(st);             \
        if (c == NULL)                                     \
            return;                                        \
        size_t size = (size_t)swfb_range(st, 0);           \
        (void)size;                                        \
        setup;                                             \
        uint64_t fails = 0;                                \
        while (swfb_keep_running_batch(st, BATCH)) {       \
            for (int i = 0; i < BATCH; i++) {              \
                void *p = ALLOC;                           \
                keep(p);                                   \
                if (__builtin_expect(p == NULL, 0)) {      \
                    fails++;                               \
                    continue;                              \
                }                                          \
                FREE;                                      \
            }                                              \
        }                                                  \
        teardown;                                          \
        finish(st, label, "fails", fails);                 \
    }

PAIRS64(bm_pairs64_cache_nowait, "sweepfill", (void)0, (void)0, swf_cache_alloc(c, SWF_NOWAIT),
        swf_cache_free(c, p))
PAIRS64(bm_pairs64_cache_inline, "sweepfill", (void)0, (void)0, swf_cache_alloc_fast(c),
        swf_cache_free_fast(c, p))
PAIRS64(bm_pairs64_malloc, PEER_NAME, (void)0, (void)0, malloc(size), free(p))

/* cache_unbound: the loop runs on a thread made for the run, which has never called the cache
 * before its first pair (the benchmark's own thread has: other runs grew the cache on it). The
 * state is handed over by pthread_create and back by pthread_join; real time is what counts. */
struct unbound_run {
    swfb_state *st;
    struct swf_cache *c;
    uint64_t fails;
};

static void *unbound_loop(void *arg)
{
    struct unbound_run *r = arg;
    while (swfb_keep_running_batch(r->st, BATCH)) {
        for (int i = 0; i < BATCH; i++) {
            void *p = swf_cache_alloc(r->c, SWF_NOWAIT);
            keep(p);
            if (__builtin_expect(p == NULL, 0)) {
                r->fails++;
                continue;
            }
            swf_cache_free(r->c, p);
        }
    }
    return NULL;
}

static void bm_pairs64_cache_unbound(swfb_state *st)
{
    struct unbound_run r = {.st = st, .c = cache_for(swfb_range(st, 0))};
    pthread_t t;
    if (r.c == NULL || pthread_create(&t, NULL, unbound_loop, &r) != 0) {
        swfb_skip_with_error(st, "no cache for this object size, or no thread");
        return;
    }
    pthread_join(t, NULL);
    finish(st, "sweepfill", "fails", r.fails);
}

/* The free list needs objects first: a few from the cache, kept on this thread's list, and given
 * back after the run. */
static void fill_freelist(struct swf_cache *c)
{
    void *seed[4] = {0};
    size_t got = swf_cache_alloc_bulk(c, SWF_NOWAIT, seed, 4);
    for (size_t i = 0; i < got; i++) {
        *(void **)seed[i] = freelist;
        freelist = seed[i];
    }
}

static void drain_freelist(struct swf_cache *c)
{
    while (freelist != NULL) {
        void *p = freelist;
        freelist = *(void **)p;
        swf_cache_free(c, p);
    }
}
PAIRS64(bm_pairs64_floor_freelist, "floor", fill_freelist(c), drain_freelist(c), ({
            void *q = freelist;
            freelist = *(void **)q;
            q;
        }),
        (*(void **)p = freelist, freelist = p))

/* Sizes 64 and 4096, 1 and 2 threads, wall-clock time. */
static void add(const char *name, swfb_fn *fn)
{
    swfb_bench *b = swfb_register(name, fn);
    swfb_bench_arg(b, 64);
    swfb_bench_arg(b, 4096);
    swfb_bench_threads(b, 1);
    swfb_bench_threads(b, 2);
    swfb_bench_real_time(b);
}

/* Does `malloc` resolve into the allocator this binary was built for? Fills malloc_library. */
static int check_peer(void)
{
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    void *anchor = (void *)(uintptr_t)&PEER_ANCHOR;
    Dl_info mi, ai;
    if (m == NULL || dladdr(m, &mi) == 0 || mi.dli_fname == NULL) {
        fprintf(stderr, "bench_alloc_%s: cannot tell which library provides malloc\n", PEER_NAME);
        return -1;
    }
    snprintf(malloc_library, sizeof(malloc_library), "%s", mi.dli_fname);
    if (dladdr(anchor, &ai) == 0 || ai.dli_fname == NULL) {
        fprintf(stderr, "bench_alloc_%s: cannot locate %s\n", PEER_NAME, PEER_ANCHOR_NAME);
        return -1;
    }
    if (strcmp(mi.dli_fname, ai.dli_fname) != 0 || strstr(mi.dli_fname, PEER_LIB) == NULL) {
        fprintf(stderr,
                "bench_alloc_%s: refusing to run: malloc resolves to %s, but %s is in %s and the "
                "binary is meant to measure %s (%s*); check the link order and LD_PRELOAD\n",
                PEER_NAME, mi.dli_fname, PEER_ANCHOR_NAME, ai.dli_fname, PEER_NAME, PEER_LIB + 1);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (check_peer() != 0)
        return 1;
    for (size_t i = 0; i < NCACHES; i++) {
        struct swf_cache_config cfg = {
            .object_size = cache_sizes[i].size,
            .prefill = cache_sizes[i].prefill,
            .name = "bench_alloc",
        };
        int err = swf_cache_create(&cfg, &caches[i]);
        if (err != 0) {
            fprintf(stderr, "bench_alloc_%s: swf_cache_create(%zu): %s\n", PEER_NAME,
                    cache_sizes[i].size, strerror(err));
            return 1;
        }
    }
    swfb_add_context("allocator", PEER_NAME);
    swfb_add_context("malloc_library", malloc_library);

    add("alloc_pair/cache_nowait", bm_pair_cache_nowait);
    add("alloc_pair/cache_wait", bm_pair_cache_wait);
    add("alloc_pair/malloc", bm_pair_malloc);
    add("alloc_pairs64/cache_nowait", bm_pairs64_cache_nowait);
    add("alloc_pairs64/cache_inline", bm_pairs64_cache_inline);
    add("alloc_pairs64/cache_unbound", bm_pairs64_cache_unbound);
    add("alloc_pairs64/floor_freelist", bm_pairs64_floor_freelist);
    add("alloc_pairs64/malloc", bm_pairs64_malloc);
    add("alloc_batch64/cache_nowait", bm_batch_cache_nowait);
    add("alloc_batch64/cache_bulk", bm_batch_cache_bulk);
    add("alloc_batch64/malloc", bm_batch_malloc);

    int rc = swfb_main(argc, argv);

    for (size_t i = 0; i < NCACHES; i++) {
        int err = swf_cache_destroy(caches[i]);
        if (err != 0) {
            fprintf(stderr, "bench_alloc_%s: swf_cache_destroy(%zu): %s (objects leaked)\n",
                    PEER_NAME, cache_sizes[i].size, strerror(err));
            rc = rc ? rc : 3;
        }
    }
    return rc;
}
