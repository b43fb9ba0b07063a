/*
 * test/fuzz/fuzz_api.c - a libFuzzer harness for sweepfill's public API, checked against a
 * single-threaded reference model.
 *
 * Each input is decoded into a cache and a registry configuration followed by a sequence of
 * operations: cache allocations (NOWAIT, WAIT), frees, deferred frees and quiesce, grow, limit
 * changes, fault injection settings, flush; registry add, del, activate, deactivate,
 * synchronize and read walks; adds, removals and slot drops on a plain CK_LIST of members and
 * sweeps over it with every algorithm, publication mode, reserve, section bound and list
 * adapter (pinnable, unpinnable, unpinnable with a blocking-ok guard, array); calls with bad
 * arguments; and SWF_FAILSLAB specifications for the parser.
 *
 * The model knows, from the headers' contracts alone, what each call must return and what the
 * state must be afterwards. After every operation the harness compares: the errno-style result;
 * which members and nodes hold an object (each one initialised for its owner, none in two
 * places); the cache's counters (alive, allocations, failures by kind, frees, deferred frees),
 * with capacity monotonic, ready = capacity - alive and the limit respected; the registry's
 * counters; the sweep's statistics against the identities every run must satisfy (and exactly,
 * for BATCH_RESTART, whose walk the model replays); the fault injection schedule (interval,
 * times) when it is deterministic (probability 0 or 100); that no WAIT allocation happens
 * inside a read-side section unless the guard allows blocking; and conservation: alive ==
 * objects held + objects in slots + objects awaiting a grace period. Any difference aborts with
 * a message naming the operation, which libFuzzer reports as a crash.
 *
 * Where the model uses swf_cache_stats to learn what cannot be predicted (how many objects a
 * WAIT refill maps at once is not part of the contract), it uses only `ready` and `capacity`,
 * and only to decide which outcome the contract requires.
 */
#include <ck_epoch.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/sweepfill.h>

#include "../common/members.h"
#include "../common/one_cpu.h"

#define NP          40   /* members of the plain list */
#define NN          24   /* registry nodes */
#define NH          2048 /* objects the harness holds directly */
#define MAX_OPS     400  /* operations decoded from one input */
#define OBJ_CANARY  0x46555a5a4f424a21ull
#define HELD_CANARY 0x48454c4448454c44ull
#define UNLIMITED   UINT64_MAX

struct fobj {
    uint64_t canary;
    void *owner;
};

struct fnode {
    struct swf_node node;
    int released; /* release callbacks seen since the model last looked */
};

enum nstate { N_UNLINKED, N_LINKED, N_PENDING };

/* ---- one CPU ------------------------------------------------------------------------------- */

/* The model counts exactly which objects a NOWAIT allocation reaches: in the per-CPU mode only
 * those of the magazine of the CPU (or mm_cid) the thread runs on, so a migration between a free
 * and an allocation makes a NOWAIT fail with objects ready (cache.h, swf_cache_grow). The harness
 * keeps its process on the CPU it starts on, before libFuzzer starts its own threads, and its
 * model stays exact. SWF_FUZZ_MIGRATE=1 moves the thread to another allowed CPU before every
 * operation, as a loaded machine's scheduler may (run.sh replays the inputs that way): with the
 * process pinned there is nowhere to go. */
static bool migrate;

__attribute__((constructor)) static void fuzz_one_cpu(void)
{
    migrate = getenv("SWF_FUZZ_MIGRATE") != NULL && strcmp(getenv("SWF_FUZZ_MIGRATE"), "1") == 0;
    if (one_cpu_stay() >= 0)
        return;
    /* Nowhere to pin: the per-thread mode, where this one thread's reach is exact. */
    fprintf(stderr, "fuzz_api: cannot keep the process on one CPU; fuzzing the per-thread mode\n");
    setenv("SWF_PERCPU", "0", 1);
}

static void maybe_migrate(void)
{
    if (migrate)
        (void)one_cpu_migrate();
}

/* ---- the reference model -------------------------------------------------------------------- */

struct model {
    /* cache counters; the split ones are exact only while `split` holds (see the injection
     * notes below), the sums always */
    uint64_t alive, allocs_nowait, allocs_wait, fails_nowait, fails_injected, fails_wait;
    uint64_t frees, deferred_queued, deferred_pending;
    bool split;
    uint64_t limit, capacity_floor;
    /* fault injection, as swf_cache_set_failslab documents it */
    bool fs_on;
    unsigned int prob;
    unsigned long interval;
    long times;
    uint64_t calls;
    bool fs_exact; /* probability 0 or 100: every decision is known */
    /* registry */
    bool active, complete;
    enum nstate ns[NN];
    bool nobj[NN];     /* a linked node has an object */
    bool pobj_del[NN]; /* a pending node had an object when deleted */
    int order[NN];     /* linked nodes, head first */
    int norder;
    uint64_t activations, deactivations, by_add, by_sweep, unpublished, released;
    uint64_t reg_bound;
    size_t reg_reserve;
    /* the plain list */
    bool plinked[NP];
    int porder[NP];
    int nporder;
    void *pslot[NP]; /* what each member's slot must hold (NULL or the object seen last) */
};

struct harness {
    struct swf_cache *c;
    struct swf_registry *r;
    size_t object_size, align;
    struct member pm[NP];
    struct member_list plist;
    struct fnode nodes[NN];
    void *held[NH];
    int nheld;
    ck_epoch_t epoch;
    ck_epoch_record_t rec;
};

static struct model M;
static struct harness H;
static uint64_t inits; /* init callbacks, all kinds */
static int op_no;
static const char *op_name = "setup";

__attribute__((noreturn, format(printf, 3, 4))) static void fail_(int line, const char *cond,
                                                                  const char *fmt, ...)
{
    fprintf(stderr, "\nfuzz_api: operation %d (%s): check failed at %s:%d: %s\n  ", op_no, op_name,
            __FILE__, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

#define CHECK(cond, ...)                         \
    do {                                         \
        if (!(cond))                             \
            fail_(__LINE__, #cond, __VA_ARGS__); \
    } while (0)

/* ---- input decoding -------------------------------------------------------------------------- */

struct input {
    const uint8_t *p;
    size_t n;
};

static uint8_t u8(struct input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static uint16_t u16(struct input *in)
{
    uint16_t lo = u8(in);
    return (uint16_t)(lo | (uint16_t)u8(in) << 8);
}

/* ---- callbacks ------------------------------------------------------------------------------- */

static void fz_init(void *obj, void *owner, void *arg)
{
    (void)arg;
    struct fobj *o = obj;
    o->canary = OBJ_CANARY ^ (uint64_t)(uintptr_t)owner;
    o->owner = owner;
    inits++;
}

static bool fobj_ok(const void *obj, const void *owner)
{
    const struct fobj *o = obj;
    return o != NULL && o->canary == (OBJ_CANARY ^ (uint64_t)(uintptr_t)owner) && o->owner == owner;
}

/* The node is the harness's again: count it, and make it addable (registry.h). */
static void on_release(struct swf_node *n)
{
    ((struct fnode *)n)->released++;
    swf_node_init(n);
}

/* A guard that counts its sections and checks that nothing inside one makes a WAIT allocation
 * (blocking), unless it declares SWF_GUARD_BLOCKING_OK. */
struct cguard {
    int depth;
    uint64_t enters, leaves, waits_at_enter;
    bool blocking_ok;
};

static uint64_t wait_calls(void)
{
    struct swf_cache_stats s;
    swf_cache_stats(H.c, &s);
    return s.allocs_wait + s.fails_wait;
}

static void cg_enter(void *arg)
{
    struct cguard *g = arg;
    CHECK(g->depth == 0, "sections do not nest in a sweep");
    g->depth++;
    g->enters++;
    g->waits_at_enter = wait_calls();
}

static void cg_leave(void *arg)
{
    struct cguard *g = arg;
    CHECK(g->depth == 1, "leave without enter");
    g->depth--;
    g->leaves++;
    CHECK(g->blocking_ok || wait_calls() == g->waits_at_enter,
          "a WAIT allocation inside a read-side section");
}

/* ---- cache helpers --------------------------------------------------------------------------- */

static struct swf_cache_stats cstats(void)
{
    struct swf_cache_stats s;
    CHECK(swf_cache_stats(H.c, &s) == 0, "stats");
    return s;
}

/* Objects the cache can still hand out: ready ones plus what the limit lets it map. */
static uint64_t obtainable(const struct swf_cache_stats *s)
{
    if (M.limit == 0)
        return UNLIMITED;
    return s->ready + (M.limit > s->capacity ? M.limit - s->capacity : 0);
}

/* The failslab decision for the next NOWAIT call: 1 injected, 0 not, -1 not known (a
 * probability strictly between 0 and 100). Advances the call numbering as the cache does. */
static int next_injection(void)
{
    if (!M.fs_on)
        return 0;
    uint64_t k = M.calls++;
    if (M.interval > 1 && k % M.interval != M.interval - 1)
        return 0;
    if (!M.fs_exact)
        return -1;
    if (M.times == 0)
        return 0;
    if (M.times > 0)
        M.times--;
    return 1;
}

static void check_cache_counters(void)
{
    struct swf_cache_stats s = cstats();
    CHECK(s.alive == M.alive, "alive %" PRIu64 ", model %" PRIu64, s.alive, M.alive);
    CHECK(s.allocs_nowait + s.allocs_wait == M.allocs_nowait + M.allocs_wait,
          "allocations %" PRIu64 " + %" PRIu64 ", model %" PRIu64 " + %" PRIu64, s.allocs_nowait,
          s.allocs_wait, M.allocs_nowait, M.allocs_wait);
    CHECK(s.fails_nowait + s.fails_injected == M.fails_nowait + M.fails_injected,
          "NOWAIT failures %" PRIu64 " + %" PRIu64 " injected, model %" PRIu64 " + %" PRIu64,
          s.fails_nowait, s.fails_injected, M.fails_nowait, M.fails_injected);
    if (M.split) {
        CHECK(s.allocs_nowait == M.allocs_nowait && s.allocs_wait == M.allocs_wait,
              "NOWAIT/WAIT allocations %" PRIu64 "/%" PRIu64 ", model %" PRIu64 "/%" PRIu64,
              s.allocs_nowait, s.allocs_wait, M.allocs_nowait, M.allocs_wait);
        CHECK(s.fails_injected == M.fails_injected, "injected failures %" PRIu64 ", model %" PRIu64,
              s.fails_injected, M.fails_injected);
    }
    CHECK(s.fails_wait == M.fails_wait, "WAIT failures %" PRIu64 ", model %" PRIu64, s.fails_wait,
          M.fails_wait);
    CHECK(s.frees == M.frees, "frees %" PRIu64 ", model %" PRIu64, s.frees, M.frees);
    CHECK(s.deferred_queued == M.deferred_queued && s.deferred_pending == M.deferred_pending,
          "deferred %" PRIu64 "/%" PRIu64 ", model %" PRIu64 "/%" PRIu64, s.deferred_queued,
          s.deferred_pending, M.deferred_queued, M.deferred_pending);
    CHECK(s.capacity >= M.capacity_floor, "capacity shrank: %" PRIu64 " < %" PRIu64, s.capacity,
          M.capacity_floor);
    CHECK(M.limit == 0 || s.capacity <= M.limit || s.capacity == M.capacity_floor,
          "capacity %" PRIu64 " grew past the limit %" PRIu64, s.capacity, M.limit);
    CHECK(s.ready == s.capacity - s.alive, "ready %" PRIu64 " != capacity %" PRIu64 " - alive",
          s.ready, s.capacity);
    CHECK(s.limit == M.limit, "limit %" PRIu64 ", model %" PRIu64, s.limit, M.limit);
    CHECK(s.object_size == H.object_size && s.stride >= H.object_size &&
              (H.align == 0 || s.stride % H.align == 0),
          "object size %" PRIu64 ", stride %" PRIu64, s.object_size, s.stride);
    M.capacity_floor = s.capacity;
}

static void check_aligned(const void *obj)
{
    size_t a = H.align;
    if (a == 0) { /* natural: the largest power of two dividing the size, 8 .. 16 */
        a = H.object_size & (~H.object_size + 1);
        a = a < 8 ? 8 : a > 16 ? 16 : a;
    }
    CHECK((uintptr_t)obj % a == 0, "object %p not aligned to %zu", obj, a);
}

static void hold(void *obj)
{
    check_aligned(obj);
    *(uint64_t *)obj = HELD_CANARY ^ (uint64_t)(uintptr_t)obj;
    H.held[H.nheld++] = obj;
}

static void *unhold(int i)
{
    void *obj = H.held[i];
    CHECK(*(uint64_t *)obj == (HELD_CANARY ^ (uint64_t)(uintptr_t)obj),
          "a held object was overwritten");
    H.held[i] = H.held[--H.nheld];
    return obj;
}

/* ---- registry helpers --------------------------------------------------------------------- */

static void order_remove(int *order, int *n, int x)
{
    for (int i = 0; i < *n; i++)
        if (order[i] == x) {
            memmove(&order[i], &order[i + 1], (size_t)(*n - i - 1) * sizeof(int));
            (*n)--;
            return;
        }
    CHECK(0, "model: %d not on its list", x);
}

static void order_push_front(int *order, int *n, int x)
{
    memmove(&order[1], &order[0], (size_t)*n * sizeof(int));
    order[0] = x;
    (*n)++;
}

/* Take note of release callbacks: the node's object went back to the cache. */
static void reconcile_releases(void)
{
    for (int i = 0; i < NN; i++) {
        int rel = H.nodes[i].released;
        if (rel == 0)
            continue;
        CHECK(rel == 1 && M.ns[i] == N_PENDING, "node %d released %d times (state %d)", i, rel,
              M.ns[i]);
        CHECK(swf_node_object(&H.nodes[i].node) == NULL, "released node %d keeps an object", i);
        H.nodes[i].released = 0;
        M.ns[i] = N_UNLINKED;
        if (M.pobj_del[i]) {
            M.alive--;
            M.frees++;
        }
        M.pobj_del[i] = false;
        M.released++;
    }
}

static int pending_nodes(void)
{
    int n = 0;
    for (int i = 0; i < NN; i++)
        n += M.ns[i] == N_PENDING;
    return n;
}

static void check_registry(void)
{
    struct swf_registry_stats rs;
    CHECK(swf_registry_stats(H.r, &rs) == 0, "registry stats");
    CHECK(rs.members == (uint64_t)M.norder && rs.active == M.active &&
              rs.activations == M.activations && rs.deactivations == M.deactivations,
          "registry: %" PRIu64 " members, active %u, %" PRIu64 " activations, %" PRIu64
          " deactivations; model %d, %d, %" PRIu64 ", %" PRIu64,
          rs.members, rs.active, rs.activations, rs.deactivations, M.norder, M.active,
          M.activations, M.deactivations);
    CHECK(rs.assigned_by_add == M.by_add && rs.assigned_by_sweep == M.by_sweep &&
              rs.lost_races == 0 && rs.unpublished == M.unpublished,
          "registry: by add %" PRIu64 ", by sweep %" PRIu64 ", lost %" PRIu64
          ", unpublished %" PRIu64 "; model %" PRIu64 ", %" PRIu64 ", 0, %" PRIu64,
          rs.assigned_by_add, rs.assigned_by_sweep, rs.lost_races, rs.unpublished, M.by_add,
          M.by_sweep, M.unpublished);
    CHECK(rs.released == M.released && rs.pending_release == (uint64_t)pending_nodes(),
          "registry: released %" PRIu64 ", pending %" PRIu64 "; model %" PRIu64 ", %d", rs.released,
          rs.pending_release, M.released, pending_nodes());
    CHECK(rs.cursor_restarts == 0 && (M.reg_bound == 0 || rs.longest_section <= M.reg_bound),
          "registry: %" PRIu64 " cursor restarts, longest section %" PRIu64, rs.cursor_restarts,
          rs.longest_section);
}

/* A read section: the members in the model's order, each with its own object or none. */
static void registry_walk(void)
{
    struct swf_reader *rd = swf_registry_read_lock(H.r);
    CHECK(rd != NULL, "read_lock");
    struct swf_node *n;
    int k = 0;
    SWF_REGISTRY_FOREACH(H.r, n)
    {
        CHECK(k < M.norder && n == &H.nodes[M.order[k]].node, "walk: position %d is not node %d", k,
              k < M.norder ? M.order[k] : -1);
        void *obj = swf_node_object(n);
        int i = M.order[k];
        CHECK(M.nobj[i] ? fobj_ok(obj, n) : obj == NULL, "walk: node %d object %p (model: %s)", i,
              obj, M.nobj[i] ? "one of its own" : "none");
        k++;
    }
    swf_registry_read_unlock(rd);
    CHECK(k == M.norder, "walk: %d members, model %d", k, M.norder);
}

/* ---- sweeps --------------------------------------------------------------------------------- */

struct sweep_expect {
    int err;
    uint64_t assigned;
    bool batch_exact;
    uint64_t passes, visits, refills, already;
};

/* What a sweep over `order` (n members, `set` telling which slots are set) must do, given R
 * and what the cache can still hand out. RESUME and RESTART take objects only for members that
 * need one, so they fail exactly when the need exceeds what is obtainable, having assigned all
 * of it to the first empty members in list order. BATCH_RESTART checks its batch before looking
 * at a member (swf_sweep(3): "on reaching a member with the reserve used up, leave, refill"), so
 * the model replays its walk - including a refill that comes back empty: the walk then goes on from
 * the head without a reserve and fails only at a member that needs an object (swf_sweep(3)).
 * fill[] receives the members that get an object. */
static struct sweep_expect expect_sweep(enum swf_algo algo, const bool *set, int n, size_t R,
                                        uint64_t avail, bool *fill)
{
    struct sweep_expect e = {0, 0, false, 0, 0, 0, 0};
    uint64_t need = 0;
    for (int i = 0; i < n; i++) {
        fill[i] = false;
        need += !set[i];
    }
    if (algo != SWF_BATCH_RESTART) {
        e.assigned = need <= avail ? need : avail;
        e.err = need <= avail ? 0 : ENOMEM;
        uint64_t given = 0;
        for (int i = 0; i < n && given < e.assigned; i++)
            if (!set[i]) {
                fill[i] = true;
                given++;
            }
        return e;
    }
    e.batch_exact = true;
    uint64_t nres = R < avail ? R : avail;
    avail -= nres;
    e.passes = 1;
    bool exhausted = false; /* a batch refill came back empty: walk on without a reserve */
    for (int i = 0; i < n;) {
        e.visits++;
        if (nres == 0 && (!exhausted || !(set[i] || fill[i]))) {
            e.refills++;
            e.passes++; /* counted as a restart even when the refill comes back empty */
            uint64_t got = R < avail ? R : avail;
            avail -= got;
            if (got == 0 && exhausted) {
                e.err = ENOMEM; /* this member needs an object and none is to be had */
                return e;
            }
            exhausted = got == 0;
            nres = got;
            i = 0;
            continue;
        }
        if (set[i] || fill[i]) {
            e.already++;
        } else {
            fill[i] = true;
            nres--;
            e.assigned++;
        }
        i++;
    }
    return e;
}

/* The identities every sweep's statistics satisfy, single-threaded. */
static void check_sweep_stats(const struct swf_sweep_stats *st, const struct sweep_expect *e,
                              enum swf_algo algo, bool can_pin, bool blocking_ok, size_t bound,
                              int n, uint64_t preset, const struct cguard *g)
{
    bool resumable = algo == SWF_RESUME && (can_pin || blocking_ok);
    CHECK(st->assigned == e->assigned && st->lost_races == 0,
          "sweep assigned %" PRIu64 " (model %" PRIu64 "), %" PRIu64 " lost races", st->assigned,
          e->assigned, st->lost_races);
    CHECK(st->passes == st->restarts + 1, "passes %" PRIu64 ", restarts %" PRIu64, st->passes,
          st->restarts);
    CHECK(st->visits == st->assigned + st->already_set + st->refills,
          "visits %" PRIu64 " != assigned %" PRIu64 " + already set %" PRIu64 " + refills %" PRIu64,
          st->visits, st->assigned, st->already_set, st->refills);
    CHECK(st->restarts == (resumable ? 0 : st->refills), "restarts %" PRIu64 ", refills %" PRIu64,
          st->restarts, st->refills);
    CHECK(st->fell_back == (algo == SWF_RESUME && !can_pin && !blocking_ok), "fell_back %u",
          st->fell_back);
    CHECK(st->inplace_refills == (algo == SWF_RESUME && !can_pin && blocking_ok ? st->refills : 0),
          "in-place refills %" PRIu64 " of %" PRIu64, st->inplace_refills, st->refills);
    if (algo == SWF_BATCH_RESTART)
        CHECK(st->nowait_failures == 0 && st->reserve_uses == st->assigned,
              "BATCH_RESTART: %" PRIu64 " NOWAIT failures, %" PRIu64 " from the reserve",
              st->nowait_failures, st->reserve_uses);
    else
        CHECK(st->reserve_uses <= st->nowait_failures && st->reserve_uses <= st->assigned,
              "%" PRIu64 " from the reserve, %" PRIu64 " NOWAIT failures", st->reserve_uses,
              st->nowait_failures);
    if (e->batch_exact)
        CHECK(st->passes == e->passes && st->visits == e->visits && st->refills == e->refills &&
                  st->already_set == e->already,
              "BATCH_RESTART: passes %" PRIu64 " visits %" PRIu64 " refills %" PRIu64
              " already %" PRIu64 "; model %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
              st->passes, st->visits, st->refills, st->already_set, e->passes, e->visits,
              e->refills, e->already);
    if (resumable && e->err == 0)
        CHECK(st->visits == (uint64_t)n + st->refills && st->already_set == preset,
              "one pass: %" PRIu64 " visits for %d members and %" PRIu64 " refills", st->visits, n,
              st->refills);
    if (bound != 0)
        CHECK(st->longest_section <= bound, "longest section %" PRIu64 " > bound %zu",
              st->longest_section, bound);
    if (g != NULL)
        CHECK(g->enters == st->sections && g->leaves == g->enters && g->depth == 0,
              "guard: %" PRIu64 " enters, %" PRIu64 " leaves, stats say %" PRIu64 " sections",
              g->enters, g->leaves, st->sections);
}

/* After a sweep (plain or the registry's): check the cache's deltas against what the sweep did
 * and update the cache model. The cache counts every NOWAIT call as a success or a failure of
 * one kind, so the number of calls - and with it the fault injection schedule - is known even
 * when the caller asked for no statistics (st NULL). */
static void account_sweep(const struct swf_cache_stats *b, const struct swf_sweep_stats *st,
                          enum swf_algo algo, uint64_t assigned)
{
    struct swf_cache_stats a = cstats();
    uint64_t nowait_ok = a.allocs_nowait - b->allocs_nowait;
    uint64_t nowait_failed =
        (a.fails_nowait + a.fails_injected) - (b->fails_nowait + b->fails_injected);
    uint64_t wait = a.allocs_wait - b->allocs_wait, freed = a.frees - b->frees;
    CHECK(nowait_ok + wait - freed == assigned,
          "objects: %" PRIu64 " NOWAIT + %" PRIu64 " WAIT - %" PRIu64 " returned != %" PRIu64
          " assigned",
          nowait_ok, wait, freed, assigned);
    if (algo == SWF_BATCH_RESTART)
        CHECK(nowait_ok == 0 && nowait_failed == 0, "BATCH_RESTART made NOWAIT calls");
    if (st != NULL) {
        /* The sweep takes NOWAIT objects in batches (SWF_SWEEP_BATCH_, one object at a time
         * while injection is on) and returns what is left of the last one: those objects count
         * once as NOWAIT allocations and once as frees, beside the reserve's leftovers. */
        uint64_t nowait_used = algo == SWF_BATCH_RESTART ? 0 : st->assigned - st->reserve_uses;
        CHECK(nowait_ok >= nowait_used && nowait_ok - nowait_used <= SWF_SWEEP_BATCH_ &&
                  nowait_ok - nowait_used + (wait - st->reserve_uses) == freed,
              "the sweep's NOWAIT allocations: cache %" PRIu64 ", sweep %" PRIu64 " - %" PRIu64
              ", %" PRIu64 " WAIT, %" PRIu64 " returned",
              nowait_ok, st->assigned, st->reserve_uses, wait, freed);
        /* One NOWAIT call per member while injection is on; otherwise a batch that comes back
         * empty counts every entry it asked for as a failed call, and the sweep one member. */
        CHECK(M.fs_on ? nowait_failed == st->nowait_failures : nowait_failed >= st->nowait_failures,
              "the sweep's NOWAIT failures: cache %" PRIu64 ", sweep %" PRIu64, nowait_failed,
              st->nowait_failures);
        CHECK(wait >= st->reserve_uses, "reserve: %" PRIu64 " WAIT allocations, %" PRIu64 " used",
              wait, st->reserve_uses);
    }
    uint64_t calls = nowait_ok + nowait_failed, injected = 0;
    bool known = true;
    for (uint64_t i = 0; i < calls; i++) {
        int d = next_injection();
        if (d < 0)
            known = false;
        else
            injected += (uint64_t)d;
    }
    uint64_t inj_delta = a.fails_injected - b->fails_injected;
    if (known)
        CHECK(inj_delta == injected,
              "%" PRIu64 " NOWAIT calls: %" PRIu64 " injected failures, the schedule says %" PRIu64,
              calls, inj_delta, injected);
    else
        M.split = false;
    M.allocs_nowait += nowait_ok;
    M.allocs_wait += wait;
    M.fails_injected += inj_delta;
    M.fails_nowait += nowait_failed - inj_delta;
    M.frees += freed;
    M.fails_wait = a.fails_wait; /* how often a refill comes short is not in the contract */
    M.alive += assigned;
}

static const struct swf_list_ops *adapter_ops(int adapter)
{
    return adapter == 0 ? &mlp_ops : adapter == 3 ? &swf_array_ops : &ml_ops;
}

static void op_sweep(struct input *in)
{
    uint8_t a = u8(in), p = u8(in), rb = u8(in), kb = u8(in), ad = u8(in);
    enum swf_algo algo = a % 4 == 3 ? (enum swf_algo)7 : (enum swf_algo)(a % 4);
    enum swf_publish pub = p % 3 == 2 ? (enum swf_publish)9 : (enum swf_publish)(p % 3);
    size_t R = rb == 255 ? SWF_SWEEP_RESERVE_MAX + 1 : rb % 101;
    size_t bound = kb % 5;
    int adapter = ad % 4;
    bool with_stats = !(ad & 0x80);
    bool blocking_ok = adapter == 2;
    bool can_pin = adapter == 0 || adapter == 3;
    struct swf_array arr = {H.pm, NP, sizeof(struct member)};

    struct cguard g = {0, 0, 0, 0, blocking_ok};
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = adapter == 3   ? swf_list_array(&arr, offsetof(struct member, slot))
               : adapter == 0 ? mlp_list(&H.plist)
                              : ml_list(&H.plist);
    cfg.cache = H.c;
    cfg.reserve = R;
    cfg.init = fz_init;
    /* The counting guard, or one of the ready-made ones (bits 5-6 of the adapter byte). */
    pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
    int guard = (ad >> 5) & 3;
    cfg.guard = (struct swf_guard){cg_enter, cg_leave, &g, 0};
    if (guard == 1)
        swf_guard_none(&cfg.guard);
    else if (guard == 2)
        swf_guard_epoch(&cfg.guard, &H.rec);
    else if (guard == 3)
        swf_guard_rwlock(&cfg.guard, &lock);
    if (blocking_ok)
        cfg.guard.flags |= SWF_GUARD_BLOCKING_OK;
    cfg.section_bound = bound;
    cfg.publish = pub;
    cfg.algo = algo;
    CHECK(cfg.list.ops == adapter_ops(adapter), "adapter");

    bool valid = (algo == SWF_RESUME || algo == SWF_RESTART || algo == SWF_BATCH_RESTART) &&
                 (pub == SWF_PUBLISH_STORE || pub == SWF_PUBLISH_CAS) && R >= 1 &&
                 R <= SWF_SWEEP_RESERVE_MAX && (bound == 0 || can_pin);

    /* The walk order and which slots are set. */
    int order[NP], n = 0;
    if (adapter == 3)
        for (int i = 0; i < NP; i++)
            order[n++] = i;
    else
        for (int i = 0; i < M.nporder; i++)
            order[n++] = M.porder[i];
    bool set[NP], fill[NP];
    uint64_t preset = 0;
    for (int i = 0; i < n; i++) {
        set[i] = M.pslot[order[i]] != NULL;
        preset += set[i];
    }
    struct swf_cache_stats before = cstats();
    struct sweep_expect e = {EINVAL, 0, false, 0, 0, 0, 0};
    if (valid)
        e = expect_sweep(algo, set, n, R, obtainable(&before), fill);
    uint64_t inits_before = inits;
    struct swf_sweep_stats st;
    int err = swf_sweep(&cfg, with_stats ? &st : NULL);
    CHECK(err == e.err,
          "swf_sweep (algo %d, publish %d, reserve %zu, bound %zu, adapter %d) "
          "returned %d, model %d",
          (int)algo, (int)pub, R, bound, adapter, err, e.err);
    for (int i = 0; i < NP; i++)
        CHECK(H.pm[i].pins == 0, "member %d left pinned", i);
    if (!valid) {
        struct swf_cache_stats after = cstats();
        CHECK(after.allocs_wait == before.allocs_wait &&
                  after.allocs_nowait == before.allocs_nowait,
              "a rejected sweep allocated");
        CHECK(g.enters == 0, "a rejected sweep entered its section");
        return;
    }
    for (int i = 0; i < n; i++) {
        int m = order[i];
        void *now = H.pm[m].slot;
        if (set[i])
            CHECK(now == M.pslot[m], "member %d: a set slot changed", m);
        else if (fill[i])
            CHECK(fobj_ok(now, &H.pm[m]), "member %d: no valid object after the sweep", m);
        else
            CHECK(now == NULL, "member %d: filled, the model says it stays empty", m);
        if (fill[i]) {
            check_aligned(now);
            M.pslot[m] = now;
        }
    }
    CHECK(inits - inits_before == e.assigned, "init ran %" PRIu64 " times for %" PRIu64 " objects",
          inits - inits_before, e.assigned);
    if (with_stats)
        check_sweep_stats(&st, &e, algo, can_pin, blocking_ok, bound, n, preset,
                          guard == 0 ? &g : NULL);
    if (guard == 2)
        CHECK(H.rec.active == 0, "the epoch guard left its record inside a section");
    if (guard == 3) {
        CHECK(pthread_rwlock_trywrlock(&lock) == 0, "the rwlock guard left its lock held");
        pthread_rwlock_unlock(&lock);
    }
    account_sweep(&before, with_stats ? &st : NULL, algo, e.assigned);
    CHECK(g.depth == 0 && g.enters == g.leaves, "unbalanced sections");
}

/* ---- registry operations --------------------------------------------------------------------- */

static void op_add(int i)
{
    struct swf_node *n = &H.nodes[i].node;
    int want = M.ns[i] == N_LINKED ? EEXIST : M.ns[i] == N_PENDING ? EBUSY : 0;
    bool obj = false;
    struct swf_cache_stats s = cstats();
    int inj = 0;
    bool nowait_ok = false, wait_ok = false;
    if (want == 0 && M.active) {
        inj = next_injection();
        nowait_ok = inj == 0 && s.ready > 0;
        wait_ok = s.ready > 0 || M.limit == 0 || s.capacity < M.limit;
        if (!nowait_ok && !wait_ok)
            want = ENOMEM;
        obj = want == 0;
    }
    uint64_t inits_before = inits;
    int err = swf_registry_add(H.r, n);
    CHECK(err == want, "add(node %d) returned %d, model %d", i, err, want);
    if (M.active && (want == 0 || want == ENOMEM)) {
        if (inj < 0) {
            M.split = false;
            struct swf_cache_stats a = cstats();
            M.allocs_nowait += a.allocs_nowait - s.allocs_nowait;
            M.allocs_wait += a.allocs_wait - s.allocs_wait;
            M.fails_nowait += a.fails_nowait - s.fails_nowait;
            M.fails_injected += a.fails_injected - s.fails_injected;
            M.fails_wait += a.fails_wait - s.fails_wait;
        } else if (nowait_ok) {
            M.allocs_nowait++;
        } else {
            if (inj == 1)
                M.fails_injected++;
            else
                M.fails_nowait++;
            if (wait_ok)
                M.allocs_wait++;
            else
                M.fails_wait++;
        }
    }
    if (err != 0)
        return;
    M.ns[i] = N_LINKED;
    M.nobj[i] = obj;
    order_push_front(M.order, &M.norder, i);
    CHECK(inits - inits_before == (obj ? 1u : 0u), "add: init ran %" PRIu64 " times",
          inits - inits_before);
    CHECK(obj ? fobj_ok(swf_node_object(n), n) : swf_node_object(n) == NULL,
          "add: node %d object %p", i, swf_node_object(n));
    if (obj) {
        M.alive++;
        M.by_add++;
    }
}

static void op_del(int i)
{
    int want = M.ns[i] == N_LINKED ? 0 : ENOENT;
    int err = swf_registry_del(H.r, &H.nodes[i].node, on_release);
    CHECK(err == want, "del(node %d) returned %d, model %d", i, err, want);
    if (err != 0)
        return;
    M.ns[i] = N_PENDING;
    M.pobj_del[i] = M.nobj[i];
    M.nobj[i] = false;
    order_remove(M.order, &M.norder, i);
}

static void op_activate(bool with_stats)
{
    struct swf_cache_stats before = cstats();
    bool set[NN], fill[NN];
    uint64_t preset = 0;
    for (int k = 0; k < M.norder; k++) {
        set[k] = M.nobj[M.order[k]];
        preset += set[k];
    }
    struct sweep_expect e = {EALREADY, 0, false, 0, 0, 0, 0};
    if (!(M.active && M.complete))
        e = expect_sweep(SWF_RESUME, set, M.norder, M.reg_reserve, obtainable(&before), fill);
    uint64_t inits_before = inits;
    struct swf_sweep_stats st;
    memset(&st, 0, sizeof(st));
    int err = swf_registry_activate(H.r, with_stats ? &st : NULL);
    CHECK(err == e.err, "activate returned %d, model %d", err, e.err);
    if (err == EALREADY)
        return;
    M.active = true;
    M.complete = err == 0;
    M.activations += err == 0;
    for (int k = 0; k < M.norder; k++)
        if (fill[k]) {
            int i = M.order[k];
            CHECK(fobj_ok(swf_node_object(&H.nodes[i].node), &H.nodes[i].node),
                  "activate: node %d has no valid object", i);
            M.nobj[i] = true;
        }
    CHECK(inits - inits_before == e.assigned, "activate: init ran %" PRIu64 " times",
          inits - inits_before);
    M.by_sweep += e.assigned;
    if (with_stats)
        check_sweep_stats(&st, &e, SWF_RESUME, true, false, M.reg_bound, M.norder, preset, NULL);
    account_sweep(&before, with_stats ? &st : NULL, SWF_RESUME, e.assigned);
}

static void op_deactivate(void)
{
    int want = M.active ? 0 : EALREADY;
    int err = swf_registry_deactivate(H.r);
    CHECK(err == want, "deactivate returned %d, model %d", err, want);
    if (err != 0)
        return;
    uint64_t taken = 0;
    for (int k = 0; k < M.norder; k++) {
        int i = M.order[k];
        CHECK(swf_node_object(&H.nodes[i].node) == NULL, "deactivate left node %d an object", i);
        taken += M.nobj[i];
        M.nobj[i] = false;
    }
    M.active = M.complete = false;
    M.deactivations++;
    M.unpublished += taken;
    M.deferred_queued += taken; /* freed after the grace period deactivate waits for */
    M.frees += taken;
    M.alive -= taken;
    reconcile_releases();
    CHECK(pending_nodes() == 0, "deactivate's grace period left %d deleted nodes unreleased",
          pending_nodes());
}

static void op_synchronize(void)
{
    CHECK(swf_registry_synchronize(H.r) == 0, "synchronize");
    reconcile_releases();
    CHECK(pending_nodes() == 0, "synchronize left %d deleted nodes unreleased", pending_nodes());
}

/* Read sections on many registries at once from this thread. A thread keeps its reader records
 * in 16 TLS ways chosen by owner id, so with 16 more registries alive one of them takes the way
 * of H.r's reader while a section on H.r is open: that record must stay registered until the
 * section ends (registry.c: detached), a nested section on H.r must still work, and afterwards a
 * grace period on H.r must not wait for any section (a record left active would make
 * synchronize hang, which libFuzzer reports as a timeout). */
static void op_readers(uint8_t b)
{
    enum { EXTRA = 19 };
    int k = 16 + b % 4;
    struct swf_registry *extra[EXTRA];
    struct swf_reader *rd[EXTRA];
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = H.c;
    rc.init = fz_init;
    for (int i = 0; i < k; i++)
        CHECK(swf_registry_create(&rc, &extra[i]) == 0, "extra registry %d", i);
    struct swf_reader *outer = swf_registry_read_lock(H.r);
    CHECK(outer != NULL, "read_lock");
    for (int i = 0; i < k; i++) {
        rd[i] = swf_registry_read_lock(extra[i]);
        CHECK(rd[i] != NULL && swf_registry_first(extra[i]) == NULL, "read_lock(extra %d)", i);
        if (b & 0x10)
            swf_registry_read_unlock(rd[i]);
    }
    registry_walk(); /* a nested section on H.r, on whatever record this thread has for it now */
    if (!(b & 0x10))
        for (int i = 0; i < k; i++)
            swf_registry_read_unlock(rd[(b & 0x20) ? i : k - 1 - i]);
    if (b & 0x40)
        registry_walk();
    swf_registry_read_unlock(outer);
    op_synchronize();
    for (int i = 0; i < k; i++) {
        CHECK(swf_registry_synchronize(extra[i]) == 0, "synchronize(extra %d)", i);
        CHECK(swf_registry_destroy(extra[i]) == 0, "destroy(extra %d)", i);
    }
    registry_walk();
}

/* ---- cache operations ------------------------------------------------------------------------ */

static void op_alloc_nowait(void)
{
    if (H.nheld == NH)
        return;
    struct swf_cache_stats s = cstats();
    int inj = next_injection();
    errno = 0;
    void *obj = swf_cache_alloc(H.c, SWF_NOWAIT);
    int e = errno;
    if (inj == 1)
        CHECK(obj == NULL && e == EAGAIN, "NOWAIT: an injected failure returned %p (errno %d)", obj,
              e);
    else if (inj == 0 || s.ready == 0)
        CHECK((obj != NULL) == (s.ready > 0 && inj == 0) && (obj != NULL || e == EAGAIN),
              "NOWAIT with %" PRIu64 " ready returned %p (errno %d)", s.ready, obj, e);
    if (obj != NULL) {
        M.allocs_nowait++;
        M.alive++;
        hold(obj);
        return;
    }
    CHECK(e == EAGAIN, "NOWAIT failed with errno %d", e);
    if (inj == 1 || (inj < 0 && s.ready > 0)) {
        M.fails_injected++;
    } else if (inj == 0) {
        M.fails_nowait++;
    } else {
        struct swf_cache_stats a = cstats(); /* injected or empty: the model cannot tell */
        M.fails_injected += a.fails_injected - s.fails_injected;
        M.fails_nowait += a.fails_nowait - s.fails_nowait;
        M.split = false;
    }
}

static void op_alloc_wait(void)
{
    if (H.nheld == NH)
        return;
    struct swf_cache_stats s = cstats();
    bool can = s.ready > 0 || M.limit == 0 || s.capacity < M.limit;
    errno = 0;
    void *obj = swf_cache_alloc(H.c, SWF_WAIT);
    CHECK((obj != NULL) == can && (obj != NULL || errno == ENOMEM),
          "WAIT with %" PRIu64 " ready, capacity %" PRIu64 ", limit %" PRIu64
          " returned %p (errno %d)",
          s.ready, s.capacity, M.limit, obj, errno);
    if (obj == NULL) {
        M.fails_wait++;
        return;
    }
    M.allocs_wait++;
    M.alive++;
    hold(obj);
}

/* Many allocations or frees in a row: enough to fill and swap magazines, go to the depot and,
 * with the spare empty magazines used up, to the loose list. */
static void op_alloc_burst(uint8_t b)
{
    int k = 1 + (b & 0x7f) * 8;
    for (int i = 0; i < k && H.nheld < NH; i++) {
        if (b & 0x80)
            op_alloc_wait();
        else
            op_alloc_nowait();
    }
}

static void op_free_burst(uint8_t b)
{
    int k = 1 + (b & 0x7f) * 8;
    for (int i = 0; i < k && H.nheld > 0; i++) {
        void *obj = unhold(b & 0x80 ? 0 : H.nheld - 1);
        CHECK(swf_cache_free(H.c, obj) == 0, "free");
        M.frees++;
        M.alive--;
    }
}

static void op_free(uint8_t b)
{
    if (H.nheld == 0)
        return;
    void *obj = unhold((int)(b % (unsigned)H.nheld));
    CHECK(swf_cache_free(H.c, obj) == 0, "free");
    M.frees++;
    M.alive--;
}

static void op_free_deferred(uint8_t b)
{
    int k = b % 9;
    if (k > H.nheld)
        k = H.nheld;
    void *objs[8];
    for (int i = 0; i < k; i++)
        objs[i] = unhold(H.nheld - 1);
    CHECK(swf_cache_free_deferred(H.c, &H.rec, objs, (size_t)k) == 0, "free_deferred(%d)", k);
    M.deferred_queued += (uint64_t)k;
    M.deferred_pending += (uint64_t)k;
}

static void op_quiesce(void)
{
    CHECK(swf_cache_quiesce(H.c, &H.rec) == 0, "quiesce");
    M.frees += M.deferred_pending;
    M.alive -= M.deferred_pending;
    M.deferred_pending = 0;
}

static void op_grow(size_t n)
{
    struct swf_cache_stats s = cstats();
    bool room = s.ready >= n || M.limit == 0 ||
                (M.limit > s.capacity && M.limit - s.capacity >= n - s.ready);
    int err = swf_cache_grow(H.c, n);
    CHECK(err == (room ? 0 : ENOMEM),
          "grow(%zu) with %" PRIu64 " ready, capacity %" PRIu64 ", limit %" PRIu64 " returned %d",
          n, s.ready, s.capacity, M.limit, err);
    struct swf_cache_stats a = cstats();
    if (err == 0)
        CHECK(a.ready >= n, "grow(%zu) returned 0 with %" PRIu64 " ready", n, a.ready);
    else /* a count the limit can never allow fails at once, mapping nothing (cache.h) */
        CHECK(a.capacity == s.capacity,
              "grow(%zu) past the limit mapped memory: capacity %" PRIu64 " -> %" PRIu64
              ", limit %" PRIu64,
              n, s.capacity, a.capacity, M.limit);
}

static void op_set_limit(uint8_t b)
{
    uint64_t l = (b & 0xc0) == 0xc0 ? 0 : M.alive + (b & 0x3f);
    CHECK(swf_cache_set_limit(H.c, (size_t)l) == 0, "set_limit");
    M.limit = l;
    M.capacity_floor = cstats().capacity; /* a lower limit unmaps nothing */
}

static void op_set_failslab(struct input *in)
{
    static const unsigned int probs[] = {0, 100, 100, 50, 1, 99, 101};
    uint8_t pb = u8(in), ib = u8(in), tb = u8(in), sb = u8(in);
    struct swf_failslab fs = {
        .probability = probs[pb % 7], .interval = ib % 5, .times = (long)(tb % 8) - 2, .seed = sb};
    bool off = (pb & 0x80) != 0;
    int want = !off && (fs.probability > 100 || fs.times < -1) ? EINVAL : 0;
    struct swf_cache_stats s = cstats();
    int err = swf_cache_set_failslab(H.c, off ? NULL : &fs);
    CHECK(err == want, "set_failslab returned %d, model %d", err, want);
    if (err != 0)
        return;
    M.fs_on = !off && fs.probability > 0 && fs.times != 0;
    M.prob = fs.probability;
    M.interval = fs.interval;
    M.times = fs.times;
    M.calls = 0;
    M.fs_exact = !M.fs_on || fs.probability == 100;
    if (!M.split && M.allocs_nowait + M.allocs_wait == s.allocs_nowait + s.allocs_wait &&
        M.fails_nowait + M.fails_injected == s.fails_nowait + s.fails_injected) {
        /* Re-anchor the split counters on the cache's (their sums were just checked). */
        M.allocs_nowait = s.allocs_nowait;
        M.allocs_wait = s.allocs_wait;
        M.fails_nowait = s.fails_nowait;
        M.fails_injected = s.fails_injected;
        M.split = true;
    }
}

/* ---- the plain list -------------------------------------------------------------------------- */

static void op_list_add(int i)
{
    if (M.plinked[i])
        return;
    H.pm[i].linked = 1;
    CK_LIST_INSERT_HEAD(&H.plist, &H.pm[i], link);
    M.plinked[i] = true;
    order_push_front(M.porder, &M.nporder, i);
}

static void op_list_del(int i)
{
    if (!M.plinked[i])
        return;
    CK_LIST_REMOVE(&H.pm[i], link);
    H.pm[i].linked = 0;
    M.plinked[i] = false;
    order_remove(M.porder, &M.nporder, i);
}

static void op_drop(int i, bool deferred)
{
    void *obj = swf_slot_take(&H.pm[i].slot);
    CHECK(obj == M.pslot[i], "member %d: slot %p, model %p", i, obj, M.pslot[i]);
    M.pslot[i] = NULL;
    if (obj == NULL)
        return;
    CHECK(fobj_ok(obj, &H.pm[i]), "member %d: its object was overwritten", i);
    if (deferred) {
        CHECK(swf_cache_free_deferred(H.c, &H.rec, &obj, 1) == 0, "free_deferred");
        M.deferred_queued++;
        M.deferred_pending++;
    } else {
        CHECK(swf_cache_free(H.c, obj) == 0, "free");
        M.frees++;
        M.alive--;
    }
}

/* ---- bad arguments and the parser ------------------------------------------------------------ */

static void op_misuse(uint8_t b)
{
    struct swf_cache_stats s;
    struct swf_cache *c2 = NULL;
    struct swf_cache_config bad = {.object_size = 64};
    switch (b % 10) {
    case 0:
        errno = 0;
        CHECK(swf_cache_alloc(NULL, SWF_NOWAIT) == NULL && errno == EINVAL, "alloc(NULL)");
        errno = 0;
        CHECK(swf_cache_alloc(H.c, (enum swf_alloc_mode)(b & 1 ? 0 : 3)) == NULL && errno == EINVAL,
              "alloc with a bad mode");
        break;
    case 1:
        CHECK(swf_cache_free(NULL, NULL) == EINVAL && swf_cache_free(H.c, NULL) == 0, "free");
        CHECK(swf_cache_grow(NULL, 1) == EINVAL && swf_cache_flush(NULL) == EINVAL &&
                  swf_cache_set_limit(NULL, 1) == EINVAL && swf_cache_stats(NULL, &s) == EINVAL &&
                  swf_cache_stats(H.c, NULL) == EINVAL && swf_cache_destroy(NULL) == EINVAL,
              "NULL cache arguments");
        break;
    case 2: {
        struct swf_failslab fs = {.probability = 101, .interval = 1, .times = -1};
        CHECK(swf_cache_set_failslab(NULL, NULL) == EINVAL &&
                  swf_cache_set_failslab(H.c, &fs) == EINVAL,
              "set_failslab: bad arguments");
        fs.probability = 50;
        fs.times = -2;
        CHECK(swf_cache_set_failslab(H.c, &fs) == EINVAL, "set_failslab: times -2");
        break;
    }
    case 3:
        CHECK(swf_cache_create(NULL, &c2) == EINVAL && swf_cache_create(&bad, NULL) == EINVAL,
              "create(NULL)");
        bad.object_size = b & 1 ? 0 : SWF_CACHE_OBJECT_MAX + 1;
        CHECK(swf_cache_create(&bad, &c2) == EINVAL, "create: bad size");
        bad.object_size = 64;
        bad.align = b & 1 ? 24 : SWF_CACHE_ALIGN_MAX * 2;
        CHECK(swf_cache_create(&bad, &c2) == EINVAL, "create: bad alignment");
        bad.align = 0;
        bad.prefill = 10;
        bad.limit = 9;
        CHECK(swf_cache_create(&bad, &c2) == EINVAL && c2 == NULL, "create: limit below prefill");
        break;
    case 4: {
        struct fnode stray;
        memset(&stray, 0, sizeof(stray));
        CHECK(swf_registry_add(NULL, &stray.node) == EINVAL &&
                  swf_registry_add(H.r, NULL) == EINVAL,
              "add: NULL");
        CHECK(swf_registry_del(H.r, &stray.node, NULL) == ENOENT &&
                  swf_registry_del(NULL, &stray.node, NULL) == EINVAL,
              "del: stray node or NULL registry");
        CHECK(swf_registry_activate(NULL, NULL) == EINVAL &&
                  swf_registry_deactivate(NULL) == EINVAL &&
                  swf_registry_synchronize(NULL) == EINVAL && swf_registry_destroy(NULL) == EINVAL,
              "registry: NULL");
        break;
    }
    case 5: {
        bool busy = M.active || M.norder > 0;
        int rc = swf_registry_destroy(H.r);
        CHECK(rc == (busy ? EBUSY : 0), "destroy of a %s registry returned %d",
              busy ? "busy" : "idle", rc);
        if (busy)
            break;
        /* It was idle and is gone (its grace period released every deleted node): make a new
         * one with the same configuration. */
        reconcile_releases();
        CHECK(pending_nodes() == 0, "destroy returned 0 with %d nodes unreleased", pending_nodes());
        struct swf_registry_config rc2;
        swf_registry_config_init(&rc2);
        rc2.cache = H.c;
        rc2.init = fz_init;
        rc2.reserve = M.reg_reserve;
        rc2.section_bound = M.reg_bound;
        CHECK(swf_registry_create(&rc2, &H.r) == 0, "registry re-create");
        M.activations = M.deactivations = M.by_add = M.by_sweep = 0;
        M.unpublished = M.released = 0;
        break;
    }
    case 6: {
        struct swf_registry_config rc;
        struct swf_registry *r2 = NULL;
        swf_registry_config_init(&rc);
        CHECK(swf_registry_create(&rc, &r2) == EINVAL, "registry create without a cache");
        rc.cache = H.c;
        CHECK(swf_registry_create(&rc, &r2) == EINVAL, "registry create without init");
        rc.init = fz_init;
        rc.reserve = b & 1 ? 0 : SWF_SWEEP_RESERVE_MAX + 1;
        CHECK(swf_registry_create(&rc, &r2) == EINVAL && r2 == NULL, "registry create: reserve");
        break;
    }
    case 7: {
        struct swf_sweep_stats st;
        CHECK(swf_sweep(NULL, &st) == EINVAL && swf_sweep_validate(NULL, &ml_ops) == EINVAL,
              "sweep(NULL)");
        struct swf_sweep_config cfg;
        swf_sweep_config_init(&cfg);
        cfg.list = mlp_list(&H.plist);
        cfg.cache = H.c;
        cfg.init = fz_init;
        swf_guard_none(&cfg.guard);
        cfg.list.slot_offset += 4;
        CHECK(swf_sweep(&cfg, &st) == EINVAL, "sweep: misaligned slot offset");
        break;
    }
    case 8: {
        void *x = NULL;
        CHECK(swf_cache_free_deferred(NULL, &H.rec, &x, 1) == EINVAL &&
                  swf_cache_free_deferred(H.c, NULL, &x, 1) == EINVAL &&
                  swf_cache_free_deferred(H.c, &H.rec, NULL, 1) == EINVAL &&
                  swf_cache_free_deferred(H.c, &H.rec, NULL, 0) == 0,
              "free_deferred: bad arguments");
        CHECK(swf_cache_quiesce(NULL, &H.rec) == EINVAL && swf_cache_quiesce(H.c, NULL) == EINVAL,
              "quiesce: bad arguments");
        break;
    }
    default:
        CHECK(swf_failslab_parse(NULL, NULL, NULL, 0, NULL, 0) == EINVAL, "parse(NULL)");
        break;
    }
}

/*
 * The grammar cache.h documents for SWF_FAILSLAB: "P in 0..100; I >= 0; T >= -1; S any unsigned
 * 64-bit number (decimal or 0x hex)", comma-separated key=value pairs, probability required,
 * cache= a non-empty name. A number here is decimal digits, or 0x/0X and hex digits; times may
 * also be a minus sign and decimal digits (a value of -1 or -0). Values of 32 characters or more
 * hit the implementation's buffer and are left undecided. Returns 0 or EINVAL.
 */
static bool ref_number(const char *v, size_t len, bool sign_ok, uint64_t max, uint64_t *out,
                       bool *neg, bool *undecided)
{
    if (len == 0)
        return false;
    if (len >= 32)
        *undecided = true;
    *neg = sign_ok && v[0] == '-';
    size_t i = *neg ? 1 : 0;
    unsigned base = 10;
    if (!*neg && len > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
        base = 16;
        i = 2;
    }
    if (i == len)
        return false;
    uint64_t x = 0;
    for (; i < len; i++) {
        char ch = v[i];
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (base == 16 && ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else if (base == 16 && ch >= 'A' && ch <= 'F')
            d = (unsigned)(ch - 'A' + 10);
        else
            return false;
        if (x > (UINT64_MAX - d) / base)
            return false;
        x = x * base + d;
    }
    if (*neg ? x > 1 : x > max)
        return false;
    *out = x;
    return true;
}

static int ref_parse(const char *spec, struct swf_failslab *out, char *name, size_t name_len,
                     bool *undecided)
{
    struct swf_failslab fs = {.probability = 0, .interval = 1, .times = -1, .seed = 0};
    bool have_p = false;
    name[0] = '\0';
    const char *p = spec;
    if (*p == '\0')
        return EINVAL;
    for (;;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq == NULL)
            return EINVAL;
        size_t klen = (size_t)(eq - p), vlen = (size_t)(end - eq - 1);
        const char *v = eq + 1;
        uint64_t x;
        bool neg;
#define REF_KEY(k) (klen == sizeof(k) - 1 && memcmp(p, k, klen) == 0)
        if (REF_KEY("probability")) {
            if (!ref_number(v, vlen, false, 100, &x, &neg, undecided))
                return EINVAL;
            fs.probability = (unsigned)x;
            have_p = true;
        } else if (REF_KEY("interval")) {
            if (!ref_number(v, vlen, false, ULONG_MAX, &x, &neg, undecided))
                return EINVAL;
            fs.interval = (unsigned long)x;
        } else if (REF_KEY("times")) {
            if (!ref_number(v, vlen, true, LONG_MAX, &x, &neg, undecided))
                return EINVAL;
            fs.times = neg ? -(long)x : (long)x;
        } else if (REF_KEY("seed")) {
            if (!ref_number(v, vlen, false, UINT64_MAX, &x, &neg, undecided))
                return EINVAL;
            fs.seed = x;
        } else if (REF_KEY("cache")) {
            if (vlen == 0 || vlen >= name_len)
                return EINVAL;
            memcpy(name, v, vlen);
            name[vlen] = '\0';
        } else {
            return EINVAL;
        }
#undef REF_KEY
        if (comma == NULL)
            break;
        p = comma + 1;
        if (*p == '\0')
            return EINVAL;
    }
    if (!have_p)
        return EINVAL;
    *out = fs;
    return 0;
}

/* The parser is compared with the documented grammar above on every parse operation
 * (SWF_FUZZ_STRICT_PARSE=0 turns that off, to look at something else). */
static bool strict_parse(void)
{
    static int strict = -1;
    if (strict < 0) {
        const char *e = getenv("SWF_FUZZ_STRICT_PARSE");
        strict = e == NULL || e[0] != '0';
    }
    return strict == 1;
}

static void op_parse(struct input *in)
{
    char spec[64], name[16], err[80];
    size_t len = u8(in) % sizeof(spec);
    for (size_t i = 0; i < len; i++)
        spec[i] = (char)u8(in);
    spec[len] = '\0';
    size_t name_len = 1 + u8(in) % sizeof(name);
    struct swf_failslab fs;
    memset(err, 'x', sizeof(err));
    int rc = swf_failslab_parse(spec, &fs, name, name_len, err, sizeof(err));
    if (strict_parse()) {
        struct swf_failslab want;
        char want_name[16];
        bool undecided = false;
        int want_rc = ref_parse(spec, &want, want_name, name_len, &undecided);
        if (!undecided) {
            CHECK(rc == want_rc, "parse('%s') returned %d, the documented grammar says %d", spec,
                  rc, want_rc);
            CHECK(rc != 0 || (fs.probability == want.probability && fs.interval == want.interval &&
                              fs.times == want.times && fs.seed == want.seed &&
                              strcmp(name, want_name) == 0),
                  "parse('%s'): probability %u interval %lu times %ld seed %" PRIu64
                  ", the documented grammar says %u %lu %ld %" PRIu64,
                  spec, fs.probability, fs.interval, fs.times, fs.seed, want.probability,
                  want.interval, want.times, want.seed);
        }
    }
    if (rc != 0) {
        CHECK(rc == EINVAL && memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0',
              "parse('%s') failed with %d and no message", spec, rc);
        return;
    }
    CHECK(strstr(spec, "probability=") != NULL, "parse('%s') accepted a spec without probability",
          spec);
    CHECK(fs.probability <= 100 && fs.times >= -1, "parse('%s'): probability %u, times %ld", spec,
          fs.probability, fs.times);
    CHECK(memchr(name, '\0', name_len) != NULL, "parse: cache name not terminated");
    /* Print it back and parse that: the same result. */
    char again[128];
    snprintf(again, sizeof(again), "probability=%u,interval=%lu,times=%ld,seed=%" PRIu64 "%s%s",
             fs.probability, fs.interval, fs.times, fs.seed, name[0] ? ",cache=" : "", name);
    struct swf_failslab fs2;
    char name2[16];
    CHECK(swf_failslab_parse(again, &fs2, name2, sizeof(name2), NULL, 0) == 0 &&
              fs2.probability == fs.probability && fs2.interval == fs.interval &&
              fs2.times == fs.times && fs2.seed == fs.seed && strcmp(name, name2) == 0,
          "parse('%s') and parse('%s') disagree", spec, again);
}

/* ---- conservation ---------------------------------------------------------------------------- */

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* alive == held + in plain slots + in registry slots (linked or awaiting release) + awaiting a
 * deferred free, and no object is in two places. */
static void check_conservation(void)
{
    void *all[NH + NP + NN];
    size_t n = 0;
    for (int i = 0; i < H.nheld; i++)
        all[n++] = H.held[i];
    for (int i = 0; i < NP; i++) {
        CHECK(H.pm[i].slot == M.pslot[i], "member %d: slot %p, model %p", i, H.pm[i].slot,
              M.pslot[i]);
        if (H.pm[i].slot != NULL)
            all[n++] = H.pm[i].slot;
    }
    for (int i = 0; i < NN; i++) {
        void *obj = swf_node_object(&H.nodes[i].node);
        bool want = M.ns[i] == N_LINKED ? M.nobj[i] : M.ns[i] == N_PENDING ? M.pobj_del[i] : false;
        CHECK((obj != NULL) == want, "node %d: object %p, model %s", i, obj, want ? "one" : "none");
        if (obj != NULL)
            all[n++] = obj;
    }
    CHECK(M.alive == n + M.deferred_pending,
          "conservation: alive %" PRIu64 " != %zu held or published + %" PRIu64 " deferred",
          M.alive, n, M.deferred_pending);
    qsort(all, n, sizeof(void *), cmp_ptr);
    for (size_t i = 1; i < n; i++)
        CHECK(all[i] != all[i - 1], "object %p is in two places", all[i]);
}

/* ---- one input ------------------------------------------------------------------------------- */

static const size_t sizes[] = {16, 24, 40, 64, 200, 4096};
static const size_t aligns[] = {0, 0, 16, 64, 4096};

static void setup(struct input *in)
{
    memset(&M, 0, sizeof(M));
    memset(&H, 0, sizeof(H));
    M.split = true;
    M.fs_exact = true;
    uint8_t sb = u8(in), pb = u8(in), lb = u8(in), rb = u8(in), kb = u8(in);
    H.object_size = sizes[sb % 6];
    H.align = aligns[(sb >> 3) % 5];
    size_t prefill = pb % 128;
    struct swf_cache_config cfg = {.object_size = H.object_size,
                                   .align = H.align,
                                   .prefill = prefill,
                                   .limit = lb == 0 ? 0 : prefill + lb,
                                   .name = "fuzz"};
    int err = swf_cache_create(&cfg, &H.c);
    CHECK(err == 0, "cache create: %d", err);
    M.limit = cfg.limit;
    struct swf_cache_stats s = cstats();
    CHECK(s.capacity >= prefill && s.alive == 0, "create: capacity %" PRIu64 " for prefill %zu",
          s.capacity, prefill);
    M.capacity_floor = s.capacity;

    M.reg_reserve = 1 + rb % 8;
    M.reg_bound = kb % 6;
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = H.c;
    rc.init = fz_init;
    rc.reserve = M.reg_reserve;
    rc.section_bound = M.reg_bound;
    CHECK(swf_registry_create(&rc, &H.r) == 0, "registry create");
    CK_LIST_INIT(&H.plist);
    for (int i = 0; i < NP; i++)
        H.pm[i].id = (uint64_t)i;
    ck_epoch_init(&H.epoch);
    ck_epoch_register(&H.epoch, &H.rec, NULL);
}

static void teardown(void)
{
    op_name = "teardown";
    if (M.active)
        op_deactivate();
    for (int i = 0; i < NN; i++)
        if (M.ns[i] == N_LINKED)
            op_del(i);
    op_synchronize();
    check_registry();
    CHECK(swf_registry_destroy(H.r) == 0, "registry destroy");
    for (int i = 0; i < NP; i++) {
        op_list_del(i);
        op_drop(i, false);
    }
    while (H.nheld > 0)
        op_free(0);
    op_quiesce();
    check_cache_counters();
    check_conservation();
    CHECK(M.alive == 0, "alive %" PRIu64 " at the end", M.alive);
    CHECK(swf_cache_destroy(H.c) == 0, "cache destroy");
    ck_epoch_unregister(&H.rec);
}

static const char *const names[] = {
    "alloc NOWAIT", "alloc WAIT", "free",         "free_deferred", "quiesce",
    "grow",         "set_limit",  "set_failslab", "flush",         "registry add",
    "registry del", "activate",   "deactivate",   "synchronize",   "read walk",
    "list add",     "list del",   "drop slot",    "sweep",         "clear slots",
    "bad input",    "parse",      "alloc burst",  "free burst",    "many readers",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct input in = {data, size};
    op_no = 0;
    op_name = "setup";
    setup(&in);
    for (op_no = 1; in.n > 0 && op_no <= MAX_OPS; op_no++) {
        uint8_t op = u8(&in) % (sizeof(names) / sizeof(names[0]));
        op_name = names[op];
        maybe_migrate();
        switch (op) {
        case 0:
            op_alloc_nowait();
            break;
        case 1:
            op_alloc_wait();
            break;
        case 2:
            op_free(u8(&in));
            break;
        case 3:
            op_free_deferred(u8(&in));
            break;
        case 4:
            op_quiesce();
            break;
        case 5:
            op_grow(u16(&in) % 4097);
            break;
        case 6:
            op_set_limit(u8(&in));
            break;
        case 7:
            op_set_failslab(&in);
            break;
        case 8:
            CHECK(swf_cache_flush(H.c) == 0, "flush");
            break;
        case 9:
            op_add(u8(&in) % NN);
            break;
        case 10:
            op_del(u8(&in) % NN);
            break;
        case 11:
            op_activate(!(u8(&in) & 1));
            break;
        case 12:
            op_deactivate();
            break;
        case 13:
            op_synchronize();
            break;
        case 14:
            registry_walk();
            break;
        case 15:
            op_list_add(u8(&in) % NP);
            break;
        case 16:
            op_list_del(u8(&in) % NP);
            break;
        case 17: {
            uint8_t b = u8(&in);
            op_drop(b % NP, b & 0x80);
            break;
        }
        case 18:
            op_sweep(&in);
            break;
        case 19: {
            bool deferred = u8(&in) & 1;
            for (int i = 0; i < NP; i++)
                op_drop(i, deferred);
            break;
        }
        case 20:
            op_misuse(u8(&in));
            break;
        case 21:
            op_parse(&in);
            break;
        case 22:
            op_alloc_burst(u8(&in));
            break;
        case 23:
            op_free_burst(u8(&in));
            break;
        default:
            op_readers(u8(&in));
            break;
        }
        reconcile_releases();
        check_cache_counters();
        check_registry();
        check_conservation();
    }
    teardown();
    return 0;
}
