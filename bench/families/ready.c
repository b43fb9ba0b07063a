/*
 * bench/families/ready.c - the `ready` family: memory preparation floors, run by bench_seed (so
 * in the same process as the seed table), and the cache's own figure beside them.
 *
 * For N objects of S bytes, each row measures the *ready* time: the mapping, its preparation,
 * and then one write to every object (an 8-byte store at the start of each), i.e. what it takes
 * until every object has had its first use. Rows (ready/<method>/size:S/n:N):
 *
 *   touch                  mmap, then write one byte per 4 KiB page (first touch), then the
 *                          write pass
 *   populate               mmap with MAP_POPULATE (the kernel faults the pages in), then the
 *                          write pass
 *   thp_touch              mmap 2 MiB-aligned (the length rounded up to 2 MiB), madvise
 *                          MADV_HUGEPAGE, write one byte per 4 KiB page, then the write pass
 *   thp_popw               the same mapping, MADV_HUGEPAGE, then MADV_POPULATE_WRITE (Linux
 *                          5.14), then the write pass
 *   popw                   mmap, MADV_POPULATE_WRITE, then the write pass
 *   memset                 memset of memory made resident beforehand (MAP_POPULATE, untimed,
 *                          once per run), then the write pass: the bandwidth floor
 *   cache                  swf_cache_grow(c, N) on a fresh cache, then N NOWAIT allocations,
 *                          each followed by the same write: the cache's ready time
 *
 * The time of each part is kept: prep_s (mapping and preparation; for the cache row the grow),
 * write_s (the write pass; for the cache row the allocations and writes); the row's time is their
 * sum. munmap, cache creation and destruction are untimed. A row whose madvise advice the
 * kernel refuses with EINVAL (checked once at start-up) runs once with time 0 and reports
 * counter unsupported = 1 and a label saying so.
 *
 * Counters: seconds, prep_s, write_s, cpu_s (the process's CPU time over the timed part: far below
 * seconds means the thread waited for a core), ns_per_object, gib_per_s (N*S bytes / seconds),
 * mapped_kb (the mapping's length: N*S rounded up to 4 KiB, or to 2 MiB for the THP rows; for
 * the cache, what it mapped), anon_huge_kb (AnonHugePages of the mapping after the write pass,
 * from /proc/self/smaps: whether huge pages were actually used), faults (minor page faults of the
 * process during the timed part), unsupported.
 *
 * The cache row also times, untimed for the row, a second drain: the N objects freed and the N
 * NOWAIT allocations and writes made again, which find the objects in magazines and in the CPU's
 * caches. Its counters first_ns and second_ns are the allocations and writes per object of the
 * first drain (after the grow) and of the second: what the first use of an object costs beyond
 * its reuse.
 *
 * Goal lines (issue 35, "ready means ready"): after the run, for every size and N with both a
 * thp_touch and a cache row, one line on stdout: the cache's ready time against THP + touch's
 * (goal: at most 2x), and its first drain against its second (goal: at most 1.5x), each on the
 * medians of the repetitions, with the range of each and their count n, and its verdict.
 *
 * The cache row's struct swf_cache_config sets object_size and name, and --huge-pages=
 * auto|off|required and --grow-threads=N set its huge_pages and grow_threads (default: the
 * library's defaults, AUTO and 1). --cache-alloc=single|inline|bulk says how its N NOWAIT
 * allocations are made: N calls of swf_cache_alloc (the default), N of cache.h's
 * swf_cache_alloc_fast, or one swf_cache_alloc_bulk of N (the writes follow it).
 *
 * The mapping code here (an aligned anonymous mmap, a write per page, MADV_HUGEPAGE,
 * MADV_POPULATE_WRITE) repeats what lib/cache/store/chunk.c does, on purpose: each floor row
 * measures one kernel mechanism alone, against which the library's row is judged. The library's
 * swfi_map_prepared combines them (huge pages from a size on, MADV_POPULATE_WRITE with a fallback
 * to touching when the kernel refuses it, optional threads, mlock) and is internal to the library;
 * calling it here would measure the library against itself and hide an unsupported advice behind
 * its fallback instead of reporting it.
 */
#include "ready.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <sweepfill/cache.h>

#include "lists.h"
#include "shim/swfb.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif

#define PAGE_4K  ((size_t)4096)
#define HUGE_2M  ((size_t)2 << 20)
#define MAX_ROWS 7

enum method {
    M_TOUCH,
    M_POPULATE,
    M_THP_TOUCH,
    M_THP_POPW,
    M_POPW,
    M_MEMSET,
    M_CACHE,
};

struct row {
    enum method method;
    const char *name;
    bool thp, popw; /* needs MADV_HUGEPAGE, MADV_POPULATE_WRITE */
};

static const struct row rows[MAX_ROWS] = {
    {M_TOUCH, "ready/touch", false, false},        {M_POPULATE, "ready/populate", false, false},
    {M_THP_TOUCH, "ready/thp_touch", true, false}, {M_THP_POPW, "ready/thp_popw", true, true},
    {M_POPW, "ready/popw", false, true},           {M_MEMSET, "ready/memset", false, false},
    {M_CACHE, "ready/cache", false, false},
};

static bool have_thp = true, have_popw = true;

/* The cache row's settings (see the top comment). */
static const char *huge_pages_flag; /* NULL: not given */
static const char *cache_alloc_flag = "single";
static unsigned long grow_threads_flag;
static bool grow_threads_given;

/* ---- helpers ------------------------------------------------------------------------------- */

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

static long minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

/* An anonymous mapping of bytes at an address aligned to align (a power of two, at least a
 * page), with extra mmap flags; the slack around it is unmapped. NULL on failure. */
static char *map_aligned(size_t bytes, size_t align, int flags)
{
    size_t span = bytes + (align > PAGE_4K ? align : 0);
    char *raw =
        mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *base = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (base > raw)
        munmap(raw, (size_t)(base - raw));
    if (raw + span > base + bytes)
        munmap(base + bytes, (size_t)(raw + span - (base + bytes)));
    return base;
}

static void touch_pages(char *p, size_t bytes)
{
    for (size_t off = 0; off < bytes; off += PAGE_4K)
        ((volatile char *)p)[off] = 1;
}

/* The first use: one 8-byte store at the start of every object. */
static void write_pass(char *p, size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++)
        *(volatile uint64_t *)(void *)(p + i * size) = i;
}

int64_t ready_anon_huge_kb(const void *lo, const void *hi)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL)
        return -1;
    char line[512];
    uintptr_t a = (uintptr_t)lo, b = (uintptr_t)hi, start = 0, end = 0;
    int64_t kb = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long long s, e, v;
        char c;
        /* A mapping's header: "start-end perms offset dev inode path". */
        if (sscanf(line, "%llx-%llx %c", &s, &e, &c) == 3) {
            start = (uintptr_t)s;
            end = (uintptr_t)e;
            continue;
        }
        if (sscanf(line, "AnonHugePages: %llu kB", &v) == 1 && start < b && a < end)
            kb += (int64_t)v;
    }
    fclose(f);
    return kb;
}

/* Does the kernel accept this madvise advice on an anonymous mapping? */
static bool advice_supported(int advice)
{
    size_t bytes = HUGE_2M;
    char *p = map_aligned(bytes, HUGE_2M, 0);
    if (p == NULL)
        return true; /* cannot tell: let the row try, and fail loudly */
    int rc = madvise(p, bytes, advice);
    int err = errno;
    munmap(p, bytes);
    return rc == 0 || err != EINVAL;
}

/* ---- one measurement ----------------------------------------------------------------------- */

struct ready {
    double prep_s, write_s, cpu_s;
    double second_s; /* the cache row: the second drain (above) */
    size_t mapped;
    int64_t huge_kb;
    long faults;
};

/* The memset row's resident memory: mapped and populated once per run, untimed. */
static char *resident;
static size_t resident_bytes;

static const char *ready_map(enum method m, size_t n, size_t size, struct ready *r)
{
    size_t bytes = n * size;
    bool thp = m == M_THP_TOUCH || m == M_THP_POPW;
    size_t len = round_up(bytes ? bytes : 1, thp ? HUGE_2M : PAGE_4K);
    long f0 = minor_faults();
    uint64_t c0 = bench_process_cpu_ns(), t0 = bench_now_ns();
    char *p = NULL;
    switch (m) {
    case M_TOUCH:
        if ((p = map_aligned(len, PAGE_4K, 0)) != NULL)
            touch_pages(p, len);
        break;
    case M_POPULATE:
        p = map_aligned(len, PAGE_4K, MAP_POPULATE);
        break;
    case M_THP_TOUCH:
        if ((p = map_aligned(len, HUGE_2M, 0)) != NULL) {
            if (madvise(p, len, MADV_HUGEPAGE) != 0) {
                munmap(p, len);
                return "madvise(MADV_HUGEPAGE) failed";
            }
            touch_pages(p, len);
        }
        break;
    case M_THP_POPW:
    case M_POPW:
        if ((p = map_aligned(len, thp ? HUGE_2M : PAGE_4K, 0)) != NULL) {
            if (thp && madvise(p, len, MADV_HUGEPAGE) != 0) {
                munmap(p, len);
                return "madvise(MADV_HUGEPAGE) failed";
            }
            if (madvise(p, len, MADV_POPULATE_WRITE) != 0) {
                munmap(p, len);
                return "madvise(MADV_POPULATE_WRITE) failed";
            }
        }
        break;
    case M_MEMSET:
        p = resident;
        len = resident_bytes;
        memset(p, 1, len);
        break;
    case M_CACHE:
        return "internal error: the cache row is not a mapping";
    }
    if (p == NULL)
        return "mmap failed";
    uint64_t t1 = bench_now_ns();
    swfb_clobber_memory();
    write_pass(p, n, size);
    uint64_t t2 = bench_now_ns(), c2 = bench_process_cpu_ns();
    r->faults = minor_faults() - f0;
    r->cpu_s = (double)(c2 - c0) * 1e-9;
    r->prep_s = (double)(t1 - t0) * 1e-9;
    r->write_s = (double)(t2 - t1) * 1e-9;
    r->mapped = len;
    r->huge_kb = ready_anon_huge_kb(p, p + len);
    if (m != M_MEMSET)
        munmap(p, len);
    return NULL;
}

static struct swf_cache *ready_cache_create(size_t size)
{
    struct swf_cache_config cc = {.object_size = size, .name = "ready"};
    if (huge_pages_flag != NULL)
        cc.huge_pages = strcmp(huge_pages_flag, "off") == 0        ? SWF_HUGE_PAGES_OFF
                        : strcmp(huge_pages_flag, "required") == 0 ? SWF_HUGE_PAGES_REQUIRED
                                                                   : SWF_HUGE_PAGES_AUTO;
    if (grow_threads_given)
        cc.grow_threads = (unsigned int)grow_threads_flag;
    struct swf_cache *c;
    return swf_cache_create(&cc, &c) == 0 ? c : NULL;
}

/* N NOWAIT allocations in the --cache-alloc style, each object written: how many succeeded. */
static size_t drain(struct swf_cache *c, void **objs, size_t n)
{
    size_t got = 0;
    if (cache_alloc_flag[0] == 'b') { /* one bulk allocation, then the writes */
        got = swf_cache_alloc_bulk(c, SWF_NOWAIT, objs, n);
        for (size_t i = 0; i < got; i++)
            *(volatile uint64_t *)objs[i] = i;
    }
    for (; got < n; got++) {
        void *obj =
            cache_alloc_flag[0] == 'i' ? swf_cache_alloc_fast(c) : swf_cache_alloc(c, SWF_NOWAIT);
        if (obj == NULL)
            break;
        *(volatile uint64_t *)obj = got;
        objs[got] = obj;
    }
    return got;
}

static const char *ready_cache(size_t n, size_t size, void **objs, struct ready *r)
{
    struct swf_cache *c = ready_cache_create(size);
    if (c == NULL)
        return "swf_cache_create failed";
    const char *msg = NULL;
    size_t got = 0;
    if (cache_alloc_flag[0] == 'b') /* the entries the bulk call fills: NULL, untimed */
        memset(objs, 0, n * sizeof(void *));
    long f0 = minor_faults();
    uint64_t c0 = bench_process_cpu_ns(), t0 = bench_now_ns();
    int err = swf_cache_grow(c, n);
    uint64_t t1 = bench_now_ns();
    if (err != 0) {
        msg = "swf_cache_grow failed";
        goto out;
    }
    got = drain(c, objs, n);
    uint64_t t2 = bench_now_ns(), c2 = bench_process_cpu_ns();
    r->faults = minor_faults() - f0;
    r->cpu_s = (double)(c2 - c0) * 1e-9;
    if (got < n) {
        msg = "a NOWAIT allocation failed after swf_cache_grow(c, N)";
        goto out;
    }
    /* The second drain, untimed for the row: the same objects again, from magazines. */
    for (size_t i = 0; i < got; i++)
        swf_cache_free(c, objs[i]);
    if (cache_alloc_flag[0] == 'b')
        memset(objs, 0, n * sizeof(void *));
    uint64_t t3 = bench_now_ns();
    got = drain(c, objs, n);
    r->second_s = (double)(bench_now_ns() - t3) * 1e-9;
    if (got < n) {
        msg = "a NOWAIT allocation failed on the second drain";
        goto out;
    }
    r->prep_s = (double)(t1 - t0) * 1e-9;
    r->write_s = (double)(t2 - t1) * 1e-9;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uintptr_t a = (uintptr_t)objs[i];
        lo = a < lo ? a : lo;
        hi = a + size > hi ? a + size : hi;
    }
    struct swf_cache_stats cs;
    r->mapped = swf_cache_stats(c, &cs) == 0 ? (size_t)cs.bytes_mapped : 0;
    r->huge_kb = n ? ready_anon_huge_kb((void *)lo, (void *)hi) : 0;
out:
    for (size_t i = 0; i < got; i++)
        swf_cache_free(c, objs[i]);
    if (swf_cache_destroy(c) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    return msg;
}

/* ---- the goal lines -------------------------------------------------------------------------- */

/* One repetition of a thp_touch or cache row: its means over its iterations. */
struct rep {
    enum method method;
    size_t size, n;
    int64_t iters; /* Google Benchmark's first repetition is preceded by runs of fewer */
    double secs, prep_s, first_ns, second_ns;
};

#define MAX_REPS 4096
static struct rep reps[MAX_REPS];
static int nreps;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median, lowest and highest of the field at `off` of the repetitions of (m, size, n): how
 * many there were. */
static int summary(enum method m, size_t size, size_t n, size_t off, double *med, double *lo,
                   double *hi)
{
    static double v[MAX_REPS];
    int k = 0;
    int64_t iters = 0; /* the repetitions' own: the runs that estimated it had fewer */
    for (int i = 0; i < nreps; i++)
        if (reps[i].method == m && reps[i].size == size && reps[i].n == n && reps[i].iters > iters)
            iters = reps[i].iters;
    for (int i = 0; i < nreps; i++)
        if (reps[i].method == m && reps[i].size == size && reps[i].n == n && reps[i].iters == iters)
            memcpy(&v[k++], (const char *)&reps[i] + off, sizeof(double));
    if (k == 0)
        return 0;
    qsort(v, (size_t)k, sizeof(double), by_value);
    *med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    *lo = v[0];
    *hi = v[k - 1];
    return k;
}

void ready_report(FILE *out)
{
    for (int i = 0; i < nreps; i++) {
        const struct rep *r = &reps[i];
        bool first = r->method == M_CACHE;
        for (int j = 0; first && j < i; j++)
            first = !(reps[j].method == M_CACHE && reps[j].size == r->size && reps[j].n == r->n);
        if (!first)
            continue;
        double cm, cl, ch, tm, tl, th, fm, fl, fh, sm, sl, sh, gm, gl, gh;
        int kc = summary(M_CACHE, r->size, r->n, offsetof(struct rep, secs), &cm, &cl, &ch);
        int kt = summary(M_THP_TOUCH, r->size, r->n, offsetof(struct rep, secs), &tm, &tl, &th);
        summary(M_CACHE, r->size, r->n, offsetof(struct rep, first_ns), &fm, &fl, &fh);
        summary(M_CACHE, r->size, r->n, offsetof(struct rep, second_ns), &sm, &sl, &sh);
        summary(M_CACHE, r->size, r->n, offsetof(struct rep, prep_s), &gm, &gl, &gh);
        if (kt == 0)
            continue;
        double ready = cm / tm, reuse = sm > 0 ? fm / sm : 0;
        fprintf(out,
                "ready goal, %zu x %zu B, host memory %s: grow + first use %.3g ms (%.3g-%.3g, "
                "grow %.3g ms) against THP + touch %.3g ms (%.3g-%.3g): %.2fx (goal <= 2x): "
                "%s; first use %.3g ns an object (%.3g-%.3g) against the second %.3g "
                "(%.3g-%.3g): %.2fx (goal <= 1.5x): %s; medians, n = %d and %d repetitions\n",
                r->n, r->size, bench_host_state_name(bench_host_state), cm * 1e3, cl * 1e3,
                ch * 1e3, gm * 1e3, tm * 1e3, tl * 1e3, th * 1e3, ready,
                ready <= 2 ? "met" : "missed", fm, fl, fh, sm, sl, sh, reuse,
                reuse <= 1.5 ? "met" : "missed", kc, kt);
    }
}

/* ---- the benchmark body -------------------------------------------------------------------- */

/* The page size a row maps with, for the host's preparation (host.h): each row's own. */
static unsigned row_pages(const struct row *row)
{
    if (row->method == M_CACHE)
        return huge_pages_flag != NULL && strcmp(huge_pages_flag, "off") == 0 ? BENCH_PAGES_BASE
                                                                              : BENCH_PAGES_HUGE;
    return row->thp ? BENCH_PAGES_HUGE : BENCH_PAGES_BASE;
}

static void bm_ready(swfb_state *st)
{
    const struct row *row = swfb_data(st);
    size_t size = (size_t)swfb_range(st, 0), n = (size_t)swfb_range(st, 1);
    if ((row->thp && !have_thp) || (row->popw && !have_popw)) {
        while (swfb_keep_running(st))
            swfb_set_iteration_time(st, 0);
        swfb_counter_set(st, "unsupported", 1, SWFB_COUNTER_PLAIN);
        swfb_set_label(st, row->popw && !have_popw
                               ? "unsupported: madvise(MADV_POPULATE_WRITE) returned EINVAL"
                               : "unsupported: madvise(MADV_HUGEPAGE) returned EINVAL");
        return;
    }
    void **objs = NULL;
    if (row->method == M_CACHE) {
        objs = malloc((n ? n : 1) * sizeof(void *));
        if (objs == NULL) {
            swfb_skip_with_error(st, "out of memory");
            return;
        }
        /* Its pages faulted in now, not in the timed part: not with 0, which the compiler turns
         * (with the malloc) into a calloc, which writes nothing on fresh memory. */
        memset(objs, 0xff, (n ? n : 1) * sizeof(void *));
    } else if (row->method == M_MEMSET) {
        resident_bytes = round_up(n * size != 0 ? n * size : 1, PAGE_4K);
        resident = map_aligned(resident_bytes, PAGE_4K, MAP_POPULATE);
        if (resident == NULL) {
            swfb_skip_with_error(st, "mmap failed");
            return;
        }
        memset(resident, 0, resident_bytes);
    }
    double prep = 0, wr = 0, cpu = 0, mapped = 0, huge = 0, faults = 0, second = 0;
    double thp = 0, stalls = 0, steal = 0;
    int64_t iters = 0;
    const char *msg = NULL;
    while (swfb_keep_running(st)) {
        struct ready r;
        memset(&r, 0, sizeof(r));
        if (row->method != M_MEMSET) /* memset's memory is resident beforehand */
            bench_host_prepare_objects(n, size, row_pages(row));
        struct bench_vm v0, v1, dv;
        bench_vm_read(&v0);
        msg = row->method == M_CACHE ? ready_cache(n, size, objs, &r)
                                     : ready_map(row->method, n, size, &r);
        bench_vm_read(&v1);
        bench_vm_delta(&dv, &v1, &v0);
        thp += dv.thp_fault_alloc;
        stalls += dv.compact_stall;
        steal += dv.steal_s;
        if (msg != NULL)
            break;
        swfb_set_iteration_time(st, r.prep_s + r.write_s);
        prep += r.prep_s;
        wr += r.write_s;
        second += r.second_s;
        cpu += r.cpu_s;
        mapped += (double)r.mapped;
        huge += (double)(r.huge_kb > 0 ? r.huge_kb : 0);
        faults += (double)r.faults;
        iters++;
    }
    if (row->method == M_MEMSET) {
        munmap(resident, resident_bytes);
        resident = NULL;
    }
    free(objs);
    if (msg != NULL) {
        swfb_skip_with_error(st, msg);
        return;
    }
    if (iters == 0)
        return;
    double k = (double)iters, secs = (prep + wr) / k;
    double first_ns = n ? wr / k * 1e9 / (double)n : 0,
           second_ns = n ? second / k * 1e9 / (double)n : 0;
    if ((row->method == M_CACHE || row->method == M_THP_TOUCH) && nreps < MAX_REPS)
        reps[nreps++] =
            (struct rep){row->method, size, n, iters, secs, prep / k, first_ns, second_ns};
    if (row->method == M_CACHE) {
        swfb_counter_set(st, "first_ns", first_ns, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "second_ns", second_ns, SWFB_COUNTER_PLAIN);
    }
    swfb_counter_set(st, "seconds", secs, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "prep_s", prep / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "write_s", wr / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "cpu_s", cpu / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "ns_per_object", n ? secs * 1e9 / (double)n : 0, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "gib_per_s", secs > 0 ? (double)(n * size) / secs / (1u << 30) : 0,
                     SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "mapped_kb", mapped / k / 1024, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "anon_huge_kb", huge / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "faults", faults / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "thp_fault_alloc", thp / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "compact_stall", stalls / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "steal_s", steal / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "unsupported", 0, SWFB_COUNTER_PLAIN);
}

/* ---- flags and registration ---------------------------------------------------------------- */

int ready_take_flags(int *argc, char **argv)
{
    const char *hp = bench_take_flag(argc, argv, "huge-pages");
    const char *gt = bench_take_flag(argc, argv, "grow-threads");
    const char *ca = bench_take_flag(argc, argv, "cache-alloc");
    if (ca != NULL && strcmp(ca, "single") != 0 && strcmp(ca, "inline") != 0 &&
        strcmp(ca, "bulk") != 0) {
        fprintf(stderr, "bench_seed: --cache-alloc=%s: expected single, inline or bulk\n", ca);
        return -1;
    }
    cache_alloc_flag = ca ? ca : cache_alloc_flag;
    if (hp != NULL && strcmp(hp, "auto") != 0 && strcmp(hp, "off") != 0 &&
        strcmp(hp, "required") != 0) {
        fprintf(stderr, "bench_seed: --huge-pages=%s: expected auto, off or required\n", hp);
        return -1;
    }
    if (gt != NULL) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(gt, &end, 10);
        if (end == gt || *end != '\0' || errno != 0 || gt[0] == '-') {
            fprintf(stderr, "bench_seed: --grow-threads=%s: expected a number (0: the default)\n",
                    gt);
            return -1;
        }
        grow_threads_flag = v;
        grow_threads_given = true;
    }
    huge_pages_flag = hp;
    return 0;
}

static void context_file(const char *key, const char *path)
{
    char buf[256] = "unknown";
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        if (fgets(buf, sizeof(buf), f) == NULL)
            snprintf(buf, sizeof(buf), "unknown");
        fclose(f);
        buf[strcspn(buf, "\n")] = '\0';
    }
    swfb_add_context(key, buf);
}

void ready_register(const int64_t *sizes, int nsizes, const int64_t *ns, int nn)
{
    have_thp = advice_supported(MADV_HUGEPAGE);
    have_popw = advice_supported(MADV_POPULATE_WRITE);
    context_file("thp_enabled", "/sys/kernel/mm/transparent_hugepage/enabled");
    context_file("thp_defrag", "/sys/kernel/mm/transparent_hugepage/defrag");
    swfb_add_context("madv_populate_write", have_popw ? "supported" : "unsupported (EINVAL)");
    char buf[64];
    swfb_add_context("cache_huge_pages", huge_pages_flag ? huge_pages_flag : "default");
    swfb_add_context("cache_alloc", cache_alloc_flag);
    snprintf(buf, sizeof(buf), "%lu", grow_threads_flag);
    swfb_add_context("cache_grow_threads", grow_threads_given ? buf : "default");
    for (int i = 0; i < MAX_ROWS; i++) {
        swfb_bench *b = swfb_register_data(rows[i].name, bm_ready, (void *)&rows[i]);
        bench_args_size_n(b, sizes, nsizes, ns, nn);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_MS);
        if ((rows[i].thp && !have_thp) || (rows[i].popw && !have_popw) ||
            bench_host_state == BENCH_HOST_COLD) /* cold: one measurement per preparation */
            swfb_bench_iterations(b, 1);
    }
}
