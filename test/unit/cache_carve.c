/*
 * test/unit/cache_carve.c - lazy carving (lib/cache/store/chunk.c, front/shared.c): a grow leaves
 * the objects it maps uncarved and makes their magazines beforehand; allocations carve them.
 *
 * Built from the library's sources (it reads the cache's internals):
 *   - a grow of N objects puts none into a magazine: all are uncarved, ready in the stats, and
 *     the conservation equation holds with uncarved objects as a place of their own;
 *   - a magazine per SWF_CACHE_MAGAZINE objects is made before the memory is mapped, and after
 *     every object was allocated and freed none is on the loose list;
 *   - a chunk for 2 MiB of small objects is on 2 MiB-aligned huge pages and holds its own
 *     magazines; grows of 100 small objects map a cache's first chunk in whole pages, its
 *     second in units of 4 pages, then 64 KiB units; a first WAIT allocation makes magazines and
 *     thread states in blocks of 8, fewer than 64, and carves an eighth of its page of objects;
 *   - a bound thread gets every object exactly once, in address order, then EAGAIN; a thread
 *     without a state (all shared states claimed) carves what it asks for; a WAIT allocation and a
 *     second grow take uncarved objects before they map memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "cache/cache_internal.h"
#include "../common/tap.h"

#define N 100000

static struct swf_cache_stats stats_of(struct swf_cache *c)
{
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    return s;
}

/* Free objects in the thread states' magazines (bound, shared, and those in the free pool,
 * which hold none). */
static uint64_t in_states(struct swf_cache *c)
{
    uint64_t n = 0;
    uint32_t count = swfi_load_acquire_32(&c->tstates.x_count);
    for (uint32_t i = 0; i < count; i++) {
        struct swfi_tstate *ts = swfi_itable_node(&c->tstates, i);
        if (ts->pub.loaded != NULL)
            n += ts->pub.loaded->n + ts->pub.prev->n;
    }
    return n;
}

/* ready == magazines + depot + loose + uncarved, and capacity == alive + ready. */
static bool conserved(struct swf_cache *c)
{
    struct swf_cache_stats s = stats_of(c);
    uint64_t places = in_states(c) + c->x_depot_objs + c->x_loose_objs + swfi_uncarved(c);
    if (places != s.ready || s.capacity != s.alive + s.ready)
        diag("ready %llu, places %llu (states %llu, depot %llu, loose %llu, uncarved %llu)",
             (unsigned long long)s.ready, (unsigned long long)places,
             (unsigned long long)in_states(c), (unsigned long long)c->x_depot_objs,
             (unsigned long long)c->x_loose_objs, (unsigned long long)swfi_uncarved(c));
    return places == s.ready && s.capacity == s.alive + s.ready;
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return x < y ? -1 : x > y;
}

static struct swf_cache *make(size_t size, const char *name)
{
    struct swf_cache_config cfg = {.object_size = size, .name = name};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    return c;
}

static void grow_leaves_objects_uncarved(void **o)
{
    struct swf_cache *c = make(64, "carve");
    tap_require(swf_cache_grow(c, N) == 0, "grow");
    struct swf_cache_stats s = stats_of(c);
    ok(s.capacity >= N && s.ready == s.capacity && swfi_uncarved(c) == s.capacity &&
           c->x_depot_objs == 0 && c->x_loose_objs == 0 && in_states(c) == 0,
       "a grow of %d puts no object into a magazine: all %llu are uncarved and ready", N,
       (unsigned long long)s.capacity);
    ok(conserved(c), "ready == magazines + depot + loose + uncarved");
    uint64_t made = swfi_load_relaxed_32(&c->mags.x_count);
    ok(made * SWF_CACHE_MAGAZINE >= s.capacity &&
           c->x_empty_mags * SWF_CACHE_MAGAZINE >= s.capacity,
       "a magazine per %d objects was made beforehand (%llu made, %llu empty on the depot)",
       SWF_CACHE_MAGAZINE, (unsigned long long)made, (unsigned long long)c->x_empty_mags);

    /* Every object once, in address order within a chunk, then EAGAIN. */
    size_t got = 0, breaks = 0;
    while (got < s.capacity + 1 && (o[got] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL) {
        breaks += got > 0 && (uintptr_t)o[got] != (uintptr_t)o[got - 1] + s.stride;
        got++;
    }
    int err = errno;
    qsort(o, got, sizeof(void *), by_address);
    size_t dup = 0;
    for (size_t i = 1; i < got; i++)
        dup += o[i] == o[i - 1];
    ok(got == s.capacity && err == EAGAIN && dup == 0,
       "NOWAIT hands out all %zu, each once (%zu twice), then EAGAIN", got, dup);
    ok(breaks < s.chunks, "in address order within each of the %llu chunks (%zu breaks)",
       (unsigned long long)s.chunks, breaks);
    ok(swfi_uncarved(c) == 0 && conserved(c), "all carved; conservation");
    for (size_t i = 0; i < got; i++)
        swf_cache_free(c, o[i]);
    ok(c->x_loose_objs == 0 && conserved(c) && stats_of(c).ready == s.capacity,
       "all freed: every one found room in a magazine, none went on the loose list");
    size_t again = 0;
    while (again < got && (o[again] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL)
        again++;
    ok(again == got, "and NOWAIT hands them all out again (%zu)", again);
    for (size_t i = 0; i < again; i++)
        swf_cache_free(c, o[i]);
    ok(swf_cache_destroy(c) == 0, "destroy");
}

static void chunk_sizes(void)
{
    /* Chunks of base pages: the first in whole pages, the second in units of 4 pages, then
     * 64 KiB units; each filled with objects to its end. */
    struct swf_cache *c = make(64, "small");
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), mapped = 0;
    for (unsigned k = 0; k < 4; k++) {
        uint64_t unit = k == 0 ? page : k == 1 ? 4 * page : 64 << 10;
        unit = unit < page ? page : unit;
        uint64_t want = (100 * 64 + unit - 1) / unit * unit; /* 100 objects, in whole units */
        tap_require(swf_cache_grow(c, stats_of(c).capacity + 100) == 0, "grow 100 more");
        struct swf_cache_stats s = stats_of(c);
        ok(s.bytes_mapped == mapped + want && s.chunks == k + 1 &&
               s.capacity == s.bytes_mapped / 64,
           "grow %u of 100 small objects maps %llu KiB (%llu-byte units), filled with objects "
           "(%llu in all)",
           k + 1, (unsigned long long)((s.bytes_mapped - mapped) >> 10), (unsigned long long)unit,
           (unsigned long long)s.capacity);
        mapped = s.bytes_mapped;
    }
    ok(swf_cache_destroy(c) == 0, "destroy");

    if (!swfi_thp_available() || tap_under_valgrind() || tap_under_qemu()) {
        skip("no transparent huge pages here (or an emulator's)");
        return;
    }
    /* The layout of a huge-page chunk, asked for: AUTO would give it only where its measurement
     * found huge pages fast, which a loaded or a cold host may not (chunk.c, thp_decide). */
    struct swf_cache_config huge = {
        .object_size = 64, .huge_pages = SWF_HUGE_PAGES_REQUIRED, .name = "huge"};
    tap_require(swf_cache_create(&huge, &c) == 0, "create with huge pages required");
    size_t n = (2 << 20) / 64;
    tap_require(swf_cache_grow(c, n) == 0, "grow 2 MiB of objects");
    struct swfi_chunk *ch = c->chunks;
    ok(ch != NULL && ch->next == NULL && (uintptr_t)ch->base % (2 << 20) == 0 &&
           ch->map_bytes % (2 << 20) == 0 && ch->nobjs >= n,
       "a grow of 2 MiB of 64-byte objects maps one 2 MiB-aligned chunk of %zu MiB",
       ch ? ch->map_bytes >> 20 : 0);
    uint32_t i = swfi_istack_pop(&c->empty, &c->mags);
    char *m = i == UINT32_MAX ? NULL : (char *)swfi_mag_at(c, i);
    ok(m != NULL && m >= ch->base + ch->nobjs * 64 && m < ch->base + ch->map_bytes,
       "its magazines live in it, after its objects");
    if (i != UINT32_MAX)
        swfi_istack_push(&c->empty, &c->mags, i);
    ok(conserved(c) && swf_cache_destroy(c) == 0, "conservation, destroy");
}

/* A first use makes the magazines and thread states it needs, in table blocks of 8, not 64 of
 * each; its one page of objects goes to a carve of an eighth of it at a time. */
static void first_use_small(void)
{
    struct swf_cache *c = make(64, "first use");
    void *obj = swf_cache_alloc(c, SWF_WAIT);
    tap_require(obj != NULL, "WAIT");
    uint32_t mags = swfi_load_relaxed_32(&c->mags.x_count);
    uint32_t states = swfi_load_relaxed_32(&c->tstates.x_count);
    ok(mags % 8 == 0 && mags < 64 && states % 8 == 0 && states <= 24,
       "a first WAIT allocation makes %u magazines and %u thread states (blocks of 8)", mags,
       states);
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
    struct swfi_chunk *ch = c->chunks;
    ok(ch != NULL && ch->nobjs == page / 64 && swfi_load_relaxed_64(&ch->x_carved) == page / 64 / 8,
       "and carves an eighth of its one page of objects (%llu of %zu)",
       ch ? (unsigned long long)swfi_load_relaxed_64(&ch->x_carved) : 0ull, ch ? ch->nobjs : 0);
    swf_cache_free(c, obj);
    ok(conserved(c) && swf_cache_destroy(c) == 0, "conservation, destroy");
}

static struct swf_cache *shared_c;

static void *unbound_thread(void *arg)
{
    void **o = arg;
    o[0] = swf_cache_alloc(shared_c, SWF_NOWAIT);
    for (int i = 1; i <= 10; i++)
        o[i] = NULL;
    errno = 0;
    size_t got = swf_cache_alloc_bulk(shared_c, SWF_NOWAIT, o + 1, 10);
    return (void *)(uintptr_t)got;
}

static void *wait_thread(void *arg)
{
    (void)arg;
    return swf_cache_alloc(shared_c, SWF_WAIT);
}

static void without_a_state(void)
{
    struct swf_cache *c = shared_c = make(64, "unbound");
    tap_require(swf_cache_grow(c, 1000) == 0, "grow");
    uint64_t before = swfi_uncarved(c);
    /* Every shared state taken: a thread never prepared has no state at all for its call. */
    for (int i = 0; i < SHARED_STATES; i++)
        swfi_store_relaxed_32(&c->shared[i]->x_claim, 1);
    void *o[11];
    pthread_t t;
    void *got;
    pthread_create(&t, NULL, unbound_thread, o);
    pthread_join(t, &got);
    ok(o[0] != NULL && (uintptr_t)got == 10,
       "a thread without a state carves an object, then 10 in one bulk allocation");
    ok(before - swfi_uncarved(c) == 1 + SWF_CACHE_MAGAZINE &&
           c->x_depot_objs == SWF_CACHE_MAGAZINE - 10,
       "the single one carved alone; the bulk one a magazine's worth, the 50 left to the depot");
    for (int i = 0; i < SHARED_STATES; i++)
        swfi_store_relaxed_32(&c->shared[i]->x_claim, 0);
    ok(conserved(c), "conservation");
    for (int i = 0; i < 11; i++)
        swf_cache_free(c, o[i]);

    uint64_t mapped = stats_of(c).bytes_mapped;
    ok(swf_cache_grow(c, stats_of(c).capacity) == 0 && stats_of(c).bytes_mapped == mapped,
       "a grow to the capacity counts the uncarved objects and maps nothing");
    ok(conserved(c) && swf_cache_destroy(c) == 0, "conservation, destroy");

    /* A WAIT allocation on a cache whose objects are all uncarved. */
    c = shared_c = make(64, "wait");
    tap_require(swf_cache_grow(c, 1000) == 0, "grow");
    mapped = stats_of(c).bytes_mapped;
    pthread_create(&t, NULL, wait_thread, NULL);
    pthread_join(t, &got);
    ok(got != NULL && stats_of(c).bytes_mapped == mapped && swfi_uncarved(c) < 1000,
       "a WAIT allocation carves an object and maps nothing");
    swf_cache_free(c, got);
    ok(conserved(c) && swf_cache_destroy(c) == 0, "conservation, destroy");
}

int main(void)
{
    void **o = calloc(2 * N, sizeof(void *));
    tap_require(o != NULL, "memory");
    grow_leaves_objects_uncarved(o);
    chunk_sizes();
    first_use_small();
    without_a_state();
    free(o);
    return tap_done();
}
