/*
 * test/concurrent/cache_inline_percpu.c - cache.h's inline path in the per-CPU mode: it pops and
 * pushes the CPU's magazine itself, each sequence clears the thread's rseq_cs when it ends (what
 * lets an object that calls the inline path be dlclosed), and the counts stay exact while threads
 * are preempted and migrated inside the sequences.
 *
 * The program is linked with -Wl,--wrap=swf_cache_alloc_miss_,--wrap=swf_cache_free_miss_: the
 * inline path's calls to the library's slow halves come to the __wrap_ functions below, which
 * count them and pass them on. The link may be static (the aarch64_kernel stage's guest has no
 * loader); the library never calls the two itself.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/rseq.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

#define THREADS 8
#define PAIRS   200000

static atomic_long library_calls;

void *__real_swf_cache_alloc_miss_(struct swf_cache *c);
int __real_swf_cache_free_miss_(struct swf_cache *c, void *obj);
void *__wrap_swf_cache_alloc_miss_(struct swf_cache *c);
int __wrap_swf_cache_free_miss_(struct swf_cache *c, void *obj);

void *__wrap_swf_cache_alloc_miss_(struct swf_cache *c)
{
    atomic_fetch_add(&library_calls, 1);
    return __real_swf_cache_alloc_miss_(c);
}

int __wrap_swf_cache_free_miss_(struct swf_cache *c, void *obj)
{
    atomic_fetch_add(&library_calls, 1);
    return __real_swf_cache_free_miss_(c, obj);
}

/* The calling thread's rseq_cs: 0 when no sequence is in flight or pointed at. */
static uint64_t rseq_cs_now(void)
{
    uint64_t cs;
    memcpy(&cs, (char *)__builtin_thread_pointer() + __rseq_offset + 8, sizeof(cs));
    return cs;
}

static struct swf_cache *c;
static atomic_long left_pointing, lost;

static void *pairs(void *arg)
{
    (void)arg;
    void *held[4] = {0};
    for (int i = 0; i < PAIRS; i++) {
        int k = i & 3;
        if (held[k] != NULL) {
            swf_cache_free_fast(c, held[k]);
            left_pointing += rseq_cs_now() != 0;
        }
        held[k] = swf_cache_alloc_fast(c);
        left_pointing += rseq_cs_now() != 0;
        lost += held[k] == NULL;
    }
    for (int k = 0; k < 4; k++)
        if (held[k] != NULL)
            swf_cache_free_fast(c, held[k]);
    return NULL;
}

int main(void)
{
    if (swf_cache_percpu() == 0) {
        skip("the per-thread mode here (no rseq, or SWF_PERCPU=0)");
        return tap_done();
    }
    struct swf_cache_config cfg = {.object_size = 64, .name = "inline_percpu"};
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    tap_require(swf_cache_grow(c, 4096) == 0, "grow");

    /* One thread, after a first pair (which binds it and fills its CPU's magazine). */
    void *o = swf_cache_alloc_fast(c);
    swf_cache_free_fast(c, o);
    long before = atomic_load(&library_calls);
    int pointing = 0;
    for (int i = 0; i < 10000; i++) {
        o = swf_cache_alloc_fast(c);
        pointing += rseq_cs_now() != 0;
        swf_cache_free_fast(c, o);
        pointing += rseq_cs_now() != 0;
    }
    long calls = atomic_load(&library_calls) - before;
    if (swf_debug_checks())
        ok(calls == 20000, "full checks on: every inline call went to the library (%ld)", calls);
    else
        ok(calls <= 100, "10,000 inline pairs called the library %ld times (migrations only)",
           calls);
    ok(pointing == 0, "rseq_cs is 0 after every inline call (%d not)", pointing);

    /* Threads: 4x oversubscribed on this machine's CPUs, preempted inside sequences. */
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, pairs, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    ok(lost == 0, "no NOWAIT allocation failed with 4,096 objects for %d threads (%ld)", THREADS,
       (long)lost);
    ok(left_pointing == 0, "no thread was left pointing at a descriptor (%ld)",
       (long)left_pointing);
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    ok(s.alive == 0 && s.allocs_nowait == s.frees && s.ready == s.capacity,
       "exact counts: %llu allocations, %llu frees, %llu alive, %llu of %llu ready",
       (unsigned long long)s.allocs_nowait, (unsigned long long)s.frees,
       (unsigned long long)s.alive, (unsigned long long)s.ready, (unsigned long long)s.capacity);
    ok(swf_cache_destroy(c) == 0, "destroy");
    return tap_done();
}
