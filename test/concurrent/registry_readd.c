/*
 * test/concurrent/registry_readd.c - a deleted node comes back to its owner through release(n), and
 * no add can link it again before that call. An adder retries add on EBUSY as fast as it can
 * against a deleter that finalises each deletion at once (swf_registry_synchronize); the adder
 * makes the node addable with swf_node_init only after release(n) was called, as registry.h asks,
 * and checks that none of its adds succeeded while a deletion's release was still pending.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

enum { NODES = 4 };

struct item {
    struct swf_node node;
    int linked;   /* set by the adder after a successful add, cleared by the deleter */
    int dels;     /* deletions of this node (the deleter) */
    int releases; /* release(n) calls (the release callback) */
    int inited;   /* releases the adder has seen and swf_node_init'd for (the adder) */
};

static struct swf_registry *reg;
static struct item items[NODES];
static int cycles, stop;
static int early_adds, bad_errors;

static void init_obj(void *o, void *node, void *arg)
{
    (void)arg;
    *(void **)o = node;
}

static void on_release(struct swf_node *n)
{
    __atomic_fetch_add(&((struct item *)n)->releases, 1, __ATOMIC_RELEASE); /* n is ours now */
}

static void try_add(struct item *it)
{
    int releases = __atomic_load_n(&it->releases, __ATOMIC_ACQUIRE);
    if (releases > it->inited) {
        swf_node_init(&it->node); /* release(n) was called: the node is ours */
        it->inited = releases;
    }
    int dels = __atomic_load_n(&it->dels, __ATOMIC_ACQUIRE);
    int err = swf_registry_add(reg, &it->node);
    if (err == 0) {
        if (it->inited < dels) { /* linked while a deletion's release was pending */
            __atomic_fetch_add(&early_adds, 1, __ATOMIC_RELAXED);
            __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&it->linked, 1, __ATOMIC_RELEASE);
    } else if (err != EBUSY && err != EEXIST &&
               __atomic_fetch_add(&bad_errors, 1, __ATOMIC_RELAXED) == 0) {
        diag("add: %d (%s)", err, swf_error_reason());
    }
}

static void *adder(void *arg)
{
    (void)arg;
    for (unsigned pass = 0; !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); pass++) {
        for (int i = 0; i < NODES; i++)
            if (!__atomic_load_n(&items[i].linked, __ATOMIC_ACQUIRE))
                try_add(&items[i]);
        if (pass % 64 == 63)
            sched_yield(); /* two cores: let the deleter's grace periods through */
    }
    return NULL;
}

static void *deleter(void *arg)
{
    int target = *(int *)arg;
    for (int c = 0; c < target && !__atomic_load_n(&stop, __ATOMIC_ACQUIRE); c++) {
        struct item *it = &items[c % NODES];
        while (!__atomic_load_n(&it->linked, __ATOMIC_ACQUIRE))
            if (__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
                return NULL;
        __atomic_store_n(&it->linked, 0, __ATOMIC_RELEASE);
        __atomic_fetch_add(&it->dels, 1, __ATOMIC_RELEASE);
        if (swf_registry_del(reg, &it->node, on_release) != 0)
            __atomic_fetch_add(&bad_errors, 1, __ATOMIC_RELAXED);
        swf_registry_synchronize(reg); /* finalise now, while the adder retries */
        __atomic_fetch_add(&cycles, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(void)
{
    struct swf_cache_config ccfg = {.object_size = 64, .name = "readd"};
    struct swf_cache *cache;
    tap_require(swf_cache_create(&ccfg, &cache) == 0, "cache");
    struct swf_registry_config rcfg;
    swf_registry_config_init(&rcfg);
    rcfg.cache = cache;
    rcfg.init = init_obj;
    tap_require(swf_registry_create(&rcfg, &reg) == 0, "registry");
    ok(swf_registry_activate(reg, NULL) == 0, "activate (adds give objects too)");

    int target = TAP_SANITIZED || tap_under_valgrind() ? 1000 : 10000;
    pthread_t a, d;
    pthread_create(&a, NULL, adder, NULL);
    pthread_create(&d, NULL, deleter, &target);
    pthread_join(d, NULL);
    pthread_join(a, NULL);
    ok(early_adds == 0, "no add linked a node before release(n) of its last deletion (%d)",
       early_adds);
    if (early_adds != 0)
        return tap_done(); /* the registry's state is not to be trusted any more */
    ok(cycles == target, "%d delete / retried-add cycles", cycles);
    ok(bad_errors == 0,
       "every failed add was EBUSY (or EEXIST before the del), every del 0 (%d others)",
       bad_errors);

    for (int i = 0; i < NODES; i++)
        if (items[i].linked)
            swf_registry_del(reg, &items[i].node, NULL);
    ok(swf_registry_deactivate(reg) == 0 && swf_registry_synchronize(reg) == 0 &&
           swf_registry_destroy(reg) == 0,
       "deactivate, synchronize, destroy");
    struct swf_cache_stats cs;
    swf_cache_stats(cache, &cs);
    ok(cs.alive == 0 && swf_cache_destroy(cache) == 0, "every object went back (alive %llu)",
       (unsigned long long)cs.alive);
    return tap_done();
}
