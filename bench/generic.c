/*
 * bench/generic.c - the `generic` family: what the sweep's genericity costs. The same job - for
 * each member whose slot is NULL, swf_cache_alloc(c, SWF_NOWAIT), initialise (bobj_init),
 * publish with a release store - done three ways on the same CK_LIST (lists.h):
 *
 *   generic/hand/order:O/n:N       a hand-written CK_LIST_FOREACH loop inside one ck_epoch
 *                                  section: the least any generic code can cost
 *   generic/macro/order:O/n:N      a sweep generated with SWF_SWEEP_DEFINE on the blp adapter
 *                                  (SWF_LIST_CK_LIST_PINNED, no-op pins): list ops and init
 *                                  called directly, inlined
 *   generic/ops_table/order:O/n:N  swf_sweep from the shared library on the same adapter's ops
 *                                  table: an indirect call per list step and per init
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
 * Own flags: --n=10k,100k (members), --quick (n=10k only).
 */
#include <stdio.h>
#include <stdlib.h>

#include <sweepfill/cache.h>
#include <sweepfill/sweep.h>

#include "lists.h"
#include "shim/swfb.h"

enum { OBJ_SIZE = 64, MAX_ARGS = 8 };

SWF_SWEEP_DEFINE(macro_sweep, blp, bobj_init)

static struct swf_cache *cache; /* the current run's */

typedef int fill_fn(struct blist *l, uint64_t *fails);

struct variant {
    const char *name;
    fill_fn *fill;
};

static int fill_hand(struct blist *l, uint64_t *fails)
{
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
    swf_guard_epoch(&cfg->guard, bench_epoch_record());
}

static int fill_macro(struct blist *l, uint64_t *fails)
{
    struct swf_sweep_config cfg;
    struct swf_sweep_stats st;
    sweep_cfg(&cfg, l);
    int err = macro_sweep(&cfg, &st);
    *fails += st.nowait_failures;
    return err;
}

static int fill_ops(struct blist *l, uint64_t *fails)
{
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
    struct blist *l = blist_get(n, shuffled);
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
    blist_clear(l);
    const char *msg = NULL;
    uint64_t fails = 0;
    double total = 0;
    int64_t iters = 0;
    while (swfb_keep_running(st)) {
        uint64_t t0 = bench_now_ns();
        int err = var->fill(l, &fails);
        uint64_t t1 = bench_now_ns();
        size_t empty = blist_empty(l);
        if (blist_release_reverse(l, cache, NULL) == (size_t)-1)
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
    blist_release(l, cache, NULL);
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

int main(int argc, char **argv)
{
    int64_t ns[MAX_ARGS] = {10000, 100000};
    int nn = 2;
    if (bench_take_flag(&argc, argv, "quick") != NULL)
        nn = 1;
    const char *v = bench_take_flag(&argc, argv, "n");
    if (v != NULL && (nn = bench_parse_list(v, ns, MAX_ARGS)) <= 0) {
        fprintf(stderr, "bench_generic: --n=%s: expected a comma-separated list of numbers\n", v);
        return 1;
    }
    swfb_add_context("list", "CK_LIST of 128-byte members, SWF_LIST_CK_LIST_PINNED, no-op pins");
    swfb_add_context("object_size", "64");
    static const struct variant variants[] = {
        {"generic/hand", fill_hand},
        {"generic/macro", fill_macro},
        {"generic/ops_table", fill_ops},
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
    return swfb_main(argc, argv);
}
