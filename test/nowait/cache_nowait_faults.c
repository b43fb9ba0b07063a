/*
 * test/nowait/cache_nowait_faults.c - NOWAIT takes no page fault: counted by the kernel.
 *
 * After swf_cache_grow(c, 1,000,000), a thread makes 1,000,000 NOWAIT allocations and frees them
 * all, and getrusage(RUSAGE_THREAD) must report exactly 0 minor and 0 major faults for that
 * thread over the whole run: every byte the NOWAIT paths write - objects, magazines, thread
 * states, the debug checks' per-object states - was made present on a blocking path. Run by the
 * thread that grew the cache (its own magazines) and by a fresh thread (the shared depot path),
 * and again on caches whose memory is prepared differently: transparent huge pages required
 * (when the system has them), and four threads preparing the mapping at once (grow_threads). In
 * every build test/run makes: debug and debugoptimized with debug checks, release without.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { N = 1000000 };

struct run {
    struct swf_cache *c;
    int grow;    /* grow first (on this thread) */
    void **objs; /* N slots, written before the count starts */
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
    ok(r->grow_err == 0 && r->allocated == N, "%s: %d of %d NOWAIT allocations", who, r->allocated,
       N);
    ok(r->minflt == 0 && r->majflt == 0,
       "%s: %ld minor and %ld major page faults over %d NOWAIT allocations and frees", who,
       r->minflt, r->majflt, N);
}

/* The same two runs on a cache made with cfg; skipped when the system cannot make it. */
static void prepared_by(const char *how, struct swf_cache_config *cfg, void **objs)
{
    struct swf_cache *c;
    int err = swf_cache_create(cfg, &c);
    if (err == ENOTSUP) {
        skip("%s: %s", how, swf_error_reason());
        return;
    }
    tap_require(err == 0, "create");
    struct run bound = {.c = c, .grow = 1, .objs = objs};
    char who[128];
    snprintf(who, sizeof(who), "%s, the growing thread", how);
    check(who, &bound);
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    if (cfg->huge_pages == SWF_HUGE_PAGES_REQUIRED)
        ok(s.huge_bytes > 0, "%s: %llu of %llu bytes on huge pages", how,
           (unsigned long long)s.huge_bytes, (unsigned long long)s.bytes_mapped);
    struct run shared = {.c = c, .grow = 0, .objs = objs};
    snprintf(who, sizeof(who), "%s, a fresh thread", how);
    check(who, &shared);
    ok(swf_cache_destroy(c) == 0, "%s: destroy", how);
}

int main(void)
{
    if (TAP_SANITIZED || tap_under_valgrind()) {
        skip("sanitizers and valgrind fault in memory of their own; the plain builds count");
        return tap_done();
    }
    if (tap_under_qemu()) {
        skip("under qemu-user the faults are the emulator's (and so are huge pages); a native "
             "build counts");
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
    struct swf_cache_config huge = {
        .object_size = 64, .huge_pages = SWF_HUGE_PAGES_REQUIRED, .name = "huge"};
    prepared_by("huge pages required", &huge, objs);
    struct swf_cache_config parallel = {.object_size = 64, .grow_threads = 4, .name = "parallel"};
    prepared_by("4 threads preparing", &parallel, objs);
    free(objs);
    return tap_done();
}
