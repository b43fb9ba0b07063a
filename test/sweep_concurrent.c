/*
 * test/sweep_concurrent.c - sweeps on a live CK_LIST while readers walk it and a writer adds and
 * removes members.
 *
 * - Readers walk the list inside ck_epoch sections and load every slot with swf_slot_load; a
 *   non-NULL slot must hold an object initialised for that member (the canary): initialisation
 *   happens-before publication.
 * - The writer inserts members (at the head and after random members, so some land behind the
 *   sweep's cursor) and removes members, which it frees, with their objects, after a grace
 *   period and once no sweep holds them pinned.
 * - The sweeper runs rounds of RESUME, RESTART and BATCH_RESTART with a small reserve, 50%
 *   injected NOWAIT failures (so it leaves its section to refill often) and a section bound, on a
 *   pinnable list. After each round it checks, inside a section, that every member added before
 *   the round began and still linked now (so linked throughout) has a slot.
 * - Between rounds the sweeper takes every object back (swf_slot_take inside a section, then
 *   swf_cache_free_deferred), so each round starts from empty slots while the writer keeps
 *   going; each round also waits until the writer has made progress.
 * - At the end everything is removed and reclaimed: the cache's alive count must return to zero
 *   (objects assigned == objects freed), and the number of members seen with an object must
 *   never have included an uninitialised one.
 */
#include <errno.h>
#include <sched.h>
#include <ck_epoch.h>

#include "members.h"
#include "tap.h"
#include "tsan.h"

/* Members linked at the start: 20,000, or 5,000 under sanitizers, valgrind and qemu (main). */
static size_t initial_members;
#define INITIAL_MEMBERS initial_members
enum { READERS = 2, ROUNDS = 9, RESERVE = 8, BOUND = 64 };

static ck_epoch_t epoch;
static struct member_list live = CK_LIST_HEAD_INITIALIZER(live);
static struct swf_cache *cache;
static uint64_t clock_now; /* writer operations so far; members remember when they were added */
static int stop_writer, stop_readers;
static uint64_t bad_objects, objects_seen;

struct tracked {
    struct member m;
    uint64_t added_at;
};

/*
 * CK_LIST publishes a member with a store fence and a volatile store, which ThreadSanitizer does
 * not model; the writer annotates a release on each member before linking it, and everything
 * that walks the list acquires on each member it reaches (no-ops without TSan).
 */
static struct member *visible(struct member *m)
{
    if (m != NULL)
        swf_tsan_acquire(m);
    return m;
}

static void *tsan_first(void *list)
{
    return visible(CK_LIST_FIRST((struct member_list *)list));
}

static void *tsan_next(void *list, void *m)
{
    (void)list;
    return visible(CK_LIST_NEXT((struct member *)m, link));
}

static void tsan_pin(void *list, void *m)
{
    (void)list;
    member_pin(m);
}

static void tsan_unpin(void *list, void *m)
{
    (void)list;
    member_unpin(m);
}

static bool tsan_linked(void *list, void *m)
{
    (void)list;
    return member_linked(m);
}

static const struct swf_list_ops live_ops = {tsan_first, tsan_next, tsan_pin, tsan_unpin,
                                             tsan_linked};

static void reader_leave(ck_epoch_record_t *rec)
{
    swf_tsan_release(&epoch); /* see lib/tsan.h */
    ck_epoch_end(rec, NULL);
}

static void *reader(void *arg)
{
    (void)arg;
    ck_epoch_record_t *rec = malloc(sizeof(*rec));
    ck_epoch_register(&epoch, rec, NULL);
    uint64_t bad = 0, seen = 0;
    while (!__atomic_load_n(&stop_readers, __ATOMIC_ACQUIRE)) {
        ck_epoch_begin(rec, NULL);
        for (struct member *m = tsan_first(&live); m != NULL; m = tsan_next(&live, m)) {
            struct payload *p = swf_slot_load(&m->slot);
            if (p != NULL) {
                seen++;
                bad += !payload_ok(p, m);
            }
        }
        reader_leave(rec);
    }
    __atomic_fetch_add(&bad_objects, bad, __ATOMIC_RELAXED);
    __atomic_fetch_add(&objects_seen, seen, __ATOMIC_RELAXED);
    ck_epoch_unregister(rec);
    return NULL;
}

/* The writer's private view: members it may remove, and removed ones awaiting reclamation. */
struct writer_state {
    struct tracked **linked;
    size_t nlinked, cap;
    struct tracked **limbo;
    size_t nlimbo, limbo_cap;
    ck_epoch_record_t rec;
    uint64_t rng;
    uint64_t added, removed, reclaimed, objects_freed;
};

static void add_member(struct writer_state *w)
{
    /* The fields other threads read are written atomically: CK_LIST's publication (a fence and a
     * volatile store) orders them, but ThreadSanitizer cannot see that (test/tsan.supp). */
    struct tracked *t = malloc(sizeof(*t));
    __atomic_store_n(&t->m.slot, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.pins, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.linked, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->added_at, UINT64_MAX, __ATOMIC_RELAXED); /* stamped once linked */
    swf_tsan_release(&t->m); /* the insert publishes it: see visible() */
    if (w->nlinked > 0 && (tap_rand(&w->rng) & 1)) {
        struct tracked *after = w->linked[tap_rand(&w->rng) % w->nlinked];
        CK_LIST_INSERT_AFTER(&after->m, &t->m, link);
    } else {
        CK_LIST_INSERT_HEAD(&live, &t->m, link);
    }
    /* The stamp comes from the clock after the member is linked: a sweep that read the clock
     * at or after this value started after the insert, so its walk can reach the member. */
    __atomic_store_n(&t->added_at, __atomic_add_fetch(&clock_now, 1, __ATOMIC_ACQ_REL),
                     __ATOMIC_RELAXED);
    if (w->nlinked == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 1024;
        w->linked = realloc(w->linked, w->cap * sizeof(*w->linked));
    }
    w->linked[w->nlinked++] = t;
    w->added++;
}

static void remove_member(struct writer_state *w, size_t i)
{
    struct tracked *t = w->linked[i];
    w->linked[i] = w->linked[--w->nlinked];
    /* Unlink first, then say so: a sweep that sees linked == 1 in a section that began before
     * the removal may still walk on from it, which the grace period keeps safe. */
    CK_LIST_REMOVE(&t->m, link);
    __atomic_store_n(&t->m.linked, 0, __ATOMIC_RELEASE);
    if (w->nlimbo == w->limbo_cap) {
        w->limbo_cap = w->limbo_cap ? 2 * w->limbo_cap : 1024;
        w->limbo = realloc(w->limbo, w->limbo_cap * sizeof(*w->limbo));
    }
    w->limbo[w->nlimbo++] = t;
    w->removed++;
}

/* Wait for a grace period, then free every removed member no sweep holds pinned. */
static void reclaim(struct writer_state *w)
{
    ck_epoch_synchronize(&w->rec);
    swf_tsan_acquire(&epoch);
    size_t kept = 0;
    for (size_t i = 0; i < w->nlimbo; i++) {
        struct tracked *t = w->limbo[i];
        if (__atomic_load_n(&t->m.pins, __ATOMIC_ACQUIRE) != 0) {
            w->limbo[kept++] = t; /* a sweep's cursor: next time */
            continue;
        }
        w->objects_freed += t->m.slot != NULL;
        swf_cache_free(cache, t->m.slot);
        free(t);
        w->reclaimed++;
    }
    w->nlimbo = kept;
}

static void *writer(void *arg)
{
    struct writer_state *w = arg;
    ck_epoch_register(&epoch, &w->rec, NULL);
    while (!__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE)) {
        for (int k = 0; k < 64; k++) {
            if (w->nlinked < INITIAL_MEMBERS / 2 || (tap_rand(&w->rng) & 1))
                add_member(w);
            else
                remove_member(w, tap_rand(&w->rng) % w->nlinked);
        }
        reclaim(w);
    }
    return NULL;
}

/* Take every linked member's object back and free them all after a grace period. */
static uint64_t clear_slots(ck_epoch_record_t *rec)
{
    enum { BATCH = 256 };
    void *objs[BATCH];
    uint64_t cleared = 0;
    size_t n = 0;
    ck_epoch_begin(rec, NULL);
    for (struct member *m = tsan_first(&live); m != NULL; m = tsan_next(&live, m)) {
        void *obj = swf_slot_take(&m->slot);
        if (obj == NULL)
            continue;
        objs[n++] = obj;
        if (n == BATCH) {
            swf_cache_free_deferred(cache, rec, objs, n);
            cleared += n;
            n = 0;
        }
    }
    reader_leave(rec);
    swf_cache_free_deferred(cache, rec, objs, n);
    swf_cache_quiesce(cache, rec);
    return cleared + n;
}

static void wait_for_writer(uint64_t since, uint64_t ops)
{
    while (__atomic_load_n(&clock_now, __ATOMIC_ACQUIRE) < since + ops)
        sched_yield();
}

/* Inside a section: members added before `since` and still linked have a slot. */
static size_t count_missing(ck_epoch_record_t *rec, uint64_t since, size_t *checked)
{
    size_t missing = 0;
    *checked = 0;
    ck_epoch_begin(rec, NULL);
    for (struct member *m = tsan_first(&live); m != NULL; m = tsan_next(&live, m)) {
        struct tracked *t = (struct tracked *)m;
        if (__atomic_load_n(&t->added_at, __ATOMIC_RELAXED) <= since && member_linked(m)) {
            (*checked)++;
            missing += swf_slot_load(&m->slot) == NULL;
        }
    }
    reader_leave(rec);
    return missing;
}

int main(void)
{
    initial_members = TAP_SANITIZED || tap_under_valgrind() || tap_under_qemu() ? 5000 : 20000;
    ck_epoch_init(&epoch);
    struct swf_cache_config ccfg = {.object_size = sizeof(struct payload), .name = "concurrent"};
    tap_require(swf_cache_create(&ccfg, &cache) == 0, "cache");
    struct swf_failslab fs = {.probability = 50, .interval = 1, .times = -1, .seed = 3};
    swf_cache_set_failslab(cache, &fs);

    static struct writer_state w = {.rng = 0x9e3779b97f4a7c15ull};
    for (size_t i = 0; i < INITIAL_MEMBERS; i++)
        add_member(&w);

    pthread_t readers[READERS], wt;
    for (int i = 0; i < READERS; i++)
        pthread_create(&readers[i], NULL, reader, NULL);
    pthread_create(&wt, NULL, writer, &w);

    static ck_epoch_record_t rec;
    ck_epoch_register(&epoch, &rec, NULL);
    static const enum swf_algo algos[3] = {SWF_RESUME, SWF_RESTART, SWF_BATCH_RESTART};
    uint64_t total_assigned = 0, cleared = 0;
    for (int round = 0; round < ROUNDS; round++) {
        wait_for_writer(__atomic_load_n(&clock_now, __ATOMIC_ACQUIRE), 512);
        struct swf_sweep_config cfg;
        swf_sweep_config_init(&cfg);
        cfg.list = (struct swf_list){&live_ops, &live, offsetof(struct member, slot)};
        cfg.cache = cache;
        cfg.init = payload_init;
        cfg.reserve = RESERVE;
        cfg.section_bound = BOUND;
        cfg.algo = algos[round % 3];
        swf_guard_epoch(&cfg.guard, &rec);
        uint64_t since = __atomic_load_n(&clock_now, __ATOMIC_ACQUIRE);
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        size_t checked;
        size_t missing = count_missing(&rec, since, &checked);
        ok(err == 0 && missing == 0 && st.longest_section <= BOUND,
           "round %d (%s): %llu assigned, %llu visits, %llu passes, %llu refills, %llu "
           "restarts, longest section %llu; %zu of %zu members linked throughout lack a slot",
           round,
           round % 3 == 0   ? "RESUME"
           : round % 3 == 1 ? "RESTART"
                            : "BATCH_RESTART",
           (unsigned long long)st.assigned, (unsigned long long)st.visits,
           (unsigned long long)st.passes, (unsigned long long)st.refills,
           (unsigned long long)st.restarts, (unsigned long long)st.longest_section, missing,
           checked);
        total_assigned += st.assigned;
        cleared += clear_slots(&rec);
    }

    __atomic_store_n(&stop_writer, 1, __ATOMIC_RELEASE);
    pthread_join(wt, NULL);
    __atomic_store_n(&stop_readers, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++)
        pthread_join(readers[i], NULL);
    ok(bad_objects == 0, "readers saw %llu objects, none uninitialised or another member's",
       (unsigned long long)objects_seen);

    while (w.nlinked > 0)
        remove_member(&w, w.nlinked - 1);
    ck_epoch_unregister(&rec);
    reclaim(&w);
    ok(w.nlimbo == 0 && w.reclaimed == w.added,
       "writer added %llu, removed and reclaimed %llu members", (unsigned long long)w.added,
       (unsigned long long)w.reclaimed);
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    ok(s.alive == 0 && w.objects_freed + cleared == total_assigned,
       "conservation: %llu objects assigned over all rounds == %llu taken back + %llu freed with "
       "their members; cache alive %llu",
       (unsigned long long)total_assigned, (unsigned long long)cleared,
       (unsigned long long)w.objects_freed, (unsigned long long)s.alive);
    ok(swf_cache_destroy(cache) == 0, "destroy");
    free(w.linked);
    free(w.limbo);
    return tap_done();
}
