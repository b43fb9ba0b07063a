/*
 * test/concurrent/feature_retry.c - the retry after EAGAIN that docs/lists.md shows, with the
 * example's own code (examples/lists/sys_tailq.c, included here with its main renamed) and a
 * concurrent closer of the newest connection.
 *
 * The adder thread opens connections with the example's open_conn; the cache fails about half
 * of the NOWAIT allocations (failure injection), so open_conn often takes its EAGAIN path. The
 * closer thread closes the newest connection with the example's close_conn, and gets its turn
 * exactly between open_conn's unlock and its retry: the harness wraps pthread_rwlock_unlock for
 * the adder's thread and waits there (by count) until the closer has closed one. The example's
 * free() is the harness's too: it checks the slot of each connection as it is released and
 * keeps the memory (poisoned links, slot as it was) so that a write after the release shows.
 * Checked:
 *   - no released connection holds an object, at its release and at the end (a retry that
 *     wrote into a closed connection would have put one there);
 *   - while on, and quiet, the cache is balanced: objects alive == slots of open connections
 *     holding one + the add reserve's objects; after deactivate and closing every connection,
 *     0 alive.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tap.h"
#include "turns.h"

static void *harness_free_(void *p);
static int harness_unlock_(pthread_rwlock_t *l);
#define main                     sys_tailq_example_main
#define free(p)                  ((void)harness_free_(p))
#define pthread_rwlock_unlock(l) harness_unlock_(l)
#include "../../examples/lists/sys_tailq.c"
#undef pthread_rwlock_unlock
#undef free
#undef main

enum { MAX_OPENS = 8000, MAX_RELEASED = MAX_OPENS };
static int opens = MAX_OPENS; /* fewer under valgrind */

static struct conn_q q = TAILQ_HEAD_INITIALIZER(q);
static pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
static struct conn *released[MAX_RELEASED];
static size_t nreleased;
static uint64_t held_at_release;
static pthread_mutex_t released_lock = PTHREAD_MUTEX_INITIALIZER;

static void *harness_free_(void *p)
{
    struct conn *c = p;
    pthread_mutex_lock(&released_lock);
    held_at_release += swf_slot_load(&c->stats) != NULL;
    tap_require(nreleased < MAX_RELEASED, "released");
    released[nreleased++] = c; /* kept: a write after the release stays visible */
    pthread_mutex_unlock(&released_lock);
    return NULL;
}

/* The adder's unlock in open_conn: then the closer's turn, before open_conn goes on. */
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
    for (int i = 0; i < opens; i++) {
        struct conn *c = calloc(1, sizeof(*c));
        tap_require(c != NULL, "calloc");
        swf_pin_init(&c->pin);
        open_conn(&q, c, &lock);
    }
    turns_adder(false);
    turns_stop();
    return NULL;
}

/* On each turn, close the newest connection (every other turn: the list grows too). */
static void *closer(void *arg)
{
    (void)arg;
    for (unsigned n = 0;; n++) {
        if (!turns_take())
            return NULL;
        if (n % 2 == 0) {
            pthread_rwlock_rdlock(&lock);
            struct conn *c = TAILQ_LAST(&q, conn_q); /* only this thread closes: stays linked */
            pthread_rwlock_unlock(&lock);
            if (c != NULL)
                close_conn(&q, c, &lock);
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
        opens = 2000;
    struct swf_cache_config cc = {.object_size = 64, .name = "retry"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
    tap_require(make_feature(&q, &lock, 64) == 0, "the example's make_feature");
    tap_require(swf_feature_activate(stats_on, NULL) == 0, "activate");
    struct swf_failslab fs = {50, 0, -1, 7}; /* half the NOWAIT allocations fail */
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "swf_cache_set_failslab");
    pthread_t a, c;
    pthread_create(&c, NULL, closer, NULL);
    pthread_create(&a, NULL, adder, NULL);
    pthread_join(a, NULL);
    pthread_join(c, NULL);
    struct swf_feature_stats fst;
    swf_feature_stats(stats_on, &fst);
    diag("%d opens, %zu closed, %llu left owed by NOWAIT", opens, nreleased,
         (unsigned long long)fst.left_owed);
    ok(fst.left_owed > 0 && nreleased > 0, "the EAGAIN path ran with closes in between");

    size_t open = 0, holding = 0, in_released = 0;
    struct conn *m;
    TAILQ_FOREACH(m, &q, link)
    {
        open++;
        holding += swf_slot_load(&m->stats) != NULL;
    }
    for (size_t i = 0; i < nreleased; i++)
        in_released += swf_slot_load(&released[i]->stats) != NULL;
    ok(held_at_release == 0, "no connection held an object when it was released (%llu did)",
       (unsigned long long)held_at_release);
    ok(in_released == 0, "no released connection holds an object now (%zu of %zu do)", in_released,
       nreleased);
    swf_feature_stats(stats_on, &fst); /* the add reserve's objects are alive, in no slot */
    ok(alive() == holding + fst.add_reserve_ready,
       "while on: objects alive == slots of open connections holding one + the add reserve (%llu, "
       "%zu of %zu, %llu)",
       (unsigned long long)alive(), holding, open, (unsigned long long)fst.add_reserve_ready);

    struct swf_failslab none = {0, 0, 0, 0};
    swf_cache_set_failslab(cache, &none);
    ok(swf_feature_deactivate(stats_on) == 0, "deactivate");
    while (!TAILQ_EMPTY(&q))
        close_conn(&q, TAILQ_FIRST(&q), &lock);
    ok(alive() == 0, "after deactivate and every close: 0 objects alive (%llu)",
       (unsigned long long)alive());
    ok(swf_feature_destroy(stats_on) == 0, "destroy the feature");
    for (size_t i = 0; i < nreleased; i++)
        free(released[i]);
    ok(swf_cache_destroy(cache) == 0, "destroy the cache");
    return tap_done();
}
