/*
 * sweepfill/abi/sweep_inline.h - the sweep's implementation, inline so that SWF_SWEEP_DEFINE can
 * specialise it for one list type. Not an API of its own: include sweep.h. Names ending in an
 * underscore are internal and may change.
 *
 * One walker serves the three algorithms. Its state is the cursor (the member it stands on), the
 * reserve (a stack of objects) and the statistics. The only places that leave a section are:
 *   - yield_        after handling a member, when the section bound is reached;
 *   - refill paths  when an object is needed, NOWAIT failed and the reserve is empty.
 * Both pin the cursor first when the list can pin, and check `linked` after re-entering; a lost
 * cursor restarts the walk from the head, which is always correct because a pass is idempotent:
 * filled slots are skipped.
 */
#ifndef SWEEPFILL_SWEEP_INLINE_H
#define SWEEPFILL_SWEEP_INLINE_H

#ifndef SWEEPFILL_SWEEP_H
#error "include <sweepfill/sweep.h>, not sweep_inline.h"
#else

#include <errno.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWF_ALWAYS_INLINE_ __attribute__((always_inline)) inline

/* NOWAIT objects are taken in batches of this many (one swf_cache_alloc_bulk call each), and the
 * batch's leftovers go back at the end. */
#define SWF_SWEEP_BATCH_   32

struct swf_walk_ {
    const struct swf_sweep_config *cfg;
    const struct swf_list_ops *ops;
    struct swf_sweep_stats *st;
    size_t bound; /* visits per section: cfg->section_bound resolved (0: one per pass) */
    void **reserve;
    size_t nres;
    uint64_t section_visits;
    size_t nbatch; /* NOWAIT objects in batch[0 .. nbatch-1] */
    void *batch[SWF_SWEEP_BATCH_];
};

/*
 * One NOWAIT object, from the batch, refilled in bulk when it runs dry: lock-free, no system
 * call, like swf_cache_alloc(SWF_NOWAIT). When the cache asks every call to go through it (debug
 * checks, failure injection: cache.h's x_slow), the batch is one object, so that each member that
 * needs an object makes exactly one NOWAIT call, as the fault-injection counts expect.
 */
static inline void *swf_nowait_(struct swf_walk_ *w, struct swf_cache *cache)
{
    if (w->nbatch == 0) {
        const struct swf_owner_head_ *h = swf_cache_head_of_(cache);
        size_t want = __atomic_load_n(&h->x_slow, __ATOMIC_RELAXED) ? 1 : SWF_SWEEP_BATCH_;
        void *got[SWF_SWEEP_BATCH_];
        for (size_t i = 0; i < want; i++)
            got[i] = SWF_NULL_;
        swf_cache_alloc_bulk(cache, SWF_NOWAIT, got, want);
        for (size_t i = 0; i < want; i++)
            if (got[i] != SWF_NULL_)
                w->batch[w->nbatch++] = got[i];
    }
    return w->nbatch ? w->batch[--w->nbatch] : SWF_NULL_;
}

static SWF_ALWAYS_INLINE_ void swf_enter_(struct swf_walk_ *w)
{
    swf_guard_enter_(&w->cfg->guard); /* a hand-written enter is watched (sweep.h) */
    w->st->sections++;
    w->section_visits = 0;
}

static SWF_ALWAYS_INLINE_ void swf_leave_(struct swf_walk_ *w)
{
    w->cfg->guard.leave(w->cfg->guard.arg);
    if (w->section_visits > w->st->longest_section)
        w->st->longest_section = w->section_visits;
}

/* Fill the reserve up to its size with WAIT allocations. Returns how many it holds. */
static inline size_t swf_reserve_fill_(struct swf_walk_ *w)
{
    while (w->nres < w->cfg->reserve) {
        void *obj = swf_cache_alloc(w->cfg->cache, SWF_WAIT);
        if (obj == SWF_NULL_)
            break;
        w->reserve[w->nres++] = obj;
    }
    return w->nres;
}

static inline void swf_reserve_return_(struct swf_walk_ *w)
{
    while (w->nres > 0)
        swf_cache_free(w->cfg->cache, w->reserve[--w->nres]);
}

/* After a pinned cursor's section was left and a new one entered: whether the cursor is still
 * on the list. If not, it is unpinned and the walk must restart from the head. */
static SWF_ALWAYS_INLINE_ bool swf_cursor_survived_(struct swf_walk_ *w, void *m)
{
    if (w->ops->linked(w->cfg->list.list, m))
        return true;
    w->ops->unpin(w->cfg->list.list, m);
    w->st->restarts++;
    w->st->passes++;
    return false;
}

/* Leave and re-enter the section after handling m; returns the member to visit next. */
static SWF_ALWAYS_INLINE_ void *swf_yield_(struct swf_walk_ *w, void *m)
{
    void *list = w->cfg->list.list;
    w->ops->pin(list, m);
    swf_leave_(w);
    swf_enter_(w);
    if (!swf_cursor_survived_(w, m))
        return w->ops->first(list);
    void *next = w->ops->next(list, m);
    w->ops->unpin(list, m);
    return next;
}

/* What to do when m needs an object and none is to be had inside the section. */
enum swf_dry_ { SWF_DRY_RETRY_, SWF_DRY_RESTART_, SWF_DRY_ENOMEM_ };

static inline enum swf_dry_ swf_run_dry_(struct swf_walk_ *w, void *m, bool resumable)
{
    const struct swf_sweep_config *cfg = w->cfg;
    void *list = cfg->list.list;
    w->st->refills++;
    if (resumable && swf_list_can_pin(w->ops)) {
        /* RESUME: keep the cursor across the refill. */
        w->ops->pin(list, m);
        swf_leave_(w);
        size_t got = swf_reserve_fill_(w);
        swf_enter_(w);
        if (!swf_cursor_survived_(w, m))
            return got ? SWF_DRY_RESTART_ : SWF_DRY_ENOMEM_;
        w->ops->unpin(list, m);
        return got ? SWF_DRY_RETRY_ : SWF_DRY_ENOMEM_;
    }
    if (resumable && (cfg->guard.flags & SWF_GUARD_BLOCKING_OK)) {
        /* The guard allows blocking: refill in place, cursor kept. */
        w->st->inplace_refills++;
        return swf_reserve_fill_(w) ? SWF_DRY_RETRY_ : SWF_DRY_ENOMEM_;
    }
    /* RESTART and BATCH_RESTART (and RESUME on a list that cannot pin): from the head. */
    swf_leave_(w);
    size_t got = swf_reserve_fill_(w);
    swf_enter_(w);
    w->st->restarts++;
    w->st->passes++;
    return got ? SWF_DRY_RESTART_ : SWF_DRY_ENOMEM_;
}

/* What the common path counts, in locals; the statistics are written only on the slow paths
 * and at the end. Every visit is exactly one of: slot already set, object published, object
 * lost to a CAS, or dry (no object: a refill follows), so assigned is derived. */
struct swf_tally_ {
    uint64_t visits, already, fails, drys, lost;
};

static SWF_ALWAYS_INLINE_ void swf_tally_flush_(struct swf_walk_ *w, const struct swf_tally_ *t,
                                                uint64_t section_start)
{
    w->section_visits = t->visits - section_start;
    w->st->visits = t->visits;
    w->st->already_set = t->already;
    w->st->nowait_failures = t->fails;
    w->st->lost_races = t->lost;
    w->st->assigned = t->visits - t->already - t->drys - t->lost;
}

/* The walk, for constant (batch, cas, bounded), so that the common combination (RESUME or
 * RESTART, store publication, no bound) compiles to a loop of its own with no per-member test of
 * the configuration, and the list ops, the cache and init are read once. Section visits are
 * t.visits - section_start. */
static SWF_ALWAYS_INLINE_ int swf_walk_core_(struct swf_walk_ *w, const struct swf_list_ops *ops,
                                             swf_init_fn *init, const size_t slot_offset,
                                             const bool batch, const bool cas, const bool bounded)
{
    const struct swf_sweep_config *cfg = w->cfg;
    void *const list = cfg->list.list;
    const size_t bound = w->bound;
    struct swf_cache *const cache = cfg->cache;
    void *const init_arg = cfg->init_arg;
    const bool resumable = cfg->algo == SWF_RESUME;
    struct swf_sweep_stats *const st = w->st;
    struct swf_tally_ t = {0, 0, 0, 0, 0};
    uint64_t section_start = 0;
    bool exhausted = false; /* BATCH_RESTART: a refill came back empty; walk on without one */

    st->passes = 1;
    swf_enter_(w);
    void *m = ops->first(list);
    while (m != SWF_NULL_) {
        t.visits++;
        /* The old loop stops at the first member it visits once its batch is used up, before
         * looking at it. */
        const bool batch_stop = batch && w->nres == 0 && !exhausted;
        if (!batch_stop) {
            void **slot = swf_slot_of(m, slot_offset);
            if (swf_slot_peek(slot) != SWF_NULL_) {
                t.already++;
                goto advance;
            }
            void *obj = SWF_NULL_;
            bool from_reserve = false;
            if (!batch) {
                obj = w->nbatch ? w->batch[--w->nbatch] : swf_nowait_(w, cache);
                if (__builtin_expect(obj == SWF_NULL_, 0))
                    t.fails++;
            }
            if (obj == SWF_NULL_ && w->nres != 0) {
                st->reserve_uses++;
                from_reserve = true;
                obj = w->reserve[--w->nres];
            }
            if (obj != SWF_NULL_) {
                init(obj, m, init_arg);
                if (!cas) {
                    swf_slot_publish(slot, obj);
                } else if (!swf_slot_publish_cas(slot, obj)) {
                    t.lost++;
                    if (from_reserve)
                        w->reserve[w->nres++] = obj;
                    else
                        swf_cache_free(cache, obj);
                }
                goto advance;
            }
        }
        {
            t.drys++;
            swf_tally_flush_(w, &t, section_start);
            enum swf_dry_ dry = swf_run_dry_(w, m, resumable && !batch);
            section_start = t.visits - w->section_visits;
            if (dry == SWF_DRY_ENOMEM_ && batch_stop) {
                /* No object for the next batch, but none may be needed: walk on (from the
                 * head, as the restart already counted) and fail only at a member that needs
                 * one. */
                exhausted = true;
                m = ops->first(list);
                continue;
            }
            if (dry == SWF_DRY_ENOMEM_) {
                swf_tally_flush_(w, &t, section_start);
                swf_leave_(w);
                return ENOMEM;
            }
            if (dry == SWF_DRY_RESTART_)
                m = ops->first(list);
            continue;
        }
    advance:
        if (bounded && t.visits - section_start >= bound) {
            swf_tally_flush_(w, &t, section_start);
            m = swf_yield_(w, m);
            section_start = t.visits - w->section_visits;
            continue;
        }
        m = ops->next(list, m);
    }
    swf_tally_flush_(w, &t, section_start);
    swf_leave_(w);
    return 0;
}

static SWF_ALWAYS_INLINE_ int swf_walk_select_(struct swf_walk_ *w, const struct swf_list_ops *ops,
                                               swf_init_fn *init, size_t slot_offset)
{
    const struct swf_sweep_config *cfg = w->cfg;
    if (cfg->algo == SWF_RESUME && !swf_list_can_pin(ops) &&
        !(cfg->guard.flags & SWF_GUARD_BLOCKING_OK))
        w->st->fell_back = 1;
    bool batch = cfg->algo == SWF_BATCH_RESTART;
    bool cas = cfg->publish == SWF_PUBLISH_CAS;
    bool bounded = w->bound != 0;
    w->st->unbounded = !bounded;
    if (!batch && !cas && !bounded)
        return swf_walk_core_(w, ops, init, slot_offset, false, false, false);
    return swf_walk_core_(w, ops, init, slot_offset, batch, cas, bounded);
}

/* The sweep proper, for swf_sweep (runtime ops, cfg->list.slot_offset) and SWF_SWEEP_DEFINE
 * (constant ops and slot offset). The config must have passed swf_sweep_validate. */
static SWF_ALWAYS_INLINE_ int swf_sweep_run_(const struct swf_sweep_config *cfg,
                                             const struct swf_list_ops *ops, swf_init_fn *init,
                                             size_t slot_offset, struct swf_sweep_stats *stats)
{
    struct swf_sweep_stats local;
    struct swf_sweep_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof(*st));
    /* A sweep that succeeds leaves swf_error_reason() as it found it (api.h): the NOWAIT
     * misses its reserve made up for are not the caller's failure. */
    const char *const kept_reason = swf_reason_keep_();
    void *small[SWF_SWEEP_RESERVE_DEFAULT * 2];
    void **reserve = small;
    if (cfg->reserve > sizeof(small) / sizeof(small[0])) {
        reserve = SWF_STATIC_CAST_(void **, malloc(cfg->reserve * sizeof(void *)));
        if (reserve == SWF_NULL_)
            return ENOMEM;
    }
    struct swf_walk_ w;
    w.cfg = cfg;
    w.ops = ops;
    w.st = st;
    w.bound = swf_section_bound_of_(cfg->section_bound, ops);
    w.reserve = reserve;
    w.nres = 0;
    w.section_visits = 0;
    w.nbatch = 0;
    /* The initial fill, outside any section, as the patch does. Coming up short is not an error
     * yet: NOWAIT may serve every member. */
    (void)swf_reserve_fill_(&w);
    int err = swf_walk_select_(&w, ops, init, slot_offset);
    swf_reserve_return_(&w);
    swf_cache_free_bulk(cfg->cache, w.batch, w.nbatch);
    if (reserve != small)
        free(reserve);
    if (err == 0)
        swf_reason_restore_(kept_reason);
    return err;
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_SWEEP_H */

#endif /* SWEEPFILL_SWEEP_INLINE_H */
