/*
 * bench/families/section_bounds.c - the `section_bounds` family: what bounding the read-side
 * sections of an activation buys and costs, on the registry (registry.h).
 *
 *   section_bounds/activate/bound:K/n:N  swf_registry_activate on a registry of N members whose
 *                                        activation sweep leaves and re-enters its read-side
 *                                        section every K visits (K = 0: one unbounded section),
 *                                        while another thread waits for grace periods (below)
 *   section_bounds/alone/bound:K/n:N     the same activation with no other thread: what bounding
 *                                        costs the sweep by itself
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
 * The same question under a lock, where it matters most: a <sys/queue.h> TAILQ of N
 * members swept by RESUME with the library's pin (SWF_LIST_SYS_TAILQ_AUTO), each section holding
 * the read side of the lock, while a writer thread takes the write side every 100 us and records
 * how long it waited:
 *
 *   section_bounds/tailq_rwlock_wpref/bound:K/n:N  a writer-preferring pthread rwlock
 *                                                  (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP)
 *   section_bounds/tailq_rwlock/bound:K/n:N        glibc's default rwlock (prefers readers)
 *   section_bounds/tailq_mutex/bound:K/n:N         a mutex for readers and writers
 *                                                  (swf_guard_mutex)
 *
 * Counters: seconds (the sweep), ns_per_member, max_lock_wait_s (the writer's longest wait for
 * the lock during a sweep, the worst over the iterations), mean_lock_wait_s, writer_locks (write
 * acquisitions per sweep), sections, longest_section, preemptions.
 *
 * Own flags: --n=1M (members), --quick (n=100k), --hog=N: N threads spinning at nice 0 in this
 * process for the whole of each run (cpu_hog.h), so the activation, the synchronizer and the hogs
 * compete for the cores.
 * Counter hog_threads says how many ran; the label ends in ", beside N hogs".
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <sweepfill/cache.h>
#include <sweepfill/list_sysqueue.h>
#include <sweepfill/registry.h>

#include "cpu_hog.h"
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

static void *syncer_main(void *arg)
{
    struct syncer *s = arg;
    const struct timespec pause = {0, 100000}; /* 100 us between grace periods */
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = bench_now_ns(), c0 = bench_thread_cpu_ns();
        swf_registry_synchronize(s->r);
        uint64_t t = bench_now_ns() - t0, c = bench_thread_cpu_ns() - c0;
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
        long p0 = bench_thread_preemptions();
        uint64_t t0 = bench_now_ns();
        int err = swf_registry_activate(r, &s);
        uint64_t t1 = bench_now_ns();
        preempted += (double)(bench_thread_preemptions() - p0);
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

/* ---- a TAILQ under a lock ---------------------------------------------------------------- */

struct qmember {
    TAILQ_ENTRY(qmember) link;
    void *slot;
    uint64_t id;
    struct swf_pin pin;
    char pad[128 - 2 * sizeof(void *) - sizeof(void *) - sizeof(uint64_t) - sizeof(struct swf_pin)];
};
_Static_assert(sizeof(struct qmember) == 128, "a member is 128 bytes");
TAILQ_HEAD(qmember_q, qmember);
SWF_LIST_SYS_TAILQ_AUTO(qm, qmember_q, qmember, link, slot, pin)

enum lock_kind { LOCK_RW_WPREF, LOCK_RW_DEFAULT, LOCK_MUTEX };

struct locked {
    enum lock_kind kind;
    pthread_rwlock_t rw;
    pthread_mutex_t mu;
    int stop;
    uint64_t max_ns, total_ns, calls;
    pthread_t thread;
};

static void locked_write(struct locked *k, bool take)
{
    if (k->kind == LOCK_MUTEX)
        take ? pthread_mutex_lock(&k->mu) : pthread_mutex_unlock(&k->mu);
    else
        take ? pthread_rwlock_wrlock(&k->rw) : pthread_rwlock_unlock(&k->rw);
}

/* The writer: take the write side every 100 us, as a writer of a live list would, and time the
 * wait. */
static void *lock_writer(void *arg)
{
    struct locked *k = arg;
    const struct timespec pause = {0, 100000};
    while (!__atomic_load_n(&k->stop, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = bench_now_ns();
        locked_write(k, true);
        uint64_t t = bench_now_ns() - t0;
        locked_write(k, false);
        if (t > k->max_ns)
            k->max_ns = t;
        k->total_ns += t;
        k->calls++;
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void bm_locked(swfb_state *st)
{
    const enum lock_kind *kindp = swfb_data(st);
    size_t bound = (size_t)swfb_range(st, 0), n = (size_t)swfb_range(st, 1);
    struct qmember *m = aligned_alloc(64, (n ? n : 1) * sizeof(*m));
    size_t *order = malloc((n ? n : 1) * sizeof(size_t));
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "sections-lock"};
    struct swf_cache *c = NULL;
    if (m == NULL || order == NULL || swf_cache_create(&cc, &c) != 0) {
        free(m);
        free(order);
        swfb_skip_with_error(st, "out of memory");
        return;
    }
    memset(m, 0, (n ? n : 1) * sizeof(*m));
    struct qmember_q q = TAILQ_HEAD_INITIALIZER(q);
    bench_order(order, n, true);
    for (size_t i = 0; i < n; i++) {
        m[order[i]].id = order[i];
        TAILQ_INSERT_TAIL(&q, &m[order[i]], link);
    }
    static struct locked k;
    memset(&k, 0, sizeof(k));
    k.kind = *kindp;
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    if (k.kind == LOCK_RW_WPREF)
        pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&k.rw, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&k.mu, NULL);
    const char *msg = NULL;
    if (swf_cache_grow(c, n + 2 * SWF_SWEEP_RESERVE_DEFAULT) != 0)
        msg = "swf_cache_grow failed";

    double total = 0, waited = 0, locks = 0, preempted = 0;
    uint64_t max_wait = 0;
    int64_t iters = 0;
    struct swf_sweep_stats s;
    memset(&s, 0, sizeof(s));
    while (msg == NULL && swfb_keep_running(st)) {
        __atomic_store_n(&k.stop, 0, __ATOMIC_RELAXED);
        k.max_ns = k.total_ns = k.calls = 0;
        if (pthread_create(&k.thread, NULL, lock_writer, &k) != 0) {
            msg = "pthread_create failed";
            break;
        }
        struct swf_sweep_config cfg;
        swf_sweep_config_init(&cfg);
        cfg.list = qm_list(&q);
        cfg.cache = c;
        cfg.init = object_init;
        cfg.section_bound = bound;
        if (k.kind == LOCK_MUTEX)
            swf_guard_mutex(&cfg.guard, &k.mu);
        else
            swf_guard_rwlock(&cfg.guard, &k.rw);
        long p0 = bench_thread_preemptions();
        uint64_t t0 = bench_now_ns();
        int err = swf_sweep(&cfg, &s);
        uint64_t t1 = bench_now_ns();
        preempted += (double)(bench_thread_preemptions() - p0);
        __atomic_store_n(&k.stop, 1, __ATOMIC_RELEASE);
        pthread_join(k.thread, NULL);
        for (size_t i = 0; i < n; i++) {
            swf_cache_free(c, m[i].slot);
            m[i].slot = NULL;
        }
        if (err != 0) {
            msg = "swf_sweep failed";
            break;
        }
        double secs = (double)(t1 - t0) * 1e-9;
        swfb_set_iteration_time(st, secs);
        total += secs;
        waited += (double)k.total_ns * 1e-9;
        locks += (double)k.calls;
        if (k.max_ns > max_wait)
            max_wait = k.max_ns;
        iters++;
    }
    if (msg == NULL && iters > 0) {
        double it = (double)iters;
        swfb_counter_set(st, "seconds", total / it, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "ns_per_member", n ? total / it * 1e9 / (double)n : 0,
                         SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "max_lock_wait_s", (double)max_wait * 1e-9, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "mean_lock_wait_s", locks > 0 ? waited / locks : 0,
                         SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "writer_locks", locks / it, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "sections", (double)s.sections, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "longest_section", (double)s.longest_section, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "preemptions", preempted / it, SWFB_COUNTER_PLAIN);
        swfb_set_label(st, bound ? "bounded sections" : "one unbounded section");
    }
    pthread_rwlock_destroy(&k.rw);
    pthread_mutex_destroy(&k.mu);
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
        fprintf(stderr,
                "bench_section_bounds: --n=%s: expected a comma-separated list of numbers\n", v);
        return 1;
    }
    if ((v = bench_take_flag(&argc, argv, "hog")) != NULL) {
        int64_t h;
        if (strcmp(v, "0") == 0)
            h = 0;
        else if (bench_parse_list(v, &h, 1) != 1 || h > HOG_MAX) {
            fprintf(stderr,
                    "bench_section_bounds: --hog=%s: expected a number of threads, 0 to %d\n", v,
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
        swfb_bench *b =
            swfb_register_data(variant ? "section_bounds/activate" : "section_bounds/alone",
                               bm_activate, variant ? &syncer_on : NULL);
        swfb_bench_arg_names(b, "bound", "n");
        for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
            for (int k = 0; k < nn; k++)
                swfb_bench_args2(b, bounds[i], ns[k]);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_MS);
    }
    static const enum lock_kind lock_kinds[] = {LOCK_RW_WPREF, LOCK_RW_DEFAULT, LOCK_MUTEX};
    static const char *lock_names[] = {"section_bounds/tailq_rwlock_wpref",
                                       "section_bounds/tailq_rwlock", "section_bounds/tailq_mutex"};
    swfb_add_context("sysqueue", "a TAILQ of 128-byte members, shuffled, the library's pin");
    for (int i = 0; i < 3; i++) {
        swfb_bench *b = swfb_register_data(lock_names[i], bm_locked, (void *)&lock_kinds[i]);
        swfb_bench_arg_names(b, "bound", "n");
        for (size_t j = 0; j < sizeof(bounds) / sizeof(bounds[0]); j++)
            for (int k = 0; k < nn; k++)
                swfb_bench_args2(b, bounds[j], ns[k]);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_MS);
    }
    return swfb_main(argc, argv);
}
