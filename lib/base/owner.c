/*
 * lib/base/owner.c - the owner table, per-thread binding tables, the thread-exit hook and the fork
 * handlers (see owner.h).
 */
#include "base/owner.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

SWF_API __thread struct swf_thread_ swf_thread_self_ __attribute__((tls_model("initial-exec")));

#define PIN_BITS    16
#define PIN_MASK    ((UINT64_C(1) << PIN_BITS) - 1)
#define TABLE_GRAIN 64 /* binding tables grow in steps of this many handles */

/* Owner words (id << 16 | pins) and the owner each live word belongs to. Registration and
 * unregistration are rare and may block: handle_lock keeps the free-slot search, the id counter
 * and the fork handlers simple. The lock-free paths never take it. */
static uint64_t owner_word[SWF_OWNERS_MAX];
static struct swfi_tls_owner *owner_ptr[SWF_OWNERS_MAX];
static uint32_t x_handles_used; /* one past the highest handle ever given out */
static uint32_t first_free;     /* no handle below this one is free (under handle_lock) */
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;

static pthread_key_t exit_key;
static bool exit_key_ok;

static void release_binding(uint32_t handle, struct swf_binding_ *b)
{
    uint64_t *word = &owner_word[handle];
    uint64_t w = swfi_load_acquire_64(word);
    for (;;) {
        if ((w >> PIN_BITS) != b->id)
            goto forget; /* the owner is gone, and its state with it */
        if ((w & PIN_MASK) == PIN_MASK) {
            sched_yield(); /* 65,535 pins at once (thread exit only): wait for one to go */
            w = swfi_load_acquire_64(word);
            continue;
        }
        if (swfi_cas_acq_rel_64(word, &w, w + 1))
            break;
    }
    /* Pinned: unregister cannot complete until we unpin, so the owner stays valid. The acquire
     * above pairs with the release in swfi_tls_owner_register's store of the word, which followed
     * the owner pointer's store. */
    struct swfi_tls_owner *o = swfi_load_relaxed_ptr((void *const *)&owner_ptr[handle]);
    o->ops->release(o, b->state);
    uint64_t cur = swfi_load_relaxed_64(word);
    while (!swfi_cas_acq_rel_64(word, &cur, cur - 1))
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
    t->rseq = NULL; /* glibc unregisters the area as the thread exits */
}

/* ---- fork -----------------------------------------------------------------------------------
 *
 * Two kinds of locks, taken in this order. First every owner's fork_hold locks (a registry's
 * activation and reclaim mutexes): threads hold those while they wait for a grace period, that is
 * for readers inside a section, and such a reader may need any lock taken after them (a first
 * read of another registry takes its records mutex; creating a cache takes handle_lock; a WAIT
 * allocation takes a refill mutex). So they are taken with nothing else held, and not under
 * handle_lock: each owner is pinned instead, so that it cannot be unregistered while held. Then
 * handle_lock, under which no owner comes or goes, and every owner's fork_prepare locks in rank
 * order. An owner registered between the two steps sends the fork back to the first.
 */

enum { FORK_RANKS = 2 };

/* Forks serialise on fork_lock, which nothing else takes. Under it: `held`, one bit per handle
 * whose owner the forking thread has pinned and called fork_hold on. */
static pthread_mutex_t fork_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t held[SWF_OWNERS_MAX / 64];

static bool is_held(uint32_t h)
{
    return (held[h / 64] >> (h % 64)) & 1;
}

/* Pin whatever owner has handle h at this moment; false when none has it. */
static bool pin_any(uint32_t h)
{
    uint64_t *word = &owner_word[h];
    uint64_t w = swfi_load_acquire_64(word);
    for (;;) {
        if ((w >> PIN_BITS) == 0)
            return false;
        if ((w & PIN_MASK) == PIN_MASK) {
            sched_yield();
            w = swfi_load_acquire_64(word);
            continue;
        }
        if (swfi_cas_acq_rel_64(word, &w, w + 1))
            return true;
    }
}

static void unpin(uint32_t h)
{
    uint64_t cur = swfi_load_relaxed_64(&owner_word[h]);
    while (!swfi_cas_acq_rel_64(&owner_word[h], &cur, cur - 1))
        ;
}

/* Pin and hold every owner with a fork_hold that is not held yet; no other lock is held. */
static void hold_all(void)
{
    uint32_t used = swfi_load_relaxed_32(&x_handles_used);
    for (uint32_t h = 0; h < used; h++) {
        if (is_held(h) || !pin_any(h))
            continue;
        /* The pin's acquire pairs with registration's release: owner_ptr[h] is this owner. */
        struct swfi_tls_owner *o = swfi_load_relaxed_ptr((void *const *)&owner_ptr[h]);
        if (o == NULL || o->ops->fork_hold == NULL) {
            unpin(h);
            continue;
        }
        o->ops->fork_hold(o);
        held[h / 64] |= UINT64_C(1) << (h % 64);
    }
}

/* Under handle_lock: every registered owner with a fork_hold is held. */
static bool all_held(void)
{
    uint32_t used = swfi_load_relaxed_32(&x_handles_used);
    for (uint32_t h = 0; h < used; h++) {
        struct swfi_tls_owner *o = owner_ptr[h];
        if (swfi_load_relaxed_64(&owner_word[h]) != 0 && o != NULL && o->ops->fork_hold != NULL &&
            !is_held(h))
            return false;
    }
    return true;
}

static void unpin_held(void)
{
    for (uint32_t i = 0; i < SWF_OWNERS_MAX / 64; i++)
        for (; held[i] != 0; held[i] &= held[i] - 1)
            unpin(i * 64 + (uint32_t)__builtin_ctzll(held[i]));
}

static void each_owner(int rank, bool reverse, void (*hook)(struct swfi_tls_owner *))
{
    uint32_t used = swfi_load_relaxed_32(&x_handles_used);
    for (uint32_t i = 0; i < used; i++) {
        uint32_t h = reverse ? used - 1 - i : i;
        struct swfi_tls_owner *o = owner_ptr[h];
        if (swfi_load_relaxed_64(&owner_word[h]) == 0 || o == NULL || o->ops->fork_rank != rank)
            continue;
        hook(o);
    }
}

static void call_prepare(struct swfi_tls_owner *o)
{
    if (o->ops->fork_prepare)
        o->ops->fork_prepare(o);
}

static void call_parent(struct swfi_tls_owner *o)
{
    if (o->ops->fork_parent)
        o->ops->fork_parent(o);
}

static void call_child(struct swfi_tls_owner *o)
{
    if (o->ops->fork_child)
        o->ops->fork_child(o);
}

/* Take every lock of every owner (the order: above), with no owner coming or going meanwhile:
 * the child then starts with every structure in a state some thread left it in between
 * operations. */
static void fork_prepare(void)
{
    pthread_mutex_lock(&fork_lock);
    for (;;) {
        hold_all();
        pthread_mutex_lock(&handle_lock);
        if (all_held())
            break;
        pthread_mutex_unlock(&handle_lock); /* one registered meanwhile: hold it too */
    }
    for (int rank = 0; rank < FORK_RANKS; rank++)
        each_owner(rank, false, call_prepare);
}

/* The parent hooks release what fork_hold and fork_prepare took. */
static void fork_parent(void)
{
    for (int rank = FORK_RANKS - 1; rank >= 0; rank--)
        each_owner(rank, true, call_parent);
    pthread_mutex_unlock(&handle_lock);
    unpin_held();
    pthread_mutex_unlock(&fork_lock);
}

static void fork_child(void)
{
    for (int rank = 0; rank < FORK_RANKS; rank++)
        each_owner(rank, false, call_child);
    /* Threads that were releasing bindings at the fork do not exist here: drop their pins (and
     * the fork's own). */
    uint32_t used = swfi_load_relaxed_32(&x_handles_used);
    for (uint32_t h = 0; h < used; h++)
        swfi_store_relaxed_64(&owner_word[h], swfi_load_relaxed_64(&owner_word[h]) & ~PIN_MASK);
    memset(held, 0, sizeof(held));
    swfi_epoch_wait_fork_child();
    pthread_mutex_init(&handle_lock, NULL);
    pthread_mutex_init(&fork_lock, NULL);
}

/* At load time: the exit key, and the fork handlers. */
__attribute__((constructor)) static void thread_init(void)
{
    exit_key_ok = pthread_key_create(&exit_key, thread_exit_hook) == 0;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- bindings ------------------------------------------------------------------------------- */

int swfi_tls_prepare(const struct swfi_tls_owner *o)
{
    struct swf_thread_ *t = &swf_tls_self;
    if (!t->armed) {
        if (!exit_key_ok || pthread_setspecific(exit_key, t) != 0)
            return ENOMEM;
        t->armed = 1;
    }
    uint32_t want = swfi_load_relaxed_32(&x_handles_used);
    if (want <= o->head.handle)
        want = o->head.handle + 1;
    if (want <= t->cap)
        return 0;
    want = (want + TABLE_GRAIN - 1) / TABLE_GRAIN * TABLE_GRAIN;
    /* The bindings, then as many private slots (swfi_tls_slot), in one block. */
    size_t bytes = want * (sizeof(struct swf_binding_) + sizeof(struct swfi_tls_slot));
    struct swf_binding_ *table = malloc(bytes);
    if (table == NULL)
        return ENOMEM;
    memset(table, 0, bytes);
    swfi_prefault(table, bytes); /* bindings and slots are written on lock-free paths */
    if (t->cap > 0) {
        memcpy(table, t->table, t->cap * sizeof(*table));
        memcpy(&table[want], &t->table[t->cap], t->cap * sizeof(struct swfi_tls_slot));
    }
    free(t->table);
    t->table = table;
    t->cap = want;
    return 0;
}

void swfi_tls_bind(const struct swfi_tls_owner *o, void *state)
{
    struct swf_binding_ *b = &swf_tls_self.table[o->head.handle];
    b->state = state;
    b->id = o->head.id;
}

struct swfi_tls_slot *swfi_tls_slot(const struct swfi_tls_owner *o)
{
    struct swf_thread_ *t = &swf_tls_self;
    if (o->head.handle >= t->cap)
        return NULL;
    struct swfi_tls_slot *slot = (struct swfi_tls_slot *)(void *)&t->table[t->cap] + o->head.handle;
    if (slot->id != o->head.id) {
        slot->id = o->head.id; /* a slot left by an owner that had this handle before */
        slot->block = NULL;
        slot->count = 0;
    }
    return slot;
}

void *swfi_tls_unbind(const struct swfi_tls_owner *o)
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

int swfi_tls_owner_register(struct swfi_tls_owner *o)
{
    int err = EAGAIN;
    pthread_mutex_lock(&handle_lock);
    uint32_t used = swfi_load_relaxed_32(&x_handles_used);
    for (uint32_t h = first_free; h < SWF_OWNERS_MAX; h++) {
        if (h < used && swfi_load_relaxed_64(&owner_word[h]) != 0)
            continue;
        o->head.id = next_id++;
        o->head.handle = h;
        first_free = h + 1;
        if (h >= used)
            swfi_store_relaxed_32(&x_handles_used, h + 1);
        swfi_store_relaxed_ptr((void **)&owner_ptr[h], o);
        /* Release: a thread that pins this word sees the owner pointer and the owner's fields. */
        swfi_store_release_64(&owner_word[h], o->head.id << PIN_BITS);
        err = 0;
        break;
    }
    pthread_mutex_unlock(&handle_lock);
    return err;
}

void swfi_tls_owner_unregister(struct swfi_tls_owner *o)
{
    uint64_t *word = &owner_word[o->head.handle];
    uint64_t idle = o->head.id << PIN_BITS;
    /* Wait for exiting threads to finish with o (each holds a pin for a bounded, lock-free
     * release) and for a fork that holds o. Not under handle_lock: the fork takes that lock while
     * it holds its pin. The acquire on success orders their work on o before our teardown. */
    for (uint64_t w = idle; !swfi_cas_acq_rel_64(word, &w, 0); w = idle)
        sched_yield();
    /* From here no one can pin o, and the handle is free: a registration may already have
     * taken it. o stays allocated until we return, after handle_lock, so a fork that holds that
     * lock may still read owner_ptr (it skips owners whose word is 0). */
    pthread_mutex_lock(&handle_lock);
    if (owner_ptr[o->head.handle] == o)
        swfi_store_relaxed_ptr((void **)&owner_ptr[o->head.handle], NULL);
    if (o->head.handle < first_free)
        first_free = o->head.handle;
    pthread_mutex_unlock(&handle_lock);
    (void)swfi_tls_unbind(o);
}
