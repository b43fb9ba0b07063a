/*
 * bench/families/percpu.c - the per-CPU mode against the per-thread one, side by side in one run
 * (plain C: no Google Benchmark). The mode is decided once per process, so each measurement
 * runs in a child process (this program again, with SWF_PERCPU=1 for the per-CPU mode and 0 for
 * the per-thread one), and the parent prints the medians.
 *
 *   crowd   T threads (64 KiB stacks) released together, each making P NOWAIT alloc + free pairs
 *           on one small cache of 64-byte objects, grown to CPUs x 2 x 60 + T + 60 objects (the
 *           same in every mode; each thread holds at most one object at a time, so every failure
 *           is a failure while objects are ready). Rows: per-CPU; per-thread, threads without
 *           magazines (they never make a blocking call); per-thread, each thread bound first
 *           (swf_cache_grow(c, 0)). Columns: NOWAIT failures / calls; objects out of the main
 *           thread's reach while the T threads are still alive (parked after their pairs): the
 *           capacity minus what the main thread's NOWAIT allocations can get; wall ns per pair.
 *   single  one thread, N pairs through the library (swf_cache_alloc / swf_cache_free) and
 *           inline (swf_cache_alloc_fast / swf_cache_free_fast), after swf_cache_grow(c, 1000).
 *
 * Flags: --threads=T (10000), --pairs=P (10000 per thread), --single=N (10M), --reps=R (3),
 * --quick (T 100, P 1000, N 100k, R 1).
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sweepfill/cache.h>

enum { MODES = 3 };
static const char *mode_env[MODES] = {"1", "0", "0"};
static const char *mode_name[MODES] = {"per-CPU", "per-thread, no magazines",
                                       "per-thread, bound (grow(c, 0))"};

static long threads = 10000, pairs = 10000, single = 10000000, reps = 3;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* ---- the child: one measurement -------------------------------------------------------------- */

struct crowd {
    struct swf_cache *c;
    bool bind;
    pthread_barrier_t start, done, leave;
    uint64_t fails; /* atomically added */
};

static void *crowd_thread(void *arg)
{
    struct crowd *w = arg;
    if (w->bind)
        swf_cache_grow(w->c, 0);
    pthread_barrier_wait(&w->start);
    uint64_t fails = 0;
    for (long i = 0; i < pairs; i++) {
        void *o = swf_cache_alloc(w->c, SWF_NOWAIT);
        if (o == NULL)
            fails++;
        else
            swf_cache_free(w->c, o);
    }
    __atomic_fetch_add(&w->fails, fails, __ATOMIC_RELAXED);
    pthread_barrier_wait(&w->done);
    pthread_barrier_wait(&w->leave); /* alive while the main thread counts what it can reach */
    return NULL;
}

static int child_crowd(bool bind)
{
    struct crowd w = {.bind = bind};
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t cap = (uint64_t)ncpu * 2 * SWF_CACHE_MAGAZINE + (uint64_t)threads + 60;
    struct swf_cache_config cfg = {.object_size = 64, .limit = cap, .name = "crowd"};
    if (swf_cache_create(&cfg, &w.c) != 0 || swf_cache_grow(w.c, cap) != 0)
        return 1;
    swf_cache_flush(w.c);
    pthread_barrier_init(&w.start, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&w.done, NULL, (unsigned)threads + 1);
    pthread_barrier_init(&w.leave, NULL, (unsigned)threads + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, (size_t)64 << 10);
    pthread_t *th = calloc((size_t)threads, sizeof(*th));
    for (long i = 0; i < threads; i++)
        if (pthread_create(&th[i], &attr, crowd_thread, &w) != 0)
            return 1;
    pthread_barrier_wait(&w.start);
    uint64_t t0 = now_ns();
    pthread_barrier_wait(&w.done);
    uint64_t t1 = now_ns();
    /* What the main thread can reach while the others live. */
    void **got = calloc(cap, sizeof(void *));
    uint64_t reach = 0;
    while (reach < cap && (got[reach] = swf_cache_alloc(w.c, SWF_NOWAIT)) != NULL)
        reach++;
    for (uint64_t i = 0; i < reach; i++)
        swf_cache_free(w.c, got[i]);
    pthread_barrier_wait(&w.leave);
    for (long i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    struct swf_cache_stats s;
    swf_cache_stats(w.c, &s);
    printf("%d %.6f %llu %.2f %llu\n", swf_cache_percpu(),
           (double)w.fails / ((double)threads * (double)pairs), (unsigned long long)(cap - reach),
           (double)(t1 - t0) / ((double)threads * (double)pairs), (unsigned long long)cap);
    free(got);
    free(th);
    return swf_cache_destroy(w.c) == 0 ? 0 : 1;
}

static int child_single(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "single"};
    struct swf_cache *c;
    if (swf_cache_create(&cfg, &c) != 0 || swf_cache_grow(c, 1000) != 0)
        return 1;
    double ns[2];
    for (int inl = 0; inl < 2; inl++) {
        uint64_t t0 = now_ns();
        for (long i = 0; i < single; i++) {
            void *o = inl ? swf_cache_alloc_fast(c) : swf_cache_alloc(c, SWF_NOWAIT);
            __asm__ __volatile__("" : : "r"(o) : "memory");
            if (inl)
                swf_cache_free_fast(c, o);
            else
                swf_cache_free(c, o);
        }
        ns[inl] = (double)(now_ns() - t0) / (double)single;
    }
    printf("%d %.2f %.2f\n", swf_cache_percpu(), ns[0], ns[1]);
    return swf_cache_destroy(c) == 0 ? 0 : 1;
}

/* ---- the parent: children side by side, medians -------------------------------------------- */

/* Run this program as a child in mode m with `what`; its one line of output into line. */
static int run_child(int m, const char *what, char *line, size_t len)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        if (mode_env[m])
            setenv("SWF_PERCPU", mode_env[m], 1);
        else
            unsetenv("SWF_PERCPU");
        char a[4][64];
        snprintf(a[0], sizeof(a[0]), "--threads=%ld", threads);
        snprintf(a[1], sizeof(a[1]), "--pairs=%ld", pairs);
        snprintf(a[2], sizeof(a[2]), "--single=%ld", single);
        snprintf(a[3], sizeof(a[3]), "--child=%s%s", what, m == 2 ? "-bind" : "");
        execl("/proc/self/exe", "bench_percpu", a[0], a[1], a[2], a[3], (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    FILE *f = fdopen(fds[0], "r");
    line[0] = '\0';
    if (fgets(line, (int)len, f) == NULL)
        line[0] = '\0';
    fclose(f);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && line[0] ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *child = NULL;
    for (int i = 1; i < argc; i++) {
        if (sscanf(argv[i], "--threads=%ld", &threads) == 1 ||
            sscanf(argv[i], "--pairs=%ld", &pairs) == 1 ||
            sscanf(argv[i], "--single=%ld", &single) == 1 ||
            sscanf(argv[i], "--reps=%ld", &reps) == 1)
            continue;
        if (strcmp(argv[i], "--quick") == 0) {
            threads = 100, pairs = 1000, single = 100000, reps = 1;
        } else if (strncmp(argv[i], "--child=", 8) == 0) {
            child = argv[i] + 8;
        } else {
            fprintf(stderr,
                    "usage: %s [--threads=T] [--pairs=P] [--single=N] [--reps=R] [--quick]\n",
                    argv[0]);
            return 2;
        }
    }
    if (child != NULL) {
        if (strcmp(child, "single") == 0)
            return child_single();
        return child_crowd(strcmp(child, "crowd-bind") == 0);
    }
    if (reps < 1 || reps > 99)
        reps = 1;
    double fail[MODES][99], strand[MODES][99], ns[MODES][99], lib[2][99], inl[2][99];
    int got_mode[MODES] = {-1, -1, -1};
    unsigned long long cap = 0;
    char line[256];
    for (long r = 0; r < reps; r++) {
        for (int m = 0; m < MODES; m++) { /* interleaved: drift hits every mode alike */
            unsigned long long st;
            if (run_child(m, "crowd", line, sizeof(line)) != 0 ||
                sscanf(line, "%d %lf %llu %lf %llu", &got_mode[m], &fail[m][r], &st, &ns[m][r],
                       &cap) != 5) {
                fprintf(stderr, "bench_percpu: the %s child failed\n", mode_name[m]);
                return 1;
            }
            strand[m][r] = (double)st;
        }
        for (int m = 0; m < 2; m++) {
            int md;
            if (run_child(m, "single", line, sizeof(line)) != 0 ||
                sscanf(line, "%d %lf %lf", &md, &lib[m][r], &inl[m][r]) != 3) {
                fprintf(stderr, "bench_percpu: the single child failed\n");
                return 1;
            }
        }
    }
    printf("crowd: %ld threads x %ld NOWAIT pairs, cache of %llu 64-byte objects, %ld CPUs, "
           "median of %ld\n",
           threads, pairs, cap, sysconf(_SC_NPROCESSORS_ONLN), reps);
    printf("| mode (swf_cache_percpu) | NOWAIT failures | objects out of one thread's reach | "
           "ns per pair (wall) |\n|---|---|---|---|\n");
    for (int m = 0; m < MODES; m++)
        printf("| %s (%d) | %.4f %% | %.0f | %.1f |\n", mode_name[m], got_mode[m],
               100 * median(fail[m], reps), median(strand[m], reps), median(ns[m], reps));
    printf("\nsingle thread: %ld NOWAIT pairs, median of %ld\n", single, reps);
    printf("| mode | library (ns per pair) | inline (ns per pair) |\n|---|---|---|\n");
    for (int m = 0; m < 2; m++)
        printf("| %s | %.2f | %.2f |\n", m == 0 ? "per-CPU" : "per-thread", median(lib[m], reps),
               median(inl[m], reps));
    return 0;
}
