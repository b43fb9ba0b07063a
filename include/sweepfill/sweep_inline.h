/*
 * sweepfill/sweep_inline.h - the sweep's implementation, inline so that SWF_SWEEP_DEFINE can
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
#endif

#include <errno.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SWF_ALWAYS_INLINE_ __attribute__((always_inline)) inline

struct swf_walk_ {
    const struct swf_sweep_config *cfg;
    const struct swf_list_ops *ops;
    struct swf_sweep_stats *st;
    void **reserve;
    size_t nres;
    uint64_t section_visits;
};

static SWF_ALWAYS_INLINE_ void swf_enter_(struct swf_walk_ *w)
{
    w->cfg->guard.enter(w->cfg->guard.arg);
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
        if (obj == NULL)
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

static SWF_ALWAYS_INLINE_ void *swf_advance_(struct swf_walk_ *w, void *m)
{
    if (w->cfg->section_bound != 0 && w->section_visits >= w->cfg->section_bound)
        return swf_yield_(w, m);
    return w->ops->next(w->cfg->list.list, m);
}

/* An object for an empty slot: NOWAIT first (not for BATCH_RESTART), then the reserve. */
static SWF_ALWAYS_INLINE_ void *swf_take_(struct swf_walk_ *w, bool *from_reserve)
{
    if (w->cfg->algo != SWF_BATCH_RESTART) {
        void *obj = swf_cache_alloc(w->cfg->cache, SWF_NOWAIT);
        if (obj != NULL) {
            *from_reserve = false;
            return obj;
        }
        w->st->nowait_failures++;
    }
    if (w->nres == 0)
        return NULL;
    w->st->reserve_uses++;
    *from_reserve = true;
    return w->reserve[--w->nres];
}

/* Initialise and publish obj in m's slot. False if a CAS lost to another assigner; obj then
 * goes back where it came from. */
static SWF_ALWAYS_INLINE_ bool swf_publish_(struct swf_walk_ *w, void **slot, void *obj, void *m,
                                            swf_init_fn *init, bool from_reserve)
{
    init(obj, m, w->cfg->init_arg);
    if (w->cfg->publish == SWF_PUBLISH_STORE) {
        swf_slot_publish(slot, obj); /* release: init happens-before a reader's acquire */
        return true;
    }
    if (swf_slot_publish_cas(slot, obj))
        return true;
    w->st->lost_races++;
    if (from_reserve)
        w->reserve[w->nres++] = obj;
    else
        swf_cache_free(w->cfg->cache, obj); /* lock-free: legal inside the section */
    return false;
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

static SWF_ALWAYS_INLINE_ int swf_walk_(struct swf_walk_ *w, swf_init_fn *init)
{
    const struct swf_sweep_config *cfg = w->cfg;
    void *list = cfg->list.list;
    bool resumable = cfg->algo == SWF_RESUME;
    bool batch = cfg->algo == SWF_BATCH_RESTART;
    if (resumable && !swf_list_can_pin(w->ops) && !(cfg->guard.flags & SWF_GUARD_BLOCKING_OK))
        w->st->fell_back = 1;

    w->st->passes = 1;
    swf_enter_(w);
    void *m = w->ops->first(list);
    while (m != NULL) {
        w->st->visits++;
        w->section_visits++;
        enum swf_dry_ dry = SWF_DRY_RETRY_;
        if (batch && w->nres == 0) {
            /* The old loop checks its batch before looking at the member. */
            dry = swf_run_dry_(w, m, false);
        } else {
            void **slot = swf_slot_of(m, cfg->list.slot_offset);
            if (swf_slot_peek(slot) != NULL) {
                w->st->already_set++;
                m = swf_advance_(w, m);
                continue;
            }
            bool from_reserve;
            void *obj = swf_take_(w, &from_reserve);
            if (obj != NULL) {
                if (swf_publish_(w, slot, obj, m, init, from_reserve))
                    w->st->assigned++;
                m = swf_advance_(w, m);
                continue;
            }
            dry = swf_run_dry_(w, m, resumable);
        }
        if (dry == SWF_DRY_ENOMEM_) {
            swf_leave_(w);
            return ENOMEM;
        }
        if (dry == SWF_DRY_RESTART_)
            m = w->ops->first(list);
        /* SWF_DRY_RETRY_: visit m again (counted), now with a full reserve. */
    }
    swf_leave_(w);
    return 0;
}

/* The sweep proper, for swf_sweep (runtime ops) and SWF_SWEEP_DEFINE (constant ops). The config
 * must have passed swf_sweep_validate. */
static SWF_ALWAYS_INLINE_ int swf_sweep_run_(const struct swf_sweep_config *cfg,
                                             const struct swf_list_ops *ops, swf_init_fn *init,
                                             struct swf_sweep_stats *stats)
{
    struct swf_sweep_stats local;
    struct swf_sweep_stats *st = stats ? stats : &local;
    memset(st, 0, sizeof(*st));
    void *small[SWF_SWEEP_RESERVE_DEFAULT * 2];
    void **reserve = small;
    if (cfg->reserve > sizeof(small) / sizeof(small[0])) {
        reserve = (void **)malloc(cfg->reserve * sizeof(void *));
        if (reserve == NULL)
            return ENOMEM;
    }
    struct swf_walk_ w = {cfg, ops, st, reserve, 0, 0};
    /* The initial fill, outside any section, as the patch does. Coming up short is not an error
     * yet: NOWAIT may serve every member. */
    (void)swf_reserve_fill_(&w);
    int err = swf_walk_(&w, init);
    swf_reserve_return_(&w);
    if (reserve != small)
        free(reserve);
    return err;
}

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_SWEEP_INLINE_H */
