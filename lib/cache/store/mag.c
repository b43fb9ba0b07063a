/*
 * lib/cache/store/mag.c - making magazines, private chains of empty ones, and a magazine's own
 * check.
 *
 * Magazines are made only on the blocking paths (refill_lock held), as many as are needed at that
 * moment, in whole table blocks of 8 (4,224 bytes), up to 64 blocks an allocation, and live until
 * the cache is destroyed; new ones go on the depot's empty stack. The blocking paths' spreading
 * of the loose list (loose.c) makes them when it finds no empty one.
 *
 * A grow makes magazines for the objects it maps, before it maps them, so that every ready object
 * has room in one: a magazine per SWF_CACHE_MAGAZINE objects of every chunk, counted in
 * mag_credit (made for objects, not yet promised to a chunk's) so that a block of 8 serves several
 * small chunks and none is counted twice. The objects themselves stay uncarved in their chunk
 * until allocations carve them (chunk.c), so these magazines wait empty on the depot for the
 * frees. A chunk of small objects on huge pages holds its own blocks, which the table adopts.
 *
 * Every move of a magazine to the depot checks it (swfi_depot_put, with the full checks on): at
 * most SWF_CACHE_MAGAZINE objects, each one of the cache's, free by its state byte (chunkmap.c),
 * and with its poison whole when it has some (freecheck.c).
 */
#include "cache/store/store.h"

#include <errno.h>

#define MAG_BLOCK       (1u << MAG_BLOCK_SHIFT)
#define MAKE_BLOCKS_MAX 64u /* one allocation makes at most 512 magazines (264 KiB) */

/* Table blocks for `want` magazines: at most MAKE_BLOCKS_MAX, fewer when the table has room for
 * fewer, at least one. */
static uint32_t blocks_for(struct swf_cache *c, uint32_t want)
{
    uint32_t blocks = want / MAG_BLOCK + (want % MAG_BLOCK != 0);
    if (blocks > MAKE_BLOCKS_MAX)
        blocks = MAKE_BLOCKS_MAX;
    uint32_t room = MAG_BLOCKS_MAX - (swfi_load_relaxed_32(&c->mags.x_count) >> MAG_BLOCK_SHIFT);
    if (blocks > room)
        blocks = room;
    return blocks ? blocks : 1;
}

uint32_t swfi_mags_make(struct swf_cache *c, uint32_t want)
{
    uint32_t blocks = blocks_for(c, want);
    uint32_t first = swfi_itable_grow(&c->mags, blocks);
    if (first == UINT32_MAX)
        return 0;
    uint32_t count = blocks << MAG_BLOCK_SHIFT;
    for (uint32_t i = first; i < first + count; i++) {
        struct swfi_magazine *m = swfi_mag_at(c, i);
        m->index = i;
        m->cache = c;
        swfi_depot_put(c, m);
    }
    return count;
}

void swfi_mags_adopt(struct swf_cache *c, void *mem, uint32_t count)
{
    struct swfi_magazine *m = mem; /* blocks of zeroed, prepared nodes, one after another */
    uint32_t first = UINT32_MAX;
    for (uint32_t b = 0; b < count >> MAG_BLOCK_SHIFT; b++) {
        uint32_t i = swfi_itable_adopt(&c->mags, m + ((size_t)b << MAG_BLOCK_SHIFT));
        if (first == UINT32_MAX)
            first = i; /* the table grows only here and under refill_lock: indices follow on */
    }
    /* One private chain, pushed in one compare-and-swap: the last link is the push's. */
    for (uint32_t k = 0; k < count; k++) {
        m[k].index = first + k;
        m[k].cache = c;
        swfi_store_relaxed_32(&m[k].pub.x_link_, first + k + 2); /* the next one's index + 1 */
    }
    c->mag_credit += count;
    swfi_fetch_add_relaxed_64(&c->x_empty_mags, count);
    swfi_istack_push_chain(&c->empty, &c->mags, first, first + count - 1);
}

size_t swfi_mags_cover(struct swf_cache *c, size_t n)
{
    uint64_t need = (n + SWF_CACHE_MAGAZINE - 1) / SWF_CACHE_MAGAZINE;
    uint32_t made = 1;
    while (c->mag_credit < need && made != 0) {
        uint64_t lack = need - c->mag_credit;
        made = swfi_mags_make(c, lack < UINT32_MAX ? (uint32_t)lack : UINT32_MAX);
        c->mag_credit += made;
    }
    return c->mag_credit >= need ? n : (size_t)c->mag_credit * SWF_CACHE_MAGAZINE;
}

void swfi_mags_promise(struct swf_cache *c, size_t n)
{
    uint64_t need = (n + SWF_CACHE_MAGAZINE - 1) / SWF_CACHE_MAGAZINE;
    c->mag_credit -= need < c->mag_credit ? need : c->mag_credit;
}

void swfi_mags_reserve(struct swf_cache *c, uint64_t n)
{
    uint64_t have;
    while ((have = swfi_load_relaxed_64(&c->x_empty_mags)) < n &&
           swfi_mags_make(c, (uint32_t)(n - have)) != 0)
        ;
}

struct swfi_magazine *swfi_mags_chain_next(struct swf_cache *c, struct swfi_magazine *m)
{
    uint32_t link = swfi_load_relaxed_32(&m->pub.x_link_);
    return link ? swfi_mag_at(c, link - 1) : NULL;
}

void swfi_mags_put_chain(struct swf_cache *c, struct swfi_magazine *head)
{
    while (head != NULL) {
        struct swfi_magazine *next = swfi_mags_chain_next(c, head);
        swfi_depot_put(c, head);
        head = next;
    }
}

size_t swfi_mags_take_chain(struct swf_cache *c, size_t count, bool locked,
                            struct swfi_magazine **head)
{
    *head = NULL;
    size_t taken = 0;
    while (taken < count) {
        struct swfi_magazine *m = swfi_depot_get_empty(c);
        if (m == NULL) {
            if (!locked)
                pthread_mutex_lock(&c->refill_lock);
            uint32_t made = swfi_mags_make(c, (uint32_t)(count - taken));
            if (!locked)
                pthread_mutex_unlock(&c->refill_lock);
            if (made == 0)
                break;
            continue;
        }
        swfi_store_relaxed_32(&m->pub.x_link_, *head ? (*head)->index + 1 : 0);
        *head = m;
        taken++;
    }
    return taken;
}

/* ---- a magazine's own check (the full checks), and a freed object's poison (freecheck.c) ----- */

void swfi_obj_validate(struct swf_cache *c, const char *fn, const void *obj, const char *where)
{
    const uint8_t *st = swfi_obj_state(c, obj);
    if (st == NULL)
        swfi_die(fn, "cache '%s' is inconsistent: %p in %s is not one of its objects", c->name, obj,
                 where);
    if (*st != OBJ_FREE && *st != OBJ_POISONED)
        swfi_die(fn, "cache '%s' is inconsistent: %p in %s is in state %u, not free", c->name, obj,
                 where, *st);
    if (*st == OBJ_POISONED)
        swfi_poison_check(c, obj);
}

void swfi_poison_check(struct swf_cache *c, const void *obj)
{
    const uint64_t poison = 0x0101010101010101ull * POISON_BYTE;
    const unsigned char *p = obj;
    uint64_t diff = 0;
    for (size_t i = 8; i < c->stride; i += 8) { /* no early exit: the compiler vectorises it */
        uint64_t word;
        memcpy(&word, p + i, sizeof(word));
        diff |= word ^ poison;
    }
    if (SWF_LIKELY(diff == 0))
        return;
    size_t at = 8;
    while (p[at] == POISON_BYTE) /* the first byte that differs */
        at++;
    swfi_die("swf_cache_free",
             "cache '%s': object %p was written after it was freed (byte %zu changed, 0x%02x to "
             "0x%02x): something used it after swf_cache_free; watch that byte to find the write",
             c->name, obj, at, POISON_BYTE, p[at]);
}

void swfi_mag_validate(struct swf_cache *c, const struct swfi_magazine *m, const char *fn)
{
    if (m->pub.n > SWF_CACHE_MAGAZINE)
        swfi_die(fn, "cache '%s' is inconsistent: a magazine holds %llu objects (at most %u)",
                 c->name, (unsigned long long)m->pub.n, SWF_CACHE_MAGAZINE);
    for (uint32_t i = 0; c->checks && i < m->pub.n; i++) /* state bytes: the full checks' */
        swfi_obj_validate(c, fn, m->pub.obj[i], "a magazine");
}
