/*
 * bench/families/live.c - the `live` family (bench_live): a small service that switches a feature
 * on and off while it serves. Plain C, no Google Benchmark (like footprint.c).
 *
 * The service: N members (each its own calloc), on a list and in a lookup table of N entries.
 *   - Workers (--workers, default 1: on 2 cores that leaves a core to the writer and the
 *     activator) serve requests back to back: a request picks a random table entry and, inside
 *     one read-side section, loads the member, loads its slot and, when there is an object,
 *     checks that it belongs to the member and reads it, then does a fixed amount of arithmetic
 *     (WORK_ROUNDS multiply-adds). Its latency (two CLOCK_MONOTONIC reads around it) goes into
 *     a per-thread histogram (hist.h) of the phase it ended in, and into a 10 ms window.
 *   - A writer replaces members at a fixed rate (--writer-us, default one operation every
 *     100 us): it adds a new member (linked; an object given as the variant gives one), and on
 *     the next tick puts it in place of a random table entry and deletes the old one. Each
 *     operation's latency is recorded. No variant's delete waits for a grace period on the
 *     writer: each has a deferred path (registry del, swf_pin_retire on ck_epoch, call_rcu,
 *     ck_epoch_call), so a delete is the unlink, the retire and, on ck_epoch, a poll that frees
 *     what is due.
 *   - The activator (the main thread of a child process forked per measurement, so that each
 *     activation is the first in a fresh heap, as bench_urcu_peer's are) lets the service run idle
 *     for --idle-ms, activates the feature (one object of --sizes bytes per member), lets it run
 *     on for --on-ms, checks that every linked member holds an object (the writer paused), then
 *     deactivates and checks that none does.
 *
 * Variants (the read side in brackets):
 *   registry   swf_registry (registry.h): activate / deactivate, section bound 1024 [its own
 *              ck_epoch sections]
 *   sweep64    swf_feature (feature.h) over the service's own CK_LIST (the _AUTO adapter, pins
 *   sweep1024  retired on the writer's ck_epoch record), section bound 64 or 1024, prepare =
 *              N + reserve; the writer calls swf_feature_added(SWF_NOWAIT) after each link and,
 *              on EAGAIN, swf_feature_added(SWF_WAIT) (it holds no lock, and it is the only
 *              deleter, so m cannot be released under the retry); synchronize is
 *              swf_cache_quiesce on the activator's record [swf_guard_epoch]
 *   urcu       the liburcu peer (memb flavour): a flag under the writer mutex (adds give an
 *              object before linking while it is set), then ONE read-side section over the
 *              cds_list: malloc, init, rcu_assign_pointer; deactivate takes every slot in one
 *              section, synchronize_rcu, free [rcu_read_lock]
 *   stw        naive stop-the-world: the writer mutex held while malloc fills every member
 *              [ck_epoch, swf_guard_epoch]; deactivate takes the slots under the mutex,
 *              ck_epoch_synchronize, free
 *
 * Reported per (N, size, variant), medians over --reps repetitions (the variants in a shuffled
 * order in each repetition): request latency p50/p99/p99.9/max idle and during activation,
 * requests per second in both, the writer's longest operation during activation, the
 * activation's wall and CPU time (the activating thread's) - and, to explain slow requests, per
 * phase: the workers' minor faults, involuntary switches and run-queue wait
 * (/proc/thread-self/schedstat), and each request above --slow-ns classified by what happened
 * during it (it waited on the run queue, slept, faulted, or none of these), and whether it ended
 * while the grow was running (before the first object's init) or during the sweep; likewise the
 * writer's operations above 1 ms. JSON to --json, a
 * Markdown table to stdout; bench/live_plot.py draws the windows' p99 (bench/RESULTS.md, live).
 *
 * Usage: bench_live [--smoke] [--n=100k,1M] [--sizes=64,4096] [--reps=3] [--big-reps=1]
 *                   [--variants=a,b] [--workers=1] [--idle-ms=500] [--on-ms=200]
 *                   [--writer-us=100] [--slow-ns=5000] [--pin] [--huge-pages=off] [--grow-first]
 *                   [--host-memory=warm|as-found] [--json=FILE] [--seed=S]
 *   --big-reps  repetitions of the configurations whose objects take 1 GiB or more (1M x 4 KiB)
 *   --smoke   N = 2000, 64 B, one repetition, short phases; exits 1 unless every variant
 *             served requests, made writer operations, filled every member on activation and
 *             emptied every one on deactivation (the bench suite's test)
 *   --pin     workers on CPU 0, writer and activator on CPU 1 (an experiment: see
 *             bench/RESULTS.md, live)
 *   --huge-pages=off   sweepfill's caches without transparent huge pages (an experiment)
 *   --grow-first  sweepfill's caches grown (swf_cache_grow) before the service starts, so that
 *             the activation is the sweep alone (an experiment)
 *   --host-memory=warm|cold|as-found, --cold-sleep=S
 *             warm (default): before each measurement's child is forked, the parent maps,
 *             faults in and unmaps as many bytes as its activation will take (the objects, and
 *             the 4 MiB of huge-page measurement of a process's first large grow), with the
 *             page size the variant maps with (base pages for malloc: urcu, stw; huge pages for
 *             sweepfill's caches unless --huge-pages=off), so that every variant meets memory
 *             its host backs, prepared its own way (host.h); cold: memory the host took back
 *             (S seconds of sleep, default 6, shared through a ballast); as-found: nothing
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifdef LIVE_URCU
#define _LGPL_SOURCE 1
#include <urcu.h>
#include <urcu/rculist.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <ck_queue.h>

#include <sweepfill/cache.h>
#include <sweepfill/feature.h>
#include <sweepfill/pin.h>
#include <sweepfill/registry.h>
#include <sweepfill/sweep.h>

#include "hist.h"
#include "host.h"

enum { WORK_ROUNDS = 48, MAX_WORKERS = 8, MAX_WIN = 1500, WIN_NS = 10000000, MAX_LIST = 8 };
enum { SLOW_CAP = 1 << 14, RESERVE = SWF_SWEEP_RESERVE_DEFAULT };
enum phase { PH_IDLE, PH_ACT, PH_ON, PH_DEACT, PH_OFF, NPHASE };
static const char *const phase_names[NPHASE] = {"idle", "act", "on", "deact", "off"};
enum variant { V_REGISTRY, V_SWEEP64, V_SWEEP1024, V_URCU, V_STW, NVARIANT };
static const char *const variant_names[NVARIANT] = {"registry", "sweep64", "sweep1024", "urcu",
                                                    "stw"};

/* ---- options --------------------------------------------------------------------------------- */

static struct {
    bool smoke, pin, huge_off, grow_first;
    int64_t ns[MAX_LIST], sizes[MAX_LIST];
    int nn, nsizes, reps, big_reps, workers;
    bool want[NVARIANT];
    int64_t idle_ms, on_ms, writer_us, slow_ns;
    const char *json;
    uint64_t seed;
} opt = {.ns = {100000, 1000000},
         .sizes = {64, 4096},
         .nn = 2,
         .nsizes = 2,
         .reps = 3,
         .big_reps = 1,
         .workers = 1,
         .want = {true, true, true, true, true},
         .idle_ms = 500,
         .on_ms = 200,
         .writer_us = 100,
         .slow_ns = 5000,
         .seed = 1};

/* ---- what a child reports (shared memory) ---------------------------------------------------- */

/* Why a request or a writer operation was slow, in this order: it waited on the run queue for at
 * least half of its time (schedstat); the thread slept (a voluntary switch); it took a page fault;
 * none of these - nothing the guest kernel shows (see bench/RESULTS.md, live). */
enum { SLOW_WAITED, SLOW_SLEPT, SLOW_FAULTED, SLOW_OTHER, NSLOWKIND };

struct lresult {
    int done;
    char msg[200];
    uint64_t req[NPHASE], p50[NPHASE], p99[NPHASE], p999[NPHASE], max[NPHASE];
    double phase_s[NPHASE];
    uint64_t wr_ops[NPHASE], wr_max[NPHASE], wr_p99[NPHASE];
    uint64_t wr_max_ran[NPHASE];       /* the longest that did not wait on the run queue */
    double wr_slow[NPHASE][NSLOWKIND]; /* operations above 1 ms, by cause */
    double act_wall_s, act_cpu_s, deact_wall_s, grow_s;          /* grow_s: until the first init */
    double act_faults;                                           /* the activator's minor faults */
    double w_faults[NPHASE], w_invol[NPHASE], w_wait_ms[NPHASE]; /* workers, summed */
    double slow[NPHASE][NSLOWKIND];  /* requests above --slow-ns, by cause */
    double slow_grow, slow_sweep;    /* of the act phase's: while growing, while sweeping */
    double thp_alloc, compact_stall; /* /proc/vmstat, during the activation */
    uint64_t members_on, slots_on, members_off, slots_off, bad_objects;
    uint64_t left_owed; /* sweep64/1024: swf_feature_added calls that returned EAGAIN */
    int nwin;
    double act_at_ms, act_end_ms, deact_at_ms, deact_end_ms; /* from the windows' origin */
    float win_p99[MAX_WIN];
};

/* ---- the members ----------------------------------------------------------------------------- */

struct lobj {
    void *owner;
    int64_t depth;
};

struct lmember {
    CK_LIST_ENTRY(lmember) link; /* sweep64/1024, stw */
    void *slot;                  /* every variant but the registry */
    struct swf_pin pin;          /* sweep64/1024 */
    struct swf_node node;        /* registry: its own link and slot */
    ck_epoch_entry_t entry;      /* stw's deferred free */
#ifdef LIVE_URCU
    struct cds_list_head rcu_link;
    struct rcu_head rcu;
#endif
    uint64_t id;
};

CK_LIST_HEAD(lmember_list, lmember);
SWF_LIST_CK_LIST_AUTO(llp, lmember_list, lmember, link, slot, pin)

/* ---- the state of one measurement (in the child) ------------------------------------------- */

/* A thread's counters that say why it was slow (see classify). */
struct usage {
    long faults, slept;
    uint64_t wait;
};

struct worker {
    pthread_t thread;
    int index;
    uint64_t rng;
    ck_epoch_record_t rec;
    struct swf_guard guard;
    struct hist h[NPHASE];
    struct hist *win; /* MAX_WIN windows, touched before the run */
    int cur;          /* the phase of the last request */
    double faults[NPHASE + 1], invol[NPHASE + 1], wait_ns[NPHASE + 1]; /* at each phase's start */
    int schedstat_fd;
    struct usage last; /* at the last slow request */
    struct {
        uint64_t end, lat;
        int kind, phase;
    } slow[SLOW_CAP];
    size_t nslow;
    uint64_t bad;
};

static struct {
    enum variant v;
    size_t n, size;
    struct lmember **table;
    struct swf_cache *cache;
    struct swf_registry *reg;
    struct swf_feature *feat;
    struct lmember_list head;
#ifdef LIVE_URCU
    struct cds_list_head rcu_head;
#endif
    ck_epoch_t epoch;
    ck_epoch_record_t act_rec, writer_rec;
    struct swf_grace writer_grace;
    pthread_mutex_t wlock; /* urcu, stw: the writer mutex */
    pthread_mutex_t gate;  /* held by the writer around each operation; the checks take it */
    int active;            /* urcu, stw: under wlock */
    int phase, stop;
    uint64_t origin, first_init;
    long first_init_faults;
    struct worker *w;
    struct hist wr[NPHASE];
    uint64_t wr_max_ran[NPHASE];
    double wr_slow[NPHASE][NSLOWKIND];
} S;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static long thread_faults(long *invol)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        memset(&ru, 0, sizeof(ru));
    if (invol != NULL)
        *invol = ru.ru_nivcsw;
    return ru.ru_minflt;
}

static uint64_t run_wait_ns(int fd);

static void usage_now(struct usage *u, int fd)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) != 0)
        memset(&ru, 0, sizeof(ru));
    u->faults = ru.ru_minflt + ru.ru_majflt;
    u->slept = ru.ru_nvcsw;
    u->wait = run_wait_ns(fd);
}

static int classify(const struct usage *a, const struct usage *b, uint64_t lat)
{
    if (b->wait - a->wait >= lat / 2)
        return SLOW_WAITED;
    if (b->slept != a->slept)
        return SLOW_SLEPT;
    return b->faults != a->faults ? SLOW_FAULTED : SLOW_OTHER;
}

/* The calling thread's time spent waiting on a run queue (the second field of schedstat). */
static uint64_t run_wait_ns(int fd)
{
    char buf[96];
    ssize_t k = fd < 0 ? -1 : pread(fd, buf, sizeof(buf) - 1, 0);
    if (k <= 0)
        return 0;
    buf[k] = 0;
    unsigned long long run = 0, wait = 0;
    return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? wait : 0;
}

static double vmstat(const char *key)
{
    FILE *f = fopen("/proc/vmstat", "r");
    char name[64];
    unsigned long long v;
    double out = 0;
    while (f != NULL && fscanf(f, "%63s %llu", name, &v) == 2)
        if (strcmp(name, key) == 0)
            out = (double)v;
    if (f != NULL)
        fclose(f);
    return out;
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void pin_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    (void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- objects --------------------------------------------------------------------------------- */

/* The first init of a measurement marks the end of the grow (registry, sweep*: they grow before
 * anything is initialised) and the activator's faults so far. */
static void note_first_init(void)
{
    if (__atomic_load_n(&S.first_init, __ATOMIC_RELAXED) != 0)
        return;
    uint64_t zero = 0, t = now_ns();
    if (__atomic_compare_exchange_n(&S.first_init, &zero, t, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
        S.first_init_faults = thread_faults(NULL);
}

static void obj_init(void *obj, void *member, void *arg)
{
    (void)arg;
    struct lobj *o = obj;
    note_first_init();
    o->owner = member;
    o->depth = -1;
}

static void *malloc_obj(void *member)
{
    void *o = malloc(S.size);
    if (o == NULL) {
        fprintf(stderr, "bench_live: out of memory\n");
        _exit(3);
    }
    obj_init(o, member, NULL);
    return o;
}

/* ---- requests -------------------------------------------------------------------------------- */

static uint64_t work(const struct lmember *m, const struct lobj *o, void *owner, uint64_t *bad)
{
    uint64_t h = m->id;
    if (o != NULL) {
        *bad += o->owner != owner;
        h ^= (uint64_t)o->depth;
    }
    for (int k = 0; k < WORK_ROUNDS; k++)
        h = h * 0x5851f42d4c957f2dull + (h >> 29);
    return h;
}

static uint64_t request(struct worker *w)
{
    size_t i = (size_t)(mix(&w->rng) % S.n);
    uint64_t h;
    if (S.v == V_REGISTRY) {
        struct swf_reader *rd = swf_registry_read_lock(S.reg);
        struct lmember *m = __atomic_load_n(&S.table[i], __ATOMIC_ACQUIRE);
        h = work(m, swf_node_object(&m->node), &m->node, &w->bad);
        swf_registry_read_unlock(rd);
#ifdef LIVE_URCU
    } else if (S.v == V_URCU) {
        rcu_read_lock();
        struct lmember *m = rcu_dereference(S.table[i]);
        h = work(m, rcu_dereference(m->slot), m, &w->bad);
        rcu_read_unlock();
#endif
    } else {
        w->guard.enter(w->guard.arg);
        struct lmember *m = __atomic_load_n(&S.table[i], __ATOMIC_ACQUIRE);
        h = work(m, swf_slot_load(&m->slot), m, &w->bad);
        w->guard.leave(w->guard.arg);
    }
    return h;
}

/* The worker's counters at the start of phase p (and of every phase it skipped). */
static void worker_snapshot(struct worker *w, int from, int to)
{
    long invol, faults = thread_faults(&invol);
    uint64_t wait = run_wait_ns(w->schedstat_fd);
    for (int p = from + 1; p <= to; p++) {
        w->faults[p] = (double)faults;
        w->invol[p] = (double)invol;
        w->wait_ns[p] = (double)wait;
    }
}

/* A slow request: what happened since the last look says why (most requests are fast, and a
 * fast one cannot hide a wait of the slow one's length). */
static void note_slow(struct worker *w, uint64_t end, uint64_t lat, int phase)
{
    struct usage u;
    usage_now(&u, w->schedstat_fd);
    int kind = classify(&w->last, &u, lat);
    w->last = u;
    if (w->nslow < SLOW_CAP) {
        w->slow[w->nslow].end = end;
        w->slow[w->nslow].lat = lat;
        w->slow[w->nslow].kind = kind;
        w->slow[w->nslow].phase = phase;
        w->nslow++;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    if (opt.pin)
        pin_to(0);
#ifdef LIVE_URCU
    if (S.v == V_URCU)
        rcu_register_thread();
#endif
    if (S.v == V_REGISTRY) /* register the thread's reader before the clock starts */
        swf_registry_read_unlock(swf_registry_read_lock(S.reg));
    w->schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY);
    usage_now(&w->last, w->schedstat_fd);
    w->cur = PH_IDLE;
    worker_snapshot(w, -1, PH_IDLE);
    uint64_t sink = 0;
    while (!__atomic_load_n(&S.stop, __ATOMIC_RELAXED)) {
        uint64_t t0 = now_ns();
        sink += request(w);
        uint64_t t1 = now_ns(), lat = t1 - t0;
        int ph = __atomic_load_n(&S.phase, __ATOMIC_RELAXED);
        hist_record(&w->h[ph], lat);
        uint64_t win = (t1 - S.origin) / WIN_NS;
        if (win < MAX_WIN)
            hist_record(&w->win[win], lat);
        if (lat > (uint64_t)opt.slow_ns)
            note_slow(w, t1, lat, ph);
        if (ph != w->cur) {
            worker_snapshot(w, w->cur, ph);
            w->cur = ph;
        }
    }
    worker_snapshot(w, w->cur, NPHASE);
#ifdef LIVE_URCU
    if (S.v == V_URCU)
        rcu_unregister_thread();
#endif
    if (w->schedstat_fd >= 0)
        close(w->schedstat_fd);
    return (void *)(uintptr_t)(sink & 1);
}

/* ---- the writer ------------------------------------------------------------------------------ */

static void registry_release(struct swf_node *n)
{
    free(SWF_CONTAINER_OF(n, struct lmember, node));
}

static void feature_free(struct swf_pin *pin)
{
    struct lmember *m = SWF_CONTAINER_OF(pin, struct lmember, pin);
    (void)swf_feature_release(S.feat, m);
    free(m);
}

static void stw_free(ck_epoch_entry_t *e)
{
    struct lmember *m = SWF_CONTAINER_OF(e, struct lmember, entry);
    free(__atomic_exchange_n(&m->slot, NULL, __ATOMIC_ACQ_REL));
    free(m);
}

#ifdef LIVE_URCU
static void urcu_free(struct rcu_head *h)
{
    struct lmember *m = SWF_CONTAINER_OF(h, struct lmember, rcu);
    free(__atomic_exchange_n(&m->slot, NULL, __ATOMIC_ACQ_REL));
    free(m);
}
#endif

/* Link m, with an object where the variant gives one now. */
static void member_add(struct lmember *m)
{
    switch (S.v) {
    case V_REGISTRY:
        if (swf_registry_add(S.reg, &m->node) != 0) {
            fprintf(stderr, "bench_live: swf_registry_add failed\n");
            _exit(3);
        }
        break;
    case V_SWEEP64:
    case V_SWEEP1024:
        CK_LIST_INSERT_HEAD(&S.head, m, link);
        if (swf_feature_added(S.feat, m, SWF_NOWAIT) == EAGAIN &&
            swf_feature_added(S.feat, m, SWF_WAIT) != 0) {
            fprintf(stderr, "bench_live: swf_feature_added(SWF_WAIT) failed\n");
            _exit(3);
        }
        break;
#ifdef LIVE_URCU
    case V_URCU:
        pthread_mutex_lock(&S.wlock);
        if (S.active)
            m->slot = malloc_obj(m); /* before the link publishes m */
        cds_list_add_rcu(&m->rcu_link, &S.rcu_head);
        pthread_mutex_unlock(&S.wlock);
        break;
#endif
    default:
        pthread_mutex_lock(&S.wlock);
        if (S.active)
            m->slot = malloc_obj(m);
        CK_LIST_INSERT_HEAD(&S.head, m, link);
        pthread_mutex_unlock(&S.wlock);
        break;
    }
}

static void member_del(struct lmember *m)
{
    switch (S.v) {
    case V_REGISTRY:
        (void)swf_registry_del(S.reg, &m->node, registry_release);
        break;
    case V_SWEEP64:
    case V_SWEEP1024:
        CK_LIST_REMOVE(m, link);
        (void)swf_pin_retire(&m->pin, &S.writer_grace, feature_free);
        ck_epoch_poll(&S.writer_rec);
        break;
#ifdef LIVE_URCU
    case V_URCU:
        pthread_mutex_lock(&S.wlock);
        cds_list_del_rcu(&m->rcu_link);
        pthread_mutex_unlock(&S.wlock);
        call_rcu(&m->rcu, urcu_free);
        break;
#endif
    default:
        pthread_mutex_lock(&S.wlock);
        CK_LIST_REMOVE(m, link);
        pthread_mutex_unlock(&S.wlock);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the unlink before the epoch is read */
        ck_epoch_call(&S.writer_rec, &m->entry, stw_free);
        ck_epoch_poll(&S.writer_rec);
        break;
    }
}

static uint64_t next_id;

static struct lmember *member_new(void)
{
    struct lmember *m = malloc(sizeof(*m));
    if (m != NULL)
        memset(m, 0, sizeof(*m)); /* touched here: no first-touch fault in a timed operation */
    if (m == NULL) {
        fprintf(stderr, "bench_live: out of memory\n");
        _exit(3);
    }
    m->id = next_id++;
    return m;
}

static void *writer_main(void *arg)
{
    (void)arg;
    if (opt.pin)
        pin_to(1);
#ifdef LIVE_URCU
    if (S.v == V_URCU)
        rcu_register_thread();
#endif
    uint64_t rng = opt.seed ^ 0x77726974ull, period = (uint64_t)opt.writer_us * 1000;
    uint64_t next = now_ns();
    struct lmember *pending = NULL;
    int fd = open("/proc/thread-self/schedstat", O_RDONLY);
    while (!__atomic_load_n(&S.stop, __ATOMIC_RELAXED)) {
        next += period;
        uint64_t t = now_ns();
        if (next < t)
            next = t; /* behind: no burst to catch up */
        struct timespec ts = {(time_t)(next / 1000000000u), (long)(next % 1000000000u)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        struct lmember *fresh = pending == NULL ? member_new() : NULL; /* untimed: our memory */
        pthread_mutex_lock(&S.gate);
        struct usage u0, u1;
        usage_now(&u0, fd);
        /* the phase the operation began in: one held up by stw's fill ends after it */
        int ph = __atomic_load_n(&S.phase, __ATOMIC_RELAXED);
        uint64_t t0 = now_ns();
        if (fresh != NULL) {
            member_add(fresh);
            pending = fresh;
        } else {
            size_t i = (size_t)(mix(&rng) % S.n);
            struct lmember *old = S.table[i];
            __atomic_store_n(&S.table[i], pending, __ATOMIC_RELEASE);
            pending = NULL;
            member_del(old);
        }
        uint64_t t1 = now_ns();
        pthread_mutex_unlock(&S.gate);
        hist_record(&S.wr[ph], t1 - t0);
        int kind = SLOW_OTHER;
        if (t1 - t0 > 1000000) { /* an operation above 1 ms: why? */
            usage_now(&u1, fd);
            kind = classify(&u0, &u1, t1 - t0);
            S.wr_slow[ph][kind]++;
        }
        if (kind != SLOW_WAITED && t1 - t0 > S.wr_max_ran[ph])
            S.wr_max_ran[ph] = t1 - t0;
    }
    if (fd >= 0)
        close(fd);
#ifdef LIVE_URCU
    if (S.v == V_URCU)
        rcu_unregister_thread();
#endif
    return NULL;
}

/* ---- activation and deactivation ------------------------------------------------------------- */

static void quiesce(void *arg)
{
    (void)arg;
    (void)swf_cache_quiesce(S.cache, &S.act_rec);
}

static int activate(void)
{
    switch (S.v) {
    case V_REGISTRY:
        return swf_registry_activate(S.reg, NULL);
    case V_SWEEP64:
    case V_SWEEP1024:
        return swf_feature_activate(S.feat, NULL);
#ifdef LIVE_URCU
    case V_URCU: {
        pthread_mutex_lock(&S.wlock);
        S.active = 1;
        pthread_mutex_unlock(&S.wlock);
        struct lmember *m;
        rcu_read_lock();
        cds_list_for_each_entry_rcu(m, &S.rcu_head, rcu_link)
        {
            if (rcu_dereference(m->slot) == NULL)
                rcu_assign_pointer(m->slot, malloc_obj(m));
        }
        rcu_read_unlock();
        return 0;
    }
#endif
    default: {
        pthread_mutex_lock(&S.wlock);
        S.active = 1;
        struct lmember *m;
        CK_LIST_FOREACH(m, &S.head, link)
        {
            if (m->slot == NULL)
                __atomic_store_n(&m->slot, malloc_obj(m), __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&S.wlock);
        return 0;
    }
    }
}

/* urcu and stw: free what was taken, after a grace period. */
struct taken {
    void **p;
    size_t n, cap;
};

static void take(struct taken *t, struct lmember *m)
{
    void *o = __atomic_exchange_n(&m->slot, NULL, __ATOMIC_ACQ_REL);
    if (o == NULL)
        return;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 4096;
        t->p = realloc(t->p, t->cap * sizeof(void *));
        if (t->p == NULL)
            _exit(3);
    }
    t->p[t->n++] = o;
}

static int deactivate(void)
{
    struct taken t = {NULL, 0, 0};
    struct lmember *m;
    switch (S.v) {
    case V_REGISTRY:
        return swf_registry_deactivate(S.reg);
    case V_SWEEP64:
    case V_SWEEP1024:
        return swf_feature_deactivate(S.feat);
#ifdef LIVE_URCU
    case V_URCU:
        pthread_mutex_lock(&S.wlock);
        S.active = 0;
        pthread_mutex_unlock(&S.wlock);
        rcu_read_lock();
        cds_list_for_each_entry_rcu(m, &S.rcu_head, rcu_link) take(&t, m);
        rcu_read_unlock();
        synchronize_rcu();
        break;
#endif
    default:
        pthread_mutex_lock(&S.wlock);
        S.active = 0;
        CK_LIST_FOREACH(m, &S.head, link) take(&t, m);
        pthread_mutex_unlock(&S.wlock);
        ck_epoch_synchronize(&S.act_rec);
        break;
    }
    for (size_t i = 0; i < t.n; i++)
        free(t.p[i]);
    free(t.p);
    return 0;
}

/* With the writer held at the gate: linked members, and those holding an object. */
static void count_slots(uint64_t *members, uint64_t *slots)
{
    *members = *slots = 0;
    pthread_mutex_lock(&S.gate);
    if (S.v == V_REGISTRY) {
        struct swf_reader *rd = swf_registry_read_lock(S.reg);
        struct swf_node *n;
        SWF_REGISTRY_FOREACH(S.reg, n)
        {
            ++*members;
            *slots += swf_node_object(n) != NULL;
        }
        swf_registry_read_unlock(rd);
#ifdef LIVE_URCU
    } else if (S.v == V_URCU) {
        struct lmember *m;
        rcu_read_lock();
        cds_list_for_each_entry_rcu(m, &S.rcu_head, rcu_link)
        {
            ++*members;
            *slots += rcu_dereference(m->slot) != NULL;
        }
        rcu_read_unlock();
#endif
    } else {
        struct lmember *m;
        ck_epoch_begin(&S.act_rec, NULL);
        CK_LIST_FOREACH(m, &S.head, link)
        {
            ++*members;
            *slots += swf_slot_load(&m->slot) != NULL;
        }
        ck_epoch_end(&S.act_rec, NULL);
    }
    pthread_mutex_unlock(&S.gate);
}

/* ---- one measurement, in a child process ----------------------------------------------------- */

static void sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static const char *setup(void)
{
    ck_epoch_init(&S.epoch);
    ck_epoch_register(&S.epoch, &S.act_rec, NULL);
    ck_epoch_register(&S.epoch, &S.writer_rec, NULL);
    swf_grace_epoch(&S.writer_grace, &S.writer_rec);
    pthread_mutex_init(&S.wlock, NULL);
    pthread_mutex_init(&S.gate, NULL);
    CK_LIST_INIT(&S.head);
#ifdef LIVE_URCU
    CDS_INIT_LIST_HEAD(&S.rcu_head);
    if (S.v == V_URCU)
        rcu_register_thread();
#endif
    if (S.v <= V_SWEEP1024) {
        struct swf_cache_config cc = {.object_size = S.size, .name = "live"};
        if (opt.huge_off)
            cc.huge_pages = SWF_HUGE_PAGES_OFF;
        if (swf_cache_create(&cc, &S.cache) != 0)
            return "swf_cache_create failed";
    }
    if (S.v == V_REGISTRY) {
        struct swf_registry_config rc;
        swf_registry_config_init(&rc);
        rc.cache = S.cache;
        rc.init = obj_init;
        if (swf_registry_create(&rc, &S.reg) != 0)
            return "swf_registry_create failed";
    } else if (S.v == V_SWEEP64 || S.v == V_SWEEP1024) {
        struct swf_feature_config fc;
        swf_feature_config_init(&fc);
        fc.sweep.list = llp_list(&S.head);
        fc.sweep.cache = S.cache;
        fc.sweep.init = obj_init;
        fc.sweep.reserve = RESERVE;
        fc.sweep.section_bound = S.v == V_SWEEP64 ? 64 : 1024;
        swf_guard_epoch(&fc.sweep.guard, &S.act_rec);
        fc.synchronize = quiesce;
        fc.prepare = S.n + RESERVE;
        if (swf_feature_create(&fc, &S.feat) != 0)
            return "swf_feature_create failed";
    }
    S.table = calloc(S.n, sizeof(*S.table));
    if (S.table == NULL)
        return "out of memory";
    for (size_t i = 0; i < S.n; i++) {
        S.table[i] = member_new();
        member_add(S.table[i]);
    }
    return NULL;
}

/* The smoke test checks that the idle phase served requests and writer operations; on a loaded
 * machine --idle-ms may pass before the threads ran at all. Wait on (30 s at most) until each
 * worker and the writer did at least one. */
static void idle_until_served(void)
{
    for (int waited_ms = 0; waited_ms < 30000; waited_ms += 10) {
        bool served = __atomic_load_n(&S.wr[PH_IDLE].count, __ATOMIC_RELAXED) > 0;
        for (int k = 0; k < opt.workers; k++)
            served = served && __atomic_load_n(&S.w[k].h[PH_IDLE].count, __ATOMIC_RELAXED) > 0;
        if (served)
            return;
        sleep_ms(10);
    }
}

static void summarise(struct lresult *r, uint64_t t_phase[NPHASE + 1])
{
    struct hist *all = calloc(1, sizeof(*all));
    for (int p = 0; p < NPHASE; p++) {
        hist_clear(all);
        for (int k = 0; k < opt.workers; k++)
            hist_merge(all, &S.w[k].h[p]);
        r->req[p] = all->count;
        r->p50[p] = hist_percentile(all, 50);
        r->p99[p] = hist_percentile(all, 99);
        r->p999[p] = hist_percentile(all, 99.9);
        r->max[p] = all->max;
        r->phase_s[p] = (double)(t_phase[p + 1] - t_phase[p]) / 1e9;
        r->wr_ops[p] = S.wr[p].count;
        r->wr_max[p] = S.wr[p].max;
        r->wr_p99[p] = hist_percentile(&S.wr[p], 99);
        r->wr_max_ran[p] = S.wr_max_ran[p];
        memcpy(r->wr_slow[p], S.wr_slow[p], sizeof(r->wr_slow[p]));
        for (int k = 0; k < opt.workers; k++) {
            struct worker *w = &S.w[k];
            r->w_faults[p] += w->faults[p + 1] - w->faults[p];
            r->w_invol[p] += w->invol[p + 1] - w->invol[p];
            r->w_wait_ms[p] += (w->wait_ns[p + 1] - w->wait_ns[p]) / 1e6;
        }
    }
    for (int k = 0; k < opt.workers; k++) {
        struct worker *w = &S.w[k];
        r->bad_objects += w->bad;
        for (size_t j = 0; j < w->nslow; j++) {
            r->slow[w->slow[j].phase][w->slow[j].kind]++;
            if (w->slow[j].phase == PH_ACT) {
                if (S.first_init == 0 || w->slow[j].end <= S.first_init)
                    r->slow_grow++;
                else
                    r->slow_sweep++;
            }
        }
    }
    int last = 0;
    for (int i = 0; i < MAX_WIN; i++) {
        hist_clear(all);
        for (int k = 0; k < opt.workers; k++)
            hist_merge(all, &S.w[k].win[i]);
        r->win_p99[i] = (float)hist_percentile(all, 99);
        if (all->count > 0)
            last = i + 1;
    }
    r->nwin = last;
    free(all);
}

static void child_run(struct lresult *r)
{
    const char *err = setup();
    if (err != NULL) {
        snprintf(r->msg, sizeof(r->msg), "%s", err);
        return;
    }
    if (opt.pin)
        pin_to(1);
    /* --grow-first: the objects made ready before the service starts, so that the activation
     * is the sweep alone (activate's own grow then finds them ready). */
    if (opt.grow_first && S.cache != NULL && swf_cache_grow(S.cache, S.n + RESERVE) != 0) {
        snprintf(r->msg, sizeof(r->msg), "swf_cache_grow failed");
        return;
    }
    S.w = calloc((size_t)opt.workers, sizeof(*S.w));
    for (int k = 0; k < opt.workers; k++) {
        struct worker *w = &S.w[k];
        w->index = k;
        w->rng = opt.seed * 0x9e3779b97f4a7c15ull + (uint64_t)k;
        w->win = calloc(MAX_WIN, sizeof(struct hist));
        if (w->win == NULL) {
            snprintf(r->msg, sizeof(r->msg), "out of memory");
            return;
        }
        memset(w->win, 0, MAX_WIN * sizeof(struct hist)); /* no first-touch fault in a request */
        ck_epoch_register(&S.epoch, &w->rec, NULL);
        swf_guard_epoch(&w->guard, &w->rec);
    }
    uint64_t t_phase[NPHASE + 1];
    S.origin = now_ns();
    t_phase[PH_IDLE] = S.origin;
    pthread_t writer;
    pthread_create(&writer, NULL, writer_main, NULL);
    for (int k = 0; k < opt.workers; k++)
        pthread_create(&S.w[k].thread, NULL, worker_main, &S.w[k]);
    sleep_ms(opt.idle_ms);
    if (opt.smoke)
        idle_until_served();

    double thp0 = vmstat("thp_fault_alloc"), cs0 = vmstat("compact_stall");
    long f0 = thread_faults(NULL);
    uint64_t cpu0 = thread_cpu_ns();
    t_phase[PH_ACT] = now_ns();
    __atomic_store_n(&S.phase, PH_ACT, __ATOMIC_RELAXED);
    int rc = activate();
    t_phase[PH_ON] = now_ns();
    __atomic_store_n(&S.phase, PH_ON, __ATOMIC_RELAXED);
    r->act_cpu_s = (double)(thread_cpu_ns() - cpu0) / 1e9;
    r->act_faults = (double)(thread_faults(NULL) - f0);
    r->thp_alloc = vmstat("thp_fault_alloc") - thp0;
    r->compact_stall = vmstat("compact_stall") - cs0;
    r->act_wall_s = (double)(t_phase[PH_ON] - t_phase[PH_ACT]) / 1e9;
    r->grow_s = S.first_init ? (double)(S.first_init - t_phase[PH_ACT]) / 1e9 : 0;
    if (rc != 0)
        snprintf(r->msg, sizeof(r->msg), "activate returned %d", rc);
    sleep_ms(opt.on_ms);
    count_slots(&r->members_on, &r->slots_on);

    t_phase[PH_DEACT] = now_ns();
    __atomic_store_n(&S.phase, PH_DEACT, __ATOMIC_RELAXED);
    rc = deactivate();
    t_phase[PH_OFF] = now_ns();
    __atomic_store_n(&S.phase, PH_OFF, __ATOMIC_RELAXED);
    r->deact_wall_s = (double)(t_phase[PH_OFF] - t_phase[PH_DEACT]) / 1e9;
    if (rc != 0 && r->msg[0] == 0)
        snprintf(r->msg, sizeof(r->msg), "deactivate returned %d", rc);
    count_slots(&r->members_off, &r->slots_off);
    struct swf_feature_stats fs;
    if (S.feat != NULL && swf_feature_stats(S.feat, &fs) == 0)
        r->left_owed = fs.left_owed;
    sleep_ms(opt.on_ms / 2);
    __atomic_store_n(&S.stop, 1, __ATOMIC_RELAXED);
    t_phase[NPHASE] = now_ns();
    for (int k = 0; k < opt.workers; k++)
        pthread_join(S.w[k].thread, NULL);
    pthread_join(writer, NULL);
    r->act_at_ms = (double)(t_phase[PH_ACT] - S.origin) / 1e6;
    r->act_end_ms = (double)(t_phase[PH_ON] - S.origin) / 1e6;
    r->deact_at_ms = (double)(t_phase[PH_DEACT] - S.origin) / 1e6;
    r->deact_end_ms = (double)(t_phase[PH_OFF] - S.origin) / 1e6;
    summarise(r, t_phase);
    r->done = 1;
}

/* Fork, run one measurement, copy its result. Returns 0, or -1 with r->msg set. */
static int measure(enum variant v, size_t n, size_t size, struct lresult *r, struct lresult *shared)
{
    bench_host_prepare_objects(
        n, size, v == V_URCU || v == V_STW || opt.huge_off ? BENCH_PAGES_BASE : BENCH_PAGES_HUGE);
    memset(shared, 0, sizeof(*shared));
    fflush(stdout);
    if (!opt.smoke)
        sleep_ms(
            300); /* what the previous child's exit left to the kernel, out of the idle phase */
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(r->msg, sizeof(r->msg), "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        S.v = v;
        S.n = n;
        S.size = size;
        child_run(shared);
        _exit(0); /* nothing freed: the process goes */
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    *r = *shared;
    if (!r->done || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (r->msg[0] == 0)
            snprintf(r->msg, sizeof(r->msg), "the child failed (status 0x%x)", status);
        return -1;
    }
    return r->msg[0] ? -1 : 0;
}

/* ---- the parent: options, repetitions, medians, the table and the JSON ---------------------- */

static int parse_list(const char *s, int64_t *out, int max)
{
    int k = 0;
    while (*s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || v <= 0 || k == max)
            return -1;
        if (*end == 'k')
            v *= 1000, end++;
        else if (*end == 'M')
            v *= 1000000, end++;
        out[k++] = v;
        if (*end == ',')
            end++;
        else if (*end != 0)
            return -1;
        s = end;
    }
    return k;
}

static const char *flag(const char *arg, const char *name)
{
    size_t k = strlen(name);
    return strncmp(arg, name, k) == 0 && arg[k] == '=' ? arg + k + 1 : NULL;
}

static int parse_args(int argc, char **argv)
{
    bench_host_state = BENCH_HOST_WARM; /* --host-memory=warm unless said otherwise */
    if (bench_host_take_flags(&argc, argv, "bench_live") != 0)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "--smoke") == 0) {
            opt.smoke = true;
            opt.ns[0] = 2000, opt.nn = 1;
            opt.sizes[0] = 64, opt.nsizes = 1;
            opt.reps = 1, opt.idle_ms = 60, opt.on_ms = 40;
        } else if (strcmp(a, "--pin") == 0) {
            opt.pin = true;
        } else if (strcmp(a, "--grow-first") == 0) {
            opt.grow_first = true;
        } else if ((v = flag(a, "--big-reps")) != NULL) {
            opt.big_reps = atoi(v);
        } else if (strcmp(a, "--huge-pages=off") == 0) {
            opt.huge_off = true;
        } else if ((v = flag(a, "--n")) != NULL) {
            if ((opt.nn = parse_list(v, opt.ns, MAX_LIST)) <= 0)
                return -1;
        } else if ((v = flag(a, "--sizes")) != NULL) {
            if ((opt.nsizes = parse_list(v, opt.sizes, MAX_LIST)) <= 0)
                return -1;
        } else if ((v = flag(a, "--variants")) != NULL) {
            memset(opt.want, 0, sizeof(opt.want));
            char buf[128];
            snprintf(buf, sizeof(buf), "%s", v);
            for (char *t = strtok(buf, ","); t != NULL; t = strtok(NULL, ",")) {
                int k = 0;
                while (k < NVARIANT && strcmp(t, variant_names[k]) != 0)
                    k++;
                if (k == NVARIANT)
                    return -1;
                opt.want[k] = true;
            }
        } else if ((v = flag(a, "--reps")) != NULL) {
            opt.reps = atoi(v);
        } else if ((v = flag(a, "--workers")) != NULL) {
            opt.workers = atoi(v);
        } else if ((v = flag(a, "--idle-ms")) != NULL) {
            opt.idle_ms = atoll(v);
        } else if ((v = flag(a, "--on-ms")) != NULL) {
            opt.on_ms = atoll(v);
        } else if ((v = flag(a, "--writer-us")) != NULL) {
            opt.writer_us = atoll(v);
        } else if ((v = flag(a, "--slow-ns")) != NULL) {
            opt.slow_ns = atoll(v);
        } else if ((v = flag(a, "--seed")) != NULL) {
            opt.seed = strtoull(v, NULL, 0);
        } else if ((v = flag(a, "--json")) != NULL) {
            opt.json = v;
        } else {
            return -1;
        }
    }
    if (opt.reps < 1 || opt.big_reps < 1 || opt.workers < 1 || opt.workers > MAX_WORKERS ||
        opt.idle_ms < 1 || opt.on_ms < 1 || opt.writer_us < 1)
        return -1;
#ifndef LIVE_URCU
    opt.want[V_URCU] = false; /* built without liburcu */
#endif
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int k)
{
    qsort(v, (size_t)k, sizeof(double), cmp_double);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

/* The median over repetitions of an expression of `r` (a struct lresult *). */
#define MED(runs, k, expr)                         \
    ({                                             \
        double v_[64];                             \
        for (int i_ = 0; i_ < (k); i_++) {         \
            const struct lresult *r = &(runs)[i_]; \
            v_[i_] = (double)(expr);               \
        }                                          \
        median(v_, (k));                           \
    })

/* Repetitions of configuration c (N = ns[c / nsizes], size = sizes[c % nsizes]): --big-reps
 * where the objects take 1 GiB or more (on the VM measured, first touches cost ~60-100 us per
 * 4 KiB page: 1M x 4 KiB takes over a minute per activation). */
static int reps_for(int c)
{
    int64_t bytes = opt.ns[c / opt.nsizes] * opt.sizes[c % opt.nsizes];
    return bytes >= (1ll << 30) && opt.big_reps < opt.reps ? opt.big_reps : opt.reps;
}

static bool bounded(enum variant v)
{
    return v <= V_SWEEP1024;
}

struct row {
    double p[2][4], rps[2], wr_max_ms, wr_ran_ms, wr_slow[NSLOWKIND], act_ms, act_cpu_ms, deact_ms;
    double slow[NSLOWKIND], slow_grow, slow_sweep, invol_s[2], wait_ms[2], wfaults, afaults;
    double thp, compact, grow_ms;
};

static void make_row(struct row *w, const struct lresult *runs, int k)
{
    const int ph[2] = {PH_IDLE, PH_ACT};
    for (int j = 0; j < 2; j++) {
        int p = ph[j];
        w->p[j][0] = MED(runs, k, r->p50[p]) / 1e3;
        w->p[j][1] = MED(runs, k, r->p99[p]) / 1e3;
        w->p[j][2] = MED(runs, k, r->p999[p]) / 1e3;
        w->p[j][3] = MED(runs, k, r->max[p]) / 1e3;
        w->rps[j] = MED(runs, k, r->phase_s[p] > 0 ? r->req[p] / r->phase_s[p] : 0);
        w->invol_s[j] = MED(runs, k, r->phase_s[p] > 0 ? r->w_invol[p] / r->phase_s[p] : 0);
        w->wait_ms[j] = MED(runs, k, r->w_wait_ms[p]);
    }
    w->wr_max_ms = MED(runs, k, r->wr_max[PH_ACT]) / 1e6;
    w->wr_ran_ms = MED(runs, k, r->wr_max_ran[PH_ACT]) / 1e6;
    for (int s = 0; s < NSLOWKIND; s++)
        w->wr_slow[s] = MED(runs, k, r->wr_slow[PH_ACT][s]);
    w->act_ms = MED(runs, k, r->act_wall_s) * 1e3;
    w->act_cpu_ms = MED(runs, k, r->act_cpu_s) * 1e3;
    w->deact_ms = MED(runs, k, r->deact_wall_s) * 1e3;
    w->grow_ms = MED(runs, k, r->grow_s) * 1e3;
    for (int s = 0; s < NSLOWKIND; s++)
        w->slow[s] = MED(runs, k, r->slow[PH_ACT][s]);
    w->slow_grow = MED(runs, k, r->slow_grow);
    w->slow_sweep = MED(runs, k, r->slow_sweep);
    w->wfaults = MED(runs, k, r->w_faults[PH_ACT]);
    w->afaults = MED(runs, k, r->act_faults);
    w->thp = MED(runs, k, r->thp_alloc);
    w->compact = MED(runs, k, r->compact_stall);
}

/* Requests per second in millions, or in thousands or units where millions would print a
 * measured rate as 0.00M (a loaded machine, a short activation). */
static const char *rate_text(double rps, char *buf, size_t len)
{
    if (rps >= 5e3)
        snprintf(buf, len, "%.2fM", rps / 1e6);
    else if (rps >= 5)
        snprintf(buf, len, "%.2fk", rps / 1e3);
    else
        snprintf(buf, len, "%.2f", rps);
    return buf;
}

/* "met", or the goals missed (bench/README.md, Goals). */
static const char *goals(const struct row *w, char *buf, size_t len)
{
    buf[0] = 0;
    if (w->p[1][1] - w->p[0][1] > 1.0)
        strncat(buf, " p99", len - strlen(buf) - 1);
    if (w->p[1][2] > 2 * w->p[0][2])
        strncat(buf, " p99.9", len - strlen(buf) - 1);
    if (w->rps[1] < 0.9 * w->rps[0])
        strncat(buf, " req/s", len - strlen(buf) - 1);
    if (w->wr_max_ms > 5)
        strncat(buf, " writer", len - strlen(buf) - 1);
    if (buf[0] == 0)
        return "met";
    memmove(buf + 8, buf + 1, strlen(buf));
    memcpy(buf, "missed: ", 8);
    return buf;
}

static const char *size_name(int64_t n, char *buf, size_t len)
{
    if (n >= 1000000 && n % 1000000 == 0)
        snprintf(buf, len, "%lldM", (long long)(n / 1000000));
    else if (n >= 1000 && n % 1000 == 0)
        snprintf(buf, len, "%lldk", (long long)(n / 1000));
    else
        snprintf(buf, len, "%lld", (long long)n);
    return buf;
}

static void print_tables(struct lresult *all, int nconf, const int *order_v, int nv)
{
    printf("\n| N | size | variant | idle p50 / p99 / p99.9 / max (us) | activation p50 / p99 / "
           "p99.9 / max (us) | req/s idle | req/s act | writer max act (ms) | act wall (ms) | "
           "act CPU (ms) | goals |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    int unmeasured = 0;
    for (int c = 0; c < nconf; c++)
        for (int j = 0; j < nv; j++) {
            int v = order_v[j];
            struct row w;
            make_row(&w, &all[((size_t)c * NVARIANT + (size_t)v) * (size_t)opt.reps], reps_for(c));
            char nb[32], tb[64], act[160];
            /* No request ended while the activation ran (it was shorter than a request's wait
             * for the core): its latencies and rate were not measured, and zeros would read as
             * a measurement. */
            if (w.rps[1] == 0) {
                unmeasured++;
                snprintf(act, sizeof(act),
                         "not measured: no request ended during the %.1f ms activation", w.act_ms);
            } else {
                snprintf(act, sizeof(act), "%.2f / %.2f / %.2f / %.0f", w.p[1][0], w.p[1][1],
                         w.p[1][2], w.p[1][3]);
            }
            char idle_rate[32], act_rate[32];
            printf("| %s | %lld | %s | %.2f / %.2f / %.2f / %.0f | %s | %s | ",
                   size_name(opt.ns[c / opt.nsizes], nb, sizeof(nb)),
                   (long long)opt.sizes[c % opt.nsizes], variant_names[v], w.p[0][0], w.p[0][1],
                   w.p[0][2], w.p[0][3], act, rate_text(w.rps[0], idle_rate, sizeof(idle_rate)));
            if (w.rps[1] == 0)
                printf("- | ");
            else
                printf("%s | ", rate_text(w.rps[1], act_rate, sizeof(act_rate)));
            printf("%.2f | %.1f | %.1f | %s |\n", w.wr_max_ms, w.act_ms, w.act_cpu_ms,
                   !bounded(v)     ? "-"
                   : w.rps[1] == 0 ? "not measured"
                                   : goals(&w, tb, sizeof(tb)));
        }
    if (unmeasured > 0)
        printf("\n%d of the rows: not measured during activation. The activation ended before any "
               "request did, so there is no latency or rate to report for it; a larger --n makes "
               "it last long enough (bench/run --live --quick uses --n=100k).\n",
               unmeasured);
    printf("\nRequests above %lld ns during activation, by what happened during them (medians):\n"
           "\n| N | size | variant | slow: waited / slept / faulted / other | in grow / in sweep | "
           "worker invol. switches/s idle / act | worker run-queue wait ms idle / act | "
           "worker faults act | activator faults | grow (ms) | THP allocs | writer ops > 1 ms: "
           "waited / slept / faulted / other; longest not waiting (ms) |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
           (long long)opt.slow_ns);
    for (int c = 0; c < nconf; c++)
        for (int j = 0; j < nv; j++) {
            int v = order_v[j];
            struct row w;
            make_row(&w, &all[((size_t)c * NVARIANT + (size_t)v) * (size_t)opt.reps], reps_for(c));
            char nb[32], slow[96];
            if (w.rps[1] == 0) /* no request to classify (above) */
                snprintf(slow, sizeof(slow), "not measured | not measured");
            else
                snprintf(slow, sizeof(slow), "%.0f / %.0f / %.0f / %.0f | %.0f / %.0f", w.slow[0],
                         w.slow[1], w.slow[2], w.slow[3], w.slow_grow, w.slow_sweep);
            printf("| %s | %lld | %s | %s | %.0f / %.0f | "
                   "%.1f / %.1f | %.0f | %.0f | %.1f | %.0f | %.0f / %.0f / %.0f / %.0f; %.2f |\n",
                   size_name(opt.ns[c / opt.nsizes], nb, sizeof(nb)),
                   (long long)opt.sizes[c % opt.nsizes], variant_names[v], slow, w.invol_s[0],
                   w.invol_s[1], w.wait_ms[0], w.wait_ms[1], w.wfaults, w.afaults, w.grow_ms, w.thp,
                   w.wr_slow[0], w.wr_slow[1], w.wr_slow[2], w.wr_slow[3], w.wr_ran_ms);
        }
}

static void json_result(FILE *f, const struct lresult *r)
{
    fprintf(f,
            "\"act_wall_s\": %.6f, \"act_cpu_s\": %.6f, \"deact_wall_s\": %.6f, "
            "\"grow_s\": %.6f, \"act_faults\": %.0f, \"thp_alloc\": %.0f, "
            "\"compact_stall\": %.0f, \"slow_grow\": %.0f, \"slow_sweep\": %.0f, "
            "\"members_on\": %llu, \"slots_on\": %llu, \"members_off\": %llu, "
            "\"slots_off\": %llu, \"bad_objects\": %llu, \"left_owed\": %llu, \"phases\": {",
            r->act_wall_s, r->act_cpu_s, r->deact_wall_s, r->grow_s, r->act_faults, r->thp_alloc,
            r->compact_stall, r->slow_grow, r->slow_sweep, (unsigned long long)r->members_on,
            (unsigned long long)r->slots_on, (unsigned long long)r->members_off,
            (unsigned long long)r->slots_off, (unsigned long long)r->bad_objects,
            (unsigned long long)r->left_owed);
    for (int p = 0; p < NPHASE; p++)
        fprintf(f,
                "%s\"%s\": {\"seconds\": %.6f, \"requests\": %llu, \"p50_ns\": %llu, "
                "\"p99_ns\": %llu, \"p999_ns\": %llu, \"max_ns\": %llu, \"writer_ops\": %llu, "
                "\"writer_p99_ns\": %llu, \"writer_max_ns\": %llu, \"writer_max_ran_ns\": %llu, "
                "\"writer_slow\": [%.0f, %.0f, %.0f, %.0f], \"worker_faults\": %.0f, "
                "\"worker_invol\": %.0f, \"worker_wait_ms\": %.3f, "
                "\"slow\": [%.0f, %.0f, %.0f, %.0f]}",
                p ? ", " : "", phase_names[p], r->phase_s[p], (unsigned long long)r->req[p],
                (unsigned long long)r->p50[p], (unsigned long long)r->p99[p],
                (unsigned long long)r->p999[p], (unsigned long long)r->max[p],
                (unsigned long long)r->wr_ops[p], (unsigned long long)r->wr_p99[p],
                (unsigned long long)r->wr_max[p], (unsigned long long)r->wr_max_ran[p],
                r->wr_slow[p][0], r->wr_slow[p][1], r->wr_slow[p][2], r->wr_slow[p][3],
                r->w_faults[p], r->w_invol[p], r->w_wait_ms[p], r->slow[p][0], r->slow[p][1],
                r->slow[p][2], r->slow[p][3]);
    fprintf(f, "}");
}

static int write_json(const char *path, struct lresult *all, int nconf, double load[2],
                      double seconds)
{
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f,
            "{\n\"context\": {\"family\": \"live\", \"cores\": %ld, \"workers\": %d, "
            "\"reps\": %d, \"idle_ms\": %lld, \"on_ms\": %lld, \"writer_us\": %lld, "
            "\"big_reps\": %d, \"slow_ns\": %lld, \"pin\": %d, \"huge_pages_off\": %d, "
            "\"grow_first\": %d, \"host_memory\": \"%s\", \"window_ms\": %d, "
            "\"slow_kinds\": [\"waited\", \"slept\", \"faulted\", \"other\"], "
            "\"load_before\": %.2f, \"load_after\": %.2f, \"seconds\": %.1f},\n\"runs\": [",
            sysconf(_SC_NPROCESSORS_ONLN), opt.workers, opt.reps, (long long)opt.idle_ms,
            (long long)opt.on_ms, (long long)opt.writer_us, opt.big_reps, (long long)opt.slow_ns,
            opt.pin, opt.huge_off, opt.grow_first, bench_host_state_name(bench_host_state),
            WIN_NS / 1000000, load[0], load[1], seconds);
    bool first = true;
    for (int c = 0; c < nconf; c++)
        for (int v = 0; v < NVARIANT; v++) {
            if (!opt.want[v])
                continue;
            for (int k = 0; k < reps_for(c); k++) {
                const struct lresult *r =
                    &all[((size_t)c * NVARIANT + (size_t)v) * (size_t)opt.reps + (size_t)k];
                fprintf(f, "%s\n{\"n\": %lld, \"size\": %lld, \"variant\": \"%s\", \"rep\": %d, ",
                        first ? "" : ",", (long long)opt.ns[c / opt.nsizes],
                        (long long)opt.sizes[c % opt.nsizes], variant_names[v], k);
                json_result(f, r);
                /* the first repetition's windows: bench/live_plot.py draws them */
                if (k == 0) {
                    fprintf(f,
                            ", \"act_at_ms\": %.3f, \"act_end_ms\": %.3f, \"deact_at_ms\": %.3f, "
                            "\"deact_end_ms\": %.3f, \"window_p99_ns\": [",
                            r->act_at_ms, r->act_end_ms, r->deact_at_ms, r->deact_end_ms);
                    for (int i = 0; i < r->nwin; i++)
                        fprintf(f, "%s%.0f", i ? ", " : "", (double)r->win_p99[i]);
                    fprintf(f, "]");
                }
                fprintf(f, "}");
                first = false;
            }
        }
    fprintf(f, "\n]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

static void loadavg(double *out)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL || fscanf(f, "%lf", out) != 1)
        *out = -1;
    if (f != NULL)
        fclose(f);
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0) {
        fprintf(stderr, "bench_live: bad arguments (see the top of bench/families/live.c)\n");
        return 2;
    }
    int nconf = opt.nn * opt.nsizes, nv = 0, order_v[NVARIANT];
    for (int v = 0; v < NVARIANT; v++)
        if (opt.want[v])
            order_v[nv++] = v;
    struct lresult *shared = mmap(NULL, sizeof(struct lresult), PROT_READ | PROT_WRITE,
                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    struct lresult *all = calloc((size_t)nconf * NVARIANT * (size_t)opt.reps, sizeof(*all));
    if (shared == MAP_FAILED || all == NULL) {
        fprintf(stderr, "bench_live: out of memory\n");
        return 1;
    }
    double load[2];
    loadavg(&load[0]);
    uint64_t start = now_ns(), rng = opt.seed;
    int failures = 0;
    for (int k = 0; k < opt.reps; k++) {
        int order[NVARIANT];
        memcpy(order, order_v, sizeof(order));
        for (int i = nv; i > 1; i--) { /* a shuffled variant order per repetition */
            int j = (int)(mix(&rng) % (uint64_t)i), t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (int c = 0; c < nconf; c++)
            for (int j = 0; j < nv && k < reps_for(c); j++) {
                int v = order[j];
                size_t n = (size_t)opt.ns[c / opt.nsizes], size = (size_t)opt.sizes[c % opt.nsizes];
                struct lresult *r =
                    &all[((size_t)c * NVARIANT + (size_t)v) * (size_t)opt.reps + (size_t)k];
                int rc = measure((enum variant)v, n, size, r, shared);
                bool good = rc == 0 && r->req[PH_IDLE] > 0 && r->wr_ops[PH_IDLE] > 0 &&
                            r->members_on > 0 && r->slots_on == r->members_on &&
                            r->slots_off == 0 && r->bad_objects == 0;
                fprintf(stderr,
                        "%s rep %d n=%zu size=%zu %s: act %.1f ms, requests %llu idle / %llu act, "
                        "writer ops %llu (EAGAIN %llu), slots %llu/%llu on, %llu off%s%s\n",
                        good ? "ok" : "FAILED", k, n, size, variant_names[v], r->act_wall_s * 1e3,
                        (unsigned long long)r->req[PH_IDLE], (unsigned long long)r->req[PH_ACT],
                        (unsigned long long)(r->wr_ops[PH_IDLE] + r->wr_ops[PH_ACT]),
                        (unsigned long long)r->left_owed, (unsigned long long)r->slots_on,
                        (unsigned long long)r->members_on, (unsigned long long)r->slots_off,
                        r->msg[0] ? ": " : "", r->msg);
                failures += !good;
            }
    }
    double seconds = (double)(now_ns() - start) / 1e9;
    loadavg(&load[1]);
    print_tables(all, nconf, order_v, nv);
    printf("\n%d repetitions in %.0f s; load average before %.2f, after %.2f\n", opt.reps, seconds,
           load[0], load[1]);
    if (opt.json != NULL && write_json(opt.json, all, nconf, load, seconds) != 0) {
        fprintf(stderr, "bench_live: cannot write %s\n", opt.json);
        failures++;
    }
    return failures ? 1 : 0;
}
