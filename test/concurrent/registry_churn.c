/*
 * test/concurrent/registry_churn.c - activation under churn.
 *
 * Two threads add and delete their own members as fast as they can (a deleted member is reused
 * only after its release callback ran), a reader walks the registry checking every object it
 * finds, and the main thread activates and deactivates the registry over and over. After each
 * activate returns, a walk must find every reachable member with its own initialised object and
 * no object in two members; after each deactivate returns, a walk must find no object at all.
 * At the end everything is deleted: once the grace periods have passed, every member has been
 * released and the cache's alive count is back to zero.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

#define CANARY 0x4348555252524e21ull

enum { CHURNERS = 2, POOL = 2000, ROUNDS = 200, READERS = 1 };

struct obj {
    uint64_t canary;
    struct swf_node *owner;
};

struct item {
    struct swf_node node;
    int linked;   /* written by the item's churn thread; read by release callbacks */
    int released; /* set by the release callback, read by the churn thread */
};

static struct swf_registry *reg;
static struct swf_cache *cache;
static int stop_churn, stop_read;
static uint64_t reader_bad, reader_seen;

static void init_obj(void *o, void *node, void *arg)
{
    (void)arg;
    struct obj *p = o;
    p->canary = CANARY ^ (uint64_t)(uintptr_t)node;
    p->owner = node;
}

static bool obj_ok(const struct obj *p, const struct swf_node *n)
{
    return p->canary == (CANARY ^ (uint64_t)(uintptr_t)n) && p->owner == n;
}

static int release_on_linked; /* release callbacks that found their node linked again */

/* The node is ours from here: check that no add linked it first, make it addable, hand it on. */
static void on_release(struct swf_node *n)
{
    struct item *it = (struct item *)n;
    if (__atomic_load_n(&it->linked, __ATOMIC_ACQUIRE))
        __atomic_fetch_add(&release_on_linked, 1, __ATOMIC_RELAXED);
    swf_node_init(n);
    __atomic_store_n(&it->released, 1, __ATOMIC_RELEASE);
}

struct churner {
    struct item *items;
    uint64_t rng;
    uint64_t adds, dels, add_errors;
};

static void *churn(void *arg)
{
    struct churner *ch = arg;
    while (!__atomic_load_n(&stop_churn, __ATOMIC_ACQUIRE)) {
        struct item *it = &ch->items[tap_rand(&ch->rng) % POOL];
        if (it->linked) {
            __atomic_store_n(&it->linked, 0, __ATOMIC_RELEASE);
            if (swf_registry_del(reg, &it->node, on_release) == 0) {
                ch->dels++;
            }
        } else if (__atomic_load_n(&it->released, __ATOMIC_ACQUIRE)) {
            int err = swf_registry_add(reg, &it->node);
            if (err == 0) {
                __atomic_store_n(&it->linked, 1, __ATOMIC_RELEASE);
                __atomic_store_n(&it->released, 0, __ATOMIC_RELAXED);
                ch->adds++;
            } else {
                ch->add_errors++;
            }
        }
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    uint64_t bad = 0, seen = 0;
    while (!__atomic_load_n(&stop_read, __ATOMIC_ACQUIRE)) {
        struct swf_reader *rd = swf_registry_read_lock(reg);
        struct swf_node *n;
        SWF_REGISTRY_FOREACH(reg, n)
        {
            const struct obj *p = swf_node_object(n);
            if (p != NULL) {
                seen++;
                bad += !obj_ok(p, n);
            }
        }
        swf_registry_read_unlock(rd);
    }
    __atomic_fetch_add(&reader_bad, bad, __ATOMIC_RELAXED);
    __atomic_fetch_add(&reader_seen, seen, __ATOMIC_RELAXED);
    return NULL;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* One walk: members reachable, how many lack an object or carry a wrong one, duplicates. */
struct census {
    size_t members, without, wrong, duplicates;
};

static struct census take_census(void)
{
    static void *objs[CHURNERS * POOL];
    struct census c = {0, 0, 0, 0};
    size_t n = 0;
    struct swf_reader *rd = swf_registry_read_lock(reg);
    struct swf_node *node;
    SWF_REGISTRY_FOREACH(reg, node)
    {
        c.members++;
        const struct obj *p = swf_node_object(node);
        if (p == NULL) {
            c.without++;
            continue;
        }
        c.wrong += !obj_ok(p, node);
        if (n < CHURNERS * POOL)
            objs[n++] = (void *)p;
    }
    swf_registry_read_unlock(rd);
    qsort(objs, n, sizeof(void *), cmp_ptr);
    for (size_t i = 1; i < n; i++)
        c.duplicates += objs[i] == objs[i - 1];
    return c;
}

int main(void)
{
    struct swf_cache_config ccfg = {.object_size = sizeof(struct obj), .name = "churn"};
    tap_require(swf_cache_create(&ccfg, &cache) == 0, "cache");
    struct swf_registry_config cfg;
    swf_registry_config_init(&cfg);
    cfg.cache = cache;
    cfg.init = init_obj;
    cfg.section_bound = 64;
    cfg.reserve = 8;
    tap_require(swf_registry_create(&cfg, &reg) == 0, "registry");

    static struct churner ch[CHURNERS];
    pthread_t ct[CHURNERS], rt[READERS];
    for (int i = 0; i < CHURNERS; i++) {
        ch[i].items = calloc(POOL, sizeof(struct item));
        ch[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        for (int k = 0; k < POOL; k++)
            ch[i].items[k].released = 1;
        pthread_create(&ct[i], NULL, churn, &ch[i]);
    }
    for (int i = 0; i < READERS; i++)
        pthread_create(&rt[i], NULL, reader, NULL);

    int bad_on = 0, bad_off = 0;
    uint64_t swept = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct swf_sweep_stats st;
        int err = swf_registry_activate(reg, &st);
        struct census on = take_census();
        swept += st.assigned;
        bool good_on = err == 0 && on.without == 0 && on.wrong == 0 && on.duplicates == 0;
        bad_on += !good_on;
        err = swf_registry_deactivate(reg) || err;
        struct census off = take_census();
        bool good_off = err == 0 && off.without == off.members;
        bad_off += !good_off;
        if (!good_on || !good_off || round % 50 == 0)
            ok(good_on && good_off,
               "round %d: after activate %zu members, %zu without an object, %zu wrong, %zu "
               "duplicated (sweep assigned %llu, %llu lost races, longest section %llu); after "
               "deactivate %zu of %zu without",
               round, on.members, on.without, on.wrong, on.duplicates,
               (unsigned long long)st.assigned, (unsigned long long)st.lost_races,
               (unsigned long long)st.longest_section, off.without, off.members);
        sched_yield();
    }
    ok(bad_on == 0, "%d rounds: after every activate, every member had exactly its own object",
       ROUNDS);
    ok(bad_off == 0, "%d rounds: after every deactivate, no member had an object", ROUNDS);

    __atomic_store_n(&stop_churn, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < CHURNERS; i++)
        pthread_join(ct[i], NULL);
    __atomic_store_n(&stop_read, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++)
        pthread_join(rt[i], NULL);
    ok(reader_bad == 0, "the reader saw %llu objects, none uninitialised or another member's",
       (unsigned long long)reader_seen);

    uint64_t adds = 0, dels = 0, errs = 0;
    for (int i = 0; i < CHURNERS; i++) {
        for (int k = 0; k < POOL; k++) {
            struct item *it = &ch[i].items[k];
            if (!it->linked)
                continue;
            __atomic_store_n(&it->linked, 0, __ATOMIC_RELEASE);
            if (swf_registry_del(reg, &it->node, on_release) == 0)
                dels++;
        }
        adds += ch[i].adds;
        dels += ch[i].dels;
        errs += ch[i].add_errors;
    }
    swf_registry_synchronize(reg);
    int unreleased = 0;
    for (int i = 0; i < CHURNERS; i++)
        for (int k = 0; k < POOL; k++)
            unreleased += !ch[i].items[k].released;
    struct swf_registry_stats rs;
    swf_registry_stats(reg, &rs);
    struct swf_cache_stats cs;
    swf_cache_stats(cache, &cs);
    diag("%llu adds, %llu dels, %llu objects by activation sweeps, %llu by adds, %llu lost races",
         (unsigned long long)adds, (unsigned long long)dels, (unsigned long long)swept,
         (unsigned long long)rs.assigned_by_add, (unsigned long long)rs.lost_races);
    ok(errs == 0 && adds == dels && unreleased == 0 && rs.members == 0 && rs.pending_release == 0,
       "every added member was deleted and released (%llu)", (unsigned long long)adds);
    ok(release_on_linked == 0,
       "no release callback ran on a node that an add had linked again (%d)", release_on_linked);
    ok(cs.alive == 0, "conservation: the cache's alive count is back to 0 (%llu)",
       (unsigned long long)cs.alive);
    ok(swf_registry_destroy(reg) == 0 && swf_cache_destroy(cache) == 0, "destroy");
    for (int i = 0; i < CHURNERS; i++)
        free(ch[i].items);
    return tap_done();
}
