/*
 * test/concurrent/feature_catch_up.c - swf_feature_catch_up's promise with two threads calling
 * it: when it returns 0, every member owed before the call has an object, also while another
 * thread's catch-up sweep is still walking towards that member.
 *
 * The list is a CK_STAILQ read without a lock (one writer, members appended at the tail and
 * never removed), so a sweep reaches the newest members last.
 *   - Held sweep: a member is left owed (failure injection on one NOWAIT call); thread 1 calls
 *     catch_up, and its sweep's init for that member waits (a bounded number of yields) until
 *     thread 2's catch_up, called meanwhile, has returned; thread 2 then checks the member. A
 *     catch-up that returns 0 while the sweep that will fill the member is still in flight is
 *     caught every time, with no timing assumption: the wait ends by count, not by a clock.
 *   - Churn: an adder appends members with NOWAIT under failure injection (about half are left
 *     owed), in bursts of 8, each followed by a pause until both catch-up threads have called
 *     since (so that the count of owed slots stands still while one's sweep runs and the other
 *     calls); the two threads call catch_up whenever members were added since their last call
 *     and, after each call that returns 0, check every member owed before the call (those
 *     whose add had returned when the call began).
 * At the end of each run the feature is deactivated, every slot is empty and the cache's alive
 * count is 0. All of it twice: with no owed table (each catch-up walks the list) and with the
 * default one (owed members are filled from it).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <ck_queue.h>
#include <sweepfill/feature.h>

#include "../common/tap.h"

enum { BASE = 200, ADDS = 1500, ROUNDS = 30, RUNS = 12, HOLD_YIELDS = 20000 };

struct item {
    CK_STAILQ_ENTRY(item) link;
    void *slot;
    uint32_t owed; /* its add returned EAGAIN */
};
CK_STAILQ_HEAD(item_q, item);
SWF_LIST_CK_STAILQ(items, item_q, item, link, slot)

static struct swf_cache *cache;
static struct swf_feature *feature;
static struct item_q list = CK_STAILQ_HEAD_INITIALIZER(list);
static struct item pool[BASE + ADDS];
static size_t npool;

/* The held sweep: init waits on the member held while thread 2's call is in flight. */
static struct item *held;
static _Thread_local int holder; /* this thread's sweeps hold */
static uint32_t in_init, returned2;

/* The churn: members whose add returned, in order, and the count published (release). */
static struct item *added[ADDS];
static size_t nadded;
static uint32_t stop;
static uint64_t misses, checked_calls;
static size_t seen[2]; /* nadded as each catch-up thread last saw it */

static void init_obj(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
    if (holder && member == held) {
        __atomic_store_n(&in_init, 1, __ATOMIC_RELEASE);
        for (int i = 0; i < HOLD_YIELDS && !__atomic_load_n(&returned2, __ATOMIC_ACQUIRE); i++)
            sched_yield();
    }
    for (volatile int i = 0; i < 50; i++) /* a sweep that takes a while */
        ;
}

static void grace(void *arg)
{
    (void)arg; /* no member is ever freed while a walk runs: nothing to wait for */
}

static void failslab(unsigned int probability, long times)
{
    struct swf_failslab fs = {probability, 0, times, 42};
    tap_require(swf_cache_set_failslab(cache, &fs) == 0, "swf_cache_set_failslab");
}

static struct item *link_new(void)
{
    tap_require(npool < sizeof(pool) / sizeof(pool[0]), "pool");
    struct item *it = &pool[npool++];
    __atomic_store_n(&it->slot, NULL, __ATOMIC_RELAXED); /* atomic: a sweep may read it */
    it->owed = 0;
    CK_STAILQ_INSERT_TAIL(&list, it, link);
    return it;
}

/* A fresh list of BASE members, active, all filled. */
static void setup_run(void)
{
    CK_STAILQ_INIT(&list);
    npool = 0;
    for (int i = 0; i < BASE; i++)
        link_new();
    tap_require(swf_feature_activate(feature, NULL) == 0, "activate");
}

static int end_run(void)
{
    failslab(0, 0);
    tap_require(swf_feature_deactivate(feature) == 0, "deactivate");
    size_t left = 0;
    for (size_t i = 0; i < npool; i++)
        left += pool[i].slot != NULL;
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    return left == 0 && st.alive == 0;
}

/* ---- the held sweep ---- */

static void *first_caller(void *arg)
{
    (void)arg;
    holder = 1;
    int err = swf_feature_catch_up(feature, NULL);
    holder = 0;
    return (void *)(intptr_t)err;
}

static void *second_caller(void *arg)
{
    int *filled = arg;
    for (long i = 0; i < 100000000L && !__atomic_load_n(&in_init, __ATOMIC_ACQUIRE); i++)
        sched_yield();
    int err = swf_feature_catch_up(feature, NULL);
    *filled = err == 0 && swf_slot_load(&held->slot) != NULL;
    __atomic_store_n(&returned2, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void held_sweep(void)
{
    int bad = 0, balanced = 1;
    for (int r = 0; r < ROUNDS; r++) {
        setup_run();
        failslab(100, 1); /* the next NOWAIT allocation fails */
        struct item *m = link_new();
        tap_require(swf_feature_added(feature, m, SWF_NOWAIT) == EAGAIN, "owed add");
        held = m;
        in_init = returned2 = 0;
        int filled = 0;
        pthread_t t1, t2;
        void *err1;
        pthread_create(&t1, NULL, first_caller, NULL);
        pthread_create(&t2, NULL, second_caller, &filled);
        pthread_join(t2, NULL);
        pthread_join(t1, &err1);
        if (!filled || err1 != NULL || !in_init)
            bad++;
        held = NULL;
        balanced &= end_run();
    }
    ok(bad == 0,
       "held sweep: a second catch-up returned 0 with the owed member filled while the first "
       "one's sweep was still on its way to it (%d of %d rounds wrong)",
       bad, ROUNDS);
    ok(balanced, "held sweep: deactivate left every slot empty, cache balanced");
}

/* ---- the churn ---- */

static void *adder(void *arg)
{
    (void)arg;
    for (int i = 0; i < ADDS; i++) {
        struct item *it = link_new();
        int err = swf_feature_added(feature, it, SWF_NOWAIT);
        tap_require(err == 0 || err == EAGAIN, "swf_feature_added");
        it->owed = err == EAGAIN;
        added[i] = it;
        __atomic_store_n(&nadded, (size_t)i + 1, __ATOMIC_RELEASE);
        if (i % 8 == 7) {
            /* A pause with nothing newly owed until both threads have called catch_up since
             * this burst: one's sweep then runs while the other calls, the race this test is
             * for. Waited for by count. */
            for (long k = 0;
                 k < 10000000L && (__atomic_load_n(&seen[0], __ATOMIC_ACQUIRE) <= (size_t)i ||
                                   __atomic_load_n(&seen[1], __ATOMIC_ACQUIRE) <= (size_t)i);
                 k++)
                sched_yield();
        }
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* Call catch_up whenever members were added since this thread's last call, and check. */
static void *catcher(void *arg)
{
    size_t me = (size_t)(uintptr_t)arg, prev = 0;
    for (;;) {
        bool last = __atomic_load_n(&stop, __ATOMIC_ACQUIRE);
        size_t n = __atomic_load_n(&nadded, __ATOMIC_ACQUIRE); /* their adds returned */
        if (n == prev && !last) {
            sched_yield();
            continue;
        }
        int err = swf_feature_catch_up(feature, NULL);
        tap_require(err == 0, "swf_feature_catch_up");
        uint64_t miss = 0;
        for (size_t i = n; i-- > 0;) /* the newest first: the sweep reaches them last */
            miss += added[i]->owed && swf_slot_load(&added[i]->slot) == NULL;
        __atomic_fetch_add(&misses, miss, __ATOMIC_RELAXED);
        __atomic_fetch_add(&checked_calls, 1, __ATOMIC_RELAXED);
        prev = n;
        __atomic_store_n(&seen[me], n, __ATOMIC_RELEASE);
        if (last)
            return NULL;
    }
}

static void churn(void)
{
    int balanced = 1;
    size_t owed = 0;
    for (int r = 0; r < RUNS; r++) {
        setup_run();
        nadded = 0;
        stop = 0;
        seen[0] = seen[1] = 0;
        failslab(50, -1);
        pthread_t a, c1, c2;
        pthread_create(&c1, NULL, catcher, (void *)(uintptr_t)0);
        pthread_create(&c2, NULL, catcher, (void *)(uintptr_t)1);
        pthread_create(&a, NULL, adder, NULL);
        pthread_join(a, NULL);
        pthread_join(c1, NULL);
        pthread_join(c2, NULL);
        for (int i = 0; i < ADDS; i++)
            owed += added[i]->owed;
        balanced &= end_run();
    }
    diag("churn: %zu adds left owed, %llu catch-ups checked", owed,
         (unsigned long long)checked_calls);
    ok(owed > 0, "churn: the failure injection left members owed");
    ok(misses == 0,
       "churn: after each catch-up that returned 0, every member owed before it had an object "
       "(%llu found empty)",
       (unsigned long long)misses);
    ok(balanced, "churn: deactivate left every slot empty, cache balanced");
}

int main(void)
{
    /* Twice: members owed by the walk (no owed table) and by the owed table. No add reserve: an
     * injected NOWAIT failure must leave the member owed. */
    static const size_t tables[] = {0, SWF_FEATURE_OWED_TABLE_DEFAULT};
    for (size_t t = 0; t < 2; t++) {
        diag("owed table of %zu entries", tables[t]);
        struct swf_cache_config cc = {.object_size = 64, .name = "catch_up"};
        tap_require(swf_cache_create(&cc, &cache) == 0, "swf_cache_create");
        struct swf_feature_config fc;
        swf_feature_config_init(&fc);
        fc.sweep.list = items_list(&list);
        fc.sweep.cache = cache;
        fc.sweep.init = init_obj;
        swf_guard_none(&fc.sweep.guard); /* CK_STAILQ: one writer, readers need no lock */
        fc.sweep.section_bound = 0;      /* a list that cannot pin: one section */
        fc.sweep.algo = SWF_RESTART;     /* what RESUME falls back to without pins */
        fc.synchronize = grace;
        fc.add_reserve = 0;
        fc.owed_table = tables[t];
        tap_require(swf_feature_create(&fc, &feature) == 0, "swf_feature_create");
        held_sweep();
        churn();
        ok(swf_feature_destroy(feature) == 0 && swf_cache_destroy(cache) == 0, "destroy");
    }
    return tap_done();
}
