/*
 * lib/chunk.c - mapping and preparing memory for objects.
 *
 * Memory enters a cache in chunks mapped on a blocking path and prepared there: every page is
 * written once (and locked, with lock_memory), so that no lock-free path ever takes a page
 * fault on it while it stays resident. The same goes for every other byte a lock-free path may
 * write: magazine and thread-state blocks (istack.c), the debug states (here), binding tables
 * (thread.c).
 *
 * A chunk's objects go on the depot in magazines that are taken before the chunk is mapped:
 * when the magazine table is full, the chunk is made smaller (or not mapped at all) rather than
 * mapped and left unusable.
 */
#include "cache_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void swf_prefault(void *p, size_t len)
{
    /* Every 4 KiB: the smallest page size of the systems we run on, so every page is hit. */
    volatile char *b = p;
    for (size_t off = 0; off < len; off += 4096)
        b[off] = b[off];
    if (len > 0)
        b[len - 1] = b[len - 1];
}

char *swf_map_prepared(size_t bytes, size_t align, unsigned int lock, int *err)
{
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
    /* First touch here, outside any read-side section, so that NOWAIT never faults. A write
     * (not a read, which would only map the shared zero page). */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < bytes; off += page)
        ((volatile char *)base)[off] = 0;
    if (lock && mlock(base, bytes) != 0) {
        *err = errno == EPERM ? EPERM : ENOMEM;
        munmap(base, bytes);
        return NULL;
    }
    return base;
}

/* Objects the limit still allows, at most want. */
static size_t allowed_by_limit(struct swf_cache *c, size_t want)
{
    uint64_t capacity = swf_load_relaxed_64(&c->x_capacity);
    uint64_t limit = swf_load_relaxed_64(&c->x_limit);
    if (limit == 0)
        return want;
    if (capacity >= limit)
        return 0;
    return limit - capacity < want ? (size_t)(limit - capacity) : want;
}

/* Map a chunk for up to `nobjs` objects, with its debug states; NULL and *err on failure. */
static struct swf_chunk *chunk_map(struct swf_cache *c, size_t nobjs, int *err)
{
    size_t bytes;
    *err = ENOMEM;
    if (swf_mul_overflows(nobjs, c->stride, &bytes) || !swf_round_up(bytes, CHUNK_ALIGN, &bytes))
        return NULL;
    struct swf_chunk *ch = calloc(1, sizeof(*ch));
    if (ch == NULL)
        return NULL;
    ch->base = swf_map_prepared(bytes, CHUNK_ALIGN, c->lock_memory, err);
    if (ch->base == NULL) {
        free(ch);
        return NULL;
    }
    ch->map_bytes = bytes;
    ch->nobjs = nobjs;
    if (SWF_DEBUG) {
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        ch->state_bytes = (nobjs + page - 1) & ~(page - 1);
        ch->state = (uint8_t *)swf_map_prepared(ch->state_bytes, page, c->lock_memory, err);
        if (ch->state == NULL || swf_dmap_insert(c, ch) != 0) {
            if (ch->state != NULL)
                munmap(ch->state, ch->state_bytes);
            munmap(ch->base, ch->map_bytes);
            free(ch);
            *err = ENOMEM;
            return NULL;
        }
    }
    return ch;
}

int swf_map_objects(struct swf_cache *c, size_t want)
{
    size_t allowed = allowed_by_limit(c, want);
    c->map_why = "the cache's limit is reached";
    if (allowed == 0)
        return ENOMEM;
    /* Whole CHUNK_ALIGN units: the rounding slack holds objects too, within the limit. */
    size_t bytes;
    if (!swf_mul_overflows(allowed, c->stride, &bytes) && swf_round_up(bytes, CHUNK_ALIGN, &bytes))
        allowed = allowed_by_limit(c, bytes / c->stride);

    struct swf_mag *mags;
    size_t nmags = swf_mags_take_chain(c, (allowed + MAG_CAP - 1) / MAG_CAP, true, &mags);
    bool short_of_mags = nmags * MAG_CAP < allowed;
    if (short_of_mags)
        allowed = nmags * MAG_CAP; /* the magazine table is full: map only what it can hold */
    int err = ENOMEM;
    struct swf_chunk *ch = allowed ? chunk_map(c, allowed, &err) : NULL;
    if (ch == NULL) {
        swf_mags_put_chain(c, mags);
        c->map_why = allowed == 0     ? "the magazine table is full (4M magazines)"
                     : err == EPERM   ? "mlock was refused (lock_memory)"
                     : c->lock_memory ? "the system refused memory, or mlock did"
                                      : "the system refused memory";
        return err;
    }
    ch->next = c->chunks;
    c->chunks = ch;
    swf_store_relaxed_64(&c->x_chunks, swf_load_relaxed_64(&c->x_chunks) + 1);
    swf_store_relaxed_64(&c->x_bytes_mapped,
                         swf_load_relaxed_64(&c->x_bytes_mapped) + ch->map_bytes);

    size_t placed = 0;
    for (struct swf_mag *m = mags, *next; m != NULL; m = next) {
        next = swf_mags_chain_next(c, m);
        while (m->n < MAG_CAP && placed < ch->nobjs)
            m->obj[m->n++] = ch->base + placed++ * c->stride;
        swf_store_relaxed_64(&c->x_capacity, swf_load_relaxed_64(&c->x_capacity) + m->n);
        swf_depot_put(c, m);
    }
    if (short_of_mags)
        c->map_why = "the magazine table is full (4M magazines)";
    return placed >= want ? 0 : ENOMEM;
}

void swf_chunks_free(struct swf_cache *c)
{
    for (struct swf_chunk *ch = c->chunks, *next; ch != NULL; ch = next) {
        next = ch->next;
        munmap(ch->base, ch->map_bytes);
        if (ch->state != NULL)
            munmap(ch->state, ch->state_bytes);
        free(ch);
    }
    c->chunks = NULL;
}
