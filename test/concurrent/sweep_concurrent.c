/*
 * test/concurrent/sweep_concurrent.c - sweeps on live lists while readers walk them and a writer
 * adds and removes members, over every kind of list the adapters serve. One test body; a table of
 * kinds says how each list is read, changed, guarded and reclaimed:
 *
 *   CK_LIST, hand-written pins   ck_epoch readers; the writer frees removed members itself after
 *                                a grace period, once no sweep holds them pinned (what a program
 *                                that writes its own pins does)
 *   CK_LIST_AUTO                 ck_epoch; the library's pin: swf_pin_retire with
 *                                swf_grace_epoch (ck_epoch_call), callbacks run in the writer's
 *                                ck_epoch_poll
 *   sys TAILQ_AUTO               <sys/queue.h> under a writer-preferring rwlock; swf_grace_lock
 *   buckets CK_LIST_AUTO         a bucket array under the rwlock, resized (every member moved to
 *                                a new bucket array) once per round while the sweep is outside
 *                                its section with its cursor pinned
 *   ck_hs AUTO                   ck_hs (SPMC) with ck_epoch; maps freed after a grace period,
 *                                rebuilt (a new map) once per round, likewise
 *   cds_list_AUTO, cds_hlist_AUTO   liburcu, built once per flavour (sweep_concurrent_urcu_*):
 *                                its guard (qsbr: online/offline), swf_grace_urcu (call_rcu)
 *
 * For each kind:
 * - Readers walk the list inside read-side sections and load every slot with swf_slot_load; a
 *   non-NULL slot must hold an object initialised for that member (the canary): initialisation
 *   happens-before publication.
 * - The writer inserts members (at the head, or after random members where the list allows it,
 *   so some land behind the sweep's cursor) and removes members: unlink and retire, so each is
 *   freed, with its object, once its grace period is over and no sweep holds it pinned.
 * - The sweeper runs rounds of RESUME, RESTART and BATCH_RESTART with a small reserve, 50%
 *   injected NOWAIT failures (so it leaves its section to refill often) and a section bound.
 *   After each round it checks, inside a section, that every member added before the round began
 *   and not removed since has a slot. RESUME must resume: it never falls back to RESTART, and
 *   its passes are 1 + the times it found its pinned cursor gone (removed, or the table resized):
 *   one pass unless the writer took the cursor. A resize while the cursor is pinned must be seen
 *   (a lost cursor) and the walk still complete: every member present throughout gets a slot.
 * - Between rounds the sweeper takes every object back (swf_slot_take inside a section, then a
 *   grace period, then swf_cache_free), so each round starts from empty slots.
 * - At the end everything is removed and reclaimed. Conservation: every removed member was freed
 *   exactly once (frees == members added; a second free would be a double free that the
 *   sanitizers and glibc catch), objects assigned over all rounds == objects taken back + objects
 *   freed with their members, and the cache's alive count is back to zero.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <stddef.h>
#include <ck_epoch.h>

#include "../common/members.h"
#include "../common/tap.h"
#include "base/tsan.h"

enum { READERS = 2, RESERVE = 8, BOUND = 64 };

static ck_epoch_t epoch;
static struct swf_cache *cache;
static uint64_t clock_now; /* writer operations so far; members remember when they were added */
static int stop_writer, stop_readers, want_resize;
static uint64_t bad_objects, objects_seen;
static uint64_t members_freed, objects_freed; /* with removed members */

struct tracked {
    struct member m;
    uint64_t added_at;
    uint32_t removed;
};

#define TRACKED_OF_PIN(p) ((struct tracked *)(void *)((char *)(p)-offsetof(struct tracked, m.pin)))

/* A removed member's end: its object back to the cache, its memory freed. */
static void free_tracked(struct tracked *t)
{
#ifdef SWF_TEST_RELEASE_OBJECT
    SWF_TEST_RELEASE_OBJECT(t); /* test/concurrent/feature_concurrent.c: swf_feature_release */
#else
    void *obj = swf_slot_take(&t->m.slot);
    if (obj != NULL) {
        swf_cache_free(cache, obj);
        __atomic_fetch_add(&objects_freed, 1, __ATOMIC_RELAXED);
    }
#endif
    __atomic_fetch_add(&members_freed, 1, __ATOMIC_RELAXED);
    free(t);
    /* rcu_barrier waits for this to have run, through liburcu's own synchronisation, which
     * ThreadSanitizer cannot see: urcu_drain acquires what this releases. */
    swfi_tsan_release(&members_freed);
}

/* swf_pin_retire's free_fn. */
static void free_pinned(struct swf_pin *pin)
{
    free_tracked(TRACKED_OF_PIN(pin));
}

/* Walk state for the adapters that keep some (list_hash.h). */
union walk_state {
    struct swf_bucket_walk b;
    struct swf_hs_walk h;
};

struct writer_state;

/* How one kind of list is read, changed, guarded and reclaimed. NULL hooks do nothing. */
struct kind {
    const char *name;
    bool urcu; /* run by the per-flavour builds (SWF_TEST_URCU_ONLY), not the main one */
    int rounds;
    bool resizes;
    void (*thread_start)(void);
    void (*thread_stop)(void);
    void (*read_lock)(void);
    void (*read_unlock)(void);
    struct swf_list (*list)(union walk_state *ws);
    void (*guard)(struct swf_guard *g);
    void (*writer_begin)(void);
    void (*writer_end)(void);
    void (*insert)(struct tracked *t, struct tracked *after); /* after may be NULL */
    void (*remove)(struct writer_state *w, struct tracked *t);
    void (*writer_poll)(struct writer_state *w);
    void (*resize)(void);
    void (*drain)(struct writer_state *w); /* every retired member of this thread is freed */
    void (*synchronize)(void);             /* a grace period, outside any section */
};

static const struct kind *K;

/* ---- ck_epoch ------------------------------------------------------------------------------ */

static _Thread_local ck_epoch_record_t *trec; /* this thread's record */

static void epoch_thread_start(void)
{
    trec = ck_epoch_recycle(&epoch, NULL);
    if (trec == NULL) {
        trec = malloc(sizeof(*trec)); /* stays on the epoch's list: recycled, never freed */
        tap_require(trec != NULL, "epoch record");
        ck_epoch_register(&epoch, trec, NULL);
    }
}

static void epoch_thread_stop(void)
{
    ck_epoch_unregister(trec);
    trec = NULL;
}

static void epoch_read_lock(void)
{
    ck_epoch_begin(trec, NULL);
}

static void epoch_read_unlock(void)
{
    swfi_tsan_release(&epoch); /* see lib/base/tsan.h */
    ck_epoch_end(trec, NULL);
}

static void epoch_guard(struct swf_guard *g)
{
    swf_guard_epoch(g, trec);
}

static void epoch_synchronize(void)
{
    ck_epoch_synchronize(trec);
    swfi_tsan_acquire(&epoch);
}

/* ---- the writer's private view ------------------------------------------------------------- */

struct writer_state {
    struct tracked **linked;
    size_t nlinked, cap;
    struct tracked **limbo; /* the hand-written kind's removed members awaiting reclamation */
    size_t nlimbo, limbo_cap;
    uint64_t rng, next_id;
    uint64_t added, removed;
};

static struct tracked *new_member(struct writer_state *w)
{
    /* The fields other threads read are written atomically: the lists' publication orders them,
     * but ThreadSanitizer cannot see ck's and liburcu's fences (test/common/tsan.supp). */
    struct tracked *t = malloc(sizeof(*t));
    tap_require(t != NULL, "member");
    __atomic_store_n(&t->removed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.slot, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.pins, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&t->m.linked, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&t->added_at, UINT64_MAX, __ATOMIC_RELAXED); /* stamped once linked */
    swf_pin_init(&t->m.pin);
    t->m.id = w->next_id++;
    swfi_tsan_release(&t->m); /* the insert publishes it: see visible() */
    return t;
}

static void add_member(struct writer_state *w)
{
    struct tracked *t = new_member(w);
    struct tracked *after = NULL;
    if (w->nlinked > 0 && (tap_rand(&w->rng) & 1))
        after = w->linked[tap_rand(&w->rng) % w->nlinked];
    K->insert(t, after);
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
    w->removed++;
    K->remove(w, t); /* t may be freed when it returns */
}

/* ---- CK_LIST with hand-written pins --------------------------------------------------------- */

static struct member_list live = CK_LIST_HEAD_INITIALIZER(live);

/*
 * CK_LIST publishes a member with a store fence and a volatile store, which ThreadSanitizer does
 * not model; the writer annotates a release on each member before linking it, and everything
 * that walks the list acquires on each member it reaches (no-ops without TSan).
 */
static struct member *visible(struct member *m)
{
    if (m != NULL)
        swfi_tsan_acquire(m);
    return m;
}

static void *hand_first(void *list)
{
    return visible(CK_LIST_FIRST((struct member_list *)list));
}

static void *hand_next(void *list, void *m)
{
    (void)list;
    return visible(CK_LIST_NEXT((struct member *)m, link));
}

static void hand_pin(void *list, void *m)
{
    (void)list;
    member_pin(m);
}

static void hand_unpin(void *list, void *m)
{
    (void)list;
    member_unpin(m);
}

static bool hand_linked(void *list, void *m)
{
    (void)list;
    return member_linked(m);
}

static const struct swf_list_ops hand_ops = {hand_first, hand_next, hand_pin, hand_unpin,
                                             hand_linked};

static struct swf_list hand_list(union walk_state *ws)
{
    (void)ws;
    return (struct swf_list){&hand_ops, &live, offsetof(struct member, slot)};
}

static void ck_list_insert(struct tracked *t, struct tracked *after)
{
    if (after != NULL)
        CK_LIST_INSERT_AFTER(&after->m, &t->m, link);
    else
        CK_LIST_INSERT_HEAD(&live, &t->m, link);
}

static void hand_remove(struct writer_state *w, struct tracked *t)
{
    /* Unlink first, then say so: a sweep that sees linked == 1 in a section that began before
     * the removal may still walk on from it, which the grace period keeps safe. */
    CK_LIST_REMOVE(&t->m, link);
    __atomic_store_n(&t->m.linked, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&t->removed, 1, __ATOMIC_RELAXED);
    if (w->nlimbo == w->limbo_cap) {
        w->limbo_cap = w->limbo_cap ? 2 * w->limbo_cap : 1024;
        w->limbo = realloc(w->limbo, w->limbo_cap * sizeof(*w->limbo));
    }
    w->limbo[w->nlimbo++] = t;
}

/* Wait for a grace period, then free every removed member no sweep holds pinned. */
static void hand_reclaim(struct writer_state *w)
{
    epoch_synchronize();
    size_t kept = 0;
    for (size_t i = 0; i < w->nlimbo; i++) {
        struct tracked *t = w->limbo[i];
        if (__atomic_load_n(&t->m.pins, __ATOMIC_ACQUIRE) != 0) {
            w->limbo[kept++] = t; /* a sweep's cursor: next time */
            continue;
        }
        free_tracked(t);
    }
    w->nlimbo = kept;
}

static void hand_drain(struct writer_state *w)
{
    while (w->nlimbo > 0)
        hand_reclaim(w);
    free(w->limbo);
    w->limbo = NULL;
    w->limbo_cap = 0;
}

/* ---- CK_LIST_AUTO: the library's pin, ck_epoch grace ------------------------------------- */

static struct swf_list auto_list(union walk_state *ws)
{
    (void)ws;
    return mla_list(&live);
}

static void epoch_retire(struct tracked *t)
{
    struct swf_grace g;
    swf_grace_epoch(&g, trec); /* this thread's record: ck_epoch_call is single-producer */
    tap_require(swf_pin_retire(&t->m.pin, &g, free_pinned) == 0, "swf_pin_retire");
}

static void auto_remove(struct writer_state *w, struct tracked *t)
{
    (void)w;
    CK_LIST_REMOVE(&t->m, link);
    __atomic_store_n(&t->removed, 1, __ATOMIC_RELAXED);
    epoch_retire(t); /* the retire rule: before the next unlink */
}

static void epoch_poll(struct writer_state *w)
{
    (void)w;
    ck_epoch_poll(trec); /* runs the callbacks whose grace period is over */
}

static void epoch_drain(struct writer_state *w)
{
    (void)w;
    ck_epoch_barrier(trec);
}

/* ---- sys TAILQ_AUTO under an rwlock ---------------------------------------------------------- */

static pthread_rwlock_t rw;
static struct member_sys_tailq tq = TAILQ_HEAD_INITIALIZER(tq);

static void rw_read_lock(void)
{
    pthread_rwlock_rdlock(&rw);
}

static void rw_read_unlock(void)
{
    pthread_rwlock_unlock(&rw);
}

static void rw_guard(struct swf_guard *g)
{
    swf_guard_rwlock(g, &rw);
}

static void rw_synchronize(void)
{
    /* Every reader that could hold an object taken before this leaves first. */
    pthread_rwlock_wrlock(&rw);
    pthread_rwlock_unlock(&rw);
}

static void lock_retire(struct tracked *t)
{
    struct swf_grace g;
    swf_grace_lock(&g);
    tap_require(swf_pin_retire(&t->m.pin, &g, free_pinned) == 0, "swf_pin_retire");
}

static struct swf_list tailq_list(union walk_state *ws)
{
    (void)ws;
    return systa_list(&tq);
}

static void tailq_insert(struct tracked *t, struct tracked *after)
{
    pthread_rwlock_wrlock(&rw);
    if (after != NULL)
        TAILQ_INSERT_AFTER(&tq, &after->m, &t->m, sys_tlink);
    else
        TAILQ_INSERT_HEAD(&tq, &t->m, sys_tlink);
    pthread_rwlock_unlock(&rw);
}

static void tailq_remove(struct writer_state *w, struct tracked *t)
{
    (void)w;
    pthread_rwlock_wrlock(&rw);
    TAILQ_REMOVE(&tq, &t->m, sys_tlink);
    __atomic_store_n(&t->removed, 1, __ATOMIC_RELAXED);
    lock_retire(t); /* freed here unless a sweep holds it: then by that sweep's put */
    pthread_rwlock_unlock(&rw);
}

/* ---- a bucket array under the rwlock, resized while sweeps run ------------------------------ */

static struct member_table table;

static struct swf_list buckets_list(union walk_state *ws)
{
    return mbk_list(&ws->b, &table);
}

static void buckets_insert(struct tracked *t, struct tracked *after)
{
    (void)after;
    pthread_rwlock_wrlock(&rw);
    CK_LIST_INSERT_HEAD(&table.buckets[member_bucket(&table, &t->m)], &t->m, blink);
    pthread_rwlock_unlock(&rw);
}

static void buckets_remove(struct writer_state *w, struct tracked *t)
{
    (void)w;
    pthread_rwlock_wrlock(&rw);
    CK_LIST_REMOVE(&t->m, blink);
    __atomic_store_n(&t->removed, 1, __ATOMIC_RELAXED);
    lock_retire(t);
    pthread_rwlock_unlock(&rw);
}

/* Move every member to a new bucket array of another size, under the write lock. */
static void buckets_resize(void)
{
    pthread_rwlock_wrlock(&rw);
    size_t n = table.nbuckets == 257 ? 1021 : 257;
    struct member_list *nb = calloc(n, sizeof(*nb));
    tap_require(nb != NULL, "buckets");
    struct member_table old = table;
    table.buckets = nb;
    table.nbuckets = n;
    for (size_t b = 0; b < old.nbuckets; b++) {
        struct member *m;
        while ((m = CK_LIST_FIRST(&old.buckets[b])) != NULL) {
            CK_LIST_REMOVE(m, blink);
            CK_LIST_INSERT_HEAD(&nb[member_bucket(&table, m)], m, blink);
        }
    }
    swf_buckets_resized(&table.gen);
    free(old.buckets);
    pthread_rwlock_unlock(&rw);
}

/* ---- ck_hs with ck_epoch ------------------------------------------------------------------- */

static ck_hs_t hs;

/* ck_hs maps come from here: a ck_epoch entry before each, so a map ck_hs replaces is freed
 * after a grace period (defer), and swf_ck_hs_changed() for list_hash.h's detection. */
struct hs_block {
    ck_epoch_entry_t entry;
    max_align_t data[];
};

static void *hs_malloc(size_t n)
{
    swf_ck_hs_changed();
    struct hs_block *b = malloc(sizeof(*b) + n);
    return b ? (void *)b->data : NULL;
}

static void hs_block_free(ck_epoch_entry_t *e)
{
    swfi_tsan_acquire(&epoch);
    free(e); /* entry is the block's first member */
}

static void hs_free(void *p, size_t n, bool defer)
{
    (void)n;
    struct hs_block *b = (struct hs_block *)(void *)((char *)p - offsetof(struct hs_block, data));
    if (defer)
        ck_epoch_call(trec, &b->entry, hs_block_free); /* the writer's own record */
    else
        free(b);
}

static struct ck_malloc hs_alloc = {hs_malloc, NULL, hs_free};

static struct swf_list hs_list(union walk_state *ws)
{
    return mhs_list(&ws->h, &hs);
}

static void hs_insert(struct tracked *t, struct tracked *after)
{
    (void)after;
    tap_require(ck_hs_put(&hs, CK_HS_HASH(&hs, member_hs_hash, &t->m), &t->m), "ck_hs_put");
}

static void hs_remove(struct writer_state *w, struct tracked *t)
{
    (void)w;
    tap_require(ck_hs_remove(&hs, CK_HS_HASH(&hs, member_hs_hash, &t->m), &t->m) == &t->m,
                "ck_hs_remove");
    __atomic_store_n(&t->removed, 1, __ATOMIC_RELAXED);
    epoch_retire(t);
}

static void hs_resize(void)
{
    tap_require(ck_hs_rebuild(&hs), "ck_hs_rebuild"); /* a new map: ck_hs's single writer */
}

/* ---- liburcu: cds_list and cds_hlist, per flavour ------------------------------------------ */

#ifdef SWF_TEST_URCU
#if defined(SWF_TEST_URCU_QSBR)
#define FLAVOUR      urcu_qsbr_flavor
#define FLAVOUR_NAME "qsbr"
#define QSBR         1
#elif defined(SWF_TEST_URCU_BP)
#define FLAVOUR      urcu_bp_flavor
#define FLAVOUR_NAME "bp"
#elif defined(SWF_TEST_URCU_MB)
#define FLAVOUR      urcu_mb_flavor
#define FLAVOUR_NAME "mb"
#elif defined(SWF_TEST_URCU_SIGNAL)
#define FLAVOUR      urcu_signal_flavor
#define FLAVOUR_NAME "signal"
#else
#define FLAVOUR      urcu_memb_flavor
#define FLAVOUR_NAME "memb"
#endif
#ifndef QSBR
#define QSBR 0
#endif

static CDS_LIST_HEAD(cds);
static struct cds_hlist_head cdsh;

/* QSBR: threads are registered and offline; a section is an online period (the guard's rule). */
static void urcu_thread_start(void)
{
    FLAVOUR.register_thread();
    if (QSBR)
        FLAVOUR.thread_offline();
}

static void urcu_thread_stop(void)
{
    if (QSBR)
        FLAVOUR.thread_online();
    FLAVOUR.unregister_thread();
}

static void urcu_read_lock(void)
{
    if (QSBR)
        FLAVOUR.thread_online();
    else
        FLAVOUR.read_lock();
}

static void urcu_read_unlock(void)
{
    SWF_URCU_TSAN_READ_UNLOCK(&FLAVOUR); /* as list_urcu.h's guards do */
    if (QSBR)
        FLAVOUR.thread_offline();
    else
        FLAVOUR.read_unlock();
}

static void urcu_guard(struct swf_guard *g)
{
    if (QSBR)
        swf_guard_urcu_qsbr(g, &FLAVOUR);
    else
        swf_guard_urcu(g, &FLAVOUR);
}

static void urcu_synchronize(void)
{
    FLAVOUR.update_synchronize_rcu();
    SWF_URCU_TSAN_GRACE_OVER(&FLAVOUR);
}

static void urcu_writer_begin(void)
{
    if (QSBR)
        FLAVOUR.thread_online(); /* call_rcu wants an online thread */
}

static void urcu_writer_end(void)
{
    if (QSBR)
        FLAVOUR.thread_offline();
}

static void urcu_retire(struct tracked *t)
{
    struct swf_grace g;
    swf_grace_urcu(&g, &FLAVOUR);
    tap_require(swf_pin_retire(&t->m.pin, &g, free_pinned) == 0, "swf_pin_retire");
}

static void urcu_drain(struct writer_state *w)
{
    (void)w;
    SWF_URCU_TSAN_BARRIER(&FLAVOUR, FLAVOUR.barrier()); /* every call_rcu callback so far ran */
    swfi_tsan_acquire(&members_freed);
}

static struct swf_list cds_list_of(union walk_state *ws)
{
    (void)ws;
    return cdsla_list(&cds);
}

static void cds_insert(struct tracked *t, struct tracked *after)
{
    swf_cds_list_add_rcu(&t->m.cds, after ? &after->m.cds : &cds); /* stores TSan sees */
}

static void cds_remove(struct writer_state *w, struct tracked *t)
{
    (void)w;
    swf_cds_list_del_rcu(&t->m.cds);
    __atomic_store_n(&t->removed, 1, __ATOMIC_RELAXED);
    urcu_retire(t);
}

static struct swf_list cdsh_list_of(union walk_state *ws)
{
    (void)ws;
    return cdsha_list(&cdsh);
}

static void cdsh_insert(struct tracked *t, struct tracked *after)
{
    (void)after;
    swf_cds_hlist_add_head_rcu(&t->m.cdsh, &cdsh);
}

static void cdsh_remove(struct writer_state *w, struct tracked *t)
{
    (void)w;
    swf_cds_hlist_del_rcu(&t->m.cdsh);
    __atomic_store_n(&t->removed, 1, __ATOMIC_RELAXED);
    urcu_retire(t);
}
#endif

/* ---- the kinds ------------------------------------------------------------------------------ */

static const struct kind kinds[] = {
    {"CK_LIST, hand-written pins, ck_epoch", false, 9, false, epoch_thread_start, epoch_thread_stop,
     epoch_read_lock, epoch_read_unlock, hand_list, epoch_guard, NULL, NULL, ck_list_insert,
     hand_remove, hand_reclaim, NULL, hand_drain, epoch_synchronize},
    {"CK_LIST_AUTO, swf_pin, ck_epoch grace", false, 3, false, epoch_thread_start,
     epoch_thread_stop, epoch_read_lock, epoch_read_unlock, auto_list, epoch_guard, NULL, NULL,
     ck_list_insert, auto_remove, epoch_poll, NULL, epoch_drain, epoch_synchronize},
    {"sys TAILQ_AUTO, rwlock, lock grace", false, 3, false, NULL, NULL, rw_read_lock,
     rw_read_unlock, tailq_list, rw_guard, NULL, NULL, tailq_insert, tailq_remove, NULL, NULL, NULL,
     rw_synchronize},
    {"buckets CK_LIST_AUTO, rwlock, lock grace, resized", false, 3, true, NULL, NULL, rw_read_lock,
     rw_read_unlock, buckets_list, rw_guard, NULL, NULL, buckets_insert, buckets_remove, NULL,
     buckets_resize, NULL, rw_synchronize},
    {"ck_hs AUTO, ck_epoch grace, rebuilt", false, 3, true, epoch_thread_start, epoch_thread_stop,
     epoch_read_lock, epoch_read_unlock, hs_list, epoch_guard, NULL, NULL, hs_insert, hs_remove,
     epoch_poll, hs_resize, epoch_drain, epoch_synchronize},
#ifdef SWF_TEST_URCU
    {"cds_list_AUTO, urcu-" FLAVOUR_NAME ", call_rcu", true, 3, false, urcu_thread_start,
     urcu_thread_stop, urcu_read_lock, urcu_read_unlock, cds_list_of, urcu_guard, urcu_writer_begin,
     urcu_writer_end, cds_insert, cds_remove, NULL, NULL, urcu_drain, urcu_synchronize},
    {"cds_hlist_AUTO, urcu-" FLAVOUR_NAME ", call_rcu", true, 3, false, urcu_thread_start,
     urcu_thread_stop, urcu_read_lock, urcu_read_unlock, cdsh_list_of, urcu_guard,
     urcu_writer_begin, urcu_writer_end, cdsh_insert, cdsh_remove, NULL, NULL, urcu_drain,
     urcu_synchronize},
#endif
};

#define CALL(hook, ...)           \
    do {                          \
        if (K->hook != NULL)      \
            K->hook(__VA_ARGS__); \
    } while (0)
#define CALL0(hook)          \
    do {                     \
        if (K->hook != NULL) \
            K->hook();       \
    } while (0)

/* ---- the test body ------------------------------------------------------------------------- */

static size_t initial_members;

/*
 * Every walk here (readers, the sweep, the checks) goes through the kind's ops wrapped twice:
 * first and next acquire on each member they reach, as visible() does for the hand-written kind
 * (ck's and liburcu's list publication and ck_hs are invisible to ThreadSanitizer: the writer
 * releases on each member before linking it; no-ops without TSan), and linked is counted: each
 * false is a lost cursor, the only reason RESUME may walk from the head again.
 */
static const struct swf_list_ops *inner_ops;
static struct swf_list_ops wrapped_ops;
static uint64_t lost_cursors; /* the sweeping thread's */

static void *wrapped_first(void *list)
{
    return visible(inner_ops->first(list));
}

static void *wrapped_next(void *list, void *m)
{
    return visible(inner_ops->next(list, m));
}

static bool counting_linked(void *list, void *m)
{
    bool r = inner_ops->linked(list, m);
    lost_cursors += !r;
    return r;
}

static struct swf_list walk_list(union walk_state *ws)
{
    struct swf_list l = K->list(ws);
    l.ops = &wrapped_ops;
    return l;
}

static void wrap_ops(void)
{
    union walk_state ws;
    inner_ops = K->list(&ws).ops;
    wrapped_ops = *inner_ops;
    wrapped_ops.first = wrapped_first;
    wrapped_ops.next = wrapped_next;
    if (wrapped_ops.linked != NULL)
        wrapped_ops.linked = counting_linked;
}

static void *reader(void *arg)
{
    (void)arg;
    CALL0(thread_start);
    uint64_t bad = 0, seen = 0;
    union walk_state ws;
    while (!__atomic_load_n(&stop_readers, __ATOMIC_ACQUIRE)) {
        struct swf_list l = walk_list(&ws);
        CALL0(read_lock);
        for (void *p = l.ops->first(l.list); p != NULL; p = l.ops->next(l.list, p)) {
            struct member *m = p;
            struct payload *o = swf_slot_load(&m->slot);
            if (o != NULL) {
                seen++;
                bad += !payload_ok(o, m);
            }
        }
        CALL0(read_unlock);
    }
    __atomic_fetch_add(&bad_objects, bad, __ATOMIC_RELAXED);
    __atomic_fetch_add(&objects_seen, seen, __ATOMIC_RELAXED);
    CALL0(thread_stop);
    return NULL;
}

static bool original_kind; /* the first kind keeps the parameters this test always had */

static void *writer(void *arg)
{
    struct writer_state *w = arg;
    CALL0(thread_start);
    /* The other kinds' writer pauses between batches, so that a slow round (BATCH_RESTART, a
     * sanitizer) still finds most members of its start on the list at its end. */
    const struct timespec pause = {0, original_kind ? 0 : 200000};
    while (!__atomic_load_n(&stop_writer, __ATOMIC_ACQUIRE)) {
        if (pause.tv_nsec != 0)
            nanosleep(&pause, NULL);
        CALL0(writer_begin);
        for (int k = 0; k < 64; k++) {
            if (w->nlinked < initial_members / 2 || (tap_rand(&w->rng) & 1))
                add_member(w);
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

/* Take every linked member's object back and free them all after a grace period. */
static uint64_t clear_slots(void)
{
    size_t cap = 1024, n = 0;
    void **objs = malloc(cap * sizeof(void *));
    union walk_state ws;
    struct swf_list l = walk_list(&ws);
    CALL0(read_lock);
    for (void *p = l.ops->first(l.list); p != NULL; p = l.ops->next(l.list, p)) {
        void *obj = swf_slot_take(&((struct member *)p)->slot);
        if (obj == NULL)
            continue;
        if (n == cap)
            objs = realloc(objs, (cap *= 2) * sizeof(void *));
        objs[n++] = obj;
    }
    CALL0(read_unlock);
    CALL0(synchronize); /* readers that loaded one of them have left their sections */
    for (size_t i = 0; i < n; i++)
        swf_cache_free(cache, objs[i]);
    free(objs);
    return n;
}

static void wait_for_writer(uint64_t since, uint64_t ops)
{
    while (__atomic_load_n(&clock_now, __ATOMIC_ACQUIRE) < since + ops)
        sched_yield();
}

/* Inside a section: members added before `since` and not removed have a slot. */
static size_t count_missing(uint64_t since, size_t *checked)
{
    size_t missing = 0;
    union walk_state ws;
    struct swf_list l = walk_list(&ws);
    *checked = 0;
    CALL0(read_lock);
    for (void *p = l.ops->first(l.list); p != NULL; p = l.ops->next(l.list, p)) {
        struct tracked *t = p;
        if (__atomic_load_n(&t->added_at, __ATOMIC_RELAXED) <= since &&
            !__atomic_load_n(&t->removed, __ATOMIC_RELAXED)) {
            (*checked)++;
            missing += swf_slot_load(&t->m.slot) == NULL;
        }
    }
    CALL0(read_unlock);
    return missing;
}

/* The sweep's guard, wrapped: for a kind that resizes, the third time the sweep leaves its
 * section the writer resizes the table (ck_hs has a single writer) before the sweep may enter
 * again, so every round meets a resize while it is outside a section: RESUME with its cursor
 * pinned, which it must then find lost; RESTART and BATCH_RESTART, which walk from the head
 * after a refill anyway, usually between passes. */
struct resizing_guard {
    struct swf_guard inner;
    int leaves;
};

static void resizing_enter(void *arg)
{
    struct resizing_guard *g = arg;
    g->inner.enter(g->inner.arg);
}

static void resizing_leave(void *arg)
{
    struct resizing_guard *g = arg;
    g->inner.leave(g->inner.arg);
    if (++g->leaves != 3)
        return;
    __atomic_store_n(&want_resize, 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(&want_resize, __ATOMIC_ACQUIRE))
        sched_yield();
}

static const char *algo_name(enum swf_algo a)
{
    return a == SWF_RESUME ? "RESUME" : a == SWF_RESTART ? "RESTART" : "BATCH_RESTART";
}

static void run_kind(const struct kind *kind)
{
    K = kind;
    original_kind = kind == &kinds[0];
    wrap_ops();
    diag("%s", K->name);
    bool small = TAP_SANITIZED || tap_under_valgrind() || tap_under_qemu();
    initial_members = original_kind ? (small ? 5000 : 20000) : (small ? 1000 : 4000);
    __atomic_store_n(&stop_writer, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&stop_readers, 0, __ATOMIC_RELAXED);
    /* Atomic: callbacks of the previous kind may have run on liburcu's call_rcu thread, whose
     * hand-over at rcu_barrier ThreadSanitizer cannot see. */
    __atomic_store_n(&bad_objects, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&objects_seen, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&members_freed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&objects_freed, 0, __ATOMIC_RELAXED);
    struct swf_cache_config ccfg = {.object_size = sizeof(struct payload), .name = "concurrent"};
    tap_require(swf_cache_create(&ccfg, &cache) == 0, "cache");
    struct swf_failslab fs = {.probability = 50, .interval = 1, .times = -1, .seed = 3};
    swf_cache_set_failslab(cache, &fs);

    CALL0(thread_start);
    static struct writer_state w;
    free(w.linked);
    memset(&w, 0, sizeof(w));
    w.rng = 0x9e3779b97f4a7c15ull;
    CALL0(writer_begin);
    for (size_t i = 0; i < initial_members; i++)
        add_member(&w);
    CALL0(writer_end);

    pthread_t readers[READERS], wt;
    for (int i = 0; i < READERS; i++)
        pthread_create(&readers[i], NULL, reader, NULL);
    pthread_create(&wt, NULL, writer, &w);

    static const enum swf_algo algos[3] = {SWF_RESUME, SWF_RESTART, SWF_BATCH_RESTART};
    uint64_t total_assigned = 0, cleared = 0;
    for (int round = 0; round < K->rounds; round++) {
        wait_for_writer(__atomic_load_n(&clock_now, __ATOMIC_ACQUIRE), 512);
        union walk_state ws;
        struct swf_sweep_config cfg;
        swf_sweep_config_init(&cfg);
        cfg.list = walk_list(&ws);
        lost_cursors = 0;
        cfg.cache = cache;
        cfg.init = payload_init;
        cfg.reserve = RESERVE;
        cfg.section_bound = BOUND;
        cfg.algo = algos[round % 3];
        struct resizing_guard rg = {{NULL, NULL, NULL, 0}, 0};
        K->guard(&rg.inner);
        cfg.guard = rg.inner;
        if (K->resizes)
            cfg.guard = (struct swf_guard){resizing_enter, resizing_leave, &rg, rg.inner.flags};
        uint64_t since = __atomic_load_n(&clock_now, __ATOMIC_ACQUIRE);
        struct swf_sweep_stats st;
        int err = swf_sweep(&cfg, &st);
        size_t checked;
        size_t missing = count_missing(since, &checked);
        bool passes_ok =
            st.passes == 1 + st.restarts &&
            (cfg.algo != SWF_RESUME || (st.fell_back == 0 && st.restarts == lost_cursors)) &&
            (!K->resizes || cfg.algo != SWF_RESUME || lost_cursors >= 1);
        ok(err == 0 && missing == 0 && st.longest_section <= BOUND && passes_ok,
           "%s, round %d (%s): %llu assigned, %llu visits, %llu passes (%llu lost cursors), "
           "%llu refills, %llu sections, longest %llu; %zu of %zu members linked throughout "
           "lack a slot",
           K->name, round, algo_name(cfg.algo), (unsigned long long)st.assigned,
           (unsigned long long)st.visits, (unsigned long long)st.passes,
           (unsigned long long)lost_cursors, (unsigned long long)st.refills,
           (unsigned long long)st.sections, (unsigned long long)st.longest_section, missing,
           checked);
        total_assigned += st.assigned;
        cleared += clear_slots();
    }

    __atomic_store_n(&stop_writer, 1, __ATOMIC_RELEASE);
    pthread_join(wt, NULL);
    __atomic_store_n(&stop_readers, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < READERS; i++)
        pthread_join(readers[i], NULL);
    ok(bad_objects == 0, "%s: readers saw %llu objects, none uninitialised or another member's",
       K->name, (unsigned long long)objects_seen);

    CALL0(writer_begin);
    while (w.nlinked > 0)
        remove_member(&w, w.nlinked - 1);
    CALL0(writer_end);
    CALL(drain, &w);
    CALL0(thread_stop);
    uint64_t freed = __atomic_load_n(&members_freed, __ATOMIC_ACQUIRE);
    ok(w.removed == w.added && freed == w.added,
       "%s: %llu members added, %llu removed, %llu freed (each exactly once)", K->name,
       (unsigned long long)w.added, (unsigned long long)w.removed, (unsigned long long)freed);
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    uint64_t with_members = __atomic_load_n(&objects_freed, __ATOMIC_ACQUIRE);
    ok(s.alive == 0 && with_members + cleared == total_assigned,
       "%s: conservation: %llu objects assigned over all rounds == %llu taken back + %llu freed "
       "with their members; cache alive %llu",
       K->name, (unsigned long long)total_assigned, (unsigned long long)cleared,
       (unsigned long long)with_members, (unsigned long long)s.alive);
    ok(swf_cache_destroy(cache) == 0, "%s: destroy", K->name);
    free(w.linked);
    w.linked = NULL;
}

/* The epoch, the lock and the tables every kind uses (feature_concurrent.c uses them too). */
static void lists_init(void)
{
    ck_epoch_init(&epoch);
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    /* Writer-preferring, so that writers get in between the sweep's bounded sections. */
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&rw, &ra);
    pthread_rwlockattr_destroy(&ra);
    table.nbuckets = 257;
    table.buckets = calloc(table.nbuckets, sizeof(*table.buckets));
    tap_require(ck_hs_init(&hs, CK_HS_MODE_SPMC | CK_HS_MODE_OBJECT, member_hs_hash,
                           member_hs_compare, &hs_alloc, 64, 7),
                "ck_hs_init");
#ifdef SWF_TEST_URCU
    CDS_INIT_HLIST_HEAD(&cdsh);
#endif
}

static void lists_fini(void)
{
    ck_hs_destroy(&hs);
    free(table.buckets);
    pthread_rwlock_destroy(&rw);
}

int main(void)
{
    lists_init();
#ifdef SWF_TEST_URCU_ONLY
    const bool urcu_kinds = true;
#else
    const bool urcu_kinds = false;
#endif
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i].urcu == urcu_kinds)
            run_kind(&kinds[i]);
    lists_fini();
    return tap_done();
}
