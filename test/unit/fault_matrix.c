/*
 * test/unit/fault_matrix.c - every algorithm against every failure pattern, with the end state
 * checked.
 *
 * Part 1, NOWAIT failure: injected failure 0, 1, 10, 50, 100 % x RESUME, RESTART, BATCH_RESTART x
 * N in {0, 1, 33, 1000, 50000} members with empty slots, on a pinnable CK_LIST, with a section
 * bound. The cache is grown beforehand, so a NOWAIT failure is always an injected one and WAIT
 * never fails: every run must end complete (0). Checked for each: every member has its own
 * initialised object, no object is in two members, init ran once per object, the cache's alive
 * count equals the objects assigned (nothing leaked, the reserve went back), the injected
 * failures the cache counted equal the sweep's NOWAIT failures, and the pass, visit and refill
 * counts the algorithm's formulas allow (swf_sweep(3), DESCRIPTION).
 *
 * Part 2, WAIT failing after k objects: the cache's limit is k, so refills stop once k objects
 * exist. For each algorithm, several k and failure rates: a run ends either complete (0, when
 * k >= N) or with ENOMEM having assigned exactly the k objects there are - every one valid, in
 * one member each, nothing leaked - and a second sweep after raising the limit completes the
 * job with the remaining N - k.
 *
 * Part 3, the seed's own check: 50,000 members at 100 % failure: RESTART retries
 * ceil(50000/32) - 1 = 1562 times (1563 passes) without error; RESUME does the same job in one
 * pass of at most N + refills visits.
 *
 * Under valgrind (SWF_UNDER_VALGRIND set) or qemu (SWF_UNDER_QEMU) the 50,000-member cases are
 * left out: the restarting algorithms are quadratic there by design, and valgrind and qemu are
 * 10 to 50 times slower.
 */
#include <errno.h>
#include <stdlib.h>

#include "../common/members.h"
#include "../common/tap.h"

enum { B = SWF_SWEEP_RESERVE_DEFAULT, BOUND = 64 };

static const enum swf_algo algos[] = {SWF_RESUME, SWF_RESTART, SWF_BATCH_RESTART};

static const char *algo_name(enum swf_algo a)
{
    return a == SWF_RESUME ? "RESUME" : a == SWF_RESTART ? "RESTART" : "BATCH_RESTART";
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* The end state of a population: how many slots are set, whether each set slot holds a valid
 * object for its member, and whether any object is in two members. */
struct census {
    size_t filled;
    bool valid;
    size_t duplicates;
};

static struct census take_census(const struct population *p)
{
    struct census c = {0, true, 0};
    void **objs = malloc((p->n ? p->n : 1) * sizeof(void *));
    tap_require(objs != NULL, "malloc");
    for (size_t i = 0; i < p->n; i++) {
        if (p->m[i].slot == NULL)
            continue;
        c.valid = c.valid && payload_ok(p->m[i].slot, &p->m[i]);
        objs[c.filled++] = p->m[i].slot;
    }
    qsort(objs, c.filled, sizeof(void *), cmp_ptr);
    for (size_t i = 1; i < c.filled; i++)
        c.duplicates += objs[i] == objs[i - 1];
    free(objs);
    return c;
}

static struct swf_cache *make_cache(size_t limit)
{
    struct swf_cache_config cfg = {
        .object_size = sizeof(struct payload), .limit = limit, .name = "fault-matrix"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "cache");
    return c;
}

static void config_for(struct swf_sweep_config *cfg, struct population *pop, struct swf_cache *c,
                       enum swf_algo algo)
{
    swf_sweep_config_init(cfg);
    cfg->list = mlp_list(&pop->list);
    cfg->cache = c;
    cfg->init = payload_init;
    cfg->algo = algo;
    cfg->section_bound = BOUND;
    swf_guard_none(&cfg->guard);
}

static void set_failure(struct swf_cache *c, unsigned int percent, uint64_t seed)
{
    struct swf_failslab fs = {.probability = percent, .interval = 1, .times = -1, .seed = seed};
    tap_require(swf_cache_set_failslab(c, percent ? &fs : NULL) == 0, "failslab");
}

/* What the formulas of swf_sweep(3) allow for a complete run over n empty members. Every visit
 * either assigns, finds the slot set, or finds the reserve dry and refills. */
static bool counts_ok(enum swf_algo algo, unsigned int fail, size_t n,
                      const struct swf_sweep_stats *st)
{
    uint64_t p = n ? ceil_div(n, B) : 1;
    uint64_t restart_visits = (uint64_t)B * p * (p - 1) / 2 + n + (p - 1);
    bool common = st->assigned == n && st->lost_races == 0 && st->fell_back == 0 &&
                  st->passes == st->restarts + 1 && st->longest_section <= BOUND &&
                  st->visits == st->assigned + st->already_set + st->refills;
    switch (algo) {
    case SWF_RESUME:
        /* One pass; each refill revisits its member once; at most one refill per B objects
         * taken from the reserve. */
        return common && st->passes == 1 && st->already_set == 0 &&
               st->refills <= (st->reserve_uses ? ceil_div(st->reserve_uses, B) : 0) &&
               st->reserve_uses <= st->nowait_failures &&
               (fail != 100 || (st->reserve_uses == n && st->refills == p - 1)) &&
               (fail != 0 || (st->nowait_failures == 0 && st->refills == 0));
    case SWF_RESTART:
        /* Every refill restarts; at 100 % it is BATCH_RESTART's walk exactly. */
        return common && st->restarts == st->refills && st->reserve_uses <= st->nowait_failures &&
               (fail != 100 || (st->passes == p && st->visits == restart_visits)) &&
               (fail != 0 || (st->passes == 1 && st->visits == n));
    default:
        return common && st->nowait_failures == 0 && st->reserve_uses == n && st->passes == p &&
               st->visits == restart_visits && st->refills == p - 1;
    }
}

static void nowait_case(enum swf_algo algo, unsigned int fail, size_t n)
{
    struct population pop;
    population_init(&pop, n, 0);
    struct swf_cache *c = make_cache(0);
    tap_require(swf_cache_grow(c, n + 2 * B) == 0, "grow");
    set_failure(c, fail, 0x5eed0000u + fail);
    struct swf_cache_stats before, after;
    swf_cache_stats(c, &before);

    struct swf_sweep_config cfg;
    config_for(&cfg, &pop, c, algo);
    cfg.publish = n % 2 ? SWF_PUBLISH_CAS : SWF_PUBLISH_STORE;
    uint64_t inits = test_inits;
    struct swf_sweep_stats st;
    int err = swf_sweep(&cfg, &st);
    struct census cen = take_census(&pop);
    swf_cache_stats(c, &after);
    bool state = err == 0 && cen.filled == n && cen.valid && cen.duplicates == 0 &&
                 test_inits - inits == n && after.alive == n;
    bool injected = after.fails_injected - before.fails_injected == st.nowait_failures &&
                    after.fails_nowait == before.fails_nowait;
    bool counts = counts_ok(algo, fail, n, &st);
    ok(state && injected && counts,
       "%s, %3u%% NOWAIT failure, N=%zu: %s; %llu passes, %llu visits, %llu refills, %llu "
       "NOWAIT failures (%llu injected), %llu from the reserve; alive %llu",
       algo_name(algo), fail, n, state ? "complete, no duplicate, nothing leaked" : "WRONG STATE",
       (unsigned long long)st.passes, (unsigned long long)st.visits, (unsigned long long)st.refills,
       (unsigned long long)st.nowait_failures,
       (unsigned long long)(after.fails_injected - before.fails_injected),
       (unsigned long long)st.reserve_uses, (unsigned long long)after.alive);
    population_release(&pop, c, NULL);
    tap_require(swf_cache_destroy(c) == 0, "destroy");
    population_fini(&pop);
}

static void limit_case(enum swf_algo algo, unsigned int fail, size_t n, size_t k)
{
    struct population pop;
    population_init(&pop, n, 0);
    struct swf_cache *c = make_cache(k);
    set_failure(c, fail, 0x11a1u + k);
    struct swf_sweep_config cfg;
    config_for(&cfg, &pop, c, algo);
    cfg.publish = SWF_PUBLISH_CAS;
    struct swf_sweep_stats st1, st2;
    uint64_t inits = test_inits;
    int err1 = swf_sweep(&cfg, &st1);
    struct census c1 = take_census(&pop);
    uint64_t alive1 = cache_alive(c);
    bool want_enomem = k < n;
    bool first = c1.valid && c1.duplicates == 0 && c1.filled == st1.assigned &&
                 alive1 == c1.filled && test_inits - inits == c1.filled &&
                 (want_enomem ? err1 == ENOMEM && c1.filled == k : err1 == 0 && c1.filled == n);

    swf_cache_set_limit(c, n + B);
    int err2 = swf_sweep(&cfg, &st2);
    struct census c2 = take_census(&pop);
    bool second = err2 == 0 && c2.filled == n && c2.valid && c2.duplicates == 0 &&
                  st1.assigned + st2.assigned == n && cache_alive(c) == n &&
                  st2.already_set >= c1.filled;
    ok(first && second,
       "%s, limit %zu, %u%% NOWAIT failure, N=%zu: first sweep %s with %zu valid objects "
       "(alive %llu), after raising the limit the second %s (+%llu, %zu filled)",
       algo_name(algo), k, fail, n,
       err1 == 0        ? "complete"
       : err1 == ENOMEM ? "ENOMEM"
                        : "??",
       c1.filled, (unsigned long long)alive1, err2 == 0 ? "completes" : "FAILS",
       (unsigned long long)st2.assigned, c2.filled);
    population_release(&pop, c, NULL);
    tap_require(swf_cache_destroy(c) == 0, "destroy");
    population_fini(&pop);
}

static void seed_check(void)
{
    enum { N = 50000 };
    for (int a = 0; a < 2; a++) {
        struct population pop;
        population_init(&pop, N, 0);
        struct swf_cache *c = make_cache(0);
        tap_require(swf_cache_grow(c, N + 2 * B) == 0, "grow");
        set_failure(c, 100, 1);
        struct swf_sweep_config cfg;
        config_for(&cfg, &pop, c, a == 0 ? SWF_RESTART : SWF_RESUME);
        cfg.section_bound = 0;
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        struct census cen = take_census(&pop);
        bool complete =
            err == 0 && cen.filled == N && cen.valid && cen.duplicates == 0 && cache_alive(c) == N;
        if (a == 0)
            ok(complete && st.restarts == 1562 && st.passes == 1563,
               "the seed's check: RESTART, N=50000, 100%% failure: %llu restarts, %llu passes, "
               "%llu visits, no error",
               (unsigned long long)st.restarts, (unsigned long long)st.passes,
               (unsigned long long)st.visits);
        else
            ok(complete && st.passes == 1 && st.visits <= N + st.refills && st.refills == 1562,
               "RESUME does the same job in 1 pass: %llu visits <= N + %llu refills",
               (unsigned long long)st.visits, (unsigned long long)st.refills);
        population_release(&pop, c, NULL);
        swf_cache_destroy(c);
        population_fini(&pop);
    }
}

int main(void)
{
    const char *slow = tap_under_valgrind() ? "valgrind" : tap_under_qemu() ? "qemu" : NULL;
    static const unsigned int fails[] = {0, 1, 10, 50, 100};
    static const size_t sizes[] = {0, 1, 33, 1000, 50000};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        if (slow != NULL && sizes[s] > 1000) {
            skip("N=%zu under %s (quadratic baselines; the plain and ASan builds run it)", sizes[s],
                 slow);
            continue;
        }
        for (size_t a = 0; a < 3; a++)
            for (size_t f = 0; f < sizeof(fails) / sizeof(fails[0]); f++)
                nowait_case(algos[a], fails[f], sizes[s]);
    }

    static const size_t limits[] = {1, 31, 32, 33, 64, 500, 999, 1000, 1200};
    static const unsigned int limit_fails[] = {0, 50, 100};
    for (size_t a = 0; a < 3; a++)
        for (size_t k = 0; k < sizeof(limits) / sizeof(limits[0]); k++)
            limit_case(algos[a], limit_fails[k % 3], 1000, limits[k]);
    if (slow == NULL) {
        for (size_t a = 0; a < 3; a++)
            limit_case(algos[a], 50, 50000, 25000);
        seed_check();
    } else {
        skip("the 50,000-member limit cases and the seed's check under %s", slow);
    }
    return tap_done();
}
