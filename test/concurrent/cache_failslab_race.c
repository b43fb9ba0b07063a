/*
 * test/concurrent/cache_failslab_race.c - failure injection reconfigured while NOWAIT calls decide.
 *
 * One thread keeps switching a cache between settings (every call fails; every third call
 * fails; off) while others allocate NOWAIT. Each NOWAIT call must see one whole setting: under
 * the ThreadSanitizer build no access may race, and in every build no call may crash (a mix of
 * two settings could divide by an interval of 0), and every call is accounted for.
 */
#include <errno.h>
#include <pthread.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { CALLERS = 2 };

static struct swf_cache *cache;
static int stop;
static uint64_t calls[CALLERS], eagain[CALLERS];

static void *caller(void *arg)
{
    int me = (int)(uintptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        void *o = swf_cache_alloc(cache, SWF_NOWAIT);
        calls[me]++;
        if (o == NULL)
            eagain[me] += errno == EAGAIN;
        swf_cache_free(cache, o);
    }
    return NULL;
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 1000, .name = "fsrace"};
    tap_require(swf_cache_create(&cfg, &cache) == 0, "create");
    pthread_t t[CALLERS];
    for (int i = 0; i < CALLERS; i++)
        pthread_create(&t[i], NULL, caller, (void *)(uintptr_t)i);
    struct swf_failslab every = {.probability = 100, .interval = 0, .times = -1};
    struct swf_failslab third = {.probability = 100, .interval = 3, .times = -1, .seed = 9};
    int switches = TAP_SANITIZED || tap_under_valgrind() ? 2000 : 20000, bad = 0;
    for (int i = 0; i < switches; i++)
        bad += swf_cache_set_failslab(cache, i % 3 == 0 ? &every : i % 3 == 1 ? &third : NULL) != 0;
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < CALLERS; i++)
        pthread_join(t[i], NULL);
    uint64_t total = 0, failed = 0;
    for (int i = 0; i < CALLERS; i++)
        total += calls[i], failed += eagain[i];
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    ok(bad == 0, "%d reconfigurations", switches);
    ok(s.allocs_nowait + s.fails_injected + s.fails_nowait == total && failed == s.fails_injected,
       "%llu calls: %llu succeeded, %llu failed by injection, none lost", (unsigned long long)total,
       (unsigned long long)s.allocs_nowait, (unsigned long long)s.fails_injected);
    ok(s.alive == 0 && swf_cache_destroy(cache) == 0, "destroy");
    return tap_done();
}
