/*
 * test/unit/cache_users.c - a cache knows the features and registries that use it: while one is
 * alive (a feature from create to destroy, active or not; a registry likewise),
 * swf_cache_destroy returns EBUSY, does nothing (the cache still allocates and frees), and its
 * swf_error_reason() names the user and what to destroy first; once that user is destroyed,
 * swf_cache_destroy returns 0.
 */
#include <errno.h>
#include <string.h>

#include <sweepfill/feature.h>
#include <sweepfill/registry.h>

#include "../common/tap.h"

#define BY_FEATURE  "the cache is in use by a feature: swf_feature_destroy it first"
#define BY_REGISTRY "the cache is in use by a registry: swf_registry_destroy it first"

enum { N = 100 };

struct item {
    void *slot;
    struct swf_node node;
};

static struct item items[N];
static struct swf_array arr = {items, N, sizeof(struct item)};

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void grace(void *arg)
{
    (void)arg;
}

static struct swf_cache *make_cache(const char *name)
{
    struct swf_cache_config cc = {.object_size = 64, .name = name};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cc, &c) == 0, "cache");
    return c;
}

static struct swf_feature *make_feature(struct swf_cache *c)
{
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = swf_list_array(&arr, offsetof(struct item, slot));
    fc.sweep.cache = c;
    fc.sweep.init = init_obj;
    swf_guard_none(&fc.sweep.guard);
    fc.synchronize = grace;
    struct swf_feature *f;
    tap_require(swf_feature_create(&fc, &f) == 0, "feature");
    return f;
}

static struct swf_registry *make_registry(struct swf_cache *c)
{
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = c;
    rc.init = init_obj;
    struct swf_registry *r;
    tap_require(swf_registry_create(&rc, &r) == 0, "registry");
    return r;
}

/* The cache still works after a refused destroy: one allocation and its free. */
static bool still_works(struct swf_cache *c)
{
    void *obj = swf_cache_alloc(c, SWF_WAIT);
    return obj != NULL && swf_cache_free(c, obj) == 0;
}

static bool busy_because(struct swf_cache *c, const char *reason)
{
    int err = swf_cache_destroy(c);
    const char *why = swf_error_reason();
    if (err != EBUSY || strcmp(why, reason) != 0)
        diag("destroy: %d (%s), wanted EBUSY (%s)", err, why, reason);
    return err == EBUSY && strcmp(why, reason) == 0 && still_works(c);
}

static void feature_user(void)
{
    struct swf_cache *c = make_cache("feature-user");
    struct swf_feature *f = make_feature(c);
    ok(busy_because(c, BY_FEATURE),
       "an inactive feature: destroy is EBUSY naming the feature, and the cache still works");
    ok(swf_feature_activate(f, NULL) == 0, "activate");
    ok(busy_because(c, BY_FEATURE),
       "an active feature: EBUSY naming the feature (not only the objects alive)");
    ok(swf_feature_deactivate(f) == 0 && busy_because(c, BY_FEATURE),
       "deactivated, not destroyed: EBUSY still");
    ok(swf_feature_destroy(f) == 0 && swf_cache_destroy(c) == 0,
       "after swf_feature_destroy: swf_cache_destroy returns 0");
}

static void registry_user(void)
{
    struct swf_cache *c = make_cache("registry-user");
    struct swf_registry *r = make_registry(c);
    ok(busy_because(c, BY_REGISTRY), "an empty, inactive registry: EBUSY naming the registry");
    for (int i = 0; i < N; i++)
        tap_require(swf_registry_add(r, &items[i].node) == 0, "add");
    ok(swf_registry_activate(r, NULL) == 0 && busy_because(c, BY_REGISTRY),
       "an active registry: EBUSY naming the registry");
    ok(swf_registry_deactivate(r) == 0, "deactivate");
    for (int i = 0; i < N; i++)
        tap_require(swf_registry_del(r, &items[i].node, NULL) == 0, "del");
    ok(busy_because(c, BY_REGISTRY), "inactive and empty again: EBUSY still");
    ok(swf_registry_destroy(r) == 0 && swf_cache_destroy(c) == 0,
       "after swf_registry_destroy: swf_cache_destroy returns 0");
}

static void both_users(void)
{
    struct swf_cache *c = make_cache("two-users");
    struct swf_feature *f = make_feature(c);
    struct swf_feature *g = make_feature(c);
    struct swf_registry *r = make_registry(c);
    ok(swf_cache_destroy(c) == EBUSY, "two features and a registry: EBUSY");
    ok(swf_feature_destroy(f) == 0 && busy_because(c, BY_FEATURE),
       "one of two features destroyed: EBUSY naming the other");
    ok(swf_feature_destroy(g) == 0 && busy_because(c, BY_REGISTRY),
       "both features destroyed: EBUSY naming the registry");
    ok(swf_registry_destroy(r) == 0 && swf_cache_destroy(c) == 0, "every user gone: 0");
}

int main(void)
{
    feature_user();
    registry_user();
    both_users();
    return tap_done();
}
