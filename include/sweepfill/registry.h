/*
 * sweepfill/registry.h - a live registry of members with an activation protocol: what the kernel
 * has for its tasks, as one component.
 *
 * Members embed a struct swf_node (a CK_LIST link and the slot). A registry keeps them on a
 * CK_LIST, changed under a writer mutex and read in ck_epoch read-side sections on epoch records
 * it manages for the reading threads. It is active or not: from an activation that returns 0
 * until the next deactivation, every linked member has an object from the registry's cache in
 * its slot (swf_registry_activate(3)); objects are freed only after a grace period. The protocol
 * and why it is exact: docs/design.md, '3. The registry: activation protocol', and the Promela
 * models in docs/model/.
 *
 * Synchronisation table ("-": may run concurrently from any threads; "X": keep them apart):
 *
 *                add   del   activate  deactivate  read section  stats  synchronize  destroy
 *   add           -     -       -          -            -          -        -           X
 *   del           -     -       -          -            -          -        -           X
 *   activate      -     -       -          -            -          -        -           X
 *   deactivate    -     -       -          -            -          -        -           X
 *   read section  -     -       -          -            -          -        X*          X
 *   stats         -     -       -          -            -          -        -           X
 *   synchronize   -     -       -          -            X*         -        -           X
 *   destroy       X     X       X          X            X          X        X           X
 * (add and del serialise on the writer mutex; activate and deactivate on an activation mutex. A
 * thread must not add, del, activate, deactivate or synchronize while inside its own read
 * section. *synchronize waits for every section to end.) The same node must not be added and
 * deleted concurrently.
 *
 * fork: a fork() waits for an activate, deactivate or grace-period wait in progress. In the
 * child the registry is usable by its one thread: add, del, activate, deactivate, synchronize,
 * reads and destroy work; readers that other threads of the parent had inside a section are
 * treated as having left it, and grace-period waiters that slept there as gone. Do not call
 * fork() inside a read section, or from an init or release callback (swf_registry_create(3)).
 *
 * Signals: nothing here is async-signal-safe.
 */
#ifndef SWEEPFILL_REGISTRY_H
#define SWEEPFILL_REGISTRY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ck_queue.h>

#include "api.h"
#include "cache.h"
#include "list.h"
#include "sweep.h"

#ifdef __cplusplus
extern "C" {
#endif

struct swf_registry;
struct swf_reader; /* a thread's epoch record for a registry */

/* Embed one in each member: the link and the slot; the other fields are the registry's. */
struct swf_node {
    CK_LIST_ENTRY(swf_node) link;
    void *slot;                    /* the member's object: read with swf_node_object() */
    uint32_t x_ref;                /* pins, plus a release-pending bit */
    uint32_t x_state;              /* unlinked, linked, deleted (awaiting release) */
    struct swf_registry *registry; /* set by add */
    void (*release)(struct swf_node *);
    struct swf_node *x_orphan_next; /* released by an unpin: awaiting finalisation */
    void *epoch_entry[2];           /* a ck_epoch_entry_t, opaque here (C++ friendliness) */
};

/*
 * Zero n: the state a node must be in before its first add, and again, after its release
 * callback was called (swf_registry_del()), before it is added again.
 *
 * Concurrency: it touches only n, which no other thread may be using: not linked, and not
 * awaiting release.
 * Progress: wait-free.
 * Ordering: plain stores; n reaches the thread that adds it by the caller's own synchronisation.
 * Returns: nothing.
 * Errors: none; it cannot fail (n is not checked: it must not be NULL).
 */
static inline void swf_node_init(struct swf_node *n)
{
    struct swf_node zero;
    memset(&zero, 0, sizeof(zero));
    *n = zero;
}

/*
 * The object in n's slot, or NULL.
 *
 * Concurrency: any thread, while n's memory is valid. An object it returns inside a read
 * section stays valid until that section ends: a deactivation or a deletion frees it only after.
 * Progress: wait-free: one load.
 * Ordering: an acquire load (swf_slot_load(3)) that pairs with the release store or
 * compare-and-swap that published the object after its initialisation, so the caller sees the
 * object initialised.
 * Returns: the object, or NULL.
 * Errors: none; it cannot fail (n is not checked: it must not be NULL).
 */
static inline void *swf_node_object(const struct swf_node *n)
{
    return swf_slot_load(&n->slot);
}

struct swf_registry_config {
    struct swf_cache *cache; /* where objects come from; not owned; required; used from
                                swf_registry_create() to swf_registry_destroy() */
    swf_init_fn *init;       /* init(obj, node, init_arg) before publication; required; must
                                not block (it runs inside the sweep's read section) */
    void *init_arg;
    size_t reserve;       /* the activation sweep's reserve, 1 to SWF_SWEEP_RESERVE_MAX
                             (default SWF_SWEEP_RESERVE_DEFAULT, 32) */
    size_t section_bound; /* visits per read-side section in activate and deactivate
                             (default SWF_SWEEP_SECTION_BOUND_AUTO: 1024, the registry's
                             list can always pin; 0 = unbounded) */
};

/*
 * Fill cfg with the defaults that the fields' comments give, and cache, init and init_arg with
 * NULL: set cache and init, which are required.
 *
 * Concurrency: any thread, at any time; it touches only cfg.
 * Progress: wait-free.
 * Ordering: none.
 * Returns: nothing.
 * Errors: none; it cannot fail (cfg is not checked: it must not be NULL).
 */
static inline void swf_registry_config_init(struct swf_registry_config *cfg)
{
    struct swf_registry_config d = {SWF_NULL_, SWF_NULL_, SWF_NULL_, SWF_SWEEP_RESERVE_DEFAULT,
                                    SWF_SWEEP_SECTION_BOUND_AUTO};
    *cfg = d;
}

struct swf_registry_stats {
    uint64_t members;           /* linked now */
    uint32_t active;            /* 1 while active, else 0 */
    uint64_t activations;       /* successful activate calls */
    uint64_t deactivations;     /* deactivate calls that switched the registry off */
    uint64_t assigned_by_add;   /* objects published by add while active */
    uint64_t assigned_by_sweep; /* objects published by activation sweeps */
    uint64_t lost_races;        /* CAS publications that lost (the object went back) */
    uint64_t unpublished;       /* objects taken back by deactivate */
    uint64_t released;          /* deleted members finalised (swf_registry_del(3)) */
    uint64_t pending_release;   /* deleted members not yet finalised */
    uint64_t longest_section;   /* most visits in one read section of any activation sweep */
    uint64_t sections;          /* read sections entered by activation sweeps */
    uint64_t cursor_restarts;   /* times an activation sweep lost its pinned cursor and started
                                   again from the head */
};

/*
 * Create a registry from cfg and store it in *out.
 *
 * Concurrency: any thread, at any time. From here to swf_registry_destroy() the registry uses
 * cfg->cache: swf_cache_destroy() of it returns EBUSY until then.
 * Progress: blocking; it allocates.
 * Ordering: none: the caller hands *out to other threads with its own synchronisation.
 * Returns: 0, or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: cfg or out is NULL, cfg->cache or cfg->init is NULL, or cfg->reserve is 0 or above
 * SWF_SWEEP_RESERVE_MAX.
 * ENOMEM: out of memory.
 * EAGAIN: SWF_CACHE_MAX caches and registries are alive.
 */
SWF_API int swf_registry_create(const struct swf_registry_config *cfg, struct swf_registry **out);

/*
 * Destroy r, inactive and with no member linked: finalise the deleted members after a grace
 * period, free r and its readers' epoch records, and stop using r's cache.
 *
 * Concurrency: exclusive: no other call on r may run, and no thread may be inside a read section
 * of r. Called inside a read section of any sweepfill guard on the calling thread, it aborts
 * with one line on stderr.
 * Progress: blocking: it waits for a grace period as swf_registry_synchronize() does.
 * Ordering: none beyond what the grace period orders (swf_registry_del()).
 * Returns: 0, or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: r is NULL.
 * EBUSY: members are linked or r is active; nothing was destroyed.
 */
SWF_API int swf_registry_destroy(struct swf_registry *r);

/*
 * Link n, zeroed (swf_node_init()), at the head of r; while r is active, give n an object first,
 * so that it is never linked without one.
 *
 * Concurrency: any thread, concurrently with every call on r but swf_registry_destroy() and a
 * swf_registry_del() of the same n; not by a thread inside its own read section.
 * Progress: blocking: it takes the writer mutex; while r is active it may wait for memory, but
 * never while it holds the writer mutex.
 * Ordering: the object, initialised by init, is published with a release store before n is
 * linked with another, so a reader that reaches n sees everything the caller wrote to n before
 * the add, and swf_node_object() the object initialised. r's active flag is read and written
 * only under the writer mutex, which orders every add before or after each change of it.
 * Returns: 0, or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: r or n is NULL, or n holds a state no node can be in: it was not zeroed.
 * EEXIST: n is linked, in r or in another registry.
 * EBUSY: n was deleted and is not finalised yet, or it was finalised with a release callback
 * and not passed to swf_node_init() since.
 * ENOMEM: r is active and no object could be had; n is not linked.
 */
SWF_API int swf_registry_add(struct swf_registry *r, struct swf_node *n);

/*
 * Unlink n from r; it is finalised after a grace period (its object freed, then release(n)
 * called when release is not NULL), without this call waiting for that.
 *
 * Concurrency: any thread, concurrently with every call on r but swf_registry_destroy() and a
 * swf_registry_add() of the same n; not by a thread inside its own read section. release(n) runs
 * on whichever thread finalises n, never inside a read section.
 * Progress: blocking: it takes the writer mutex, then the reclaim mutex, which another thread's
 * grace-period wait can hold; it never waits for a grace period of its own.
 * Ordering: a full fence orders the unlink before the grace period's epoch is read
 * (sweepfill(7): weakly ordered machines). release(n) is called after a grace period: no read
 * section that could reach n through the list is still running, and whatever those readers did
 * happens-before it.
 * Returns: 0, or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: r or n is NULL.
 * ENOENT: n is not linked in r.
 */
SWF_API int swf_registry_del(struct swf_registry *r, struct swf_node *n,
                             void (*release)(struct swf_node *n));

/*
 * Switch r on and sweep its members so that each has an object; stats, when not NULL, receives
 * the sweep's statistics.
 *
 * Concurrency: any thread, concurrently with every call on r but swf_registry_destroy();
 * activations and deactivations of r serialise on its activation mutex. Called inside a read
 * section of any sweepfill guard on the calling thread, it aborts with one line on stderr.
 * Progress: blocking, between its read sections: it grows the cache, allocates with SWF_WAIT and
 * takes mutexes. Nothing blocks inside its read sections, and each lasts at most section_bound
 * visits.
 * Ordering: every object is initialised before the compare-and-swap or store that publishes it
 * with release ordering, so a swf_node_object() that returns it sees it initialised. The writer
 * mutex orders each add before or after the flag goes up.
 * Returns: 0, when every member linked at that moment has an object in its slot, members added
 * while it ran included; or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: r is NULL.
 * EALREADY: r is already active and complete.
 * ENOMEM: the sweep ran out of memory, or no epoch record could be made for the calling thread;
 * r stays active, adds keep assigning objects, and a later activate retries the sweep.
 */
SWF_API int swf_registry_activate(struct swf_registry *r, struct swf_sweep_stats *stats);

/*
 * Switch r off, take every object back and free them after a grace period.
 *
 * Concurrency: any thread, concurrently with every call on r but swf_registry_destroy();
 * activations and deactivations of r serialise on its activation mutex. Called inside a read
 * section of any sweepfill guard on the calling thread, it aborts with one line on stderr.
 * Progress: blocking: it waits for a grace period as swf_registry_synchronize() does, between
 * its read sections. Nothing blocks inside these, and each lasts at most section_bound visits.
 * Ordering: an object taken back is freed only after a grace period: every read section that
 * could have loaded it has ended, and what it did happens-before the free. Each object is freed
 * once: del and deactivate both take slots with an exchange.
 * Returns: 0, or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: r is NULL.
 * EALREADY: r is not active.
 * ENOMEM: in one of two states, which the active field of swf_registry_stats() tells apart:
 * - no epoch record could be made for the calling thread, and nothing changed: r is still
 * active, every object still published; retry later;
 * - r was switched off and every object taken, but no magazine could be had for the deferred
 * frees, so they were freed after a synchronous grace period instead: nothing leaks, and the
 * deactivation is complete.
 */
SWF_API int swf_registry_deactivate(struct swf_registry *r);

/*
 * Wait for a grace period of r, then finalise every deleted member that no activation sweep
 * holds pinned.
 *
 * Concurrency: any thread, concurrently with every call on r but swf_registry_destroy(); it
 * waits for every read section of r to end. Called inside a read section of any sweepfill guard
 * on the calling thread, it aborts with one line on stderr.
 * Progress: blocking. The wait scans the readers a few times, then sleeps on a futex that each
 * section's end wakes, with a timeout of 50 us doubled up to 1 ms: the waiter leaves the CPU to
 * the readers it waits for. A wait still going after SWF_WATCHDOG_SECONDS seconds prints one line
 * on stderr, once per call, and goes on (sweep.h, swf_synchronize_epoch(3)).
 * Ordering: what the readers of r did in sections that ended before the grace period
 * happens-before the release callbacks it calls and its return.
 * Returns: 0, or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: r is NULL.
 */
SWF_API int swf_registry_synchronize(struct swf_registry *r);

/*
 * Enter a read section of r on the calling thread's reader, its epoch record for r, made on the
 * thread's first read of r.
 *
 * Concurrency: any thread, concurrently with every call on r but swf_registry_destroy();
 * sections nest. The reader returned belongs to the calling thread, and is given back when that
 * thread exits. A thread inside a section must not add, del, activate, deactivate or
 * synchronize, nor call fork().
 * Progress: blocking on a thread's first call for r, which allocates; afterwards lock-free,
 * wait-free and allocation-free, however many registries and caches the thread uses.
 * Ordering: a section is a ck_epoch section with an acquire fence after ck_epoch_begin()
 * (sweepfill(7): weakly ordered machines): memory reached through the list inside it stays
 * valid until it ends.
 * Returns: the reader, to pass to swf_registry_read_unlock(), or NULL with errno set (and
 * swf_error_reason(3) saying why).
 * Errors: errno is set to:
 * EINVAL: r is NULL.
 * ENOMEM: no epoch record could be made.
 */
SWF_API struct swf_reader *swf_registry_read_lock(struct swf_registry *r);

/*
 * Leave the read section that swf_registry_read_lock() entered on rd.
 *
 * Concurrency: only the thread that obtained rd, inside a section it entered on rd.
 * Progress: lock-free; it makes one futex wake system call when a grace-period waiter sleeps,
 * and none otherwise.
 * Ordering: what the thread did inside the section happens-before the end of every grace period
 * that waits for the section.
 * Returns: nothing.
 * Errors: none; it cannot fail, and does nothing with a NULL rd.
 */
SWF_API void swf_registry_read_unlock(struct swf_reader *rd);

/*
 * Inside a read section of r: the first member of r, and the member after n.
 * SWF_REGISTRY_FOREACH(r, n) walks every member with them.
 *
 * Concurrency: any thread inside a read section of r, concurrently with every call on r but
 * swf_registry_destroy(); a member reached stays valid until the section ends.
 * Progress: wait-free, one load a step; a walk takes as many steps as there are members.
 * Ordering: each loads the list's links with acquire, so a reader that reaches a member
 * sees everything its adder wrote before the add.
 * Returns: swf_registry_first() and swf_registry_next() return a member, or NULL at the end;
 * swf_registry_first() returns NULL for a NULL r, and swf_registry_next() for a NULL n.
 * Errors: none; they cannot fail.
 */
SWF_API struct swf_node *swf_registry_first(struct swf_registry *r);
SWF_API struct swf_node *swf_registry_next(struct swf_registry *r, struct swf_node *n);
#define SWF_REGISTRY_FOREACH(r, n) \
    for ((n) = swf_registry_first(r); (n) != SWF_NULL_; (n) = swf_registry_next((r), (n)))

/*
 * Fill out with a snapshot of r's counters (the fields' comments say what each counts).
 *
 * Concurrency: any thread, concurrently with every call on r but swf_registry_destroy().
 * Progress: lock-free: relaxed loads, no lock, no system call.
 * Ordering: none: each field was current at some instant during the call; the fields agree with
 * each other only when nothing else uses r meanwhile.
 * Returns: 0, or an error number, for which swf_error_reason(3) says why.
 * Errors:
 * EINVAL: r or out is NULL.
 */
SWF_CXX_SHADOW_OFF_
SWF_API int swf_registry_stats(struct swf_registry *r, struct swf_registry_stats *out);
SWF_CXX_SHADOW_ON_

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_REGISTRY_H */
