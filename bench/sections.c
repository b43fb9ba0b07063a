/*
 * bench/sections.c - the `sections` family: what bounding the read-side sections of an
 * activation buys and costs, on the registry (registry.h).
 *
 *   sections/activate/bound:K/n:N   swf_registry_activate on a registry of N members whose
 *                                   activation sweep leaves and re-enters its read-side section
 *                                   every K visits (K = 0: one unbounded section), while another
 *                                   thread waits for grace periods (below)
 *   sections/alone/bound:K/n:N      the same activation with no other thread: what bounding
 *                                   costs the sweep by itself
 *
 * K = 0, 64, 1024; N = 1,000,000 (--quick: 100,000). Members are 128-byte structs embedding a
 * struct swf_node, added in a shuffled order (each add links at the head); 64-byte objects from a
 * cache grown beforehand, so the sweep never waits for memory. While activate runs on the
 * benchmark thread, a second thread calls swf_registry_synchronize() repeatedly - each call waits
 * for a grace period, which cannot end while the sweep sits in a section - and records how long
 * each call took. Each iteration: start the synchronizer, activate (manual time), stop it, then,
 * untimed, deactivate (objects unpublished and freed after a grace period). The synchronizer
 * sleeps 100 us between calls, as a grace-period thread would, so that it takes a CPU only while
 * it waits: on 2 cores shared with other work a back-to-back loop would mostly measure the two
 * threads competing for a core.
 *
 * Counters: seconds (activate), ns_per_member, preemptions (involuntary context switches of the
 * activating thread during activate: a user-space read-side section can be preempted, and a
 * grace period then waits for the preempted thread whatever the section bound), max_gp_wait_s
 * (the longest synchronize call that overlapped an activation, over all iterations, wall
 * clock), max_gp_wait_cpu_s (the same call's wait in the synchronizer's own CPU time: ck_epoch's
 * wait spins, so this leaves out the time the synchronizer itself was not running),
 * mean_gp_wait_s and grace_periods (synchronize calls completed per activation; most of them
 * complete in the moments after the sweep's last section, so their count and mean say little),
 * sections, longest_section (the registry's stat: most visits in one section) and
 * cursor_restarts.
 *
 * Own flags: --n=1M (members), --quick (n=100k), --hog=N: N threads spinning at nice 0 in this
 * process for the whole of each run (hog.h), so the activation, the synchronizer and the hogs
 * compete for the cores: the "before" of a grace-period wait that sleeps instead of spinning.
 * Counter hog_threads says how many ran; the label ends in ", beside N hogs".
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <sweepfill/cache.h>
#include <sweepfill/registry.h>

#include "hog.h"
#include "lists.h"
#include "shim/swfb.h"

enum { OBJ_SIZE = 64, MAX_ARGS = 8 };

static int hog_threads; /* --hog=N */

struct smember {
    struct swf_node node;
    uint64_t id;
    char pad[128 - sizeof(struct swf_node) - sizeof(uint64_t)];
};
_Static_assert(sizeof(struct smember) == 128, "a member is 128 bytes");

struct syncer {
    struct swf_registry *r;
    int stop;            /* set by the benchmark thread */
    uint64_t max_ns;     /* longest synchronize call, wall clock */
    uint64_t max_cpu_ns; /* the longest in the thread's own CPU time */
    uint64_t total_ns;   /* all calls together */
    uint64_t calls;      /* calls completed */
    pthread_t thread;
};

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *syncer_main(void *arg)
{
    struct syncer *s = arg;
    const struct timespec pause = {0, 100000}; /* 100 us between grace periods */
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = bench_now_ns(), c0 = thread_cpu_ns();
        swf_registry_synchronize(s->r);
        uint64_t t = bench_now_ns() - t0, c = thread_cpu_ns() - c0;
        if (t > s->max_ns)
            s->max_ns = t;
        if (c > s->max_cpu_ns)
            s->max_cpu_ns = c;
        s->total_ns += t;
        s->calls++;
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* Involuntary context switches of the calling thread so far: preemptions. */
static long preemptions(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_nivcsw : 0;
}

static void object_init(void *obj, void *member, void *arg)
{
    bobj_init(obj, member, arg);
}

/* splitmix64, for the add order. */
static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void bm_activate(swfb_state *st)
{
    bool with_syncer = swfb_data(st) != NULL;
    size_t bound = (size_t)swfb_range(st, 0), n = (size_t)swfb_range(st, 1);
    struct smember *m = aligned_alloc(64, (n ? n : 1) * sizeof(*m));
    size_t *order = malloc((n ? n : 1) * sizeof(size_t));
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "sections"};
    struct swf_cache *c = NULL;
    struct swf_registry *r = NULL;
    const char *msg = NULL;
    if (m == NULL || order == NULL || swf_cache_create(&cc, &c) != 0) {
        free(m);
        free(order);
        swfb_skip_with_error(st, "out of memory");
        return;
    }
    memset(m, 0, (n ? n : 1) * sizeof(*m));
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = c;
    rc.init = object_init;
    rc.section_bound = bound;
    if (swf_cache_grow(c, n + 2 * SWF_SWEEP_RESERVE_DEFAULT) != 0 ||
        swf_registry_create(&rc, &r) != 0) {
        msg = "cannot create the registry";
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t seed = 0x53454354ull ^ n;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(mix(&seed) % i), t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++) {
        m[order[i]].id = order[i];
        if (swf_registry_add(r, &m[order[i]].node) != 0) {
            msg = "swf_registry_add failed";
            goto out;
        }
    }

    double total = 0, calls = 0, waited = 0, preempted = 0;
    uint64_t max_wait = 0, max_cpu = 0;
    int64_t iters = 0;
    struct swf_sweep_stats s;
    memset(&s, 0, sizeof(s));
    int hogs = hog_start(hog_threads);
    while (swfb_keep_running(st)) {
        struct syncer sy = {.r = r};
        if (with_syncer && pthread_create(&sy.thread, NULL, syncer_main, &sy) != 0) {
            msg = "pthread_create failed";
            break;
        }
        long p0 = preemptions();
        uint64_t t0 = bench_now_ns();
        int err = swf_registry_activate(r, &s);
        uint64_t t1 = bench_now_ns();
        preempted += (double)(preemptions() - p0);
        if (with_syncer) {
            __atomic_store_n(&sy.stop, 1, __ATOMIC_RELEASE);
            pthread_join(sy.thread, NULL);
        }
        if (err != 0) {
            msg = "swf_registry_activate failed";
            break;
        }
        if (swf_registry_deactivate(r) != 0) {
            msg = "swf_registry_deactivate failed";
            break;
        }
        double secs = (double)(t1 - t0) * 1e-9;
        swfb_set_iteration_time(st, secs);
        total += secs;
        calls += (double)sy.calls;
        waited += (double)sy.total_ns * 1e-9;
        if (sy.max_ns > max_wait)
            max_wait = sy.max_ns;
        if (sy.max_cpu_ns > max_cpu)
            max_cpu = sy.max_cpu_ns;
        iters++;
    }
    hog_stop();
    if (msg == NULL && hogs < hog_threads)
        msg = "could not start the hog threads";
    if (msg == NULL && iters > 0) {
        struct swf_registry_stats rs;
        swf_registry_stats(r, &rs);
        double k = (double)iters;
        swfb_counter_set(st, "seconds", total / k, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "ns_per_member", n ? total / k * 1e9 / (double)n : 0,
                         SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "preemptions", preempted / k, SWFB_COUNTER_PLAIN);
        if (with_syncer) {
            swfb_counter_set(st, "max_gp_wait_s", (double)max_wait * 1e-9, SWFB_COUNTER_PLAIN);
            swfb_counter_set(st, "max_gp_wait_cpu_s", (double)max_cpu * 1e-9, SWFB_COUNTER_PLAIN);
            swfb_counter_set(st, "mean_gp_wait_s", calls > 0 ? waited / calls : 0,
                             SWFB_COUNTER_PLAIN);
            swfb_counter_set(st, "grace_periods", calls / k, SWFB_COUNTER_PLAIN);
        }
        swfb_counter_set(st, "sections", (double)s.sections, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "longest_section", (double)rs.longest_section, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "cursor_restarts", (double)rs.cursor_restarts, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "hog_threads", hogs, SWFB_COUNTER_PLAIN);
        char label[64];
        snprintf(label, sizeof(label), "%s", bound ? "bounded sections" : "one unbounded section");
        if (hogs)
            snprintf(label + strlen(label), sizeof(label) - strlen(label), ", beside %d hog%s",
                     hogs, hogs > 1 ? "s" : "");
        swfb_set_label(st, label);
    }
out:
    if (r != NULL) {
        for (size_t i = 0; i < n; i++)
            if (swf_registry_del(r, &m[i].node, NULL) != 0 && msg == NULL)
                msg = "swf_registry_del failed";
        swf_registry_synchronize(r);
        if (swf_registry_destroy(r) != 0 && msg == NULL)
            msg = "swf_registry_destroy refused";
    }
    if (swf_cache_destroy(c) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    free(m);
    free(order);
    if (msg != NULL)
        swfb_skip_with_error(st, msg);
}

int main(int argc, char **argv)
{
    int64_t ns[MAX_ARGS] = {1000000};
    int nn = 1;
    if (bench_take_flag(&argc, argv, "quick") != NULL)
        ns[0] = 100000;
    const char *v = bench_take_flag(&argc, argv, "n");
    if (v != NULL && (nn = bench_parse_list(v, ns, MAX_ARGS)) <= 0) {
        fprintf(stderr, "bench_sections: --n=%s: expected a comma-separated list of numbers\n", v);
        return 1;
    }
    if ((v = bench_take_flag(&argc, argv, "hog")) != NULL) {
        int64_t h;
        if (strcmp(v, "0") == 0)
            h = 0;
        else if (bench_parse_list(v, &h, 1) != 1 || h > HOG_MAX) {
            fprintf(stderr, "bench_sections: --hog=%s: expected a number of threads, 0 to %d\n", v,
                    HOG_MAX);
            return 1;
        }
        hog_threads = (int)h;
    }
    char hogbuf[32];
    snprintf(hogbuf, sizeof(hogbuf), "%d", hog_threads);
    swfb_add_context("hog_threads", hogbuf);
    static const int bounds[] = {0, 64, 1024};
    swfb_add_context("registry", "128-byte members with a swf_node, added in shuffled order");
    swfb_add_context("object_size", "64");
    static int syncer_on = 1;
    for (int variant = 0; variant < 2; variant++) {
        swfb_bench *b = swfb_register_data(variant ? "sections/activate" : "sections/alone",
                                           bm_activate, variant ? &syncer_on : NULL);
        swfb_bench_arg_names(b, "bound", "n");
        for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
            for (int k = 0; k < nn; k++)
                swfb_bench_args2(b, bounds[i], ns[k]);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_MS);
    }
    return swfb_main(argc, argv);
}
