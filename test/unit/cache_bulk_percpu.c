/*
 * test/unit/cache_bulk_percpu.c - the bulk calls in the per-CPU mode move objects to and from
 * the magazine of the CPU they run on first, as cache.h and swf_cache_alloc_bulk(3) say.
 *
 * One thread on one CPU (the unit suite keeps the process there). After a flush has left an
 * empty magazine in the CPU's slot: swf_cache_free_bulk puts its objects on top of the CPU's
 * magazine (single NOWAIT allocations then pop them back, last first); swf_cache_alloc_bulk
 * takes the CPU's magazine's objects, bottom to top, before any from the depot, and leaves the
 * magazine empty rather than refilling it (objects freed next sit there alone). Counts balance
 * and destroy's recount passes at the end.
 */
#include <errno.h>
#include <string.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { K = 30, MORE = 10, LATE = 5 };

static int in(void *const *set, size_t n, const void *obj)
{
    for (size_t i = 0; i < n; i++)
        if (set[i] == obj)
            return 1;
    return 0;
}

int main(void)
{
    if (swf_cache_percpu() == 0) {
        skip("the per-CPU mode is off in this process (no rseq, or SWF_PERCPU=0)");
        return tap_done();
    }
    struct swf_cache_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.name = "bulk_percpu";
    cfg.object_size = 64;
    cfg.checks = 1;
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    tap_require(swf_cache_grow(c, 4 * SWF_CACHE_MAGAZINE) == 0, "grow");

    void *a[K], *b[K], *d[K + MORE] = {0}, *e[LATE];
    int got = 0;
    for (int i = 0; i < K; i++)
        got += (a[i] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL;
    tap_require(got == K, "single allocations");
    swf_cache_flush(c); /* the CPU's magazine to the depot, an empty one in the slot */

    swf_cache_free_bulk(c, a, K);
    int lifo = 0;
    for (int i = 0; i < K; i++)
        lifo += (b[i] = swf_cache_alloc(c, SWF_NOWAIT)) == a[K - 1 - i];
    ok(lifo == K,
       "swf_cache_free_bulk put its %d objects on the CPU's magazine: single allocations pop "
       "them back, last first (%d of %d)",
       K, lifo, K);

    swf_cache_free_bulk(c, b, K);
    size_t set = swf_cache_alloc_bulk(c, SWF_NOWAIT, d, K + MORE);
    int from_cpu = 0, from_depot = 0;
    for (int i = 0; i < K; i++)
        from_cpu += d[i] == b[i];
    for (int i = K; i < K + MORE; i++)
        from_depot += d[i] != NULL && !in(b, K, d[i]);
    ok(set == K + MORE && from_cpu == K && from_depot == MORE,
       "swf_cache_alloc_bulk took the CPU's magazine's %d objects first, bottom to top (%d), "
       "then %d from the depot (%d)",
       K, from_cpu, MORE, from_depot);

    /* The magazine was left empty, not refilled: what is freed next sits there alone. */
    swf_cache_free_bulk(c, d + K + MORE - LATE, LATE);
    int late = 0;
    for (int i = 0; i < LATE; i++)
        late += (e[i] = swf_cache_alloc(c, SWF_NOWAIT)) == d[K + MORE - 1 - i];
    ok(late == LATE, "the %d objects freed next come back from the CPU's magazine (%d)", LATE,
       late);

    for (int i = 0; i < LATE; i++)
        swf_cache_free(c, e[i]);
    swf_cache_free_bulk(c, d, K + MORE - LATE);
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    ok(s.alive == 0 && s.ready == s.capacity, "the counters balance (%llu alive)",
       (unsigned long long)s.alive);
    ok(swf_cache_destroy(c) == 0, "destroy's recount passes");
    return tap_done();
}
