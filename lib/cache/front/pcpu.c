/*
 * lib/cache/front/pcpu.c - the per-CPU front end (swfi_front_pcpu): this CPU's magazine, in a
 * restartable sequence (percpu.c, seq.h), else the depot as a thread with no state (shared.c);
 * the other CPUs' magazines on the blocking paths only (swfi_pcpu_drain). A thread binds for its
 * counters and the free check's chunk alone (tstate.c's states, with no magazines).
 */
#include "cache/front/front.h"

struct swfi_tstate *swfi_tstate_bind_bare(struct swf_cache *c)
{
    /* As the per-thread front's bind: the table made to reach every owner alive now. */
    int err = swfi_tls_prepare(&c->owner);
    if (swfi_tls_get(&c->owner) != NULL || err != 0 ||
        (swfi_istack_empty(&c->ts_free) && swfi_tstates_make(c) != 0))
        return NULL;
    struct swfi_tstate *ts = swfi_tstate_pop(c);
    if (ts != NULL) { /* counters and the free check's chunk only: no magazines */
        swfi_ts_set(ts, NULL, NULL);
        swfi_tls_bind(&c->owner, ts);
    }
    return NULL; /* the per-CPU calls need no state: the caller gets none */
}

/* -- per-CPU: this CPU's magazine (its pops and pushes count themselves, percpu.c), else the
 * depot as a thread with no state; the other CPUs' magazines on the blocking paths only. */

static void *pcpu_alloc(struct swf_cache *c)
{
    void *obj = swfi_pcpu_take(c, true);
    if (obj != NULL)
        return obj;
    if ((obj = swfi_take_one_unbound(c)) != NULL)
        swfi_count_alloc(c, NULL, SWF_NOWAIT);
    else
        swfi_count_fail(c, NULL);
    return obj;
}

static void *pcpu_take_locked(struct swf_cache *c, struct swfi_tstate *ts)
{
    (void)ts; /* a state of the per-CPU mode holds no magazine */
    void *obj = swfi_pcpu_take(c, false);
    if (obj != NULL) {
        /* The CPU's magazine counted it as a NOWAIT allocation: take that back, after the WAIT
         * count (release: a sum that sees this sees that, percpu.c). */
        swfi_count_alloc(c, NULL, SWF_WAIT);
        swfi_fetch_add_release_64(&c->x_slot_pops, UINT64_MAX);
        return obj;
    }
    if ((obj = swfi_take_one_unbound(c)) != NULL)
        swfi_count_alloc(c, NULL, SWF_WAIT);
    return obj;
}

static uint64_t pcpu_reclaim(struct swf_cache *c, const char **refused)
{
    return swfi_pcpu_drain(c, refused);
}

static void pcpu_free(struct swf_cache *c, void *obj)
{
    bool ok = swfi_free_ok(c, obj); /* the common case's test: it pushed only when it held */
    if (!ok)
        swfi_free_check(c, NULL, "swf_cache_free", obj);
    swfi_debug_free(c, "swf_cache_free", obj, OBJ_ALLOC); /* the poison */
    swfi_mark_free(c, obj); /* before the object goes where another thread can take it */
    if (!swfi_pcpu_put(c, obj, ok)) {
        swfi_put_unbound(c, &obj, 1);
        swfi_fetch_add_relaxed_64(&c->x_frees, 1);
    }
}

static size_t pcpu_alloc_bulk(struct swf_cache *c, void **objs, size_t n, size_t nulls)
{
    size_t popped = 0; /* counted by this CPU's magazine */
    size_t given = swfi_take_bulk_unbound(c, objs, n, nulls, swfi_pcpu_take_many, &popped);
    swfi_fetch_add_relaxed_64(&c->x_allocs_nowait, given - popped);
    swfi_fetch_add_relaxed_64(&c->x_fails_nowait, nulls - given);
    return given;
}

static void pcpu_free_bulk(struct swf_cache *c, void *const *objs, size_t n)
{
    swfi_put_bulk_unbound(c, objs, n, swfi_pcpu_put_many);
}

static bool pcpu_holds(struct swf_cache *c, const struct swfi_tstate *ts, const void *obj)
{
    (void)ts; /* a state of the per-CPU mode holds no magazine */
    return swfi_pcpu_holds(c, obj);
}

const struct swfi_front swfi_front_pcpu = {
    .alloc = pcpu_alloc,
    .take_locked = pcpu_take_locked,
    .reclaim = pcpu_reclaim,
    .free = pcpu_free,
    .alloc_bulk = pcpu_alloc_bulk,
    .free_bulk = pcpu_free_bulk,
    .flush = swfi_pcpu_flush,
    .first_use = swfi_pcpu_init,
    .bind = swfi_tstate_bind_bare,
    .holds = pcpu_holds,
    .counts = swfi_pcpu_counts,
    .validate = swfi_pcpu_validate,
    .fini = swfi_pcpu_fini,
    .fork_prepare = swfi_pcpu_fork_prepare,
    .fork_done = swfi_pcpu_fork_done,
    .needs_state = false,
    .percpu = true,
};
