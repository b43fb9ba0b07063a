/*
 * test/concurrent/fork_mid_move.c - a fork() that lands while another thread moves a CPU's
 * magazine (the per-CPU mode's swap of a depot magazine into a slot, on an allocation, a free or
 * a flush) leaves the child a cache whose counts are right and that it can destroy.
 *
 * Worker threads allocate one object, free it and flush, again and again: each round swaps a
 * depot magazine into their CPU's slot for the allocation, and an empty one in for the flush.
 * Each worker says, in words it stores with release, what it is doing: allocating, holding an
 * object (which it names), freeing it, or flushing. Meanwhile the main thread, which holds
 * objects of its own, forks again and again. Each child frees the main thread's objects and
 * every object a worker held at the fork; the objects of a worker that was inside an allocation
 * or a free at the fork are the child's only unknowns (that call may or may not have taken
 * effect, and no thread of the child will finish it). So the child checks that the cache counts
 * at most that many objects alive, and that swf_cache_destroy() succeeds when it counts none and
 * fails only for the objects alive otherwise. Run with both indexes of the per-CPU slots
 * (SWF_PERCPU=1: mm_cid where the kernel has it; SWF_PERCPU=cpu_id); in the per-thread mode,
 * where no magazine moves between slots, it passes too. The run ends on the parent's own
 * conservation check.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { WORKERS = 3, MINE = 100, FORKS = 200, CHILD_SECONDS = 20 };

/* What a worker is doing, as the child finds it. */
enum { IDLE, ALLOCATING, HOLDING, FREEING, FLUSHING };

/* A child's exit status. */
enum {
    CHILD_DESTROYED = 0,  /* no object alive: destroyed */
    CHILD_LOST_ALIVE = 1, /* objects of lost calls alive: EBUSY, for them */
    CHILD_ALIVE_WRONG = 10,
    CHILD_BUSY_MOVING = 11,
    CHILD_OTHER = 12,
};

struct worker {
    pthread_t thread;
    int state;
    void *held;
} __attribute__((aligned(64)));

static struct swf_cache *cache;
static struct worker workers[WORKERS];
static void *mine[MINE];
static int stop;

static void say(struct worker *w, int state)
{
    __atomic_store_n(&w->state, state, __ATOMIC_RELEASE);
}

/* Time outside the calls, where the child knows what the worker holds. */
static void pause_here(void)
{
    for (volatile int i = 0; i < 400; i++)
        ;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        say(w, ALLOCATING);
        void *o = swf_cache_alloc(cache, SWF_NOWAIT);
        __atomic_store_n(&w->held, o, __ATOMIC_RELEASE);
        say(w, HOLDING);
        pause_here();
        say(w, FREEING);
        swf_cache_free(cache, o);
        __atomic_store_n(&w->held, NULL, __ATOMIC_RELEASE);
        say(w, FLUSHING);
        swf_cache_flush(cache);
        say(w, IDLE);
        pause_here();
    }
    return NULL;
}

/* The child: free what this thread and the workers held, then count and destroy. */
static int child(void)
{
    alarm(CHILD_SECONDS);
    for (int i = 0; i < MINE; i++)
        swf_cache_free(cache, mine[i]);
    uint64_t unknown = 0;
    for (int w = 0; w < WORKERS; w++) {
        int state = __atomic_load_n(&workers[w].state, __ATOMIC_ACQUIRE);
        if (state == HOLDING)
            swf_cache_free(cache, __atomic_load_n(&workers[w].held, __ATOMIC_RELAXED));
        else if (state == ALLOCATING || state == FREEING)
            unknown++;
    }
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    int err = swf_cache_destroy(cache);
    const char *why = err ? swf_error_reason() : "";
    if (s.alive > unknown) {
        fprintf(stderr, "# child: %llu objects alive, at most %llu expected; destroy: %d (%s)\n",
                (unsigned long long)s.alive, (unsigned long long)unknown, err, why);
        return CHILD_ALIVE_WRONG;
    }
    if (err == 0 && s.alive == 0)
        return CHILD_DESTROYED;
    if (err == EBUSY && s.alive > 0 && strstr(why, "objects are alive") != NULL)
        return CHILD_LOST_ALIVE;
    fprintf(stderr, "# child: %llu objects alive (%llu unknown); destroy: %d (%s)\n",
            (unsigned long long)s.alive, (unsigned long long)unknown, err, why);
    return strstr(why, "moving") != NULL ? CHILD_BUSY_MOVING : CHILD_OTHER;
}

int main(void)
{
    if (tap_under_qemu()) {
        skip(TAP_QEMU_THREADED_FORK);
        return tap_done();
    }
    struct swf_cache_config cfg = {.object_size = 64, .name = "moved"};
    tap_require(swf_cache_create(&cfg, &cache) == 0 && swf_cache_grow(cache, 4000) == 0, "cache");
    for (int i = 0; i < MINE; i++)
        tap_require((mine[i] = swf_cache_alloc(cache, SWF_WAIT)) != NULL, "the main objects");
    diag("magazines: %s", swf_cache_percpu_reason());
    for (int w = 0; w < WORKERS; w++)
        tap_require(pthread_create(&workers[w].thread, NULL, work, &workers[w]) == 0, "worker");

    int by[CHILD_OTHER + 1] = {0}, odd = 0;
    for (int f = 0; f < FORKS; f++) {
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        tap_require(pid >= 0, "fork");
        if (pid == 0)
            _exit(child());
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (WIFEXITED(status) && WEXITSTATUS(status) <= CHILD_OTHER)
            by[WEXITSTATUS(status)]++;
        else
            odd++; /* killed (an abort, the alarm) */
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    for (int w = 0; w < WORKERS; w++)
        pthread_join(workers[w].thread, NULL);

    int failed = by[CHILD_ALIVE_WRONG] + by[CHILD_BUSY_MOVING] + by[CHILD_OTHER] + odd;
    ok(failed == 0,
       "%d of %d children failed: alive miscounted %d, destroy EBUSY \"moving\" %d, other "
       "errors %d, killed %d (%d destroyed the cache, %d kept objects of calls lost in the fork)",
       failed, FORKS, by[CHILD_ALIVE_WRONG], by[CHILD_BUSY_MOVING], by[CHILD_OTHER], odd,
       by[CHILD_DESTROYED], by[CHILD_LOST_ALIVE]);

    /* The parent's conservation check: every object back, counted so, and destroyed. */
    for (int i = 0; i < MINE; i++)
        swf_cache_free(cache, mine[i]);
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    ok(s.alive == 0 && s.ready == s.capacity,
       "parent: alive %llu, ready %llu of capacity %llu after the workers stopped",
       (unsigned long long)s.alive, (unsigned long long)s.ready, (unsigned long long)s.capacity);
    ok(swf_cache_destroy(cache) == 0, "parent: destroy (%s)", swf_error_reason());
    return tap_done();
}
