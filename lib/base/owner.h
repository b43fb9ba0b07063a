/*
 * lib/base/owner.h - library objects ("owners": caches and registries) and the per-thread state
 * each thread keeps for them, found without a lock and without collisions.
 *
 * Owners. Every cache and registry registers as an owner: it gets an id, unique for the life of
 * the process and never reused, and a handle, the lowest free slot of a global table of
 * SWF_OWNERS_MAX. At most SWF_OWNERS_MAX owners are alive at once.
 *
 * Bindings. Each thread has a binding table indexed by handle: entry h holds (owner id, state)
 * for the owner that had handle h when the thread bound to it. Finding this thread's state for an
 * owner is an initial-exec TLS load, a bounds check, and a compare of the id: no hashing, so no
 * two owners a thread uses ever evict each other. An entry left behind by a destroyed owner
 * carries a dead id and is overwritten by the next owner with that handle.
 *
 * Preparing a thread (blocking, swfi_tls_prepare) arms its exit hook and sizes its table; the lock-
 * free paths never allocate, never call pthread_setspecific and never resize the table, so a
 * thread that was never prepared simply has no bindings and works on the owners' shared paths.
 * This holds whatever pthread key the library got (a library loaded late with dlopen may get a
 * key above glibc's 32 in-place ones, whose first setspecific in a thread allocates).
 *
 * Giving a binding's state back at thread exit calls the owner's release function, which must be
 * lock-free. The owner might be destroyed concurrently, so the exiting thread first pins it in
 * the owner table: word = id << 16 | pins. Pinning succeeds only while the word carries the
 * owner's id; unregistering an owner clears the word once the pins drain, after which no thread
 * can reach it. A binding whose owner is gone is forgotten: its state died with the owner.
 *
 * fork: the library's pthread_atfork handlers call each owner's fork hooks (struct swfi_owner_ops)
 * around a fork: first every owner's fork_hold (the locks held across grace-period waits), with
 * the owner pinned and the owner table not locked, then, with the owner table locked so that no
 * owner comes or goes meanwhile, every fork_prepare, registries before caches (their locks nest
 * in that order). In the child, pins held by threads that no longer exist are dropped, and so is
 * the count of threads sleeping in a grace-period wait.
 *
 * dlclose: the exit hook is a pthread key destructor that points into this library, so the shared
 * library is linked with -z nodelete: dlclose leaves it mapped, and a thread exiting afterwards
 * still finds its code; a later dlopen returns the same instance.
 */
#ifndef SWF_LIB_OWNER_H
#define SWF_LIB_OWNER_H

#include <stddef.h>
#include <stdint.h>

#include "sweepfill/abi/binding.h"

#include "base/atomic.h"

#define SWF_OWNERS_MAX 65536

struct swfi_tls_owner;

struct swfi_owner_ops {
    /* Give back a thread's state at its exit; lock-free; called with the owner pinned. */
    void (*release)(struct swfi_tls_owner *owner, void *state);
    /* Take the locks that the owner's threads hold while they wait for a grace period (hold,
     * may be NULL), before any lock that a reader inside a section may need; take every other
     * lock of the owner (prepare); release all of them (parent); make them usable again and drop
     * what threads that no longer exist held (child). */
    void (*fork_hold)(struct swfi_tls_owner *owner);
    void (*fork_prepare)(struct swfi_tls_owner *owner);
    void (*fork_parent)(struct swfi_tls_owner *owner);
    void (*fork_child)(struct swfi_tls_owner *owner);
    int fork_rank; /* hooks run by increasing rank: a lock of rank 0 is taken before rank 1 */
};

/* An owner starts with binding.h's struct swf_owner_head_, which the inline path reads: id
 * (unique, never 0, < 2^48), handle (index in the owner table and in every thread's binding
 * table), and x_slow (caches: calls must go to the library). */
struct swfi_tls_owner {
    struct swf_owner_head_ head;
    const struct swfi_owner_ops *ops;
};

/* The calling thread's own record is binding.h's struct swf_thread_ (the inline path reads it), in
 * initial-exec TLS: a few words, so that the static TLS a late dlopen draws from is not strained.
 * Its table holds struct swf_binding_ entries (id, state). */
#define swf_tls_self swf_thread_self_

/* The calling thread's state for o, or NULL. Wait-free; no allocation. */
static inline void *swfi_tls_get(const struct swfi_tls_owner *o)
{
    const struct swf_thread_ *t = &swf_tls_self;
    uint32_t h = o->head.handle;
    if (h >= t->cap)
        return NULL;
    const struct swf_binding_ *b = &t->table[h];
    return b->id == o->head.id ? b->state : NULL;
}

/* Whether swfi_tls_bind(o, ...) can run now without allocating: the thread was prepared and its
 * table reaches o's handle. */
static inline int swfi_tls_bindable(const struct swfi_tls_owner *o)
{
    return o->head.handle < swf_tls_self.cap;
}

/* Arm the calling thread's exit hook and make its table reach o's handle (and every handle in
 * use). Blocking (allocates). Returns 0 or ENOMEM (the thread then stays as it was). */
int swfi_tls_prepare(const struct swfi_tls_owner *o);

/* Bind state to the calling thread for o. Requires swfi_tls_bindable(o). Wait-free. */
void swfi_tls_bind(const struct swfi_tls_owner *o, void *state);

/*
 * A private slot per thread and owner, beside the binding table: the owner's own per-thread
 * words that must outlive a binding (a cache's numbering of the thread's NOWAIT calls for failure
 * injection survives flush). It lasts as long as the thread's table; reset when the handle
 * changes owner.
 */
struct swfi_tls_slot {
    uint64_t id;       /* the owner it belongs to */
    const void *block; /* owner-defined */
    uint64_t count;    /* owner-defined */
};

/* The calling thread's slot for o, or NULL if the thread was never prepared for o's handle.
 * Wait-free; no allocation. */
struct swfi_tls_slot *swfi_tls_slot(const struct swfi_tls_owner *o);

/* Forget the calling thread's binding for o (the caller gives the state back); returns the state
 * or NULL. Wait-free. */
void *swfi_tls_unbind(const struct swfi_tls_owner *o);

/* Give o a unique id and the lowest free handle. Blocking. Returns 0, or EAGAIN when
 * SWF_OWNERS_MAX owners are alive. */
int swfi_tls_owner_register(struct swfi_tls_owner *o);

/* Make o unreachable for exiting threads, waiting until none holds it pinned; forget the
 * calling thread's binding. Blocking. */
void swfi_tls_owner_unregister(struct swfi_tls_owner *o);

#endif /* SWF_LIB_OWNER_H */
