/*
 * test/unit/error_reason.c - swf_error_reason() as api.h documents it, errno's convention: before
 * any failure on a thread it says so; after a failing call it names that call's check; successful
 * calls never clear it, so after one it may still name the earlier failure; a sweep that
 * succeeds leaves it as it found it, though its SWF_NOWAIT allocations failed and its reserve made
 * up for them (swf_sweep, swf_feature_activate, swf_registry_activate), and so does
 * swf_registry_add whose SWF_NOWAIT allocation failed before SWF_WAIT served; each thread has
 * its own.
 */
#include <errno.h>
#include <string.h>

#include <stddef.h>

#include <sweepfill/feature.h>
#include <sweepfill/registry.h>
#include <sweepfill/sweep.h>

#include "../common/tap.h"

#define NONE_YET "no sweepfill call has failed on this thread"

static void init_obj(void *obj, void *node, void *arg)
{
    (void)obj;
    (void)node;
    (void)arg;
}

static void no_grace(void *arg)
{
    (void)arg;
}

/* Kept reachable to the end (LeakSanitizer): the registry stays active with its nodes. */
static struct swf_registry *registry;
static struct swf_node nodes[65];

static void *other_thread(void *arg)
{
    const char **seen = arg;
    seen[0] = swf_error_reason();
    struct swf_cache_stats s;
    (void)swf_cache_stats(NULL, &s); /* fails here, on this thread only */
    seen[1] = swf_error_reason();
    return NULL;
}

int main(void)
{
    ok(strcmp(swf_error_reason(), NONE_YET) == 0, "before any failure: \"%s\"", swf_error_reason());

    struct swf_cache_config cfg = {.object_size = 64, .name = "error_reason"};
    struct swf_cache *c = NULL;
    tap_require(swf_cache_create(&cfg, &c) == 0, "a cache");
    struct swf_cache_stats s;
    int err = swf_cache_stats(c, NULL);
    const char *reason = swf_error_reason();
    ok(err == EINVAL && strcmp(reason, "out is NULL") == 0,
       "a failing call: its error and its reason (%d, \"%s\")", err, reason);

    err = swf_cache_stats(c, &s);
    ok(err == 0 && swf_error_reason() == reason,
       "a successful call does not clear it: still \"%s\" after a success", swf_error_reason());
    void *obj = swf_cache_alloc(c, SWF_WAIT);
    ok(obj != NULL && swf_cache_free(c, obj) == 0 && swf_error_reason() == reason,
       "nor do an allocation and a free that succeed (\"%s\")", swf_error_reason());

    err = swf_cache_stats(NULL, &s);
    ok(err == EINVAL && strcmp(swf_error_reason(), "c is NULL") == 0,
       "the next failure replaces it (\"%s\")", swf_error_reason());

    /* Another thread's failures are its own. */
    const char *seen[2] = {NULL, NULL};
    pthread_t t;
    tap_require(pthread_create(&t, NULL, other_thread, seen) == 0, "a thread");
    pthread_join(t, NULL);
    ok(seen[0] != NULL && strcmp(seen[0], NONE_YET) == 0, "a new thread starts with \"%s\"",
       seen[0] ? seen[0] : "(null)");
    ok(seen[1] != NULL && strcmp(seen[1], "c is NULL") == 0 &&
           strcmp(swf_error_reason(), "c is NULL") == 0,
       "its failure is its own; this thread's reason is unchanged");
    err = swf_cache_stats(c, NULL);
    ok(err == EINVAL && strcmp(swf_error_reason(), "out is NULL") == 0,
       "back to \"out is NULL\" by failing again here");

    /* A successful sweep takes objects with SWF_NOWAIT; when those attempts fail (here injected:
     * swf_failslab) the sweep goes on with its reserve, and what they said is not the caller's. */
    struct swf_cache *empty = NULL;
    cfg.name = "error_reason_injected";
    tap_require(swf_cache_create(&cfg, &empty) == 0, "a second cache");
    struct swf_failslab fs = {.probability = 100, .interval = 1, .times = -1, .seed = 1};
    tap_require(swf_cache_set_failslab(empty, &fs) == 0, "failure injection");
    struct member {
        void *slot;
    } members[256] = {{NULL}};
    struct swf_array a = {members, 256, sizeof(members[0])};
    struct swf_sweep_config scfg;
    swf_sweep_config_init(&scfg);
    scfg.list = swf_list_array(&a, offsetof(struct member, slot));
    scfg.cache = empty;
    scfg.init = init_obj;
    swf_guard_none(&scfg.guard);
    struct swf_sweep_stats st;
    (void)swf_cache_stats(c, NULL); /* a known reason before the sweep */
    reason = swf_error_reason();
    err = swf_sweep(&scfg, &st);
    ok(err == 0 && st.assigned == 256 && st.nowait_failures > 0 && st.reserve_uses > 0 &&
           swf_error_reason() == reason,
       "a successful sweep whose SWF_NOWAIT attempts failed (%llu) leaves the reason as it was: "
       "\"%s\"",
       (unsigned long long)st.nowait_failures, swf_error_reason());

    /* The feature's activation runs the same sweep. */
    struct member fmembers[256] = {{NULL}};
    struct swf_array fa = {fmembers, 256, sizeof(fmembers[0])};
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = swf_list_array(&fa, offsetof(struct member, slot));
    fc.sweep.cache = empty;
    fc.sweep.init = init_obj;
    swf_guard_none(&fc.sweep.guard);
    fc.synchronize = no_grace;
    struct swf_feature *f = NULL;
    tap_require(swf_feature_create(&fc, &f) == 0, "a feature");
    memset(&st, 0, sizeof(st));
    err = swf_feature_activate(f, &st);
    ok(err == 0 && st.nowait_failures > 0 && swf_error_reason() == reason,
       "so does a successful swf_feature_activate whose sweep's SWF_NOWAIT attempts failed (%llu): "
       "\"%s\"",
       (unsigned long long)st.nowait_failures, swf_error_reason());
    tap_require(swf_feature_deactivate(f) == 0 && swf_feature_destroy(f) == 0, "feature off");

    /* The registry: its activation's sweep, and an add whose SWF_NOWAIT allocation failed. */
    struct swf_cache *third = NULL;
    cfg.name = "error_reason_registry";
    tap_require(swf_cache_create(&cfg, &third) == 0 && swf_cache_set_failslab(third, &fs) == 0,
                "a third cache, with failures injected");
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = third;
    rc.init = init_obj;
    tap_require(swf_registry_create(&rc, &registry) == 0, "a registry");
    for (size_t i = 0; i < 64; i++) {
        swf_node_init(&nodes[i]);
        tap_require(swf_registry_add(registry, &nodes[i]) == 0, "add");
    }
    (void)swf_cache_stats(c, NULL);
    memset(&st, 0, sizeof(st));
    err = swf_registry_activate(registry, &st);
    ok(err == 0 && st.nowait_failures > 0 && swf_error_reason() == reason,
       "and a successful swf_registry_activate (%llu SWF_NOWAIT failures): \"%s\"",
       (unsigned long long)st.nowait_failures, swf_error_reason());
    swf_node_init(&nodes[64]);
    struct swf_cache_stats before, after;
    tap_require(swf_cache_stats(third, &before) == 0, "stats");
    err = swf_registry_add(registry, &nodes[64]);
    tap_require(swf_cache_stats(third, &after) == 0, "stats");
    ok(err == 0 && after.fails_injected > before.fails_injected && swf_error_reason() == reason,
       "and a successful swf_registry_add whose SWF_NOWAIT allocation failed (%llu): \"%s\"",
       (unsigned long long)(after.fails_injected - before.fails_injected), swf_error_reason());
    for (size_t i = 0; i < 256; i++)
        swf_cache_free(empty, members[i].slot);
    ok(swf_cache_destroy(empty) == 0 && swf_cache_destroy(c) == 0, "clean up");
    return tap_done();
}
