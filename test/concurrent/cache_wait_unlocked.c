/*
 * test/concurrent/cache_wait_unlocked.c - a WAIT allocation that waits for a shared pair's claimer
 * does so without the refill lock, and gets the pair's object once the claimer lets go (cache.h,
 * "Structure": a claimer of lower priority, preempted, must be able to finish).
 *
 * Built from the library's sources, so that it can play the claimer: the cache is at its limit
 * with every object allocated; one object goes into shared pair 0, which the test marks claimed
 * (a thread without magazines of its own, preempted inside a call). A WAIT allocation in another
 * thread finds nothing, cannot map, and must wait for the pair: meanwhile the refill lock must be
 * free (a grow from a third thread would otherwise wait behind a claimer that may never run), and
 * when the claim is let go the allocation returns that object.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "cache/cache_internal.h"
#include "../common/tap.h"

static struct swf_cache *c;

static void *waiter(void *arg)
{
    (void)arg;
    return swf_cache_alloc(c, SWF_WAIT);
}

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000}, NULL);
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .limit = 60, .name = "claimed"};
    tap_require(swf_cache_create(&cfg, &c) == 0 && swf_cache_grow(c, 60) == 0, "a full cache");
    void *o[60];
    for (int i = 0; i < 60; i++)
        tap_require((o[i] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL, "every object allocated");

    /* The claimer: pair 0 holds o[0] and is in use by a thread that does not run. */
    struct swfi_tstate *pair = c->shared[0];
    swfi_store_relaxed_32(&pair->x_claim, 1);
    swfi_debug_transition(c, "swf_cache_free", o[0], OBJ_ALLOC, OBJ_FREE);
    struct swf_magazine_ *m = pair->pub.loaded;
    m->obj[m->n++] = o[0];
    swfi_fetch_add_relaxed_64(&c->x_frees, 1); /* as the claimer's free counts it */

    pthread_t w;
    pthread_create(&w, NULL, waiter, NULL);
    sleep_ms(200); /* the waiter reaches its wait */
    bool free_lock = false;
    for (int tries = 0; tries < 200 && !free_lock; tries++) {
        if (pthread_mutex_trylock(&c->refill_lock) == 0) {
            pthread_mutex_unlock(&c->refill_lock);
            free_lock = true;
        } else {
            sleep_ms(10);
        }
    }
    ok(free_lock, "while the WAIT allocation waits for the claimer, the refill lock is free");
    swfi_store_release_32(&pair->x_claim, 0); /* the claimer runs and lets go */
    void *got;
    pthread_join(w, &got);
    ok(got == o[0], "then the WAIT allocation returns the pair's object");
    for (int i = 0; i < 60; i++)
        swf_cache_free(c, o[i]);
    ok(swf_cache_destroy(c) == 0, "destroy");
    return tap_done();
}
