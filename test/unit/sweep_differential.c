/*
 * test/unit/sweep_differential.c - the three algorithms reach the same final state on the same
 * input.
 *
 * Each trial draws a list size (0 .. 3000), a fraction of slots already set (to a sentinel the
 * sweep must leave alone), a NOWAIT failure probability and seed, an adapter (members.h's
 * table: array; CK_LIST, CK_SLIST, CK_STAILQ without pins, with hand-written pins and with the
 * library's (_AUTO); nested lists; the <sys/queue.h> lists; cds_list and cds_hlist; a bucket
 * array; ck_hs; sweeps generated with SWF_SWEEP_DEFINE), a publication mode and a section bound.
 * Then it runs BATCH_RESTART, RESTART and RESUME on identical copies of that input and checks each
 * end state:
 *   - every member has a slot; pre-set slots still hold the sentinel;
 *   - every new object is initialised for its member, and no object is in two slots;
 *   - init ran exactly once per new object; objects alive in the cache == slots assigned;
 *   - the three agree on how many slots they assigned.
 */
#include <errno.h>

#include "../common/members.h"
#include "../common/tap.h"

enum { TRIALS = 300, MAX_N = 3000 };

static char sentinel[64];

struct trial {
    size_t n;
    unsigned int preset_pct;
    unsigned int fail_pct;
    uint64_t seed;
    const struct adapter *adapter;
    enum swf_publish publish;
    size_t bound;
    size_t reserve;
};

static int compare_ptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Run one algorithm on a fresh copy of the trial's input; returns slots assigned, or -1 with a
 * description of what went wrong in why. */
static long run_algo(const struct trial *t, enum swf_algo algo, char *why, size_t why_len)
{
    struct population pop;
    population_init(&pop, t->n, 1 + t->seed % 7);
    uint64_t rng = t->seed | 1;
    size_t preset = 0;
    for (size_t i = 0; i < t->n; i++)
        if (tap_rand(&rng) % 100 < t->preset_pct) {
            pop.m[i].slot = sentinel;
            preset++;
        }

    struct swf_cache_config ccfg = {.object_size = sizeof(struct payload), .name = "diff"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&ccfg, &c) == 0, "cache");
    swf_cache_grow(c, t->n / 2); /* NOWAIT finds some; the rest comes from WAIT refills */
    struct swf_failslab fs = {
        .probability = t->fail_pct, .interval = 1, .times = -1, .seed = t->seed};
    swf_cache_set_failslab(c, &fs);

    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = t->adapter->list(&pop);
    cfg.cache = c;
    cfg.init = payload_init;
    cfg.algo = algo;
    cfg.publish = t->publish;
    cfg.reserve = t->reserve;
    cfg.section_bound = t->bound;
    swf_guard_none(&cfg.guard);

    uint64_t inits_before = test_inits;
    struct swf_sweep_stats st;
    int err = adapter_sweep(t->adapter, &cfg, &st);
    uint64_t inits = test_inits - inits_before;

    long result = (long)st.assigned;
    size_t fresh = 0;
    void **objs = calloc(t->n + 1, sizeof(void *));
    why[0] = '\0';
    if (err != 0)
        snprintf(why, why_len, "sweep returned %d", err);
    for (size_t i = 0; i < t->n && !why[0]; i++) {
        struct member *m = &pop.m[i];
        if (m->slot == NULL)
            snprintf(why, why_len, "member %zu has no slot", i);
        else if (m->slot != sentinel && !payload_ok(m->slot, m))
            snprintf(why, why_len, "member %zu's object is not initialised for it", i);
        else if (m->slot != sentinel)
            objs[fresh++] = m->slot;
    }
    if (!why[0] && fresh + preset != t->n)
        snprintf(why, why_len, "a pre-set slot was overwritten (%zu new + %zu preset != %zu)",
                 fresh, preset, t->n);
    qsort(objs, fresh, sizeof(void *), compare_ptr);
    for (size_t i = 1; i < fresh && !why[0]; i++)
        if (objs[i] == objs[i - 1])
            snprintf(why, why_len, "object %p is in two slots", objs[i]);
    if (!why[0] && (inits != fresh || st.assigned != fresh || cache_alive(c) != fresh))
        snprintf(why, why_len, "inits %llu, assigned %llu, alive %llu, new slots %zu",
                 (unsigned long long)inits, (unsigned long long)st.assigned,
                 (unsigned long long)cache_alive(c), fresh);
    if (!why[0] && cfg.section_bound && st.longest_section > cfg.section_bound)
        snprintf(why, why_len, "a section ran %llu visits, bound %zu",
                 (unsigned long long)st.longest_section, cfg.section_bound);
    free(objs);
    population_release(&pop, c, sentinel);
    if (!why[0] && (cache_alive(c) != 0 || swf_cache_destroy(c) != 0))
        snprintf(why, why_len, "objects left alive after releasing every slot");
    population_fini(&pop);
    return why[0] ? -1 : result;
}

int main(void)
{
    uint64_t rng = 0x2545f4914f6cdd1dull;
    static const unsigned int fails[] = {0, 1, 10, 50, 90, 100};
    static const unsigned int presets[] = {0, 0, 10, 50, 90, 100};
    int disagreements = 0, broken = 0;
    for (int i = 0; i < TRIALS; i++) {
        struct trial t;
        uint64_t r = tap_rand(&rng);
        t.n = (r % 4 == 0) ? r % 40 : (r >> 8) % (MAX_N + 1);
        t.preset_pct = presets[(r >> 24) % 6];
        t.fail_pct = fails[(r >> 28) % 6];
        t.seed = tap_rand(&rng);
        t.adapter = &adapters[(r >> 32) % ADAPTER_COUNT];
        t.publish = (r >> 40) & 1 ? SWF_PUBLISH_CAS : SWF_PUBLISH_STORE;
        t.bound = (r >> 41) % 3 == 0 ? 0 : 1 + (r >> 44) % 100;
        t.reserve = 1 + (r >> 52) % 40;
        if (!t.adapter->pins)
            t.bound = 0; /* a bound needs a list that can pin */
        char why[3][160];
        long assigned[3];
        static const enum swf_algo algos[3] = {SWF_BATCH_RESTART, SWF_RESTART, SWF_RESUME};
        for (int a = 0; a < 3; a++)
            assigned[a] = run_algo(&t, algos[a], why[a], sizeof(why[a]));
        bool each_ok = assigned[0] >= 0 && assigned[1] >= 0 && assigned[2] >= 0;
        bool agree = each_ok && assigned[0] == assigned[1] && assigned[1] == assigned[2];
        broken += !each_ok;
        disagreements += each_ok && !agree;
        if (!each_ok || !agree || i % 25 == 0)
            ok(each_ok && agree,
               "trial %d: N=%zu preset=%u%% fail=%u%% %s %s bound=%zu reserve=%zu: assigned "
               "%ld/%ld/%ld%s%s%s%s%s%s",
               i, t.n, t.preset_pct, t.fail_pct, t.adapter->name,
               t.publish == SWF_PUBLISH_CAS ? "CAS" : "store", t.bound, t.reserve, assigned[0],
               assigned[1], assigned[2], why[0][0] ? "; BATCH: " : "", why[0],
               why[1][0] ? "; RESTART: " : "", why[1], why[2][0] ? "; RESUME: " : "", why[2]);
    }
    ok(broken == 0, "%d trials: every algorithm reached a complete, consistent state (%d broken)",
       TRIALS, broken);
    ok(disagreements == 0, "%d trials: the three algorithms agree (%d disagreements)", TRIALS,
       disagreements);
    return tap_done();
}
