/*
 * lib/cache/store/freecheck.c - the checks every free makes, in every build, and the full checks'
 * object states.
 *
 * What every free checks (swfi_owner_check): the chunk holding obj (chunkmap.c's map) belongs to
 * the cache it is freed into, and obj is the start of one of its objects - which rules out a
 * pointer from malloc, one into the middle of an object, and another cache's object, whatever its
 * size. Each thread remembers the last chunk it checked and its cache (binding.h: chunk_owner,
 * chunk_base, chunk_nobjs; no state for the cache needed), so the common free does only cache.h's
 * test: a subtraction, a multiplication by the inverse of the stride's odd
 * part, a rotation and a compare, exact for any stride (n is a multiple of d = d' 2^k, d' odd, if
 * and only if rotr(n * inverse(d'), k) <= (2^64 - 1) / d, which is then n / d).
 *
 * The free mark (glibc's tcache key): each cache has a random key, never 0 (cache.h's head). A
 * single free - after the owner check, before the object goes anywhere another thread can take
 * it - writes key ^ obj into the object's first word, which every stride holds and which the
 * cache owns while the object is free; a single allocation writes 0 there. A free that finds
 * the mark already there looks for the object in the magazines of the thread state it frees
 * into (at most 2 x 60 entries) and aborts if it is there: the common double free, of an object
 * still in the freeing thread's magazines. A mark without a match is not an error: a live object
 * whose user stored that value there (a 2^-64 chance for a program that does not read the key),
 * one handed out by a bulk allocation (which does not clear the mark), or a free object that
 * has left these magazines (for the depot or another thread's: that double free is the full
 * checks' to catch): a scan, never an abort. The loose list links through the same word, so an
 * object on it has lost its mark.
 * Bulk frees check the owner only and write no mark (they do not touch the objects).
 *
 * Full checks (cfg->checks, SWF_DEBUG=checks, a debug-check build): one state byte per object,
 * prepared with its chunk, moved by a compare-and-swap on every allocation and free: a double
 * free wherever the object is, a free of an object queued for a deferred free. And the poison,
 * as slub_debug and mimalloc's debug mode have it: a single free, and a deferred free once its
 * grace period is over, fill the object's bytes from 8 to the stride with POISON_BYTE (the first
 * 8 are the free mark's, and the loose list's link) and set its state to OBJ_POISONED; its next
 * allocation, every move of a magazine that holds it to the depot, and destroy's walk check that
 * the poison is whole (mag.c), so a write through a pointer kept after the free aborts, naming
 * swf_cache_free. Every call takes the library's path while the full checks are on (x_slow), so
 * the inline path knows nothing of it. A bulk free does not touch the objects: it leaves them
 * OBJ_FREE, unpoisoned, and so does carving.
 */
#include "cache/store/store.h"

#include <sys/random.h>
#include <time.h>

/* The cache's free mark key: the kernel's random generator when it answers at once, else the
 * clock; mixed with the cache's address, so that two caches never share a key by construction.
 * It guards against mistakes (a value no program stores by chance), not against a program that
 * reads free objects. */
static uint64_t fresh_key(const struct swf_cache *c)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        r = swfi_mix64((uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 32));
    }
    uint64_t key = swfi_mix64(r ^ swfi_mix64((uintptr_t)c));
    return key != 0 ? key : 0x9e3779b97f4a7c15ull;
}

void swfi_free_check_init(struct swf_cache *c)
{
    c->owner.head.key = fresh_key(c);
    uint32_t shift = (uint32_t)__builtin_ctzll(c->stride);
    uint64_t odd = c->stride >> shift, inv = odd; /* correct to 3 bits: odd * odd = 1 mod 8 */
    for (int i = 0; i < 5; i++)                   /* Newton: 6, 12, 24, 48, 96 bits */
        inv *= 2 - odd * inv;
    c->owner.head.inv = inv;
    c->owner.head.shift = shift;
}

static __attribute__((noreturn)) void not_ours(struct swf_cache *c, const char *fn,
                                               const struct swfi_chunk *ch, void *obj)
{
    if (ch == NULL)
        swfi_die(fn, "%p was not allocated from cache '%s' (no cache holds it)", obj, c->name);
    if (ch->cache != c)
        swfi_die(fn,
                 "%p was not allocated from cache '%s' (it belongs to cache '%s', of %zu-byte "
                 "objects)",
                 obj, c->name, ch->cache->name, ch->cache->object_size);
    swfi_die(fn, "%p was not allocated from cache '%s' (it points inside an object)", obj, c->name);
}

void swfi_owner_check(struct swf_cache *c, const char *fn, const void *obj)
{
    struct swfi_chunk *ch = swfi_dmap_lookup(obj);
    if (ch == NULL || ch->cache != c || swfi_obj_index(c, ch, obj) == ch->nobjs)
        not_ours(c, fn, ch, (void *)obj);
    if (!c->checks) { /* full checks: every free must reach them, none goes fast */
        struct swf_thread_ *t = &swf_thread_self_;
        t->chunk_owner = c->owner.head.id;
        t->chunk_base = (uintptr_t)ch->base;
        t->chunk_nobjs = ch->nobjs;
    }
}

void swfi_debug_transition_slow(struct swf_cache *c, const char *fn, void *obj, uint8_t from,
                                uint8_t to)
{
    uint8_t *st = swfi_obj_state(c, obj);
    if (st == NULL)
        not_ours(c, fn, swfi_dmap_lookup(obj), obj);
    uint8_t seen = from;
    if (swfi_cas_relaxed_8(st, &seen, to))
        return;
    if (from == OBJ_FREE && seen == OBJ_POISONED) { /* an allocation of a poisoned object */
        swfi_poison_check(c, obj);
        if (swfi_cas_relaxed_8(st, &seen, to))
            return;
    }
    if (seen == OBJ_FREE || seen == OBJ_POISONED)
        swfi_die(fn, "double free of %p (cache '%s')", obj, c->name);
    if (seen == OBJ_DEFERRED)
        swfi_die(fn, "%p is already queued for a deferred free (cache '%s')", obj, c->name);
    swfi_die(fn, "internal error: object %p of cache '%s' in state %u, expected %u", obj, c->name,
             seen, from);
}

void swfi_debug_free_slow(struct swf_cache *c, const char *fn, void *obj, uint8_t from)
{
    swfi_debug_transition_slow(c, fn, obj, from, OBJ_POISONED);
    /* Ours alone now (a second free of it aborts at the state byte), and no other thread can take
     * it until the caller puts it where they can, which orders this too. */
    memset((char *)obj + 8, POISON_BYTE, c->stride - 8);
}
