/*
 * test/cache_nowait_wrap.c - NOWAIT and free take no lock and map nothing: counted.
 *
 * This program links the static library with -Wl,--wrap for the calls that could block or enter
 * the kernel (mutex lock and trylock, mmap, munmap, malloc, calloc, posix_memalign, sched_yield),
 * so every such call the library makes lands in a counter here. The counts must be zero across
 * the lock-free paths, and non-zero across the blocking paths (which shows the wrapping works).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <sweepfill/cache.h>

#include "tap.h"

static unsigned long calls_lock, calls_map, calls_malloc, calls_yield;

int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_trylock(pthread_mutex_t *m);
void *__real_mmap(void *a, size_t l, int p, int f, int fd, off_t o);
int __real_munmap(void *a, size_t l);
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
int __real_posix_memalign(void **p, size_t a, size_t n);
int __real_sched_yield(void);

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
    __atomic_fetch_add(&calls_lock, 1, __ATOMIC_RELAXED);
    return __real_pthread_mutex_lock(m);
}
int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
    __atomic_fetch_add(&calls_lock, 1, __ATOMIC_RELAXED);
    return __real_pthread_mutex_trylock(m);
}
void *__wrap_mmap(void *a, size_t l, int p, int f, int fd, off_t o)
{
    __atomic_fetch_add(&calls_map, 1, __ATOMIC_RELAXED);
    return __real_mmap(a, l, p, f, fd, o);
}
int __wrap_munmap(void *a, size_t l)
{
    __atomic_fetch_add(&calls_map, 1, __ATOMIC_RELAXED);
    return __real_munmap(a, l);
}
void *__wrap_malloc(size_t n)
{
    __atomic_fetch_add(&calls_malloc, 1, __ATOMIC_RELAXED);
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s)
{
    __atomic_fetch_add(&calls_malloc, 1, __ATOMIC_RELAXED);
    return __real_calloc(n, s);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    __atomic_fetch_add(&calls_malloc, 1, __ATOMIC_RELAXED);
    return __real_posix_memalign(p, a, n);
}
int __wrap_sched_yield(void)
{
    __atomic_fetch_add(&calls_yield, 1, __ATOMIC_RELAXED);
    return __real_sched_yield();
}

static unsigned long total(void)
{
    return __atomic_load_n(&calls_lock, __ATOMIC_RELAXED) +
           __atomic_load_n(&calls_map, __ATOMIC_RELAXED) +
           __atomic_load_n(&calls_malloc, __ATOMIC_RELAXED) +
           __atomic_load_n(&calls_yield, __ATOMIC_RELAXED);
}

enum { N = 5000 };
static void *objs[2 * N];

struct phase {
    struct swf_cache *c;
    unsigned long calls; /* wrapped calls during the lock-free work */
    int allocated;
};

/* A fresh thread: its first NOWAIT binds it, which must be lock-free too. */
static void *nowait_phase(void *arg)
{
    struct phase *p = arg;
    unsigned long before = total();
    for (int round = 0; round < 3; round++) {
        int n = 0;
        while (n < 2 * N && (objs[n] = swf_cache_alloc(p->c, SWF_NOWAIT)) != NULL)
            n++;
        p->allocated = n;
        for (int i = 0; i < n; i++)
            swf_cache_free(p->c, objs[i]);
    }
    swf_cache_flush(p->c);
    p->calls = total() - before;
    return NULL;
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 256, .name = "wrapped"};
    struct swf_cache *c;
    unsigned long before = total();
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    tap_require(swf_cache_grow(c, N) == 0, "grow");
    unsigned long blocking = calls_lock + calls_map;
    ok(total() > before && blocking > 0,
       "create and grow lock and map (%lu locks, %lu maps): the wrapping sees the library's calls",
       calls_lock, calls_map);

    struct phase p = {.c = c};
    pthread_t t;
    pthread_create(&t, NULL, nowait_phase, &p);
    pthread_join(t, NULL);
    ok(p.allocated >= N, "NOWAIT served the %d objects grow prepared (%d)", N, p.allocated);
    ok(p.calls == 0,
       "3 rounds of NOWAIT alloc + free + flush: %lu locks, maps, mallocs or yields (want 0)",
       p.calls);

    before = total();
    void *o = swf_cache_alloc(c, SWF_WAIT);
    swf_cache_free(c, o);
    ok(swf_cache_set_limit(c, 0) == 0 && total() > before, "a blocking call is seen again");
    ok(swf_cache_destroy(c) == 0, "destroy");
    return tap_done();
}
