/*
 * test/unit/cache_free_checks.c - the checks every free makes (cache.h, swf_cache_free) never
 * refuse a legitimate free: objects from many chunks and of strides with an odd factor (24, 200
 * bytes), written all over by their users (the first word included), freed by the allocating thread
 * or by another, through swf_cache_free, swf_cache_free_fast, swf_cache_free_bulk and
 * swf_cache_free_deferred, by threads with magazines of their own and by threads without; with
 * the full checks off and on (swf_cache_config.checks). Every object comes back: destroy
 * succeeds with nothing alive. A false positive aborts the program (and fails the test).
 * Also the free mark (cache.h, swf_cache_free): a live object whose user stored the mark in its
 * first word is freed (a look through the magazines, no abort), so is one handed out by a bulk
 * allocation with the mark still there; and a single allocation (swf_cache_alloc NOWAIT and
 * WAIT, swf_cache_alloc_fast) hands out an object whose first 8 bytes (all of it below 8) are
 * zero, whatever its last user and the mark left there.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ck_epoch.h>
#include <sweepfill/cache.h>

#include "../common/tap.h"

#define THREADS 4
#define ROUNDS  300
#define BATCH   48
#define HANDOFF 4096

static ck_epoch_t epoch;                   /* made again for each run */
static ck_epoch_record_t records[THREADS]; /* ck_epoch keeps records listed: not on a stack */

/* Objects handed from one thread to another, for the other to free. */
static struct {
    pthread_mutex_t lock;
    void *obj[HANDOFF];
    size_t n;
} handoff = {.lock = PTHREAD_MUTEX_INITIALIZER};

static bool give(void *o)
{
    pthread_mutex_lock(&handoff.lock);
    bool room = handoff.n < HANDOFF;
    if (room)
        handoff.obj[handoff.n++] = o;
    pthread_mutex_unlock(&handoff.lock);
    return room;
}

static size_t take(void **dst, size_t max)
{
    pthread_mutex_lock(&handoff.lock);
    size_t k = 0;
    while (k < max && handoff.n > 0)
        dst[k++] = handoff.obj[--handoff.n];
    pthread_mutex_unlock(&handoff.lock);
    return k;
}

struct worker {
    struct swf_cache *c;
    size_t size;
    unsigned id;
    bool bound; /* makes blocking calls (magazines of its own); else only NOWAIT and frees */
    uint64_t freed;
};

static void scribble(void *o, size_t size, uint64_t seed)
{
    memset(o, (int)(seed & 0xff), size);
    uint64_t w = seed * 0x9e3779b97f4a7c15ull;
    memcpy(o, &w, sizeof(w) <= size ? sizeof(w) : size);
}

static void *work(void *arg)
{
    struct worker *w = arg;
    ck_epoch_record_t *rec = &records[w->id];
    ck_epoch_register(&epoch, rec, NULL);
    void *objs[BATCH];
    for (unsigned r = 0; r < ROUNDS; r++) {
        if (w->bound && r % 50 == 0)
            swf_cache_grow(w->c, BATCH * 2); /* new chunks as the cache grows */
        memset(objs, 0, sizeof(objs));
        size_t got;
        if (r % 3 == 0) {
            got = swf_cache_alloc_bulk(w->c, w->bound ? SWF_WAIT : SWF_NOWAIT, objs, BATCH);
        } else {
            got = 0;
            for (size_t i = 0; i < BATCH; i++) {
                void *o = r % 3 == 1 ? swf_cache_alloc_fast(w->c)
                                     : swf_cache_alloc(w->c, w->bound ? SWF_WAIT : SWF_NOWAIT);
                if (o != NULL)
                    objs[got++] = o;
            }
        }
        for (size_t i = 0; i < got; i++)
            scribble(objs[i], w->size, (uint64_t)(uintptr_t)objs[i] ^ r);
        /* A quarter to another thread; the rest freed here, each way in turn. */
        size_t keep = 0;
        for (size_t i = 0; i < got; i++)
            if (i % 4 != 0 || !give(objs[i]))
                objs[keep++] = objs[i];
        switch (r % 4) {
        case 0:
            for (size_t i = 0; i < keep; i++)
                swf_cache_free(w->c, objs[i]);
            break;
        case 1:
            for (size_t i = 0; i < keep; i++)
                swf_cache_free_fast(w->c, objs[i]);
            break;
        case 2:
            swf_cache_free_bulk(w->c, objs, keep);
            break;
        default:
            swf_cache_free_deferred(w->c, rec, objs, keep);
            ck_epoch_poll(rec);
            break;
        }
        w->freed += keep;
        void *theirs[BATCH];
        size_t k = take(theirs, BATCH);
        if (r % 2)
            swf_cache_free_bulk(w->c, theirs, k);
        else
            for (size_t i = 0; i < k; i++)
                swf_cache_free_fast(w->c, theirs[i]);
        w->freed += k;
    }
    ck_epoch_barrier(rec);
    return NULL;
}

static void run(size_t size, unsigned checks)
{
    struct swf_cache_config cfg = {.object_size = size,
                                   .prefill = 64,
                                   .checks = checks,
                                   .huge_pages = SWF_HUGE_PAGES_OFF,
                                   .name = "checks"};
    struct swf_cache *c;
    ck_epoch_init(&epoch);
    memset(records, 0, sizeof(records));
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    for (int i = 0; i < 6; i++) { /* a chunk each: objects from several chunks */
        struct swf_cache_stats st;
        swf_cache_stats(c, &st);
        tap_require(swf_cache_grow(c, (size_t)st.capacity + 1) == 0, "grow");
    }
    struct worker w[THREADS];
    pthread_t t[THREADS];
    for (unsigned i = 0; i < THREADS; i++) {
        w[i] = (struct worker){.c = c, .size = size, .id = i, .bound = i % 2 == 0};
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    void *rest[BATCH];
    for (size_t k; (k = take(rest, BATCH)) > 0;)
        swf_cache_free_bulk(c, rest, k);
    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    ok(st.alive == 0 && st.chunks >= 7,
       "%zu-byte objects (stride %llu), checks %u: %llu frees "
       "from %u threads, none refused; %llu chunks; nothing alive",
       size, (unsigned long long)st.stride, checks, (unsigned long long)st.frees, THREADS,
       (unsigned long long)st.chunks);
    ok(swf_cache_destroy(c) == 0, "destroy");
}

/* The free mark of obj in c: cache.h's inline ABI, read the way the inline path reads it. */
static uint64_t mark_of(struct swf_cache *c, const void *obj)
{
    const struct swf_owner_head_ *h = (const struct swf_owner_head_ *)(const void *)c;
    return h->key ^ (uint64_t)(uintptr_t)obj;
}

static uint64_t first_word(const void *obj)
{
    uint64_t w;
    memcpy(&w, obj, sizeof(w));
    return w;
}

#define MARKED 100 /* more than a magazine: the scans cover the loaded and the prev magazine */

/* Objects whose users left the mark in them, freed every single way, with other objects (marked
 * for real) in the magazines meanwhile: a scan each, never an abort. */
static void mark_by_chance(size_t size, unsigned checks)
{
    struct swf_cache_config cfg = {.object_size = size, .checks = checks, .name = "chance"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0 && swf_cache_grow(c, 4 * MARKED) == 0, "create");
    void *o[MARKED];
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < MARKED; i++) {
            o[i] = i % 2 ? swf_cache_alloc(c, SWF_NOWAIT) : swf_cache_alloc_fast(c);
            tap_require(o[i] != NULL, "alloc");
        }
        if (round == 0) { /* freed for real, so that the magazines hold marked objects */
            swf_cache_free_bulk(c, o + MARKED / 2, MARKED / 2);
            for (size_t i = 0; i < MARKED / 2; i++)
                if (i % 2 == 0)
                    swf_cache_free(c, o[i]);
        }
        for (size_t i = 0; i < MARKED; i++) {
            uint64_t m = mark_of(c, o[i]);
            if (round == 0 && (i >= MARKED / 2 || i % 2 == 0))
                continue; /* already free */
            memcpy(o[i], &m, sizeof(m));
            if (round == 1)
                swf_cache_free(c, o[i]);
            else
                swf_cache_free_fast(c, o[i]);
        }
    }
    /* Bulk allocations leave the marks of the frees above; single frees of them only scan. */
    size_t bulk_marked = 0, got;
    memset(o, 0, sizeof(o));
    got = swf_cache_alloc_bulk(c, SWF_NOWAIT, o, MARKED);
    for (size_t i = 0; i < got; i++)
        bulk_marked += first_word(o[i]) == mark_of(c, o[i]);
    for (size_t i = 0; i < got; i++)
        i % 2 ? swf_cache_free(c, o[i]) : swf_cache_free_fast(c, o[i]);
    struct swf_cache_stats st;
    swf_cache_stats(c, &st);
    ok(got == MARKED && bulk_marked > 0 && st.alive == 0,
       "%zu-byte objects, checks %u: objects holding the mark by chance, and %zu of %zu from a "
       "bulk allocation still marked, freed without an abort; nothing alive",
       size, checks, bulk_marked, got);
    ok(swf_cache_destroy(c) == 0, "destroy");
}

/* What a single allocation hands out: first min(8, size) bytes zero, after a user scribbled the
 * whole object and freed it (which marks it), through every single allocation function. */
static void alloc_zeroes(size_t size, unsigned checks)
{
    struct swf_cache_config cfg = {.object_size = size, .checks = checks, .name = "zero"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0 && swf_cache_grow(c, 4 * MARKED) == 0, "create");
    size_t n = size < 8 ? size : 8, zeroed = 0, total = 0, marked = 0;
    static const unsigned char zero[8];
    for (int way = 0; way < 3; way++) {
        void *o[MARKED];
        for (size_t i = 0; i < MARKED; i++) {
            o[i] = swf_cache_alloc(c, SWF_WAIT);
            tap_require(o[i] != NULL, "alloc");
            memset(o[i], 0xa5, size);
        }
        for (size_t i = 0; i < MARKED; i++)
            swf_cache_free(c, o[i]);
        for (size_t i = 0; i < MARKED; i++) /* freed objects: the first word is the cache's */
            marked += first_word(o[i]) == mark_of(c, o[i]);
        for (size_t i = 0; i < MARKED; i++) {
            o[i] = way == 0   ? swf_cache_alloc(c, SWF_NOWAIT)
                   : way == 1 ? swf_cache_alloc_fast(c)
                              : swf_cache_alloc(c, SWF_WAIT);
            tap_require(o[i] != NULL, "alloc");
            zeroed += memcmp(o[i], zero, n) == 0;
            total++;
        }
        for (size_t i = 0; i < MARKED; i++)
            swf_cache_free(c, o[i]);
    }
    ok(zeroed == total && marked > 0,
       "%zu-byte objects, checks %u: a single allocation zeroes the first %zu bytes (%zu of %zu; "
       "%zu of the objects freed before held the mark)",
       size, checks, n, zeroed, total, marked);
    ok(swf_cache_destroy(c) == 0, "destroy");
}

int main(void)
{
    struct swf_cache_config bad = {.object_size = 64, .checks = 2};
    struct swf_cache *c;
    ok(swf_cache_create(&bad, &c) == EINVAL, "cfg.checks = 2 is EINVAL");
    run(24, 0);
    run(200, 0);
    run(4096, 0);
    run(200, 1);

    struct swf_cache_config one = {.object_size = 64}, two = one;
    struct swf_cache *c1, *c2;
    tap_require(swf_cache_create(&one, &c1) == 0 && swf_cache_create(&two, &c2) == 0, "create");
    uint64_t k1 = ((const struct swf_owner_head_ *)(const void *)c1)->key;
    uint64_t k2 = ((const struct swf_owner_head_ *)(const void *)c2)->key;
    ok(k1 != 0 && k2 != 0 && k1 != k2, "each cache has its own key, never 0");
    swf_cache_destroy(c1);
    swf_cache_destroy(c2);
    for (unsigned checks = 0; checks < 2; checks++) {
        mark_by_chance(64, checks);
        mark_by_chance(24, checks);
        alloc_zeroes(64, checks);
        alloc_zeroes(4, checks);
        alloc_zeroes(4096, checks);
    }
    return tap_done();
}
