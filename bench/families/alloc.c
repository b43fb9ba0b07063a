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
 *
 * After the runs it prints the cache's pair goals (bench/README.md, Goals) with their verdicts,
 * by the Decision rules: the median of the per-repetition ratios of the one-thread 64 B
 * alloc_pairs64 rows, n, the band (5 %, fixed), the figures. Run it pinned, with
 * --benchmark_repetitions=5 (or more) and --benchmark_enable_random_interleaving=true.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>
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

/* ---- the goals' data: each measurement's own time, kept by the body (bench/README.md, Goals) ----
 *
 * The one-thread 64 B pairs64 rows the goals compare keep their measurements here: the body
 * times its loop (CLOCK_MONOTONIC, from the first batch to the end), and the family judges the
 * goals after the runs, pairing the runs' repetitions in the order they ran (with repetitions,
 * Google Benchmark sizes a run in its first repetition's trials, shorter than the measurements,
 * and gives every later one the same count: the measurements are the longest ones). */
enum goal_run { GOAL_NOWAIT, GOAL_INLINE, GOAL_UNBOUND, GOAL_MALLOC, GOAL_RUNS };
static const char *const goal_run_name[GOAL_RUNS] = {"cache_nowait", "cache_inline",
                                                     "cache_unbound", "malloc"};
#define GOAL_MAX 256
static struct {
    int n;
    int64_t iters[GOAL_MAX];
    double ns[GOAL_MAX];
} goal_data[GOAL_RUNS];

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Keep a measurement of run `which` (a one-thread 64 B run only). */
static void goal_keep(int which, swfb_state *st, int64_t size, double t0)
{
    double t1 = now_ns();
    if (which < 0 || size != 64 || swfb_threads(st) != 1 || goal_data[which].n == GOAL_MAX ||
        swfb_iterations(st) == 0)
        return;
    int i = goal_data[which].n++;
    goal_data[which].iters[i] = swfb_iterations(st);
    goal_data[which].ns[i] = (t1 - t0) / (double)swfb_iterations(st);
}

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
 * run around the loop; goal: the run's goal_run, or -1. */
#define PAIRS64(name, goal, label, setup, teardown, ALLOC, FREE) \
    static void name(swfb_state *st)                             \
    {                                                            \
        struct swf_cache *c = setup_cache(st);                   \
        if (c == NULL)                                           \
            return;                                              \
        size_t size = (size_t)swfb_range(st, 0);                 \
        (void)size;                                              \
        setup;                                                   \
        uint64_t fails = 0;                                      \
        double t0 = 0;                                           \
        while (swfb_keep_running_batch(st, BATCH)) {             \
            if (t0 == 0)                                         \
                t0 = now_ns();                                   \
            for (int i = 0; i < BATCH; i++) {                    \
                void *p = ALLOC;                                 \
                keep(p);                                         \
                if (__builtin_expect(p == NULL, 0)) {            \
                    fails++;                                     \
                    continue;                                    \
                }                                                \
                FREE;                                            \
            }                                                    \
        }                                                        \
        goal_keep(goal, st, swfb_range(st, 0), t0);              \
        teardown;                                                \
        finish(st, label, "fails", fails);                       \
    }

PAIRS64(bm_pairs64_cache_nowait, GOAL_NOWAIT, "sweepfill", (void)0, (void)0,
        swf_cache_alloc(c, SWF_NOWAIT), swf_cache_free(c, p))
PAIRS64(bm_pairs64_cache_inline, GOAL_INLINE, "sweepfill", (void)0, (void)0,
        swf_cache_alloc_fast(c), swf_cache_free_fast(c, p))
PAIRS64(bm_pairs64_malloc, GOAL_MALLOC, PEER_NAME, (void)0, (void)0, malloc(size), free(p))

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
    double t0 = 0;
    while (swfb_keep_running_batch(r->st, BATCH)) {
        if (t0 == 0)
            t0 = now_ns();
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
    goal_keep(GOAL_UNBOUND, r->st, swfb_range(r->st, 0), t0);
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
PAIRS64(bm_pairs64_floor_freelist, -1, "floor", fill_freelist(c), drain_freelist(c), ({
            void *q = freelist;
            freelist = *(void **)q;
            q;
        }),
        (*(void **)p = freelist, freelist = p))

/* ---- the goals and their verdicts (bench/README.md: Goals, Decision rules) ------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The measurements of a run: its longest ones (above), in the order they ran. */
static int measurements(int which, double *out)
{
    int64_t most = 0;
    int n = 0;
    for (int i = 0; i < goal_data[which].n; i++)
        most = goal_data[which].iters[i] > most ? goal_data[which].iters[i] : most;
    for (int i = 0; i < goal_data[which].n; i++)
        if (goal_data[which].iters[i] == most)
            out[n++] = goal_data[which].ns[i];
    return n;
}

#define BAND      0.05 /* rule 3: fixed, no A/A control here */
#define MIN_PAIRS 5    /* rule 5 */

/* One goal, "num at most limit x den": the median of the per-repetition ratios (rule 1), n
 * (rule 2), the verdict (rules 4 and 5) and the figures it rests on (rule 8). */
static void judge(const char *goal, int num, int den, double limit)
{
    double a[GOAL_MAX], b[GOAL_MAX], r[GOAL_MAX];
    int na = measurements(num, a), nb = measurements(den, b), n = na < nb ? na : nb;
    printf("- %s: ", goal);
    if (n == 0) {
        printf("not judged (no data: run %s and %s, 64 B, one thread)\n", goal_run_name[num],
               goal_run_name[den]);
        return;
    }
    for (int i = 0; i < n; i++)
        r[i] = a[i] / b[i];
    double m = median(r, n), lo = r[0], hi = r[n - 1];
    const char *verdict = n >= MIN_PAIRS ? (m <= limit ? "met" : "missed (above the goal)")
                          : m <= limit / (1 + BAND) ? "met"
                          : m > limit * (1 + BAND)  ? "missed (above the goal)"
                                                    : "not judged (n < 5, within the band)";
    printf("%.3fx (n=%d; per-repetition ratios %.3f-%.3f; medians %.3f / %.3f ns) against <= "
           "%.2fx, band %g %% fixed: %s\n",
           m, n, lo, hi, median(a, na), median(b, nb), limit, BAND * 100, verdict);
}

static void goals(void)
{
    if (goal_data[GOAL_NOWAIT].n + goal_data[GOAL_INLINE].n + goal_data[GOAL_UNBOUND].n == 0)
        return;
    int mode = swf_cache_percpu();
    printf("\nGoals (bench/README.md), alloc_pairs64, 64 B, one thread, %s mode, against %s:\n",
           mode ? "per-CPU" : "per-thread", PEER_NAME);
    if (strcmp(PEER_NAME, "tcmalloc") != 0 || mode == 0) {
        printf("- the pair goals are the per-CPU mode's against tcmalloc: not judged in this "
               "binary and mode\n");
    } else {
        judge("the pair through libsweepfill.so at most 1.0x tcmalloc", GOAL_NOWAIT, GOAL_MALLOC,
              1.0);
        judge("the inline pair at most 0.8x tcmalloc", GOAL_INLINE, GOAL_MALLOC, 0.8);
        judge("a thread that never blocked at most 1.05x a bound one", GOAL_UNBOUND, GOAL_NOWAIT,
              1.05);
    }
    printf("- the per-thread mode no slower than before a change, and the always-on free checks "
           "at most 10 %% of the pair: judged across builds (bench/RESULTS.md), not here\n");
}

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
    goals();

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
