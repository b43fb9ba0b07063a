/*
 * test/unit/sweep_resume_cursor.c - what a resumed cursor does when its world changed while the
 * sweep was outside its section, deterministically: a guard wrapped around the sweep's changes the
 * table, or retires the pinned cursor, the third (or first) time the sweep leaves its section.
 *
 *   - a bucket array resized (every member moved to a new bucket array, the generation bumped),
 *     a ck_hs rebuilt (a new map), and a ck_hs whose only sign is swf_ck_hs_changed(): the
 *     cursor is found lost and the walk starts again from the first bucket or map slot, so every
 *     member present for the whole sweep is visited at least once: exactly 2 passes and
 *     n + 3 * bound visits (3 * bound before the resize, n after it);
 *   - the pinned cursor unlinked and retired (swf_pin_retire) with a lock grace period and with
 *     a ck_epoch grace period that ends while it is pinned: the sweep finds it retired, restarts,
 *     and its own put frees the member, exactly once, during the sweep; every other member has
 *     an object and the retired member's object went back to the cache with it.
 */
#include <ck_epoch.h>
#include <errno.h>

#include "../common/members.h"
#include "../common/tap.h"

enum { N = 2000, BOUND = 64 };

/* A guard that runs hook() after the at-th leave, outside the section. */
struct hook_guard {
    int leaves, at;
    void (*hook)(void);
    bool running; /* between the sweep's start and its return */
};
static struct hook_guard hg;

static void hook_enter(void *arg)
{
    (void)arg;
}

static void hook_leave(void *arg)
{
    (void)arg;
    if (++hg.leaves == hg.at && hg.hook != NULL)
        hg.hook();
}

/* Ops wrapped to remember the member last pinned: the sweep's cursor. */
static const struct swf_list_ops *base_ops;
static void *cursor;

static void cursor_pin(void *list, void *m)
{
    cursor = m;
    base_ops->pin(list, m);
}

static struct population pop;
static struct swf_cache *cache;

static struct swf_sweep_stats run(struct swf_list list, int at, void (*hook)(void), size_t bound,
                                  int *err)
{
    base_ops = list.ops;
    static struct swf_list_ops wrapped;
    wrapped = *list.ops;
    wrapped.pin = cursor_pin;
    list.ops = &wrapped;
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = list;
    cfg.cache = cache;
    cfg.init = payload_init;
    cfg.section_bound = bound;
    cfg.guard = (struct swf_guard){hook_enter, hook_leave, NULL, 0};
    hg = (struct hook_guard){0, at, hook, true};
    struct swf_sweep_stats st;
    *err = swf_sweep(&cfg, &st);
    hg.running = false;
    return st;
}

static void setup(void)
{
    population_init(&pop, N, 3);
    struct swf_cache_config ccfg = {.object_size = sizeof(struct payload), .name = "cursor"};
    tap_require(swf_cache_create(&ccfg, &cache) == 0, "cache");
    tap_require(swf_cache_grow(cache, N + 64) == 0, "grow");
}

static void teardown(void)
{
    population_release(&pop, cache, NULL);
    ok(cache_alive(cache) == 0 && swf_cache_destroy(cache) == 0, "  nothing leaked");
    population_fini(&pop);
}

/* Every member whose slot should be set has an initialised object of its own. */
static size_t filled_ok(const struct member *except)
{
    size_t good = 0;
    for (size_t i = 0; i < pop.n; i++)
        if (&pop.m[i] != except && pop.m[i].slot != NULL && payload_ok(pop.m[i].slot, &pop.m[i]))
            good++;
    return good;
}

/* ---- resizes ------------------------------------------------------------------------------- */

static void resize_buckets(void)
{
    struct member_table *t = &pop.table;
    size_t n = 2 * t->nbuckets + 1;
    struct member_list *nb = calloc(n, sizeof(*nb));
    tap_require(nb != NULL, "buckets");
    struct member_table old = *t;
    t->buckets = nb;
    t->nbuckets = n;
    for (size_t b = 0; b < old.nbuckets; b++) {
        struct member *m;
        while ((m = CK_LIST_FIRST(&old.buckets[b])) != NULL) {
            CK_LIST_REMOVE(m, blink);
            CK_LIST_INSERT_HEAD(&nb[member_bucket(t, m)], m, blink);
        }
    }
    swf_buckets_resized(&t->gen);
    free(old.buckets);
}

static void rebuild_hs(void)
{
    tap_require(ck_hs_rebuild(&pop.hs), "ck_hs_rebuild");
}

static void resize_case(const char *what, struct swf_list (*list)(void), void (*hook)(void))
{
    setup();
    int err;
    struct swf_sweep_stats st = run(list(), 3, hook, BOUND, &err);
    ok(err == 0 && filled_ok(NULL) == N && st.assigned == N && cache_alive(cache) == N,
       "%s during a bounded RESUME sweep: every member has its object (%llu assigned)", what,
       (unsigned long long)st.assigned);
    ok(st.passes == 2 && st.restarts == 1 && st.visits == N + 3 * BOUND && st.fell_back == 0,
       "  the cursor was found lost once: %llu passes, %llu visits (want 2 and %d)",
       (unsigned long long)st.passes, (unsigned long long)st.visits, N + 3 * BOUND);
    teardown();
}

static struct swf_list buckets_list(void)
{
    return mbk_list(&pop.table_walk, &pop.table);
}

static struct swf_list hs_list(void)
{
    return mhs_list(&pop.hs_walk, &pop.hs);
}

/* ---- the pinned cursor retired --------------------------------------------------------------- */

static int frees, frees_during_sweep;
static struct member *retired;
static ck_epoch_t epoch;
static ck_epoch_record_t rec;

static void free_member(struct swf_pin *pin)
{
    struct member *m = (struct member *)(void *)((char *)pin - offsetof(struct member, pin));
    void *obj = swf_slot_take(&m->slot);
    if (obj != NULL)
        swf_cache_free(cache, obj);
    frees++;
    frees_during_sweep += hg.running;
}

static void retire_cursor(bool epoch_grace)
{
    retired = cursor;
    CK_LIST_REMOVE(retired, link);
    struct swf_grace g;
    if (epoch_grace)
        swf_grace_epoch(&g, &rec);
    else
        swf_grace_lock(&g);
    tap_require(swf_pin_retire(&retired->pin, &g, free_member) == 0, "retire");
    if (epoch_grace)
        ck_epoch_barrier(&rec); /* the grace period ends while the sweep holds the pin */
}

static void retire_cursor_lock(void)
{
    retire_cursor(false);
}

static void retire_cursor_epoch(void)
{
    retire_cursor(true);
}

static void retire_case(const char *what, void (*hook)(void), int at, size_t bound,
                        unsigned int fail)
{
    setup();
    frees = frees_during_sweep = 0;
    struct swf_failslab fs = {.probability = fail, .interval = 1, .times = -1, .seed = 5};
    swf_cache_set_failslab(cache, fail ? &fs : NULL);
    int err;
    struct swf_sweep_stats st = run(mla_list(&pop.list), at, hook, bound, &err);
    ok(err == 0 && frees == 1 && frees_during_sweep == 1 && !swf_pin_linked(&retired->pin),
       "%s: the sweep's put freed it, once, during the sweep", what);
    ok(st.passes == 2 && st.restarts == 1 && filled_ok(retired) == N - 1 && retired->slot == NULL &&
           cache_alive(cache) == N - 1 && st.fell_back == 0,
       "  it restarted once (%llu passes) and every other member has its object; the retired "
       "one's object went back with it",
       (unsigned long long)st.passes);
    teardown();
}

int main(void)
{
    resize_case("a bucket array resized", buckets_list, resize_buckets);
    resize_case("a ck_hs rebuilt (a new map)", hs_list, rebuild_hs);
    resize_case("swf_ck_hs_changed() (the generation alone)", hs_list, swf_ck_hs_changed);

    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    retire_case("the cursor retired at a section bound, lock grace", retire_cursor_lock, 3, BOUND,
                0);
    retire_case("the cursor retired at a section bound, ck_epoch grace over while pinned",
                retire_cursor_epoch, 3, BOUND, 0);
    retire_case("the cursor retired during a refill (NOWAIT always failing), lock grace",
                retire_cursor_lock, 1, 0, 100);
    ck_epoch_unregister(&rec);
    return tap_done();
}
