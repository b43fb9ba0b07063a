/*
 * lib/cache/cache_internal.h - what the cache's entry layer shares: its files are the public entry
 * points (cache.c: the alloc and free fast paths, cache_abi.h's body; argument checks and
 * injection, then the front end; grow, flush, limits, statistics, create and destroy), the
 * counters summed (stats.c), the full checks' recount of the conservation equations below
 * (validate.c), frees after an epoch grace period (deferred.c) and failure injection (failslab.c,
 * failslab.h). They stand on two rooms, each with its header, each using only the rooms below it
 * (test/unit/layers.py checks it):
 *
 *   store/  where free objects lie, knowing no mode (store/store.h): magazines and the depot, the
 *           loose list, chunks and carving, the map from address to chunk, the free checks
 *   front/  one front end per mode behind struct swfi_front (front/front.h): the shared slow
 *           halves, the thread states, the per-CPU magazines and their sequences
 *
 * Where a free object can be, and who may touch it there:
 *   1. in a magazine loaded in a thread state (ts->loaded, ts->prev): only the thread bound to
 *      that state touches it, with plain loads and stores;
 *   2. in a magazine on one of the depot's stacks (full: SWF_CACHE_MAGAZINE objects; partial:
 *      fewer): nobody, until a pop (acquire) hands the magazine to one thread;
 *   3. on the loose list (x_loose), linked through its first word: nobody, until an exchange
 *      (acquire) hands the whole list to one thread;
 *   4. in a magazine queued for a deferred free: nobody, until its grace period ends and the
 *      epoch callback puts the magazine on the depot;
 *   5. uncarved, in a chunk that allocations carve from (x_carve's stack, chunk.c): never handed
 *      out yet, so nothing of it was written since the kernel zeroed it (its first word is 0, and
 *      its full checks' state OBJ_FREE); nobody, until a compare-and-swap on the chunk's bump
 *      index (x_carved) hands a run of them to one thread, which puts them straight into its
 *      own empty magazine or hands them out (front/shared.c).
 *   6. per-CPU mode: in a CPU's magazine (owner.head.x_slots): only a thread running on that CPU,
 * in a restartable sequence (base/rseq.h), or a thread that locked the slot (percpu.c). Every move
 * between these places is a release (push, store) paired with an acquire (pop, exchange), so
 * whatever the freeing thread wrote happens-before the next allocation (cache.h's ordering
 * promise); a carved object was written by nobody but the kernel. Magazines and thread states live
 * in tables that grow but never shrink while the cache lives (istack.h), which is what lets a pop
 * read a node another thread may be reusing.
 *
 * Conservation (exact when no thread is inside the cache):
 *     capacity == alive + ready
 *     ready    == sum(ts->loaded->n + ts->prev->n) + sum(CPU magazines' n) + x_depot_objs
 *                 + x_loose_objs + uncarved
 *     alive    == allocations - frees   (objects awaiting a grace period count as alive)
 * where uncarved (swfi_uncarved) is the sum over the chunks on x_carve's stack of nobjs -
 * x_carved. A grow makes a magazine per SWF_CACHE_MAGAZINE objects it maps (mag.c), before
 * it maps them, so that the magazines made for objects could hold every object of every chunk.
 *
 * The blocking paths (WAIT, grow, set_limit, set_failslab, binding a thread on one of them)
 * serialise on refill_lock: mapping memory and growing tables happen there and nowhere else.
 * A cache makes its tables, shared states and spare magazines at its first use on one of them
 * (the front end's first_use), not at create: a cache that is never used costs its struct alone.
 */
#ifndef SWF_LIB_CACHE_INTERNAL_H
#define SWF_LIB_CACHE_INTERNAL_H

#include "cache/front/front.h"

#include "cache/failslab.h"
#include "cache/users.h"

#define WAIT_BATCH_BYTES ((size_t)16 << 20) /* most a WAIT allocation maps at once */

/* Bits of owner.x_slow: why cache.h's inline path must call the library. */
#define SLOW_DEBUG    1u /* full checks: every object's state is tracked */
#define SLOW_FAILSLAB 2u /* failure injection is on */

/* ---- stats.c --------------------------------------------------------------------------------- */

/* Sum the counters into *out: swf_cache_stats without its argument checks. Lock-free. Returns
 * false when the per-CPU magazines kept moving while it read them (swfi_pcpu_counts): a thread
 * is inside the cache. */
bool swfi_cache_stats(struct swf_cache *c, struct swf_cache_stats *out);

/* ---- validate.c ------------------------------------------------------------------------------ */

/* Full checks (c->checks): abort naming fn unless the conservation equations above hold and
 * every free object is where its state byte says. Only where no thread is inside the cache
 * (destroy); O(capacity). */
void swfi_cache_validate(struct swf_cache *c, const char *fn);

#endif /* SWF_LIB_CACHE_INTERNAL_H */
