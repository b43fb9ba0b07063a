/*
 * lib/cache/chunk.c - mapping and preparing memory for objects.
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
 * A chunk's objects go on the depot in magazines that are taken before the chunk is mapped:
 * when the magazine table is full, the chunk is made smaller (or not mapped at all) rather than
 * mapped and left unusable.
 */
#include "cache/cache_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older headers lack the name */
#endif

#define HUGE_PAGE        ((size_t)2 << 20)
#define HUGE_MIN_BYTES   ((size_t)8 << 20)  /* AUTO: chunks this large get huge pages */
#define PARALLEL_MIN     ((size_t)16 << 20) /* grow_threads: split only larger chunks */
#define GROW_STEP_BYTES  ((size_t)64 << 20) /* swfi_map_objects maps at most this at once */
#define THP_ENABLED_PATH "/sys/kernel/mm/transparent_hugepage/enabled"

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

/* AnonHugePages (bytes) of the mappings that overlap [base, base + bytes), from smaps. */
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

char *swfi_map_prepared(size_t bytes, size_t align, const struct swf_prep *how, int *err)
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
    uint64_t huge_before = how->huge_bytes ? anon_huge_bytes(base, bytes) : 0;
    /* Here, outside any read-side section, so that NOWAIT never faults. */
    *err = populate_parallel(base, bytes, how->threads);
    if (*err == 0 && how->lock && mlock(base, bytes) != 0)
        *err = errno == EPERM ? EPERM : ENOMEM;
    if (*err == 0 && how->huge_bytes) {
        uint64_t after = anon_huge_bytes(base, bytes);
        uint64_t got = after > huge_before ? after - huge_before : 0;
        *how->huge_bytes = got < bytes ? got : bytes;
    }
    if (*err != 0) {
        munmap(base, bytes);
        return NULL;
    }
    return base;
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

/* Map a chunk for up to `nobjs` objects, with its full checks' states, and enter it in the
 * process-wide map; NULL and *err on failure. */
static struct swf_chunk *chunk_map(struct swf_cache *c, size_t nobjs, int *err)
{
    size_t bytes;
    *err = ENOMEM;
    if (swfi_mul_overflows(nobjs, c->stride, &bytes) || !swfi_round_up(bytes, CHUNK_ALIGN, &bytes))
        return NULL;
    struct swf_chunk *ch = calloc(1, sizeof(*ch));
    if (ch == NULL)
        return NULL;
    bool huge = c->huge_pages == SWF_HUGE_PAGES_REQUIRED ||
                (c->huge_pages == SWF_HUGE_PAGES_AUTO &&
                 (c->stride >= 4096 || bytes >= HUGE_MIN_BYTES) && swfi_thp_available());
    if (huge && !swfi_round_up(bytes, HUGE_PAGE, &bytes)) {
        free(ch);
        return NULL;
    }
    struct swf_prep how = {.lock = c->lock_memory,
                           .huge = huge,
                           .no_huge = c->huge_pages == SWF_HUGE_PAGES_OFF,
                           .threads = c->grow_threads,
                           .huge_bytes = huge ? &ch->huge_bytes : NULL};
    ch->base = swfi_map_prepared(bytes, CHUNK_ALIGN, &how, err);
    if (ch->base != NULL && c->huge_pages == SWF_HUGE_PAGES_REQUIRED && ch->huge_bytes == 0) {
        munmap(ch->base, bytes); /* huge pages were required and the kernel gave none */
        ch->base = NULL;
        *err = ENOMEM;
        c->map_why = "huge pages are required and the kernel gave none";
    }
    if (ch->base == NULL) {
        free(ch);
        return NULL;
    }
    ch->map_bytes = bytes;
    ch->nobjs = nobjs;
    ch->cache = c;
    if (c->checks) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        ch->state_bytes = (nobjs + page - 1) & ~(page - 1);
        struct swf_prep small = {.lock = c->lock_memory, .threads = 1};
        ch->state = (uint8_t *)swfi_map_prepared(ch->state_bytes, page, &small, err);
    }
    /* Every free looks its pointer up in the process-wide map (freecheck.c). */
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

/* One step of swfi_map_objects: one chunk of up to `want` objects. */
static int map_step(struct swf_cache *c, size_t want)
{
    size_t allowed = allowed_by_limit(c, want);
    c->map_why = "the cache's limit is reached";
    if (allowed == 0)
        return ENOMEM;
    /* Whole CHUNK_ALIGN units: the rounding slack holds objects too, within the limit. */
    size_t bytes;
    if (!swfi_mul_overflows(allowed, c->stride, &bytes) &&
        swfi_round_up(bytes, CHUNK_ALIGN, &bytes))
        allowed = allowed_by_limit(c, bytes / c->stride);

    struct swf_mag *mags;
    size_t nmags = swfi_mags_take_chain(c, (allowed + MAG_CAP - 1) / MAG_CAP, true, &mags);
    bool short_of_mags = nmags * MAG_CAP < allowed;
    if (short_of_mags)
        allowed = nmags * MAG_CAP; /* the magazine table is full: map only what it can hold */
    int err = ENOMEM;
    struct swf_chunk *ch = allowed ? chunk_map(c, allowed, &err) : NULL;
    if (ch == NULL) {
        swfi_mags_put_chain(c, mags);
        c->map_why = allowed == 0     ? "the magazine table is full (4M magazines)"
                     : err == EPERM   ? "mlock was refused (lock_memory)"
                     : c->lock_memory ? "the system refused memory, or mlock did"
                                      : "the system refused memory";
        return err;
    }
    ch->next = c->chunks;
    c->chunks = ch;
    swfi_store_relaxed_64(&c->x_chunks, swfi_load_relaxed_64(&c->x_chunks) + 1);
    swfi_store_relaxed_64(&c->x_bytes_mapped,
                          swfi_load_relaxed_64(&c->x_bytes_mapped) + ch->map_bytes);
    swfi_store_relaxed_64(&c->x_huge_bytes,
                          swfi_load_relaxed_64(&c->x_huge_bytes) + ch->huge_bytes);

    size_t placed = 0;
    for (struct swf_mag *m = mags, *next; m != NULL; m = next) {
        next = swfi_mags_chain_next(c, m);
        while (m->pub.n < MAG_CAP && placed < ch->nobjs)
            m->pub.obj[m->pub.n++] = ch->base + placed++ * c->stride;
        swfi_store_relaxed_64(&c->x_capacity, swfi_load_relaxed_64(&c->x_capacity) + m->pub.n);
        swfi_depot_put(c, m);
    }
    if (short_of_mags)
        c->map_why = "the magazine table is full (4M magazines)";
    return placed >= want ? 0 : ENOMEM;
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

/* The objects the magazine table can still take: its unmade magazines and its empty ones. */
static uint64_t table_room(struct swf_cache *c)
{
    uint64_t most = (uint64_t)MAG_BLOCKS_MAX << MAG_BLOCK_SHIFT;
    if (most > SWF_ISTACK_NODES_MAX)
        most = SWF_ISTACK_NODES_MAX;
    uint64_t made = swfi_load_relaxed_32(&c->mags.x_count);
    return (most - made + swfi_load_relaxed_64(&c->x_empty_mags)) * MAG_CAP;
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
    if (want > table_room(c)) {
        c->map_why = "n is beyond what the magazine table can still hold";
        return ENOMEM;
    }
    /* The objects, and a magazine per MAG_CAP of them. */
    uint64_t bytes = (uint64_t)want * c->stride + (uint64_t)want / MAG_CAP * sizeof(struct swf_mag);
    if (bytes / c->stride < want || bytes > memory_ceiling()) {
        c->map_why = "n objects need more memory than the system has (RAM and swap, or RLIMIT_AS)";
        return ENOMEM;
    }
    return 0;
}

void swfi_chunks_free(struct swf_cache *c)
{
    for (struct swf_chunk *ch = c->chunks, *next; ch != NULL; ch = next) {
        next = ch->next;
        swfi_dmap_remove(ch);
        munmap(ch->base, ch->map_bytes);
        if (ch->state != NULL)
            munmap(ch->state, ch->state_bytes);
        free(ch);
    }
    c->chunks = NULL;
}
