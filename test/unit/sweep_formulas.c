/*
 * test/unit/sweep_formulas.c - the pass and visit counts the three algorithms' formulas predict,
 * exactly, on lists whose every slot is empty (B = reserve size, P = passes):
 *
 *   BATCH_RESTART            P = max(1, ceil(N/B)), visits = B*P*(P-1)/2 + N + (P-1)
 *   RESTART,  0% failure     P = 1, visits = N
 *   RESTART, 100% failure    P = max(1, ceil(N/B)), visits as BATCH_RESTART, restarts = P - 1
 *   RESUME,   0% failure     P = 1, visits = N
 *   RESUME,  100% failure    P = 1, refills = max(0, ceil(N/B) - 1), visits = N + refills
 *
 * (The (P-1) term is the stop visit: each pass but the last steps onto one member to find the
 * reserve used up.) Each run also checks the end state: every slot set and initialised for its
 * member, init called once per object, objects alive in the cache == objects assigned.
 */
#include <errno.h>
#include <string.h>

#include "../common/members.h"
#include "../common/tap.h"

enum { B = SWF_SWEEP_RESERVE_DEFAULT };

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

static uint64_t restart_visits(uint64_t n, uint64_t p)
{
    return (uint64_t)B * p * (p - 1) / 2 + n + (p - 1);
}

struct run {
    enum swf_algo algo;
    unsigned int fail; /* percent NOWAIT failure */
    const struct adapter *adapter;
    bool blocking_ok; /* the guard declares SWF_GUARD_BLOCKING_OK */
};

static const char *algo_name(enum swf_algo a)
{
    return a == SWF_RESUME ? "RESUME" : a == SWF_RESTART ? "RESTART" : "BATCH_RESTART";
}

static const struct adapter *adapter_named(const char *name)
{
    for (size_t i = 0; i < ADAPTER_COUNT; i++)
        if (strcmp(adapters[i].name, name) == 0)
            return &adapters[i];
    diag("no adapter named %s", name);
    tap_require(false, "an adapter named in this test is missing from members.h");
    return NULL;
}

static bool sweep_once(size_t n, struct run r, struct swf_sweep_stats *st, int *err)
{
    struct population pop;
    population_init(&pop, n, 3);
    struct swf_cache_config ccfg = {.object_size = sizeof(struct payload), .name = "formulas"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&ccfg, &c) == 0, "cache");
    tap_require(swf_cache_grow(c, n + 2 * B) == 0, "grow");
    struct swf_failslab fs = {.probability = r.fail, .interval = 1, .times = -1, .seed = 1};
    swf_cache_set_failslab(c, r.fail ? &fs : NULL);

    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = r.adapter->list(&pop);
    cfg.cache = c;
    cfg.init = payload_init;
    cfg.algo = r.algo;
    swf_guard_none(&cfg.guard);
    if (r.blocking_ok)
        cfg.guard.flags |= SWF_GUARD_BLOCKING_OK;
    uint64_t inits_before = test_inits;
    *err = adapter_sweep(r.adapter, &cfg, st);

    bool good = population_empty(&pop) == 0 && test_inits - inits_before == n &&
                st->assigned == n && cache_alive(c) == n;
    for (size_t i = 0; i < n && good; i++)
        good = payload_ok(pop.m[i].slot, &pop.m[i]);
    population_release(&pop, c, NULL);
    good = good && cache_alive(c) == 0 && swf_cache_destroy(c) == 0;
    population_fini(&pop);
    return good;
}

static void check(size_t n, struct run r)
{
    struct swf_sweep_stats st;
    int err;
    bool state_ok = sweep_once(n, r, &st, &err);
    uint64_t p = n ? ceil_div(n, B) : 1;
    uint64_t want_passes, want_visits, want_refills;
    bool full_fail = r.fail == 100;
    bool cannot_resume = !r.adapter->pins && !r.blocking_ok;
    bool restarting =
        r.algo == SWF_BATCH_RESTART || (full_fail && (r.algo == SWF_RESTART || cannot_resume));
    if (restarting) {
        want_passes = p;
        want_visits = restart_visits(n, p);
        want_refills = p - 1;
    } else if (full_fail) {
        want_passes = 1;
        want_refills = p - 1;
        want_visits = n + want_refills;
    } else {
        want_passes = 1;
        want_visits = n;
        want_refills = 0;
    }
    bool counts = st.passes == want_passes && st.visits == want_visits &&
                  st.refills == want_refills && st.restarts == want_passes - 1;
    ok(err == 0 && state_ok && counts,
       "%s on %s%s, N=%zu, %u%% NOWAIT failure: passes %llu (want %llu), visits %llu (want %llu), "
       "refills %llu (want %llu), end state %s",
       algo_name(r.algo), r.adapter->name, r.blocking_ok ? "+blocking-ok" : "", n, r.fail,
       (unsigned long long)st.passes, (unsigned long long)want_passes,
       (unsigned long long)st.visits, (unsigned long long)want_visits,
       (unsigned long long)st.refills, (unsigned long long)want_refills,
       state_ok ? "complete" : "WRONG");
    if (cannot_resume && r.algo == SWF_RESUME)
        ok(st.fell_back == 1, "  RESUME on a list that cannot pin says it fell back to RESTART");
    if (r.adapter->pins && r.algo == SWF_RESUME)
        ok(st.fell_back == 0, "  RESUME on a list that can pin resumes (fell_back 0)");
    if (r.blocking_ok && r.algo == SWF_RESUME)
        ok(st.fell_back == 0 && st.inplace_refills == st.refills,
           "  with a blocking-ok guard it refilled in place instead (%llu)",
           (unsigned long long)st.inplace_refills);
    if (r.algo == SWF_BATCH_RESTART)
        ok(st.nowait_failures == 0 && st.reserve_uses == n,
           "  BATCH_RESTART never tries NOWAIT; every object comes from the reserve");
    if (n == 50000)
        diag("N=50000 %s %s %u%%: passes %llu, visits %llu, refills %llu, restarts %llu, "
             "sections %llu",
             algo_name(r.algo), r.adapter->name, r.fail, (unsigned long long)st.passes,
             (unsigned long long)st.visits, (unsigned long long)st.refills,
             (unsigned long long)st.restarts, (unsigned long long)st.sections);
}

int main(void)
{
    static const size_t sizes[] = {0, 1, 31, 32, 33, 64, 100, 1000, 50000};
    const struct adapter *array = adapter_named("array"), *list = adapter_named("CK_LIST");
    const struct run runs[] = {
        {SWF_BATCH_RESTART, 0, array, false}, {SWF_RESTART, 0, array, false},
        {SWF_RESTART, 100, array, false},     {SWF_RESUME, 0, array, false},
        {SWF_RESUME, 100, array, false},      {SWF_RESUME, 100, list, false},
        {SWF_RESUME, 100, list, true},        {SWF_RESTART, 100, list, false},
    };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++)
            check(sizes[i], runs[k]);

    /* Every other adapter (the _AUTO ones, <sys/queue.h>, cds_list, bucket arrays, ck_hs, the
     * generated sweeps): RESUME at 0 % and 100 % NOWAIT failure and RESTART at 100 %, with the
     * formulas of a list that can pin (or, for one that cannot, RESUME's fallback to RESTART). */
    static const size_t some[] = {0, 1, 32, 33, 1000};
    for (size_t a = 0; a < ADAPTER_COUNT; a++) {
        if (&adapters[a] == array || &adapters[a] == list)
            continue;
        for (size_t i = 0; i < sizeof(some) / sizeof(some[0]); i++) {
            check(some[i], (struct run){SWF_RESUME, 0, &adapters[a], false});
            check(some[i], (struct run){SWF_RESUME, 100, &adapters[a], false});
            check(some[i], (struct run){SWF_RESTART, 100, &adapters[a], false});
        }
    }

    /* The patch's own figure: 50,000 tasks at 100% failure retry ceil(50000/32) - 1 = 1562
     * times; RESUME does the same job in N + refills visits. */
    struct swf_sweep_stats st;
    int err;
    sweep_once(50000, (struct run){SWF_RESTART, 100, list, false}, &st, &err);
    ok(st.restarts == 1562 && st.passes == 1563, "RESTART at 100%%, N=50000: %llu restarts",
       (unsigned long long)st.restarts);
    sweep_once(50000, (struct run){SWF_RESUME, 100, array, false}, &st, &err);
    ok(st.passes == 1 && st.visits == 50000 + st.refills && st.refills == 1562,
       "RESUME at 100%%, N=50000: 1 pass, %llu visits = N + %llu refills",
       (unsigned long long)st.visits, (unsigned long long)st.refills);
    return tap_done();
}
