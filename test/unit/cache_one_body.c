/*
 * test/unit/cache_one_body.c - cache.h's inline path and the library's swf_cache_alloc and
 * swf_cache_free are one body (cache_abi.h): driven with the same operations, two caches made
 * alike end with the same statistics, field by field, and every call is counted exactly. The
 * operations cross an empty magazine and a full one (where the two once differed), run the
 * cache dry (NOWAIT failures), and run on a thread bound to the cache (after swf_cache_grow) and
 * on a thread that never made a blocking call (which, in the per-CPU mode, needs no state of
 * its own). meson runs it in both cache modes, on one CPU (so a NOWAIT reaches every object).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { CAPACITY = 300, FIRST = 130, AFTER_DRY = 61 };

enum driver { LIBRARY, INLINE };
static const char *const driver_name[] = {"the library", "the inline path"};

struct run {
    enum driver how;
    bool bind; /* a blocking call first: bound to the cache */
    struct swf_cache *c;
    uint64_t allocated, failed, freed; /* what the calls returned */
};

static void *alloc_one(struct run *r)
{
    void *o = r->how == LIBRARY ? swf_cache_alloc(r->c, SWF_NOWAIT) : swf_cache_alloc_fast(r->c);
    if (o != NULL)
        r->allocated++;
    else
        r->failed++;
    return o;
}

static void free_one(struct run *r, void *o)
{
    int err = r->how == LIBRARY ? swf_cache_free(r->c, o) : swf_cache_free_fast(r->c, o);
    if (err == 0)
        r->freed++;
}

static void give(struct run *r, void **objs, size_t i)
{
    if (objs[i] != NULL)
        free_one(r, objs[i]);
    objs[i] = NULL;
}

/* Take n NOWAIT objects into objs (NULL where one failed), then free them: in order, or the odd
 * places first. */
static void take_and_give(struct run *r, void **objs, size_t n, bool odd_first)
{
    for (size_t i = 0; i < n; i++)
        objs[i] = alloc_one(r);
    if (odd_first)
        for (size_t i = 1; i < n; i += 2)
            give(r, objs, i);
    for (size_t i = 0; i < n; i += odd_first ? 2 : 1)
        give(r, objs, i);
}

static void *script(void *arg)
{
    struct run *r = arg;
    static __thread void *objs[CAPACITY + 10];
    if (r->bind)
        tap_require(swf_cache_grow(r->c, 0) == 0, "swf_cache_grow(c, 0)");
    take_and_give(r, objs, FIRST, false);        /* more than two magazines out, then back */
    take_and_give(r, objs, CAPACITY + 10, true); /* dry: the last ones fail */
    take_and_give(r, objs, AFTER_DRY, false);    /* a magazine and one more */
    return NULL;
}

static void run_on_thread(struct run *r)
{
    pthread_t t;
    tap_require(pthread_create(&t, NULL, script, r) == 0, "pthread_create");
    pthread_join(t, NULL);
}

static void compare(const char *who, struct swf_cache_stats *a, struct swf_cache_stats *b)
{
    ok(a->allocs_nowait == b->allocs_nowait, "%s: allocs_nowait agree (%llu, %llu)", who,
       (unsigned long long)a->allocs_nowait, (unsigned long long)b->allocs_nowait);
    ok(a->fails_nowait == b->fails_nowait, "%s: fails_nowait agree (%llu, %llu)", who,
       (unsigned long long)a->fails_nowait, (unsigned long long)b->fails_nowait);
    ok(a->frees == b->frees, "%s: frees agree", who);
    ok(a->alive == b->alive && a->ready == b->ready && a->capacity == b->capacity,
       "%s: alive, ready and capacity agree", who);
    ok(a->allocs_wait == b->allocs_wait && a->fails_injected == b->fails_injected,
       "%s: the other counters agree", who);
}

static void check_exact(const char *who, const struct run *r, const struct swf_cache_stats *s)
{
    ok(s->allocs_nowait == r->allocated && s->fails_nowait == r->failed,
       "%s, %s: NOWAIT allocations counted exactly (%llu of %llu, failures %llu of %llu)", who,
       driver_name[r->how], (unsigned long long)s->allocs_nowait, (unsigned long long)r->allocated,
       (unsigned long long)s->fails_nowait, (unsigned long long)r->failed);
    ok(s->frees == r->freed && s->alive == 0 && s->ready == s->capacity,
       "%s, %s: frees counted exactly (%llu of %llu), nothing alive", who, driver_name[r->how],
       (unsigned long long)s->frees, (unsigned long long)r->freed);
}

static void both_drivers(const char *who, bool bind)
{
    struct swf_cache_stats st[2];
    struct run runs[2];
    for (int how = LIBRARY; how <= INLINE; how++) {
        struct swf_cache_config cfg = {
            .object_size = 64, .prefill = CAPACITY, .limit = CAPACITY, .name = "one_body"};
        struct run *r = &runs[how];
        *r = (struct run){.how = (enum driver)how, .bind = bind};
        tap_require(swf_cache_create(&cfg, &r->c) == 0, "swf_cache_create");
        run_on_thread(r);
        tap_require(swf_cache_stats(r->c, &st[how]) == 0, "swf_cache_stats");
        check_exact(who, r, &st[how]);
    }
    ok(runs[LIBRARY].failed > 0, "%s: the script ran the cache dry (%llu NOWAIT failures)", who,
       (unsigned long long)runs[LIBRARY].failed);
    compare(who, &st[LIBRARY], &st[INLINE]);
    for (int how = LIBRARY; how <= INLINE; how++)
        ok(swf_cache_destroy(runs[how].c) == 0, "%s: destroy after %s", who, driver_name[how]);
}

int main(void)
{
    diag("cache mode: %s", swf_cache_percpu() ? "per-CPU" : "per-thread");
    both_drivers("a bound thread", true);
    both_drivers("a thread that never made a blocking call", false);
    return tap_done();
}
