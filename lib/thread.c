/*
 * lib/thread.c - per-thread bindings, the handle table and the thread-exit hook (see thread.h).
 */
#include "thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "util.h"

_Thread_local struct swf_tls swf_tls_self __attribute__((tls_model("initial-exec")));

#define HANDLE_PIN_BITS 16
#define HANDLE_PIN_MASK ((UINT64_C(1) << HANDLE_PIN_BITS) - 1)

/* Handle words (id << 16 | pins) and the owner each live word belongs to. */
static uint64_t handle_word[SWF_HANDLES_MAX];
static struct swf_tls_owner *handle_owner[SWF_HANDLES_MAX];

/* Registration and unregistration are rare and may block: one mutex keeps the free-slot search
 * and the id counter simple. The NOWAIT paths never take it. */
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;
static uint32_t handle_hint;

static pthread_key_t exit_key;
static bool exit_key_ok;

static void release_binding(struct swf_tls_binding *b)
{
    uint64_t *word = &handle_word[b->handle];
    uint64_t w = swf_load_acquire_64(word);
    for (;;) {
        if ((w >> HANDLE_PIN_BITS) != b->id)
            goto forget; /* the owner is gone, and its state with it */
        if ((w & HANDLE_PIN_MASK) == HANDLE_PIN_MASK) {
            w = swf_load_acquire_64(word); /* 65,535 pins at once: wait for one to go */
            continue;
        }
        if (swf_cas_acq_rel_64(word, &w, w + 1))
            break;
    }
    /* Pinned: unregister cannot complete until we unpin, so the owner stays valid. The acquire
     * above pairs with the release in swf_tls_owner_register's store of the word, which followed
     * the owner pointer's store. */
    struct swf_tls_owner *o = swf_load_relaxed_ptr((void *const *)&handle_owner[b->handle]);
    o->release(o, b->state);
    uint64_t cur = swf_load_relaxed_64(word);
    while (!swf_cas_acq_rel_64(word, &cur, cur - 1))
        ;
forget:
    b->id = 0;
    b->state = NULL;
}

static void thread_exit_hook(void *arg)
{
    struct swf_tls *t = arg;
    for (int i = 0; i < SWF_TLS_WAYS; i++)
        if (t->way[i].id != 0)
            release_binding(&t->way[i]);
    t->armed = 0;
}

/* Run at load time so that the key is one of the first a process creates (see thread.h). */
__attribute__((constructor)) static void create_exit_key(void)
{
    exit_key_ok = pthread_key_create(&exit_key, thread_exit_hook) == 0;
}

void swf_tls_bind(struct swf_tls_owner *o, void *state)
{
    struct swf_tls_binding *b = &swf_tls_self.way[o->id % SWF_TLS_WAYS];
    if (b->id != 0 && b->id != o->id)
        release_binding(b);
    b->handle = o->handle;
    b->state = state;
    b->id = o->id;
    if (SWF_UNLIKELY(!swf_tls_self.armed) && exit_key_ok) {
        /* One of the first 32 keys: glibc stores the value in the thread descriptor in place. */
        pthread_setspecific(exit_key, &swf_tls_self);
        swf_tls_self.armed = 1;
    }
}

void *swf_tls_unbind(struct swf_tls_owner *o)
{
    struct swf_tls_binding *b = &swf_tls_self.way[o->id % SWF_TLS_WAYS];
    if (b->id != o->id)
        return NULL;
    void *state = b->state;
    b->id = 0;
    b->state = NULL;
    return state;
}

int swf_tls_owner_register(struct swf_tls_owner *o)
{
    int err = EAGAIN;
    pthread_mutex_lock(&handle_lock);
    for (uint32_t n = 0; n < SWF_HANDLES_MAX; n++) {
        uint32_t h = (handle_hint + n) % SWF_HANDLES_MAX;
        if (swf_load_relaxed_64(&handle_word[h]) != 0)
            continue;
        o->id = next_id++;
        o->handle = h;
        handle_hint = h + 1;
        swf_store_relaxed_ptr((void **)&handle_owner[h], o);
        /* Release: a thread that pins this word sees the owner pointer and the owner's fields. */
        swf_store_release_64(&handle_word[h], o->id << HANDLE_PIN_BITS);
        err = 0;
        break;
    }
    pthread_mutex_unlock(&handle_lock);
    return err;
}

void swf_tls_owner_unregister(struct swf_tls_owner *o)
{
    uint64_t *word = &handle_word[o->handle];
    uint64_t idle = o->id << HANDLE_PIN_BITS;
    /* Wait for releasing threads to finish with o: each holds a pin for a bounded, lock-free
     * release. The acquire on success orders their work on o before our teardown. */
    for (uint64_t w = idle; !swf_cas_acq_rel_64(word, &w, 0); w = idle)
        sched_yield();
    (void)swf_tls_unbind(o);
}
