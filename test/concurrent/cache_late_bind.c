/*
 * test/concurrent/cache_late_bind.c - a thread prepared while few caches existed binds to caches
 * created later, at any handle, once it makes a blocking call again (swf_cache_alloc(3),
 * "Magazines, the depot and loose objects", and swf_cache_create(3), "Limits").
 *
 * Thread T makes its first blocking call (swf_cache_grow(c, 0)) while two owners exist (handles 0
 * and 1), which sizes its binding table for the first 64 handles. The main thread then fills the
 * owner table with registries (the cheap owner) and puts caches at handles 64, 1,000 and 60,000.
 * T makes one more blocking call, on the cache it is bound to already. Its NOWAIT allocations on
 * the three new caches must then run on magazines of its own (its binding table names them), and
 * its NOWAIT calls under failure injection must be numbered per thread, not with the cache-wide
 * count of threads without a state (an unprepared thread makes call 0 of that count first).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <sweepfill/cache.h>
#include <sweepfill/registry.h>

#include "../common/tap.h"

static const uint32_t far_handles[] = {64, 1000, 60000};
#define NFAR 3

static struct swf_cache *near, *far[NFAR];

static void nothing(void *obj, void *member, void *arg)
{
    (void)obj, (void)member, (void)arg;
}

static uint32_t handle_of(struct swf_cache *c)
{
    return ((const struct swf_owner_head_ *)(const void *)c)->handle;
}

/* Whether the calling thread holds magazines of its own for c: its binding table (cache.h's
 * inline-path structures) reaches c's handle and names c there. */
static bool bound_to(struct swf_cache *c)
{
    const struct swf_owner_head_ *h = (const struct swf_owner_head_ *)(const void *)c;
    const struct swf_thread_ *t = &swf_thread_self_;
    return h->handle < t->cap && t->table[h->handle].id == h->id;
}

static void *unprepared(void *arg)
{
    (void)arg; /* call 0 of the count shared by threads without a binding */
    void *o = swf_cache_alloc(far[NFAR - 1], SWF_NOWAIT);
    swf_cache_free(far[NFAR - 1], o);
    return NULL;
}

static pthread_barrier_t step;

static void *late(void *arg)
{
    (void)arg;
    tap_require(swf_cache_grow(near, 0) == 0, "T binds while two owners exist");
    pthread_barrier_wait(&step); /* prepared */
    pthread_barrier_wait(&step); /* the owner table is full */
    tap_require(swf_cache_grow(near, 0) == 0, "T's one blocking call on the late caches' behalf");
    for (int i = 0; i < NFAR; i++) {
        void *o = swf_cache_alloc(far[i], SWF_NOWAIT);
        bool own = o != NULL && bound_to(far[i]);
        swf_cache_free(far[i], o);
        ok(own, "handle %u: a NOWAIT allocation by T runs on magazines of its own",
           (unsigned)handle_of(far[i]));
    }
    struct swf_failslab every_second = {.probability = 100, .interval = 2, .times = -1};
    tap_require(swf_cache_set_failslab(far[NFAR - 1], &every_second) == 0, "set_failslab");
    pthread_t u;
    pthread_create(&u, NULL, unprepared, NULL);
    pthread_join(u, NULL);
    void *first = swf_cache_alloc(far[NFAR - 1], SWF_NOWAIT);
    void *second = swf_cache_alloc(far[NFAR - 1], SWF_NOWAIT);
    ok(first != NULL && second == NULL,
       "failure injection numbers T's calls on handle 60000 itself: call 0 passes, call 1 fails");
    swf_cache_free(far[NFAR - 1], first);
    swf_cache_set_failslab(far[NFAR - 1], NULL);
    return NULL;
}

int main(void)
{
    if (tap_under_valgrind()) {
        skip("60,000 registries under valgrind take minutes; the plain builds run this");
        return tap_done();
    }
    struct swf_cache_config cfg = {.object_size = 64, .name = "late"};
    struct swf_cache *first;
    tap_require(swf_cache_create(&cfg, &first) == 0 && swf_cache_create(&cfg, &near) == 0,
                "two caches");
    ok(handle_of(near) == 1, "the second cache has handle 1 (%u)", (unsigned)handle_of(near));

    /* T: prepared now, then waits while the owner table fills. */
    pthread_barrier_init(&step, NULL, 2);
    pthread_t t;
    pthread_create(&t, NULL, late, NULL);
    pthread_barrier_wait(&step);

    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = first;
    rc.init = nothing;
    size_t nregs = far_handles[NFAR - 1];
    struct swf_registry **regs = calloc(nregs, sizeof(*regs));
    size_t made = 0;
    int k = 0;
    for (uint32_t h = 2; h <= far_handles[NFAR - 1]; h++) {
        if (h == far_handles[k]) {
            tap_require(swf_cache_create(&cfg, &far[k]) == 0, "a late cache");
            tap_require(handle_of(far[k]) == h, "at the handle wanted");
            tap_require(swf_cache_grow(far[k], 1000) == 0, "ready objects and spare magazines");
            k++;
        } else {
            tap_require(swf_registry_create(&rc, &regs[made++]) == 0, "a registry");
        }
    }

    pthread_barrier_wait(&step);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&step);

    int bad = 0;
    for (size_t i = 0; i < made; i++)
        bad += swf_registry_destroy(regs[i]) != 0;
    for (int i = 0; i < NFAR; i++)
        bad += swf_cache_destroy(far[i]) != 0;
    ok(bad == 0 && swf_cache_destroy(near) == 0 && swf_cache_destroy(first) == 0,
       "destroy them all");
    free(regs);
    return tap_done();
}
