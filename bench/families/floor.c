/*
 * bench/families/floor.c - the `floor` family: what filling N slots costs at the least,
 * measured in the same process as the seed family (bench_seed; this file has no main) and on the
 * same lists (lists.h: built once per N and order). Each is a floor for one part of a sweep's work:
 *
 *   floor/walk/n:N                 walk the list and read every slot (a relaxed load): the walk
 *                                  alone, which every algorithm pays at least once
 *   floor/walk_init/size:S/n:N     the walk, and for each empty slot pop a ready object from an
 *                                  array filled beforehand, initialise it (bobj_init, as the seed
 *                                  sweeps do) and publish it with a release store: a sweep whose
 *                                  allocator costs nothing and never fails. The objects live in
 *                                  one MAP_POPULATE mapping made once per run, so their pages are
 *                                  present; each iteration reuses them
 *   floor/first_touch/size:S/n:N   mmap N*S bytes of fresh anonymous memory and write one byte
 *                                  per page: the page faults that make N objects' memory usable
 *                                  (N pages for 4 KiB objects); munmap untimed
 *   floor/populate/size:S/n:N      mmap N*S bytes with MAP_POPULATE: the same memory pre-faulted
 *                                  by the kernel in one call, the cheapest way to get it ready;
 *                                  munmap untimed
 *
 * Before each timed walk the slots are cleared in memory order (untimed), as before each seed
 * sweep, so the list is in the same cache state for both. Times are manual (clock_gettime around
 * the measured part), reported per iteration; counter ns_per_member = time / N.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sweepfill/list.h>

#include "lists.h"
#include "shim/swfb.h"

static bool floor_shuffled = true;

static struct blist *list_or_error(swfb_state *st, size_t n)
{
    struct blist *l = blist_get(n, floor_shuffled);
    if (l == NULL)
        swfb_skip_with_error(st, "cannot build the list (out of memory)");
    return l;
}

static void finish(swfb_state *st, size_t n, double total_s, int64_t iters)
{
    double per = iters ? total_s / (double)iters : 0;
    swfb_counter_set(st, "seconds", per, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "ns_per_member", n ? per * 1e9 / (double)n : 0, SWFB_COUNTER_PLAIN);
    swfb_set_label(st, floor_shuffled ? "shuffled" : "in order");
}

static void bm_walk(swfb_state *st)
{
    size_t n = (size_t)swfb_range(st, 0);
    struct blist *l = list_or_error(st, n);
    if (l == NULL)
        return;
    double total = 0;
    int64_t iters = 0;
    size_t empty = 0;
    while (swfb_keep_running(st)) {
        blist_clear(l);
        uint64_t t0 = bench_now_ns();
        empty = 0;
        for (struct bmember *m = CK_LIST_FIRST(&l->head); m != NULL; m = CK_LIST_NEXT(m, link))
            empty += swf_slot_peek(&m->slot) == NULL;
        uint64_t t1 = bench_now_ns();
        swfb_do_not_optimize(&empty);
        double s = (double)(t1 - t0) * 1e-9;
        swfb_set_iteration_time(st, s);
        total += s;
        iters++;
    }
    if (empty != n) {
        swfb_skip_with_error(st, "the walk did not see every member");
        return;
    }
    finish(st, n, total, iters);
}

static void bm_walk_init(swfb_state *st)
{
    size_t size = (size_t)swfb_range(st, 0), n = (size_t)swfb_range(st, 1);
    struct blist *l = list_or_error(st, n);
    if (l == NULL)
        return;
    size_t bytes = (n ? n : 1) * size;
    char *region = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    void **ready = malloc((n ? n : 1) * sizeof(void *));
    if (region == MAP_FAILED || ready == NULL) {
        if (region != MAP_FAILED)
            munmap(region, bytes);
        free(ready);
        swfb_skip_with_error(st, "cannot map the objects");
        return;
    }
    for (size_t i = 0; i < n; i++)
        ready[i] = region + i * size;
    double total = 0;
    int64_t iters = 0;
    size_t left = 0;
    while (swfb_keep_running(st)) {
        blist_clear(l);
        uint64_t t0 = bench_now_ns();
        left = n;
        for (struct bmember *m = CK_LIST_FIRST(&l->head); m != NULL; m = CK_LIST_NEXT(m, link)) {
            if (swf_slot_peek(&m->slot) != NULL || left == 0)
                continue;
            void *obj = ready[--left];
            bobj_init(obj, m, NULL);
            swf_slot_publish(&m->slot, obj);
        }
        uint64_t t1 = bench_now_ns();
        double s = (double)(t1 - t0) * 1e-9;
        swfb_set_iteration_time(st, s);
        total += s;
        iters++;
    }
    bool complete = left == 0 && blist_empty(l) == 0;
    blist_clear(l);
    munmap(region, bytes);
    free(ready);
    if (!complete) {
        swfb_skip_with_error(st, "the walk did not fill every slot");
        return;
    }
    finish(st, n, total, iters);
}

static void bm_map(swfb_state *st, bool populate)
{
    size_t size = (size_t)swfb_range(st, 0), n = (size_t)swfb_range(st, 1);
    size_t bytes = (n ? n : 1) * size;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    double total = 0, thp = 0, stalls = 0, steal = 0;
    int64_t iters = 0;
    while (swfb_keep_running(st)) {
        bench_host_prepare(bytes, BENCH_PAGES_BASE);
        struct bench_vm v0, v1, dv;
        bench_vm_read(&v0);
        uint64_t t0 = bench_now_ns();
        char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0), -1, 0);
        if (p == MAP_FAILED) {
            swfb_skip_with_error(st, "mmap failed");
            return;
        }
        if (!populate)
            for (size_t off = 0; off < bytes; off += page)
                ((volatile char *)p)[off] = 1;
        uint64_t t1 = bench_now_ns();
        bench_vm_read(&v1);
        bench_vm_delta(&dv, &v1, &v0);
        thp += dv.thp_fault_alloc, stalls += dv.compact_stall, steal += dv.steal_s;
        munmap(p, bytes);
        double s = (double)(t1 - t0) * 1e-9;
        swfb_set_iteration_time(st, s);
        total += s;
        iters++;
    }
    finish(st, n, total, iters);
    if (iters > 0) {
        swfb_counter_set(st, "thp_fault_alloc", thp / (double)iters, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "compact_stall", stalls / (double)iters, SWFB_COUNTER_PLAIN);
        swfb_counter_set(st, "steal_s", steal / (double)iters, SWFB_COUNTER_PLAIN);
    }
    swfb_counter_set(st, "pages", (double)((bytes + page - 1) / page), SWFB_COUNTER_PLAIN);
}

static void bm_first_touch(swfb_state *st)
{
    bm_map(st, false);
}

static void bm_populate(swfb_state *st)
{
    bm_map(st, true);
}

static swfb_bench *add(const char *name, swfb_fn *fn)
{
    swfb_bench *b = swfb_register(name, fn);
    swfb_bench_manual_time(b);
    swfb_bench_unit(b, SWFB_MS);
    return b;
}

void floor_register(const int64_t *sizes, int nsizes, const int64_t *ns, int nn, bool shuffled)
{
    floor_shuffled = shuffled;
    swfb_bench *b = add("floor/walk", bm_walk);
    swfb_bench_arg_names(b, "n", NULL);
    for (int k = 0; k < nn; k++)
        swfb_bench_arg(b, ns[k]);
    static const struct {
        const char *name;
        swfb_fn *fn;
    } sized[] = {
        {"floor/walk_init", bm_walk_init},
        {"floor/first_touch", bm_first_touch},
        {"floor/populate", bm_populate},
    };
    for (size_t i = 0; i < sizeof(sized) / sizeof(sized[0]); i++) {
        b = add(sized[i].name, sized[i].fn);
        bench_args_size_n(b, sizes, nsizes, ns, nn);
        if (sized[i].fn != bm_walk_init && bench_host_state == BENCH_HOST_COLD)
            swfb_bench_iterations(b, 1); /* cold: one measurement per preparation */
    }
}
