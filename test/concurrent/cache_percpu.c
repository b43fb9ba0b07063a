/*
 * test/concurrent/cache_percpu.c - the cache in the per-CPU mode (cache.h, swf_cache_percpu): the
 * mode as reported, and objects that a thread freed are never held by that thread.
 *
 * A cache limited to 60 objects. Thread A (which made a blocking call, so in the per-thread mode
 * it has magazines of its own) allocates all 60 with NOWAIT, frees them, and stays alive. Then
 * thread B, on the same CPU, allocates them: in the per-CPU mode A holds nothing, so B's NOWAIT
 * allocations find them in that CPU's magazine and the depot (when the slots are indexed by CPU
 * number: with mm_cid, B may get another slot), and B's WAIT allocations always do, since a WAIT
 * allocation that finds nothing at the limit drains every CPU's magazine. In the per-thread mode
 * the 60 stay in A's magazines until A exits or flushes: B's WAIT allocation fails (ENOMEM).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

#define N 60

static struct swf_cache *c;
static pthread_barrier_t step;
static int b_nowait, b_wait;

static void pin_cpu0(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *thread_a(void *arg)
{
    (void)arg;
    pin_cpu0();
    tap_require(swf_cache_grow(c, 0) == 0, "A's blocking call");
    void *o[N];
    int got = 0;
    while (got < N && (o[got] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL)
        got++;
    ok(got == N, "A allocates all %d objects with NOWAIT (%d)", N, got);
    for (int i = 0; i < got; i++)
        swf_cache_free(c, o[i]);
    pthread_barrier_wait(&step); /* freed */
    pthread_barrier_wait(&step); /* B is done */
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    pin_cpu0();
    void *o[N];
    int got = 0;
    while (got < N && (o[got] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL)
        got++;
    b_nowait = got;
    while (got < N && (o[got] = swf_cache_alloc(c, SWF_WAIT)) != NULL)
        got++;
    b_wait = got - b_nowait;
    for (int i = 0; i < got; i++)
        swf_cache_free(c, o[i]);
    return NULL;
}

int main(void)
{
    int mode = swf_cache_percpu();
    const char *env = getenv("SWF_PERCPU");
    diag("mode %d (SWF_PERCPU=%s)", mode, env ? env : "(unset)");
    ok(mode >= 0 && mode <= 2 && swf_cache_percpu() == mode, "one mode, for the whole process");
    if (env != NULL && strcmp(env, "0") == 0)
        ok(mode == 0, "SWF_PERCPU=0: the per-thread mode");
    if (env != NULL && strcmp(env, "cpu_id") == 0)
        ok(mode != 2, "SWF_PERCPU=cpu_id: never the mm_cid index");

    struct swf_cache_config cfg = {.object_size = 64, .limit = N, .name = "percpu"};
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    ok(s.percpu == (mode != 0), "stats.percpu says the mode (%llu)", (unsigned long long)s.percpu);
    tap_require(swf_cache_grow(c, N) == 0, "grow");

    pthread_barrier_init(&step, NULL, 2);
    pthread_t a, b;
    pthread_create(&a, NULL, thread_a, NULL);
    pthread_barrier_wait(&step);
    pthread_create(&b, NULL, thread_b, NULL);
    pthread_join(b, NULL);
    swf_cache_stats(c, &s);
    if (mode != 0) {
        ok(b_nowait + b_wait == N && s.capacity == N,
           "per-CPU: B, on A's CPU, gets all %d objects A freed while A lives, without mapping "
           "more (%d NOWAIT, %d WAIT; capacity %llu)",
           N, b_nowait, b_wait, (unsigned long long)s.capacity);
        if (mode == 1)
            ok(b_nowait == N, "per-CPU by CPU number: all of them with NOWAIT (%d)", b_nowait);
    } else {
        ok(b_nowait == 0 && b_wait == 0,
           "per-thread: A's magazines hold the %d objects while A lives (B got %d)", N,
           b_nowait + b_wait);
    }
    pthread_barrier_wait(&step);
    pthread_join(a, NULL);
    swf_cache_stats(c, &s);
    ok(s.alive == 0 && s.allocs_nowait + s.allocs_wait == s.frees && s.ready == s.capacity,
       "the counters add up (%llu + %llu allocations, %llu frees)",
       (unsigned long long)s.allocs_nowait, (unsigned long long)s.allocs_wait,
       (unsigned long long)s.frees);
    ok(swf_cache_flush(c) == 0 && swf_cache_destroy(c) == 0, "flush and destroy");
    return tap_done();
}
