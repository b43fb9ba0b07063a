/*
 * test/unit/sweep_edges.c - bad input gets EINVAL and never a crash; the edge cases (empty list,
 * one member, every slot already set); and running out of memory mid-sweep: ENOMEM with a
 * consistent state, then success once the cache's limit is raised.
 */
#include <ck_epoch.h>
#include <errno.h>

#include "../common/members.h"
#include "../common/tap.h"

static struct swf_cache *make_cache(size_t limit)
{
    struct swf_cache_config ccfg = {
        .object_size = sizeof(struct payload), .limit = limit, .name = "edges"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&ccfg, &c) == 0, "cache");
    return c;
}

static void base_config(struct swf_sweep_config *cfg, struct population *pop, struct swf_cache *c)
{
    swf_sweep_config_init(cfg);
    cfg->list = mlp_list(&pop->list);
    cfg->cache = c;
    cfg->init = payload_init;
    swf_guard_none(&cfg->guard);
}

static void noop_pin(void *l, void *m)
{
    (void)l, (void)m;
}

static void test_bad_input(void)
{
    struct population pop;
    population_init(&pop, 10, 0);
    struct swf_cache *c = make_cache(0);
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;

    /* Each cause of EINVAL must say which check failed: its own swf_error_reason(). */
    const char *reasons[32], *causes[32];
    size_t n_reasons = 0;
    ok(swf_sweep(NULL, &st) == EINVAL, "NULL config is EINVAL");
    causes[n_reasons] = "NULL config";
    reasons[n_reasons++] = swf_error_reason();
#define EXPECT_EINVAL(what, mutate)                               \
    do {                                                          \
        base_config(&cfg, &pop, c);                               \
        mutate;                                                   \
        ok(swf_sweep(&cfg, &st) == EINVAL, "%s is EINVAL", what); \
        causes[n_reasons] = what;                                 \
        reasons[n_reasons++] = swf_error_reason();                \
    } while (0)
    EXPECT_EINVAL("NULL list ops", cfg.list.ops = NULL);
    static struct swf_list_ops no_first, no_next, half_pins;
    no_first = mlp_ops;
    no_first.first = NULL;
    no_next = mlp_ops;
    no_next.next = NULL;
    half_pins = ml_ops;
    half_pins.pin = noop_pin;
    EXPECT_EINVAL("ops without first", cfg.list.ops = &no_first);
    EXPECT_EINVAL("ops without next", cfg.list.ops = &no_next);
    EXPECT_EINVAL("pin without unpin and linked", cfg.list.ops = &half_pins);
    base_config(&cfg, &pop, c);
    cfg.list.slot_offset = offsetof(struct member, id); /* a multiple of 8, not the slot */
    ok(typed_mlp(&cfg, &st) == EINVAL,
       "SWF_SWEEP_DEFINE with a slot offset other than its adapter's is EINVAL");
    EXPECT_EINVAL("NULL cache", cfg.cache = NULL);
    EXPECT_EINVAL("NULL init", cfg.init = NULL);
    EXPECT_EINVAL("NULL guard enter", cfg.guard.enter = NULL);
    EXPECT_EINVAL("NULL guard leave", cfg.guard.leave = NULL);
    EXPECT_EINVAL("reserve 0", cfg.reserve = 0);
    EXPECT_EINVAL("reserve above SWF_SWEEP_RESERVE_MAX", cfg.reserve = SWF_SWEEP_RESERVE_MAX + 1);
    base_config(&cfg, &pop, c);
    cfg.reserve = SIZE_MAX;
    ok(swf_sweep(&cfg, &st) == EINVAL && strcmp(swf_error_reason(), reasons[n_reasons - 1]) == 0,
       "reserve SIZE_MAX is EINVAL, for the same reason as any reserve above the maximum (%s)",
       swf_error_reason());
    EXPECT_EINVAL("a slot offset that is not pointer-aligned", cfg.list.slot_offset += 4);
    EXPECT_EINVAL("a section bound on a list that cannot pin",
                  (cfg.list = ml_list(&pop.list), cfg.section_bound = 16));
    EXPECT_EINVAL("algorithm 7", cfg.algo = (enum swf_algo)7);
    EXPECT_EINVAL("publication mode 9", cfg.publish = (enum swf_publish)9);
    tap_distinct_reasons("swf_sweep", causes, reasons, n_reasons);
    ok(swf_sweep_validate(NULL, &ml_ops) == EINVAL && swf_sweep_validate(&cfg, NULL) == EINVAL,
       "swf_sweep_validate(NULL, ...) is EINVAL");
    ok(population_empty(&pop) == 10 && cache_alive(c) == 0,
       "rejected calls touched no slot and allocated nothing");
    base_config(&cfg, &pop, c);
    ok(swf_sweep(&cfg, NULL) == 0 && population_empty(&pop) == 0, "stats may be NULL");
    population_release(&pop, c, NULL);
    swf_cache_destroy(c);
    population_fini(&pop);

    struct swf_guard g = {NULL, NULL, NULL, 0};
    swf_guard_epoch(&g, NULL);
    swf_guard_epoch(NULL, NULL);
    swf_guard_rwlock(&g, NULL);
    swf_guard_none(NULL);
    ok(g.enter == NULL, "the guard constructors ignore NULL arguments");
}

static void test_small_lists(void)
{
    struct swf_cache *c = make_cache(0);
    for (size_t n = 0; n <= 1; n++) {
        struct population pop;
        population_init(&pop, n, 0);
        struct swf_sweep_config cfg;
        base_config(&cfg, &pop, c);
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        ok(err == 0 && st.passes == 1 && st.visits == n && st.assigned == n &&
               population_empty(&pop) == 0 && cache_alive(c) == n,
           "a list of %zu: 1 pass, %zu visits, %zu assigned, reserve returned", n, n, n);
        population_release(&pop, c, NULL);
        population_fini(&pop);
    }
    ok(cache_alive(c) == 0 && swf_cache_destroy(c) == 0, "nothing left alive");
}

static void test_all_set(void)
{
    static char sentinel[8];
    struct swf_cache *c = make_cache(0);
    struct population pop;
    population_init(&pop, 500, 0);
    for (size_t i = 0; i < pop.n; i++)
        pop.m[i].slot = sentinel;
    static const enum swf_algo algos[] = {SWF_RESUME, SWF_RESTART, SWF_BATCH_RESTART};
    for (int a = 0; a < 3; a++) {
        struct swf_sweep_config cfg;
        base_config(&cfg, &pop, c);
        cfg.algo = algos[a];
        uint64_t inits = test_inits;
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        bool untouched = true;
        for (size_t i = 0; i < pop.n; i++)
            untouched = untouched && pop.m[i].slot == sentinel;
        ok(err == 0 && st.assigned == 0 && st.already_set == 500 && test_inits == inits &&
               untouched && cache_alive(c) == 0 && st.passes == 1,
           "algorithm %d on 500 members already set: nothing assigned, init never called, "
           "slots untouched, no object left alive",
           a);
    }
    population_fini(&pop);
    swf_cache_destroy(c);
}

static void test_out_of_memory(void)
{
    static const enum swf_algo algos[] = {SWF_RESUME, SWF_RESTART, SWF_BATCH_RESTART};
    for (int a = 0; a < 3; a++) {
        enum { N = 1000, LIMIT = 300 };
        struct swf_cache *c = make_cache(LIMIT);
        struct population pop;
        population_init(&pop, N, 0);
        struct swf_sweep_config cfg;
        base_config(&cfg, &pop, c);
        cfg.algo = algos[a];
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        bool valid = true;
        size_t filled = 0;
        for (size_t i = 0; i < N; i++)
            if (pop.m[i].slot != NULL) {
                filled++;
                valid = valid && payload_ok(pop.m[i].slot, &pop.m[i]);
            }
        ok(err == ENOMEM && filled == st.assigned && filled <= LIMIT && valid &&
               cache_alive(c) == filled,
           "algorithm %d, cache limit %d below N=%d: ENOMEM after %zu valid assignments, "
           "nothing leaked (alive %llu)",
           a, LIMIT, N, filled, (unsigned long long)cache_alive(c));
        swf_cache_set_limit(c, N + 64);
        struct swf_sweep_stats st2;
        err = swf_sweep(&cfg, &st2);
        bool complete = population_empty(&pop) == 0;
        for (size_t i = 0; i < N && complete; i++)
            complete = payload_ok(pop.m[i].slot, &pop.m[i]);
        ok(err == 0 && complete && st.assigned + st2.assigned == N && cache_alive(c) == N,
           "after raising the limit, a second sweep completes the job (%llu + %llu)",
           (unsigned long long)st.assigned, (unsigned long long)st2.assigned);
        population_release(&pop, c, NULL);
        ok(swf_cache_destroy(c) == 0, "destroy");
        population_fini(&pop);
    }
}

/* A guard whose leave deletes the member the sweep holds pinned: its cursor, while it is
 * outside the section. */
struct deleting_guard {
    struct population *pop;
    int budget; /* deletions left */
    int deletions;
};

static void dg_enter(void *arg)
{
    (void)arg;
}

static void dg_leave(void *arg)
{
    struct deleting_guard *g = arg;
    for (size_t i = 0; i < g->pop->n && g->budget > 0; i++) {
        struct member *m = &g->pop->m[i];
        if (m->pins > 0 && m->linked) {
            CK_LIST_REMOVE(m, link);
            m->linked = 0;
            g->budget--;
            g->deletions++;
        }
    }
}

static void test_cursor_deleted(void)
{
    static const struct {
        size_t bound;
        unsigned int fail;
        const char *why;
    } cases[] = {{10, 0, "at a section bound"}, {0, 100, "during a refill"}};
    for (int k = 0; k < 2; k++) {
        enum { N = 200 };
        struct swf_cache *c = make_cache(0);
        struct population pop;
        population_init(&pop, N, 0);
        struct deleting_guard dg = {&pop, 5, 0};
        struct swf_sweep_config cfg;
        base_config(&cfg, &pop, c);
        cfg.guard = (struct swf_guard){dg_enter, dg_leave, &dg, 0};
        cfg.section_bound = cases[k].bound;
        struct swf_failslab fs = {.probability = cases[k].fail, .interval = 1, .times = -1};
        swf_cache_set_failslab(c, &fs);
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        size_t missing = 0;
        for (size_t i = 0; i < N; i++)
            missing += pop.m[i].linked && pop.m[i].slot == NULL;
        bool unpinned = true;
        for (size_t i = 0; i < N; i++)
            unpinned = unpinned && pop.m[i].pins == 0;
        ok(err == 0 && dg.deletions == 5 && st.restarts == 5 && st.passes == 6 && missing == 0 &&
               unpinned && (cases[k].bound == 0 || st.longest_section <= cases[k].bound),
           "cursor deleted %s, 5 times: %llu restarts from the head, %llu passes, every linked "
           "member filled, every pin released",
           cases[k].why, (unsigned long long)st.restarts, (unsigned long long)st.passes);
        population_release(&pop, c, NULL);
        swf_cache_destroy(c);
        population_fini(&pop);
    }
}

static void test_ready_made_guards(void)
{
    struct swf_cache *c = make_cache(0);
    /* Objects for every member and the reserve: NOWAIT never fails, so no refill adds a section. */
    tap_require(swf_cache_grow(c, 1000) == 0, "grow");
    struct population pop;
    population_init(&pop, 300, 0);
    pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    struct swf_sweep_config cfg;
    base_config(&cfg, &pop, c);
    swf_guard_rwlock(&cfg.guard, &lock);
    cfg.section_bound = 7;
    struct swf_sweep_stats st;
    int err = swf_sweep(&cfg, &st);
    ok(err == 0 && population_empty(&pop) == 0 && st.sections == 43 &&
           pthread_rwlock_trywrlock(&lock) == 0,
       "rwlock guard: 300 members in %llu sections of at most 7, lock released at the end",
       (unsigned long long)st.sections);
    pthread_rwlock_unlock(&lock);
    population_release(&pop, c, NULL);

    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    swf_guard_epoch(&cfg.guard, &rec);
    err = swf_sweep(&cfg, &st);
    ok(err == 0 && population_empty(&pop) == 0 && rec.active == 0,
       "epoch guard: every member filled, the record left outside any section");
    population_release(&pop, c, NULL);
    ck_epoch_unregister(&rec);
    swf_cache_destroy(c);
    population_fini(&pop);
}

/* BATCH_RESTART checks its batch before looking at a member; a refill that comes back empty
 * there is not an error unless some member still needs an object. */
static void test_batch_needs_nothing_more(void)
{
    struct swf_cache *c = make_cache(1);
    struct population pop;
    population_init(&pop, 2, 0);
    static char sentinel[8];
    pop.m[1].slot = sentinel;
    struct swf_sweep_config cfg;
    base_config(&cfg, &pop, c);
    cfg.algo = SWF_BATCH_RESTART;
    cfg.reserve = 1;
    struct swf_sweep_stats st;
    int err = swf_sweep(&cfg, &st);
    ok(err == 0 && pop.m[0].slot != NULL && pop.m[1].slot == sentinel && st.assigned == 1,
       "BATCH_RESTART, limit 1, [empty, set]: the empty refill after the last object is not an "
       "error (%d)",
       err);
    pop.m[1].slot = NULL;
    swf_cache_free(c, pop.m[0].slot);
    pop.m[0].slot = NULL;
    swf_cache_set_limit(c, 1);
    err = swf_sweep(&cfg, &st);
    ok(err == ENOMEM && st.assigned == 1 && cache_alive(c) == 1,
       "... and with both empty, ENOMEM once a member needs an object");
    population_release(&pop, c, NULL);
    swf_cache_destroy(c);
    population_fini(&pop);
}

int main(void)
{
    test_batch_needs_nothing_more();
    test_ready_made_guards();
    test_cursor_deleted();
    test_bad_input();
    test_small_lists();
    test_all_set();
    test_out_of_memory();
    return tap_done();
}
