/*
 * test/nowait/cache_nowait_wrap.c - NOWAIT and free take no lock and map nothing: counted.
 *
 * This program links the static library with -Wl,--wrap for the calls that could block or enter
 * the kernel (mutex lock and trylock, mmap, munmap, malloc, calloc, posix_memalign, sched_yield,
 * pthread_setspecific), so every such call the library makes lands in a counter here. The counts
 * must be zero across the lock-free paths, and non-zero across the blocking paths (which shows
 * the wrapping works). The paths covered: a fresh thread (shared depot path), a thread bound by
 * its blocking call, and one thread using 40 caches and 4 registries at once, whose bindings
 * must never evict each other (a read_lock after an eviction would allocate and lock).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <sweepfill/cache.h>
#include <sweepfill/registry.h>

#include "../common/tap.h"

static unsigned long calls_lock, calls_map, calls_malloc, calls_yield;

int __real_pthread_mutex_lock(pthread_mutex_t *m);
int __real_pthread_mutex_trylock(pthread_mutex_t *m);
void *__real_mmap(void *a, size_t l, int p, int f, int fd, off_t o);
int __real_munmap(void *a, size_t l);
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
int __real_posix_memalign(void **p, size_t a, size_t n);
int __real_sched_yield(void);
int __real_pthread_setspecific(pthread_key_t k, const void *v);

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
int __wrap_pthread_setspecific(pthread_key_t k, const void *v)
{
    __atomic_fetch_add(&calls_malloc, 1, __ATOMIC_RELAXED); /* may allocate (keys past 31) */
    return __real_pthread_setspecific(k, v);
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
    int bulk, fast; /* objects from the bulk call and the inline path */
};

/* A fresh thread: it never made a blocking call, so it works on the shared depot path. */
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
        /* The bulk calls and the inline path, over the same objects. */
        memset(objs, 0, sizeof(objs));
        p->bulk = (int)swf_cache_alloc_bulk(p->c, SWF_NOWAIT, objs, N);
        swf_cache_free_bulk(p->c, objs, N);
        for (int i = 0; i < N; i++)
            p->fast += (objs[i] = swf_cache_alloc_fast(p->c)) != NULL;
        for (int i = 0; i < N; i++)
            swf_cache_free_fast(p->c, objs[i]);
    }
    swf_cache_flush(p->c);
    p->calls = total() - before;
    return NULL;
}

enum { CACHES = 40, REGISTRIES = 4, ROUNDS = 1000 };

struct many {
    struct swf_cache *caches[CACHES];
    struct swf_registry *regs[REGISTRIES];
    unsigned long calls;
    int failures;
};

static void nothing_init(void *obj, void *member, void *arg)
{
    (void)obj, (void)member, (void)arg;
}

/* One thread, 40 caches and 4 registries: one blocking call prepares it (and sizes its binding
 * table for every handle in use); its first read of each registry makes its reader. After that,
 * every cache binds lock-free on first use and nothing the thread does allocates or locks. */
static void *many_phase(void *arg)
{
    struct many *m = arg;
    swf_cache_grow(m->caches[0], 0);
    for (int r = 0; r < REGISTRIES; r++)
        swf_registry_read_unlock(swf_registry_read_lock(m->regs[r]));
    unsigned long before = total();
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < CACHES; i++) {
            void *o = swf_cache_alloc(m->caches[i], SWF_NOWAIT);
            m->failures += o == NULL;
            swf_cache_free(m->caches[i], o);
        }
        for (int r = 0; r < REGISTRIES; r++) {
            struct swf_reader *rd = swf_registry_read_lock(m->regs[r]);
            m->failures += rd == NULL;
            swf_registry_read_unlock(rd);
        }
    }
    m->calls = total() - before;
    for (int i = 0; i < CACHES; i++)
        swf_cache_flush(m->caches[i]);
    return NULL;
}

static void many_owners(void)
{
    struct many m = {.calls = 0};
    for (int i = 0; i < CACHES; i++) {
        struct swf_cache_config cfg = {.object_size = 64 + 8 * (size_t)i, .prefill = 100};
        tap_require(swf_cache_create(&cfg, &m.caches[i]) == 0, "cache");
    }
    for (int r = 0; r < REGISTRIES; r++) {
        struct swf_registry_config rc;
        swf_registry_config_init(&rc);
        rc.cache = m.caches[r];
        rc.init = nothing_init;
        tap_require(swf_registry_create(&rc, &m.regs[r]) == 0, "registry");
    }
    pthread_t t;
    pthread_create(&t, NULL, many_phase, &m);
    pthread_join(t, NULL);
    ok(m.failures == 0, "one thread used %d caches and %d registries %d times over, no failure",
       CACHES, REGISTRIES, ROUNDS);
    ok(m.calls == 0,
       "no binding evicted another: %lu locks, maps, mallocs or yields across those rounds",
       m.calls);
    int bad = 0;
    for (int r = 0; r < REGISTRIES; r++)
        bad += swf_registry_destroy(m.regs[r]) != 0;
    for (int i = 0; i < CACHES; i++)
        bad += swf_cache_destroy(m.caches[i]) != 0;
    ok(bad == 0, "destroy them all");
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
    ok(p.bulk == N && p.fast == 3 * N, "bulk (%d) and inline (%d) NOWAIT served them too", p.bulk,
       p.fast);
    ok(p.calls == 0,
       "3 rounds of NOWAIT alloc + free, bulk and inline, + flush: %lu locks, maps, mallocs or "
       "yields (want 0)",
       p.calls);

    before = total();
    void *o = swf_cache_alloc(c, SWF_WAIT);
    swf_cache_free(c, o);
    ok(swf_cache_set_limit(c, 0) == 0 && total() > before, "a blocking call is seen again");
    ok(swf_cache_destroy(c) == 0, "destroy");
    many_owners();
    return tap_done();
}
