/*
 * bench/families/seed.c - the `seed` family, and the main of bench_seed, which also runs the
 * `floor` family (floor.c) and the `ready` family (ready.c) in the same process, on the same lists.
 *
 * The seed table of the kernel patch (reference/fgraph-nowait-patch.txt), reproduced: N members
 * (128-byte structs, lists.h), every slot empty, objects of 4 KiB (a shadow stack, as in the
 * kernel) and 64 B, filled by each algorithm:
 *   seed/batch_restart/size:S/n:N   SWF_BATCH_RESTART: the old kernel loop, quadratic
 *   seed/restart/size:S/n:N         SWF_RESTART: the patch (NOWAIT inline, restart when dry)
 *   seed/resume/size:S/n:N          SWF_RESUME: sweepfill (NOWAIT inline, resumable cursor)
 * all through swf_sweep, with the reserve of 32, release-store publication, unbounded sections,
 * the ck_epoch guard (swf_guard_epoch, wrapped to time its sections: lists.h) and the pinned
 * CK_LIST adapter with no-op pins (lists.h says why no-op pins are correct here).
 *
 * One iteration: a fresh cache; swf_cache_grow(c, N + 32) (timed: grow_s, the memory made ready,
 * mapped and pre-faulted); the clear pass over the list (untimed); the sweep (timed: sweep_s, of
 * which sections_s inside read-side sections); then, untimed, every object freed and the cache
 * destroyed. The benchmark's time (manual time) is grow_s + sweep_s: what switching the feature on
 * costs, memory included. Every algorithm gets the same preparation, so with 0 % NOWAIT failure
 * RESTART and RESUME make one pass, as in the patch's "after" column; nowait_failures.c separates
 * them.
 *
 * Counters (averages over the iterations): seconds, grow_s, sweep_s, sections_s, passes, visits,
 * ns_per_member (seconds / N), estimated (0 or 1), and for BATCH_RESTART formula_visits
 * (B*P*(P-1)/2 + N + (P-1), P = ceil(N/B)) and, when probed, estimate_s and probe_s.
 *
 * --max-seconds=S bounds BATCH_RESTART, whose visits grow as N^2/64 (2.5e9 at N = 400k). Before a
 * BATCH_RESTART run the sweep is probed: the P passes are cut into up to 8 equal groups; in each
 * group a few consecutive passes are run for real, starting from the state the earlier passes
 * would have left (the list's first (p-1)*32 members, in list order, pre-set to a sentinel by a
 * walk from the head, which also warms the caches as the previous pass would have), and stopped
 * after k passes by giving the cache exactly k*32 objects and a limit (the sweep then returns
 * ENOMEM). Each group's measured time per visit, times the exact visits of that group's passes
 * from the formula, summed, plus a measured swf_cache_grow(N + 32), is the estimate. Sampling
 * the whole range matters: late passes walk a long prefix that no longer fits in the CPU caches
 * and cost more per visit than the first ones. If the estimate exceeds S, the run reports it
 * (manual time = the estimate, counter estimated = 1, label "ESTIMATED ...") instead of running;
 * otherwise it runs for real and keeps the estimate as estimate_s, so the estimator can be
 * checked against the real figure. Without the flag nothing is probed and everything runs.
 *
 * Own flags (taken out before Google Benchmark's are parsed):
 *   --n=100k,200k,400k   members      --sizes=4096,64   object sizes
 *   --max-seconds=S      see above    --in-order        link in memory order instead of shuffled
 *   --probe-visits=V     visits per probe group (default 4M)
 *   --quick              n=10k,100k, sizes=64, probe-visits=500k: what `bench/run --quick` uses
 *   --huge-pages=auto|off|required, --grow-threads=N, --cache-alloc=single|inline|bulk
 *                        the cache row of the memory-preparation floors (ready.c)
 *   --host-memory=warm|cold|as-found, --cold-sleep=S
 *                        the host's state before every measurement that maps fresh memory (the
 *                        grow here, the first touch and populate floors, every ready row),
 *                        untimed (host.h, bench_host_prepare): warm (default), as many bytes
 *                        mapped, faulted in with the page size the contender uses and unmapped;
 *                        cold, memory the host took back (S seconds of sleep, default 6, shared
 *                        through a ballast); as-found: nothing. One state per process: bench/run
 *                        runs warm and cold one after the other and report.py puts them side by
 *                        side. In the cold state every run that maps memory makes one iteration
 *                        per repetition, so that each measurement meets cold memory.
 *   --batch-reps=R       BATCH_RESTART's repetitions (default 3; each runs for real where its
 *                        estimate fits --max-seconds, else the estimate is reported once)
 *
 * Every measurement also records what decides it: the cache's huge_choice and huge_bytes, and
 * around the grow /proc/vmstat's thp_fault_alloc, thp_fault_fallback and compact_stall and the
 * host's steal time (counters thp_fault_alloc, thp_fault_fallback, compact_stall, steal_s).
 *
 * An A/A control, seed/restart_aa/size:S/n:N, runs RESTART a second time (bench/README.md,
 * Decision rules, 3): the noise band of the RESUME against RESTART comparison.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/cache.h>
#include <sweepfill/sweep.h>

#include "lists.h"
#include "ready.h"
#include "shim/swfb.h"

enum { B = SWF_SWEEP_RESERVE_DEFAULT, MAX_ARGS = 16, PROBE_GROUPS = 8 };

struct seed_algo {
    enum swf_algo algo;
    const char *name;
};

static const struct seed_algo seed_algos[] = {
    {SWF_RESUME, "seed/resume"},
    {SWF_RESTART, "seed/restart"},
    {SWF_RESTART, "seed/restart_aa"},
    {SWF_BATCH_RESTART, "seed/batch_restart"},
};

static double max_seconds; /* 0: no bound */
static double probe_visits = 4e6;
static bool shuffled = true;
static char sentinel_byte; /* &sentinel_byte marks slots pre-set by a probe */
#define SENTINEL ((void *)&sentinel_byte)

static int batch_reps = 3;

struct sweep_result {
    double grow_s, sweep_s, sections_s;
    struct swf_sweep_stats st;
    struct bench_vm vm; /* around the grow */
    double huge_choice, huge_fraction;
    int err;
};

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* Visits of BATCH_RESTART's passes a..b (1-based) on an all-empty list: pass p < P sees (p-1)*B
 * filled members, fills B and makes the stop visit (p*B + 1); the last pass walks all N. */
static double batch_visits(uint64_t n, uint64_t a, uint64_t b)
{
    uint64_t P = n ? ceil_div(n, B) : 1;
    double v = 0;
    uint64_t hi = b < P ? b : P - 1;
    if (a <= hi)
        v += (double)B * (double)(a + hi) * (double)(hi - a + 1) / 2 + (double)(hi - a + 1);
    if (b >= P)
        v += (double)n;
    return v;
}

static struct swf_cache *new_cache(size_t size)
{
    struct swf_cache_config cc = {.object_size = size, .name = "seed"};
    struct swf_cache *c;
    return swf_cache_create(&cc, &c) == 0 ? c : NULL;
}

static void sweep_config(struct swf_sweep_config *cfg, struct blist *l, struct swf_cache *c,
                         enum swf_algo algo, struct timed_guard *tg)
{
    swf_sweep_config_init(cfg);
    cfg->list = blp_list(&l->head);
    cfg->cache = c;
    cfg->init = bobj_init;
    cfg->algo = algo;
    cfg->section_bound = 0; /* one section per pass: sections are what refills make */
    timed_guard_init(tg, &cfg->guard);
}

/* One measured sweep (see the top comment). Returns NULL, or what went wrong. */
static const char *sweep_once(struct blist *l, size_t size, enum swf_algo algo,
                              struct sweep_result *r)
{
    struct swf_cache *c = new_cache(size);
    if (c == NULL)
        return "swf_cache_create failed";
    bench_host_prepare_objects(l->n + B, size, BENCH_PAGES_HUGE);
    struct bench_vm v0, v1;
    bench_vm_read(&v0);
    uint64_t t0 = bench_now_ns();
    int err = swf_cache_grow(c, l->n + B);
    uint64_t t1 = bench_now_ns();
    bench_vm_read(&v1);
    bench_vm_delta(&r->vm, &v1, &v0);
    if (err != 0) {
        swf_cache_destroy(c);
        return "swf_cache_grow failed";
    }
    struct swf_cache_stats cs;
    if (swf_cache_stats(c, &cs) == 0) {
        r->huge_choice = (double)cs.huge_choice;
        r->huge_fraction = cs.bytes_mapped ? (double)cs.huge_bytes / (double)cs.bytes_mapped : 0;
    }
    blist_clear(l);
    struct swf_sweep_config cfg;
    struct timed_guard tg;
    sweep_config(&cfg, l, c, algo, &tg);
    uint64_t t2 = bench_now_ns();
    r->err = swf_sweep(&cfg, &r->st);
    uint64_t t3 = bench_now_ns();
    const char *msg = NULL;
    if (r->err != 0)
        msg = "swf_sweep failed";
    else if (r->st.assigned != l->n || blist_empty(l) != 0)
        msg = "the sweep left slots empty";
    blist_release(l, c, NULL);
    if (swf_cache_destroy(c) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    r->grow_s = (double)(t1 - t0) * 1e-9;
    r->sweep_s = (double)(t3 - t2) * 1e-9;
    r->sections_s = (double)tg.inside_ns * 1e-9;
    return msg;
}

/* ---- the BATCH_RESTART estimate ------------------------------------------------------------ */

struct estimate {
    double seconds;    /* grow + estimated sweep */
    double grow_s;     /* measured */
    double sweep_s;    /* estimated */
    double sections_s; /* estimated: sweep_s times the probes' share of time inside sections */
    double probe_s;    /* time spent running probes */
    uint64_t probe_passes, probe_visits;
    int groups;
};

/*
 * Run BATCH_RESTART passes start .. start+k-1 for real: the first (start-1)*B members in list
 * order pre-set to SENTINEL, the cache holding exactly k*B objects and limited to what it holds.
 */
static const char *batch_probe(struct blist *l, size_t size, uint64_t start, uint64_t k,
                               double *secs, double *inside, uint64_t *visits, uint64_t *passes)
{
    *secs = *inside = 0;
    *visits = *passes = 0;
    struct swf_cache *c = new_cache(size);
    if (c == NULL)
        return "swf_cache_create failed";
    const char *msg = NULL;
    void **held = NULL;
    size_t nheld = 0;
    struct swf_cache_stats cs;
    if (swf_cache_grow(c, k * B) != 0 || swf_cache_stats(c, &cs) != 0) {
        msg = "swf_cache_grow failed";
        goto out;
    }
    /* Keep the surplus the chunk rounding made ready out of the sweep's reach. */
    held = malloc((cs.ready - k * B + 1) * sizeof(void *));
    if (held == NULL) {
        msg = "out of memory";
        goto out;
    }
    while (nheld < cs.ready - k * B) {
        void *obj = swf_cache_alloc(c, SWF_WAIT);
        if (obj == NULL) {
            msg = "swf_cache_alloc(WAIT) failed";
            goto out;
        }
        held[nheld++] = obj;
    }
    swf_cache_set_limit(c, cs.capacity);

    blist_clear(l);
    uint64_t preset = (start - 1) * B;
    struct bmember *m = CK_LIST_FIRST(&l->head);
    for (uint64_t i = 0; i < preset && m != NULL; i++, m = CK_LIST_NEXT(m, link))
        m->slot = SENTINEL;

    struct swf_sweep_config cfg;
    struct timed_guard tg;
    struct swf_sweep_stats st;
    sweep_config(&cfg, l, c, SWF_BATCH_RESTART, &tg);
    uint64_t t0 = bench_now_ns();
    int err = swf_sweep(&cfg, &st);
    uint64_t t1 = bench_now_ns();
    if (err != 0 && err != ENOMEM)
        msg = "swf_sweep failed in a probe";
    *secs = (double)(t1 - t0) * 1e-9;
    *inside = (double)tg.inside_ns * 1e-9;
    *visits = st.visits;
    *passes = err == ENOMEM ? st.passes - 1 : st.passes; /* the failed refill walks nothing */
    blist_release(l, c, SENTINEL);
out:
    for (size_t i = 0; i < nheld; i++)
        swf_cache_free(c, held[i]);
    free(held);
    if (swf_cache_destroy(c) != 0 && msg == NULL)
        msg = "objects leaked in a probe";
    return msg;
}

static const char *batch_estimate(struct blist *l, size_t size, struct estimate *e)
{
    memset(e, 0, sizeof(*e));
    uint64_t n = l->n;
    uint64_t P = n ? ceil_div(n, B) : 1;
    uint64_t groups = P < PROBE_GROUPS ? P : PROBE_GROUPS;
    double inside_total = 0, probe_sweep_total = 0;
    for (uint64_t g = 0; g < groups; g++) {
        uint64_t a = 1 + g * P / groups, b = (g + 1) * P / groups; /* passes a..b */
        uint64_t mid = (a + b) / 2;
        double per_pass = (double)mid * B;
        uint64_t k = (uint64_t)llround(probe_visits / per_pass);
        if (k < 1)
            k = 1;
        if (k > b - a + 1)
            k = b - a + 1;
        uint64_t start = mid >= a + k / 2 ? mid - k / 2 : a;
        if (start + k - 1 > b)
            start = b - k + 1;
        double secs, inside;
        uint64_t visits, passes;
        const char *msg = batch_probe(l, size, start, k, &secs, &inside, &visits, &passes);
        if (msg != NULL)
            return msg;
        if (visits == 0)
            return "a probe made no visit";
        e->sweep_s += secs / (double)visits * batch_visits(n, a, b);
        e->probe_s += secs;
        e->probe_passes += passes;
        e->probe_visits += visits;
        inside_total += inside;
        probe_sweep_total += secs;
    }
    e->groups = (int)groups;
    /* The memory part is measured, not estimated: swf_cache_grow(N + B) on a fresh cache. */
    struct swf_cache *c = new_cache(size);
    if (c == NULL)
        return "swf_cache_create failed";
    bench_host_prepare_objects(n + B, size, BENCH_PAGES_HUGE);
    uint64_t t0 = bench_now_ns();
    int err = swf_cache_grow(c, n + B);
    uint64_t t1 = bench_now_ns();
    swf_cache_destroy(c);
    if (err != 0)
        return "swf_cache_grow failed";
    e->grow_s = (double)(t1 - t0) * 1e-9;
    e->seconds = e->grow_s + e->sweep_s;
    e->sections_s = probe_sweep_total > 0 ? e->sweep_s * inside_total / probe_sweep_total : 0;
    return NULL;
}

/* ---- the benchmark body -------------------------------------------------------------------- */

/* BATCH_RESTART's estimate per (size, N), probed once and kept for its later repetitions. */
enum { MAX_EST = 64 };
static struct {
    size_t size, n;
    struct estimate e;
} estimates[MAX_EST];
static int nestimates;

static const char *estimate_for(struct blist *l, size_t size, struct estimate *e)
{
    for (int i = 0; i < nestimates; i++)
        if (estimates[i].size == size && estimates[i].n == l->n) {
            *e = estimates[i].e;
            return NULL;
        }
    const char *msg = batch_estimate(l, size, e);
    if (msg == NULL && nestimates < MAX_EST) {
        estimates[nestimates].size = size;
        estimates[nestimates].n = l->n;
        estimates[nestimates++].e = *e;
    }
    return msg;
}

static void bm_seed(swfb_state *st)
{
    const struct seed_algo *a = swfb_data(st);
    size_t size = (size_t)swfb_range(st, 0);
    size_t n = (size_t)swfb_range(st, 1);
    struct blist *l = blist_get(n, shuffled);
    if (l == NULL) {
        swfb_skip_with_error(st, "cannot build the list (out of memory)");
        return;
    }
    bool batch = a->algo == SWF_BATCH_RESTART;
    struct estimate est;
    bool probed = false;
    if (batch && max_seconds > 0) {
        const char *msg = estimate_for(l, size, &est);
        if (msg != NULL) {
            swfb_skip_with_error(st, msg);
            return;
        }
        probed = true;
    }
    bool estimated = probed && est.seconds > max_seconds;
    uint64_t P = n ? ceil_div(n, B) : 1;
    double formula = batch_visits(n, 1, P);

    double grow = 0, sweep = 0, inside = 0, passes = 0, visits = 0, refills = 0;
    double thp = 0, thp_fb = 0, stalls = 0, steal = 0, choice = 0, huge = 0;
    int64_t iters = 0;
    while (swfb_keep_running(st)) {
        if (estimated) {
            swfb_set_iteration_time(st, est.seconds);
            iters++;
            continue;
        }
        struct sweep_result r;
        memset(&r, 0, sizeof(r));
        const char *msg = sweep_once(l, size, a->algo, &r);
        if (msg != NULL) {
            swfb_skip_with_error(st, msg);
            return;
        }
        swfb_set_iteration_time(st, r.grow_s + r.sweep_s);
        grow += r.grow_s;
        sweep += r.sweep_s;
        inside += r.sections_s;
        passes += (double)r.st.passes;
        visits += (double)r.st.visits;
        refills += (double)r.st.refills;
        thp += r.vm.thp_fault_alloc;
        thp_fb += r.vm.thp_fault_fallback;
        stalls += r.vm.compact_stall;
        steal += r.vm.steal_s;
        choice = r.huge_choice;
        huge += r.huge_fraction;
        iters++;
    }
    if (iters == 0)
        return;
    if (estimated) {
        grow = est.grow_s, sweep = est.sweep_s, inside = est.sections_s;
        passes = (double)P, visits = formula, refills = (double)P - 1;
    } else {
        double k = (double)iters;
        grow /= k, sweep /= k, inside /= k, passes /= k, visits /= k, refills /= k;
        thp /= k, thp_fb /= k, stalls /= k, steal /= k, huge /= k;
        swfb_counter_set(st, "thp_fault_alloc", thp, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "thp_fault_fallback", thp_fb, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "compact_stall", stalls, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "steal_s", steal, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "huge_choice", choice, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "huge_fraction", huge, SWFB_COUNTER_PLAIN);
    }
    swfb_counter_set(st, "seconds", grow + sweep, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "grow_s", grow, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "sweep_s", sweep, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "sections_s", inside, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "passes", passes, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "visits", visits, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "refills", refills, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "ns_per_member", n ? (grow + sweep) * 1e9 / (double)n : 0,
                     SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "estimated", estimated ? 1 : 0, SWFB_COUNTER_PLAIN);
    if (batch)
        swfb_counter_set(st, "formula_visits", formula, SWFB_COUNTER_PLAIN);
    if (probed) {
        swfb_counter_set(st, "estimate_s", est.seconds, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "probe_s", est.probe_s, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "probe_passes", (double)est.probe_passes, SWFB_COUNTER_PLAIN);
    }
    char label[200];
    if (estimated)
        snprintf(label, sizeof(label),
                 "ESTIMATED (> --max-seconds=%g): %d probe groups, %llu passes measured; "
                 "passes and visits from the formula",
                 max_seconds, est.groups, (unsigned long long)est.probe_passes);
    else
        snprintf(label, sizeof(label), "%s", shuffled ? "shuffled" : "in order");
    swfb_set_label(st, label);
}

/* ---- main ---------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    int64_t ns[MAX_ARGS] = {100000, 200000, 400000}, sizes[MAX_ARGS] = {4096, 64};
    int nn = 3, nsizes = 2;
    if (bench_take_flag(&argc, argv, "quick") != NULL) {
        ns[0] = 10000, ns[1] = 100000, nn = 2;
        sizes[0] = 64, nsizes = 1;
        probe_visits = 5e5;
    }
    if (bench_take_list_flag(&argc, argv, "bench_seed", "n", ns, MAX_ARGS, &nn) != 0 ||
        bench_take_list_flag(&argc, argv, "bench_seed", "sizes", sizes, MAX_ARGS, &nsizes) != 0)
        return 1;
    const char *v;
    if ((v = bench_take_flag(&argc, argv, "max-seconds")) != NULL) {
        char *end;
        max_seconds = strtod(v, &end);
        if (end == v || *end != '\0' || !(max_seconds >= 0)) {
            fprintf(stderr, "bench_seed: --max-seconds=%s: expected seconds (0: no bound)\n", v);
            return 1;
        }
    }
    if ((v = bench_take_flag(&argc, argv, "probe-visits")) != NULL) {
        int64_t pv;
        if (bench_parse_list(v, &pv, 1) != 1) {
            fprintf(stderr, "bench_seed: --probe-visits=%s: expected a number\n", v);
            return 1;
        }
        probe_visits = (double)pv;
    }
    if (bench_take_flag(&argc, argv, "in-order") != NULL)
        shuffled = false;
    if ((v = bench_take_flag(&argc, argv, "batch-reps")) != NULL) {
        int64_t r;
        if (bench_parse_list(v, &r, 1) != 1 || r < 1) {
            fprintf(stderr, "bench_seed: --batch-reps=%s: expected a count >= 1\n", v);
            return 1;
        }
        batch_reps = (int)r;
    }
    bench_host_state = BENCH_HOST_WARM; /* unless --host-memory says otherwise */
    if (bench_host_take_flags(&argc, argv, "bench_seed") != 0)
        return 1;
    if (ready_take_flags(&argc, argv) != 0)
        return 1;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] < (int64_t)sizeof(struct bobj)) {
            fprintf(stderr, "bench_seed: object size %lld is below %zu bytes\n",
                    (long long)sizes[i], sizeof(struct bobj));
            return 1;
        }

    char buf[64];
    swfb_add_context("order", shuffled ? "shuffled" : "in order");
    swfb_add_context("list", "CK_LIST of 128-byte members, SWF_LIST_CK_LIST_PINNED, no-op pins");
    swfb_add_context("guard", "ck_epoch (swf_guard_epoch), timed");
    swfb_add_context("host_memory", bench_host_state_name(bench_host_state));
    snprintf(buf, sizeof(buf), "%g", bench_host_cold_sleep_s);
    swfb_add_context("cold_sleep_s", bench_host_state == BENCH_HOST_COLD ? buf : "none");
    snprintf(buf, sizeof(buf), "%d", B);
    swfb_add_context("reserve", buf);
    snprintf(buf, sizeof(buf), "%g", max_seconds);
    swfb_add_context("max_seconds", buf);

    floor_register(sizes, nsizes, ns, nn, shuffled);
    ready_register(sizes, nsizes, ns, nn);
    for (size_t i = 0; i < sizeof(seed_algos) / sizeof(seed_algos[0]); i++) {
        swfb_bench *b = swfb_register_data(seed_algos[i].name, bm_seed, (void *)&seed_algos[i]);
        bench_args_size_n(b, sizes, nsizes, ns, nn);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_MS);
        if (seed_algos[i].algo == SWF_BATCH_RESTART) {
            /* One sweep per repetition, --batch-reps of them whatever --benchmark_repetitions
             * says: it may take minutes. Estimated, it reports its one estimate each time. */
            swfb_bench_iterations(b, 1);
            swfb_bench_repetitions(b, batch_reps);
        } else if (bench_host_state == BENCH_HOST_COLD) {
            swfb_bench_iterations(b, 1); /* each measurement after its own cold preparation */
        }
    }
    int rc = swfb_main(argc, argv);
    ready_report(stdout);
    return rc;
}
