/*
 * test/concurrent/cache_destroy_race.c - destroy retried on EBUSY while another thread's epoch
 * callbacks hand the last deferred frees back.
 *
 * cache.h invites it: destroy returns EBUSY while deferred frees are pending, so a thread may
 * retry destroy while the thread that queued them quiesces. The callback's last touch of the
 * cache is a release add that destroy reads with acquire, so destroy never frees the cache under
 * a callback still writing to it. Each round: one thread queues objects for a deferred free and
 * quiesces; another spins on destroy until it succeeds. The ThreadSanitizer build (test/run's
 * tsan stage) checks the ordering; every build checks that destroy succeeds exactly once and
 * only after every callback counted.
 */
#include <errno.h>
#include <pthread.h>

#include <ck_epoch.h>
#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { OBJS = 300 };

struct round {
    struct swf_cache *c;
    void *warm; /* alive until the deferred frees are queued: destroy is EBUSY until then */
    ck_epoch_t *epoch;
    int destroyed; /* destroy returned 0 */
    int busy;      /* EBUSY answers seen */
    int other;     /* any other answer */
};

static void *quiescer(void *arg)
{
    struct round *r = arg;
    ck_epoch_record_t rec;
    ck_epoch_register(r->epoch, &rec, NULL);
    void *objs[OBJS];
    for (int i = 0; i < OBJS; i++)
        objs[i] = swf_cache_alloc(r->c, SWF_WAIT);
    swf_cache_free_deferred(r->c, &rec, objs, OBJS);
    swf_cache_free(r->c, r->warm); /* now only the deferred frees keep the cache alive */
    ck_epoch_barrier(&rec);        /* runs the callbacks here, while the other thread retries */
    ck_epoch_unregister(&rec);
    return NULL;
}

static void *destroyer(void *arg)
{
    struct round *r = arg;
    for (;;) {
        int err = swf_cache_destroy(r->c);
        if (err == 0) {
            r->destroyed++;
            return NULL;
        }
        if (err == EBUSY)
            r->busy++;
        else
            r->other++;
        sched_yield();
    }
}

int main(void)
{
    int rounds = TAP_SANITIZED || tap_under_valgrind() ? 50 : 300;
    int destroyed = 0, busy = 0, other = 0;
    for (int i = 0; i < rounds; i++) {
        ck_epoch_t epoch; /* one per round: its only record lives on the quiescer's stack */
        ck_epoch_init(&epoch);
        struct round r = {.epoch = &epoch};
        struct swf_cache_config cfg = {.object_size = 64, .name = "race"};
        tap_require(swf_cache_create(&cfg, &r.c) == 0, "create");
        r.warm = swf_cache_alloc(r.c, SWF_WAIT);
        pthread_t q, d;
        pthread_create(&d, NULL, destroyer, &r);
        pthread_create(&q, NULL, quiescer, &r);
        pthread_join(q, NULL);
        pthread_join(d, NULL);
        destroyed += r.destroyed;
        busy += r.busy;
        other += r.other;
    }
    ok(destroyed == rounds && other == 0,
       "%d rounds: destroy succeeded once each, after %d EBUSY answers (%d other answers)", rounds,
       busy, other);
    return tap_done();
}
