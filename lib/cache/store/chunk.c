/*
 * lib/cache/store/chunk.c - mapping and preparing memory for objects, and carving objects from it.
 *
 * Memory enters a cache in chunks mapped on a blocking path and prepared there: every page is
 * made present and writable (and locked, with lock_memory), so that no lock-free path ever takes
 * a page fault on it while it stays resident. Preparation is the cost of a large grow, so it
 * goes as fast as the kernel allows: madvise(MADV_POPULATE_WRITE) (Linux 5.14) makes the kernel
 * fault the whole range in one call, with no trip back to user space per page (a write per page
 * where the kernel lacks it); large chunks are 2 MiB-aligned and advised MADV_HUGEPAGE, so that
 * one fault brings 512 pages; and with grow_threads the range is split between threads. The same
 * goes for every other byte a lock-free path may write: magazine and thread-state blocks
 * (istack.c), the full checks' states (here), binding tables (owner.c).
 *
 * A chunk's objects are not put into magazines when it is mapped: they stay uncarved, [x_carved,
 * nobjs) of it, and the chunk goes on a stack (x_carve) that allocations carve from, a
 * magazine's worth at a time, by compare-and-swap on x_carved (swfi_carve): so a grow costs the
 * memory's preparation and O(chunks), not a step per object. The magazines that will hold the
 * objects are made before the chunk is mapped (mag.c), in the chunk itself when it is a huge
 * chunk of small objects: when the magazine table is full, the chunk is made smaller (or not
 * mapped at all) rather than mapped and left unusable.
 */
#include "cache/store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older headers lack the name */
#endif

#ifndef PAGEMAP_SCAN /* Linux 6.7's <linux/fs.h>; Debian 12's headers lack it */
struct page_region {
    uint64_t start, end, categories;
};
struct pm_scan_arg {
    uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
    uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_HUGE (1 << 6)
#endif

#define HUGE_PAGE        ((size_t)2 << 20)
#define HUGE_MIN_BYTES   ((size_t)2 << 20)  /* AUTO: this many bytes of objects get huge pages */
#define PARALLEL_MIN     ((size_t)16 << 20) /* grow_threads: split only larger chunks */
#define GROW_STEP_BYTES  ((size_t)64 << 20) /* swfi_map_objects maps at most this at once */
#define MAG_RUN          ((size_t)64) /* a huge chunk's own magazines: runs of 64 (8 blocks) */
#define MAG_RUN_BYTES    (sizeof(struct swfi_magazine) * MAG_RUN)
#define CARVE_SHARE      8 /* a carve takes at most this fraction of its chunk */
#define THP_ENABLED_PATH "/sys/kernel/mm/transparent_hugepage/enabled"
#define PROBE_BYTES      ((size_t)2 << 20) /* what AUTO's measurement prepares each way */
#define PROBE_ROUNDS     1                 /* rounds, alternated; the fastest of each way counts */

bool swfi_thp_available(void)
{
    char line[128] = "";
    FILE *f = fopen(THP_ENABLED_PATH, "r");
    if (f == NULL)
        return false;
    bool ok = fgets(line, sizeof(line), f) != NULL &&
              (strstr(line, "[always]") != NULL || strstr(line, "[madvise]") != NULL);
    fclose(f);
    return ok;
}

/* Write every page of a fresh range: a write, not a read, which would only map the zero page. */
static void touch(char *base, size_t bytes)
{
    for (size_t off = 0; off < bytes; off += 4096)
        ((volatile char *)base)[off] = 0;
}

/* Make [base, base + bytes) present and writable. 0 or ENOMEM. */
static int populate(char *base, size_t bytes)
{
    if (madvise(base, bytes, MADV_POPULATE_WRITE) == 0)
        return 0;
    if (errno != EINVAL)
        return ENOMEM;  /* the kernel could not back it: a touch would only be killed for it */
    touch(base, bytes); /* a kernel before 5.14 */
    return 0;
}

struct slice {
    char *base;
    size_t bytes;
    int err;
};

static void *populate_slice(void *arg)
{
    struct slice *s = arg;
    s->err = populate(s->base, s->bytes);
    return NULL;
}

/* populate() split between `threads` threads (this one included), in 2 MiB-aligned slices. */
static int populate_parallel(char *base, size_t bytes, unsigned threads)
{
    if (threads <= 1 || bytes < PARALLEL_MIN)
        return populate(base, bytes);
    size_t per = (bytes / threads + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    struct slice s[SWF_CACHE_GROW_THREADS_MAX];
    pthread_t t[SWF_CACHE_GROW_THREADS_MAX];
    bool started[SWF_CACHE_GROW_THREADS_MAX] = {false};
    unsigned n = 0;
    for (size_t off = 0; off < bytes && n < threads; off += per, n++)
        s[n] = (struct slice){base + off, off + per > bytes ? bytes - off : per, 0};
    for (unsigned i = 1; i < n; i++)
        started[i] = pthread_create(&t[i], NULL, populate_slice, &s[i]) == 0;
    populate_slice(&s[0]);
    int err = s[0].err;
    for (unsigned i = 1; i < n; i++) {
        if (started[i])
            pthread_join(t[i], NULL);
        else
            populate_slice(&s[i]); /* no thread to be had: do it here */
        if (s[i].err != 0)
            err = s[i].err;
    }
    return err;
}

/* Bytes of [base, base + bytes) that huge pages map, from the page tables: the pagemap's
 * PAGEMAP_SCAN (Linux 6.7), a few microseconds. False where the kernel (or an emulator) lacks it.
 */
static bool huge_scan(const char *base, size_t bytes, uint64_t *out)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    struct page_region r[16];
    memset(r, 0, sizeof(r));
    struct pm_scan_arg a = {.size = sizeof(a),
                            .start = (uintptr_t)base,
                            .end = (uintptr_t)base + bytes,
                            .vec = (uintptr_t)r,
                            .vec_len = sizeof(r) / sizeof(r[0]),
                            .category_mask = PAGE_IS_HUGE,
                            .return_mask = PAGE_IS_HUGE};
    uint64_t total = 0;
    long n;
    /* Runs of huge pages; when r fills up, walk_end says where to go on. */
    while ((n = ioctl(fd, PAGEMAP_SCAN, &a)) > 0) {
        for (long i = 0; i < n; i++)
            total += r[i].end - r[i].start;
        if (a.walk_end >= a.end)
            break;
        a.start = a.walk_end;
    }
    close(fd);
    *out = total;
    return n >= 0;
}

/* AnonHugePages (bytes) of the mappings that overlap [base, base + bytes), from smaps: where
 * huge_scan fails, at the cost of a walk of every mapping of the process (75 us for a small one).
 */
static uint64_t anon_huge_bytes(const char *base, size_t bytes)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (f == NULL)
        return 0;
    char line[256];
    bool inside = false;
    uint64_t total = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long lo, hi;
        unsigned long long kib;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
            inside = lo < (uintptr_t)base + bytes && hi > (uintptr_t)base;
        else if (inside && sscanf(line, "AnonHugePages: %llu kB", &kib) == 1)
            total += (uint64_t)kib << 10;
    }
    fclose(f);
    return total;
}

/* Whether huge_scan works here: 0 not tried yet, 1 yes, 2 no (it is tried once). */
static uint32_t scan_works;

char *swfi_map_prepared(size_t bytes, size_t align, const struct swfi_prep *how, int *err)
{
    if (how->huge && align < HUGE_PAGE)
        align = HUGE_PAGE;
    size_t span = bytes + align;
    char *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        *err = ENOMEM;
        return NULL;
    }
    char *base = (char *)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
    if (base > raw)
        munmap(raw, (size_t)(base - raw));
    if (raw + span > base + bytes)
        munmap(base + bytes, (size_t)(raw + span - (base + bytes)));
    if (how->huge || how->no_huge)
        (void)madvise(base, bytes, how->huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    /* smaps counts whole mappings, which the kernel may have merged with this one: it takes a
     * count before, unless the scan of the range alone worked before. */
    bool scan = how->huge_bytes && swfi_load_relaxed_32(&scan_works) == 1;
    uint64_t huge_before = how->huge_bytes && !scan ? anon_huge_bytes(base, bytes) : 0;
    /* Here, outside any read-side section, so that NOWAIT never faults. */
    *err = populate_parallel(base, bytes, how->threads);
    if (*err == 0 && how->lock && mlock(base, bytes) != 0)
        *err = errno == EPERM ? EPERM : ENOMEM;
    if (*err == 0 && how->huge_bytes) {
        uint64_t got;
        if (swfi_load_relaxed_32(&scan_works) != 2 && huge_scan(base, bytes, &got)) {
            swfi_store_relaxed_32(&scan_works, 1);
        } else {
            swfi_store_relaxed_32(&scan_works, 2);
            uint64_t after = anon_huge_bytes(base, bytes);
            got = after > huge_before ? after - huge_before : 0;
        }
        *how->huge_bytes = got < bytes ? got : bytes;
    }
    if (*err != 0) {
        munmap(base, bytes);
        return NULL;
    }
    return base;
}

/* ---- AUTO's choice of pages, measured once per process ------------------------------------ */

/* SWF_HUGE_PAGES_AUTO puts large chunks on huge pages only where the host prepares them about as
 * fast as base pages: on some hosts a 2 MiB page costs compaction or a slow zeroing, and then
 * base pages faulted in by the same populate call are several times faster for the same bytes
 * (bench/RESULTS.md, "Ready time"). The first chunk of the process that AUTO would put on huge
 * pages first times both, on PROBE_BYTES mapped and prepared each way, PROBE_ROUNDS times
 * alternated, and keeps the answer for the process: huge pages unless base pages were more than
 * 1.25 times faster (huge pages also spare TLB misses in every later use of the objects).
 * Every probe mapping stays until the last is timed: a round that got the pages an earlier round
 * had just unmapped would time memory the host has just backed, which a large grow does not get
 * (where the guest hands free memory back to its host, a huge page's free 2 MiB block is the
 * kind it hands back first). */
static uint32_t thp_choice; /* enum swfi_thp_choice; written once, under thp_once */
static pthread_once_t thp_once = PTHREAD_ONCE_INIT;

static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Maps and prepares PROBE_BYTES on huge pages or base pages into *held; nanoseconds it took
 * (0: it failed, nothing held). */
static uint64_t probe_once(bool huge, void **held)
{
    struct swfi_prep how = {.huge = huge, .no_huge = !huge, .threads = 1};
    int err;
    uint64_t t0 = mono_ns();
    *held = swfi_map_prepared(PROBE_BYTES, HUGE_PAGE, &how, &err);
    uint64_t ns = mono_ns() - t0;
    if (*held == NULL)
        return 0;
    return ns ? ns : 1;
}

static void thp_decide(void)
{
    uint64_t best[2] = {UINT64_MAX, UINT64_MAX}; /* [0] base pages, [1] huge pages */
    void *held[PROBE_ROUNDS * 2] = {NULL};
    bool measured = true;
    for (int i = 0; i < PROBE_ROUNDS * 2 && measured; i++) {
        int huge = !(i & 1); /* huge first in each round */
        uint64_t ns = probe_once(huge, &held[i]);
        measured = ns != 0; /* no memory to measure with: keep the huge pages */
        best[huge] = ns < best[huge] ? ns : best[huge];
    }
    for (int i = 0; i < PROBE_ROUNDS * 2; i++)
        if (held[i] != NULL)
            munmap(held[i], PROBE_BYTES);
    bool base_faster = measured && best[0] * 5 < best[1] * 4;
    swfi_store_release_32(&thp_choice, base_faster ? SWFI_THP_BASE : SWFI_THP_HUGE);
}

/* Whether AUTO's large chunks get huge pages in this process: measured at the first call (which
 * holds 2 x PROBE_BYTES x PROBE_ROUNDS mapped and prepared at once: a blocking path's). */
static bool thp_chosen(void)
{
    pthread_once(&thp_once, thp_decide);
    return swfi_load_acquire_32(&thp_choice) == SWFI_THP_HUGE;
}

enum swfi_thp_choice swfi_thp_choice(void)
{
    return (enum swfi_thp_choice)swfi_load_acquire_32(&thp_choice);
}

/* Objects the limit still allows, at most want. */
static size_t allowed_by_limit(struct swf_cache *c, size_t want)
{
    uint64_t capacity = swfi_load_relaxed_64(&c->x_capacity);
    uint64_t limit = swfi_load_relaxed_64(&c->x_limit);
    if (limit == 0)
        return want;
    if (capacity >= limit)
        return 0;
    return limit - capacity < want ? (size_t)(limit - capacity) : want;
}

/* How a chunk is laid out: nobjs objects from its base, mag_runs runs of MAG_RUN magazines from
 * mag_off (the end), bytes in all; huge: 2 MiB-aligned, MADV_HUGEPAGE. */
struct layout {
    size_t nobjs;
    size_t mag_off;
    size_t bytes;
    uint32_t mag_runs;
    bool huge;
};

/* The unit of a chunk of base pages: a page for a cache's first chunk, four times larger for each
 * later one, up to 64 KiB (CHUNK_ALIGN) from the third on. So a cache's first use maps what it
 * needs, rounded up to a page, and a cache that keeps growing soon maps 64 KiB at a time. Chunks
 * stay CHUNK_ALIGN-aligned whatever their size (one chunk per granule of the map: chunkmap.c). */
static size_t small_unit(const struct swf_cache *c)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), unit = page;
    uint64_t chunks = swfi_load_relaxed_64(&c->x_chunks);
    for (uint64_t i = 0; i < chunks && unit < CHUNK_ALIGN; i++)
        unit <<= 2;
    return unit < CHUNK_ALIGN ? unit : page > CHUNK_ALIGN ? page : CHUNK_ALIGN;
}

/* The layout of a chunk for at least n objects (false on overflow). Memory comes in whole units,
 * whose slack holds objects too: small_unit's for base pages, 64 KiB units (CHUNK_ALIGN) rounded
 * up to huge pages for a huge chunk. With own_mags, a huge chunk that needs a run of magazines or
 * more holds its own (mag.c adopts them), and its objects fill the rest of its huge pages: the
 * magazines then share the chunk's huge pages and its one preparation, where magazines made apart
 * cost a page fault per 4 KiB. The caller clamps nobjs to the limit. */
static bool plan(struct swf_cache *c, size_t n, bool own_mags, struct layout *l)
{
    size_t obj_bytes, units;
    if (swfi_mul_overflows(n, c->stride, &obj_bytes))
        return false;
    l->huge = c->huge_pages == SWF_HUGE_PAGES_REQUIRED ||
              (c->huge_pages == SWF_HUGE_PAGES_AUTO &&
               (c->stride >= 4096 || obj_bytes >= HUGE_MIN_BYTES) && swfi_thp_available() &&
               thp_chosen());
    if (!swfi_round_up(obj_bytes, l->huge ? CHUNK_ALIGN : small_unit(c), &units))
        return false;
    size_t mags = (n + SWF_CACHE_MAGAZINE - 1) / SWF_CACHE_MAGAZINE;
    l->mag_runs = 0;
    if (!own_mags || !l->huge || mags < MAG_RUN) {
        l->nobjs = units / c->stride;
        if (!swfi_round_up(units, l->huge ? HUGE_PAGE : 1, &l->bytes))
            return false;
        l->mag_off = l->bytes;
        return true;
    }
    l->mag_runs = (uint32_t)((mags + MAG_RUN - 1) / MAG_RUN);
    size_t obj_end;
    if (!swfi_round_up(obj_bytes, 64, &obj_end) ||
        !swfi_round_up(obj_end + (size_t)l->mag_runs * MAG_RUN_BYTES, HUGE_PAGE, &l->bytes))
        return false;
    /* Fill the huge pages: as many objects as fit beside the runs that hold them. */
    for (;;) {
        l->nobjs = (l->bytes - (size_t)l->mag_runs * MAG_RUN_BYTES) / c->stride;
        if (l->nobjs <= (size_t)l->mag_runs * MAG_RUN * SWF_CACHE_MAGAZINE)
            break;
        l->mag_runs++;
    }
    l->mag_off = l->bytes - (size_t)l->mag_runs * MAG_RUN_BYTES; /* a multiple of 64 */
    return true;
}

/* Map a chunk as laid out, with its full checks' states, and enter it in the process-wide map;
 * NULL and *err on failure. */
static struct swfi_chunk *chunk_map(struct swf_cache *c, const struct layout *l, int *err)
{
    *err = ENOMEM;
    struct swfi_chunk *ch;
    if (posix_memalign((void **)&ch, 64, sizeof(*ch)) != 0) /* x_carved on a line of its own */
        return NULL;
    memset(ch, 0, sizeof(*ch));
    struct swfi_prep how = {
        .lock = c->lock_memory,
        .huge = l->huge,
        /* OFF, or AUTO where base pages were measured faster: not even
         * "always" gives huge pages */
        .no_huge = c->huge_pages == SWF_HUGE_PAGES_OFF ||
                   (c->huge_pages == SWF_HUGE_PAGES_AUTO && swfi_thp_choice() == SWFI_THP_BASE),
        .threads = c->grow_threads,
        .huge_bytes = l->huge ? &ch->huge_bytes : NULL};
    ch->base = swfi_map_prepared(l->bytes, CHUNK_ALIGN, &how, err);
    if (ch->base != NULL && c->huge_pages == SWF_HUGE_PAGES_REQUIRED && ch->huge_bytes == 0) {
        munmap(ch->base, l->bytes); /* huge pages were required and the kernel gave none */
        ch->base = NULL;
        *err = ENOMEM;
        c->map_why = "huge pages are required and the kernel gave none";
    }
    if (ch->base == NULL) {
        free(ch);
        return NULL;
    }
    ch->map_bytes = l->bytes;
    ch->nobjs = l->nobjs;
    ch->cache = c;
    if (c->checks) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        ch->state_bytes = (ch->nobjs + page - 1) & ~(page - 1);
        struct swfi_prep small = {.lock = c->lock_memory, .threads = 1};
        ch->state = (uint8_t *)swfi_map_prepared(ch->state_bytes, page, &small, err);
    }
    /* Every free looks its pointer up in the process-wide map (chunkmap.c). */
    if ((c->checks && ch->state == NULL) || swfi_dmap_insert(ch) != 0) {
        if (ch->state != NULL)
            munmap(ch->state, ch->state_bytes);
        munmap(ch->base, ch->map_bytes);
        free(ch);
        *err = ENOMEM;
        return NULL;
    }
    return ch;
}

/* The layout for up to `allowed` objects, and magazines to hold them, made before any memory is
 * mapped: room in the table for the chunk's own blocks, or else blocks made apart (mag.c's
 * credit); *short_of_mags when the table is full and the layout shrank to what it can hold.
 * False when not one object can be had. */
static bool plan_with_mags(struct swf_cache *c, size_t allowed, struct layout *l,
                           bool *short_of_mags)
{
    *short_of_mags = false;
    if (!plan(c, allowed, true, l))
        return false;
    l->nobjs = allowed_by_limit(c, l->nobjs); /* the slack's objects, within the limit */
    if (l->mag_runs &&
        swfi_itable_reserve(&c->mags, l->mag_runs * (uint32_t)(MAG_RUN >> MAG_BLOCK_SHIFT)) == 0)
        return true;
    if (l->mag_runs && !plan(c, allowed, false, l))
        return false;
    l->nobjs = allowed_by_limit(c, l->nobjs);
    size_t held = swfi_mags_cover(c, l->nobjs);
    if (held >= l->nobjs)
        return true;
    *short_of_mags = true; /* the magazine table is full: map only what it can hold */
    if (held == 0 || !plan(c, held, false, l))
        return false;
    l->nobjs = allowed_by_limit(c, l->nobjs < held ? l->nobjs : held);
    return true;
}

/* Make ch's objects ready: uncarved, on the stack of chunks that allocations carve from. */
static void carve_push(struct swf_cache *c, struct swfi_chunk *ch)
{
    struct swfi_chunk *top = swfi_load_relaxed_ptr((void *const *)&c->x_carve);
    do
        ch->carve_next = top;
    /* Release: the chunk's fields reach the carver that acquires it. */
    while (!swfi_cas_acq_rel_ptr((void **)&c->x_carve, (void **)&top, ch));
}

static const char table_full[] =
    "the magazine table is full: free objects to this cache, or spread them over more caches";

/* One step of swfi_map_objects: one chunk of up to `want` objects. */
static int map_step(struct swf_cache *c, size_t want)
{
    size_t allowed = allowed_by_limit(c, want);
    c->map_why = "the cache's limit is reached";
    if (allowed == 0)
        return ENOMEM;
    struct layout l;
    bool short_of_mags;
    int err = ENOMEM;
    struct swfi_chunk *ch = NULL;
    if (plan_with_mags(c, allowed, &l, &short_of_mags))
        ch = chunk_map(c, &l, &err);
    if (ch == NULL) {
        c->map_why = short_of_mags    ? table_full
                     : err == EPERM   ? "mlock was refused (lock_memory)"
                     : c->lock_memory ? "the system refused memory, or mlock did"
                                      : "the system refused memory";
        return err;
    }
    if (l.mag_runs)
        swfi_mags_adopt(c, ch->base + l.mag_off, l.mag_runs * (uint32_t)MAG_RUN);
    /* The objects stay uncarved until allocations carve them, into magazines of their own: the
     * magazines made for them wait empty on the depot for the frees that will need the room. */
    swfi_mags_promise(c, ch->nobjs);
    ch->next = c->chunks;
    c->chunks = ch;
    swfi_store_relaxed_64(&c->x_chunks, swfi_load_relaxed_64(&c->x_chunks) + 1);
    swfi_store_relaxed_64(&c->x_bytes_mapped,
                          swfi_load_relaxed_64(&c->x_bytes_mapped) + ch->map_bytes);
    swfi_store_relaxed_64(&c->x_huge_bytes,
                          swfi_load_relaxed_64(&c->x_huge_bytes) + ch->huge_bytes);
    swfi_store_relaxed_64(&c->x_capacity, swfi_load_relaxed_64(&c->x_capacity) + ch->nobjs);
    carve_push(c, ch);
    if (short_of_mags)
        c->map_why = table_full;
    return ch->nobjs >= want ? 0 : ENOMEM;
}

/* ---- carving -------------------------------------------------------------------------------- */

uint32_t swfi_carve(struct swf_cache *c, void **dst, uint32_t want)
{
    /* Acquire pairs with carve_push's release: the chunk's fields are set. */
    struct swfi_chunk *ch = swfi_load_acquire_ptr((void *const *)&c->x_carve);
    while (ch != NULL) {
        uint64_t k = swfi_load_relaxed_64(&ch->x_carved);
        /* At most an eighth of the chunk at once: the few objects of a cache's first, small
         * chunks go to several threads (or CPUs) before a new chunk is mapped for want of one. */
        uint64_t most = ch->nobjs / CARVE_SHARE ? ch->nobjs / CARVE_SHARE : 1;
        if (most > want)
            most = want;
        while (k < ch->nobjs) {
            uint64_t take = ch->nobjs - k < most ? ch->nobjs - k : most;
            if (swfi_cas_acq_rel_64(&ch->x_carved, &k, k + take)) {
                /* The last entry is the lowest address: a magazine hands it out first. Each
                 * object's first line is fetched for writing now, while the run is handed out
                 * in the next calls: a single allocation writes there (its first 8 bytes). */
                char *p = ch->base + k * c->stride;
                for (uint32_t i = (uint32_t)take; i-- > 0; p += c->stride) {
                    dst[i] = p;
                    __builtin_prefetch(p, 1);
                }
                return (uint32_t)take;
            }
        }
        /* Carved out for good (x_carved only grows): off the stack, unless another carver took
         * it off first. A chunk is pushed once and popped once: no ABA. */
        struct swfi_chunk *seen = ch;
        (void)swfi_cas_acq_rel_ptr((void **)&c->x_carve, (void **)&seen, ch->carve_next);
        ch = swfi_load_acquire_ptr((void *const *)&c->x_carve);
    }
    return 0;
}

uint64_t swfi_uncarved(struct swf_cache *c)
{
    uint64_t n = 0;
    for (struct swfi_chunk *ch = swfi_load_acquire_ptr((void *const *)&c->x_carve); ch != NULL;
         ch = ch->carve_next)
        n += ch->nobjs - swfi_load_relaxed_64(&ch->x_carved);
    return n;
}

int swfi_map_objects(struct swf_cache *c, size_t want)
{
    /* In steps, so that a failure part-way comes after at most one step's work and leaves the
     * steps before it mapped and ready. */
    size_t step = GROW_STEP_BYTES / c->stride ? GROW_STEP_BYTES / c->stride : 1;
    uint64_t start = swfi_load_relaxed_64(&c->x_capacity);
    for (;;) {
        uint64_t placed = swfi_load_relaxed_64(&c->x_capacity) - start;
        if (placed >= want)
            return 0;
        int err = map_step(c, want - placed < step ? (size_t)(want - placed) : step);
        if (err != 0)
            return err;
    }
}

const char swfi_table_why[] = "n is beyond what the magazine table can still hold";

/* The objects the magazine table can still take: its unmade magazines and those made for
 * objects that no chunk has been promised yet (mag.c's credit). */
static uint64_t table_room(struct swf_cache *c)
{
    uint64_t most = (uint64_t)MAG_BLOCKS_MAX << MAG_BLOCK_SHIFT;
    if (most > SWF_ISTACK_NODES_MAX)
        most = SWF_ISTACK_NODES_MAX;
    uint64_t made = swfi_load_relaxed_32(&c->mags.x_count);
    return (most - made + c->mag_credit) * SWF_CACHE_MAGAZINE;
}

/* The most bytes one process can have: physical memory and swap, and RLIMIT_AS when lower. */
static uint64_t memory_ceiling(void)
{
    struct sysinfo si;
    uint64_t most = UINT64_MAX;
    if (sysinfo(&si) == 0 && si.totalram > 0)
        most = ((uint64_t)si.totalram + si.totalswap) * (si.mem_unit ? si.mem_unit : 1);
    struct rlimit as;
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && as.rlim_cur < most)
        most = as.rlim_cur;
    return most;
}

int swfi_map_check(struct swf_cache *c, size_t want)
{
    uint64_t limit = swfi_load_relaxed_64(&c->x_limit);
    uint64_t capacity = swfi_load_relaxed_64(&c->x_capacity);
    if (limit != 0 && (capacity >= limit || want > limit - capacity)) {
        c->map_why = "n is beyond what the cache's limit allows";
        return ENOMEM;
    }
    uint64_t room = table_room(c);
    if (want > room) {
        c->map_why = swfi_table_why;
        c->map_room = room;
        return ENOMEM;
    }
    /* The objects, and a magazine per SWF_CACHE_MAGAZINE of them. */
    uint64_t bytes = (uint64_t)want * c->stride +
                     (uint64_t)want / SWF_CACHE_MAGAZINE * sizeof(struct swfi_magazine);
    if (bytes / c->stride < want || bytes > memory_ceiling()) {
        c->map_why = "n objects need more memory than the system has (RAM and swap, or RLIMIT_AS)";
        return ENOMEM;
    }
    return 0;
}

void swfi_chunks_free(struct swf_cache *c)
{
    for (struct swfi_chunk *ch = c->chunks, *next; ch != NULL; ch = next) {
        next = ch->next;
        swfi_dmap_remove(ch);
        munmap(ch->base, ch->map_bytes);
        if (ch->state != NULL)
            munmap(ch->state, ch->state_bytes);
        free(ch);
    }
    c->chunks = NULL;
}
