/*
 * bench/families/nowait_failures.c - the `nowait_failures` family: RESTART (the patch) against
 * RESUME (sweepfill) when NOWAIT allocations fail. The patch's own test: with failslab injecting
 * failures into every NOWAIT allocation, 50,000 tasks cost it about 1,560 restarts from the head.
 *
 *   nowait_failures/restart/fail:P/n:N  SWF_RESTART, P % of NOWAIT allocations failed by injection
 *   nowait_failures/resume/fail:P/n:N   SWF_RESUME, the same
 *
 * P = 0, 10, 50, 100; N = 50,000 members (lists.h: 128-byte members, shuffled CK_LIST, the
 * pinned adapter with no-op pins), 4 KiB objects as in the kernel, reserve 32, ck_epoch guard.
 * Injection: swf_cache_set_failslab(probability P, interval 1, times -1, seed 42), set again
 * before every sweep so each iteration sees the same failures. Each run has its own cache, grown
 * once to N + 2*32 objects beforehand, so a refill (WAIT) finds objects ready and the time is the
 * algorithm's; each iteration: the sweep (manual time), then, untimed, the objects freed back in
 * reverse list order (the next sweep gets the same objects in the same order).
 *
 * Counters: passes, visits, refills, restarts, nowait_fails (injected and real), reserve_uses,
 * sections_s (time inside read-side sections), ns_per_member. The visit counts follow sweep.h's
 * formulas: at 100 %, RESTART makes ceil(N/32) passes and B*P*(P-1)/2 + N + (P-1) visits, RESUME
 * one pass and N + refills visits.
 *
 * Own flags: --n=50k (members), --quick (n=10k).
 */
#include <stdio.h>
#include <stdlib.h>

#include <sweepfill/cache.h>
#include <sweepfill/sweep.h>

#include "lists.h"
#include "shim/swfb.h"

enum { OBJ_SIZE = 4096, B = SWF_SWEEP_RESERVE_DEFAULT, MAX_ARGS = 8 };

struct fault_algo {
    enum swf_algo algo;
    const char *name;
};

static void bm_fault(swfb_state *st)
{
    const struct fault_algo *a = swfb_data(st);
    unsigned int fail = (unsigned int)swfb_range(st, 0);
    size_t n = (size_t)swfb_range(st, 1);
    struct blist *l = blist_get(n, true);
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "fault"};
    struct swf_cache *c;
    if (l == NULL || swf_cache_create(&cc, &c) != 0) {
        swfb_skip_with_error(st, "out of memory");
        return;
    }
    const char *msg = NULL;
    if (swf_cache_grow(c, n + 2 * B) != 0)
        msg = "swf_cache_grow failed";
    blist_clear(l);
    struct swf_failslab fs = {.probability = fail, .interval = 1, .times = -1, .seed = 42};
    double total = 0, inside = 0, passes = 0, visits = 0, refills = 0, restarts = 0, fails = 0,
           reserve = 0;
    int64_t iters = 0;
    while (msg == NULL && swfb_keep_running(st)) {
        swf_cache_set_failslab(c, fail ? &fs : NULL);
        struct swf_sweep_config cfg;
        swf_sweep_config_init(&cfg);
        cfg.list = blp_list(&l->head);
        cfg.cache = c;
        cfg.init = bobj_init;
        cfg.algo = a->algo;
        cfg.section_bound = 0; /* one section per pass: sections are what refills make */
        struct timed_guard tg;
        timed_guard_init(&tg, &cfg.guard);
        struct swf_sweep_stats s;
        uint64_t t0 = bench_now_ns();
        int err = swf_sweep(&cfg, &s);
        uint64_t t1 = bench_now_ns();
        if (err != 0 || s.assigned != n || blist_empty(l) != 0)
            msg = "the sweep left slots empty";
        if (blist_release_reverse(l, c, NULL) == (size_t)-1 && msg == NULL)
            msg = "out of memory";
        double secs = (double)(t1 - t0) * 1e-9;
        swfb_set_iteration_time(st, secs);
        total += secs;
        inside += (double)tg.inside_ns * 1e-9;
        passes += (double)s.passes;
        visits += (double)s.visits;
        refills += (double)s.refills;
        restarts += (double)s.restarts;
        fails += (double)s.nowait_failures;
        reserve += (double)s.reserve_uses;
        iters++;
    }
    swf_cache_set_failslab(c, NULL);
    blist_release(l, c, NULL);
    if (swf_cache_destroy(c) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    if (msg != NULL) {
        swfb_skip_with_error(st, msg);
        return;
    }
    double k = iters ? (double)iters : 1;
    swfb_counter_set(st, "seconds", total / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "sections_s", inside / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "passes", passes / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "visits", visits / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "refills", refills / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "restarts", restarts / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "nowait_fails", fails / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "reserve_uses", reserve / k, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "ns_per_member", n ? total / k * 1e9 / (double)n : 0, SWFB_COUNTER_PLAIN);
    swfb_set_label(st, "shuffled, 4 KiB objects");
}

int main(int argc, char **argv)
{
    int64_t ns[MAX_ARGS] = {50000};
    int nn = 1;
    if (bench_take_flag(&argc, argv, "quick") != NULL)
        ns[0] = 10000;
    const char *v = bench_take_flag(&argc, argv, "n");
    if (v != NULL && (nn = bench_parse_list(v, ns, MAX_ARGS)) <= 0) {
        fprintf(stderr,
                "bench_nowait_failures: --n=%s: expected a comma-separated list of numbers\n", v);
        return 1;
    }
    static const struct fault_algo algos[] = {
        {SWF_RESTART, "nowait_failures/restart"},
        {SWF_RESUME, "nowait_failures/resume"},
    };
    static const int fails[] = {0, 10, 50, 100};
    swfb_add_context("list", "CK_LIST of 128-byte members, shuffled, SWF_LIST_CK_LIST_PINNED, "
                             "no-op pins");
    swfb_add_context("failslab", "probability=P,interval=1,times=-1,seed=42");
    for (size_t i = 0; i < sizeof(algos) / sizeof(algos[0]); i++) {
        swfb_bench *b = swfb_register_data(algos[i].name, bm_fault, (void *)&algos[i]);
        swfb_bench_arg_names(b, "fail", "n");
        for (size_t f = 0; f < sizeof(fails) / sizeof(fails[0]); f++)
            for (int k = 0; k < nn; k++)
                swfb_bench_args2(b, fails[f], ns[k]);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_MS);
    }
    return swfb_main(argc, argv);
}
