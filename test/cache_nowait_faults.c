/*
 * test/cache_nowait_faults.c - NOWAIT takes no page fault: counted by the kernel.
 *
 * After swf_cache_grow(c, 1,000,000), a thread makes 1,000,000 NOWAIT allocations and frees them
 * all, and getrusage(RUSAGE_THREAD) must report exactly 0 minor and 0 major faults for that
 * thread over the whole run: every byte the NOWAIT paths write - objects, magazines, thread
 * states, the debug checks' per-object states - was written once on a blocking path. Run by the
 * thread that grew the cache (its own magazines) and by a fresh thread (the shared depot path),
 * in every build test/run makes: debug and debugoptimized with debug checks, release without.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <sweepfill/cache.h>

#include "tap.h"

enum { N = 1000000 };

struct run {
    struct swf_cache *c;
    int grow;      /* grow first (on this thread) */
    void **objs;   /* N slots, written before the count starts */
    long minflt, majflt;
    int allocated, grow_err;
};

static void *work(void *arg)
{
    struct run *r = arg;
    if (r->grow)
        r->grow_err = swf_cache_grow(r->c, N);
    memset(r->objs, 0, N * sizeof(void *)); /* our own array: faulted in before counting */
    struct rusage before, after;
    getrusage(RUSAGE_THREAD, &before);
    for (int i = 0; i < N; i++)
        r->allocated += (r->objs[i] = swf_cache_alloc(r->c, SWF_NOWAIT)) != NULL;
    for (int i = 0; i < N; i++)
        swf_cache_free(r->c, r->objs[i]);
    getrusage(RUSAGE_THREAD, &after);
    r->minflt = after.ru_minflt - before.ru_minflt;
    r->majflt = after.ru_majflt - before.ru_majflt;
    return NULL;
}

static void check(const char *who, struct run *r)
{
    pthread_t t;
    pthread_create(&t, NULL, work, r);
    pthread_join(t, NULL);
    ok(r->grow_err == 0 && r->allocated == N, "%s: %d of %d NOWAIT allocations", who,
       r->allocated, N);
    ok(r->minflt == 0 && r->majflt == 0,
       "%s: %ld minor and %ld major page faults over %d NOWAIT allocations and frees", who,
       r->minflt, r->majflt, N);
}

int main(void)
{
    if (TAP_SANITIZED || tap_under_valgrind()) {
        skip("sanitizers and valgrind fault in memory of their own; the plain builds count");
        return tap_done();
    }
    diag("debug checks %s", swf_debug_checks() ? "on" : "off");
    void **objs = malloc(N * sizeof(void *));
    tap_require(objs != NULL, "memory");
    struct swf_cache_config cfg = {.object_size = 64, .name = "faults"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    struct run bound = {.c = c, .grow = 1, .objs = objs};
    check("the thread that grew the cache", &bound);
    struct run shared = {.c = c, .grow = 0, .objs = objs};
    check("a fresh thread (shared depot path)", &shared);
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    ok(s.alive == 0 && swf_cache_destroy(c) == 0, "everything freed; destroy");
    free(objs);
    return tap_done();
}
