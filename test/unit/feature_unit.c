/*
 * test/unit/feature_unit.c - feature.h's contract, one thread, on an array of members: what create
 * refuses, the adder's returns while off and on (0, EAGAIN and owed, WAIT, EINVAL), one object
 * per member whoever fills it, catch-up only when something is owed, activate's ENOMEM (the
 * cache's limit) and its retry, deactivate taking everything back through one grace period,
 * release, destroy refusing while on, and the flag word with and without membarrier.
 */
#include <errno.h>
#include <stdlib.h>

#include <sweepfill/feature.h>

#include "../common/tap.h"

enum { N = 1000 };

struct item {
    void *slot;
    int id;
};

static struct item items[N];
static struct swf_array arr = {items, N, sizeof(struct item)};
static struct swf_cache *cache;
static int graces;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void grace(void *arg)
{
    (void)arg;
    graces++;
}

static void config(struct swf_feature_config *fc)
{
    swf_feature_config_init(fc);
    fc->sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
    fc->sweep.cache = cache;
    fc->sweep.init = init_obj;
    swf_guard_none(&fc->sweep.guard);
    fc->synchronize = grace;
    fc->headroom = 0;    /* the alive counts below are the members' objects alone, and ... */
    fc->add_reserve = 0; /* ... a failed NOWAIT add leaves its slot empty (feature_between.c */
    fc->owed_table = 0;  /* tests the headroom, the add reserve and the owed table) */
}

static size_t filled(void)
{
    size_t n = 0;
    for (int i = 0; i < N; i++)
        n += swf_slot_load(&items[i].slot) != NULL;
    return n;
}

static uint64_t alive(void)
{
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    return s.alive;
}

static void refusals(void)
{
    struct swf_feature *f;
    struct swf_feature_config fc;
    config(&fc);
    ok(swf_feature_create(NULL, &f) == EINVAL, "create: cfg NULL is EINVAL");
    ok(swf_feature_create(&fc, NULL) == EINVAL, "create: out NULL is EINVAL");
    fc.synchronize = NULL;
    ok(swf_feature_create(&fc, &f) == EINVAL, "create: synchronize NULL is EINVAL");
    config(&fc);
    fc.sweep.cache = NULL;
    ok(swf_feature_create(&fc, &f) == EINVAL, "create: what swf_sweep refuses (no cache)");
    config(&fc);
    fc.sweep.section_bound = 8; /* an array pins for free */
    ok(swf_feature_create(&fc, &f) == 0 && swf_feature_destroy(f) == 0,
       "create: a section bound on an array (which pins for free)");
    ok(swf_feature_activate(NULL, NULL) == EINVAL && swf_feature_deactivate(NULL) == EINVAL &&
           swf_feature_catch_up(NULL, NULL) == EINVAL &&
           swf_feature_release(NULL, items) == EINVAL && swf_feature_destroy(NULL) == EINVAL &&
           swf_feature_stats(NULL, NULL) == EINVAL,
       "every call refuses a NULL feature with EINVAL");
}

static void on_and_off(void)
{
    struct swf_feature_config fc;
    config(&fc);
    fc.prepare = N + fc.sweep.reserve;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    int off = 0;
    for (int i = 0; i < N / 2; i++)
        off |= swf_feature_added(f, &items[i], SWF_NOWAIT);
    ok(off == 0 && filled() == 0, "off: added returns 0 and fills nothing");
    ok(swf_feature_release(f, &items[0]) == 0 && alive() == 0, "release of an empty slot: 0");
    graces = 0;
    ok(swf_feature_deactivate(f) == EALREADY, "deactivate while off: EALREADY");
    ok(swf_feature_activate(f, NULL) == 0 && filled() == N, "activate fills all %d members", N);
    ok(swf_feature_activate(f, NULL) == EALREADY, "activate again: EALREADY");
    ok(swf_feature_destroy(f) == EBUSY, "destroy while on: EBUSY");
    ok(swf_feature_added(f, NULL, SWF_NOWAIT) == EINVAL &&
           swf_feature_added(f, &items[0], (enum swf_alloc_mode)7) == EINVAL,
       "on: member NULL or an unknown mode is EINVAL");
    ok(swf_feature_added(f, &items[0], SWF_NOWAIT) == 0 && alive() == N,
       "on: added on a filled member returns 0 and allocates nothing (alive %llu)",
       (unsigned long long)alive());

    /* A member deleted while on gives its object back through release. */
    void *obj = swf_slot_load(&items[1].slot);
    ok(swf_feature_release(f, &items[1]) == 0 && swf_slot_load(&items[1].slot) == NULL &&
           alive() == N - 1,
       "release takes the object and frees it (%p)", obj);

    /* NOWAIT failing: EAGAIN, the slot owed; catch-up fills it, once. */
    struct swf_failslab fs = {.probability = 100, .interval = 1, .times = -1, .seed = 1};
    swf_cache_set_failslab(cache, &fs);
    ok(swf_feature_added(f, &items[1], SWF_NOWAIT) == EAGAIN && items[1].slot == NULL,
       "on, NOWAIT failing: EAGAIN with the slot left empty");
    ok(swf_feature_added(f, &items[2], SWF_NOWAIT) == 0, "on: a member the sweep filled: 0");
    swf_cache_set_failslab(cache, NULL);
    struct swf_feature_stats st;
    swf_feature_stats(f, &st);
    ok(st.left_owed == 1 && st.active == 1, "stats: one slot left owed, active");
    ok(swf_feature_catch_up(f, NULL) == 0 && items[1].slot != NULL && filled() == N,
       "catch-up fills the owed member");
    ok(swf_feature_catch_up(f, NULL) == 0, "catch-up with nothing owed: 0");
    swf_feature_stats(f, &st);
    ok(st.catch_ups == 1, "only the first catch-up swept (%llu)", (unsigned long long)st.catch_ups);

    /* WAIT: fills where NOWAIT would fail. */
    swf_feature_release(f, &items[3]);
    swf_cache_set_failslab(cache, &fs);
    ok(swf_feature_added(f, &items[3], SWF_WAIT) == 0 && items[3].slot != NULL,
       "on, NOWAIT failing: WAIT fills");
    swf_cache_set_failslab(cache, NULL);

    int err = swf_feature_deactivate(f);
    ok(err == 0 && filled() == 0 && alive() == 0 && graces == 1,
       "deactivate takes all %d back, after one grace period (%d)", N, graces);
    ok(swf_feature_added(f, &items[4], SWF_NOWAIT) == 0 && filled() == 0,
       "off again: added fills nothing");
    swf_feature_stats(f, &st);
    ok(st.assigned_by_add + st.assigned_by_sweep == st.unpublished + st.released &&
           st.activations == 1 && st.deactivations == 1,
       "stats: %llu + %llu published == %llu taken back + %llu released",
       (unsigned long long)st.assigned_by_add, (unsigned long long)st.assigned_by_sweep,
       (unsigned long long)st.unpublished, (unsigned long long)st.released);
    ok(swf_feature_destroy(f) == 0, "destroy when off");
}

static void out_of_memory(void)
{
    struct swf_cache *small;
    struct swf_cache_config cc = {.object_size = 64, .name = "feature-limit", .limit = N / 2};
    tap_require(swf_cache_create(&cc, &small) == 0, "cache with a limit");
    struct swf_feature_config fc;
    config(&fc);
    fc.sweep.cache = small;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    int err = swf_feature_activate(f, NULL);
    size_t n = filled();
    struct swf_feature_stats st;
    swf_feature_stats(f, &st);
    ok(err == ENOMEM && st.active == 1 && st.activations == 0 && n < N,
       "activate beyond the cache's limit: ENOMEM, still on (%zu filled)", n);
    swf_cache_set_limit(small, 0);
    ok(swf_feature_activate(f, NULL) == 0 && filled() == N, "with memory back, activate completes");
    ok(swf_feature_deactivate(f) == 0 && filled() == 0 && swf_feature_destroy(f) == 0 &&
           swf_cache_destroy(small) == 0,
       "deactivate, destroy, and every object back in that cache");
}

static void fence_path(void)
{
    struct swf_feature_config fc;
    config(&fc);
    struct swf_feature *f;
    setenv("SWF_NO_MEMBARRIER", "1", 1);
    tap_require(swf_feature_create(&fc, &f) == 0, "create");
    unsetenv("SWF_NO_MEMBARRIER");
    struct swf_feature_stats st;
    swf_feature_stats(f, &st);
    ok(st.membarrier == 0, "SWF_NO_MEMBARRIER: the adders' fence path");
    ok(swf_feature_added(f, &items[0], SWF_NOWAIT) == 0 && filled() == 0,
       "fence path, off: added returns 0 and fills nothing");
    ok(swf_feature_activate(f, NULL) == 0 && filled() == N, "fence path: activate fills all");
    swf_feature_release(f, &items[0]);
    ok(swf_feature_added(f, &items[0], SWF_NOWAIT) == 0 && items[0].slot != NULL,
       "fence path, on: added fills");
    ok(swf_feature_deactivate(f) == 0 && alive() == 0 && swf_feature_destroy(f) == 0,
       "fence path: deactivate and destroy");
}

int main(void)
{
    for (int i = 0; i < N; i++)
        items[i].id = i;
    struct swf_cache_config cc = {.object_size = 64, .name = "feature-unit"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "cache");
    refusals();
    on_and_off();
    out_of_memory();
    fence_path();
    ok(swf_cache_destroy(cache) == 0, "every object came back to the cache");
    return tap_done();
}
