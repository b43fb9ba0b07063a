/*
 * test/concurrent/cache_stress.c - concurrent alloc and free across threads, with conservation at
 * the end.
 *
 * T threads, released together, each run OPS random operations: allocate (NOWAIT or WAIT), free
 * one of its own objects, or pass one to a shared mailbox from which any thread frees it. Every
 * object carries a header written at allocation and checked at free:
 *   - a state word that must read "free" at allocation (so no object is handed out twice at
 *     once) and "live" at free, written "free" just before the object goes back;
 *   - the allocating thread's tag and a serial number, and a cookie derived from both, so a free
 *     of a corrupted or foreign object is caught.
 * At the end: allocated - freed == alive == what the cache's statistics say, and after the last
 * frees alive == 0 and capacity == ready.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

#ifndef STRESS_THREADS
#define STRESS_THREADS 4
#endif
enum { HELD = 256, MAILBOX = 64, OBJ_SIZE = 64 };
static const uint64_t LIVE = 0x4c495645u, FREED = 0x46524545u;

struct obj {
    uint64_t state;
    uint64_t owner;
    uint64_t serial;
    uint64_t cookie;
};

static struct swf_cache *cache;
static void *mailbox[MAILBOX];
static pthread_barrier_t start;
static long ops_per_thread = 1000000;

struct worker {
    int id;
    uint64_t rng;
    long allocated, freed, fails, double_handouts, bad_frees;
    void *held[HELD];
    int nheld;
};

static uint64_t cookie_of(uint64_t owner, uint64_t serial)
{
    return (owner * 0x9e3779b97f4a7c15ull) ^ (serial + 0x632be59bd9b4e019ull);
}

static void checked_free(struct worker *w, struct obj *o)
{
    if (__atomic_load_n(&o->state, __ATOMIC_RELAXED) != LIVE ||
        o->cookie != cookie_of(o->owner, o->serial))
        w->bad_frees++;
    __atomic_store_n(&o->state, FREED, __ATOMIC_RELAXED);
    swf_cache_free(cache, o);
    w->freed++;
}

static void do_alloc(struct worker *w)
{
    enum swf_alloc_mode mode = (tap_rand(&w->rng) & 7) == 0 ? SWF_WAIT : SWF_NOWAIT;
    struct obj *o = swf_cache_alloc(cache, mode);
    if (o == NULL) {
        w->fails++;
        return;
    }
    /* A fresh object's state is whatever its last user left: "freed", or garbage from memory
     * never used. "live" means someone else holds it right now. */
    if (__atomic_exchange_n(&o->state, LIVE, __ATOMIC_RELAXED) == LIVE)
        w->double_handouts++;
    o->owner = (uint64_t)w->id;
    o->serial = (uint64_t)w->allocated;
    o->cookie = cookie_of(o->owner, o->serial);
    w->allocated++;
    w->held[w->nheld++] = o;
}

static void do_free_or_pass(struct worker *w)
{
    uint64_t r = tap_rand(&w->rng);
    int i = (int)(r % (uint64_t)w->nheld);
    struct obj *o = w->held[i];
    w->held[i] = w->held[--w->nheld];
    if ((r >> 32) & 1) {
        checked_free(w, o);
        return;
    }
    /* Pass it on: whatever was in the mailbox slot is freed by us instead. */
    void *prev = __atomic_exchange_n(&mailbox[(r >> 33) % MAILBOX], o, __ATOMIC_ACQ_REL);
    if (prev != NULL)
        checked_free(w, prev);
}

static void *run(void *arg)
{
    struct worker *w = arg;
    pthread_barrier_wait(&start);
    for (long n = 0; n < ops_per_thread; n++) {
        bool alloc = w->nheld == 0 || (w->nheld < HELD && (tap_rand(&w->rng) & 1));
        if (alloc)
            do_alloc(w);
        else
            do_free_or_pass(w);
    }
    return NULL;
}

int main(void)
{
    const char *scale = getenv("SWF_STRESS_OPS");
    if (scale != NULL)
        ops_per_thread = atol(scale);
    struct swf_cache_config cfg = {.object_size = OBJ_SIZE, .prefill = 1024, .name = "stress"};
    tap_require(swf_cache_create(&cfg, &cache) == 0, "create");
    pthread_barrier_init(&start, NULL, STRESS_THREADS);

    static struct worker w[STRESS_THREADS];
    pthread_t t[STRESS_THREADS];
    for (int i = 0; i < STRESS_THREADS; i++) {
        w[i].id = i + 1;
        w[i].rng = 0x853c49e6748fea9bull * (uint64_t)(i + 1);
        pthread_create(&t[i], NULL, run, &w[i]);
    }
    long allocated = 0, freed = 0, fails = 0, doubles = 0, bad = 0, held = 0;
    for (int i = 0; i < STRESS_THREADS; i++) {
        pthread_join(t[i], NULL);
        allocated += w[i].allocated;
        freed += w[i].freed;
        fails += w[i].fails;
        doubles += w[i].double_handouts;
        bad += w[i].bad_frees;
        held += w[i].nheld;
    }
    long in_mailbox = 0;
    for (int i = 0; i < MAILBOX; i++)
        in_mailbox += mailbox[i] != NULL;

    diag("%d threads x %ld ops: %ld allocated, %ld freed, %ld NOWAIT failures", STRESS_THREADS,
         ops_per_thread, allocated, freed, fails);
    ok(doubles == 0, "no object was handed out twice at once (%ld)", doubles);
    ok(bad == 0, "every freed object carried its owner's cookie (%ld bad)", bad);
    struct swf_cache_stats s;
    swf_cache_stats(cache, &s);
    ok(allocated - freed == held + in_mailbox, "allocated - freed == held by threads + in mailbox");
    ok(s.alive == (uint64_t)(allocated - freed),
       "conservation: stats.alive %llu == allocated - freed %ld", (unsigned long long)s.alive,
       allocated - freed);
    ok(s.allocs_nowait + s.allocs_wait == (uint64_t)allocated && s.frees == (uint64_t)freed,
       "stats count every allocation and free");

    struct worker last = {.id = 99};
    for (int i = 0; i < STRESS_THREADS; i++)
        for (int k = 0; k < w[i].nheld; k++)
            checked_free(&last, w[i].held[k]);
    for (int i = 0; i < MAILBOX; i++)
        if (mailbox[i] != NULL)
            checked_free(&last, mailbox[i]);
    swf_cache_stats(cache, &s);
    ok(last.bad_frees == 0 && s.alive == 0 && s.capacity == s.ready,
       "after the last frees: alive 0, capacity %llu == ready %llu", (unsigned long long)s.capacity,
       (unsigned long long)s.ready);
    ok(swf_cache_destroy(cache) == 0, "destroy");
    return tap_done();
}
