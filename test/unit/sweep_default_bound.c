/*
 * test/unit/sweep_default_bound.c - the default section bound (sweep.h): a default config
 * (swf_sweep_config_init, swf_feature_config_init, swf_registry_config_init) over a list that
 * can pin leaves its read-side section every SWF_SWEEP_SECTION_BOUND_DEFAULT (1024) visits - 5
 * sections for 5,000 members, none longer than 1024 visits, in the sweep, in the feature's
 * activation and in its deactivation's walk, and in the registry's activation - and says
 * stats.unbounded = 0; over a list that cannot pin the default is not an error: it runs one
 * section per pass and says stats.unbounded = 1. An explicit 0 is unbounded on any list, an
 * explicit K is K.
 */
#include <errno.h>

#include <sweepfill/feature.h>
#include <sweepfill/registry.h>

#include "../common/tap.h"

enum { N = 5000, SECTIONS = (N + SWF_SWEEP_SECTION_BOUND_DEFAULT - 1) / 1024 };

struct item {
    void *slot;
    struct swf_node node;
};

static struct item items[N];

/* An array walked through counting ops: visits per section (a guard enter starts one). */
static uint64_t visits, longest, enters;

static void count_visit(void)
{
    if (++visits > longest)
        longest = visits;
}

static void *first(void *list)
{
    (void)list;
    count_visit();
    return &items[0];
}

static void *next(void *list, void *m)
{
    (void)list;
    struct item *it = m;
    if (it + 1 == items + N)
        return NULL;
    count_visit();
    return it + 1;
}

static void pin(void *list, void *m)
{
    (void)list, (void)m;
}

static bool linked(void *list, void *m)
{
    (void)list, (void)m;
    return true;
}

static const struct swf_list_ops pinning = {first, next, pin, pin, linked};
static const struct swf_list_ops not_pinning = {first, next, NULL, NULL, NULL};

static void enter(void *arg)
{
    (void)arg;
    visits = 0;
    enters++;
}

static void leave(void *arg)
{
    (void)arg;
}

static void reset(void)
{
    visits = longest = enters = 0;
}

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void grace(void *arg)
{
    (void)arg;
}

static struct swf_cache *cache;

static void empty_all(void)
{
    for (int i = 0; i < N; i++) {
        void *obj = swf_slot_take(&items[i].slot);
        if (obj != NULL)
            swf_cache_free(cache, obj);
    }
}

static void sweep_config(struct swf_sweep_config *cfg, const struct swf_list_ops *ops)
{
    swf_sweep_config_init(cfg);
    cfg->list = (struct swf_list){ops, items, offsetof(struct item, slot)};
    cfg->cache = cache;
    cfg->init = init_obj;
    cfg->guard = (struct swf_guard){enter, leave, NULL, 0};
}

static void plain_sweeps(void)
{
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    sweep_config(&cfg, &pinning);
    ok(cfg.section_bound == SWF_SWEEP_SECTION_BOUND_AUTO,
       "swf_sweep_config_init: section_bound is SWF_SWEEP_SECTION_BOUND_AUTO");
    reset();
    int err = swf_sweep(&cfg, &st);
    ok(err == 0 && st.longest_section == SWF_SWEEP_SECTION_BOUND_DEFAULT &&
           st.sections == SECTIONS + st.refills && longest <= 1024 && st.unbounded == 0,
       "default, a list that pins: %llu sections (%d + %llu refills), longest %llu (%llu seen), "
       "unbounded %u",
       (unsigned long long)st.sections, SECTIONS, (unsigned long long)st.refills,
       (unsigned long long)st.longest_section, (unsigned long long)longest, st.unbounded);
    empty_all();

    sweep_config(&cfg, &not_pinning);
    reset();
    err = swf_sweep(&cfg, &st);
    ok(err == 0 && st.unbounded == 1 && st.longest_section >= N && st.sections == 1 + st.refills,
       "default, a list that cannot pin: returns %d (not EINVAL), one section per pass "
       "(longest %llu), unbounded %u",
       err, (unsigned long long)st.longest_section, st.unbounded);
    empty_all();

    sweep_config(&cfg, &pinning);
    cfg.section_bound = 0;
    err = swf_sweep(&cfg, &st);
    ok(err == 0 && st.unbounded == 1 && st.longest_section >= N,
       "explicit 0 on a list that pins: one section per pass, unbounded %u", st.unbounded);
    empty_all();

    cfg.section_bound = 100;
    err = swf_sweep(&cfg, &st);
    ok(err == 0 && st.unbounded == 0 && st.longest_section == 100,
       "explicit 100: sections of 100 visits (%llu)", (unsigned long long)st.longest_section);
    empty_all();

    sweep_config(&cfg, &not_pinning);
    cfg.section_bound = 100;
    ok(swf_sweep(&cfg, &st) == EINVAL, "explicit 100 on a list that cannot pin: EINVAL");
}

static void feature(void)
{
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    ok(fc.sweep.section_bound == SWF_SWEEP_SECTION_BOUND_AUTO,
       "swf_feature_config_init: section_bound is SWF_SWEEP_SECTION_BOUND_AUTO");
    sweep_config(&fc.sweep, &pinning);
    fc.synchronize = grace;
    fc.prepare = N + fc.sweep.reserve;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "feature");
    struct swf_sweep_stats st;
    reset();
    int err = swf_feature_activate(f, &st);
    ok(err == 0 && st.longest_section <= 1024 && st.sections == SECTIONS + st.refills &&
           st.unbounded == 0 && longest <= 1024,
       "feature, default: activation in %llu sections, longest %llu",
       (unsigned long long)st.sections, (unsigned long long)st.longest_section);
    reset();
    err = swf_feature_deactivate(f);
    ok(err == 0 && longest <= 1024 && enters >= SECTIONS,
       "feature, default: deactivate's walk in %llu sections, longest %llu",
       (unsigned long long)enters, (unsigned long long)longest);
    ok(swf_feature_destroy(f) == 0, "destroy");

    sweep_config(&fc.sweep, &not_pinning);
    err = swf_feature_create(&fc, &f);
    ok(err == 0, "feature, default, a list that cannot pin: create returns %d", err);
    if (err == 0) {
        err = swf_feature_activate(f, &st);
        ok(err == 0 && st.unbounded == 1,
           "  activation runs one section per pass and says unbounded (%u)", st.unbounded);
        ok(swf_feature_deactivate(f) == 0 && swf_feature_destroy(f) == 0, "  off and destroyed");
    }
}

static void registry(void)
{
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = cache;
    rc.init = init_obj;
    struct swf_registry *r;
    tap_require(swf_registry_create(&rc, &r) == 0, "registry");
    for (int i = 0; i < N; i++)
        tap_require(swf_registry_add(r, &items[i].node) == 0, "add");
    struct swf_sweep_stats st;
    int err = swf_registry_activate(r, &st);
    ok(err == 0 && st.longest_section == 1024 && st.sections == SECTIONS + st.refills &&
           st.unbounded == 0,
       "registry, default: activation in %llu sections, longest %llu, unbounded %u",
       (unsigned long long)st.sections, (unsigned long long)st.longest_section, st.unbounded);
    struct swf_registry_stats rs;
    swf_registry_stats(r, &rs);
    ok(rs.longest_section == 1024, "registry stats: longest section %llu",
       (unsigned long long)rs.longest_section);
    ok(swf_registry_deactivate(r) == 0, "deactivate");
    for (int i = 0; i < N; i++)
        tap_require(swf_registry_del(r, &items[i].node, NULL) == 0, "del");
    ok(swf_registry_destroy(r) == 0, "destroy");
}

int main(void)
{
    struct swf_cache_config cc = {.object_size = 64, .name = "default-bound"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "cache");
    tap_require(swf_cache_grow(cache, 2 * N) == 0, "grow");
    plain_sweeps();
    feature();
    registry();
    ok(swf_cache_destroy(cache) == 0, "every object back");
    return tap_done();
}
