/*
 * lib/cache/stats.c - the cache's counters summed: what swf_cache_stats reports, and what the
 * full checks' recount (validate.c) holds the walk against.
 *
 * The sum reads counters that other threads may be moving (the thread states', the per-CPU ones,
 * the cache's own), so it is exact only when no thread is inside the cache (the conservation
 * equations in cache_internal.h); the counters of deferred frees are read so that a callback
 * counted done has finished (deferred.c).
 */
#include "cache/cache_internal.h"

bool swfi_cache_stats(struct swf_cache *c, struct swf_cache_stats *out)
{
    struct swf_cache_stats s;
    memset(&s, 0, sizeof(s));
    /* Every free first, every allocation last: an object allocated and freed while the sum runs
     * then counts as alive, never the other way round, so alive is never low for a moment
     * (swf_cache_destroy trusts its 0; percpu.c orders its own part so too). */
    /* Acquire pairs with deferred_done's release: a callback counted here has finished. */
    uint64_t done = swfi_load_acquire_64(&c->x_deferred_done);
    uint32_t nts = swfi_load_acquire_32(&c->tstates.x_count);
    for (uint32_t i = 0; i < nts; i++)
        s.frees += swfi_load_relaxed_64(
            &((struct swfi_tstate *)swfi_itable_node(&c->tstates, i))->pub.x_frees);
    s.frees += swfi_load_relaxed_64(&c->x_frees) + done;
    bool snapshot = c->front->counts(c, &s.allocs_nowait, &s.frees);
    swfi_fence_acquire(); /* the allocations' counters below are read after all of the above */
    for (uint32_t i = 0; i < nts; i++) {
        struct swfi_tstate *ts = swfi_itable_node(&c->tstates, i);
        s.allocs_nowait += swfi_load_relaxed_64(&ts->pub.x_allocs_nowait);
        s.allocs_wait += swfi_load_relaxed_64(&ts->x_allocs_wait);
        s.fails_nowait += swfi_load_relaxed_64(&ts->x_fails_nowait);
    }
    s.allocs_nowait += swfi_load_relaxed_64(&c->x_allocs_nowait);
    s.allocs_wait += swfi_load_relaxed_64(&c->x_allocs_wait);
    s.fails_nowait += swfi_load_relaxed_64(&c->x_fails_nowait);
    s.fails_injected = swfi_load_relaxed_64(&c->x_fails_injected);
    s.fails_wait = swfi_load_relaxed_64(&c->x_fails_wait);
    s.deferred_queued = swfi_load_relaxed_64(&c->x_deferred_queued);
    s.deferred_pending = s.deferred_queued - done;
    s.alive = s.allocs_nowait + s.allocs_wait - s.frees;
    s.capacity = swfi_load_relaxed_64(&c->x_capacity);
    s.ready = s.capacity - s.alive;
    s.limit = swfi_load_relaxed_64(&c->x_limit);
    s.bytes_mapped = swfi_load_relaxed_64(&c->x_bytes_mapped);
    s.huge_bytes = swfi_load_relaxed_64(&c->x_huge_bytes);
    s.chunks = swfi_load_relaxed_64(&c->x_chunks);
    s.object_size = c->object_size;
    s.stride = c->stride;
    s.percpu = c->front->percpu;
    s.huge_choice = swfi_thp_choice();
    *out = s;
    return snapshot;
}
