/*
 * bench/families/sweep_overhead.c - the `sweep_overhead` family: what the sweep's genericity costs.
 * The same job - for each member whose slot is NULL, swf_cache_alloc(c, SWF_NOWAIT), initialise
 * (bobj_init), publish with a release store - done three ways on the same CK_LIST (lists.h):
 *
 *   sweep_overhead/hand/order:O/n:N       a hand-written CK_LIST_FOREACH loop inside one ck_epoch
 *                                         section: the least any generic code can cost
 *   sweep_overhead/macro/order:O/n:N      a sweep generated with SWF_SWEEP_DEFINE on the blp
 *                                         adapter (SWF_LIST_CK_LIST_PINNED, no-op pins): list ops
 *                                         and init called directly, inlined
 *   sweep_overhead/ops_table/order:O/n:N  swf_sweep from the shared library on the same adapter's
 *                                         ops table: an indirect call per list step and per init
 *
 * Both sweeps run RESUME with the reserve of 32 and the ck_epoch guard; the cache is grown
 * beforehand so that NOWAIT never fails (counter nowait_fails must read 0), so the three do the
 * same work: N allocations, N inits, N release stores. O is 0 (members linked in memory order,
 * where per-member overhead shows most) or 1 (shuffled, where the walk's cache misses dominate).
 * 64-byte objects. Each run has a fresh cache, grown once; each iteration is the fill (manual
 * time), then, untimed, the objects freed back in the reverse of list order, so every iteration
 * and every variant gets the same objects in the same order (lists.h, blist_release_reverse).
 * Counter ns_per_member; the target (reported, not asserted) is the macro variant within 5 % of the
 * hand-written loop.
 *
 * The same comparison on other lists, each with its own hand-written loop and a sweep
 * generated with SWF_SWEEP_DEFINE on its _AUTO adapter (real pins from pin.h, never taken here:
 * no refill or bound leaves the section):
 *
 *   sweep_overhead/tailq_hand|tailq_macro/order:O/n:N
 *                                  a <sys/queue.h> TAILQ under a pthread rwlock (the hand loop:
 *                                  TAILQ_FOREACH under the read lock; the sweep:
 *                                  SWF_LIST_SYS_TAILQ_AUTO, swf_guard_rwlock)
 *   sweep_overhead/cds_hand|cds_macro/order:O/n:N
 *                                  liburcu's cds_list, memb flavour, when liburcu is found (the
 *                                  hand loop: cds_list_for_each_entry_rcu inside rcu_read_lock,
 *                                  both inline: _LGPL_SOURCE; the sweep: SWF_LIST_CDS_LIST_AUTO,
 *                                  swf_guard_urcu)
 *
 * Their members are 128-byte structs linked in the same order as the CK_LIST's (bench_order),
 * the link and the slot in the first cache line, the pin in the second. sweep_overhead/<list>_pair
 * (below main's helpers) measures each list's hand loop and generated sweep back to back, for a
 * ratio that a busy machine disturbs less.
 *
 * sweep_overhead/adder/state:S/n:4096 (after main's helpers): the extra cost per add of the adder's
 * half of exact activation (feature.h), off and on.
 *
 * Own flags: --n=10k,100k (members), --quick (n=10k only).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SWF_BENCH_URCU
#define _LGPL_SOURCE /* rcu_read_lock and rcu_dereference inline, as fast readers build them */
#include <urcu/urcu-memb.h>
#include <sweepfill/list_urcu.h>
#endif
#include <sweepfill/cache.h>
#include <sweepfill/feature.h>
#include <sweepfill/list_sysqueue.h>
#include <sweepfill/sweep.h>

#include "lists.h"
#include "shim/swfb.h"

enum { OBJ_SIZE = 64, MAX_ARGS = 8 };

SWF_SWEEP_DEFINE(macro_sweep, blp, bobj_init)

static struct swf_cache *cache; /* the current run's */

/* How a benchmark gets, resets, checks and empties a list of one kind. */
struct list_kind {
    void *(*get)(size_t n, bool shuffled);
    void (*clear)(void *l);
    size_t (*empty)(const void *l);
    size_t (*release_reverse)(void *l, struct swf_cache *c);
    void (*release)(void *l, struct swf_cache *c);
};

typedef int fill_fn(void *l, uint64_t *fails);

struct variant {
    const char *name;
    fill_fn *fill;
    const struct list_kind *kind;
};

static void *ck_get(size_t n, bool shuffled)
{
    return blist_get(n, shuffled);
}
static void ck_clear(void *l)
{
    blist_clear(l);
}
static size_t ck_empty(const void *l)
{
    return blist_empty(l);
}
static size_t ck_release_reverse(void *l, struct swf_cache *c)
{
    return blist_release_reverse(l, c, NULL);
}
static void ck_release(void *l, struct swf_cache *c)
{
    blist_release(l, c, NULL);
}
static const struct list_kind ck_kind = {ck_get, ck_clear, ck_empty, ck_release_reverse,
                                         ck_release};

/* ---- the TAILQ and the cds_list ------------------------------------------------------------ */

struct gmember {
    TAILQ_ENTRY(gmember) tq;
    void *slot;
    uint64_t id;
#ifdef SWF_BENCH_URCU
    struct cds_list_head cds;
#else
    void *cds_unused[2];
#endif
    char pad0[64 - 6 * sizeof(void *)];
    struct swf_pin pin;
    char pad1[64 - sizeof(struct swf_pin)];
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct gmember) == 128, "a member is 128 bytes");

TAILQ_HEAD(gmember_q, gmember);
SWF_LIST_SYS_TAILQ_AUTO(gtq, gmember_q, gmember, tq, slot, pin)
SWF_SWEEP_DEFINE(tailq_sweep, gtq, bobj_init)
#ifdef SWF_BENCH_URCU
SWF_LIST_CDS_LIST_AUTO(gcds, gmember, cds, slot, pin)
SWF_SWEEP_DEFINE(cds_sweep, gcds, bobj_init)
#endif

struct glist {
    struct gmember *m;
    size_t n;
    bool shuffled;
    struct gmember_q tq;
#ifdef SWF_BENCH_URCU
    struct cds_list_head cds;
#endif
};

static struct glist glists[8];
static size_t nglists;
static pthread_rwlock_t glock = PTHREAD_RWLOCK_INITIALIZER;

static void *g_get(size_t n, bool shuffled)
{
    for (size_t i = 0; i < nglists; i++)
        if (glists[i].n == n && glists[i].shuffled == shuffled)
            return &glists[i];
    if (nglists == sizeof(glists) / sizeof(glists[0]))
        return NULL;
    struct glist *l = &glists[nglists];
    l->m = aligned_alloc(64, (n ? n : 1) * sizeof(struct gmember));
    size_t *order = malloc((n ? n : 1) * sizeof(size_t));
    if (l->m == NULL || order == NULL) {
        free(l->m);
        free(order);
        return NULL;
    }
    memset(l->m, 0, (n ? n : 1) * sizeof(struct gmember)); /* faulted in now */
    bench_order(order, n, shuffled);
    TAILQ_INIT(&l->tq);
#ifdef SWF_BENCH_URCU
    CDS_INIT_LIST_HEAD(&l->cds);
#endif
    for (size_t i = 0; i < n; i++) {
        struct gmember *m = &l->m[order[i]];
        m->id = order[i];
        TAILQ_INSERT_TAIL(&l->tq, m, tq);
#ifdef SWF_BENCH_URCU
        cds_list_add_tail(&m->cds, &l->cds);
#endif
    }
    free(order);
    l->n = n;
    l->shuffled = shuffled;
    nglists++;
    return l;
}

static void g_clear(void *list)
{
    struct glist *l = list;
    for (size_t i = 0; i < l->n; i++)
        l->m[i].slot = NULL;
}

static size_t g_empty(const void *list)
{
    const struct glist *l = list;
    size_t empty = 0;
    for (size_t i = 0; i < l->n; i++)
        empty += l->m[i].slot == NULL;
    return empty;
}

/* As blist_release_reverse: free in the reverse of list order (the same order on both lists),
 * so every fill gets the same objects in the same order. */
static size_t g_release_reverse(void *list, struct swf_cache *c)
{
    struct glist *l = list;
    void **objs = malloc((l->n ? l->n : 1) * sizeof(void *));
    if (objs == NULL)
        return (size_t)-1;
    size_t k = 0;
    struct gmember *m;
    TAILQ_FOREACH(m, &l->tq, tq)
    {
        if (m->slot != NULL)
            objs[k++] = m->slot;
        m->slot = NULL;
    }
    for (size_t i = k; i-- > 0;)
        swf_cache_free(c, objs[i]);
    free(objs);
    return k;
}

static void g_release(void *list, struct swf_cache *c)
{
    struct glist *l = list;
    for (size_t i = 0; i < l->n; i++) {
        swf_cache_free(c, l->m[i].slot);
        l->m[i].slot = NULL;
    }
}

static const struct list_kind g_kind = {g_get, g_clear, g_empty, g_release_reverse, g_release};

/* The job, by hand: the same steps as fill_hand below (break: on to the next member). */
#define FILL_ONE_(m, fails)                             \
    do {                                                \
        if (swf_slot_peek(&(m)->slot) != NULL)          \
            break;                                      \
        void *obj = swf_cache_alloc(cache, SWF_NOWAIT); \
        if (obj == NULL) {                              \
            (*(fails))++;                               \
            break;                                      \
        }                                               \
        bobj_init(obj, (m), NULL);                      \
        swf_slot_publish(&(m)->slot, obj);              \
    } while (0)

static int fill_tailq_hand(void *list, uint64_t *fails)
{
    struct glist *l = list;
    pthread_rwlock_rdlock(&glock);
    struct gmember *m;
    TAILQ_FOREACH(m, &l->tq, tq)
    {
        FILL_ONE_(m, fails);
    }
    pthread_rwlock_unlock(&glock);
    return 0;
}

static int fill_tailq_macro(void *list, uint64_t *fails)
{
    struct glist *l = list;
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    swf_sweep_config_init(&cfg);
    cfg.list = gtq_list(&l->tq);
    cfg.cache = cache;
    cfg.init = bobj_init;
    cfg.section_bound = 0; /* one section, as the hand-written loop */
    swf_guard_rwlock(&cfg.guard, &glock);
    int err = tailq_sweep(&cfg, &st);
    *fails += st.nowait_failures;
    return err;
}

#ifdef SWF_BENCH_URCU
static int fill_cds_hand(void *list, uint64_t *fails)
{
    struct glist *l = list;
    urcu_memb_read_lock();
    struct gmember *m;
    cds_list_for_each_entry_rcu(m, &l->cds, cds)
    {
        FILL_ONE_(m, fails);
    }
    urcu_memb_read_unlock();
    return 0;
}

static int fill_cds_macro(void *list, uint64_t *fails)
{
    struct glist *l = list;
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    swf_sweep_config_init(&cfg);
    cfg.list = gcds_list(&l->cds);
    cfg.cache = cache;
    cfg.init = bobj_init;
    cfg.section_bound = 0; /* one section, as the hand-written loop */
    swf_guard_urcu(&cfg.guard, &urcu_memb_flavor);
    int err = cds_sweep(&cfg, &st);
    *fails += st.nowait_failures;
    return err;
}
#endif

/* ---- the CK_LIST ---------------------------------------------------------------------------- */

static int fill_hand(void *list, uint64_t *fails)
{
    struct blist *l = list;
    ck_epoch_record_t *rec = bench_epoch_record();
    ck_epoch_begin(rec, NULL);
    struct bmember *m;
    CK_LIST_FOREACH(m, &l->head, link)
    {
        if (swf_slot_peek(&m->slot) != NULL)
            continue;
        void *obj = swf_cache_alloc(cache, SWF_NOWAIT);
        if (obj == NULL) {
            (*fails)++;
            continue;
        }
        bobj_init(obj, m, NULL);
        swf_slot_publish(&m->slot, obj);
    }
    ck_epoch_end(rec, NULL);
    return 0;
}

static void sweep_cfg(struct swf_sweep_config *cfg, struct blist *l)
{
    swf_sweep_config_init(cfg);
    cfg->list = blp_list(&l->head);
    cfg->cache = cache;
    cfg->init = bobj_init;
    cfg->section_bound = 0; /* one section, as the hand-written loop */
    swf_guard_epoch(&cfg->guard, bench_epoch_record());
}

static int fill_macro(void *list, uint64_t *fails)
{
    struct blist *l = list;
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    sweep_cfg(&cfg, l);
    int err = macro_sweep(&cfg, &st);
    *fails += st.nowait_failures;
    return err;
}

static int fill_ops(void *list, uint64_t *fails)
{
    struct blist *l = list;
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    sweep_cfg(&cfg, l);
    int err = swf_sweep(&cfg, &st);
    *fails += st.nowait_failures;
    return err;
}

static void bm_generic(swfb_state *st)
{
    const struct variant *var = swfb_data(st);
    bool shuffled = swfb_range(st, 0) != 0;
    size_t n = (size_t)swfb_range(st, 1);
    const struct list_kind *k = var->kind;
    void *l = k->get(n, shuffled);
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "generic"};
    if (l == NULL || swf_cache_create(&cc, &cache) != 0) {
        swfb_skip_with_error(st, "out of memory");
        return;
    }
    if (swf_cache_grow(cache, n + 2 * SWF_SWEEP_RESERVE_DEFAULT) != 0) {
        swf_cache_destroy(cache);
        swfb_skip_with_error(st, "swf_cache_grow failed");
        return;
    }
    k->clear(l);
    const char *msg = NULL;
    uint64_t fails = 0;
    double total = 0;
    int64_t iters = 0;
    while (swfb_keep_running(st)) {
        uint64_t t0 = bench_now_ns();
        int err = var->fill(l, &fails);
        uint64_t t1 = bench_now_ns();
        size_t empty = k->empty(l);
        if (k->release_reverse(l, cache) == (size_t)-1)
            msg = "out of memory";
        if (err != 0 || empty != 0)
            msg = "the fill left slots empty";
        if (msg != NULL)
            break;
        double s = (double)(t1 - t0) * 1e-9;
        swfb_set_iteration_time(st, s);
        total += s;
        iters++;
    }
    k->release(l, cache);
    if (swf_cache_destroy(cache) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    cache = NULL;
    if (msg != NULL) {
        swfb_skip_with_error(st, msg);
        return;
    }
    double per = iters ? total / (double)iters : 0;
    swfb_counter_set(st, "seconds", per, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "ns_per_member", n ? per * 1e9 / (double)n : 0, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "nowait_fails", (double)fails, SWFB_COUNTER_PLAIN);
    swfb_set_label(st, shuffled ? "shuffled" : "in order");
}

/*
 * The same comparison made robust to a shared machine: each iteration fills the list once by
 * hand and once with the generated sweep, back to back (which goes first alternates), so that
 * whatever else runs on the machine slows both alike; the figure is the median over iterations
 * of macro / hand for the pair. sweep_overhead/<list>_pair/order:O/n:N; counters ratio (that
 * median), hand_ns_per_member and macro_ns_per_member (medians).
 */
struct pair {
    fill_fn *hand, *macro;
    const struct list_kind *kind;
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof(double), cmp_double);
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void bm_pair(swfb_state *st)
{
    const struct pair *p = swfb_data(st);
    bool shuffled = swfb_range(st, 0) != 0;
    size_t n = (size_t)swfb_range(st, 1);
    const struct list_kind *k = p->kind;
    void *l = k->get(n, shuffled);
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "generic-pair"};
    if (l == NULL || swf_cache_create(&cc, &cache) != 0) {
        swfb_skip_with_error(st, "out of memory");
        return;
    }
    enum { MAX_PAIRS = 100000 };
    double *hand = malloc(MAX_PAIRS * sizeof(double)), *macro = malloc(MAX_PAIRS * sizeof(double));
    double *ratio = malloc(MAX_PAIRS * sizeof(double));
    const char *msg = NULL;
    if (hand == NULL || macro == NULL || ratio == NULL)
        msg = "out of memory";
    else if (swf_cache_grow(cache, n + 2 * SWF_SWEEP_RESERVE_DEFAULT) != 0)
        msg = "swf_cache_grow failed";
    k->clear(l);
    size_t pairs = 0;
    uint64_t fails = 0;
    while (msg == NULL && swfb_keep_running(st)) {
        double t[2];
        for (int i = 0; i < 2; i++) {
            bool first_hand = pairs % 2 == 0;
            bool is_hand = (i == 0) == first_hand;
            uint64_t t0 = bench_now_ns();
            int err = (is_hand ? p->hand : p->macro)(l, &fails);
            uint64_t t1 = bench_now_ns();
            size_t empty = k->empty(l);
            if (k->release_reverse(l, cache) == (size_t)-1)
                msg = "out of memory";
            if (err != 0 || empty != 0)
                msg = "the fill left slots empty";
            t[is_hand ? 0 : 1] = (double)(t1 - t0);
        }
        swfb_set_iteration_time(st, (t[0] + t[1]) * 1e-9);
        if (pairs < MAX_PAIRS) {
            hand[pairs] = t[0];
            macro[pairs] = t[1];
            ratio[pairs] = t[0] > 0 ? t[1] / t[0] : 0;
            pairs++;
        }
    }
    k->release(l, cache);
    if (swf_cache_destroy(cache) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    cache = NULL;
    if (msg == NULL && pairs > 0) {
        swfb_counter_set(st, "ratio", median(ratio, pairs), SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "hand_ns_per_member", n ? median(hand, pairs) / (double)n : 0,
                         SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "macro_ns_per_member", n ? median(macro, pairs) / (double)n : 0,
                         SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "pairs", (double)pairs, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "nowait_fails", (double)fails, SWFB_COUNTER_PLAIN);
        swfb_set_label(st, shuffled ? "shuffled" : "in order");
    }
    free(hand);
    free(macro);
    free(ratio);
    if (msg != NULL)
        swfb_skip_with_error(st, msg);
}

/*
 * The adder's half of exact activation (feature.h): sweep_overhead/adder/state:S/n:N, the extra
 * cost of swf_feature_added per add over the same loop without it. Each iteration links N members
 * of an array (a relaxed store in each, standing for the list's insert) and, in the timed loop,
 * calls swf_feature_added(f, m, SWF_NOWAIT) after each; the baseline loop (timed likewise,
 * alternating) makes the store and a compiler barrier only. S: 0 off (membarrier where the kernel
 * has it: the inline path's one relaxed load), 1 off on the fence path (SWF_NO_MEMBARRIER: a call
 * and a full fence), 2 on (a NOWAIT allocation, init, a compare-and-swap; the slots are emptied,
 * untimed, between iterations). Counters: extra_ns_per_add (median of the per-iteration
 * difference), base_ns_per_add, membarrier (1 when the off path is the inline load).
 */
static void no_grace(void *arg) /* the benchmark has no readers */
{
    (void)arg;
}

struct amember {
    void *slot;
    uintptr_t link;
};

static void bm_adder(swfb_state *st)
{
    int state = (int)swfb_range(st, 0);
    size_t n = (size_t)swfb_range(st, 1);
    struct amember *m = calloc(n, sizeof(*m));
    struct swf_cache_config cc = {.object_size = OBJ_SIZE, .name = "adder"};
    if (m == NULL || swf_cache_create(&cc, &cache) != 0) {
        free(m);
        swfb_skip_with_error(st, "out of memory");
        return;
    }
    struct swf_array arr = {m, n, sizeof(*m)};
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = swf_list_array(&arr, offsetof(struct amember, slot));
    fc.sweep.cache = cache;
    fc.sweep.init = bobj_init;
    swf_guard_none(&fc.sweep.guard);
    fc.synchronize = no_grace;
    fc.prepare = n + SWF_SWEEP_RESERVE_DEFAULT;
    if (state == 1)
        setenv("SWF_NO_MEMBARRIER", "1", 1);
    struct swf_feature *f = NULL;
    int err = swf_feature_create(&fc, &f);
    unsetenv("SWF_NO_MEMBARRIER");
    if (err == 0 && state == 2)
        err = swf_feature_activate(f, NULL);
    enum { MAX_IT = 100000 };
    double *extra = malloc(MAX_IT * sizeof(double)), base_total = 0;
    const char *msg = err != 0 || extra == NULL ? "feature setup failed" : NULL;
    size_t it = 0, empty = 0;
    while (msg == NULL && swfb_keep_running(st)) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            __atomic_store_n(&m[i].link, i + 1, __ATOMIC_RELAXED);
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
        }
        uint64_t t1 = bench_now_ns();
        for (size_t i = 0; i < n; i++) {
            __atomic_store_n(&m[i].link, i + 2, __ATOMIC_RELAXED);
            empty += swf_feature_added(f, &m[i], SWF_NOWAIT) != 0;
        }
        uint64_t t2 = bench_now_ns();
        swfb_set_iteration_time(st, (double)(t2 - t0) * 1e-9);
        if (state == 2) /* untimed: each object back, so that the next round adds again */
            for (size_t i = 0; i < n; i++)
                swf_feature_release(f, &m[i]);
        if (it < MAX_IT)
            extra[it++] = ((double)(t2 - t1) - (double)(t1 - t0)) / (double)n;
        base_total += (double)(t1 - t0) / (double)n;
    }
    struct swf_feature_stats fs;
    if (f != NULL) {
        swf_feature_stats(f, &fs);
        if (state == 2)
            swf_feature_deactivate(f);
        swf_feature_destroy(f);
    }
    if (swf_cache_destroy(cache) != 0 && msg == NULL)
        msg = "objects leaked: swf_cache_destroy refused";
    cache = NULL;
    free(m);
    if (msg == NULL && it > 0) {
        swfb_counter_set(st, "extra_ns_per_add", median(extra, it), SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "base_ns_per_add", base_total / (double)it, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "membarrier", fs.membarrier, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "nowait_fails", (double)empty, SWFB_COUNTER_PLAIN);
        swfb_set_label(st, state == 0 ? "off" : state == 1 ? "off, fence path" : "on");
    }
    free(extra);
    if (msg != NULL)
        swfb_skip_with_error(st, msg);
}

int main(int argc, char **argv)
{
    int64_t ns[MAX_ARGS] = {10000, 100000};
    int nn = 2;
    if (bench_take_flag(&argc, argv, "quick") != NULL)
        nn = 1;
    const char *v = bench_take_flag(&argc, argv, "n");
    if (v != NULL && (nn = bench_parse_list(v, ns, MAX_ARGS)) <= 0) {
        fprintf(stderr,
                "bench_sweep_overhead: --n=%s: expected a comma-separated list of numbers\n", v);
        return 1;
    }
    swfb_add_context("list", "CK_LIST of 128-byte members, SWF_LIST_CK_LIST_PINNED, no-op pins");
    swfb_add_context("object_size", "64");
#ifdef SWF_BENCH_URCU
    urcu_memb_register_thread(); /* the benchmarks run on this thread */
#endif
    static const struct variant variants[] = {
        {"sweep_overhead/hand", fill_hand, &ck_kind},
        {"sweep_overhead/macro", fill_macro, &ck_kind},
        {"sweep_overhead/ops_table", fill_ops, &ck_kind},
        {"sweep_overhead/tailq_hand", fill_tailq_hand, &g_kind},
        {"sweep_overhead/tailq_macro", fill_tailq_macro, &g_kind},
#ifdef SWF_BENCH_URCU
        {"sweep_overhead/cds_hand", fill_cds_hand, &g_kind},
        {"sweep_overhead/cds_macro", fill_cds_macro, &g_kind},
#endif
    };
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
        swfb_bench *b = swfb_register_data(variants[i].name, bm_generic, (void *)&variants[i]);
        swfb_bench_arg_names(b, "order", "n");
        for (int order = 0; order < 2; order++)
            for (int k = 0; k < nn; k++)
                swfb_bench_args2(b, order, ns[k]);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_US);
    }
    static const struct pair pairs[] = {
        {fill_hand, fill_macro, &ck_kind},
        {fill_tailq_hand, fill_tailq_macro, &g_kind},
#ifdef SWF_BENCH_URCU
        {fill_cds_hand, fill_cds_macro, &g_kind},
#endif
    };
    static const char *pair_names[] = {"sweep_overhead/ck_pair", "sweep_overhead/tailq_pair",
                                       "sweep_overhead/cds_pair"};
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        swfb_bench *b = swfb_register_data(pair_names[i], bm_pair, (void *)&pairs[i]);
        swfb_bench_arg_names(b, "order", "n");
        for (int order = 0; order < 2; order++)
            for (int k = 0; k < nn; k++)
                swfb_bench_args2(b, order, ns[k]);
        swfb_bench_manual_time(b);
        swfb_bench_unit(b, SWFB_US);
    }
    swfb_bench *ab = swfb_register("sweep_overhead/adder", bm_adder);
    swfb_bench_arg_names(ab, "state", "n");
    for (int state = 0; state < 3; state++)
        swfb_bench_args2(ab, state, 4096);
    swfb_bench_manual_time(ab);
    swfb_bench_unit(ab, SWFB_US);
    return swfb_main(argc, argv);
}
