/*
 * bench/families/many_threads.c - the `many_threads` family (bench_many_threads): what a NOWAIT
 * allocation and its free cost when many threads are alive at once.
 *
 *   many_threads/nowait_pair/bound:B/t:T
 *              T threads (2, and 10,000), created beforehand with 64 KiB stacks, released
 *              together; each makes the same number of swf_cache_alloc(c, SWF_NOWAIT) +
 *              swf_cache_free pairs on one shared cache of 64-byte objects.
 *     bound:1  each thread first calls swf_cache_grow(c, 0), which gives it magazines of its own
 *              (cache.h): its pairs then run on its loaded magazine
 *     bound:0  the threads never make a blocking sweepfill call, so they never get magazines:
 *              every allocation and free goes through the shared depot (two compare-and-swaps)
 *
 * The total number of pairs is the same for every T (--pairs, default 10M: 5M per thread with 2
 * threads, 1,000 with 10,000), so the rows differ only in how the work is spread. Before the
 * release the cache is grown enough for every thread's first magazine (bound) or object
 * (unbound) and the main thread's own magazines are flushed back, so NOWAIT never has to fail
 * (failures are counted: counter fails, which must be 0).
 *
 * One measurement: create the T threads (untimed); each binds (bound:1), says it is ready and
 * sleeps on a futex; once all are ready the main thread reads the clock and wakes them all; each
 * runs its pairs and records when it finished and its own CPU time. Manual time: from the release
 * to the last thread's finish (thread exits and joins are not counted). Counters:
 *   ns_per_pair      that time / all pairs: wall time per pair across all threads
 *   cpu_ns_per_pair  the threads' CPU time over their loops, added up, / all pairs
 *   start_spread_s   from the release until the last thread began its loop (waking T threads
 *                    on 2 cores)
 *   preemptions      involuntary context switches of the threads during their loops, added up
 *   pairs_per_thread, fails
 * report.py prints the ratio of the 10,000-thread figures to the 2-thread ones.
 *
 * Own flags: --threads=2,10000 (thread counts), --pairs=10M (pairs per measurement, all threads
 * together), --quick (threads 2 and 100, 200k pairs).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <sweepfill/cache.h>

#include "lists.h"
#include "shim/swfb.h"

enum { OBJ_SIZE = 64, MAX_ARGS = 8 };

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STACK_SIZE ((size_t)1 << 20) /* the sanitizers' runtimes need more than 64 KiB */
#else
#define STACK_SIZE ((size_t)64 << 10)
#endif

static int64_t total_pairs = 10000000;

struct run {
    struct swf_cache *c;
    bool bound;
    uint64_t pairs; /* per thread */
    int ready;      /* threads bound and waiting */
    int go;         /* the futex word: 1 once released */
    int bind_failed;
};

struct worker {
    struct run *run;
    uint64_t start_ns, end_ns, cpu_ns, fails;
    long preempted;
    pthread_t thread;
};

static void futex_wait(int *word, int value)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void futex_wake_all(int *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct run *run = w->run;
    struct swf_cache *c = run->c;
    if (run->bound && swf_cache_grow(c, 0) != 0)
        __atomic_store_n(&run->bind_failed, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&run->ready, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&run->go, __ATOMIC_ACQUIRE) == 0)
        futex_wait(&run->go, 0);
    long p0 = bench_thread_preemptions();
    uint64_t c0 = bench_thread_cpu_ns();
    w->start_ns = bench_now_ns();
    uint64_t fails = 0;
    for (uint64_t i = 0; i < run->pairs; i++) {
        void *p = swf_cache_alloc(c, SWF_NOWAIT);
        swfb_do_not_optimize(p);
        if (__builtin_expect(p == NULL, 0)) {
            fails++;
            continue;
        }
        swf_cache_free(c, p);
    }
    w->end_ns = bench_now_ns();
    w->cpu_ns = bench_thread_cpu_ns() - c0;
    w->preempted = bench_thread_preemptions() - p0;
    w->fails = fails;
    return NULL;
}

struct outcome {
    double wall_s, cpu_s, spread_s, preempted, fails;
};

/* One measurement; NULL or what went wrong. */
static const char *run_once(bool bound, size_t nthreads, uint64_t pairs, struct outcome *o)
{
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "threads"};
    struct run run = {.bound = bound, .pairs = pairs};
    struct worker *w = calloc(nthreads, sizeof(*w));
    if (w == NULL || swf_cache_create(&cc, &run.c) != 0) {
        free(w);
        return "out of memory";
    }
    const char *msg = NULL;
    size_t started = 0;
    /* Bound: every thread's first allocation takes a whole magazine from the depot. Unbound:
     * one object each at a time. The main thread's magazines go back with the flush. */
    size_t need = bound ? nthreads * SWF_CACHE_MAGAZINE * 2 : nthreads * 2;
    if (swf_cache_grow(run.c, need + 4 * SWF_CACHE_MAGAZINE) != 0 || swf_cache_flush(run.c) != 0) {
        msg = "swf_cache_grow failed";
        goto out;
    }
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_SIZE);
    for (; started < nthreads; started++) {
        w[started].run = &run;
        if (pthread_create(&w[started].thread, &attr, worker_main, &w[started]) != 0) {
            msg = "pthread_create failed (too many threads?)";
            break;
        }
    }
    pthread_attr_destroy(&attr);
    const struct timespec nap = {0, 1000000};
    while (__atomic_load_n(&run.ready, __ATOMIC_ACQUIRE) < (int)started)
        nanosleep(&nap, NULL);
    uint64_t t0 = bench_now_ns();
    __atomic_store_n(&run.go, 1, __ATOMIC_RELEASE);
    futex_wake_all(&run.go);
    for (size_t i = 0; i < started; i++)
        pthread_join(w[i].thread, NULL);
    if (msg == NULL && run.bind_failed)
        msg = "swf_cache_grow(c, 0) failed in a thread";
    memset(o, 0, sizeof(*o));
    uint64_t end = t0, last_start = t0;
    for (size_t i = 0; i < started; i++) {
        end = w[i].end_ns > end ? w[i].end_ns : end;
        last_start = w[i].start_ns > last_start ? w[i].start_ns : last_start;
        o->cpu_s += (double)w[i].cpu_ns * 1e-9;
        o->preempted += (double)w[i].preempted;
        o->fails += (double)w[i].fails;
    }
    o->wall_s = (double)(end - t0) * 1e-9;
    o->spread_s = (double)(last_start - t0) * 1e-9;
out:
    free(w);
    if (swf_cache_destroy(run.c) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    return msg;
}

static void bm_threads(swfb_state *st)
{
    bool bound = swfb_range(st, 0) != 0;
    size_t nthreads = (size_t)swfb_range(st, 1);
    uint64_t pairs = (uint64_t)total_pairs / nthreads;
    if (pairs == 0)
        pairs = 1;
    double all = (double)pairs * (double)nthreads;
    struct outcome sum;
    memset(&sum, 0, sizeof(sum));
    int64_t iters = 0;
    while (swfb_keep_running(st)) {
        struct outcome o;
        const char *msg = run_once(bound, nthreads, pairs, &o);
        if (msg != NULL) {
            swfb_skip_with_error(st, msg);
            return;
        }
        swfb_set_iteration_time(st, o.wall_s);
        sum.wall_s += o.wall_s;
        sum.cpu_s += o.cpu_s;
        sum.spread_s += o.spread_s;
        sum.preempted += o.preempted;
        sum.fails += o.fails;
        iters++;
    }
    if (iters == 0)
        return;
    double k = (double)iters;
    swfb_counter_set(st, "ns_per_pair", sum.wall_s / k * 1e9 / all, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "cpu_ns_per_pair", sum.cpu_s / k * 1e9 / all, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "start_spread_s", sum.spread_s / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "preemptions", sum.preempted / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "pairs_per_thread", (double)pairs, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "fails", sum.fails, SWFB_COUNTER_PLAIN);
    swfb_set_label(st, bound ? "bound: own magazines" : "unbound: the shared depot");
}

int main(int argc, char **argv)
{
    int64_t counts[MAX_ARGS] = {2, 10000};
    int ncounts = 2;
    if (bench_take_flag(&argc, argv, "quick") != NULL) {
        counts[1] = 100;
        total_pairs = 200000;
    }
    const char *v = bench_take_flag(&argc, argv, "threads");
    if (v != NULL && (ncounts = bench_parse_list(v, counts, MAX_ARGS)) <= 0) {
        fprintf(stderr, "bench_many_threads: --threads=%s: expected a comma-separated list\n", v);
        return 1;
    }
    v = bench_take_flag(&argc, argv, "pairs");
    if (v != NULL && bench_parse_list(v, &total_pairs, 1) != 1) {
        fprintf(stderr, "bench_many_threads: --pairs=%s: expected a number\n", v);
        return 1;
    }
    char buf[64];
    snprintf(buf, sizeof(buf), "%zu", STACK_SIZE);
    swfb_add_context("thread_stack_bytes", buf);
    snprintf(buf, sizeof(buf), "%lld", (long long)total_pairs);
    swfb_add_context("pairs_per_measurement", buf);
    swfb_add_context("object_size", "64");
    swfb_bench *b = swfb_register("many_threads/nowait_pair", bm_threads);
    swfb_bench_arg_names(b, "bound", "t");
    for (int bound = 1; bound >= 0; bound--)
        for (int i = 0; i < ncounts; i++)
            swfb_bench_args2(b, bound, counts[i]);
    swfb_bench_manual_time(b);
    swfb_bench_unit(b, SWFB_MS);
    swfb_bench_iterations(b, 1); /* one measurement creates T threads: repeat with
                                    --benchmark_repetitions */
    return swfb_main(argc, argv);
}
