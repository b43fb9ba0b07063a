/*
 * lib/sweep/feature.c - exact activation over a user's list: the flag, the adders' half, the sweep,
 * and deactivation with a grace period. include/sweepfill/feature.h states the protocol and the
 * ordering argument (fences A, B, C, D); docs/design.md has it at length, docs/model/feature.pml
 * checks it.
 *
 * The flag word (head.x_gate) is what the inline adder reads: GATE_ON while on, GATE_FENCE for
 * ever when this feature's adders must fence themselves (no membarrier). Adders that find it
 * non-zero come here; they count themselves in and out on a stripe of counters chosen per thread,
 * so that adders of different threads do not share a cache line; deactivate waits for every
 * stripe to read zero.
 *
 * Between the switches (feature.h, swf_feature_maintain): an add whose NOWAIT allocation fails
 * takes an object from the add reserve, an array of slots that adders empty by exchange and that
 * only the mutex's holder refills; an add that finds that empty too is owed, and recorded in the
 * owed table (owed.h) so that a catch-up fills it without a walk, or, when the table is full,
 * counted in x_owed, which a catch-up covers with a walk of the list as before.
 */
#include "sweepfill/feature.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/atomic.h"
#include "base/section.h"
#include "base/tsan.h"
#include "base/util.h"
#include "cache/users.h"
#include "sweep/check.h"
#include "sweep/owed.h"
#include "sweep/unsweep.h"

enum { GATE_ON = 1u, GATE_FENCE = 2u };
enum { STRIPES = 8, DEFAULT_BATCH = 256 };

struct stripe {
    uint32_t x_adders; /* adders counted in */
    uint32_t pad_;
    uint64_t x_assigned, x_reserve_uses, x_lost, x_left, x_untabled;
} __attribute__((aligned(64)));

struct swf_feature {
    struct swf_feature_head_ head; /* first: the inline path reads it */
    /* Owed slots outside the table as sequence numbers: x_owed counts the slots left empty
     * untabled (and the sweeps that ran out of memory); x_covered is the largest count a sweep
     * read as it began and then completed. A slot counted at or below x_covered was filled by
     * that sweep, or its member left the list. */
    uint64_t x_owed, x_covered;
    struct swf_feature_config cfg;
    pthread_mutex_t lock;       /* activate, deactivate, catch_up, maintain */
    int complete;               /* the current activation's sweep returned 0 */
    uint32_t x_maintainer_in;   /* the maintainer thread holds the lock (destroy tells it apart) */
    uint64_t x_headroom;        /* the watermark, resolved at activate */
    uint64_t x_adds_maintained; /* adds (stripes' x_assigned + x_left) the last refill saw */
    struct swfi_owed owed;
    void **x_reserve; /* cfg.add_reserve slots: NULL or an object, uninitialised */
    uint64_t x_activations, x_deactivations, x_assigned_by_sweep, x_lost_by_sweep;
    uint64_t x_catch_ups, x_walks, x_filled, x_maintains, x_unpublished, x_released;
    /* The maintainer thread (cfg.maintain_ms): */
    pthread_t maintainer;
    pthread_mutex_t mt_lock;
    pthread_cond_t mt_wake;
    bool mt_running, mt_stop;
    pid_t mt_pid; /* the process the thread runs in: a fork child has no such thread */
    struct stripe stripes[STRIPES];
};

/* ---- the barriers --------------------------------------------------------------------------- */

/* Whether the process can use membarrier's private expedited command (registered here: the
 * registration is per process and lasts). Never under ThreadSanitizer, which cannot see it, and
 * not when SWF_NO_MEMBARRIER asks for the fence path (1, on, yes, true; 0, off, no, false, empty
 * or unset: membarrier where the kernel has it). Any other value gets one line, once per process,
 * and the default: a typo must not silently test the other path. */
static bool membarrier_usable(void)
{
#if defined(SWF_TSAN) || !defined(__NR_membarrier)
    return false;
#else
    static const char *const words[] = {"1", "on", "yes", "true", "0", "off", "no", "false"};
    static uint32_t warned;
    const char *no = getenv("SWF_NO_MEMBARRIER");
    if (no != NULL && no[0] != '\0') {
        size_t i = 0;
        while (i < 8 && strcasecmp(no, words[i]) != 0)
            i++;
        if (i < 4)
            return false;
        if (i == 8 && !swfi_exchange_relaxed_32(&warned, 1))
            fprintf(stderr,
                    "sweepfill: SWF_NO_MEMBARRIER=\"%.64s\" is not one of 1, on, yes, true (the "
                    "fence path), 0, off, no, false or empty: using the default (membarrier)\n",
                    no);
    }
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
        return false;
    return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0) == 0;
#endif
}

/* Barrier B: after the flag went up, before the walk. With membarrier every running thread of
 * the process executes a full barrier before this returns (threads not running passed one when
 * they were switched out); the seq_cst fence covers the fence-path adders and this thread. */
static void barrier_b(struct swf_feature *f)
{
    swfi_fence_seq_cst();
#if !defined(SWF_TSAN) && defined(__NR_membarrier)
    if (!(swfi_load_relaxed_32(&f->head.x_gate) & GATE_FENCE) &&
        syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) != 0) {
        /* Registered at create (and inherited by fork): only a lost registration gets here. */
        (void)syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0);
        if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0) != 0)
            abort(); /* adders rely on it: never silently unordered */
    }
#else
    (void)f;
#endif
}

/* ---- the adders' half ------------------------------------------------------------------------ */

static _Thread_local unsigned int my_stripe = STRIPES; /* STRIPES: not chosen yet */
static uint32_t next_stripe;

static struct stripe *stripe_of_thread(struct swf_feature *f)
{
    if (SWF_UNLIKELY(my_stripe == STRIPES))
        my_stripe = swfi_fetch_add_relaxed_32(&next_stripe, 1) % STRIPES;
    return &f->stripes[my_stripe];
}

/* An object for an add whose NOWAIT allocation failed: one from the add reserve, whose slots
 * this thread scans once from its stripe's place. The exchange pairs with the refill's release. */
static void *take_reserved(struct swf_feature *f)
{
    size_t n = f->cfg.add_reserve;
    for (size_t k = 0, start = my_stripe * n / STRIPES; k < n; k++) {
        void **r = &f->x_reserve[(start + k) % n];
        void *obj;
        if (swfi_load_relaxed_ptr(r) != NULL && (obj = swfi_exchange_acquire_ptr(r, NULL)) != NULL)
            return obj;
    }
    return NULL;
}

/* Both steps found nothing: member is owed, in the table while an entry is free (owed.h), else
 * counted in x_owed for a walk. Returns 0 when a sweep filled the slot meanwhile. */
static int owe(struct swf_feature *f, struct stripe *s, void **slot, void *member,
               enum swf_alloc_mode mode)
{
    int marked = swfi_owed_mark(&f->owed, slot, member, my_stripe * f->owed.n / STRIPES);
    if (marked < 0)
        return 0;
    swfi_fetch_add_relaxed_64(&s->x_left, 1);
    if (marked == 0) {
        swfi_fetch_add_relaxed_64(&s->x_untabled, 1);
        /* After the link: a sweep that reads this count (acquire) as it begins walks a list
         * that holds the member. */
        (void)swfi_fetch_add_release_64(&f->x_owed, 1);
    }
    return mode == SWF_NOWAIT ? EAGAIN : ENOMEM;
}

/* An object for an add: the cache's, else (NOWAIT) the add reserve's. */
static void *add_object(struct swf_feature *f, struct stripe *s, enum swf_alloc_mode mode)
{
    if (mode == SWF_WAIT)
        return swf_cache_alloc(f->cfg.sweep.cache, mode);
    void *obj = swf_cache_alloc_fast(f->cfg.sweep.cache);
    if (obj == NULL && (obj = take_reserved(f)) != NULL)
        swfi_fetch_add_relaxed_64(&s->x_reserve_uses, 1);
    return obj;
}

/* Publish obj in a slot that holds member's owed mark (an add retried after EAGAIN): as a filler
 * would, claiming the entry first. False when a catch-up filled it meanwhile. */
static bool publish_owed(struct swf_feature *f, void *member, void **slot, const void *mark,
                         void *obj)
{
    size_t i;
    return swfi_owed_reclaim(&f->owed, member, mark, &i) &&
           swfi_owed_settle(&f->owed, i, slot, obj);
}

/* Counted in, with the flag seen on after C: give member an object unless it has one. */
static int fill(struct swf_feature *f, struct stripe *s, void *member, enum swf_alloc_mode mode)
{
    void **slot = swf_slot_of(member, f->cfg.sweep.list.slot_offset);
    void *mark = swf_slot_peek(slot);
    if (mark != NULL && !swfi_owed_is_mark(mark))
        return 0; /* the sweep, or a catch-up, was first */
    void *obj = add_object(f, s, mode);
    if (obj == NULL && mark == NULL)
        return owe(f, s, slot, member, mode);
    if (obj == NULL) { /* owed already, in the table */
        swfi_fetch_add_relaxed_64(&s->x_left, 1);
        return mode == SWF_NOWAIT ? EAGAIN : ENOMEM;
    }
    f->cfg.sweep.init(obj, member, f->cfg.sweep.init_arg);
    if (mark == NULL ? swf_slot_publish_cas(slot, obj) : publish_owed(f, member, slot, mark, obj)) {
        swfi_fetch_add_relaxed_64(&s->x_assigned, 1);
    } else {
        swf_cache_free(f->cfg.sweep.cache, obj); /* never published: no grace period needed */
        swfi_fetch_add_relaxed_64(&s->x_lost, 1);
    }
    return 0;
}

/* The public function this half is part of: messages name it, never this one. */
static const char added[] = "swf_feature_added";

int swf_feature_added_slow_(struct swf_feature *f, void *member, enum swf_alloc_mode mode)
{
    SWF_CHECK_ARG_AS(added, f == NULL, EINVAL, "f is NULL");
    uint32_t gate = swfi_load_relaxed_32(&f->head.x_gate);
    if (gate & GATE_FENCE) {
        swfi_fence_seq_cst(); /* fence A, in full: no membarrier to pair with */
        gate = swfi_load_relaxed_32(&f->head.x_gate);
    }
    if (!(gate & GATE_ON))
        return 0; /* the activation's walk will see the link (fences A and B) */
    SWF_CHECK_ARG_AS(added, member == NULL, EINVAL, "member is NULL");
    SWF_CHECK_ARG_AS(added, mode != SWF_NOWAIT && mode != SWF_WAIT, EINVAL,
                     "mode is neither SWF_NOWAIT nor SWF_WAIT");
    SWFI_BLOCKING_CALL_AS(mode == SWF_WAIT, "swf_feature_added");
    struct stripe *s = stripe_of_thread(f);
    /* C: the count-in and the flag's second load, both sequentially consistent, so that one
     * of them and deactivate's D come first in their single total order (x86: a locked add and
     * a plain load, no fence instruction). */
    swfi_fetch_add_seq_cst_32(&s->x_adders, 1);
    int err = 0;
    if (swfi_load_seq_cst_32(&f->head.x_gate) & GATE_ON)
        err = fill(f, s, member, mode);
    swfi_fetch_sub_acq_rel_32(&s->x_adders, 1); /* releases the publication to deactivate */
    if (err == EAGAIN)
        return swfi_fail(added, err, "no object ready: the slot is owed (catch-up)");
    return err ? swfi_fail(added, err, "no memory: the slot is owed (catch-up)") : 0;
}

int swf_feature_release(struct swf_feature *f, void *member)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    SWF_CHECK_ARG(member == NULL, EINVAL, "member is NULL");
    void *obj = swf_slot_take(swf_slot_of(member, f->cfg.sweep.list.slot_offset));
    if (obj != NULL && swfi_owed_is_mark(obj)) {
        swfi_owed_forget(&f->owed, member, obj); /* owed, never filled: the entry goes back */
    } else if (obj != NULL) {
        swf_cache_free(f->cfg.sweep.cache, obj);
        swfi_fetch_add_relaxed_64(&f->x_released, 1);
    }
    return 0;
}

/* ---- the sweep ------------------------------------------------------------------------------- */

/* Under f->lock, with the flag up: one sweep. It covers every slot counted owed before it
 * began (it reads the count first, and then walks a list that holds those members); completed,
 * it says so in x_covered, which only grows (the sweeps are serialised by the lock). */
static int sweep(struct swf_feature *f, struct swf_sweep_stats *stats)
{
    uint64_t owed = swfi_load_acquire_64(&f->x_owed);
    struct swf_sweep_stats st;
    memset(&st, 0, sizeof(st));
    /* Checked at create (whose line named swf_feature_create): no message here names swf_sweep. */
    const struct swf_sweep_config *sc = &f->cfg.sweep;
    int err = swf_sweep_run_(sc, sc->list.ops, sc->init, sc->list.slot_offset, &st);
    if (err != 0)
        (void)swfi_fetch_add_release_64(&f->x_owed, 1); /* what it did not reach is owed */
    else if (owed > swfi_load_relaxed_64(&f->x_covered))
        swfi_store_release_64(&f->x_covered, owed); /* releases its publications */
    swfi_fetch_add_relaxed_64(&f->x_assigned_by_sweep, st.assigned);
    swfi_fetch_add_relaxed_64(&f->x_lost_by_sweep, st.lost_races);
    if (stats != NULL)
        *stats = st;
    return err;
}

/*
 * cfg.prepare SWF_FEATURE_PREPARE_COUNT: the members linked now, counted by walking as the sweep
 * does (the guard, bounded sections, the cursor pinned across them). A cursor unlinked meanwhile
 * starts the count again from the head, a few times at most so that churn cannot keep activate
 * here; the largest count reached is the figure. An estimate for a best-effort grow: members
 * linked or unlinked during the walk may or may not be counted.
 */
static size_t count_members(struct swf_feature *f)
{
    const struct swf_list *l = &f->cfg.sweep.list;
    const struct swf_guard *g = &f->cfg.sweep.guard;
    size_t bound = swf_list_can_pin(l->ops) ? f->cfg.sweep.section_bound : 0;
    size_t n = 0, most = 0, section = 0;
    int restarts = 0;
    swf_guard_enter_(g);
    void *m = l->ops->first(l->list);
    while (m != NULL) {
        n++;
        if (bound == 0 || ++section < bound) {
            m = l->ops->next(l->list, m);
            continue;
        }
        l->ops->pin(l->list, m); /* leave the section: writers get in */
        g->leave(g->arg);
        swf_guard_enter_(g);
        section = 0;
        void *next = NULL;
        if (l->ops->linked(l->list, m)) {
            next = l->ops->next(l->list, m);
        } else if (restarts++ < 4) {
            most = n > most ? n : most;
            n = 0;
            next = l->ops->first(l->list);
        }
        l->ops->unpin(l->list, m);
        m = next;
    }
    g->leave(g->arg);
    return n > most ? n : most;
}

/* ---- between the switches: headroom, the add reserve, the owed table ----------------------- */

/* The headroom that count members call for (cfg.headroom resolved). */
static size_t headroom_for(const struct swf_feature *f, size_t count)
{
    if (f->cfg.headroom != SWF_FEATURE_HEADROOM_AUTO)
        return f->cfg.headroom;
    return count / 16 > SWF_FEATURE_HEADROOM_MIN ? count / 16 : SWF_FEATURE_HEADROOM_MIN;
}

/* What to make ready for count members: count, the sweep's and the adds' reserves, and the
 * headroom, saturating (a grow of SIZE_MAX fails with ENOMEM, as it should). */
static size_t prepare_for(const struct swf_feature *f, size_t count)
{
    size_t parts[] = {f->cfg.sweep.reserve, f->cfg.add_reserve, headroom_for(f, count)};
    size_t n = count;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        n = n > SIZE_MAX - parts[i] ? SIZE_MAX : n + parts[i];
    return n;
}

static uint64_t stripe_sum(struct swf_feature *f, size_t offset)
{
    uint64_t sum = 0;
    for (int i = 0; i < STRIPES; i++)
        sum += swfi_load_relaxed_64((const uint64_t *)((const char *)&f->stripes[i] + offset));
    return sum;
}

/* Adds that took an object or found none: each may have taken the cache below its headroom. */
static uint64_t adds_so_far(struct swf_feature *f)
{
    return stripe_sum(f, offsetof(struct stripe, x_assigned)) +
           stripe_sum(f, offsetof(struct stripe, x_left));
}

/* Under f->lock, with the flag up: fill the add reserve's empty slots (a release store each,
 * which the adders' exchange acquires), then grow the cache back to the headroom. */
static int maintain_locked(struct swf_feature *f)
{
    swfi_store_relaxed_64(&f->x_adds_maintained, adds_so_far(f));
    int err = 0;
    for (size_t i = 0; i < f->cfg.add_reserve && err == 0; i++) {
        if (swfi_load_relaxed_ptr(&f->x_reserve[i]) != NULL)
            continue;
        void *obj = swf_cache_alloc(f->cfg.sweep.cache, SWF_WAIT);
        if (obj == NULL)
            err = ENOMEM;
        else
            swfi_store_release_ptr(&f->x_reserve[i], obj);
    }
    uint64_t headroom = swfi_load_relaxed_64(&f->x_headroom);
    if (err == 0 && headroom != 0)
        err = swf_cache_grow(f->cfg.sweep.cache, (size_t)headroom);
    swfi_fetch_add_relaxed_64(&f->x_maintains, 1);
    if (err != 0)
        swfi_store_relaxed_64(&f->x_adds_maintained, UINT64_MAX); /* the next call tries again */
    return err;
}

/* Under f->lock, with the adders drained: the add reserve's objects back to the cache (never
 * published: no grace period). */
static void drain_reserve(struct swf_feature *f)
{
    for (size_t i = 0; i < f->cfg.add_reserve; i++) {
        void *obj = swfi_exchange_acquire_ptr(&f->x_reserve[i], NULL);
        if (obj != NULL)
            swf_cache_free(f->cfg.sweep.cache, obj);
    }
}

/* Under f->lock, with the flag up: fill every member in the owed table, one allocation each
 * (made before the claim, so that no claim waits for memory). */
static int fill_owed(struct swf_feature *f)
{
    struct swf_cache *c = f->cfg.sweep.cache;
    void *obj = NULL, *member;
    int err = 0;
    for (size_t i = 0; swfi_owed_count(&f->owed) != 0; i++) {
        if (obj == NULL && (obj = swf_cache_alloc_fast(c)) == NULL &&
            (obj = swf_cache_alloc(c, SWF_WAIT)) == NULL) {
            err = ENOMEM;
            break;
        }
        if ((member = swfi_owed_claim(&f->owed, &i)) == NULL)
            break;
        f->cfg.sweep.init(obj, member, f->cfg.sweep.init_arg);
        if (swfi_owed_settle(&f->owed, i, swf_slot_of(member, f->cfg.sweep.list.slot_offset),
                             obj)) {
            swfi_fetch_add_relaxed_64(&f->x_filled, 1);
            obj = NULL;
        }
    }
    if (obj != NULL)
        swf_cache_free(c, obj); /* never published */
    return err;
}

/* Under f->lock, with the flag down and the adders drained: clear every owed mark, so that
 * deactivate's walk meets objects only. */
static void clear_owed(struct swf_feature *f)
{
    void *member;
    for (size_t i = 0; (member = swfi_owed_claim(&f->owed, &i)) != NULL; i++)
        (void)swfi_owed_settle(&f->owed, i, swf_slot_of(member, f->cfg.sweep.list.slot_offset),
                               NULL);
}

int swf_feature_prepare(struct swf_feature *f, size_t count)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    SWFI_BLOCKING_CALL();
    return swf_cache_grow(f->cfg.sweep.cache, prepare_for(f, count)); /* its reason, if any */
}

int swf_feature_maintain(struct swf_feature *f)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    if (!(swfi_load_relaxed_32(&f->head.x_gate) & GATE_ON) ||
        adds_so_far(f) == swfi_load_relaxed_64(&f->x_adds_maintained))
        return 0;
    SWFI_BLOCKING_CALL();
    if (pthread_mutex_trylock(&f->lock) != 0)
        return 0; /* activate, deactivate or catch-up: each maintains on its way */
    int err = 0;
    if (swfi_load_relaxed_32(&f->head.x_gate) & GATE_ON)
        err = maintain_locked(f);
    pthread_mutex_unlock(&f->lock);
    return err ? swfi_fail(__func__, err, "no memory for the add reserve or the headroom") : 0;
}

int swf_feature_activate(struct swf_feature *f, struct swf_sweep_stats *stats)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    SWFI_BLOCKING_CALL();
    pthread_mutex_lock(&f->lock);
    uint32_t gate = swfi_load_relaxed_32(&f->head.x_gate);
    if ((gate & GATE_ON) && f->complete) {
        pthread_mutex_unlock(&f->lock);
        return swfi_fail(__func__, EALREADY, "f is already active and complete");
    }
    if (!(gate & GATE_ON)) {
        /* Before the flag: no adder allocates while the grow holds the refill mutex. */
        size_t prepare = f->cfg.prepare;
        if (prepare == SWF_FEATURE_PREPARE_COUNT)
            prepare = prepare_for(f, count_members(f));
        if (prepare != 0) {
            const char *kept = swf_reason_keep_(); /* best effort: a short grow is no failure */
            (void)swf_cache_grow(f->cfg.sweep.cache, prepare);
            swf_reason_restore_(kept);
        }
        swfi_fetch_or_seq_cst_32(&f->head.x_gate, GATE_ON);
        barrier_b(f);
    }
    struct swf_sweep_stats st;
    int err = sweep(f, &st);
    f->complete = err == 0;
    if (err == 0)
        swfi_fetch_add_relaxed_64(&f->x_activations, 1);
    /* The members the sweep stepped on: its visits less its revisits' share is not known, so
     * the assigned and already-set counts, which a revisit does not inflate past the list. */
    swfi_store_relaxed_64(&f->x_headroom, headroom_for(f, st.assigned + st.already_set));
    const char *kept = swf_reason_keep_();
    (void)maintain_locked(f); /* best effort: adders fall back on owing */
    swf_reason_restore_(kept);
    pthread_mutex_unlock(&f->lock);
    if (stats != NULL)
        *stats = st;
    return err ? swfi_fail(__func__, err, "the sweep ran out of memory: call activate again") : 0;
}

int swf_feature_catch_up(struct swf_feature *f, struct swf_sweep_stats *stats)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    SWFI_BLOCKING_CALL();
    if (stats != NULL)
        memset(stats, 0, sizeof(*stats));
    /* Every member owed before this call is in the table (an adder counts it there before its
     * EAGAIN), or counted at or below owed. A sweep that completed after reading a count that
     * high has filled the latter: skip the walk only then. One in flight (another thread's)
     * covers them only once it completes: wait for it on the lock, then look again. */
    uint64_t owed = swfi_load_acquire_64(&f->x_owed);
    if (swfi_owed_count(&f->owed) == 0 && swfi_load_acquire_64(&f->x_covered) >= owed)
        return 0;
    pthread_mutex_lock(&f->lock);
    int err = 0;
    if (swfi_load_relaxed_32(&f->head.x_gate) & GATE_ON) {
        err = fill_owed(f);
        if (err == 0 && swfi_load_acquire_64(&f->x_covered) < owed) {
            err = sweep(f, stats);
            swfi_fetch_add_relaxed_64(&f->x_walks, 1);
        }
        swfi_fetch_add_relaxed_64(&f->x_catch_ups, 1);
        if (err == 0) {
            const char *kept = swf_reason_keep_(); /* best effort, as in activate */
            (void)maintain_locked(f);
            swf_reason_restore_(kept);
        }
    }
    pthread_mutex_unlock(&f->lock);
    return err ? swfi_fail(__func__, err, "out of memory: members are still owed") : 0;
}

/* ---- deactivation ---------------------------------------------------------------------------- */

/* cfg.synchronize, under the watchdog (base/section.h). */
static void synchronize(struct swf_feature *f)
{
    int w = swfi_watch_begin(
        "cfg.synchronize", "a read-side section that began before it has not ended (on this thread "
                           "or another: pthread_rwlock_rdlock, rcu_read_lock, ck_epoch_begin)");
    f->cfg.synchronize(f->cfg.synchronize_arg);
    swfi_watch_end(w);
}

/* Outside any section (unsweep.h): a grace period, then the objects back to the cache. */
static void taken_free(void *arg, void **objs, size_t n)
{
    struct swf_feature *f = arg;
    synchronize(f);
    swf_cache_free_bulk(f->cfg.sweep.cache, objs, n);
    swfi_fetch_add_relaxed_64(&f->x_unpublished, n);
}

/*
 * Take every slot (lib/sweep/unsweep.c). The batch grows while malloc can, so that one grace
 * period usually covers all of them.
 */
static void take_all(struct swf_feature *f)
{
    void *local[DEFAULT_BATCH];
    struct swfi_unsweep u = {
        .list = &f->cfg.sweep.list,
        .guard = &f->cfg.sweep.guard,
        .section_bound = f->cfg.sweep.section_bound,
        .batch = local,
        .batch_cap = DEFAULT_BATCH,
        .grow = true,
        .hand_over = taken_free,
        .arg = f,
    };
    swfi_unsweep(&u);
}

/* Whether member, found in a section still holding an object after take_all, is on the list:
 * a member deleted during the walk keeps its object until swf_feature_release, and a walk that
 * stood on its predecessor may still reach it; its retire made linked() false. A list that
 * cannot pin cannot tell: such a member counts as linked. */
static bool still_linked(const struct swf_list *l, void *member)
{
    if (!swf_list_can_pin(l->ops))
        return true;
    l->ops->pin(l->list, member);
    bool on = l->ops->linked(l->list, member);
    l->ops->unpin(l->list, member);
    return on;
}

/*
 * The full checks (swf_debug_checks()): after take_all, walk once more, as it did, and abort if
 * a linked member holds an object. Nothing fills a slot while the flag is down and the adders
 * are drained, so such a member was moved (unlinked and linked again without a retire) while
 * take_all walked: from a place the walk had not reached to one it had passed.
 */
static void check_all_taken(struct swf_feature *f)
{
    const struct swf_list *l = &f->cfg.sweep.list;
    const struct swf_guard *g = &f->cfg.sweep.guard;
    size_t bound = f->cfg.sweep.section_bound, section = 0;
    swf_guard_enter_(g);
    for (void *m = l->ops->first(l->list); m != NULL;) {
        if (swf_slot_peek(swf_slot_of(m, l->slot_offset)) != NULL && still_linked(l, m))
            swfi_die("swf_feature_deactivate",
                     "member %p still holds an object after the walk that took every slot: was "
                     "it moved (unlinked and linked again without a retire) while deactivate "
                     "walked? No move may overlap swf_feature_deactivate (feature.h)",
                     m);
        if (bound == 0 || ++section < bound) {
            m = l->ops->next(l->list, m);
            continue;
        }
        l->ops->pin(l->list, m); /* a bound implies a list that can pin (create checks) */
        g->leave(g->arg);
        swf_guard_enter_(g);
        section = 0;
        void *next = l->ops->linked(l->list, m) ? l->ops->next(l->list, m) : l->ops->first(l->list);
        l->ops->unpin(l->list, m);
        m = next;
    }
    g->leave(g->arg);
}

int swf_feature_deactivate(struct swf_feature *f)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    SWFI_BLOCKING_CALL();
    pthread_mutex_lock(&f->lock);
    if (!(swfi_load_relaxed_32(&f->head.x_gate) & GATE_ON)) {
        pthread_mutex_unlock(&f->lock);
        return swfi_fail(__func__, EALREADY, "f is not active");
    }
    /* D: the flag's clearing and the loads of the counts, sequentially consistent (see C). */
    swfi_fetch_and_seq_cst_32(&f->head.x_gate, ~(uint32_t)GATE_ON);
    f->complete = 0;
    for (int i = 0; i < STRIPES; i++)
        while (swfi_load_seq_cst_32(&f->stripes[i].x_adders) != 0)
            sched_yield(); /* an adder between its count-in and count-out: a few steps */
    clear_owed(f);
    drain_reserve(f);
    take_all(f);
    if (swfi_checks_all())
        check_all_taken(f);
    swfi_fetch_add_relaxed_64(&f->x_deactivations, 1);
    pthread_mutex_unlock(&f->lock);
    return 0;
}

/* ---- the maintainer thread (cfg.maintain_ms) ------------------------------------------------ */

static void *maintainer(void *arg)
{
    struct swf_feature *f = arg;
    pthread_mutex_lock(&f->mt_lock);
    while (!f->mt_stop) {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        uint64_t ns = (uint64_t)at.tv_nsec + (uint64_t)f->cfg.maintain_ms * 1000000u;
        at.tv_sec += (time_t)(ns / 1000000000u);
        at.tv_nsec = (long)(ns % 1000000000u);
        (void)pthread_cond_timedwait(&f->mt_wake, &f->mt_lock, &at);
        if (f->mt_stop)
            break;
        pthread_mutex_unlock(&f->mt_lock);
        swfi_store_relaxed_32(&f->x_maintainer_in, 1);
        (void)swf_feature_maintain(f);
        swfi_store_relaxed_32(&f->x_maintainer_in, 0);
        pthread_mutex_lock(&f->mt_lock);
    }
    pthread_mutex_unlock(&f->mt_lock);
    return NULL;
}

static int maintainer_start(struct swf_feature *f)
{
    if (f->cfg.maintain_ms == 0)
        return 0;
    f->mt_stop = false;
    f->mt_pid = getpid();
    f->mt_running = pthread_create(&f->maintainer, NULL, maintainer, f) == 0;
    return f->mt_running ? 0 : EAGAIN;
}

static void maintainer_stop(struct swf_feature *f)
{
    if (!f->mt_running)
        return;
    if (f->mt_pid != getpid()) { /* a fork child: no thread to stop, its lock may be held */
        f->mt_running = false;
        return;
    }
    pthread_mutex_lock(&f->mt_lock);
    f->mt_stop = true;
    pthread_cond_signal(&f->mt_wake);
    pthread_mutex_unlock(&f->mt_lock);
    pthread_join(f->maintainer, NULL);
    f->mt_running = false;
}

/* ---- create, destroy, stats ------------------------------------------------------------------ */

/* The feature's own memory beyond the struct: the add reserve and the owed table. */
static int feature_arrays(struct swf_feature *f)
{
    if (f->cfg.add_reserve != 0 &&
        (f->x_reserve = calloc(f->cfg.add_reserve, sizeof(*f->x_reserve))) == NULL)
        return ENOMEM;
    return swfi_owed_init(&f->owed, f->cfg.owed_table);
}

static void feature_free(struct swf_feature *f)
{
    swfi_owed_fini(&f->owed);
    free(f->x_reserve);
    if (f->cfg.maintain_ms == 0 || f->mt_pid == getpid()) {
        /* In a fork child the parent's thread may be a waiter of the condition, for ever:
         * destroying it would wait for that thread. Its memory goes with f. */
        pthread_cond_destroy(&f->mt_wake);
        pthread_mutex_destroy(&f->mt_lock);
    }
    pthread_mutex_destroy(&f->lock);
    free(f);
}

int swf_feature_create(const struct swf_feature_config *cfg, struct swf_feature **out)
{
    SWF_CHECK_ARG(cfg == NULL, EINVAL, "cfg is NULL");
    SWF_CHECK_ARG(out == NULL, EINVAL, "out is NULL");
    struct swf_sweep_config sc = cfg->sweep;
    sc.publish = SWF_PUBLISH_CAS;
    int err = swfi_sweep_check(&sc, sc.list.ops, __func__, SWFI_SWEEP_IN_FEATURE,
                               cfg->synchronize == NULL);
    if (err != 0)
        return err; /* swfi_sweep_check said why: every NULL field, or the first other fault */
    SWF_CHECK_ARG(cfg->add_reserve > SWF_FEATURE_ADD_RESERVE_MAX, EINVAL,
                  "cfg->add_reserve is above SWF_FEATURE_ADD_RESERVE_MAX");
    SWF_CHECK_ARG(cfg->owed_table > SWF_FEATURE_OWED_TABLE_MAX, EINVAL,
                  "cfg->owed_table is above SWF_FEATURE_OWED_TABLE_MAX");
    /* Resolved once: the feature's sweeps and deactivate's walk use the same bound. */
    sc.section_bound = swfi_section_bound(&sc, sc.list.ops);
    struct swf_feature *f;
    if (posix_memalign((void **)&f, 64, sizeof(*f)) != 0)
        return swfi_fail(__func__, ENOMEM, "no memory for the feature");
    memset(f, 0, sizeof(*f));
    f->cfg = *cfg;
    f->cfg.sweep = sc;
    f->mt_pid = getpid();
    pthread_mutex_init(&f->lock, NULL);
    pthread_mutex_init(&f->mt_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&f->mt_wake, &ca);
    pthread_condattr_destroy(&ca);
    if (feature_arrays(f) != 0) {
        feature_free(f);
        return swfi_fail(__func__, ENOMEM, "no memory for the add reserve or the owed table");
    }
    swfi_store_relaxed_32(&f->head.x_gate, membarrier_usable() ? 0 : GATE_FENCE);
    if (maintainer_start(f) != 0) {
        feature_free(f);
        return swfi_fail(__func__, EAGAIN, "cfg->maintain_ms: the thread could not be created");
    }
    swfi_cache_use(sc.cache, SWFI_CACHE_USER_FEATURE); /* until destroy, active or not */
    *out = f;
    return 0;
}

/* Objects f published that no deactivate or release has taken back: held by members that left
 * the list while f was on, whose release is still to come (f is off: deactivate took the rest). */
static uint64_t objects_out(struct swf_feature *f)
{
    uint64_t in = swfi_load_relaxed_64(&f->x_unpublished) + swfi_load_relaxed_64(&f->x_released);
    uint64_t out = stripe_sum(f, offsetof(struct stripe, x_assigned)) +
                   swfi_load_relaxed_64(&f->x_assigned_by_sweep) +
                   swfi_load_relaxed_64(&f->x_filled);
    return out > in ? out - in : 0;
}

/* Take f->lock for destroy, unless a call other than the maintainer's holds it. */
static bool lock_for_destroy(struct swf_feature *f)
{
    for (;;) {
        if (pthread_mutex_trylock(&f->lock) == 0)
            return true;
        if (!swfi_load_relaxed_32(&f->x_maintainer_in))
            return false;
        sched_yield(); /* the maintainer's try found f on a moment ago: it leaves at once */
    }
}

int swf_feature_destroy(struct swf_feature *f)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    if (swfi_load_relaxed_32(&f->head.x_gate) & GATE_ON)
        return swfi_fail(__func__, EBUSY, "f is active");
    if (!lock_for_destroy(f))
        return swfi_fail(
            __func__, EBUSY,
            "another thread is inside activate, deactivate, catch-up or maintain on f");
    uint64_t out = objects_out(f);
    if (out != 0 && swfi_checks_all())
        swfi_die(__func__,
                 "%llu objects are still held by members that left the list: call "
                 "swf_feature_release for each (from the callback that frees it) before destroy",
                 (unsigned long long)out);
    pthread_mutex_unlock(&f->lock);
    if (out != 0)
        return swfi_fail(__func__, EBUSY,
                         "members that left the list still hold objects: their "
                         "swf_feature_release is still to come");
    maintainer_stop(f);
    swfi_cache_unuse(f->cfg.sweep.cache, SWFI_CACHE_USER_FEATURE);
    feature_free(f);
    return 0;
}

int swf_feature_stats(struct swf_feature *f, struct swf_feature_stats *out)
{
    SWF_CHECK_ARG(f == NULL, EINVAL, "f is NULL");
    SWF_CHECK_ARG(out == NULL, EINVAL, "out is NULL");
    struct swf_feature_stats s;
    memset(&s, 0, sizeof(s));
    uint32_t gate = swfi_load_relaxed_32(&f->head.x_gate);
    s.active = (gate & GATE_ON) != 0;
    s.membarrier = (gate & GATE_FENCE) == 0;
    s.activations = swfi_load_relaxed_64(&f->x_activations);
    s.deactivations = swfi_load_relaxed_64(&f->x_deactivations);
    s.assigned_by_add = stripe_sum(f, offsetof(struct stripe, x_assigned));
    s.add_reserve_uses = stripe_sum(f, offsetof(struct stripe, x_reserve_uses));
    s.assigned_by_sweep = swfi_load_relaxed_64(&f->x_assigned_by_sweep);
    s.lost_races =
        stripe_sum(f, offsetof(struct stripe, x_lost)) + swfi_load_relaxed_64(&f->x_lost_by_sweep);
    s.left_owed = stripe_sum(f, offsetof(struct stripe, x_left));
    s.owed_untabled = stripe_sum(f, offsetof(struct stripe, x_untabled));
    s.catch_ups = swfi_load_relaxed_64(&f->x_catch_ups);
    s.catch_up_walks = swfi_load_relaxed_64(&f->x_walks);
    s.filled_by_catch_up = swfi_load_relaxed_64(&f->x_filled);
    s.maintains = swfi_load_relaxed_64(&f->x_maintains);
    s.unpublished = swfi_load_relaxed_64(&f->x_unpublished);
    s.released = swfi_load_relaxed_64(&f->x_released);
    s.headroom = swfi_load_relaxed_64(&f->x_headroom);
    for (size_t i = 0; i < f->cfg.add_reserve; i++)
        s.add_reserve_ready += swfi_load_relaxed_ptr(&f->x_reserve[i]) != NULL;
    s.owed_tabled = swfi_owed_count(&f->owed);
    *out = s;
    return 0;
}
