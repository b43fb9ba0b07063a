/*
 * lib/sweep/sweep.c - swf_sweep over a runtime list ops table, its validation, the ready-made
 * guards and the array adapter. The algorithm itself is in include/sweepfill/abi/sweep_inline.h,
 * shared with the sweeps SWF_SWEEP_DEFINE generates.
 */
#include "sweepfill/sweep.h"

#include <ck_epoch.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/atomic.h"
#include "base/epoch.h"
#include "base/section.h"
#include "base/tsan.h"
#include "base/util.h"
#include "sweep/check.h"

/* A reason about a field of the sweep's configuration, as the user wrote it: cfg->FIELD to
 * swf_sweep, cfg->sweep.FIELD to swf_feature_create. */
#define FIELD(in, rest) ((in) == SWFI_SWEEP_IN_FEATURE ? "cfg->sweep." rest : "cfg->" rest)

/* Every NULL required field in one reason: one field's own, or a list of them. names[i] is the
 * field's reason when it alone is NULL ("cfg->init is NULL"). */
static int missing_fields(const char *fn, const char **names, size_t n)
{
    static const char alone[] = " is NULL";
    if (n == 1)
        return swfi_fail(fn, EINVAL, names[0]);
    struct swfi_reason r;
    swfi_reason_start(&r);
    for (size_t i = 0; i < n; i++) {
        char field[64];
        size_t len = strlen(names[i]) - (sizeof(alone) - 1);
        memcpy(field, names[i], len);
        field[len] = '\0';
        swfi_reason_add(&r, i == 0 ? "" : i + 1 < n ? ", " : " and ");
        swfi_reason_add(&r, field);
    }
    swfi_reason_add(&r, " are NULL");
    return swfi_fail(fn, EINVAL,
                     swfi_reason_text(&r, "several required fields are NULL (the first: see "
                                          "swf_sweep(3) or swf_feature_create(3))"));
}

int swfi_sweep_check(const struct swf_sweep_config *cfg, const struct swf_list_ops *ops,
                     const char *fn, enum swfi_sweep_in in, bool synchronize_missing)
{
    const char *miss[8];
    size_t n = 0;
    if (ops == NULL)
        miss[n++] = FIELD(in, "list.ops is NULL");
    if (ops != NULL && ops->first == NULL)
        miss[n++] = FIELD(in, "list.ops->first is NULL");
    if (ops != NULL && ops->next == NULL)
        miss[n++] = FIELD(in, "list.ops->next is NULL");
    /* Every ready-made adapter reads through it in first(): NULL would crash the first walk. */
    if (cfg->list.list == NULL)
        miss[n++] = FIELD(in, "list.list is NULL");
    if (cfg->cache == NULL)
        miss[n++] = FIELD(in, "cache is NULL");
    if (cfg->init == NULL)
        miss[n++] = FIELD(in, "init is NULL");
    if (cfg->guard.enter == NULL)
        miss[n++] = FIELD(in, "guard.enter is NULL");
    if (cfg->guard.leave == NULL)
        miss[n++] = FIELD(in, "guard.leave is NULL");
    if (synchronize_missing)
        miss[n++] = "cfg->synchronize is NULL";
    if (n != 0)
        return missing_fields(fn, miss, n);
    bool some_pin = ops->pin != NULL || ops->unpin != NULL || ops->linked != NULL;
    SWF_CHECK_ARG_AS(fn, some_pin && !swf_list_can_pin(ops), EINVAL,
                     FIELD(in, "list.ops: pin, unpin and linked must be all set or all NULL"));
    SWF_CHECK_ARG_AS(fn, cfg->reserve == 0, EINVAL, FIELD(in, "reserve is 0"));
    SWF_CHECK_ARG_AS(fn, cfg->reserve > SWF_SWEEP_RESERVE_MAX, EINVAL,
                     FIELD(in, "reserve is above SWF_SWEEP_RESERVE_MAX"));
    SWF_CHECK_ARG_AS(fn, cfg->list.slot_offset % sizeof(void *) != 0, EINVAL,
                     FIELD(in, "list.slot_offset is not a multiple of sizeof(void *)"));
    SWF_CHECK_ARG_AS(fn,
                     cfg->section_bound != 0 &&
                         cfg->section_bound != SWF_SWEEP_SECTION_BOUND_AUTO &&
                         !swf_list_can_pin(ops),
                     EINVAL,
                     FIELD(in, "section_bound is set but the list cannot pin (0 or "
                               "SWF_SWEEP_SECTION_BOUND_AUTO: one section per pass)"));
    SWF_CHECK_ARG_AS(
        fn, cfg->algo != SWF_RESUME && cfg->algo != SWF_RESTART && cfg->algo != SWF_BATCH_RESTART,
        EINVAL, FIELD(in, "algo is not an enum swf_algo value"));
    SWF_CHECK_ARG_AS(fn, cfg->publish != SWF_PUBLISH_STORE && cfg->publish != SWF_PUBLISH_CAS,
                     EINVAL, FIELD(in, "publish is not an enum swf_publish value"));
    /* Not an error (stats.fell_back says it), but where a user looks: the full checks say it. */
    if (swfi_checks_all() && cfg->algo == SWF_RESUME && !swf_list_can_pin(ops) &&
        !(cfg->guard.flags & SWF_GUARD_BLOCKING_OK))
        fprintf(stderr,
                "sweepfill: %s: the list cannot pin (no pin, unpin and linked ops), "
                "so SWF_RESUME runs as SWF_RESTART; use an _AUTO adapter (pin.h)\n",
                fn);
    return 0;
}

int swf_sweep_validate(const struct swf_sweep_config *cfg, const struct swf_list_ops *ops)
{
    SWF_CHECK_ARG(cfg == NULL, EINVAL, "cfg is NULL");
    return swfi_sweep_check(cfg, ops, __func__, SWFI_SWEEP_IN_CFG, false);
}

static void unused_init(void *obj, void *member, void *arg)
{
    (void)obj, (void)member, (void)arg;
}

int swf_sweep_define_check_(const struct swf_sweep_config *cfg, const struct swf_list_ops *ops,
                            size_t slot_offset, const char *fn)
{
    if (fn == NULL)
        fn = "a sweep SWF_SWEEP_DEFINE made";
    SWF_CHECK_ARG_AS(fn, cfg == NULL, EINVAL, "cfg is NULL");
    /* The generated sweep ignores cfg->init (its init_fn is used): no reason to refuse NULL. */
    struct swf_sweep_config checked = *cfg;
    if (checked.init == NULL)
        checked.init = unused_init;
    int err = swfi_sweep_check(&checked, ops, fn, SWFI_SWEEP_IN_CFG, false);
    if (err != 0)
        return err;
    SWF_CHECK_ARG_AS(fn, cfg->list.slot_offset != slot_offset, EINVAL,
                     "cfg->list.slot_offset is not the adapter's (its NAME_list() sets it)");
    return 0;
}

int swf_sweep(const struct swf_sweep_config *cfg, struct swf_sweep_stats *stats)
{
    SWF_CHECK_ARG(cfg == NULL, EINVAL, "cfg is NULL");
    int err = swfi_sweep_check(cfg, cfg->list.ops, __func__, SWFI_SWEEP_IN_CFG, false);
    if (err != 0)
        return err;
    SWFI_BLOCKING_CALL();
    return swf_sweep_run_(cfg, cfg->list.ops, cfg->init, cfg->list.slot_offset, stats);
}

/* ---- guards ------------------------------------------------------------------------------- */

/*
 * Every lock call is checked: a guard that could not take its lock and went on would leave a
 * lock it never held (the rwlock guard's unlock would end the caller's own write lock). A failure
 * aborts with the public call that was running (base/section.h). Each guard counts its sections
 * on the thread, so that a blocking call made inside one aborts instead of waiting for itself.
 * The locking guards try first: only a lock that is held gets watched (and pays for the clock).
 */

/*
 * The epoch guard's sections on this thread, so that a record used by two threads is caught
 * where it shows: a ck_epoch record serves the one thread that owns it (its active count is not
 * atomic across threads). One record is followed at a time (the common case: one per thread);
 * sections on another record while it has sections open are counted, not checked.
 */
static _Thread_local ck_epoch_record_t *epoch_rec __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned int epoch_depth __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned int epoch_active __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned int epoch_others __attribute__((tls_model("initial-exec")));

static const char NOT_OWNER[] =
    "the calling thread does not own the epoch record %p (it was registered by another thread, "
    "or is used by one): %s; a record serves one thread: register one per thread with "
    "ck_epoch_register";

/* base/epoch.h: ck_epoch_begin with the load barrier ck 0.7.x lacks. */
static void epoch_enter(void *arg)
{
    ck_epoch_record_t *rec = arg;
    bool followed = epoch_depth == 0 || epoch_rec == rec;
    if (followed && epoch_depth > 0 &&
        SWF_UNLIKELY(swfi_load_relaxed_uint(&rec->active) != epoch_active))
        swfi_die(swfi_call_name("swf_guard_epoch"), NOT_OWNER, arg,
                 "another thread entered or left a section on it during this thread's section");
    swfi_epoch_begin(rec);
    if (followed) {
        epoch_rec = rec;
        epoch_depth++;
        epoch_active = swfi_load_relaxed_uint(&rec->active);
    } else {
        epoch_others++;
    }
    swfi_section_entered();
}

static void epoch_leave(void *arg)
{
    ck_epoch_record_t *rec = arg;
    unsigned int active = swfi_load_relaxed_uint(&rec->active);
    if (SWF_UNLIKELY(active == 0))
        swfi_die(swfi_call_name("swf_guard_epoch"),
                 "the epoch guard's leave found record %p outside any section: enter and leave "
                 "pair on the thread that owns the record",
                 arg);
    if (epoch_depth > 0 && epoch_rec == rec) {
        if (SWF_UNLIKELY(active != epoch_active))
            swfi_die(swfi_call_name("swf_guard_epoch"), NOT_OWNER, arg,
                     "another thread entered or left a section on it during this thread's "
                     "section");
        epoch_depth--;
        epoch_active = active - 1;
    } else if (epoch_others > 0) {
        epoch_others--;
    } else {
        swfi_die(swfi_call_name("swf_guard_epoch"), NOT_OWNER, arg,
                 "this thread is leaving a section it did not enter through the guard (it was "
                 "entered on another thread, or by ck_epoch_begin)");
    }
    swfi_section_left();
    swfi_tsan_release(rec->global); /* see tsan.h: pairs with acquires after grace periods */
    ck_epoch_end(rec, NULL);
    swfi_epoch_section_ended(); /* wakes a grace-period waiter that sleeps (lib/base/epoch_wait.c)
                                 */
}

static const char RWLOCK_WAIT_CAUSE[] =
    "a writer holds or waits for the lock (one that waits for something this thread holds never "
    "lets go)";

static void rwlock_enter(void *lock)
{
    int err = pthread_rwlock_tryrdlock(lock);
    if (err != 0) {
        int w = swfi_watch_begin_in("swf_guard_rwlock", "the rwlock guard's pthread_rwlock_rdlock",
                                    RWLOCK_WAIT_CAUSE);
        err = pthread_rwlock_rdlock(lock);
        swfi_watch_end(w);
    }
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed("swf_guard_rwlock", "the rwlock guard's pthread_rwlock_rdlock", err,
                         err == EDEADLK ? "does this thread hold the write lock?" : NULL);
    swfi_section_entered();
}

static void rwlock_leave(void *lock)
{
    swfi_section_left();
    int err = pthread_rwlock_unlock(lock);
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed("swf_guard_rwlock", "the rwlock guard's pthread_rwlock_unlock", err,
                         "does this thread hold the read lock?");
}

static void mutex_enter(void *lock)
{
    int err = pthread_mutex_trylock(lock);
    if (err == EBUSY) {
        int w = swfi_watch_begin_in(
            "swf_guard_mutex", "the mutex guard's pthread_mutex_lock",
            "another thread holds the mutex, or this one (a default mutex does not say so)");
        err = pthread_mutex_lock(lock);
        swfi_watch_end(w);
    }
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed("swf_guard_mutex", "the mutex guard's pthread_mutex_lock", err,
                         err == EDEADLK      ? "does this thread hold the mutex?"
                         : err == EOWNERDEAD ? "its owner died holding it"
                                             : NULL);
    swfi_section_entered();
}

static void mutex_leave(void *lock)
{
    swfi_section_left();
    int err = pthread_mutex_unlock(lock);
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed("swf_guard_mutex", "the mutex guard's pthread_mutex_unlock", err,
                         "does this thread hold the mutex?");
}

static void none_enter(void *arg)
{
    (void)arg;
    swfi_section_entered();
}

static void none_leave(void *arg)
{
    (void)arg;
    swfi_section_left();
}

/* A hand-written guard's enter may wait for anything: it is watched as the ready-made ones' lock
 * waits are, once per section. The ready-made guards (and the library's own, flagged) watch their
 * own waits, only when a try failed. */
static const char HAND_ENTER_CAUSE[] =
    "it has not returned (a lock or a section it waits for is held, on this thread or another)";

void swf_guard_enter_(const struct swf_guard *g)
{
    if (g->enter == epoch_enter || g->enter == rwlock_enter || g->enter == mutex_enter ||
        g->enter == none_enter || (g->flags & SWF_GUARD_UNWATCHED_)) {
        g->enter(g->arg);
        return;
    }
    int w = swfi_watch_begin("the guard's enter (a guard written by hand)", HAND_ENTER_CAUSE);
    g->enter(g->arg);
    swfi_watch_end(w);
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
    *g = (struct swf_guard){none_enter, none_leave, NULL, 0};
}

void swf_section_entered_(void)
{
    swfi_section_entered();
}

void swf_section_left_(void)
{
    swfi_section_left();
}

int swf_blocking_enter_(const char *function)
{
    return swfi_call_begin(function != NULL ? function : "a sweep");
}

void swf_blocking_leave_(int outermost)
{
    swfi_call_end(outermost);
}

/* ---- ready-made synchronize functions ------------------------------------------------------ */

static const char SYNC_CAUSE[] =
    "a read-side section that began before it has not ended (on this thread or another: "
    "pthread_rwlock_rdlock, rcu_read_lock, ck_epoch_begin)";

void swf_synchronize_epoch(void *arg)
{
    ck_epoch_record_t *rec = arg;
    if (rec == NULL)
        swfi_die("swf_synchronize_epoch", "the record is NULL: pass a registered ck_epoch record");
    SWFI_BLOCKING_CALL();
    if (SWF_UNLIKELY(swfi_load_relaxed_uint(&rec->active) != 0))
        swfi_die(swfi_call_name(__func__),
                 "record %p is inside a section: a grace period would wait for it, and so for "
                 "itself (call it outside the record's sections)",
                 arg);
    int w = swfi_watch_begin("swf_synchronize_epoch's grace period", SYNC_CAUSE);
    struct swfi_epoch_waiter waiter;
    swfi_epoch_waiter_init(&waiter);
    ck_epoch_synchronize_wait(rec->global, swfi_epoch_wait, &waiter);
    swfi_watch_end(w);
    swfi_tsan_acquire(rec->global); /* tsan.h: the sections that ended release on the epoch */
}

void swf_synchronize_rwlock(void *lock)
{
    if (lock == NULL)
        swfi_die("swf_synchronize_rwlock", "the lock is NULL");
    SWFI_BLOCKING_CALL();
    int err = pthread_rwlock_trywrlock(lock);
    if (err != 0) {
        int w = swfi_watch_begin(
            "swf_synchronize_rwlock's pthread_rwlock_wrlock",
            "a reader holds the lock (on this thread or another: pthread_rwlock_rdlock)");
        err = pthread_rwlock_wrlock(lock);
        swfi_watch_end(w);
    }
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed(__func__, "swf_synchronize_rwlock's pthread_rwlock_wrlock", err,
                         err == EDEADLK ? "does this thread hold the write lock?" : NULL);
    err = pthread_rwlock_unlock(lock);
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed(__func__, "swf_synchronize_rwlock's pthread_rwlock_unlock", err, NULL);
}

void swf_synchronize_mutex(void *lock)
{
    if (lock == NULL)
        swfi_die("swf_synchronize_mutex", "the lock is NULL");
    SWFI_BLOCKING_CALL();
    int err = pthread_mutex_trylock(lock);
    if (err == EBUSY) {
        int w = swfi_watch_begin("swf_synchronize_mutex's pthread_mutex_lock",
                                 "a thread holds the mutex (this one, or one that waits)");
        err = pthread_mutex_lock(lock);
        swfi_watch_end(w);
    }
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed(__func__, "swf_synchronize_mutex's pthread_mutex_lock", err,
                         err == EDEADLK ? "does this thread hold the mutex?" : NULL);
    err = pthread_mutex_unlock(lock);
    if (SWF_UNLIKELY(err != 0))
        swfi_lock_failed(__func__, "swf_synchronize_mutex's pthread_mutex_unlock", err, NULL);
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
