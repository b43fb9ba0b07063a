/*
 * test/concurrent/feature_retry_hash.c - feature_retry.c's check on examples/lists/hash.c: the
 * example's own add_entry and remove_entry (included here with its main renamed), a bucket
 * array under a rwlock, and a concurrent remover of the newest entry.
 *
 * The adder thread adds entries with add_entry; the cache fails about half of the NOWAIT
 * allocations, so add_entry often takes its EAGAIN path. The remover thread gets its turn exactly
 * between add_entry's unlock and its retry (the harness wraps pthread_rwlock_unlock for the
 * adder's thread and waits there, by count) and, every other turn, removes the entry just added
 * with remove_entry, whose release runs at once (swf_grace_lock). The entries' memory is the
 * test's, as the example says, so a retry that wrote into a removed entry would leave an object
 * there. Checked: no removed entry holds an object; while on, objects alive == slots of present
 * entries holding one, plus the add reserve; after deactivate and removing every entry, 0 alive.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "../common/tap.h"
#include "turns.h"

static int harness_unlock_(pthread_rwlock_t *l);
#define main                     hash_example_main
#define pthread_rwlock_unlock(l) harness_unlock_(l)
#include "../../examples/lists/hash.c"
#undef pthread_rwlock_unlock
#undef main

enum { MAX_ADDS = 8000, NBUCKETS = 64 };

static int adds = MAX_ADDS; /* fewer under valgrind */
static struct entry pool[MAX_ADDS];
static bool removed[MAX_ADDS];
static struct table table;
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct entry *newest;

/* The adder's unlock in add_entry: then the remover's turn, before add_entry goes on. */
static int harness_unlock_(pthread_rwlock_t *l)
{
    int r = pthread_rwlock_unlock(l);
    turns_give();
    return r;
}

static void *adder(void *arg)
{
    (void)arg;
    turns_adder(true);
    for (int i = 0; i < adds; i++) {
        __atomic_store_n(&newest, &pool[i], __ATOMIC_RELEASE);
        add_entry(&table, &pool[i], &lock);
    }
    turns_adder(false);
    turns_stop();
    return NULL;
}

/* On every other turn, remove the entry just added (only this thread removes). */
static void *remover(void *arg)
{
    (void)arg;
    for (unsigned n = 0;; n++) {
        if (!turns_take())
            return NULL;
        if (n % 2 == 0) {
            struct entry *e = __atomic_load_n(&newest, __ATOMIC_ACQUIRE);
            remove_entry(e, &lock);
            removed[e - pool] = true;
        }
        turns_served();
    }
}

static uint64_t alive(void)
{
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    return st.alive;
}

int main(void)
{
    if (tap_under_valgrind())
        adds = 2000;
    for (int i = 0; i < MAX_ADDS; i++) { /* before any thread: the test's own memory */
        pool[i].key = (uint64_t)i;
        swf_pin_init(&pool[i].pin);
    }
    table.buckets = calloc(NBUCKETS, sizeof(struct bucket));
    table.nbuckets = NBUCKETS;
    tap_require(table.buckets != NULL, "calloc");
    struct swf_cache_config cc = {.object_size = 64, .name = "retry_hash"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
    tap_require(make_feature(&table, &lock) == 0, "the example's make_feature");
    tap_require(swf_feature_activate(cached, NULL) == 0, "activate");
    struct swf_failslab fs = {50, 0, -1, 5}; /* half the NOWAIT allocations fail */
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "swf_cache_set_failslab");
    pthread_t a, r;
    pthread_create(&r, NULL, remover, NULL);
    pthread_create(&a, NULL, adder, NULL);
    pthread_join(a, NULL);
    pthread_join(r, NULL);
    struct swf_feature_stats fst;
    swf_feature_stats(cached, &fst);
    size_t nremoved = 0, in_removed = 0, present = 0, holding = 0;
    for (int i = 0; i < adds; i++) {
        bool has = swf_slot_load(&pool[i].obj) != NULL;
        if (removed[i]) {
            nremoved++;
            in_removed += has;
        } else {
            present++;
            holding += has;
        }
    }
    diag("%d adds, %zu removed, %llu left owed by NOWAIT", adds, nremoved,
         (unsigned long long)fst.left_owed);
    ok(fst.left_owed > 0 && nremoved > 0, "the EAGAIN path ran with removals in between");
    ok(in_removed == 0, "no removed entry holds an object (%zu of %zu do)", in_removed, nremoved);
    swf_feature_stats(cached, &fst); /* the add reserve's objects are alive, in no slot */
    ok(alive() == holding + fst.add_reserve_ready,
       "while on: objects alive == slots of present entries holding one + the add reserve (%llu, "
       "%zu of %zu, %llu)",
       (unsigned long long)alive(), holding, present, (unsigned long long)fst.add_reserve_ready);
    struct swf_failslab none = {0, 0, 0, 0};
    swf_cache_set_failslab(cache, &none);
    ok(swf_feature_deactivate(cached) == 0, "deactivate");
    for (int i = 0; i < adds; i++)
        if (!removed[i])
            remove_entry(&pool[i], &lock);
    ok(alive() == 0, "after deactivate and every removal: 0 objects alive (%llu)",
       (unsigned long long)alive());
    ok(swf_feature_destroy(cached) == 0 && swf_cache_destroy(cache) == 0, "destroy");
    free(table.buckets);
    return tap_done();
}
