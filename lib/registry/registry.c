/*
 * lib/registry/registry.c - the live registry: a CK_LIST with a writer mutex, ck_epoch readers with
 * automatically managed records, the activation protocol, and grace-period reclamation.
 *
 * Locks, in the order they may nest: activation -> writer; activation -> (cache refill lock);
 * activation -> reclaim. records_lock is a leaf. None is ever taken inside a read section of the
 * same registry (records_lock may be, inside a section of another: a thread's first read). No
 * thread waits for the refill lock while holding `writer`: add allocates with NOWAIT under it,
 * and with WAIT only after dropping it (swf_registry_add), and activate grows the cache before
 * it raises the flag.
 *
 * Why activation is exact (registry.h states the protocol):
 *   The flag x_active changes only under `writer`, and add reads it under `writer`. Take an add
 *   of n and an activate. If add's critical section comes first, n is on the list before the
 *   flag is set; the sweep starts after the flag's critical section, so its walk (which starts
 *   from the head and follows every link) reaches n unless n is deleted, and fills it. If the
 *   flag's critical section comes first, add sees the flag and publishes n's object before it
 *   links n. Either way n has an object when activate returns, or n was deleted. A member is
 *   filled at most once: add publishes before n is reachable, and the sweep publishes with a
 *   CAS from NULL (a relaxed emptiness check first), so the sweep never overwrites.
 *
 * Why reclamation is safe:
 *   del unlinks n and marks it deleted under `writer`, then queues n on the registry's own
 *   epoch record (wrec, used only under `reclaim`). When its grace period is over, no read
 *   section that could have reached n through the list is still running. The activation sweep
 *   may still hold n pinned (its cursor, while outside any section); the callback then only
 *   sets a pending bit, and the sweep's unpin that drops the last pin pushes n on a lock-free
 *   orphan stack. Whoever finds n ready (callback with no pins, or orphan) finalises it outside
 *   any section and outside `reclaim`: takes the slot, frees the object, calls release(n).
 */
#include "sweepfill/registry.h"

#include <ck_epoch.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/section.h"
#include "base/epoch.h"
#include "base/owner.h"
#include "base/tsan.h"
#include "base/util.h"
#include "cache/users.h"
#include "sweep/unsweep.h"

/* A node's life: UNLINKED -add-> LINKED -del-> DELETED -finalise-> UNLINKED (no release
 * callback) or RELEASED (release called; swf_node_init makes it UNLINKED again). */
enum node_state { NODE_UNLINKED = 0, NODE_LINKED = 1, NODE_DELETED = 2, NODE_RELEASED = 3 };
#define REF_PENDING 0x80000000u

_Static_assert(sizeof(((struct swf_node *)0)->epoch_entry) >= sizeof(ck_epoch_entry_t),
               "swf_node.epoch_entry must hold a ck_epoch_entry_t");

struct swf_reader {
    ck_epoch_record_t rec; /* first: recycled records come back as ck_epoch_record_t * */
    struct swf_registry *r;
    struct swf_reader *next_all;
};

CK_LIST_HEAD(swf_node_list, swf_node);

struct swf_registry {
    struct swfi_tls_owner owner; /* per-thread readers */
    struct swf_cache *cache;
    swf_init_fn *init;
    void *init_arg;
    size_t reserve;
    size_t section_bound;

    pthread_mutex_t writer; /* list mutations and the active flag */
    struct swf_node_list members;
    uint32_t x_active;
    uint64_t x_members;

    pthread_mutex_t activation; /* activate and deactivate */
    int complete;               /* the current activation finished its sweep */

    ck_epoch_t epoch;
    pthread_mutex_t reclaim; /* wrec is single-producer: ck_epoch_call, poll, barrier */
    ck_epoch_record_t wrec;
    struct swf_node *ready;     /* under reclaim: grace over, no pins */
    struct swf_node *x_orphans; /* lock-free stack: released by the last unpin */

    pthread_mutex_t records_lock;
    struct swf_reader *records; /* every reader record ever made, for destroy */

    uint64_t x_activations, x_deactivations, x_assigned_by_add, x_assigned_by_sweep;
    uint64_t x_lost_races, x_unpublished, x_released, x_pending_release;
    uint64_t x_longest_section, x_sections, x_cursor_restarts;
};

static ck_epoch_entry_t *node_entry(struct swf_node *n)
{
    return (ck_epoch_entry_t *)(void *)n->epoch_entry;
}

/* ---- readers -------------------------------------------------------------------------------- */

/* The thread's binding for r is given back at its exit: the record becomes recyclable. */
static void reader_release(struct swfi_tls_owner *o, void *state)
{
    (void)o;
    struct swf_reader *rd = state;
    ck_epoch_unregister(&rd->rec);
}

/* The calling thread's reader for r, made (or recycled) on its first read. Blocking the first
 * time (prepares the thread, may allocate); a TLS lookup afterwards. */
static struct swf_reader *reader_get(struct swf_registry *r)
{
    struct swf_reader *rd = swfi_tls_get(&r->owner);
    if (SWF_LIKELY(rd != NULL))
        return rd;
    if (swfi_tls_prepare(&r->owner) != 0)
        return NULL;
    ck_epoch_record_t *rec = ck_epoch_recycle(&r->epoch, r);
    if (rec != NULL) {
        rd = (struct swf_reader *)(void *)rec;
    } else {
        if (posix_memalign((void **)&rd, 64, sizeof(*rd)) != 0)
            return NULL;
        memset(rd, 0, sizeof(*rd));
        ck_epoch_register(&r->epoch, &rd->rec, r);
        pthread_mutex_lock(&r->records_lock);
        rd->next_all = r->records;
        r->records = rd;
        pthread_mutex_unlock(&r->records_lock);
    }
    rd->r = r;
    swfi_tls_bind(&r->owner, rd);
    return rd;
}

/* Enter a section (base/epoch.h: with the load barrier ck 0.7.x lacks). */
static void reader_enter(struct swf_reader *rd)
{
    swfi_epoch_begin(&rd->rec);
    swfi_section_entered(); /* a blocking call inside aborts (base/section.h) */
}

static void reader_leave(struct swf_reader *rd)
{
    swfi_tsan_release(&rd->r->epoch); /* tsan.h: pairs with acquires after grace periods */
    ck_epoch_end(&rd->rec, NULL);
    swfi_epoch_section_ended();
    swfi_section_left();
}

struct swf_reader *swf_registry_read_lock(struct swf_registry *r)
{
    if (r == NULL)
        return swfi_fail_null(__func__, EINVAL, "r is NULL");
    struct swf_reader *rd = reader_get(r);
    if (rd == NULL)
        return swfi_fail_null(__func__, ENOMEM, "no memory for this thread's epoch record");
    reader_enter(rd);
    return rd;
}

void swf_registry_read_unlock(struct swf_reader *rd)
{
    if (rd != NULL)
        reader_leave(rd);
}

/* ---- the member list ------------------------------------------------------------------------
 *
 * A CK_LIST in layout (the head's clh_first, each node's link.cle_next and link.cle_prev), read
 * and changed through atomic.h rather than ck_queue's macros, whose volatile accesses
 * ThreadSanitizer cannot see as synchronisation: with -Datomics=c11 every edge below is a C11
 * one. Writers hold `writer`. A node becomes reachable through one release store (of the head,
 * after the node's own cle_next is set) and leaves through one release store (of its
 * predecessor's link to its successor); readers load each link with acquire, so a reader that
 * reaches a node sees everything its adder wrote before add, and the successor a removal links
 * in. A removed node keeps its cle_next, so a reader or a pinned cursor standing on it walks on.
 * cle_prev is read and written only by writers.
 */

static struct swf_node *members_first(struct swf_registry *r)
{
    return swfi_load_acquire_ptr((void *const *)&r->members.clh_first);
}

static struct swf_node *members_next(struct swf_node *n)
{
    return swfi_load_acquire_ptr((void *const *)&n->link.cle_next);
}

static void members_insert_head(struct swf_registry *r, struct swf_node *n)
{
    struct swf_node *first = swfi_load_relaxed_ptr((void *const *)&r->members.clh_first);
    swfi_store_relaxed_ptr((void **)&n->link.cle_next, first);
    n->link.cle_prev = &r->members.clh_first;
    if (first != NULL)
        first->link.cle_prev = &n->link.cle_next;
    swfi_store_release_ptr((void **)&r->members.clh_first, n);
}

static void members_remove(struct swf_node *n)
{
    struct swf_node *next = swfi_load_relaxed_ptr((void *const *)&n->link.cle_next);
    swfi_store_release_ptr((void **)n->link.cle_prev, next);
    if (next != NULL)
        next->link.cle_prev = n->link.cle_prev;
}

struct swf_node *swf_registry_first(struct swf_registry *r)
{
    return r ? members_first(r) : NULL;
}

struct swf_node *swf_registry_next(struct swf_registry *r, struct swf_node *n)
{
    (void)r;
    return n ? members_next(n) : NULL;
}

/* ---- reclamation ----------------------------------------------------------------------------- */

static void orphan_push(struct swf_registry *r, struct swf_node *n)
{
    void *head = swfi_load_relaxed_ptr((void **)&r->x_orphans);
    do
        swfi_store_relaxed_ptr((void **)&n->x_orphan_next, head);
    while (!swfi_cas_release_ptr((void **)&r->x_orphans, &head, n));
}

/* Runs inside ck_epoch_poll/barrier on wrec, under `reclaim`. */
static void node_grace_over(ck_epoch_entry_t *e)
{
    struct swf_node *n = SWF_CONTAINER_OF(e, struct swf_node, epoch_entry);
    struct swf_registry *r = n->registry;
    swfi_tsan_acquire(&r->epoch);
    uint32_t ref = swfi_load_acquire_32(&n->x_ref);
    for (;;) {
        if (ref == 0) {
            n->x_orphan_next = r->ready;
            r->ready = n;
            return;
        }
        /* Pinned by a sweep's cursor: its last unpin finishes the job. */
        if (swfi_cas_acq_rel_32(&n->x_ref, &ref, ref | REF_PENDING))
            return;
    }
}

/*
 * Take n's object back and hand n to its owner. With a release callback the node goes to
 * RELEASED, which add refuses (EBUSY) until the owner calls swf_node_init: so no add can link n
 * before release(n) has been called, and release never runs on a node that is linked again.
 * The library does not touch n after the state store.
 */
static void finalise(struct swf_registry *r, struct swf_node *n)
{
    void *obj = swf_slot_take(&n->slot);
    if (obj != NULL)
        swf_cache_free(r->cache, obj);
    void (*release)(struct swf_node *) = n->release;
    swfi_store_relaxed_32(&n->x_ref, 0);
    n->registry = NULL;
    n->release = NULL;
    swfi_fetch_add_relaxed_64(&r->x_released, 1);
    swfi_fetch_sub_relaxed_64(&r->x_pending_release, 1);
    swfi_store_release_32(&n->x_state, release != NULL ? NODE_RELEASED : NODE_UNLINKED);
    if (release != NULL)
        release(n);
}

/* Finalise everything found ready: called outside any section and outside `reclaim`. With
 * `wait` false it does not queue behind a thread that holds `reclaim` through a grace period
 * (that thread finalises what its wait makes ready); orphans need no lock either way. */
static void finalise_ready(struct swf_registry *r, bool wait)
{
    struct swf_node *n = NULL;
    if (wait ? pthread_mutex_lock(&r->reclaim) == 0 : pthread_mutex_trylock(&r->reclaim) == 0) {
        n = r->ready;
        r->ready = NULL;
        pthread_mutex_unlock(&r->reclaim);
    }
    while (n != NULL) {
        struct swf_node *next = n->x_orphan_next;
        finalise(r, n);
        n = next;
    }
    if (swfi_load_relaxed_ptr((void **)&r->x_orphans) == NULL)
        return;
    n = swfi_exchange_acquire_ptr((void **)&r->x_orphans, NULL);
    while (n != NULL) {
        struct swf_node *next = swfi_load_relaxed_ptr((void **)&n->x_orphan_next);
        finalise(r, n);
        n = next;
    }
}

static const char GRACE_WAIT[] = "the registry's grace period";
static const char GRACE_CAUSE[] = "a reader has not left swf_registry_read_lock's section (on this "
                                  "thread, or on one that waits or is stopped)";

/* Wait for a grace period on wrec and run every callback queued on it. */
static void barrier(struct swf_registry *r)
{
    pthread_mutex_lock(&r->reclaim);
    struct swfi_epoch_waiter w;
    swfi_epoch_waiter_init(&w);
    int watch = swfi_watch_begin(GRACE_WAIT, GRACE_CAUSE);
    ck_epoch_barrier_wait(&r->wrec, swfi_epoch_wait, &w);
    swfi_watch_end(watch);
    swfi_tsan_acquire(&r->epoch);
    pthread_mutex_unlock(&r->reclaim);
}

int swf_registry_synchronize(struct swf_registry *r)
{
    SWF_CHECK_ARG(r == NULL, EINVAL, "r is NULL");
    SWFI_BLOCKING_CALL();
    barrier(r);
    finalise_ready(r, true);
    return 0;
}

/* ---- the list, as a sweep sees it ------------------------------------------------------------ */

static void *ops_first(void *list)
{
    return swf_registry_first(list);
}

static void *ops_next(void *list, void *n)
{
    return swf_registry_next(list, n);
}

static void ops_pin(void *list, void *n)
{
    (void)list;
    swfi_fetch_add_acq_rel_32(&((struct swf_node *)n)->x_ref, 1);
}

static void ops_unpin(void *list, void *node)
{
    struct swf_node *n = node;
    if (swfi_fetch_sub_acq_rel_32(&n->x_ref, 1) == (REF_PENDING | 1))
        orphan_push(list, n); /* its grace period ended while we held it */
}

static bool ops_linked(void *list, void *n)
{
    (void)list;
    return swfi_load_acquire_32(&((struct swf_node *)n)->x_state) == NODE_LINKED;
}

static const struct swf_list_ops registry_ops = {ops_first, ops_next, ops_pin, ops_unpin,
                                                 ops_linked};

static void guard_enter(void *rd)
{
    reader_enter(rd);
}

static void guard_leave(void *rd)
{
    reader_leave(rd);
}

/* ---- add and del ----------------------------------------------------------------------------- */

/* Why n cannot be added, or NULL: its state, read under `writer`. */
static const char *add_refusal(struct swf_node *n, int *err)
{
    uint32_t state = swfi_load_acquire_32(&n->x_state);
    if (state == NODE_UNLINKED)
        return NULL;
    if (state == NODE_LINKED) {
        *err = EEXIST;
        return "n is linked (here or in another registry)";
    }
    *err = state == NODE_DELETED || state == NODE_RELEASED ? EBUSY : EINVAL;
    if (state == NODE_DELETED)
        return "n was deleted and has not been finalised yet";
    if (state == NODE_RELEASED)
        return "n was released: swf_node_init(n) before adding it again";
    return "n is not zeroed (swf_node_init)";
}

static void link_member(struct swf_registry *r, struct swf_node *n, void *obj)
{
    n->registry = r;
    n->release = NULL;
    swfi_store_relaxed_32(&n->x_ref, 0);
    if (obj != NULL) {
        /* Before the member is reachable: readers and the sweep see it filled. */
        swf_slot_publish(&n->slot, obj);
        swfi_fetch_add_relaxed_64(&r->x_assigned_by_add, 1);
    }
    swfi_store_release_32(&n->x_state, NODE_LINKED);
    members_insert_head(r, n);
    swfi_fetch_add_relaxed_64(&r->x_members, 1);
}

/*
 * Under `writer` an add allocates with NOWAIT only: a WAIT allocation may wait for the cache's
 * refill mutex (an activation's grow, another thread's refill), and every add and del would
 * queue behind it. When NOWAIT finds nothing, add drops `writer`, allocates with WAIT, takes
 * `writer` again and starts over: the state and the flag are read afresh, the object it holds is
 * used if the flag is still up and freed otherwise. So the member is still never linked without
 * an object while the flag is up, and the flag's critical sections order it as before.
 */
int swf_registry_add(struct swf_registry *r, struct swf_node *n)
{
    SWF_CHECK_ARG(r == NULL, EINVAL, "r is NULL");
    SWF_CHECK_ARG(n == NULL, EINVAL, "n is NULL");
    int err = 0;
    const char *why = NULL;
    void *spare = NULL; /* a WAIT allocation made outside `writer`, initialised */
    const char *kept = swf_reason_keep_(); /* a NOWAIT miss that WAIT served is no failure */
    pthread_mutex_lock(&r->writer);
    for (;;) {
        why = add_refusal(n, &err);
        if (why != NULL)
            break;
        void *obj = NULL;
        if (swfi_load_relaxed_32(&r->x_active)) {
            obj = spare != NULL ? spare : swf_cache_alloc(r->cache, SWF_NOWAIT);
            if (obj == NULL) {
                pthread_mutex_unlock(&r->writer);
                spare = swf_cache_alloc(r->cache, SWF_WAIT);
                if (spare == NULL)
                    return swfi_fail(__func__, ENOMEM, "active and no object could be had for n");
                r->init(spare, n, r->init_arg);
                pthread_mutex_lock(&r->writer);
                continue;
            }
            if (obj != spare)
                r->init(obj, n, r->init_arg);
            spare = NULL;
        }
        link_member(r, n, obj);
        break;
    }
    pthread_mutex_unlock(&r->writer);
    if (spare != NULL)
        swf_cache_free(r->cache, spare); /* the flag went down while we allocated */
    if (err != 0)
        return swfi_fail(__func__, err, why);
    swf_reason_restore_(kept);
    return 0;
}

int swf_registry_del(struct swf_registry *r, struct swf_node *n, void (*release)(struct swf_node *))
{
    SWF_CHECK_ARG(r == NULL, EINVAL, "r is NULL");
    SWF_CHECK_ARG(n == NULL, EINVAL, "n is NULL");
    pthread_mutex_lock(&r->writer);
    /* The state first: n->registry is ours to read only while n is linked (set under writer). */
    if (swfi_load_acquire_32(&n->x_state) != NODE_LINKED || n->registry != r) {
        pthread_mutex_unlock(&r->writer);
        return swfi_fail(__func__, ENOENT, "n is not linked in r");
    }
    members_remove(n);
    n->release = release;
    swfi_store_release_32(&n->x_state, NODE_DELETED);
    swfi_fetch_sub_relaxed_64(&r->x_members, 1);
    pthread_mutex_unlock(&r->writer);

    pthread_mutex_lock(&r->reclaim);
    swfi_fetch_add_relaxed_64(&r->x_pending_release, 1);
    swfi_epoch_call(&r->wrec, node_entry(n), node_grace_over); /* the unlink visible first */
    ck_epoch_poll(&r->wrec); /* non-blocking: runs the callbacks whose grace period is over */
    pthread_mutex_unlock(&r->reclaim);
    finalise_ready(r, true);
    return 0;
}

/* ---- activate and deactivate ----------------------------------------------------------------- */

static void set_active(struct swf_registry *r, uint32_t on)
{
    pthread_mutex_lock(&r->writer);
    swfi_store_relaxed_32(&r->x_active, on);
    pthread_mutex_unlock(&r->writer);
}

static void record_sweep(struct swf_registry *r, const struct swf_sweep_stats *st)
{
    swfi_fetch_add_relaxed_64(&r->x_assigned_by_sweep, st->assigned);
    swfi_fetch_add_relaxed_64(&r->x_lost_races, st->lost_races);
    swfi_fetch_add_relaxed_64(&r->x_sections, st->sections);
    swfi_fetch_add_relaxed_64(&r->x_cursor_restarts, st->restarts);
    if (st->longest_section > swfi_load_relaxed_64(&r->x_longest_section))
        swfi_store_relaxed_64(&r->x_longest_section, st->longest_section);
}

int swf_registry_activate(struct swf_registry *r, struct swf_sweep_stats *stats)
{
    SWF_CHECK_ARG(r == NULL, EINVAL, "r is NULL");
    SWFI_BLOCKING_CALL();
    pthread_mutex_lock(&r->activation);
    if (swfi_load_relaxed_32(&r->x_active) && r->complete) {
        pthread_mutex_unlock(&r->activation);
        return swfi_fail(__func__, EALREADY, "r is already active and complete");
    }
    /* Prepare one object per member now, outside any section, in as few mappings as possible:
     * then the sweep's NOWAIT allocations succeed and its reserve stays a fallback. Best
     * effort: if memory is short the sweep finds out and reports ENOMEM. Before the flag goes
     * up: while the grow holds the cache's refill mutex, adds still allocate nothing. */
    const char *kept = swf_reason_keep_(); /* a grow that came up short is not our failure */
    (void)swf_cache_grow(r->cache, (size_t)swfi_load_relaxed_64(&r->x_members) + r->reserve);
    swf_reason_restore_(kept);
    set_active(r, 1);
    struct swf_reader *rd = reader_get(r);
    int err = ENOMEM;
    struct swf_sweep_stats st;
    memset(&st, 0, sizeof(st));
    if (rd != NULL) {
        struct swf_sweep_config cfg;
        swf_sweep_config_init(&cfg);
        cfg.list = (struct swf_list){&registry_ops, r, offsetof(struct swf_node, slot)};
        cfg.cache = r->cache;
        cfg.reserve = r->reserve;
        cfg.init = r->init;
        cfg.init_arg = r->init_arg;
        /* Its enter is an epoch section's: it never waits, and is not watched. */
        cfg.guard = (struct swf_guard){guard_enter, guard_leave, rd, SWF_GUARD_UNWATCHED_};
        cfg.section_bound = r->section_bound;
        cfg.publish = SWF_PUBLISH_CAS;
        cfg.algo = SWF_RESUME;
        err = swf_sweep(&cfg, &st);
        record_sweep(r, &st);
    }
    r->complete = err == 0;
    if (err == 0)
        swfi_fetch_add_relaxed_64(&r->x_activations, 1);
    pthread_mutex_unlock(&r->activation);
    finalise_ready(r, false);
    if (stats != NULL)
        *stats = st;
    return err ? swfi_fail(__func__, err,
                           rd ? "the sweep ran out of memory: call activate again"
                              : "no memory for this thread's epoch record")
               : 0;
}

/* What a deactivation's hand-overs share: the registry, and ENOMEM once one had no magazine. */
struct retiring {
    struct swf_registry *r;
    int err;
};

/* Hand a batch of taken objects to the cache, to be freed after a grace period on wrec
 * (unsweep.h: outside any section). */
static void retire(void *arg, void **objs, size_t n)
{
    struct retiring *ret = arg;
    struct swf_registry *r = ret->r;
    pthread_mutex_lock(&r->reclaim);
    /* swf_cache_free_deferred fences before its epoch read (cache.h): the taking exchanges are
     * visible first. */
    if (swf_cache_free_deferred(r->cache, &r->wrec, objs, n) != 0) {
        /* No magazine to queue them in: wait for the grace period here instead. */
        struct swfi_epoch_waiter w;
        swfi_epoch_waiter_init(&w);
        int watch = swfi_watch_begin(GRACE_WAIT, GRACE_CAUSE);
        ck_epoch_synchronize_wait(&r->epoch, swfi_epoch_wait, &w);
        swfi_watch_end(watch);
        swfi_tsan_acquire(&r->epoch);
        for (size_t i = 0; i < n; i++)
            swf_cache_free(r->cache, objs[i]);
        ret->err = ENOMEM;
    }
    pthread_mutex_unlock(&r->reclaim);
    swfi_fetch_add_relaxed_64(&r->x_unpublished, n);
}

/* Take every slot back (lib/sweep/unsweep.c) in rd's sections, handing over a batch of a fixed
 * size on the stack: no allocation, so nothing here fails for want of memory (a hand-over
 * without a magazine waits for its grace period instead, and reports ENOMEM). */
static int unpublish_all(struct swf_registry *r, struct swf_reader *rd)
{
    enum { BATCH = 4 * SWF_CACHE_MAGAZINE };
    void *objs[BATCH];
    const struct swf_list list = {&registry_ops, r, offsetof(struct swf_node, slot)};
    const struct swf_guard guard = {guard_enter, guard_leave, rd, SWF_GUARD_UNWATCHED_};
    struct retiring ret = {r, 0};
    struct swfi_unsweep u = {
        .list = &list,
        .guard = &guard,
        .section_bound = r->section_bound,
        .batch = objs,
        .batch_cap = BATCH,
        .grow = false,
        .hand_over = retire,
        .arg = &ret,
    };
    swfi_unsweep(&u);
    return ret.err;
}

int swf_registry_deactivate(struct swf_registry *r)
{
    SWF_CHECK_ARG(r == NULL, EINVAL, "r is NULL");
    SWFI_BLOCKING_CALL();
    pthread_mutex_lock(&r->activation);
    if (!swfi_load_relaxed_32(&r->x_active)) {
        pthread_mutex_unlock(&r->activation);
        return swfi_fail(__func__, EALREADY, "r is not active");
    }
    /* Everything that can fail for want of memory first, while nothing has changed: an ENOMEM
     * here leaves r active, its objects published, and a retry can succeed. */
    struct swf_reader *rd = reader_get(r);
    if (rd == NULL) {
        pthread_mutex_unlock(&r->activation);
        return swfi_fail(__func__, ENOMEM, "no memory for this thread's epoch record");
    }
    /* After this no add assigns; every add that did published before we took the mutex. */
    set_active(r, 0);
    r->complete = 0;
    int err = unpublish_all(r, rd);
    barrier(r); /* the grace period after which the retired objects are free */
    swfi_fetch_add_relaxed_64(&r->x_deactivations, 1);
    pthread_mutex_unlock(&r->activation);
    finalise_ready(r, true);
    return err ? swfi_fail(__func__, err,
                           "no magazine for the deferred frees: freed after a synchronous grace "
                           "period instead")
               : 0;
}

/* ck_epoch_record.state of a registered record: CK_EPOCH_STATE_USED, private to src/ck_epoch.c
 * in every ck release (0 since the state was introduced). */
enum { EPOCH_RECORD_IN_USE = 0 };

/* ---- fork ----------------------------------------------------------------------------------- */

static struct swf_registry *of_owner(struct swfi_tls_owner *o)
{
    return SWF_CONTAINER_OF(o, struct swf_registry, owner);
}

/* The locks held across grace-period waits (deactivate holds activation, synchronize and
 * deactivate hold reclaim), in their nesting order. owner.c takes these of every registry before
 * any lock a reader inside a section may need: a reader of r that needs one of those, while
 * someone waits for it under r's reclaim and a fork waits for that reclaim, would never leave. */
static void fork_hold(struct swfi_tls_owner *o)
{
    struct swf_registry *r = of_owner(o);
    pthread_mutex_lock(&r->activation);
    pthread_mutex_lock(&r->reclaim);
}

/* The rest, later: writer (add and del) and records_lock (a thread's first read). */
static void fork_prepare(struct swfi_tls_owner *o)
{
    struct swf_registry *r = of_owner(o);
    pthread_mutex_lock(&r->writer);
    pthread_mutex_lock(&r->records_lock);
}

static void fork_parent(struct swfi_tls_owner *o)
{
    struct swf_registry *r = of_owner(o);
    pthread_mutex_unlock(&r->records_lock);
    pthread_mutex_unlock(&r->writer);
    pthread_mutex_unlock(&r->reclaim);
    pthread_mutex_unlock(&r->activation);
}

/*
 * In the child only the forking thread exists, and fork_hold and fork_prepare held every lock, so
 * no add, del, activation or grace-period wait was in progress. Readers of other threads may have
 * been inside a section: their threads are gone, and a grace period must not wait for them, so
 * their records are marked inactive and given up for recycling. The forking thread's own reader
 * stays as it was (a fork inside one's own read section is not supported: registry.h).
 */
static void fork_child(struct swfi_tls_owner *o)
{
    struct swf_registry *r = of_owner(o);
    struct swf_reader *mine = swfi_tls_get(&r->owner);
    for (struct swf_reader *rd = r->records; rd != NULL; rd = rd->next_all) {
        if (rd == mine || swfi_load_relaxed_uint(&rd->rec.state) != EPOCH_RECORD_IN_USE)
            continue;
        swfi_store_relaxed_uint(&rd->rec.active, 0);
        ck_epoch_unregister(&rd->rec);
    }
    pthread_mutex_init(&r->activation, NULL);
    pthread_mutex_init(&r->writer, NULL);
    pthread_mutex_init(&r->reclaim, NULL);
    pthread_mutex_init(&r->records_lock, NULL);
}

static const struct swfi_owner_ops registry_owner_ops = {
    .release = reader_release,
    .fork_hold = fork_hold,
    .fork_prepare = fork_prepare,
    .fork_parent = fork_parent,
    .fork_child = fork_child,
    .fork_rank = 0, /* before the caches: a registry takes refill locks while holding its own */
};

/* ---- create, destroy, stats ------------------------------------------------------------------ */

int swf_registry_create(const struct swf_registry_config *cfg, struct swf_registry **out)
{
    SWF_CHECK_ARG(cfg == NULL, EINVAL, "cfg is NULL");
    SWF_CHECK_ARG(out == NULL, EINVAL, "out is NULL");
    SWF_CHECK_ARG(cfg->cache == NULL, EINVAL, "cfg->cache is NULL");
    SWF_CHECK_ARG(cfg->init == NULL, EINVAL, "cfg->init is NULL");
    SWF_CHECK_ARG(cfg->reserve == 0, EINVAL, "cfg->reserve is 0");
    SWF_CHECK_ARG(cfg->reserve > SWF_SWEEP_RESERVE_MAX, EINVAL,
                  "cfg->reserve is above SWF_SWEEP_RESERVE_MAX");
    struct swf_registry *r;
    if (posix_memalign((void **)&r, 64, sizeof(*r)) != 0)
        return swfi_fail(__func__, ENOMEM, "no memory for the registry");
    memset(r, 0, sizeof(*r));
    r->cache = cfg->cache;
    r->init = cfg->init;
    r->init_arg = cfg->init_arg;
    r->reserve = cfg->reserve;
    /* The registry's list can always pin: SWF_SWEEP_SECTION_BOUND_AUTO is the default bound. */
    r->section_bound = swf_section_bound_of_(cfg->section_bound, &registry_ops);
    r->owner.ops = &registry_owner_ops;
    CK_LIST_INIT(&r->members);
    pthread_mutex_init(&r->writer, NULL);
    pthread_mutex_init(&r->activation, NULL);
    pthread_mutex_init(&r->reclaim, NULL);
    pthread_mutex_init(&r->records_lock, NULL);
    ck_epoch_init(&r->epoch);
    ck_epoch_register(&r->epoch, &r->wrec, NULL);
    int err = swfi_tls_owner_register(&r->owner);
    if (err != 0) {
        free(r);
        return swfi_fail(__func__, err, "SWF_CACHE_MAX caches and registries are alive");
    }
    swfi_cache_use(r->cache, SWFI_CACHE_USER_REGISTRY); /* until destroy */
    *out = r;
    return 0;
}

int swf_registry_destroy(struct swf_registry *r)
{
    SWF_CHECK_ARG(r == NULL, EINVAL, "r is NULL");
    SWFI_BLOCKING_CALL();
    if (swfi_load_relaxed_32(&r->x_active))
        return swfi_fail(__func__, EBUSY, "r is active");
    if (swfi_load_relaxed_64(&r->x_members) != 0)
        return swfi_fail(__func__, EBUSY, "members are linked");
    swf_registry_synchronize(r);
    swfi_cache_unuse(r->cache, SWFI_CACHE_USER_REGISTRY); /* its last object went back above */
    swfi_tls_owner_unregister(&r->owner);
    for (struct swf_reader *rd = r->records, *next; rd != NULL; rd = next) {
        next = rd->next_all;
        free(rd);
    }
    pthread_mutex_destroy(&r->writer);
    pthread_mutex_destroy(&r->activation);
    pthread_mutex_destroy(&r->reclaim);
    pthread_mutex_destroy(&r->records_lock);
    free(r);
    return 0;
}

int swf_registry_stats(struct swf_registry *r, struct swf_registry_stats *out)
{
    SWF_CHECK_ARG(r == NULL, EINVAL, "r is NULL");
    SWF_CHECK_ARG(out == NULL, EINVAL, "out is NULL");
    struct swf_registry_stats s;
    memset(&s, 0, sizeof(s));
    s.members = swfi_load_relaxed_64(&r->x_members);
    s.active = swfi_load_relaxed_32(&r->x_active);
    s.activations = swfi_load_relaxed_64(&r->x_activations);
    s.deactivations = swfi_load_relaxed_64(&r->x_deactivations);
    s.assigned_by_add = swfi_load_relaxed_64(&r->x_assigned_by_add);
    s.assigned_by_sweep = swfi_load_relaxed_64(&r->x_assigned_by_sweep);
    s.lost_races = swfi_load_relaxed_64(&r->x_lost_races);
    s.unpublished = swfi_load_relaxed_64(&r->x_unpublished);
    s.released = swfi_load_relaxed_64(&r->x_released);
    s.pending_release = swfi_load_relaxed_64(&r->x_pending_release);
    s.longest_section = swfi_load_relaxed_64(&r->x_longest_section);
    s.sections = swfi_load_relaxed_64(&r->x_sections);
    s.cursor_restarts = swfi_load_relaxed_64(&r->x_cursor_restarts);
    *out = s;
    return 0;
}
