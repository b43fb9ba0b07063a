/*
 * lib/cache/validate.c - the cache's invariants, checked where they must hold, with the full
 * checks on (SWF_DEBUG=checks, swf_cache_config.checks, debug-check builds).
 *
 * swfi_cache_validate recounts, by walking, what the counters claim (the equations at the top of
 * cache_internal.h): the objects in the thread states' magazines, on the depot's stacks and on
 * the loose list; then it holds them against capacity - alive (alive from the operation
 * counters), and against the per-object state bytes, which the full checks keep independently:
 * every object in a ready place is FREE, FREE objects number exactly ready, DEFERRED ones exactly
 * the pending deferred frees. Any difference is a bug in the library (or memory corrupted by
 * its user), reported with both numbers. The walk reads stacks and lists with no thread inside
 * the cache, so it runs in destroy only, after the exiting threads have handed back their
 * magazines; swfi_mag_validate (mag.c) checks one magazine, which its caller holds, at every move
 * to the depot. In a child of fork (c->forked) the parent's other threads may have held objects
 * and left counts half-moved at the fork, in no place the walk sees: there the walk may find
 * fewer than the counters say, never more, and its depot and loose counts replace the counters'.
 */
#include "cache/cache_internal.h"

#include <inttypes.h>

struct tally {
    uint64_t objs;       /* found in ready places */
    uint64_t state_free; /* state bytes: FREE, ALLOC, DEFERRED */
    uint64_t state_alloc;
    uint64_t state_deferred;
};

static void expect(struct swf_cache *c, const char *fn, const char *what, uint64_t seen,
                   uint64_t want)
{
    if (seen != want)
        swfi_die(fn, "cache '%s' is inconsistent: %s: %" PRIu64 ", expected %" PRIu64, c->name,
                 what, seen, want);
}

/* In a child of fork, what the parent's other threads had in hand is missing from the walk
 * (swf_cache_create(3), "fork"): `seen` may fall short of `want` there, never exceed it. */
static void expect_forked(struct swf_cache *c, const char *fn, const char *what, uint64_t seen,
                          uint64_t want)
{
    if (c->forked && seen < want)
        return;
    expect(c, fn, what, seen, want);
}

/* A depot or loose count that a lost thread of the parent left half-moved (between its
 * compare-and-swap and its count): the child's walk is the truth, and becomes the count. */
static void expect_count(struct swf_cache *c, const char *fn, const char *what, uint64_t seen,
                         uint64_t *count)
{
    if (c->forked)
        swfi_store_relaxed_64(count, seen);
    expect(c, fn, what, seen, swfi_load_relaxed_64(count));
}

/* The objects on a stack of the depot, and how many magazines it holds. */
static uint64_t stack_objs(struct swf_cache *c, const struct swfi_istack *s, uint64_t *mags,
                           const char *fn)
{
    uint64_t objs = 0;
    *mags = 0;
    for (uint32_t top = (uint32_t)(swfi_load_relaxed_64(&s->x_head) & SWF_ISTACK_INDEX_MASK);
         top != 0; top = swfi_mag_at(c, top - 1)->pub.x_link_) {
        const struct swfi_magazine *m = swfi_mag_at(c, top - 1);
        swfi_mag_validate(c, m, fn);
        objs += m->pub.n;
        if (++*mags > c->mags.x_count)
            swfi_die(fn, "cache '%s' is inconsistent: a depot stack has a cycle", c->name);
    }
    return objs;
}

static uint64_t loose_objs(struct swf_cache *c, const char *fn)
{
    uint64_t objs = 0;
    for (void *o = swfi_load_relaxed_ptr(&c->x_loose); o != NULL; o = swfi_loose_next(o)) {
        swfi_obj_validate(c, fn, o, "the loose list");
        if (++objs > c->x_capacity)
            swfi_die(fn, "cache '%s' is inconsistent: the loose list has a cycle", c->name);
    }
    return objs;
}

/* The uncarved objects of every chunk: on the carve stack exactly the chunks that have some, each
 * uncarved object untouched since the kernel zeroed it (first word 0). */
static uint64_t uncarved_objs(struct swf_cache *c, const char *fn)
{
    uint64_t all = 0;
    for (const struct swfi_chunk *ch = c->chunks; ch != NULL; ch = ch->next)
        for (uint64_t i = ch->x_carved; i < ch->nobjs; i++) {
            uint64_t word;
            memcpy(&word, ch->base + i * c->stride, sizeof(word));
            if (word != 0)
                swfi_die(fn, "cache '%s' is inconsistent: uncarved object %p was written", c->name,
                         (void *)(ch->base + i * c->stride));
            all++;
        }
    expect(c, fn, "uncarved objects (all chunks against the carve stack's)", all, swfi_uncarved(c));
    return all;
}

static void count_states(const struct swf_cache *c, struct tally *t)
{
    for (const struct swfi_chunk *ch = c->chunks; ch != NULL; ch = ch->next)
        for (size_t i = 0; i < ch->nobjs; i++) {
            t->state_free += ch->state[i] == OBJ_FREE || ch->state[i] == OBJ_POISONED;
            t->state_alloc += ch->state[i] == OBJ_ALLOC;
            t->state_deferred += ch->state[i] == OBJ_DEFERRED;
        }
}

void swfi_cache_validate(struct swf_cache *c, const char *fn)
{
    if (!c->checks)
        return;
    struct swf_cache_stats s;
    swfi_cache_stats(c, &s);
    struct tally t = {0};
    uint64_t full_mags, partial_mags, empty_mags;
    uint64_t depot = stack_objs(c, &c->full, &full_mags, fn);
    depot += stack_objs(c, &c->partial, &partial_mags, fn);
    expect(c, fn, "objects on the depot's empty stack", stack_objs(c, &c->empty, &empty_mags, fn),
           0);
    expect_count(c, fn, "objects on the depot (walked against x_depot_objs)", depot,
                 &c->x_depot_objs);
    expect_count(c, fn, "empty magazines (walked against x_empty_mags)", empty_mags,
                 &c->x_empty_mags);
    uint64_t loose = loose_objs(c, fn);
    expect_count(c, fn, "loose objects (walked against x_loose_objs)", loose, &c->x_loose_objs);
    t.objs = c->front->validate(c, fn) + depot + loose + uncarved_objs(c, fn);
    expect_forked(c, fn,
                  "ready objects (magazines + depot + loose + uncarved against capacity - alive)",
                  t.objs, s.capacity - s.alive);
    count_states(c, &t);
    /* In a child of fork, an object a lost call had taken and not yet counted (or moved out of
     * ALLOC and not yet counted freed) is FREE in no ready place, or ALLOC no longer counted. */
    expect_forked(c, fn, "objects in state FREE (against ready)", t.objs, t.state_free);
    expect_forked(c, fn, "objects in state DEFERRED (against deferred frees pending)",
                  t.state_deferred, s.deferred_pending);
    expect_forked(c, fn, "objects in state ALLOC (against alive - deferred pending)", t.state_alloc,
                  s.alive - s.deferred_pending);
}
