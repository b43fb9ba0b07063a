/*
 * lib/thread.c - the owner table, per-thread binding tables, the thread-exit hook and the fork
 * handlers (see thread.h).
 */
#include "thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

SWF_API __thread struct swf_thread_ swf_thread_self_ __attribute__((tls_model("initial-exec")));

#define PIN_BITS 16
#define PIN_MASK ((UINT64_C(1) << PIN_BITS) - 1)
#define TABLE_GRAIN 64 /* binding tables grow in steps of this many handles */

/* Owner words (id << 16 | pins) and the owner each live word belongs to. Registration and
 * unregistration are rare and may block: handle_lock keeps the free-slot search, the id counter
 * and the fork handlers simple. The lock-free paths never take it. */
static uint64_t owner_word[SWF_OWNERS_MAX];
static struct swf_tls_owner *owner_ptr[SWF_OWNERS_MAX];
static uint32_t x_handles_used; /* one past the highest handle ever given out */
static uint32_t first_free;     /* no handle below this one is free (under handle_lock) */
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;

static pthread_key_t exit_key;
static bool exit_key_ok;

static void release_binding(uint32_t handle, struct swf_binding_ *b)
{
    uint64_t *word = &owner_word[handle];
    uint64_t w = swf_load_acquire_64(word);
    for (;;) {
        if ((w >> PIN_BITS) != b->id)
            goto forget; /* the owner is gone, and its state with it */
        if ((w & PIN_MASK) == PIN_MASK) {
            sched_yield(); /* 65,535 pins at once (thread exit only): wait for one to go */
            w = swf_load_acquire_64(word);
            continue;
        }
        if (swf_cas_acq_rel_64(word, &w, w + 1))
            break;
    }
    /* Pinned: unregister cannot complete until we unpin, so the owner stays valid. The acquire
     * above pairs with the release in swf_tls_owner_register's store of the word, which followed
     * the owner pointer's store. */
    struct swf_tls_owner *o = swf_load_relaxed_ptr((void *const *)&owner_ptr[handle]);
    o->ops->release(o, b->state);
    uint64_t cur = swf_load_relaxed_64(word);
    while (!swf_cas_acq_rel_64(word, &cur, cur - 1))
        ;
forget:
    b->id = 0;
    b->state = NULL;
}

static void thread_exit_hook(void *arg)
{
    struct swf_thread_ *t = arg;
    for (uint32_t h = 0; h < t->cap; h++)
        if (t->table[h].id != 0)
            release_binding(h, &t->table[h]);
    free(t->table);
    t->table = NULL;
    t->cap = 0;
    t->armed = 0;
}

/* ---- fork ----------------------------------------------------------------------------------- */

enum { FORK_RANKS = 2 };

static void each_owner(int rank, bool reverse, void (*hook)(struct swf_tls_owner *))
{
    uint32_t used = swf_load_relaxed_32(&x_handles_used);
    for (uint32_t i = 0; i < used; i++) {
        uint32_t h = reverse ? used - 1 - i : i;
        struct swf_tls_owner *o = owner_ptr[h];
        if (swf_load_relaxed_64(&owner_word[h]) == 0 || o == NULL || o->ops->fork_rank != rank)
            continue;
        hook(o);
    }
}

static void call_prepare(struct swf_tls_owner *o)
{
    if (o->ops->fork_prepare)
        o->ops->fork_prepare(o);
}

static void call_parent(struct swf_tls_owner *o)
{
    if (o->ops->fork_parent)
        o->ops->fork_parent(o);
}

static void call_child(struct swf_tls_owner *o)
{
    if (o->ops->fork_child)
        o->ops->fork_child(o);
}

/* Take every lock of every owner, in rank order, with no owner coming or going meanwhile: the
 * child then starts with every structure in a state some thread left it in between operations. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&handle_lock);
    for (int rank = 0; rank < FORK_RANKS; rank++)
        each_owner(rank, false, call_prepare);
}

static void fork_parent(void)
{
    for (int rank = FORK_RANKS - 1; rank >= 0; rank--)
        each_owner(rank, true, call_parent);
    pthread_mutex_unlock(&handle_lock);
}

static void fork_child(void)
{
    for (int rank = 0; rank < FORK_RANKS; rank++)
        each_owner(rank, false, call_child);
    /* Threads that were releasing bindings at the fork do not exist here: drop their pins. */
    uint32_t used = swf_load_relaxed_32(&x_handles_used);
    for (uint32_t h = 0; h < used; h++)
        swf_store_relaxed_64(&owner_word[h], swf_load_relaxed_64(&owner_word[h]) & ~PIN_MASK);
    pthread_mutex_init(&handle_lock, NULL);
}

/* At load time: the exit key, and the fork handlers. */
__attribute__((constructor)) static void thread_init(void)
{
    exit_key_ok = pthread_key_create(&exit_key, thread_exit_hook) == 0;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- bindings ------------------------------------------------------------------------------- */

int swf_tls_prepare(const struct swf_tls_owner *o)
{
    struct swf_thread_ *t = &swf_tls_self;
    if (!t->armed) {
        if (!exit_key_ok || pthread_setspecific(exit_key, t) != 0)
            return ENOMEM;
        t->armed = 1;
    }
    uint32_t want = swf_load_relaxed_32(&x_handles_used);
    if (want <= o->head.handle)
        want = o->head.handle + 1;
    if (want <= t->cap)
        return 0;
    want = (want + TABLE_GRAIN - 1) / TABLE_GRAIN * TABLE_GRAIN;
    /* The bindings, then as many private slots (swf_tls_slot), in one block. */
    size_t bytes = want * (sizeof(struct swf_binding_) + sizeof(struct swf_tls_slot));
    struct swf_binding_ *table = malloc(bytes);
    if (table == NULL)
        return ENOMEM;
    memset(table, 0, bytes);
    swf_prefault(table, bytes); /* bindings and slots are written on lock-free paths */
    if (t->cap > 0) {
        memcpy(table, t->table, t->cap * sizeof(*table));
        memcpy(&table[want], &t->table[t->cap], t->cap * sizeof(struct swf_tls_slot));
    }
    free(t->table);
    t->table = table;
    t->cap = want;
    return 0;
}

void swf_tls_bind(const struct swf_tls_owner *o, void *state)
{
    struct swf_binding_ *b = &swf_tls_self.table[o->head.handle];
    b->state = state;
    b->id = o->head.id;
}

struct swf_tls_slot *swf_tls_slot(const struct swf_tls_owner *o)
{
    struct swf_thread_ *t = &swf_tls_self;
    if (o->head.handle >= t->cap)
        return NULL;
    struct swf_tls_slot *slot = (struct swf_tls_slot *)(void *)&t->table[t->cap] + o->head.handle;
    if (slot->id != o->head.id) {
        slot->id = o->head.id; /* a slot left by an owner that had this handle before */
        slot->block = NULL;
        slot->count = 0;
    }
    return slot;
}

void *swf_tls_unbind(const struct swf_tls_owner *o)
{
    struct swf_thread_ *t = &swf_tls_self;
    if (o->head.handle >= t->cap || t->table[o->head.handle].id != o->head.id)
        return NULL;
    struct swf_binding_ *b = &t->table[o->head.handle];
    void *state = b->state;
    b->id = 0;
    b->state = NULL;
    return state;
}

/* ---- owners --------------------------------------------------------------------------------- */

int swf_tls_owner_register(struct swf_tls_owner *o)
{
    int err = EAGAIN;
    pthread_mutex_lock(&handle_lock);
    uint32_t used = swf_load_relaxed_32(&x_handles_used);
    for (uint32_t h = first_free; h < SWF_OWNERS_MAX; h++) {
        if (h < used && swf_load_relaxed_64(&owner_word[h]) != 0)
            continue;
        o->head.id = next_id++;
        o->head.handle = h;
        first_free = h + 1;
        if (h >= used)
            swf_store_relaxed_32(&x_handles_used, h + 1);
        swf_store_relaxed_ptr((void **)&owner_ptr[h], o);
        /* Release: a thread that pins this word sees the owner pointer and the owner's fields. */
        swf_store_release_64(&owner_word[h], o->head.id << PIN_BITS);
        err = 0;
        break;
    }
    pthread_mutex_unlock(&handle_lock);
    return err;
}

void swf_tls_owner_unregister(struct swf_tls_owner *o)
{
    uint64_t *word = &owner_word[o->head.handle];
    uint64_t idle = o->head.id << PIN_BITS;
    pthread_mutex_lock(&handle_lock);
    /* Wait for exiting threads to finish with o: each holds a pin for a bounded, lock-free
     * release. The acquire on success orders their work on o before our teardown. */
    for (uint64_t w = idle; !swf_cas_acq_rel_64(word, &w, 0); w = idle)
        sched_yield();
    swf_store_relaxed_ptr((void **)&owner_ptr[o->head.handle], NULL);
    if (o->head.handle < first_free)
        first_free = o->head.handle;
    pthread_mutex_unlock(&handle_lock);
    (void)swf_tls_unbind(o);
}
