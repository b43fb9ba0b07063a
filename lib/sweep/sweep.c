/*
 * lib/sweep/sweep.c - swf_sweep over a runtime list ops table, its validation, the ready-made
 * guards and the array adapter. The algorithm itself is in include/sweepfill/sweep_inline.h, shared
 * with the sweeps SWF_SWEEP_DEFINE generates.
 */
#include "sweepfill/sweep.h"

#include <ck_epoch.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#include "base/atomic.h"
#include "base/epoch.h"
#include "base/tsan.h"
#include "base/util.h"

int swf_sweep_validate(const struct swf_sweep_config *cfg, const struct swf_list_ops *ops)
{
    SWF_CHECK_ARG(cfg == NULL, EINVAL, "cfg is NULL");
    SWF_CHECK_ARG(ops == NULL, EINVAL, "cfg->list.ops is NULL");
    SWF_CHECK_ARG(ops->first == NULL, EINVAL, "list ops: first is NULL");
    SWF_CHECK_ARG(ops->next == NULL, EINVAL, "list ops: next is NULL");
    bool some_pin = ops->pin != NULL || ops->unpin != NULL || ops->linked != NULL;
    SWF_CHECK_ARG(some_pin && !swf_list_can_pin(ops), EINVAL,
                  "list ops: pin, unpin and linked must be all set or all NULL");
    SWF_CHECK_ARG(cfg->cache == NULL, EINVAL, "cfg->cache is NULL");
    SWF_CHECK_ARG(cfg->init == NULL, EINVAL, "cfg->init is NULL");
    SWF_CHECK_ARG(cfg->guard.enter == NULL, EINVAL, "cfg->guard.enter is NULL");
    SWF_CHECK_ARG(cfg->guard.leave == NULL, EINVAL, "cfg->guard.leave is NULL");
    SWF_CHECK_ARG(cfg->reserve == 0, EINVAL, "cfg->reserve is 0");
    SWF_CHECK_ARG(cfg->reserve > SWF_SWEEP_RESERVE_MAX, EINVAL,
                  "cfg->reserve is above SWF_SWEEP_RESERVE_MAX");
    SWF_CHECK_ARG(cfg->list.slot_offset % sizeof(void *) != 0, EINVAL,
                  "cfg->list.slot_offset is not a multiple of sizeof(void *)");
    SWF_CHECK_ARG(cfg->section_bound != 0 && !swf_list_can_pin(ops), EINVAL,
                  "cfg->section_bound is set but the list cannot pin");
    SWF_CHECK_ARG(cfg->algo != SWF_RESUME && cfg->algo != SWF_RESTART &&
                      cfg->algo != SWF_BATCH_RESTART,
                  EINVAL, "cfg->algo is not an enum swf_algo value");
    SWF_CHECK_ARG(cfg->publish != SWF_PUBLISH_STORE && cfg->publish != SWF_PUBLISH_CAS, EINVAL,
                  "cfg->publish is not an enum swf_publish value");
    /* Not an error (stats.fell_back says it), but where a user looks: the full checks say it. */
    if (swfi_checks_all() && cfg->algo == SWF_RESUME && !swf_list_can_pin(ops) &&
        !(cfg->guard.flags & SWF_GUARD_BLOCKING_OK))
        fprintf(stderr, "sweepfill: swf_sweep: the list cannot pin (no pin, unpin and linked ops), "
                        "so SWF_RESUME runs as SWF_RESTART; use an _AUTO adapter (pin.h)\n");
    return 0;
}

int swf_sweep(const struct swf_sweep_config *cfg, struct swf_sweep_stats *stats)
{
    SWF_CHECK_ARG(cfg == NULL, EINVAL, "cfg is NULL");
    int err = swf_sweep_validate(cfg, cfg->list.ops);
    if (err != 0)
        return err;
    return swf_sweep_run_(cfg, cfg->list.ops, cfg->init, cfg->list.slot_offset, stats);
}

/* ---- guards ------------------------------------------------------------------------------- */

/* base/epoch.h: ck_epoch_begin with the load barrier ck 0.7.x lacks. */
static void epoch_enter(void *rec)
{
    swfi_epoch_begin(rec);
}

static void epoch_leave(void *arg)
{
    ck_epoch_record_t *rec = arg;
    swfi_tsan_release(rec->global); /* see tsan.h: pairs with acquires after grace periods */
    ck_epoch_end(rec, NULL);
    swfi_epoch_section_ended(); /* wakes a grace-period waiter that sleeps (lib/base/epoch_wait.c)
                                 */
}

static void rwlock_enter(void *lock)
{
    pthread_rwlock_rdlock(lock);
}

static void rwlock_leave(void *lock)
{
    pthread_rwlock_unlock(lock);
}

static void mutex_enter(void *lock)
{
    pthread_mutex_lock(lock);
}

static void mutex_leave(void *lock)
{
    pthread_mutex_unlock(lock);
}

static void nothing(void *arg)
{
    (void)arg;
}

void swf_guard_epoch(struct swf_guard *g, struct ck_epoch_record *rec)
{
    if (g == NULL || rec == NULL)
        return;
    *g = (struct swf_guard){epoch_enter, epoch_leave, rec, 0};
}

void swf_guard_rwlock(struct swf_guard *g, pthread_rwlock_t *lock)
{
    if (g == NULL || lock == NULL)
        return;
    *g = (struct swf_guard){rwlock_enter, rwlock_leave, lock, 0};
}

void swf_guard_mutex(struct swf_guard *g, pthread_mutex_t *lock)
{
    if (g == NULL || lock == NULL)
        return;
    *g = (struct swf_guard){mutex_enter, mutex_leave, lock, 0};
}

void swf_guard_none(struct swf_guard *g)
{
    if (g == NULL)
        return;
    *g = (struct swf_guard){nothing, nothing, NULL, 0};
}

/* ---- arrays ------------------------------------------------------------------------------- */

static void *array_first(void *list)
{
    const struct swf_array *a = list;
    return a->count > 0 ? a->base : NULL;
}

static void *array_next(void *list, void *member)
{
    const struct swf_array *a = list;
    char *next = (char *)member + a->stride;
    return next < (char *)a->base + a->count * a->stride ? next : NULL;
}

static void array_pin(void *list, void *member)
{
    (void)list, (void)member; /* members never leave an array */
}

static bool array_linked(void *list, void *member)
{
    (void)list, (void)member;
    return true;
}

const struct swf_list_ops swf_array_ops = {array_first, array_next, array_pin, array_pin,
                                           array_linked};
