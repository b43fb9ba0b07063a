/*
 * test/concurrent/cache_threads.c - thousands of threads on one cache at once.
 *
 * 10,000 threads (1,000 under a sanitizer: ThreadSanitizer caps live threads near 8,000 and is
 * slow; 1,000 under qemu, SWF_UNDER_QEMU, whose emulated kernel makes each thread slow to start;
 * 200 under valgrind) are alive together, held at a barrier, then each allocates and frees NOWAIT
 * in rounds. Half made a blocking call first (swf_cache_grow(c, 0)) and so hold magazines of their
 * own: far more threads than the old fixed thread-state table had room for. The other half never
 * block and use the depot's shared path. The cache holds enough objects for every thread to keep
 * a full magazine, so no NOWAIT allocation may fail: an EAGAIN would be a spurious one. At the
 * end every thread has exited (its state given back), and the counts balance.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { ROUNDS = 50, HELD = 4 };

static struct swf_cache *cache;
static pthread_barrier_t start;
static int eagain, other_errors;

static void *worker(void *arg)
{
    int bound = (int)(uintptr_t)arg;
    if (bound && swf_cache_grow(cache, 0) != 0)
        __atomic_fetch_add(&other_errors, 1, __ATOMIC_RELAXED);
    pthread_barrier_wait(&start);
    for (int r = 0; r < ROUNDS; r++) {
        void *held[HELD];
        for (int i = 0; i < HELD; i++) {
            held[i] = swf_cache_alloc(cache, SWF_NOWAIT);
            if (held[i] == NULL)
                __atomic_fetch_add(errno == EAGAIN ? &eagain : &other_errors, 1, __ATOMIC_RELAXED);
        }
        for (int i = 0; i < HELD; i++)
            swf_cache_free(cache, held[i]);
    }
    return NULL;
}

int main(void)
{
    int threads = tap_under_valgrind() ? 200 : TAP_SANITIZED || tap_under_qemu() ? 1000 : 10000;
    struct swf_cache_config cfg = {.object_size = 64, .name = "threads"};
    tap_require(swf_cache_create(&cfg, &cache) == 0, "create");
    /* Every thread may hold two magazines' worth, plus what is in flight. */
    tap_require(swf_cache_grow(cache, (size_t)threads * 2 * SWF_CACHE_MAGAZINE) == 0, "grow");
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 << 10);
    pthread_t *t = calloc((size_t)threads, sizeof(*t));
    int created = 0;
    for (int i = 0; i < threads; i++)
        created += pthread_create(&t[i], &attr, worker, (void *)(uintptr_t)(i % 2)) == 0;
    tap_require(created == threads, "could not create every thread");
    pthread_barrier_wait(&start); /* all alive at once from here */
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    ok(other_errors == 0, "%d threads, half bound by a blocking call: no error", threads);
    ok(eagain == 0, "%d NOWAIT allocations, %d spurious EAGAIN with objects ready",
       threads * ROUNDS * HELD, eagain);
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    ok(s.alive == 0 && s.allocs_nowait == (uint64_t)threads * ROUNDS * HELD &&
           s.frees == s.allocs_nowait && s.capacity == s.ready,
       "conservation: %llu allocations, %llu frees, alive %llu, capacity %llu == ready %llu",
       (unsigned long long)s.allocs_nowait, (unsigned long long)s.frees,
       (unsigned long long)s.alive, (unsigned long long)s.capacity, (unsigned long long)s.ready);
    ok(swf_cache_destroy(cache) == 0, "destroy once every thread has exited");
    free(t);
    return tap_done();
}
