/* examples/man/list_ck_hs_auto.c - SWF_LIST_CK_HS_AUTO(3)'s example: users in a ck_hs, each given a
 * statistics object by one sweep in bounded epoch sections, its cursor resumed in each. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ck_epoch.h>
#include <sweepfill/list_hash.h>

static struct swf_cache *cache;

static void init_stats(void *obj, void *member, void *arg)
{
    (void)member, (void)arg;
    memset(obj, 0, 64);
}

/* [man] */
struct user {
    uint64_t id;
    void *stats; /* the slot */
    struct swf_pin pin;
};
SWF_LIST_CK_HS_AUTO(users, user, stats, pin)

static void *hs_malloc(size_t n)
{
    swf_ck_hs_changed(); /* a map may be coming */
    return malloc(n);
}

static void hs_free(void *p, size_t n, bool defer)
{
    (void)n, (void)defer; /* one thread here; with readers, defer frees after a grace period */
    free(p);
}

static int sweep_users(ck_hs_t *hs, ck_epoch_record_t *rec, struct swf_sweep_stats *st)
{
    struct swf_hs_walk w; /* the cursor: lives as long as the sweep */
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = users_list(&w, hs);
    cfg.cache = cache;
    cfg.init = init_stats;
    swf_guard_epoch(&cfg.guard, rec);
    cfg.section_bound = 64; /* leave the epoch section every 64 users */
    return swf_sweep(&cfg, st);
}
/* [man] */

static unsigned long hash_user(const void *u, unsigned long seed)
{
    return (unsigned long)(((const struct user *)u)->id * 0x9e3779b97f4a7c15ull ^ seed);
}

static bool same_user(const void *a, const void *b)
{
    return a == b;
}

int main(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    static struct ck_malloc alloc = {hs_malloc, NULL, hs_free};
    enum { N = 1000 };
    static struct user u[N];
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct swf_cache_config cc = {.object_size = 64, .name = "users"};
    ck_hs_t hs;
    if (swf_cache_create(&cc, &cache) != 0 ||
        !ck_hs_init(&hs, CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT, hash_user, same_user, &alloc, 8, 1))
        return 1;
    uint64_t before = swf_ck_hs_generation();
    for (size_t i = 0; i < N; i++) {
        u[i].id = i;
        swf_pin_init(&u[i].pin);
        ck_hs_put(&hs, CK_HS_HASH(&hs, hash_user, &u[i]), &u[i]); /* grows the map: hs_malloc */
    }
    struct swf_sweep_stats st;
    int err = sweep_users(&hs, &rec, &st);
    size_t filled = 0;
    for (size_t i = 0; i < N; i++) {
        filled += swf_slot_load(&u[i].stats) != NULL;
        swf_cache_free(cache, swf_slot_take(&u[i].stats));
    }
    printf("list_ck_hs_auto: swf_sweep %d, %zu of %d users filled in %llu sections, %llu maps "
           "allocated\n",
           err, filled, N, (unsigned long long)st.sections,
           (unsigned long long)(swf_ck_hs_generation() - before));
    ck_hs_destroy(&hs);
    return err != 0 || filled != N || st.sections < 2 || swf_ck_hs_generation() == before ||
           swf_cache_destroy(cache) != 0;
}
