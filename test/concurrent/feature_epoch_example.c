/*
 * test/concurrent/feature_epoch_example.c - examples/lists/ck_list.c's own add and delete code
 * (included here with its main renamed) used as docs/lists.md shows it: an adder thread adds
 * tasks under the writer lock while the feature is on, and the control thread, which owns the
 * epoch record the guard runs on, activates, catches up and deactivates.
 *
 * With swf_guard_epoch, activate, deactivate and catch_up run the guard's sections on the
 * record, which serves only its owner thread (feature.h), and catch_up walks the whole list with
 * blocking refills, which has no place under the writer lock. The harness wraps the example's
 * calls of swf_feature_catch_up and counts those made on another thread than the record's owner
 * or with the writer lock held (such a call is not passed on: it would corrupt the record).
 * Checked: no such call; after the adder is done, one catch-up by the control thread leaves
 * every task with an object (half the NOWAIT allocations fail, so many are owed); after
 * deactivate and every delete, 0 objects alive.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <sweepfill/feature.h>

#include "../common/tap.h"

static int h_catch_up(struct swf_feature *f, struct swf_sweep_stats *stats);
#define main                           ck_list_example_main
#define swf_feature_catch_up(f, stats) h_catch_up(f, stats)
#include "../../examples/lists/ck_list.c"
#undef swf_feature_catch_up
#undef main

enum { BASE = 1000, ADDS = 4000 };

static pthread_t h_control;
static pthread_mutex_t h_lock = PTHREAD_MUTEX_INITIALIZER; /* the writer lock */
static _Thread_local int h_writer_held;
static uint64_t h_wrong_thread, h_under_lock, h_calls;
static uint32_t h_done;

static int h_catch_up(struct swf_feature *f, struct swf_sweep_stats *stats)
{
    __atomic_fetch_add(&h_calls, 1, __ATOMIC_RELAXED);
    bool wrong = !pthread_equal(pthread_self(), h_control), locked = h_writer_held;
    if (wrong)
        __atomic_fetch_add(&h_wrong_thread, 1, __ATOMIC_RELAXED);
    if (locked)
        __atomic_fetch_add(&h_under_lock, 1, __ATOMIC_RELAXED);
    return wrong || locked ? 0 : swf_feature_catch_up(f, stats);
}

static struct task *h_tasks[BASE + ADDS];

/* Every task is allocated by the control thread before the adder starts: a sweep reaches a task
 * through ck's link store, which ThreadSanitizer cannot see as a release. */
static void h_alloc_tasks(void)
{
    for (int i = 0; i < BASE + ADDS; i++) {
        h_tasks[i] = calloc(1, sizeof(struct task));
        tap_require(h_tasks[i] != NULL, "calloc");
        swf_pin_init(&h_tasks[i]->pin);
    }
}

static void h_add(struct task_list *all, int i)
{
    pthread_mutex_lock(&h_lock);
    h_writer_held = 1;
    add_task(all, h_tasks[i]);
    h_writer_held = 0;
    pthread_mutex_unlock(&h_lock);
}

static void *h_adder(void *all)
{
    for (int i = BASE; i < BASE + ADDS; i++)
        h_add(all, i);
    __atomic_store_n(&h_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec; /* the control thread's, this one's */
    static struct task_list all = CK_LIST_HEAD_INITIALIZER(all);
    h_control = pthread_self();
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_cache_config cc = {.object_size = 64, .name = "ck_example"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
    tap_require(make_feature(&all, &rec) == 0, "the example's make_feature");
    h_alloc_tasks();
    for (int i = 0; i < BASE; i++)
        h_add(&all, i);
    tap_require(swf_feature_activate(tracing, NULL) == 0, "activate");
    struct swf_failslab fs = {50, 0, -1, 11}; /* half the NOWAIT allocations fail */
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "swf_cache_set_failslab");
    pthread_t a;
    pthread_create(&a, NULL, h_adder, &all);
    /* The control thread catches up now and then meanwhile, as the example says. */
    while (!__atomic_load_n(&h_done, __ATOMIC_ACQUIRE)) {
        tap_require(h_catch_up(tracing, NULL) == 0, "catch-up while adding");
        sched_yield();
    }
    pthread_join(a, NULL);
    struct swf_failslab none = {0, 0, 0, 0};
    swf_cache_set_failslab(cache, &none);
    ok(h_wrong_thread == 0,
       "no catch-up ran on another thread than the epoch record's owner (%llu did)",
       (unsigned long long)h_wrong_thread);
    ok(h_under_lock == 0, "no catch-up ran with the writer lock held (%llu did)",
       (unsigned long long)h_under_lock);
    ok(h_catch_up(tracing, NULL) == 0, "the control thread's catch-up returns 0");
    struct swf_feature_stats fst;
    swf_feature_stats(tracing, &fst);
    size_t shadowed = with_shadow(&all);
    ok(fst.left_owed > 0 && shadowed == BASE + ADDS,
       "every task has an object after it (%zu of %d; %llu adds were left owed)", shadowed,
       BASE + ADDS, (unsigned long long)fst.left_owed);
    ok(swf_feature_deactivate(tracing) == 0 && with_shadow(&all) == 0, "deactivate");
    pthread_mutex_lock(&h_lock);
    while (CK_LIST_FIRST(&all) != NULL)
        delete_task(CK_LIST_FIRST(&all), &rec);
    pthread_mutex_unlock(&h_lock);
    ck_epoch_barrier(&rec);
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    ok(st.alive == 0, "every task deleted: 0 objects alive (%llu)", (unsigned long long)st.alive);
    ok(swf_feature_destroy(tracing) == 0 && swf_cache_destroy(cache) == 0, "destroy");
    return tap_done();
}
