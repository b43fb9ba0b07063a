/*
 * lib/dmap.c - the debug-check build's map from an address to the chunk that holds it, and the
 * per-object states (free, allocated, queued for a deferred free) that catch double frees and
 * foreign pointers.
 *
 * Two levels over 64 KiB granules (chunks are aligned to CHUNK_ALIGN, one granule): the first
 * indexed by address bits 32-47, the second by bits 16-31. Entries are published with a release
 * store after the chunk is filled in; lookups acquire. The pages a lock-free path writes (the
 * state bytes) are prepared when the chunk is mapped (chunk.c); the map itself is only read there,
 * in entries that dmap_insert wrote.
 */
#include "cache_internal.h"

#include <errno.h>
#include <stdlib.h>

#define DMAP_L2_BITS 16 /* 64 KiB granules, 4 GiB per second-level table */
#define DMAP_L1_SIZE ((size_t)1 << 16)

int swf_dmap_init(struct swf_cache *c)
{
    if (!SWF_DEBUG)
        return 0;
    c->dmap = calloc(DMAP_L1_SIZE, sizeof(*c->dmap));
    return c->dmap ? 0 : ENOMEM;
}

void swf_dmap_fini(struct swf_cache *c)
{
    if (c->dmap == NULL)
        return;
    for (size_t i = 0; i < DMAP_L1_SIZE; i++)
        free(c->dmap[i]);
    free(c->dmap);
    c->dmap = NULL;
}

static struct swf_chunk *lookup(struct swf_cache *c, const void *p)
{
    uintptr_t a = (uintptr_t)p;
    size_t l1 = a >> 32;
    if (l1 >= DMAP_L1_SIZE)
        return NULL;
    struct swf_chunk **l2 = swf_load_acquire_ptr((void *const *)&c->dmap[l1]);
    if (l2 == NULL)
        return NULL;
    /* Acquire pairs with swf_dmap_insert's release: the chunk's fields are initialised. */
    return swf_load_acquire_ptr((void *const *)&l2[(a >> DMAP_L2_BITS) & 0xffff]);
}

int swf_dmap_insert(struct swf_cache *c, struct swf_chunk *ch)
{
    for (uintptr_t a = (uintptr_t)ch->base; a < (uintptr_t)ch->base + ch->map_bytes;
         a += CHUNK_ALIGN) {
        struct swf_chunk **l2 = c->dmap[a >> 32];
        if (l2 == NULL) {
            l2 = calloc((size_t)1 << DMAP_L2_BITS, sizeof(*l2));
            if (l2 == NULL)
                return ENOMEM;
            swf_store_release_ptr((void **)&c->dmap[a >> 32], l2);
        }
        swf_store_release_ptr((void **)&l2[(a >> DMAP_L2_BITS) & 0xffff], ch);
    }
    return 0;
}

/* The state byte of obj, or NULL when obj is not an object of c. */
static uint8_t *obj_state(struct swf_cache *c, const void *obj)
{
    struct swf_chunk *ch = lookup(c, obj);
    if (ch == NULL || (const char *)obj < ch->base)
        return NULL;
    size_t off = (size_t)((const char *)obj - ch->base);
    if (off % c->stride != 0 || off / c->stride >= ch->nobjs)
        return NULL;
    return &ch->state[off / c->stride];
}

void swf_debug_transition_slow(struct swf_cache *c, const char *fn, void *obj, uint8_t from,
                               uint8_t to)
{
    uint8_t *st = obj_state(c, obj);
    if (st == NULL)
        swf_die(fn, "%p was not allocated from cache '%s'", obj, c->name);
    uint8_t seen = from;
    if (swf_cas_relaxed_8(st, &seen, to))
        return;
    if (seen == OBJ_FREE)
        swf_die(fn, "double free of %p (cache '%s')", obj, c->name);
    if (seen == OBJ_DEFERRED)
        swf_die(fn, "%p is already queued for a deferred free (cache '%s')", obj, c->name);
    swf_die(fn, "internal error: object %p of cache '%s' in state %u, expected %u", obj, c->name,
            seen, from);
}
