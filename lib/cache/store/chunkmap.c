/*
 * lib/cache/store/chunkmap.c - the process-wide map from an address to the chunk that holds it, and
 * what it answers: an object's index in its chunk and its full checks' state byte.
 *
 * The map is kept by chunk.c as chunks are mapped and unmapped: two levels over 64 KiB granules
 * (chunks are aligned to CHUNK_ALIGN, one granule, and no two chunks share one), the first a
 * static array indexed by address bits 32-47 (512 KiB of untouched, hence unbacked, BSS), the
 * second tables of 4 GiB made on demand by the blocking path that maps a chunk and never freed.
 * Entries are published with a release store after the chunk is filled in; lookups acquire. A
 * lookup is two dependent loads and no lock, so a free checks its pointer in O(1) whatever the
 * number of caches (freecheck.c). It knows nothing of the cache's other files: the full checks'
 * magazine check (mag.c) asks it, and every file above that.
 */
#include "cache/store/store.h"

#include <errno.h>
#include <stdlib.h>

#define DMAP_GRANULE_BITS 16                /* 64 KiB: CHUNK_ALIGN */
#define DMAP_L2_BITS      16                /* address bits 16-31 */
#define DMAP_L1_SIZE      ((size_t)1 << 16) /* address bits 32-47 */

_Static_assert(((size_t)1 << DMAP_GRANULE_BITS) == CHUNK_ALIGN, "a granule is a chunk's unit");

static struct swfi_chunk **dmap[DMAP_L1_SIZE];

struct swfi_chunk *swfi_dmap_lookup(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if ((a >> 32) >= DMAP_L1_SIZE)
        return NULL;
    struct swfi_chunk **l2 = swfi_load_acquire_ptr((void *const *)&dmap[a >> 32]);
    if (l2 == NULL)
        return NULL;
    /* Acquire pairs with swfi_dmap_insert's release: the chunk's fields are initialised. */
    return swfi_load_acquire_ptr(
        (void *const *)&l2[(a >> DMAP_GRANULE_BITS) & (((size_t)1 << DMAP_L2_BITS) - 1)]);
}

/* The second-level table for address a, made if need be; NULL when out of memory or range. */
static struct swfi_chunk **l2_for(uintptr_t a)
{
    if ((a >> 32) >= DMAP_L1_SIZE)
        return NULL;
    void **slot = (void **)&dmap[a >> 32];
    struct swfi_chunk **l2 = swfi_load_acquire_ptr(slot);
    if (l2 != NULL)
        return l2;
    l2 = calloc((size_t)1 << DMAP_L2_BITS, sizeof(*l2));
    if (l2 == NULL)
        return NULL;
    void *seen = NULL;
    if (swfi_cas_acq_rel_ptr(slot, &seen, l2))
        return l2;
    free(l2); /* another cache's grow made it first */
    return seen;
}

static void set_granules(const struct swfi_chunk *ch, struct swfi_chunk *value)
{
    for (uintptr_t a = (uintptr_t)ch->base; a < (uintptr_t)ch->base + ch->map_bytes;
         a += CHUNK_ALIGN) {
        struct swfi_chunk **l2 = swfi_load_acquire_ptr((void *const *)&dmap[a >> 32]);
        swfi_store_release_ptr(
            (void **)&l2[(a >> DMAP_GRANULE_BITS) & (((size_t)1 << DMAP_L2_BITS) - 1)], value);
    }
}

int swfi_dmap_insert(struct swfi_chunk *ch)
{
    uintptr_t end = (uintptr_t)ch->base + ch->map_bytes;
    for (uintptr_t a = (uintptr_t)ch->base; a < end; a += (uintptr_t)1 << 32)
        if (l2_for(a) == NULL)
            return ENOMEM;
    if (l2_for(end - 1) == NULL)
        return ENOMEM;
    set_granules(ch, ch);
    return 0;
}

void swfi_dmap_remove(const struct swfi_chunk *ch)
{
    set_granules(ch, NULL);
}

uint8_t *swfi_obj_state(struct swf_cache *c, const void *obj)
{
    struct swfi_chunk *ch = swfi_dmap_lookup(obj);
    if (ch == NULL || ch->cache != c || ch->state == NULL)
        return NULL;
    size_t i = swfi_obj_index(c, ch, obj);
    return i < ch->nobjs ? &ch->state[i] : NULL;
}
