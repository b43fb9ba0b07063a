/*
 * test/concurrent/feature_concurrent.c - exact activation on the user's own lists (feature.h), over
 * the kinds of test/concurrent/sweep_concurrent.c (whose lists, readers, writer hooks and
 * reclamation it reuses): CK_LIST_AUTO under ck_epoch, a sys/queue TAILQ under a rwlock, a bucket
 * array resized and a ck_hs rebuilt while the activation or deactivation walk is outside its
 * section, and (built with liburcu) cds_list and cds_hlist with the memb flavour.
 *
 * For each kind, a writer (two for the lists under the rwlock) adds and removes members as fast
 * as it can (hundreds of thousands of adds per kind in the plain build): after each insert it
 * calls swf_feature_added(SWF_NOWAIT); the cache fails half the NOWAIT allocations (failslab),
 * and on EAGAIN the writer either retries with SWF_WAIT (it holds no lock there) or leaves the
 * slot owed. Removed members are retired with the library's pin, and their free
 * callback calls swf_feature_release. Readers walk the list and check every object they load
 * (initialised, for that member). The main thread runs activate / catch-up / deactivate cycles
 * meanwhile and checks, each inside a read section while the writer runs:
 *   - after activate and a catch-up: no member lacks an object among those linked whose
 *     swf_feature_added returned 0 (a member's stamp is stored with release after its add
 *     returned), or that were left owed before the catch-up began;
 *   - after deactivate: no linked member holds an object.
 * At the end: every member freed exactly once, objects published (by adders, sweeps and the
 * catch-ups' owed-table fills) ==
 * objects taken back by deactivate + by swf_feature_release, and the cache's alive count 0.
 * The library's debug checks abort on a double free. Run twice by meson: with membarrier where
 * the kernel has it, and with SWF_NO_MEMBARRIER=1 (the adders' fence path).
 */
#define main                       sweep_concurrent_main_unused
#define SWF_TEST_RELEASE_OBJECT(t) feature_release_object(t)
static void feature_release_object(void *t);
#include "sweep_concurrent.c"
#undef main

#include <sweepfill/feature.h>

static struct swf_feature *feature;
static uint64_t feature_adds; /* the writer's, read by the main thread */
static size_t feature_members;

#define OWED      (1ull << 62) /* the stamp of a member its add left owed */
#define UNSETTLED UINT64_MAX   /* linked, swf_feature_added not returned yet */

static void feature_release_object(void *p)
{
    struct tracked *t = p;
    tap_require(swf_feature_release(feature, &t->m) == 0, "swf_feature_release");
}

static void feature_add(struct writer_state *w)
{
    struct tracked *t = new_member(w); /* its stamp is UNSETTLED */
    struct tracked *after = NULL;
    if (w->nlinked > 0 && (tap_rand(&w->rng) & 1))
        after = w->linked[tap_rand(&w->rng) % w->nlinked];
    K->insert(t, after);
    int err = swf_feature_added(feature, &t->m, SWF_NOWAIT);
    uint64_t owed = 0;
    if (err == EAGAIN && (tap_rand(&w->rng) & 1))
        err = swf_feature_added(feature, &t->m, SWF_WAIT); /* no lock held; its only deleter */
    if (err == EAGAIN)
        owed = OWED; /* left to the catch-up */
    else
        tap_require(err == 0, "swf_feature_added");
    __atomic_store_n(&t->added_at, __atomic_add_fetch(&clock_now, 1, __ATOMIC_ACQ_REL) | owed,
                     __ATOMIC_RELEASE);
    if (w->nlinked == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 1024;
        w->linked = realloc(w->linked, w->cap * sizeof(*w->linked));
    }
    w->linked[w->nlinked++] = t;
    w->added++;
    __atomic_fetch_add(&feature_adds, 1, __ATOMIC_RELAXED);
}

static void *feature_writer(void *arg)
{
    struct writer_state *w = arg;
    CALL0(thread_start);
    while (!__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE)) {
        CALL0(writer_begin);
        for (int k = 0; k < 64; k++) {
            if (w->nlinked < feature_members / 2 || (tap_rand(&w->rng) & 1))
                feature_add(w);
            else
                remove_member(w, tap_rand(&w->rng) % w->nlinked);
        }
        CALL0(writer_end);
        CALL(writer_poll, w);
        if (K->resize != NULL && __atomic_load_n(&want_resize, __ATOMIC_ACQUIRE)) {
            K->resize();
            __atomic_store_n(&want_resize, 0, __ATOMIC_RELEASE);
        }
    }
    CALL(drain, w);
    CALL0(thread_stop);
    return NULL;
}

/* Inside a section: members that must have an object (on) or must not (off), and those wrong. */
static size_t feature_check(bool on, uint64_t catch_up_began, size_t *checked)
{
    size_t wrong = 0;
    union walk_state ws;
    struct swf_list l = walk_list(&ws);
    *checked = 0;
    CALL0(read_lock);
    for (void *p = l.ops->first(l.list); p != NULL; p = l.ops->next(l.list, p)) {
        struct tracked *t = p;
        uint64_t stamp = __atomic_load_n(&t->added_at, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&t->removed, __ATOMIC_RELAXED))
            continue;
        void *obj = swf_slot_load(&t->m.slot);
        if (!on) {
            (*checked)++;
            wrong += obj != NULL;
        } else if (stamp != UNSETTLED && (!(stamp & OWED) || (stamp & ~OWED) < catch_up_began)) {
            (*checked)++;
            wrong += obj == NULL;
        }
    }
    CALL0(read_unlock);
    return wrong;
}

static void feature_synchronize(void *arg)
{
    (void)arg;
    K->synchronize();
}

static void run_feature_kind(const struct kind *kind)
{
    K = kind;
    wrap_ops();
    diag("%s", K->name);
    bool small = TAP_SANITIZED || tap_under_valgrind() || tap_under_qemu();
    feature_members = small ? 1000 : 4000;
    const uint64_t adds_wanted = small ? 10000 : 200000;
    __atomic_store_n(&stop_writer, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stop_readers, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&bad_objects, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&objects_seen, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&members_freed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&feature_adds, 0, __ATOMIC_RELAXED);
    struct swf_cache_config ccfg = {.object_size = sizeof(struct payload), .name = "feature"};
    tap_require(swf_cache_create(&ccfg, &cache) == 0, "cache");
    struct swf_failslab fs = {.probability = 50, .interval = 1, .times = -1, .seed = 5};
    swf_cache_set_failslab(cache, &fs);

    CALL0(thread_start);
    static union walk_state ws; /* the feature's walks use it: it lives as long as the feature */
    static struct resizing_guard rg;
    memset(&rg, 0, sizeof(rg));
    K->guard(&rg.inner);
    struct swf_feature_config fc;
    swf_feature_config_init(&fc);
    fc.sweep.list = walk_list(&ws);
    fc.sweep.cache = cache;
    fc.sweep.init = payload_init;
    fc.sweep.reserve = RESERVE;
    fc.sweep.section_bound = BOUND;
    fc.sweep.guard = rg.inner;
    if (K->resizes)
        fc.sweep.guard = (struct swf_guard){resizing_enter, resizing_leave, &rg, rg.inner.flags};
    fc.synchronize = feature_synchronize;
    fc.prepare = 2 * feature_members + RESERVE;
    tap_require(swf_feature_create(&fc, &feature) == 0, "swf_feature_create");

    static struct writer_state w, w2;
    free(w.linked);
    memset(&w, 0, sizeof(w));
    w.rng = 0x9e3779b97f4a7c15ull ^ (uintptr_t)kind;
    free(w2.linked);
    memset(&w2, 0, sizeof(w2));
    w2.rng = 0x2545f4914f6cdd1dull ^ (uintptr_t)kind;
    w2.next_id = 1ull << 40;
    /* The lists under the rwlock take concurrent adders: a second writer adds and removes its
     * own members (the ck_epoch and urcu kinds have a single writer, as their lists require). */
    bool two = K->insert == tailq_insert || K->insert == buckets_insert;
    CALL0(writer_begin);
    for (size_t i = 0; i < feature_members; i++)
        feature_add(&w);
    CALL0(writer_end);

    pthread_t readers[READERS], wt;
    for (int i = 0; i < READERS; i++)
        pthread_create(&readers[i], NULL, reader, NULL);
    pthread_t wt2;
    pthread_create(&wt, NULL, feature_writer, &w);
    if (two)
        pthread_create(&wt2, NULL, feature_writer, &w2);

    int cycles = 0;
    size_t lacking = 0, holding = 0, checked_on = 0, checked_off = 0;
    int errors = 0;
    while (cycles < 20 ||
           (__atomic_load_n(&feature_adds, __ATOMIC_RELAXED) < adds_wanted && cycles < 2000)) {
        size_t checked;
        wait_for_writer(__atomic_load_n(&clock_now, __ATOMIC_ACQUIRE), 256);
        rg.leaves = 0;
        errors += swf_feature_activate(feature, NULL) != 0;
        wait_for_writer(__atomic_load_n(&clock_now, __ATOMIC_ACQUIRE), 256);
        uint64_t began = __atomic_load_n(&clock_now, __ATOMIC_ACQUIRE);
        rg.leaves = 0;
        errors += swf_feature_catch_up(feature, NULL) != 0;
        lacking += feature_check(true, began, &checked);
        checked_on += checked;
        wait_for_writer(__atomic_load_n(&clock_now, __ATOMIC_ACQUIRE), 128);
        rg.leaves = 0;
        errors += swf_feature_deactivate(feature) != 0;
        holding += feature_check(false, 0, &checked);
        checked_off += checked;
        cycles++;
    }
    struct swf_feature_stats fst;
    swf_feature_stats(feature, &fst);
    ok(errors == 0 && lacking == 0,
       "%s: %d activations while adding: %zu of %zu checks found a member without an object "
       "(%llu by adders, %llu by sweeps, %llu lost races, %llu left owed, %llu catch-ups; "
       "membarrier %u)",
       K->name, cycles, lacking, checked_on, (unsigned long long)fst.assigned_by_add,
       (unsigned long long)fst.assigned_by_sweep, (unsigned long long)fst.lost_races,
       (unsigned long long)fst.left_owed, (unsigned long long)fst.catch_ups, fst.membarrier);
    ok(holding == 0, "%s: after each deactivation: %zu of %zu checks found a member holding one",
       K->name, holding, checked_off);

    __atomic_store_n(&stop_writer, 1, __ATOMIC_RELEASE);
    pthread_join(wt, NULL);
    if (two)
        pthread_join(wt2, NULL);
    __atomic_store_n(&stop_readers, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++)
        pthread_join(readers[i], NULL);
    ok(bad_objects == 0, "%s: readers saw %llu objects, none uninitialised or another member's",
       K->name, (unsigned long long)objects_seen);

    CALL0(writer_begin);
    while (w.nlinked > 0)
        remove_member(&w, w.nlinked - 1);
    while (w2.nlinked > 0)
        remove_member(&w2, w2.nlinked - 1);
    CALL0(writer_end);
    CALL(drain, &w);
    CALL0(thread_stop);
    uint64_t freed = __atomic_load_n(&members_freed, __ATOMIC_ACQUIRE);
    uint64_t added = w.added + w2.added, removed = w.removed + w2.removed;
    ok(removed == added && freed == added && added >= adds_wanted,
       "%s: %llu members added (%s), %llu removed, %llu freed (each exactly once)", K->name,
       (unsigned long long)added, two ? "two adders" : "one adder", (unsigned long long)removed,
       (unsigned long long)freed);
    swf_feature_stats(feature, &fst);
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    uint64_t published = fst.assigned_by_add + fst.assigned_by_sweep + fst.filled_by_catch_up;
    ok(s.alive == 0 && published == fst.unpublished + fst.released,
       "%s: conservation: %llu objects published == %llu taken back by deactivate + %llu by "
       "swf_feature_release; cache alive %llu",
       K->name, (unsigned long long)published, (unsigned long long)fst.unpublished,
       (unsigned long long)fst.released, (unsigned long long)s.alive);
    ok(swf_feature_destroy(feature) == 0 && swf_cache_destroy(cache) == 0, "%s: destroy", K->name);
    free(w.linked);
    w.linked = NULL;
    free(w2.linked);
    w2.linked = NULL;
}

int main(void)
{
    lists_init();
    /* Not the first kind, whose writer waits for a grace period every 64 operations: the
     * hand-written pins are sweep_concurrent's subject, CK_LIST_AUTO is this one's. */
    for (size_t i = 1; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        run_feature_kind(&kinds[i]);
    lists_fini();
    return tap_done();
}
