/*
 * test/unit/feature_prepare_count.c - cfg.prepare = SWF_FEATURE_PREPARE_COUNT: activate counts
 * the members linked when it runs and grows the cache by that count plus the reserve, so the
 * activation's sweep finds an object ready at every NOWAIT allocation (stats.nowait_failures 0,
 * no refill), on a TAILQ of a few thousand members walked in bounded sections, after the list
 * grew between create and activate, and when a writer unlinks the member the count stands on
 * between two sections. A fixed prepare sized at create, the same list grown, is the control:
 * its sweep fails NOWAIT allocations. meson runs it in both cache modes, on one CPU.
 */
#include <errno.h>
#include <stdlib.h>

#include <sweepfill/feature.h>
#include <sweepfill/list_sysqueue.h>

#include "../common/tap.h"

#ifndef SWF_FEATURE_PREPARE_COUNT /* to run against a library from before it */
#define SWF_FEATURE_PREPARE_COUNT ((size_t)-1)
#endif

enum { FIRST = 3000, MORE = 2000, BOUND = 64 };

struct conn {
    TAILQ_ENTRY(conn) link;
    void *obj; /* the slot */
    struct swf_pin pin;
};
TAILQ_HEAD(conn_q, conn);
SWF_LIST_SYS_TAILQ_AUTO(conns, conn_q, conn, link, obj, pin)

static struct conn_q q = TAILQ_HEAD_INITIALIZER(q);
static size_t linked;
static struct swf_feature *feature;

/* A guard that plays a writer between two sections: at the leave it is told to, it unlinks
 * the member the walk stands on (pinned: the last one the walk reached, its section's end). */
static int leaves, unlink_at_leave = -1;
static struct conn *last_visit_guess;
static size_t frees;
static bool cursor_was_pinned;

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

static void no_readers(void *arg)
{
    (void)arg;
}

static void free_conn(struct swf_pin *pin)
{
    struct conn *c = (struct conn *)((char *)pin - offsetof(struct conn, pin));
    swf_feature_release(feature, c);
    free(c);
    frees++;
}

static void enter(void *arg)
{
    (void)arg;
}

/* The walk leaves after every BOUND visits, standing on the BOUND-th member of the section. */
static void leave(void *arg)
{
    (void)arg;
    if (leaves++ != unlink_at_leave)
        return;
    struct conn *c = last_visit_guess;
    struct swf_grace grace;
    swf_grace_lock(&grace);
    TAILQ_REMOVE(&q, c, link);
    linked--;
    size_t before = frees;
    swf_pin_retire(&c->pin, &grace, free_conn); /* freed at the walk's unpin */
    cursor_was_pinned = frees == before;
}

static void add(size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct conn *c = calloc(1, sizeof(*c));
        tap_require(c != NULL, "calloc");
        TAILQ_INSERT_TAIL(&q, c, link);
        linked++;
        tap_require(swf_feature_added(feature, c, SWF_NOWAIT) == 0, "added while off");
    }
}

static size_t filled(void)
{
    size_t n = 0;
    struct conn *c;
    TAILQ_FOREACH(c, &q, link)
    {
        n += swf_slot_load(&c->obj) != NULL;
    }
    return n;
}

static void close_all(void)
{
    struct swf_grace grace;
    swf_grace_lock(&grace);
    while (!TAILQ_EMPTY(&q)) {
        struct conn *c = TAILQ_FIRST(&q);
        TAILQ_REMOVE(&q, c, link);
        swf_pin_retire(&c->pin, &grace, free_conn);
    }
    linked = 0;
}

/* One scenario on a fresh cache: FIRST members at create, MORE linked before the activation. */
static void scenario(const char *what, size_t prepare, bool expect_exact, int unlink_at)
{
    struct swf_cache *cache;
    struct swf_cache_config cc = {.object_size = 64, .name = "prepare"};
    tap_require(swf_cache_create(&cc, &cache) == 0, "cache");
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = conns_list(&q);
    fc.sweep.cache = cache;
    fc.sweep.init = init_obj;
    fc.sweep.guard.enter = enter;
    fc.sweep.guard.leave = leave;
    fc.sweep.section_bound = BOUND;
    fc.synchronize = no_readers;
    fc.prepare = prepare;
    tap_require(swf_feature_create(&fc, &feature) == 0, "create");
    add(FIRST);
    add(MORE); /* the list grew after create */
    if (unlink_at >= 0) {
        /* The count's first section ends on member BOUND (1-based): unlink it there. */
        struct conn *c = TAILQ_FIRST(&q);
        for (int i = 1; i < BOUND; i++)
            c = TAILQ_NEXT(c, link);
        last_visit_guess = c;
    }
    leaves = 0;
    unlink_at_leave = unlink_at;
    struct swf_sweep_stats st;
    int err = swf_feature_activate(feature, &st);
    unlink_at_leave = -1;
    ok(err == 0 && filled() == linked, "%s: activate returns 0 and fills all %zu members", what,
       linked);
    if (expect_exact)
        ok(st.nowait_failures == 0 && st.refills == 0,
           "%s: no NOWAIT allocation of the sweep failed (%llu failed, %llu refills)", what,
           (unsigned long long)st.nowait_failures, (unsigned long long)st.refills);
    else
        ok(st.nowait_failures > 0, "%s (the control): the sweep's NOWAIT allocations failed (%llu)",
           what, (unsigned long long)st.nowait_failures);
    if (unlink_at >= 0)
        ok(linked == FIRST + MORE - 1 && cursor_was_pinned,
           "%s: the writer unlinked the member the count stood on, pinned", what);

    /* Off, then on again over a longer list: counted again, at the second activation. */
    ok(swf_feature_deactivate(feature) == 0 && filled() == 0, "%s: deactivate empties", what);
    add(MORE);
    err = swf_feature_activate(feature, &st);
    ok(err == 0 && filled() == linked, "%s: a second activate fills all %zu", what, linked);
    if (expect_exact)
        ok(st.nowait_failures == 0 && st.refills == 0,
           "%s: the second activation's sweep failed no NOWAIT allocation (%llu)", what,
           (unsigned long long)st.nowait_failures);
    ok(swf_feature_deactivate(feature) == 0, "%s: deactivate", what);
    close_all();
    struct swf_cache_stats cs;
    swf_cache_stats(cache, &cs);
    ok(cs.alive == 0, "%s: every object back (alive %llu)", what, (unsigned long long)cs.alive);
    ok(swf_feature_destroy(feature) == 0 && swf_cache_destroy(cache) == 0,
       "%s: destroy the feature and the cache", what);
}

int main(void)
{
    diag("cache mode: %s", swf_cache_percpu() ? "per-CPU" : "per-thread");
    scenario("PREPARE_COUNT", SWF_FEATURE_PREPARE_COUNT, true, -1);
    scenario("PREPARE_COUNT, a writer unlinks the count's cursor", SWF_FEATURE_PREPARE_COUNT, true,
             0);
    scenario("prepare fixed at create for FIRST", FIRST + SWF_SWEEP_RESERVE_DEFAULT, false, -1);
    return tap_done();
}
