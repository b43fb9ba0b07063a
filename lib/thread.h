/*
 * lib/thread.h - per-thread state for library objects (caches), found without a lock.
 *
 * Each thread has a small table of bindings in initial-exec TLS, so finding this thread's state
 * for an object is a TLS load and a compare: binding i holds (owner id, state) for an owner whose
 * id maps to i. Owner ids come from a 64-bit counter and are never reused, so a binding left
 * behind by a destroyed owner can never be mistaken for a live one.
 *
 * Giving a binding's state back (on thread exit, or when a new owner needs the binding) calls the
 * owner's release function, which must be lock-free. The owner might be destroyed concurrently,
 * so the releasing thread first pins it in a global handle table: handle word = id << 16 | pins.
 * Pinning succeeds only while the word still carries the owner's id; unregistering an owner waits
 * for the pins to drain and then clears the word, after which no thread can reach it. A binding
 * whose owner is gone is simply forgotten: its state died with the owner's memory.
 *
 * Thread exit is observed with one pthread key, created when the library is loaded (so it is one
 * of the first 32 keys, for which glibc's pthread_setspecific is a plain store with no allocation
 * and no system call: arming it is legal on the NOWAIT path).
 */
#ifndef SWF_LIB_THREAD_H
#define SWF_LIB_THREAD_H

#include <stddef.h>
#include <stdint.h>

#include "atomic.h"

#define SWF_TLS_WAYS    16
#define SWF_HANDLES_MAX 4096

struct swf_tls_owner {
    uint64_t id;     /* unique, never 0; < 2^48 */
    uint32_t handle; /* slot in the handle table */
    /* Give back a thread's state; lock-free; called with the owner pinned. */
    void (*release)(struct swf_tls_owner *owner, void *state);
};

struct swf_tls_binding {
    uint64_t id;
    uint32_t handle;
    void *state;
};

struct swf_tls {
    struct swf_tls_binding way[SWF_TLS_WAYS];
    int armed; /* the exit hook is set for this thread */
};

extern _Thread_local struct swf_tls swf_tls_self __attribute__((tls_model("initial-exec")));

/* The calling thread's state for owner, or NULL. */
static inline void *swf_tls_get(const struct swf_tls_owner *o)
{
    const struct swf_tls_binding *b = &swf_tls_self.way[o->id % SWF_TLS_WAYS];
    return b->id == o->id ? b->state : NULL;
}

/* Bind state to the calling thread for o, first releasing whatever the binding held. Lock-free. */
void swf_tls_bind(struct swf_tls_owner *o, void *state);

/* Forget the calling thread's binding for o (the caller releases the state); returns it or NULL. */
void *swf_tls_unbind(struct swf_tls_owner *o);

/* Give o a unique id and a handle. Blocking. Returns 0 or EAGAIN (handle table full). */
int swf_tls_owner_register(struct swf_tls_owner *o);

/* Make o unreachable for releasing threads; waits until none holds it pinned. Blocking. */
void swf_tls_owner_unregister(struct swf_tls_owner *o);

#endif /* SWF_LIB_THREAD_H */
