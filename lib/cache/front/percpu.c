/*
 * lib/cache/front/percpu.c - the per-CPU magazines (the per-CPU mode: base/rseq.h).
 *
 * In the per-CPU mode no thread has magazines of its own: each CPU (each concurrent thread id,
 * mm_cid, where the kernel has it) has one magazine in the cache's slot array, and a NOWAIT
 * allocation or free pops or pushes one object there in a restartable sequence (cache.c's fast
 * paths and cache.h's inline path run them, with the inputs seq.h's swfi_rseq_armed gives the
 * thread; the bulk calls move up to a magazine's worth in one sequence). A preempted
 * thread therefore holds nothing: the kernel aborts its sequence, and the objects stay in the
 * CPU's magazine for whoever runs there next. When the magazine is empty (full), the thread
 * takes a magazine with objects (an empty one) from the depot, or an empty one it carves a
 * magazine's worth of uncarved objects into, and swaps it into the slot, in a
 * sequence that commits only if the slot still holds the magazine it saw; the one it took out
 * goes to the depot. Between that pop and the swap a preempted thread holds one magazine (the
 * only objects a preempted thread can hold). Other CPUs' magazines are reached on the blocking
 * paths only (a WAIT allocation that finds nothing, a grow; flush and destroy need nothing):
 * lock every slot (rseq.h), move what they hold to the depot, unlock. Where the kernel refuses
 * the fence (a seccomp filter installed after the mode was chosen), the drain moves nothing and
 * those objects wait in their magazines for a thread that runs on that CPU.
 */
#include "cache/front/front.h"
#include "cache/front/seq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert(offsetof(struct swf_magazine_, n) == SWFI_RSEQ_MAG_N &&
                   offsetof(struct swf_magazine_, obj) == SWFI_RSEQ_MAG_OBJ &&
                   SWF_CACHE_MAGAZINE <= SWF_RSEQ_N_MASK_,
               "the sequences' view of a magazine");

/* ---- counting: every pop and push is an allocation or a free, counted in the magazine's word ----
 *
 * A sequence adds SWF_RSEQ_POP_STEP_ or SWF_RSEQ_PUSH_STEP_ to the word of the magazine it commits
 * on (rseq_abi.h): the objects moved go up by one, n by minus or plus one. A magazine is armed as
 * it goes into a slot (its word gets 1 + n in bits 6-11), so one load of its word gives n, the n
 * it was armed with (n0) and the objects moved since: moved + (n - n0) = 2 pushes and
 * moved - (n - n0) = 2 pops. It is folded once it has left its slot (or its slot is locked): no
 * sequence can commit on it then, and its counts go to the cache's x_slot_pops and
 * x_slot_pushes.
 *
 * The sum (stats) runs while other threads move magazines, and swf_cache_destroy trusts its
 * alive == 0, so it must tell a snapshot from a sum torn by a move. A magazine swapped out of its
 * slot is, until its fold, in no slot and not yet in the cache's counters: the mover counts
 * itself in x_slot_moving before it takes the new magazine from the depot (a full fence, so that
 * a sum that sees the new magazine in the slot sees the count too) and out once the old one is
 * on the depot (release). The sum reads x_slot_moving and the two counters, then the slots'
 * words, then the three again; equal, with nothing moving, is a snapshot. A drain folds with
 * every slot locked, the magazine still in its slot, so the counters change instead.
 *
 * A fork must not land inside a move: the child would keep the count of a mover it does not have
 * (its every destroy EBUSY), a magazine out of every slot with counts never folded, and another
 * taken from the depot and never put back. The fold is several stores, which the child could not
 * tell apart half done, and the magazine swapped in may already have been swapped out again by
 * another thread; so the fork waits instead: its handler raises x_fork_pending, then waits until
 * x_slot_moving is 0, and a mover that finds x_fork_pending raised after counting itself backs
 * off at once, having taken nothing (the call goes to the depot as when the depot has no
 * magazine for it). Each side stores, fences and then loads the other's word, so one of them
 * sees the other: once the handler read 0, every move counted later backs off, and the child,
 * whose threads are gone, clears the count those leave. A move is bounded and lock-free, so the
 * fork waits for at most the moves in progress when it began. */

static uint64_t armed_word(uint64_t n)
{
    return n | ((n + 1) << SWF_RSEQ_N_BITS_);
}

/* The pops and pushes a magazine's word counted since it was armed (none when it is not). */
static void moves_of(uint64_t word, uint64_t *pops, uint64_t *pushes)
{
    uint64_t n0 = (word >> SWF_RSEQ_N_BITS_) & SWF_RSEQ_N_MASK_;
    uint64_t n = word & SWF_RSEQ_N_MASK_, moved = word >> SWF_RSEQ_MOVED_SHIFT_;
    if (n0 == 0) { /* not armed: its counts, if any, were folded */
        *pops = *pushes = 0;
        return;
    }
    n0 -= 1;
    *pushes = (moved + n - n0) / 2;
    *pops = (moved + n0 - n) / 2;
}

/* m (out of reach of every sequence: it left its slot, or its slot is locked) gives its counts
 * to the cache and is disarmed (its word back to n) or armed anew. */
static void fold(struct swf_cache *c, struct swfi_magazine *m, bool rearm)
{
    uint64_t pops, pushes, n = m->pub.n & SWF_RSEQ_N_MASK_;
    moves_of(m->pub.n, &pops, &pushes);
    swfi_fetch_add_relaxed_64(&c->x_slot_pops, pops);
    swfi_fetch_add_relaxed_64(&c->x_slot_pushes, pushes);
    swfi_store_release_64(&m->pub.n, rearm ? armed_word(n) : n);
}

static void arm(struct swfi_magazine *m)
{
    m->pub.n = armed_word(m->pub.n); /* not yet in a slot: no reader counts it */
}

struct slot_counts {
    uint32_t moving;
    uint64_t pops, pushes;
};

static struct slot_counts folded(struct swf_cache *c)
{
    return (struct slot_counts){swfi_load_acquire_32(&c->x_slot_moving),
                                swfi_load_acquire_64(&c->x_slot_pops),
                                swfi_load_acquire_64(&c->x_slot_pushes)};
}

bool swfi_pcpu_counts(struct swf_cache *c, uint64_t *allocs, uint64_t *frees)
{
    uintptr_t *slots = swfi_load_acquire_ptr((void *const *)&c->owner.head.x_slots);
    uint64_t pops = 0, pushes = 0;
    bool snapshot = false;
    for (int tries = 0; tries < 4 && !snapshot; tries++) {
        struct slot_counts before = folded(c);
        pops = before.pops, pushes = before.pushes;
        for (uint32_t i = 0; slots != NULL && i < c->owner.head.nslots; i++) {
            uintptr_t seen = (uintptr_t)swfi_load_acquire_ptr((void *const *)&slots[i]);
            const struct swfi_magazine *m =
                (const struct swfi_magazine *)(seen & ~SWFI_RSEQ_LOCKED);
            uint64_t p = 0, q = 0;
            if (m != NULL)
                moves_of(swfi_load_acquire_64(&m->pub.n), &p, &q);
            pops += p;
            pushes += q;
        }
        swfi_fence_acquire(); /* the second reading follows every load of the first */
        struct slot_counts after = folded(c);
        snapshot = before.moving == 0 && after.moving == 0 && before.pops == after.pops &&
                   before.pushes == after.pushes;
    }
    *allocs += pops;
    *frees += pushes;
    return snapshot;
}

/* ---- the slots ------------------------------------------------------------------------------ */

int swfi_pcpu_init(struct swf_cache *c)
{
    if (swfi_load_acquire_ptr((void *const *)&c->owner.head.x_slots) != NULL)
        return 0;
    uint32_t n = c->owner.head.nslots;
    uintptr_t *slots = calloc(n, sizeof(*slots));
    if (slots == NULL)
        return ENOMEM;
    swfi_mags_reserve(c, n + SPARE_EMPTY_MAGS);
    for (uint32_t i = 0; i < n; i++) {
        struct swfi_magazine *m = swfi_depot_get_empty(c);
        if (m == NULL) {    /* all or none */
            while (i > 0) { /* disarmed: back to n alone */
                struct swfi_magazine *back = (struct swfi_magazine *)slots[--i];
                back->pub.n &= SWF_RSEQ_N_MASK_;
                swfi_depot_put(c, back);
            }
            free(slots);
            return ENOMEM;
        }
        arm(m);
        slots[i] = (uintptr_t)m;
    }
    /* Release: a NOWAIT call that acquires the array sees its magazines. */
    swfi_store_release_ptr((void **)&c->owner.head.x_slots, slots);
    return 0;
}

void swfi_pcpu_fini(struct swf_cache *c)
{
    free(c->owner.head.x_slots);
    c->owner.head.x_slots = NULL;
}

static uintptr_t *slots_of(struct swf_cache *c)
{
    return swfi_load_acquire_ptr((void *const *)&c->owner.head.x_slots);
}

/* Swap `fresh` into this CPU's slot if it still holds what the thread saw there; the magazine it
 * replaced goes to the depot, its counts folded. false (fresh back on the depot) when the slot
 * changed, is locked, or the thread moved meanwhile. */
static bool install(struct swf_cache *c, uintptr_t *slots, struct swfi_magazine *fresh,
                    uintptr_t seen)
{
    arm(fresh);
    if (!(seen & SWFI_RSEQ_LOCKED) && seen != 0 &&
        swfi_rseq_swap(slots, c->owner.head.nslots, seen, (uintptr_t)fresh)) {
        /* No sequence can commit on it now: only a thread on this CPU could have seen it in the
         * slot, and any that was inside a sequence was aborted when this one ran. */
        fold(c, (struct swfi_magazine *)seen, false);
        swfi_depot_put(c, (struct swfi_magazine *)seen);
        return true;
    }
    fresh->pub.n &= SWF_RSEQ_N_MASK_; /* disarmed: it never went in */
    swfi_depot_put(c, fresh);
    return false;
}

/* A move of this CPU's magazine begins (the caller takes the new one from the depot next, and
 * installs it): counted, unless a fork is pending (then false, nothing counted). */
static bool move_begin(struct swf_cache *c)
{
    swfi_fetch_add_relaxed_32(&c->x_slot_moving, 1);
    /* Counted before the swap's store can be seen (the sum, above), and before the load of
     * x_fork_pending: pairs with the fence of swfi_pcpu_fork_prepare (above). */
    swfi_fence_seq_cst();
    if (SWF_LIKELY(swfi_load_relaxed_32(&c->x_fork_pending) == 0))
        return true;
    swfi_fetch_sub_acq_rel_32(&c->x_slot_moving, 1);
    return false;
}

/* It ended: the old magazine (or the new one, not installed) is on the depot, folded. Release:
 * the sum, and a fork's wait, that read the count without it see the fold. */
static void move_end(struct swf_cache *c)
{
    swfi_fetch_sub_acq_rel_32(&c->x_slot_moving, 1);
}

void swfi_pcpu_fork_prepare(struct swf_cache *c)
{
    swfi_store_relaxed_32(&c->x_fork_pending, 1);
    swfi_fence_seq_cst(); /* pairs with move_begin's */
    /* Acquire: pairs with move_end's release; sleep, not spin, as swfi_shared_claim does. */
    while (swfi_load_acquire_32(&c->x_slot_moving) != 0)
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000}, NULL);
}

void swfi_pcpu_fork_done(struct swf_cache *c, bool child)
{
    if (child) /* only movers that backed off (above), in threads the child does not have */
        swfi_store_relaxed_32(&c->x_slot_moving, 0);
    swfi_store_relaxed_32(&c->x_fork_pending, 0);
}

/* An empty magazine from the depot with up to a magazine's worth of uncarved objects carved into
 * it (the policy's order: the depot's objects first, then uncarved ones); NULL when either is
 * lacking. */
static struct swfi_magazine *carved(struct swf_cache *c)
{
    struct swfi_magazine *m = swfi_depot_get_empty(c);
    if (m != NULL && (m->pub.n = swfi_carve(c, m->pub.obj, SWF_CACHE_MAGAZINE)) == 0) {
        swfi_depot_put(c, m);
        m = NULL;
    }
    return m;
}

/* Whether the common case (cache.h's, the same body in swf_cache_alloc and swf_cache_free)
 * already ran its sequence on this call and found the magazine empty (full): it did when the
 * caller came from it (after_fast), x_slow let it run, and the thread had its inputs before this
 * call armed it. Otherwise the slow half runs it first, once. */
static bool fast_ran(struct swf_cache *c, bool after_fast, bool armed_before)
{
    return after_fast && armed_before && swfi_load_relaxed_32(&c->owner.head.x_slow) == 0;
}

void *swfi_pcpu_take(struct swf_cache *c, bool after_fast)
{
    uintptr_t *slots = slots_of(c);
    uint32_t nslots = c->owner.head.nslots;
    bool armed_before = swf_thread_self_.rseq != NULL;
    void *obj;
    if (slots == NULL || !swfi_rseq_armed())
        return NULL;
    if (!fast_ran(c, after_fast, armed_before) &&
        swf_cache_pop_(slots, &c->owner.head.nslots, &obj, SWFI_ABORTS))
        return obj;
    /* Empty (or locked): one refill, a depot magazine with objects in this CPU's slot, then one
     * pop. A thread that moved meanwhile takes from the depot directly (the caller). */
    uintptr_t seen = swfi_rseq_peek(slots, nslots);
    if (seen & SWFI_RSEQ_LOCKED || !move_begin(c))
        return NULL;
    struct swfi_magazine *full = swfi_depot_get_objects(c);
    if (full == NULL && (full = carved(c)) == NULL) {
        move_end(c);
        return NULL;
    }
    bool in = install(c, slots, full, seen);
    move_end(c);
    return in && swf_cache_pop_(slots, &c->owner.head.nslots, &obj, SWFI_ABORTS) ? obj : NULL;
}

bool swfi_pcpu_put(struct swf_cache *c, void *obj, bool after_fast)
{
    uintptr_t *slots = slots_of(c);
    uint32_t nslots = c->owner.head.nslots;
    bool armed_before = swf_thread_self_.rseq != NULL;
    if (slots == NULL || !swfi_rseq_armed())
        return false;
    if (!fast_ran(c, after_fast, armed_before) &&
        swf_cache_push_(slots, &c->owner.head.nslots, obj, SWF_CACHE_MAGAZINE, SWFI_ABORTS))
        return true;
    /* Full (or locked): one refill, an empty depot magazine in this CPU's slot, then one push. */
    uintptr_t seen = swfi_rseq_peek(slots, nslots);
    if (seen & SWFI_RSEQ_LOCKED || !move_begin(c))
        return false;
    struct swfi_magazine *empty = swfi_depot_get_empty(c);
    bool in = empty != NULL && install(c, slots, empty, seen);
    move_end(c);
    return in &&
           swf_cache_push_(slots, &c->owner.head.nslots, obj, SWF_CACHE_MAGAZINE, SWFI_ABORTS);
}

uint32_t swfi_pcpu_take_many(struct swf_cache *c, void **buf, uint32_t k)
{
    uintptr_t *slots = slots_of(c);
    return slots != NULL && swfi_rseq_armed()
               ? swfi_rseq_pop_many(slots, c->owner.head.nslots, buf, k)
               : 0;
}

uint32_t swfi_pcpu_put_many(struct swf_cache *c, void *const *buf, uint32_t k)
{
    uintptr_t *slots = slots_of(c);
    return slots != NULL && swfi_rseq_armed()
               ? swfi_rseq_push_many(slots, c->owner.head.nslots, buf, k, SWF_CACHE_MAGAZINE)
               : 0;
}

void swfi_pcpu_flush(struct swf_cache *c)
{
    uintptr_t *slots = slots_of(c);
    uintptr_t seen =
        slots && swfi_rseq_armed() ? swfi_rseq_peek(slots, c->owner.head.nslots) : SWFI_RSEQ_LOCKED;
    if (seen & SWFI_RSEQ_LOCKED ||
        (swfi_load_relaxed_64(&((struct swfi_magazine *)seen)->pub.n) & SWF_RSEQ_N_MASK_) == 0)
        return;
    if (!move_begin(c))
        return;
    struct swfi_magazine *empty = swfi_depot_get_empty(c);
    if (empty != NULL)
        (void)install(c, slots, empty, seen);
    move_end(c);
}

uint64_t swfi_pcpu_validate(struct swf_cache *c, const char *fn)
{
    uint64_t objs = 0;
    for (uint32_t i = 0; c->owner.head.x_slots != NULL && i < c->owner.head.nslots; i++) {
        struct swfi_magazine *m =
            (struct swfi_magazine *)(c->owner.head.x_slots[i] & ~SWFI_RSEQ_LOCKED);
        if (m != NULL) {
            fold(c, m, true); /* no thread is inside the cache: the word holds n and n0 alone */
            uint64_t armed = m->pub.n;
            m->pub.n &= SWF_RSEQ_N_MASK_;
            swfi_mag_validate(c, m, fn);
            objs += m->pub.n;
            m->pub.n = armed;
        }
    }
    return objs;
}

bool swfi_pcpu_holds(struct swf_cache *c, const void *obj)
{
    uintptr_t *slots = slots_of(c);
    return slots != NULL && swfi_rseq_armed() && swfi_rseq_find(slots, c->owner.head.nslots, obj);
}

uint64_t swfi_pcpu_drain(struct swf_cache *c, const char **refused)
{
    uintptr_t *slots = slots_of(c);
    if (slots == NULL)
        return 0;
    uint32_t n = c->owner.head.nslots;
    swfi_mags_reserve(c, n + SPARE_EMPTY_MAGS);
    if (!swfi_rseq_lock_slots(slots, n)) { /* a sequence may still commit into any of them */
        *refused = "no more objects could be mapped, and those in other CPUs' magazines are "
                   "out of reach (the kernel refused membarrier's rseq fence)";
        return 0;
    }
    uint64_t moved = 0;
    for (uint32_t i = 0; i < n; i++) {
        uintptr_t word = (uintptr_t)swfi_load_acquire_ptr((void *const *)&slots[i]);
        struct swfi_magazine *m = (struct swfi_magazine *)(word & ~SWFI_RSEQ_LOCKED);
        struct swfi_magazine *e =
            m != NULL && (m->pub.n & SWF_RSEQ_N_MASK_) > 0 ? swfi_depot_get_empty(c) : NULL;
        if (e != NULL) { /* locked: no sequence commits on m */
            fold(c, m, false);
            moved += m->pub.n;
            swfi_depot_put(c, m);
            arm(e);
            m = e;
        }
        /* Release: the next sequence on that CPU sees the magazine as we leave it. */
        swfi_store_release_ptr((void **)&slots[i], m);
    }
    return moved;
}
