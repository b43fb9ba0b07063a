/*
 * test/concurrent/feature_retry_urcu.c - feature_retry.c's check on examples/lists/urcu_list.c:
 * the example's own start_session and end_session (included here with its main renamed), a
 * cds_list with the memb flavour and call_rcu, and a concurrent closer of the newest session.
 *
 * The adder thread starts sessions with start_session; the cache fails about half of the NOWAIT
 * allocations, so start_session often takes its EAGAIN path. The closer thread gets its turn
 * exactly between start_session's unlock and its retry (the harness wraps pthread_mutex_unlock
 * for the adder's thread and waits there, by count) and, every other turn, ends the session just
 * started with end_session, then waits for the call_rcu callbacks (urcu_memb_barrier), so that
 * the session is released and freed before start_session goes on. The example's free() is the
 * harness's: it checks the slot at release and keeps the memory, so that a write after the
 * release shows. Checked: no released session holds an object, at its release and at the end;
 * while on, objects alive == slots of live sessions holding one; after deactivate and ending
 * every session, 0 alive. (Not under ThreadSanitizer: the example does not annotate liburcu.)
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "../common/tap.h"
#include "turns.h"

static void harness_free_(void *p);
static int harness_unlock_(pthread_mutex_t *l);
#define main                    urcu_example_main
#define free(p)                 harness_free_(p)
#define pthread_mutex_unlock(l) harness_unlock_(l)
#include "../../examples/lists/urcu_list.c"
#undef pthread_mutex_unlock
#undef free
#undef main

enum { MAX_STARTS = 600 };

static int starts = MAX_STARTS; /* fewer under valgrind */
static struct session *released[MAX_STARTS];
static size_t nreleased;
static uint64_t held_at_release;
static pthread_mutex_t released_lock = PTHREAD_MUTEX_INITIALIZER;
static struct session *newest;

static void harness_free_(void *p)
{
    struct session *s = p;
    pthread_mutex_lock(&released_lock);
    held_at_release += swf_slot_load(&s->trace) != NULL;
    tap_require(nreleased < MAX_STARTS, "released");
    released[nreleased++] = s; /* kept: a write after the release stays visible */
    pthread_mutex_unlock(&released_lock);
}

/* The adder's unlock in start_session: then the closer's turn, before it goes on. */
static int harness_unlock_(pthread_mutex_t *l)
{
    int r = pthread_mutex_unlock(l);
    turns_give();
    return r;
}

static void *adder(void *all)
{
    urcu_memb_register_thread(); /* catch_up's guard runs here */
    turns_adder(true);
    for (int i = 0; i < starts; i++) {
        struct session *s = calloc(1, sizeof(*s));
        tap_require(s != NULL, "calloc");
        swf_pin_init(&s->pin);
        __atomic_store_n(&newest, s, __ATOMIC_RELEASE);
        start_session(all, s);
    }
    turns_adder(false);
    urcu_memb_unregister_thread();
    turns_stop();
    return NULL;
}

/* On every other turn, end the session just started (only this thread ends sessions) and wait
 * for its release. */
static void *closer(void *arg)
{
    (void)arg;
    urcu_memb_register_thread(); /* call_rcu */
    for (unsigned n = 0;; n++) {
        if (!turns_take())
            break;
        if (n % 2 == 0) {
            end_session(__atomic_load_n(&newest, __ATOMIC_ACQUIRE));
            urcu_memb_barrier(); /* free_session has run */
        }
        turns_served();
    }
    urcu_memb_unregister_thread();
    return NULL;
}

static uint64_t alive(void)
{
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    return st.alive;
}

int main(void)
{
    static CDS_LIST_HEAD(all);
    if (tap_under_valgrind())
        starts = 200;
    urcu_memb_register_thread();
    struct swf_cache_config cc = {.object_size = 64, .name = "retry_urcu"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
    tap_require(make_feature(&all) == 0, "the example's make_feature");
    tap_require(swf_feature_activate(tracing, NULL) == 0, "activate");
    struct swf_failslab fs = {50, 0, -1, 3}; /* half the NOWAIT allocations fail */
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "swf_cache_set_failslab");
    pthread_t a, c;
    pthread_create(&c, NULL, closer, NULL);
    pthread_create(&a, NULL, adder, &all);
    pthread_join(a, NULL);
    pthread_join(c, NULL);
    struct swf_feature_stats fst;
    swf_feature_stats(tracing, &fst);
    diag("%d sessions started, %zu released, %llu left owed by NOWAIT", starts, nreleased,
         (unsigned long long)fst.left_owed);
    ok(fst.left_owed > 0 && nreleased > 0, "the EAGAIN path ran with sessions ended in between");
    size_t live = 0, holding = 0, in_released = 0;
    struct session *s;
    cds_list_for_each_entry(s, &all, link)
    {
        live++;
        holding += swf_slot_load(&s->trace) != NULL;
    }
    for (size_t i = 0; i < nreleased; i++)
        in_released += swf_slot_load(&released[i]->trace) != NULL;
    ok(held_at_release == 0, "no session held an object when it was released (%llu did)",
       (unsigned long long)held_at_release);
    ok(in_released == 0, "no released session holds an object now (%zu of %zu do)", in_released,
       nreleased);
    swf_feature_stats(tracing, &fst); /* the add reserve's objects are alive, in no slot */
    ok(alive() == holding + fst.add_reserve_ready,
       "while on: objects alive == slots of live sessions holding one + the add reserve (%llu, "
       "%zu of %zu, %llu)",
       (unsigned long long)alive(), holding, live, (unsigned long long)fst.add_reserve_ready);
    struct swf_failslab none = {0, 0, 0, 0};
    swf_cache_set_failslab(cache, &none);
    ok(swf_feature_deactivate(tracing) == 0, "deactivate");
    while (!cds_list_empty(&all))
        end_session(cds_list_first_entry(&all, struct session, link));
    urcu_memb_barrier();
    ok(alive() == 0, "after deactivate and every session ended: 0 objects alive (%llu)",
       (unsigned long long)alive());
    ok(swf_feature_destroy(tracing) == 0, "destroy the feature");
    for (size_t i = 0; i < nreleased; i++)
        free(released[i]);
    ok(swf_cache_destroy(cache) == 0, "destroy the cache");
    urcu_memb_unregister_thread();
    return tap_done();
}
