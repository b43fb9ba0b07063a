/*
 * test/concurrent/cache_carve_race.c - threads carving at once (lib/cache/store/chunk.c): every
 * object is handed out exactly once, and conservation holds with uncarved objects as a place of
 * their own.
 *
 * Built from the library's sources (it reads the cache's internals). A cache grown in many small
 * chunks (so that threads race on the bump index of each and on taking carved-out chunks off the
 * stack) and, every other round, one for 2 MiB of objects; 4 threads bound to it and 4 threads
 * without a state of their own (never prepared: they claim one of the 3 shared states left free,
 * or go to the depot and carve straight into their hands) allocate, single and bulk NOWAIT, until
 * EAGAIN, all released at once. Then:
 * no object twice, every object a start of one of the cache's objects, and handed out + left in
 * magazines, the depot, the loose list and uncarved == capacity. Rounds repeat it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "cache/cache_internal.h"
#include "../common/tap.h"

#define THREADS 8
#define ROUNDS  20
#define MOST    40000 /* objects a thread may take in a round */

static struct swf_cache *c;
static pthread_barrier_t start;
static void **got[THREADS];
static size_t ngot[THREADS];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    bool bound = id < THREADS / 2;
    if (bound)
        swf_cache_grow(c, 0); /* a state of its own */
    pthread_barrier_wait(&start);
    size_t n = 0;
    for (unsigned k = 0; n < MOST; k++) {
        if (k % 3 == 2 && n + 7 <= MOST) { /* a bulk allocation of 7 now and then */
            void *b[7] = {0};
            size_t g = swf_cache_alloc_bulk(c, SWF_NOWAIT, b, 7);
            for (size_t i = 0; i < g; i++)
                got[id][n++] = b[i];
            if (g < 7)
                break;
            continue;
        }
        void *o = swf_cache_alloc(c, SWF_NOWAIT);
        if (o == NULL)
            break;
        got[id][n++] = o;
    }
    ngot[id] = n;
    return NULL;
}

/* Free objects in the thread states' magazines (the per-thread mode) and the CPUs' (per-CPU). */
static uint64_t in_states(void)
{
    uint64_t n = swfi_pcpu_validate(c, "cache_carve_race");
    uint32_t count = swfi_load_acquire_32(&c->tstates.x_count);
    for (uint32_t i = 0; i < count; i++) {
        struct swfi_tstate *ts = swfi_itable_node(&c->tstates, i);
        if (ts->pub.loaded != NULL && ts->pub.prev != NULL)
            n += ts->pub.loaded->n + ts->pub.prev->n;
    }
    return n;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

/* Whether p is the start of an object of one of c's chunks. */
static bool an_object(const void *p)
{
    for (struct swfi_chunk *ch = c->chunks; ch != NULL; ch = ch->next)
        if ((const char *)p >= ch->base && (const char *)p < ch->base + ch->nobjs * c->stride)
            return ((uintptr_t)p - (uintptr_t)ch->base) % c->stride == 0;
    return false;
}

/* One round; returns whether everything held. */
static bool round_once(int r, void **all)
{
    struct swf_cache_config cfg = {.object_size = 24 + 8 * (r % 4), .name = "carve-race"};
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    size_t small = 200 + 37 * (size_t)r; /* chunks of 64 KiB: 1,000-2,700 objects each */
    struct swf_cache_stats s;
    for (int k = 0; k < 12; k++) {
        swf_cache_stats(c, &s);
        tap_require(swf_cache_grow(c, s.capacity + small) == 0, "grow");
    }
    if (r % 2 ==
        0) { /* and one chunk for 2 MiB of objects: huge pages, where the system has them */
        swf_cache_stats(c, &s);
        tap_require(swf_cache_grow(c, s.capacity + (2 << 20) / s.stride) == 0, "grow large");
    }
    /* Most shared states taken (and empty), so that threads without a state of their own often
     * find none and carve straight into their hands. */
    for (int i = 0; i < SHARED_STATES - 3 && c->shared[i] != NULL; i++) /* per-thread mode */
        swfi_store_relaxed_32(&c->shared[i]->x_claim, 1);
    swf_cache_stats(c, &s);
    uint64_t uncarved = swfi_uncarved(c);

    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < SHARED_STATES - 3 && c->shared[i] != NULL; i++)
        swfi_store_relaxed_32(&c->shared[i]->x_claim, 0);

    size_t n = 0;
    for (int i = 0; i < THREADS; i++)
        for (size_t k = 0; k < ngot[i]; k++)
            all[n++] = got[i][k];
    qsort(all, n, sizeof(void *), by_address);
    size_t twice = 0, strange = 0;
    for (size_t k = 0; k < n; k++) {
        twice += k > 0 && all[k] == all[k - 1];
        strange += !an_object(all[k]);
    }
    uint64_t left = in_states() + c->x_depot_objs + c->x_loose_objs + swfi_uncarved(c);
    struct swf_cache_stats after;
    swf_cache_stats(c, &after);
    bool held = twice == 0 && strange == 0 && n + left == s.capacity && after.alive == n &&
                after.ready == left && s.ready == s.capacity && uncarved == s.capacity;
    if (!held)
        diag("round %d: %zu handed out (%zu twice, %zu not objects), %llu left, capacity %llu, "
             "uncarved at start %llu",
             r, n, twice, strange, (unsigned long long)left, (unsigned long long)s.capacity,
             (unsigned long long)uncarved);
    for (size_t k = 0; k < n; k++)
        swf_cache_free(c, all[k]);
    swf_cache_stats(c, &after);
    held = held && after.ready == after.capacity &&
           in_states() + c->x_depot_objs + c->x_loose_objs + swfi_uncarved(c) == after.ready;
    held = swf_cache_destroy(c) == 0 && held;
    return held;
}

int main(void)
{
    void **all = malloc((size_t)THREADS * MOST * sizeof(void *));
    for (int i = 0; i < THREADS; i++)
        got[i] = malloc(MOST * sizeof(void *));
    int good = 0;
    for (int r = 0; r < ROUNDS; r++)
        good += round_once(r, all);
    ok(good == ROUNDS,
       "%d of %d rounds: every object handed out once, ready == magazines + depot + loose + "
       "uncarved, before and after the frees",
       good, ROUNDS);
    for (int i = 0; i < THREADS; i++)
        free(got[i]);
    free(all);
    return tap_done();
}
