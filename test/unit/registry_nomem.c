/*
 * test/unit/registry_nomem.c - deactivate that cannot get what it needs changes nothing.
 *
 * The static library is linked with -Wl,--wrap for malloc, calloc and posix_memalign, and the
 * wrappers here fail on demand. A thread that has never read the registry needs memory for its
 * epoch record (and, if it never made a blocking sweepfill call, for its binding table) before
 * deactivate can walk: with the allocation failing, deactivate must return ENOMEM with the
 * registry still active and every member's object still published, and a retry once memory is
 * back must deactivate completely. A create without memory returns ENOMEM, and
 * swf_error_reason() says why (registry.h: every error of create has its reason).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

static int fail_allocations;

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
int __real_posix_memalign(void **p, size_t a, size_t n);

void *__wrap_malloc(size_t n)
{
    return __atomic_load_n(&fail_allocations, __ATOMIC_RELAXED) ? NULL : __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s)
{
    return __atomic_load_n(&fail_allocations, __ATOMIC_RELAXED) ? NULL : __real_calloc(n, s);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    return __atomic_load_n(&fail_allocations, __ATOMIC_RELAXED) ? ENOMEM
                                                                : __real_posix_memalign(p, a, n);
}

enum { MEMBERS = 100 };
static struct swf_node nodes[MEMBERS];
static struct swf_cache *cache;

static void init_obj(void *o, void *node, void *arg)
{
    (void)arg;
    *(void **)o = node;
}

static int published(void)
{
    int n = 0;
    for (int i = 0; i < MEMBERS; i++)
        n += swf_node_object(&nodes[i]) != NULL;
    return n;
}

struct attempt {
    struct swf_registry *r;
    int prepare; /* a blocking call first: only the epoch record is missing */
    int err;
};

static void *deactivate_without_memory(void *arg)
{
    struct attempt *a = arg;
    if (a->prepare)
        swf_cache_grow(cache, 0);
    __atomic_store_n(&fail_allocations, 1, __ATOMIC_RELAXED);
    a->err = swf_registry_deactivate(a->r);
    __atomic_store_n(&fail_allocations, 0, __ATOMIC_RELAXED);
    return NULL;
}

static void attempt(struct swf_registry *r, int prepare)
{
    const char *who = prepare ? "a prepared thread" : "a fresh thread";
    struct attempt a = {.r = r, .prepare = prepare};
    pthread_t t;
    pthread_create(&t, NULL, deactivate_without_memory, &a);
    pthread_join(t, NULL);
    struct swf_registry_stats s;
    swf_registry_stats(r, &s);
    ok(a.err == ENOMEM, "%s: deactivate without memory returns ENOMEM (%d)", who, a.err);
    ok(s.active == 1 && s.deactivations == 0 && published() == MEMBERS,
       "%s: the registry is still active with all %d objects published (%d)", who, MEMBERS,
       published());
}

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "nomem"};
    tap_require(swf_cache_create(&cfg, &cache) == 0, "cache");
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = cache;
    rc.init = init_obj;
    struct swf_registry *r = NULL;
    __atomic_store_n(&fail_allocations, 1, __ATOMIC_RELAXED);
    int created = swf_registry_create(&rc, &r);
    __atomic_store_n(&fail_allocations, 0, __ATOMIC_RELAXED);
    const char *why = swf_error_reason();
    ok(created == ENOMEM && strstr(why, "no memory for the registry") != NULL,
       "create without memory: ENOMEM (%d), and swf_error_reason() says why (\"%s\")", created,
       why);
    tap_require(swf_registry_create(&rc, &r) == 0, "registry");
    for (int i = 0; i < MEMBERS; i++)
        swf_registry_add(r, &nodes[i]);
    int err = swf_registry_activate(r, NULL);
    int n = published();
    ok(err == 0 && n == MEMBERS, "activate: %d published", n);

    attempt(r, 0);
    attempt(r, 1);

    err = swf_registry_deactivate(r);
    n = published();
    ok(err == 0 && n == 0, "with memory back, deactivate completes (%d published)", n);
    ok(swf_registry_deactivate(r) == EALREADY, "and only then is it EALREADY");
    for (int i = 0; i < MEMBERS; i++)
        swf_registry_del(r, &nodes[i], NULL);
    struct swf_cache_stats s;
    ok(swf_registry_synchronize(r) == 0 && swf_registry_destroy(r) == 0 &&
           swf_cache_stats(cache, &s) == 0 && s.alive == 0 && swf_cache_destroy(cache) == 0,
       "every object back, everything destroyed");
    return tap_done();
}
