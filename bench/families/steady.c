/*
 * bench/families/steady.c - the `steady` family (bench_steady): a feature left on while members
 * keep arriving and leaving, the steady state that headroom, the add reserve, the owed table and
 * swf_feature_maintain() are for (feature.h), against the liburcu + malloc peer.
 *
 *   steady/swf/fail:P/members:N          swf_feature over a CK_LIST of N members (the _AUTO
 *                                        adapter, swf_pin), 64-byte objects; P % of the cache's
 *                                        NOWAIT allocations failed by injection while on
 *                                        (swf_cache_set_failslab: probability P, seed 42)
 *   steady/urcu_malloc/fail:0/members:N  the peer: the members on a liburcu cds_list (memb
 *                                        flavour); while on, the add path mallocs the object,
 *                                        initialises it and stores it before the link; activate
 *                                        fills every member with malloc in one read-side section,
 *                                        deactivate takes every slot, synchronize_rcu, frees.
 *                                        Nothing to inject into: malloc never fails here
 *   steady/catch_up/owed_table:T/members:M  the deterministic part: a catch-up of 64 owed
 *                                        members at M members (1,000,000), owed_table T = 1024
 *                                        (the default: the table) and 0 (a walk of the list)
 *
 * The steady state, in a child process forked per measurement (a fresh heap, as bench_live's):
 * N members (each its own calloc) linked, then three threads run through five phases:
 *   - the adder, flat out: a member calloc'd (untimed), then, timed by two CLOCK_MONOTONIC reads,
 *     the writer mutex, the link, swf_feature_added(f, m, SWF_NOWAIT) (the peer: malloc + init
 *     while on, then cds_list_add_rcu), a push on the closer's FIFO, the unlock. EAGAIN leaves
 *     the member owed; nothing retries it but the catch-up;
 *   - the closer deletes the oldest member (the mutex, the unlink, swf_pin_retire on its own
 *     ck_epoch record, whose callback calls swf_feature_release() and frees; the peer: call_rcu)
 *     whenever the membership is above a target that grows by 10 % of the phase's starting
 *     membership over each phase; the adder waits (untimed) while it is ahead of the target by
 *     more than a slack (N / 64, at least 1024), so that membership grows 10 % between switches
 *     however fast either runs;
 *   - the control thread (the child's main thread: it owns the record of the feature's guard, so
 *     activate, catch-up and deactivate run there) calls swf_feature_maintain() and
 *     swf_feature_catch_up() every millisecond (1 ms after the previous tick's start), timing each.
 * Phases: off (--phase-ms), activate, on (--phase-ms), then, with the adder and closer held on
 * the mutex, a catch-up and the check that every linked member holds an object, deactivate, off
 * again (then the check that none does). Adds per second off is the two off phases' adds over
 * their time, on the on phase's; the latencies are per phase (the off ones merged); the feature's
 * counters (swf_feature_stats) are the on phase's deltas. Injection is set after activate returns
 * and cleared before the check: it hits the adds only.
 *
 * The catch-up (same binary, in a child): M members on a CK_LIST in one shuffled order, the
 * feature activated; then --rounds times: injection at 100 %, fresh members added until 64 of
 * them are owed (the first ones take the add reserve), injection off, swf_feature_catch_up()
 * timed, its effect checked (the 64 filled), those members unlinked and released again.
 *
 * After Google Benchmark's own output, the family prints its Markdown (medians over the
 * repetitions) and its goals (bench/README.md, Goals), each with its figures, sample count and
 * verdict; the header says whether the host's memory was warmed (host.h).
 *
 * Own flags: --members=100k (list), --fail=0,1,30 (percent, list), --phase-ms=1000, --reps=3,
 * --catchup-members=1M, --rounds=9 (the walk's: 3 at most), --host-memory=warm|cold|as-found
 * (host.h),
 * --md=FILE (the Markdown there instead of on stdout), --quick (the smoke test's: 2,000 members,
 * 30 ms phases, one repetition, the catch-up at 20,000 members, 3 rounds).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifdef STEADY_URCU
#define _LGPL_SOURCE 1
#include <urcu.h>
#include <urcu/rculist.h>
#endif

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <ck_epoch.h>
#include <ck_queue.h>

#include <sweepfill/cache.h>
#include <sweepfill/feature.h>
#include <sweepfill/pin.h>
#include <sweepfill/sweep.h>

#include "hist.h"
#include "lists.h"
#include "shim/swfb.h"

enum { OBJ_SIZE = 64, OWED = 64, MAX_ARGS = 8, MAX_REPS = 32, MAX_ROUNDS = 64, TICK_NS = 1000000 };
enum phase { PH_OFF1, PH_ACT, PH_ON, PH_DEACT, PH_OFF2, NPHASE };
enum variant { V_SWF, V_URCU, V_CATCH_UP };

/* ---- options --------------------------------------------------------------------------------- */

static struct {
    int64_t members[MAX_ARGS], fail[MAX_ARGS];
    int nmembers, nfail, reps, rounds;
    int64_t phase_ms, catchup_members;
    bool quick;
} opt = {.members = {100000},
         .fail = {0, 1, 30},
         .nmembers = 1,
         .nfail = 3,
         .reps = 3,
         .rounds = 9,
         .phase_ms = 1000,
         .catchup_members = 1000000};

/* ---- what a child reports (shared memory) ---------------------------------------------------- */

struct sresult {
    int done;
    char msg[200];
    double phase_s[NPHASE];
    uint64_t adds[NPHASE], owed_adds[NPHASE], deletes[NPHASE];
    uint64_t p50_off, p99_off, max_off, p50_on, p99_on, max_on;
    /* the feature's counters over the on phase */
    uint64_t left_owed, owed_untabled, add_reserve_uses, catch_ups, catch_up_walks, filled,
        maintains, assigned_by_add, fails_injected;
    uint64_t catch_up_max_ns, maintain_max_ns, ticks, tick_gap_max_ns; /* gap: tick to tick */
    uint64_t members_on, slots_on, members_off, slots_off, members_end;
    /* the catch-up measurement */
    int rounds;
    double round_s[MAX_ROUNDS], round_cpu_s[MAX_ROUNDS]; /* wall, and the calling thread's CPU */
    uint64_t cu_filled, cu_walks, cu_visits, cu_reserve_uses;
    double bare_walk_s; /* one walk of the list reading every slot, nothing else */
};

static struct sresult *shared;

/* ---- the members ----------------------------------------------------------------------------- */

struct sobj {
    void *owner;
    int64_t depth;
    char pad[OBJ_SIZE - 16];
};

struct smember {
    CK_LIST_ENTRY(smember) link;
    void *slot;
    struct swf_pin pin;
#ifdef STEADY_URCU
    struct cds_list_head rcu_link;
    struct rcu_head rcu;
#endif
    uint64_t id;
};

CK_LIST_HEAD(smember_list, smember);
SWF_LIST_CK_LIST_AUTO(slp, smember_list, smember, link, slot, pin)

/* The state of one measurement, in its child. */
static struct {
    enum variant v;
    struct swf_cache *cache;
    struct swf_feature *feat;
    struct smember_list head;
#ifdef STEADY_URCU
    struct cds_list_head rcu_head;
#endif
    ck_epoch_t epoch;
    ck_epoch_record_t ctl_rec, closer_rec;
    struct swf_grace closer_grace;
    pthread_mutex_t wlock; /* the writer mutex: links, unlinks, the FIFO, the peer's flag */
    struct smember **fifo; /* members in the order they were added (under wlock) */
    size_t fifo_mask, fifo_head, fifo_tail;
    size_t live, target, slack; /* live: under wlock, read relaxed; target: the control's */
    int active;                 /* the peer's flag, under wlock */
    int phase, stop;
    uint64_t next_id;
    /* the adder's, read after the join */
    struct hist h[NPHASE];
    uint64_t adds[NPHASE], owed_adds[NPHASE], deletes[NPHASE];
} S;

static void obj_init(void *obj, void *member, void *arg)
{
    (void)arg;
    struct sobj *o = obj;
    o->owner = member;
    o->depth = -1;
}

static struct smember *member_new(void)
{
    struct smember *m = calloc(1, sizeof(*m)); /* touched: no first-touch fault when timed */
    if (m == NULL) {
        fprintf(stderr, "bench_steady: out of memory\n");
        _exit(3);
    }
    m->id = S.next_id++;
    return m;
}

static void feature_free(struct swf_pin *pin)
{
    struct smember *m = SWF_CONTAINER_OF(pin, struct smember, pin);
    (void)swf_feature_release(S.feat, m);
    free(m);
}

#ifdef STEADY_URCU
static void urcu_free(struct rcu_head *h)
{
    struct smember *m = SWF_CONTAINER_OF(h, struct smember, rcu);
    free(__atomic_exchange_n(&m->slot, NULL, __ATOMIC_ACQ_REL));
    free(m);
}

static void *malloc_obj(void *member)
{
    void *o = malloc(OBJ_SIZE);
    if (o == NULL) {
        fprintf(stderr, "bench_steady: out of memory\n");
        _exit(3);
    }
    obj_init(o, member, NULL);
    return o;
}
#endif

/* Under wlock: link m (with an object while on). Returns swf_feature_added()'s result. */
static int link_member(struct smember *m)
{
    int err = 0;
#ifdef STEADY_URCU
    if (S.v == V_URCU) {
        if (S.active)
            m->slot = malloc_obj(m); /* before the link publishes m */
        cds_list_add_rcu(&m->rcu_link, &S.rcu_head);
    } else
#endif
    {
        CK_LIST_INSERT_HEAD(&S.head, m, link);
        err = swf_feature_added(S.feat, m, SWF_NOWAIT);
    }
    S.fifo[S.fifo_tail++ & S.fifo_mask] = m;
    __atomic_store_n(&S.live, S.live + 1, __ATOMIC_RELAXED);
    return err;
}

/* Under wlock: unlink the oldest member and retire it. NULL when there is none. */
static struct smember *unlink_oldest(void)
{
    if (S.fifo_head == S.fifo_tail)
        return NULL;
    struct smember *m = S.fifo[S.fifo_head++ & S.fifo_mask];
#ifdef STEADY_URCU
    if (S.v == V_URCU) {
        cds_list_del_rcu(&m->rcu_link);
    } else
#endif
    {
        CK_LIST_REMOVE(m, link);
        (void)swf_pin_retire(&m->pin, &S.closer_grace, feature_free);
    }
    __atomic_store_n(&S.live, S.live - 1, __ATOMIC_RELAXED);
    return m;
}

/* ---- the adder and the closer ---------------------------------------------------------------- */

static void *adder_main(void *arg)
{
    (void)arg;
#ifdef STEADY_URCU
    if (S.v == V_URCU)
        rcu_register_thread();
#endif
    while (!__atomic_load_n(&S.stop, __ATOMIC_RELAXED)) {
        /* Ahead of the closer by more than the slack: wait, untimed. */
        if (__atomic_load_n(&S.live, __ATOMIC_RELAXED) >
            __atomic_load_n(&S.target, __ATOMIC_RELAXED) + S.slack) {
            sched_yield();
            continue;
        }
        struct smember *m = member_new();
        uint64_t t0 = bench_now_ns();
        pthread_mutex_lock(&S.wlock);
        int err = link_member(m);
        pthread_mutex_unlock(&S.wlock);
        uint64_t t1 = bench_now_ns();
        int ph = __atomic_load_n(&S.phase, __ATOMIC_RELAXED);
        hist_record(&S.h[ph], t1 - t0);
        S.adds[ph]++;
        S.owed_adds[ph] += err != 0;
    }
#ifdef STEADY_URCU
    if (S.v == V_URCU)
        rcu_unregister_thread();
#endif
    return NULL;
}

static void *closer_main(void *arg)
{
    (void)arg;
#ifdef STEADY_URCU
    if (S.v == V_URCU)
        rcu_register_thread(); /* call_rcu reads its per-thread data in a read-side section */
#endif
    const struct timespec nap = {0, 50000};
    unsigned deleted = 0;
    while (!__atomic_load_n(&S.stop, __ATOMIC_RELAXED)) {
        if (__atomic_load_n(&S.live, __ATOMIC_RELAXED) <=
            __atomic_load_n(&S.target, __ATOMIC_RELAXED)) {
            if (S.v == V_SWF)
                ck_epoch_poll(&S.closer_rec);
            nanosleep(&nap, NULL);
            continue;
        }
        pthread_mutex_lock(&S.wlock);
        struct smember *m = unlink_oldest();
        pthread_mutex_unlock(&S.wlock);
        if (m == NULL)
            continue;
        S.deletes[__atomic_load_n(&S.phase, __ATOMIC_RELAXED)]++;
#ifdef STEADY_URCU
        if (S.v == V_URCU) {
            call_rcu(&m->rcu, urcu_free);
            continue;
        }
#endif
        if (++deleted % 32 == 0)
            ck_epoch_poll(&S.closer_rec); /* frees what is past its grace period */
    }
    if (S.v == V_SWF)
        ck_epoch_barrier(&S.closer_rec);
#ifdef STEADY_URCU
    if (S.v == V_URCU)
        rcu_unregister_thread();
#endif
    return NULL;
}

/* ---- the control thread ---------------------------------------------------------------------- */

static void synchronize_ctl(void *arg)
{
    swf_synchronize_epoch(arg);
}

static int activate(void)
{
#ifdef STEADY_URCU
    if (S.v == V_URCU) {
        pthread_mutex_lock(&S.wlock);
        S.active = 1;
        pthread_mutex_unlock(&S.wlock);
        struct smember *m;
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
    return swf_feature_activate(S.feat, NULL);
}

static int deactivate(void)
{
#ifdef STEADY_URCU
    if (S.v == V_URCU) {
        pthread_mutex_lock(&S.wlock);
        S.active = 0;
        pthread_mutex_unlock(&S.wlock);
        size_t n = 0, cap = 4096;
        void **taken = malloc(cap * sizeof(void *));
        struct smember *m;
        rcu_read_lock();
        cds_list_for_each_entry_rcu(m, &S.rcu_head, rcu_link)
        {
            void *o = __atomic_exchange_n(&m->slot, NULL, __ATOMIC_ACQ_REL);
            if (o == NULL)
                continue;
            if (n == cap && (taken = realloc(taken, (cap *= 2) * sizeof(void *))) == NULL)
                _exit(3);
            taken[n++] = o;
        }
        rcu_read_unlock();
        synchronize_rcu();
        for (size_t i = 0; i < n; i++)
            free(taken[i]);
        free(taken);
        return 0;
    }
#endif
    return swf_feature_deactivate(S.feat);
}

/* With the adder and the closer held on the mutex: the linked members, and those with an
 * object. */
static void count_slots(uint64_t *members, uint64_t *slots)
{
    *members = *slots = 0;
    struct smember *m;
#ifdef STEADY_URCU
    if (S.v == V_URCU) {
        rcu_read_lock();
        cds_list_for_each_entry_rcu(m, &S.rcu_head, rcu_link)
        {
            ++*members;
            *slots += rcu_dereference(m->slot) != NULL;
        }
        rcu_read_unlock();
        return;
    }
#endif
    ck_epoch_begin(&S.ctl_rec, NULL);
    CK_LIST_FOREACH(m, &S.head, link)
    {
        ++*members;
        *slots += swf_slot_load(&m->slot) != NULL;
    }
    ck_epoch_end(&S.ctl_rec, NULL);
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* One phase of --phase-ms: a tick every millisecond moves the closer's target (10 % of the
 * starting membership over the phase) and, for sweepfill, maintains and catches up (timed). */
static void run_phase(int ph, struct sresult *r)
{
    size_t base = __atomic_load_n(&S.live, __ATOMIC_RELAXED), growth = base / 10;
    uint64_t len = (uint64_t)opt.phase_ms * 1000000u, t0 = bench_now_ns(), now = t0, last = t0;
    __atomic_store_n(&S.target, base, __ATOMIC_RELAXED);
    __atomic_store_n(&S.phase, ph, __ATOMIC_RELAXED);
    while ((now = bench_now_ns()) - t0 < len) {
        sleep_until(now + TICK_NS);
        uint64_t el = bench_now_ns() - t0;
        el = el < len ? el : len;
        __atomic_store_n(&S.target, base + (size_t)((double)growth * (double)el / (double)len),
                         __ATOMIC_RELAXED);
        if (S.v != V_SWF)
            continue;
        uint64_t a = bench_now_ns();
        if (ph == PH_ON && a - last > r->tick_gap_max_ns)
            r->tick_gap_max_ns = a - last; /* 1 ms, unless the thread waited for a core */
        last = a;
        (void)swf_feature_maintain(S.feat); /* ENOMEM: the next tick tries again */
        uint64_t b = bench_now_ns();
        if (swf_feature_catch_up(S.feat, NULL) != 0 && r->msg[0] == '\0')
            snprintf(r->msg, sizeof(r->msg), "swf_feature_catch_up failed");
        uint64_t c = bench_now_ns();
        if (ph == PH_ON) {
            r->maintain_max_ns = b - a > r->maintain_max_ns ? b - a : r->maintain_max_ns;
            r->catch_up_max_ns = c - b > r->catch_up_max_ns ? c - b : r->catch_up_max_ns;
            r->ticks++;
        }
    }
    r->phase_s[ph] = (double)(bench_now_ns() - t0) * 1e-9;
}

static const char *steady_setup(size_t n)
{
    ck_epoch_init(&S.epoch);
    ck_epoch_register(&S.epoch, &S.ctl_rec, NULL);
    ck_epoch_register(&S.epoch, &S.closer_rec, NULL);
    swf_grace_epoch(&S.closer_grace, &S.closer_rec);
    pthread_mutex_init(&S.wlock, NULL);
    CK_LIST_INIT(&S.head);
#ifdef STEADY_URCU
    CDS_INIT_LIST_HEAD(&S.rcu_head);
    if (S.v == V_URCU)
        rcu_register_thread();
#endif
    /* Membership grows 10 % a phase (three: 1.331 N), plus the adder's slack. */
    S.slack = n / 64 > 1024 ? n / 64 : 1024;
    size_t cap = 1;
    while (cap < n + n / 2 + 2 * S.slack)
        cap <<= 1;
    S.fifo = malloc(cap * sizeof(*S.fifo));
    if (S.fifo == NULL)
        return "out of memory";
    S.fifo_mask = cap - 1;
    /* Members are the peer's and ours alike (malloc, base pages); the cache maps huge pages. */
    bench_host_prepare(n * 3 / 2 * (sizeof(struct smember) + OBJ_SIZE) + ((size_t)12 << 20),
                       BENCH_PAGES_BASE | BENCH_PAGES_HUGE);
    if (S.v == V_SWF) {
        struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "steady"};
        if (swf_cache_create(&cc, &S.cache) != 0)
            return "swf_cache_create failed";
        struct swf_feature_config fc;
        swf_feature_config_init(&fc);
        fc.sweep.list = slp_list(&S.head);
        fc.sweep.cache = S.cache;
        fc.sweep.init = obj_init;
        swf_guard_epoch(&fc.sweep.guard, &S.ctl_rec);
        fc.synchronize = synchronize_ctl;
        fc.synchronize_arg = &S.ctl_rec;
        if (swf_feature_create(&fc, &S.feat) != 0)
            return "swf_feature_create failed";
    }
    for (size_t i = 0; i < n; i++)
        (void)link_member(member_new());
    return NULL;
}

static uint64_t p99_merged(const struct hist *a, const struct hist *b, double p, uint64_t *max)
{
    static struct hist m;
    hist_clear(&m);
    hist_merge(&m, a);
    hist_merge(&m, b);
    *max = m.max;
    return hist_percentile(&m, p);
}

static const char *steady_child(enum variant v, size_t n, unsigned fail, struct sresult *r)
{
    S.v = v;
    const char *msg = steady_setup(n);
    if (msg != NULL)
        return msg;
    pthread_t adder, closer;
    __atomic_store_n(&S.target, n, __ATOMIC_RELAXED);
    if (pthread_create(&adder, NULL, adder_main, NULL) != 0 ||
        pthread_create(&closer, NULL, closer_main, NULL) != 0)
        return "pthread_create failed";
    run_phase(PH_OFF1, r);

    __atomic_store_n(&S.phase, PH_ACT, __ATOMIC_RELAXED);
    uint64_t t0 = bench_now_ns();
    if (activate() != 0)
        return "activate failed";
    r->phase_s[PH_ACT] = (double)(bench_now_ns() - t0) * 1e-9;
    struct swf_feature_stats f0, f1;
    struct swf_cache_stats c0, c1;
    memset(&f0, 0, sizeof(f0));
    memset(&f1, 0, sizeof(f1));
    memset(&c0, 0, sizeof(c0));
    memset(&c1, 0, sizeof(c1));
    struct swf_failslab fs = {.probability = fail, .interval = 1, .times = -1, .seed = 42};
    if (v == V_SWF) {
        if (fail != 0 && swf_cache_set_failslab(S.cache, &fs) != 0)
            return "swf_cache_set_failslab failed";
        (void)swf_feature_stats(S.feat, &f0);
        (void)swf_cache_stats(S.cache, &c0);
    }
    run_phase(PH_ON, r);
    if (v == V_SWF) {
        (void)swf_feature_stats(S.feat, &f1);
        (void)swf_cache_stats(S.cache, &c1);
    }

    /* The check, the adder and the closer held on the mutex: every linked member has an object
     * once the catch-up has run. */
    __atomic_store_n(&S.phase, PH_DEACT, __ATOMIC_RELAXED);
    t0 = bench_now_ns();
    pthread_mutex_lock(&S.wlock);
    if (v == V_SWF) {
        (void)swf_cache_set_failslab(S.cache, NULL);
        if (swf_feature_catch_up(S.feat, NULL) != 0)
            msg = "swf_feature_catch_up failed";
    }
    count_slots(&r->members_on, &r->slots_on);
    pthread_mutex_unlock(&S.wlock);
    if (deactivate() != 0)
        msg = "deactivate failed";
    r->phase_s[PH_DEACT] = (double)(bench_now_ns() - t0) * 1e-9;
    run_phase(PH_OFF2, r);

    pthread_mutex_lock(&S.wlock);
    count_slots(&r->members_off, &r->slots_off);
    r->members_end = S.live;
    pthread_mutex_unlock(&S.wlock);
    __atomic_store_n(&S.stop, 1, __ATOMIC_RELAXED);
    pthread_join(adder, NULL);
    pthread_join(closer, NULL);

    for (int p = 0; p < NPHASE; p++) {
        r->adds[p] = S.adds[p];
        r->owed_adds[p] = S.owed_adds[p];
        r->deletes[p] = S.deletes[p];
    }
    r->p50_off = p99_merged(&S.h[PH_OFF1], &S.h[PH_OFF2], 50, &r->max_off);
    r->p99_off = p99_merged(&S.h[PH_OFF1], &S.h[PH_OFF2], 99, &r->max_off);
    r->p50_on = hist_percentile(&S.h[PH_ON], 50);
    r->p99_on = hist_percentile(&S.h[PH_ON], 99);
    r->max_on = S.h[PH_ON].max;
    r->left_owed = f1.left_owed - f0.left_owed;
    r->owed_untabled = f1.owed_untabled - f0.owed_untabled;
    r->add_reserve_uses = f1.add_reserve_uses - f0.add_reserve_uses;
    r->catch_ups = f1.catch_ups - f0.catch_ups;
    r->catch_up_walks = f1.catch_up_walks - f0.catch_up_walks;
    r->filled = f1.filled_by_catch_up - f0.filled_by_catch_up;
    r->maintains = f1.maintains - f0.maintains;
    r->assigned_by_add = f1.assigned_by_add - f0.assigned_by_add;
    r->fails_injected = c1.fails_injected - c0.fails_injected;
    if (msg != NULL)
        return msg;
    if (r->msg[0] != '\0')
        return r->msg;
    if (r->members_on == 0 || r->slots_on != r->members_on)
        return "a linked member was left without an object after the catch-up";
    if (r->slots_off != 0)
        return "a member kept an object after deactivate";
    if (r->adds[PH_ON] == 0 || r->adds[PH_OFF1] + r->adds[PH_OFF2] == 0)
        return "the adder made no add in a phase";
    return NULL;
}

/* ---- the catch-up of 64 owed members --------------------------------------------------------- */

static const char *catch_up_child(size_t n, size_t table, struct sresult *r)
{
    S.v = V_SWF;
    ck_epoch_init(&S.epoch);
    ck_epoch_register(&S.epoch, &S.ctl_rec, NULL);
    CK_LIST_INIT(&S.head);
    size_t spares = OWED + SWF_FEATURE_ADD_RESERVE_DEFAULT + 64;
    struct smember *m = aligned_alloc(64, (n + spares) * sizeof(*m));
    size_t *order = malloc((n ? n : 1) * sizeof(size_t));
    if (m == NULL || order == NULL)
        return "out of memory";
    memset(m, 0, (n + spares) * sizeof(*m));
    bench_order(order, n, true);
    for (size_t i = n; i-- > 0;) /* the list runs order[0], order[1], ... */
        CK_LIST_INSERT_HEAD(&S.head, &m[order[i]], link);
    free(order);
    bench_host_prepare_objects(n, OBJ_SIZE, BENCH_PAGES_HUGE);
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "steady_catch_up"};
    if (swf_cache_create(&cc, &S.cache) != 0)
        return "swf_cache_create failed";
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = slp_list(&S.head);
    fc.sweep.cache = S.cache;
    fc.sweep.init = obj_init;
    fc.owed_table = table;
    swf_guard_epoch(&fc.sweep.guard, &S.ctl_rec);
    fc.synchronize = synchronize_ctl;
    fc.synchronize_arg = &S.ctl_rec;
    if (swf_feature_create(&fc, &S.feat) != 0)
        return "swf_feature_create failed";
    if (swf_feature_prepare(S.feat, n) != 0 || swf_feature_activate(S.feat, NULL) != 0)
        return "swf_feature_activate failed";
    /* A floor for the walk: the list once, reading every slot, in one section. */
    uint64_t w0 = bench_now_ns(), seen = 0;
    struct smember *it;
    ck_epoch_begin(&S.ctl_rec, NULL);
    CK_LIST_FOREACH(it, &S.head, link)
    seen += swf_slot_load(&it->slot) != NULL;
    ck_epoch_end(&S.ctl_rec, NULL);
    r->bare_walk_s = (double)(bench_now_ns() - w0) * 1e-9;
    if (seen != n)
        return "the activation left a member empty";
    struct swf_failslab all = {.probability = 100, .interval = 1, .times = -1, .seed = 42};
    struct smember *spare = &m[n];
    /* A walk of M members takes about a second on a loaded 2-core machine: 3 rounds of it. */
    int rounds = table != 0 || opt.rounds < 3 ? opt.rounds : 3;
    for (int k = 0; k < rounds; k++) {
        struct swf_feature_stats s0, s1, s2;
        (void)swf_feature_stats(S.feat, &s0);
        if (swf_cache_set_failslab(S.cache, &all) != 0)
            return "swf_cache_set_failslab failed";
        size_t added = 0;
        for (s1 = s0; s1.left_owed - s0.left_owed < OWED && added < spares; added++) {
            memset(&spare[added], 0, sizeof(spare[added]));
            CK_LIST_INSERT_HEAD(&S.head, &spare[added], link);
            (void)swf_feature_added(S.feat, &spare[added], SWF_NOWAIT);
            (void)swf_feature_stats(S.feat, &s1);
        }
        (void)swf_cache_set_failslab(S.cache, NULL);
        if (s1.left_owed - s0.left_owed != OWED)
            return "could not leave 64 members owed";
        struct swf_sweep_stats ss;
        uint64_t c0 = bench_thread_cpu_ns(), t0 = bench_now_ns();
        int err = swf_feature_catch_up(S.feat, &ss);
        uint64_t t1 = bench_now_ns(), c1 = bench_thread_cpu_ns();
        (void)swf_feature_stats(S.feat, &s2);
        if (err != 0)
            return "swf_feature_catch_up failed";
        for (size_t i = 0; i < added; i++)
            if (swf_slot_load(&spare[i].slot) == NULL)
                return "the catch-up left an owed member empty";
        r->round_cpu_s[r->rounds] = (double)(c1 - c0) * 1e-9;
        r->round_s[r->rounds++] = (double)(t1 - t0) * 1e-9;
        r->cu_filled += s2.filled_by_catch_up - s1.filled_by_catch_up;
        r->cu_walks += s2.catch_up_walks - s1.catch_up_walks;
        r->cu_visits += ss.visits;
        r->cu_reserve_uses += s1.add_reserve_uses - s0.add_reserve_uses;
        for (size_t i = 0; i < added; i++) { /* single-threaded: no reader, no grace period */
            CK_LIST_REMOVE(&spare[i], link);
            (void)swf_feature_release(S.feat, &spare[i]);
        }
    }
    return NULL;
}

/* ---- the benchmark bodies (parent) ----------------------------------------------------------- */

/* What the Markdown is made of: every repetition's result, per registered run. */
struct run {
    enum variant v;
    unsigned fail;
    size_t n, table;
    int nres;
    struct sresult res[MAX_REPS];
};

static struct run runs[64];
static int nruns;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n == 0)
        return 0;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double off_rate(const struct sresult *r)
{
    double s = r->phase_s[PH_OFF1] + r->phase_s[PH_OFF2];
    return s > 0 ? (double)(r->adds[PH_OFF1] + r->adds[PH_OFF2]) / s : 0;
}

static double on_rate(const struct sresult *r)
{
    return r->phase_s[PH_ON] > 0 ? (double)r->adds[PH_ON] / r->phase_s[PH_ON] : 0;
}

static double round_median(const struct sresult *r)
{
    double v[MAX_ROUNDS];
    memcpy(v, r->round_s, sizeof(v));
    return median(v, r->rounds);
}

static double round_cpu_median(const struct sresult *r)
{
    double v[MAX_ROUNDS];
    memcpy(v, r->round_cpu_s, sizeof(v));
    return median(v, r->rounds);
}

static void bm_steady(swfb_state *st)
{
    struct run *run = swfb_data(st);
    const char *msg = NULL;
    while (swfb_keep_running(st)) {
        memset(shared, 0, sizeof(*shared));
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            msg = "fork failed";
            break;
        }
        if (pid == 0) {
            const char *m = run->v == V_CATCH_UP ? catch_up_child(run->n, run->table, shared)
                                                 : steady_child(run->v, run->n, run->fail, shared);
            if (m != NULL && m != shared->msg)
                snprintf(shared->msg, sizeof(shared->msg), "%s", m);
            __atomic_store_n(&shared->done, 1, __ATOMIC_RELEASE);
            _exit(m != NULL);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (!__atomic_load_n(&shared->done, __ATOMIC_ACQUIRE)) {
            msg = "the measuring child died";
            break;
        }
        if (shared->msg[0] != '\0' || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            static char buf[240];
            snprintf(buf, sizeof(buf), "child: %s", shared->msg[0] ? shared->msg : "failed");
            msg = buf;
            break;
        }
        const struct sresult *r = shared;
        if (run->nres < MAX_REPS)
            run->res[run->nres++] = *r;
        swfb_set_iteration_time(st, run->v == V_CATCH_UP ? round_median(r) : r->phase_s[PH_ON]);
    }
    if (msg != NULL) {
        fprintf(stderr, "bench_steady: %s\n", msg);
        swfb_skip_with_error(st, msg);
        return;
    }
    if (run->nres == 0)
        return;
    const struct sresult *r = &run->res[run->nres - 1]; /* this repetition's */
    if (run->v == V_CATCH_UP) {
        double v[MAX_ROUNDS];
        memcpy(v, r->round_s, sizeof(v));
        double med = median(v, r->rounds);
        swfb_counter_set(st, "catch_up_median_s", med, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "catch_up_min_s", v[0], SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "catch_up_max_s", v[r->rounds - 1], SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "rounds", r->rounds, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "owed_per_round", OWED, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "filled_by_catch_up", (double)r->cu_filled, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "catch_up_walks", (double)r->cu_walks, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "walk_visits", (double)r->cu_visits, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "catch_up_cpu_median_s", round_cpu_median(r), SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "bare_walk_s", r->bare_walk_s, SWFB_COUNTER_PLAIN);
        swfb_set_label(st, run->table ? "owed table" : "no owed table: a walk");
        return;
    }
    double off = off_rate(r), on = on_rate(r);
    static const struct {
        const char *name;
        size_t off;
    } u64[] = {
        {"add_p99_ns_off", offsetof(struct sresult, p99_off)},
        {"add_p99_ns_on", offsetof(struct sresult, p99_on)},
        {"add_max_ns_off", offsetof(struct sresult, max_off)},
        {"add_max_ns_on", offsetof(struct sresult, max_on)},
        {"left_owed", offsetof(struct sresult, left_owed)},
        {"owed_untabled", offsetof(struct sresult, owed_untabled)},
        {"add_reserve_uses", offsetof(struct sresult, add_reserve_uses)},
        {"catch_ups", offsetof(struct sresult, catch_ups)},
        {"catch_up_walks", offsetof(struct sresult, catch_up_walks)},
        {"filled_by_catch_up", offsetof(struct sresult, filled)},
        {"maintains", offsetof(struct sresult, maintains)},
        {"fails_injected", offsetof(struct sresult, fails_injected)},
        {"catch_up_max_ns", offsetof(struct sresult, catch_up_max_ns)},
        {"maintain_max_ns", offsetof(struct sresult, maintain_max_ns)},
        {"tick_gap_max_ns", offsetof(struct sresult, tick_gap_max_ns)},
        {"members_end", offsetof(struct sresult, members_end)},
    };
    for (size_t i = 0; i < sizeof(u64) / sizeof(u64[0]); i++)
        swfb_counter_set(st, u64[i].name, (double)*(const uint64_t *)((const char *)r + u64[i].off),
                         SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "adds_per_s_off", off, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "adds_per_s_on", on, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "on_off_ratio", off > 0 ? on / off : 0, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "adds_on", (double)r->adds[PH_ON], SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "owed_share",
                     r->adds[PH_ON] ? (double)r->left_owed / (double)r->adds[PH_ON] : 0,
                     SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "activate_s", r->phase_s[PH_ACT], SWFB_COUNTER_PLAIN);
    swfb_set_label(st, run->v == V_URCU ? "liburcu memb + malloc" : "sweepfill");
}

/* ---- the Markdown ---------------------------------------------------------------------------- */

/* Median over a run's repetitions of f(result). */
static double med_of(const struct run *run, double (*f)(const struct sresult *))
{
    double v[MAX_REPS];
    for (int i = 0; i < run->nres; i++)
        v[i] = f(&run->res[i]);
    return median(v, run->nres);
}

/* med_of for a counter of struct sresult, by its name. */
static double med_field(const struct run *run, size_t off)
{
    double v[MAX_REPS];
    for (int i = 0; i < run->nres; i++)
        v[i] = (double)*(const uint64_t *)(const void *)((const char *)&run->res[i] + off);
    return median(v, run->nres);
}
#define MED(run, field) med_field(run, offsetof(struct sresult, field))

/* The smallest and largest of f over a run's repetitions: how far the median can be trusted. */
static void range_of(const struct run *run, double (*f)(const struct sresult *), double *lo,
                     double *hi)
{
    *lo = *hi = run->nres ? f(&run->res[0]) : 0;
    for (int i = 1; i < run->nres; i++) {
        double v = f(&run->res[i]);
        *lo = v < *lo ? v : *lo;
        *hi = v > *hi ? v : *hi;
    }
}

static double f_ratio(const struct sresult *r)
{
    return off_rate(r) > 0 ? on_rate(r) / off_rate(r) : 0;
}
static double f_share(const struct sresult *r)
{
    return r->adds[PH_ON] ? (double)r->left_owed / (double)r->adds[PH_ON] : 0;
}
static double f_act(const struct sresult *r)
{
    return r->phase_s[PH_ACT];
}

static const char *count_text(double v, char *buf, size_t len)
{
    if (v >= 1e6)
        snprintf(buf, len, "%.2fM", v / 1e6);
    else if (v >= 1e4)
        snprintf(buf, len, "%.0fk", v / 1e3);
    else
        snprintf(buf, len, "%.0f", v);
    return buf;
}

static uint64_t sum_adds_on(const struct run *run)
{
    uint64_t s = 0;
    for (int i = 0; i < run->nres; i++)
        s += run->res[i].adds[PH_ON];
    return s;
}

static uint64_t sum_owed(const struct run *run)
{
    uint64_t s = 0;
    for (int i = 0; i < run->nres; i++)
        s += run->res[i].left_owed;
    return s;
}

static const struct run *find_run(enum variant v, unsigned fail, size_t n)
{
    for (int i = 0; i < nruns; i++)
        if (runs[i].v == v && runs[i].fail == fail && runs[i].n == n && runs[i].nres > 0)
            return &runs[i];
    return NULL;
}

static void loadavg(double *out)
{
    FILE *f = fopen("/proc/loadavg", "r");
    if (f == NULL || fscanf(f, "%lf", out) != 1)
        *out = -1;
    if (f != NULL)
        fclose(f);
}

/* The load average before and after the run, and its seconds: the header's. */
static double load[2], run_seconds;

static void print_markdown(FILE *out)
{
    char a[32], b[32], c[32];
    fprintf(out, "\n## steady: adds while a feature stays on (bench_steady)\n\n");
    fprintf(out,
            "Host memory: %s. %ld cores, load average %.2f before and %.2f after the run (%.0f "
            "s); %d repetition(s) of %lld ms phases (off, on, off; the control thread ticks every "
            "1 ms); 64-byte objects; medians over the repetitions.%s\n",
            bench_host_state_name(bench_host_state), sysconf(_SC_NPROCESSORS_ONLN), load[0],
            load[1], run_seconds, opt.reps, (long long)opt.phase_ms,
            opt.quick ? " --quick: sizes below the goals' own, the verdicts say little." : "");
    fprintf(out,
            "\n| members | variant | NOWAIT failures | adds/s off | adds/s on | on / off (the "
            "runs' ratios) | add p99 "
            "off / on (ns) | add max off / on (us) | owed adds (share) | untabled | add reserve "
            "uses | catch-ups (walks) | longest catch-up (us) | longest maintain (us) | longest "
            "tick gap (ms) | activate (ms) |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nruns; i++) {
        const struct run *run = &runs[i];
        if (run->v == V_CATCH_UP || run->nres == 0)
            continue;
        char nb[32];
        double vs[MAX_REPS];
        for (int k = 0; k < run->nres; k++)
            vs[k] = off_rate(&run->res[k]);
        double off = median(vs, run->nres);
        for (int k = 0; k < run->nres; k++)
            vs[k] = on_rate(&run->res[k]);
        double on = median(vs, run->nres);
        bool swf = run->v == V_SWF;
        fprintf(out, "| %s | %s | %s | %s | %s | %.2f | %.0f / %.0f | %.1f / %.1f | ",
                count_text((double)run->n, nb, sizeof(nb)), swf ? "sweepfill" : "liburcu + malloc",
                swf ? (snprintf(c, sizeof(c), "%u %%", run->fail), c) : "- (malloc)",
                count_text(off, a, sizeof(a)), count_text(on, b, sizeof(b)), med_of(run, f_ratio),
                MED(run, p99_off), MED(run, p99_on), MED(run, max_off) / 1e3,
                MED(run, max_on) / 1e3);
        if (swf)
            fprintf(out,
                    "%.0f (%.4f %%) | %.0f | %.0f | %.0f (%.0f) | %.1f | %.1f | %.1f | %.1f |\n",
                    MED(run, left_owed), med_of(run, f_share) * 100, MED(run, owed_untabled),
                    MED(run, add_reserve_uses), MED(run, catch_ups), MED(run, catch_up_walks),
                    MED(run, catch_up_max_ns) / 1e3, MED(run, maintain_max_ns) / 1e3,
                    MED(run, tick_gap_max_ns) / 1e6, med_of(run, f_act) * 1e3);
        else
            fprintf(out, "- | - | - | - | - | - | - | %.1f |\n", med_of(run, f_act) * 1e3);
    }
    fprintf(out, "\nThe adder runs flat out, held to the closer's pace; its adds/s include its own "
                 "calloc and clock reads, off and on alike. A tick gap well above 1 ms is the "
                 "control thread waiting for a core: maintain and catch-up run late, and adds "
                 "meanwhile may find the headroom spent (owed).\n");
    fprintf(out,
            "\nA catch-up of %d owed members (median of the rounds):\n\n| members | owed table | "
            "catch-up median (us) | min / max (us) | its CPU, median (us) | rounds | filled from "
            "the table | walks | visits of the walks | a bare walk of the list (us) |\n"
            "|---|---|---|---|---|---|---|---|---|---|\n",
            OWED);
    for (int i = 0; i < nruns; i++) {
        const struct run *run = &runs[i];
        if (run->v != V_CATCH_UP || run->nres == 0)
            continue;
        const struct sresult *r = &run->res[0];
        double v[MAX_ROUNDS];
        memcpy(v, r->round_s, sizeof(v));
        double med = median(v, r->rounds);
        char nb[32];
        fprintf(out, "| %s | %s | %.1f | %.1f / %.1f | %.1f | %d | %llu | %llu | %llu | %.0f |\n",
                count_text((double)run->n, nb, sizeof(nb)),
                run->table ? (snprintf(a, sizeof(a), "%zu entries", run->table), a) : "0 (a walk)",
                med * 1e6, v[0] * 1e6, v[r->rounds - 1] * 1e6, round_cpu_median(r) * 1e6, r->rounds,
                (unsigned long long)r->cu_filled, (unsigned long long)r->cu_walks,
                (unsigned long long)r->cu_visits, r->bare_walk_s * 1e6);
    }

    /* The goals (bench/README.md, Goals), judged on the medians. */
    fprintf(out, "\nGoals:\n\n");
    for (int k = 0; k < opt.nmembers; k++) {
        size_t n = (size_t)opt.members[k];
        char nb[32];
        count_text((double)n, nb, sizeof(nb));
        const struct run *r0 = find_run(V_SWF, 0, n), *r1 = find_run(V_SWF, 1, n);
        if (r0 != NULL) {
            double share = med_of(r0, f_share), lo, hi;
            range_of(r0, f_share, &lo, &hi);
            fprintf(out,
                    "- owed adds at most 0.1 %% at 0 %% injection (%s members): %.4f %% (median of "
                    "%d runs, %.4f to %.4f %%; %llu owed of %llu adds in all): %s",
                    nb, share * 100, r0->nres, lo * 100, hi * 100, (unsigned long long)sum_owed(r0),
                    (unsigned long long)sum_adds_on(r0), share <= 0.001 ? "met" : "missed");
            if (share > 0.001)
                fprintf(out, ", %.1fx the goal", share / 0.001);
            fprintf(out, "\n");
            double ratio = med_of(r0, f_ratio);
            range_of(r0, f_ratio, &lo, &hi);
            fprintf(out,
                    "- adds while on at least 0.9x off at 0 %% (%s members): %.3fx (median of %d "
                    "runs, %.3fx to %.3fx; %llu adds on): %s",
                    nb, ratio, r0->nres, lo, hi, (unsigned long long)sum_adds_on(r0),
                    ratio >= 0.9 ? "met" : "missed");
            if (ratio < 0.9)
                fprintf(out, ", %.3fx short", 0.9 - ratio);
            fprintf(out, "\n");
        } else {
            fprintf(out,
                    "- owed adds at most 0.1 %% at 0 %% injection, adds on at least 0.9x off (%s "
                    "members): not measured (no 0 %% run)\n",
                    nb);
        }
        if (r1 != NULL) {
            double ratio = med_of(r1, f_ratio), lo, hi;
            range_of(r1, f_ratio, &lo, &hi);
            fprintf(out,
                    "- adds while on at least 0.5x off at 1 %% (%s members): %.3fx (median of %d "
                    "runs, %.3fx to %.3fx; %llu adds on): %s",
                    nb, ratio, r1->nres, lo, hi, (unsigned long long)sum_adds_on(r1),
                    ratio >= 0.5 ? "met" : "missed");
            if (ratio < 0.5)
                fprintf(out, ", %.3fx short", 0.5 - ratio);
            fprintf(out, "\n");
        } else {
            fprintf(out,
                    "- adds while on at least 0.5x off at 1 %% (%s members): not measured (no 1 %% "
                    "run)\n",
                    nb);
        }
    }
    const struct run *cu = NULL;
    for (int i = 0; i < nruns; i++)
        if (runs[i].v == V_CATCH_UP && runs[i].table != 0 && runs[i].nres > 0)
            cu = &runs[i];
    if (cu != NULL) {
        double med = round_median(&cu->res[0]);
        char nb[32];
        fprintf(out,
                "- a catch-up of %d owed members at 1,000,000 members within 1 ms: %.1f us at %s "
                "members (median of %d rounds): %s",
                OWED, med * 1e6, count_text((double)cu->n, nb, sizeof(nb)), cu->res[0].rounds,
                cu->n != 1000000 ? "not judged (not 1,000,000 members)"
                : med <= 1e-3    ? "met"
                                 : "missed");
        if (cu->n == 1000000 && med > 1e-3)
            fprintf(out, ", %.2fx the goal", med / 1e-3);
        fprintf(out, "\n");
    } else {
        fprintf(out,
                "- a catch-up of %d owed members at 1,000,000 members within 1 ms: not measured\n",
                OWED);
    }
}

/* ---- main ------------------------------------------------------------------------------------ */

static int parse_percent_list(const char *s, int64_t *out, int max)
{
    int k = 0;
    while (*s != '\0') {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 100 || k == max || (*end != ',' && *end != '\0'))
            return -1;
        out[k++] = v;
        s = *end == ',' ? end + 1 : end;
    }
    return k;
}

static int take_int(int *argc, char **argv, const char *name, int64_t *out, int64_t max)
{
    const char *v = bench_take_flag(argc, argv, name);
    int64_t x;
    if (v == NULL)
        return 0;
    if (bench_parse_list(v, &x, 1) != 1 || x > max) {
        fprintf(stderr, "bench_steady: --%s=%s: expected a number up to %lld\n", name, v,
                (long long)max);
        return -1;
    }
    *out = x;
    return 0;
}

int main(int argc, char **argv)
{
    const char *prog = "bench_steady";
    if (bench_take_flag(&argc, argv, "quick") != NULL) {
        opt.quick = true;
        opt.members[0] = 2000;
        opt.phase_ms = 30;
        opt.reps = 1;
        opt.catchup_members = 20000;
        opt.rounds = 3;
    }
    int64_t reps = opt.reps, rounds = opt.rounds;
    const char *fv = bench_take_flag(&argc, argv, "fail");
    if (fv != NULL && (opt.nfail = parse_percent_list(fv, opt.fail, MAX_ARGS)) <= 0) {
        fprintf(stderr, "%s: --fail=%s: expected a comma-separated list of percents\n", prog, fv);
        return 1;
    }
    if (bench_take_list_flag(&argc, argv, prog, "members", opt.members, MAX_ARGS, &opt.nmembers) !=
            0 ||
        take_int(&argc, argv, "phase-ms", &opt.phase_ms, 600000) != 0 ||
        take_int(&argc, argv, "reps", &reps, MAX_REPS) != 0 ||
        take_int(&argc, argv, "rounds", &rounds, MAX_ROUNDS) != 0 ||
        take_int(&argc, argv, "catchup-members", &opt.catchup_members, INT64_MAX) != 0)
        return 1;
    opt.reps = (int)reps;
    opt.rounds = (int)rounds;
    const char *md = bench_take_flag(&argc, argv, "md");
    bench_host_state = BENCH_HOST_WARM; /* the default; --host-memory says otherwise */
    if (bench_host_take_flags(&argc, argv, prog) != 0)
        return 1;
    shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED) {
        fprintf(stderr, "%s: mmap failed\n", prog);
        return 1;
    }
    char buf[64];
    swfb_add_context("host_memory", bench_host_state_name(bench_host_state));
    snprintf(buf, sizeof(buf), "%lld", (long long)opt.phase_ms);
    swfb_add_context("phase_ms", buf);
    swfb_add_context("control", "swf_feature_maintain, then swf_feature_catch_up, every 1 ms");
    swfb_add_context("members", "calloc'd each, CK_LIST (_AUTO adapter, swf_pin), ck_epoch");
    swfb_add_context("peer", "liburcu memb cds_list, glibc malloc for each object, call_rcu");

    for (int k = 0; k < opt.nmembers; k++)
        for (int j = -1; j < opt.nfail; j++) {
            struct run *run = &runs[nruns++];
            run->n = (size_t)opt.members[k];
            run->v = j < 0 ? V_URCU : V_SWF;
            run->fail = j < 0 ? 0 : (unsigned)opt.fail[j];
#ifndef STEADY_URCU
            if (run->v == V_URCU) {
                nruns--;
                continue;
            }
#endif
            char name[64];
            snprintf(name, sizeof(name), "steady/%s/fail:%u/members:%zu",
                     run->v == V_SWF ? "swf" : "urcu_malloc", run->fail, run->n);
            swfb_bench *b = swfb_register_data(name, bm_steady, run);
            swfb_bench_manual_time(b);
            swfb_bench_unit(b, SWFB_MS);
            swfb_bench_iterations(b, 1);
            swfb_bench_repetitions(b, opt.reps);
        }
    static const size_t tables[] = {SWF_FEATURE_OWED_TABLE_DEFAULT, 0};
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        struct run *run = &runs[nruns++];
        run->v = V_CATCH_UP;
        run->n = (size_t)opt.catchup_members;
        run->table = tables[i];
        char name[80];
        snprintf(name, sizeof(name), "steady/catch_up/owed_table:%zu/members:%zu", run->table,
                 run->n);
        swfb_bench *b = swfb_register_data(name, bm_steady, run);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_US);
        swfb_bench_iterations(b, 1);
        swfb_bench_repetitions(b, 1); /* the rounds inside give the median */
    }
    loadavg(&load[0]);
    uint64_t start = bench_now_ns();
    int rc = swfb_main(argc, argv);
    run_seconds = (double)(bench_now_ns() - start) * 1e-9;
    loadavg(&load[1]);
    fflush(stdout);
    FILE *out = md != NULL ? fopen(md, "w") : stdout;
    if (out == NULL) {
        fprintf(stderr, "%s: cannot write %s\n", prog, md);
        return 1;
    }
    print_markdown(out);
    if (out != stdout && fclose(out) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", prog, md);
        return 1;
    }
    return rc;
}
