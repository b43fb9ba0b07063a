/*
 * sweepfill/registry.h - a live registry of members with an activation protocol: what the kernel
 * has for its tasks, as one component.
 *
 * Members embed a struct swf_node (a CK_LIST link and the slot). The registry keeps them on a
 * CK_LIST with a writer mutex for add and del, and ck_epoch read-side sections for readers, with
 * the epoch records of reading threads managed for them. A registry is *active* or not. When
 * swf_registry_activate returns 0, every member linked at that moment has an object in its slot,
 * members added while it ran included, and while active add links no member without one. del
 * and deactivate free objects after a grace period: a reader that still holds one stays safe
 * until it leaves its section.
 *
 * The activation protocol (why it is exact: docs/design.md, '3. The registry: activation
 * protocol'; the Promela models: docs/model/):
 *   - The active flag is written only under the writer mutex, by activate and deactivate.
 *   - add, under the same mutex, reads the flag, and if it is set allocates the object (NOWAIT),
 *     initialises it and publishes it with a release store, then links the member
 *     (CK_LIST_INSERT_HEAD), all before unlocking. If NOWAIT finds nothing, add unlocks,
 *     allocates with WAIT, locks again and starts over with that object in hand (freeing it if
 *     the flag went down meanwhile): no add or del ever waits for memory behind the mutex, and
 *     activate makes one object per member ready (swf_cache_grow, outside any section) before
 *     it sets the flag.
 *   - The activation sweep (RESUME, bounded sections) publishes with a CAS from NULL after a
 *     relaxed emptiness check, so it never overwrites a slot: each member gets one object.
 *   - deactivate clears the flag under the mutex, then takes every slot with an exchange (a
 *     bounded walk) and frees the objects after a grace period. Adds after the flag cleared
 *     assign nothing; adds before it published before the flag cleared, so the taking walk sees
 *     their objects. del and deactivate both take slots with an exchange, so each object is
 *     freed once.
 *
 * Synchronisation table ("-": may run concurrently from any threads; "X": keep them apart):
 *
 *                add   del   activate  deactivate  read section  stats  synchronize  destroy
 *   add           -     -       -          -            -          -        -           X
 *   del           -     -       -          -            -          -        -           X
 *   activate      -     -       -          -            -          -        -           X
 *   deactivate    -     -       -          -            -          -        -           X
 *   read section  -     -       -          -            -          -        -           X
 *   stats         -     -       -          -            -          -        -           X
 *   synchronize   -     -       -          -            X*         -        -           X
 *   destroy       X     X       X          X            X          X        X           X
 * (add and del serialise on the writer mutex; activate and deactivate on an activation mutex; a
 * thread must not add, del, activate, deactivate or synchronize while inside its own read
 * section: those wait for grace periods. *synchronize waits for every section to end.) The same
 * node must not be added and deleted concurrently.
 *
 * Read-side sections: swf_registry_read_lock enters one on the calling thread's reader, its epoch
 * record, registered on the thread's first read of the registry (one malloc and two pushes, or
 * the reuse of a record left by an exited thread: swf_registry_read_lock(3)). Later calls cost
 * a TLS lookup in a table indexed by the registry's handle (no registry or cache evicts
 * another's binding) and ck_epoch_begin (a store and a full fence) followed by an acquire fence
 * (sweepfill(7): weakly ordered machines). Sections nest. Inside one, walk with
 * SWF_REGISTRY_FOREACH and load slots with swf_node_object(): NULL, or an object whose
 * initialisation the reader sees. A thread's reader is given back when the thread exits.
 *
 * fork: the library's fork handlers take every registry's mutexes around fork(), so a fork waits
 * for an activate, deactivate or grace-period wait in progress; they take them in an order that
 * lets the readers a grace-period wait waits for always leave (docs/design.md, 'Embedding:
 * dlopen, fork, threads, limits'). In the child the registry is usable by its one thread: add,
 * del, activate, deactivate, synchronize, reads and destroy work; readers that other threads of
 * the parent had inside a section are treated as having left it, and grace-period waiters that
 * slept there as gone. Do not call fork() inside a read section, or from an init or release
 * callback: the handlers could wait for a grace period that the forking thread itself holds back.
 *
 * Signals: nothing here is async-signal-safe.
 *
 * Progress: read_lock/unlock, first/next and swf_node_object are lock-free (wait-free once the
 * thread's record exists; making it, on a thread's first read, blocks); read_unlock makes one
 * futex wake system call when a grace-period waiter sleeps, and none otherwise. add and del take
 * the writer mutex; add may wait for memory while active, but never while it holds the writer
 * mutex. activate, deactivate, synchronize and destroy block. Nothing blocks inside a read-side
 * section: the activation sweep leaves its section every section_bound visits. Waiting for a
 * grace period (synchronize, deactivate, destroy, and the cache's quiesce) spins through a few
 * scans of the readers, then sleeps on a futex that section ends wake, with a timeout of 50 us
 * doubling to 1 ms: the waiter does not take the CPU from the readers it waits for.
 *
 * Misuse that would wait for ever: activate, deactivate, synchronize and destroy called while a
 * read section of any sweepfill guard is open on the calling thread (swf_registry_read_lock
 * without its unlock included) abort at once with one line on stderr ("sweepfill:
 * swf_registry_deactivate: called inside a read-side section of a sweepfill guard on this
 * thread ..."). A grace-period wait that has not ended after SWF_WATCHDOG_SECONDS (5) seconds
 * (another thread's reader that does not unlock) prints one line on stderr, once per call, and
 * goes on waiting (sweep.h).
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

/* Embed one in each member; zero it (or swf_node_init) before its first add, and again after
 * its release callback was called before adding it again (see swf_registry_del). */
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

static inline void swf_node_init(struct swf_node *n)
{
    struct swf_node zero;
    memset(&zero, 0, sizeof(zero));
    *n = zero;
}

/* The member's object with acquire ordering (swf_slot_load): NULL, or initialised. */
static inline void *swf_node_object(const struct swf_node *n)
{
    return swf_slot_load(&n->slot);
}

struct swf_registry_config {
    struct swf_cache *cache; /* where objects come from; not owned; required */
    swf_init_fn *init;       /* init(obj, node, arg) before publication; required; must not
                                block (it runs inside the sweep's read section) */
    void *init_arg;
    size_t reserve;       /* the activation sweep's reserve (default 32) */
    size_t section_bound; /* visits per read-side section in activate and deactivate
                             (default SWF_SWEEP_SECTION_BOUND_AUTO: 1024, the registry's
                             list can always pin; 0 = unbounded) */
};

static inline void swf_registry_config_init(struct swf_registry_config *cfg)
{
    struct swf_registry_config d = {SWF_NULL_, SWF_NULL_, SWF_NULL_, SWF_SWEEP_RESERVE_DEFAULT,
                                    SWF_SWEEP_SECTION_BOUND_AUTO};
    *cfg = d;
}

struct swf_registry_stats {
    uint64_t members;     /* linked now */
    uint32_t active;      /* 1 while active */
    uint64_t activations; /* successful activate calls */
    uint64_t deactivations;
    uint64_t assigned_by_add;   /* objects published by add while active */
    uint64_t assigned_by_sweep; /* objects published by activation sweeps */
    uint64_t lost_races;        /* CAS publications that lost (the object went back) */
    uint64_t unpublished;       /* objects taken back by deactivate */
    uint64_t released;          /* deleted members finalised (object freed, release called) */
    uint64_t pending_release;   /* deleted members not yet finalised */
    uint64_t longest_section;   /* most visits in one read section of any activation sweep */
    uint64_t sections;          /* read sections entered by activation sweeps */
    uint64_t cursor_restarts;   /* times an activation sweep lost its pinned cursor */
};

/*
 * Create a registry. Returns 0; EINVAL (cfg/out NULL, cache or init NULL, reserve 0 or above
 * SWF_SWEEP_RESERVE_MAX); ENOMEM; EAGAIN (too many registries and caches alive). Blocking. From
 * here to swf_registry_destroy the registry uses cfg->cache: swf_cache_destroy of it returns
 * EBUSY until then.
 */
SWF_API int swf_registry_create(const struct swf_registry_config *cfg, struct swf_registry **out);

/*
 * Destroy an inactive, empty registry: waits for pending releases (a grace period), then frees
 * the registry and the epoch records of its readers. Returns 0; EINVAL (NULL); EBUSY, destroying
 * nothing, while members are linked or the registry is active. Exclusive: no other call on r may
 * run, and no thread may be inside a read section of r.
 */
SWF_API int swf_registry_destroy(struct swf_registry *r);

/*
 * Link n (zeroed: never added, finalised without a release callback, or swf_node_init'd after
 * its release) at the head. While the registry is active, first gives it an object (init runs on
 * it) so it is never linked without one.
 * Returns 0; EINVAL (r or n NULL, or n holds a state no node can be in: not zeroed); EEXIST (n is
 * linked, here or in another registry); EBUSY (n was deleted and is not finalised yet, or it was
 * finalised with a release callback and not swf_node_init'd since); ENOMEM (active and no object
 * could be had: n is not linked). Takes the writer mutex.
 */
SWF_API int swf_registry_add(struct swf_registry *r, struct swf_node *n);

/*
 * Unlink n. Once a grace period has passed and no activation sweep holds n pinned, n is
 * finalised from whichever thread gets there (a later del, activate, deactivate or synchronize,
 * never inside a read section): its object (if any) goes back to the cache, then
 *   - with release not NULL: release(n) is called, and from that call on n's memory is yours:
 *     the library never touches n again. An add of n returns EBUSY until you call
 *     swf_node_init(n) (inside release, or later): so no add can link n before release(n) has
 *     been called, and release never runs on a linked node. After swf_node_init, another thread
 *     may add n at once;
 *   - with release NULL: n becomes addable again (add returns EBUSY until then).
 * Returns 0; EINVAL (NULL); ENOENT (n is not linked in r).
 * Takes the writer mutex and the reclaim mutex; does not wait for the grace period. A full fence
 * orders the unlink before the grace period's epoch is read (sweepfill(7): weakly ordered
 * machines).
 */
SWF_API int swf_registry_del(struct swf_registry *r, struct swf_node *n,
                             void (*release)(struct swf_node *n));

/*
 * Switch on and sweep; stats (may be NULL) receives the sweep's statistics.
 * Returns 0: every member linked now has an object. EALREADY: already active and complete.
 * ENOMEM: the sweep ran out of memory; the registry stays active (adds keep assigning) and a
 * later activate retries the sweep. EINVAL (r NULL). Blocking; must not be called inside a read
 * section.
 */
SWF_API int swf_registry_activate(struct swf_registry *r, struct swf_sweep_stats *stats);

/*
 * Switch off, take every object back and free them after a grace period. Returns 0; EALREADY
 * (not active); EINVAL (NULL); ENOMEM, in one of two states: either no epoch record could be made
 * for the calling thread, and nothing changed (the registry is still active, every object still
 * published: retry later); or the registry was switched off and every object taken, but no
 * magazine could be had for the deferred frees, so they were freed after a synchronous grace
 * period instead (nothing leaks; the deactivation is complete). swf_registry_stats().active tells
 * the two apart. Blocking; not inside a read section.
 */
SWF_API int swf_registry_deactivate(struct swf_registry *r);

/* Wait for a grace period and finalise every deleted member that no sweep holds pinned.
 * Returns 0; EINVAL. Blocking; not inside a read section. */
SWF_API int swf_registry_synchronize(struct swf_registry *r);

/*
 * Enter a read section on the calling thread's reader for r (registered on first use). Returns
 * the reader to pass to swf_registry_read_unlock, or NULL with errno EINVAL (r NULL) or ENOMEM
 * (no record could be made). Blocking on a thread's first call for r (allocates); lock-free and
 * allocation-free afterwards, however many registries and caches the thread uses.
 */
SWF_API struct swf_reader *swf_registry_read_lock(struct swf_registry *r);
SWF_API void swf_registry_read_unlock(struct swf_reader *rd);

/* Inside a read section: the first member, and the one after n (NULL at the end). */
SWF_API struct swf_node *swf_registry_first(struct swf_registry *r);
SWF_API struct swf_node *swf_registry_next(struct swf_registry *r, struct swf_node *n);

#define SWF_REGISTRY_FOREACH(r, n) \
    for ((n) = swf_registry_first(r); (n) != SWF_NULL_; (n) = swf_registry_next((r), (n)))

/* Fill *out. Lock-free. Returns 0; EINVAL. */
SWF_CXX_SHADOW_OFF_
SWF_API int swf_registry_stats(struct swf_registry *r, struct swf_registry_stats *out);
SWF_CXX_SHADOW_ON_

#ifdef __cplusplus
}
#endif

#endif /* SWEEPFILL_REGISTRY_H */
