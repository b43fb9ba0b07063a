/*
 * test/unit/cache_limits.c - limits map only what the cache can use, sizes are counted in bytes,
 * and the configuration's edges hold.
 *
 *   - At a lowered object limit, a grow past it fails at once; grow maps exactly the objects the
 *     limit allows, every mapped object becomes ready, and NOWAIT hands out every one of them.
 *   - One WAIT allocation of a large object maps at most 16 MiB (or the one object), not 60.
 *   - At a lowered magazine table (this program is also built from the library's sources with
 *     SWF_MAG_BLOCKS_MAX=64: 512 magazines, as cache_limits_small_table), a grow beyond what the
 *     table can hold fails at once, and grows up to its end map nothing that it cannot hold.
 *   - lock_memory locks what it maps (VmLck); alignments of 1, 2 and 4 still space objects by a
 *     multiple of 8 (a free object holds a pointer); reserved fields must be zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

#define CHUNK_GRAIN ((uint64_t)64 << 10) /* chunks are mapped in units of at most 64 KiB */

static struct swf_cache_stats stats_of(struct swf_cache *c)
{
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    return s;
}

/* Every chunk's slack is under one grain: nothing mapped that is not an object. */
static bool mapped_is_used(const struct swf_cache_stats *s)
{
    return s->bytes_mapped >= s->capacity * s->stride &&
           s->bytes_mapped < s->capacity * s->stride + s->chunks * CHUNK_GRAIN;
}

#ifndef SMALL_TABLE
static void lowered_object_limit(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .limit = 1000, .name = "limited"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    int err = swf_cache_grow(c, 5000);
    ok(err == ENOMEM && stats_of(c).capacity == 0,
       "grow past the limit: ENOMEM at once, nothing mapped (%s)", swf_error_reason());
    err = swf_cache_grow(c, 1000);
    struct swf_cache_stats s = stats_of(c);
    ok(err == 0 && s.capacity == 1000 && mapped_is_used(&s),
       "the limit's 1000 objects were mapped, and nothing more (%llu bytes, %llu chunks)",
       (unsigned long long)s.bytes_mapped, (unsigned long long)s.chunks);
    void **o = calloc(1001, sizeof(void *));
    int got = 0;
    while (got < 1001 && (o[got] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL)
        got++;
    ok(got == 1000, "NOWAIT hands out all %d of them (the mapped memory is all ready)", got);
    for (int i = 0; i < got; i++)
        swf_cache_free(c, o[i]);
    swf_cache_set_limit(c, 3000);
    err = swf_cache_grow(c, 3000);
    s = stats_of(c);
    ok(err == 0 && s.capacity == 3000, "raising the limit lets grow finish (%llu)",
       (unsigned long long)s.capacity);
    free(o);
    ok(swf_cache_destroy(c) == 0, "destroy");
}

static void wait_batch_in_bytes(size_t size, uint64_t most)
{
    struct swf_cache_config cfg = {.object_size = size, .name = "large"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    void *o = swf_cache_alloc(c, SWF_WAIT);
    struct swf_cache_stats s = stats_of(c);
    ok(o != NULL && s.bytes_mapped <= most && mapped_is_used(&s),
       "one WAIT allocation of a %zu KiB object maps %llu KiB (at most %llu KiB)", size >> 10,
       (unsigned long long)(s.bytes_mapped >> 10), (unsigned long long)(most >> 10));
    swf_cache_free(c, o);
    swf_cache_destroy(c);
}

static uint64_t locked_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    uint64_t kib = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "VmLck: %llu kB", (unsigned long long *)&kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

static void lock_memory(void)
{
    uint64_t before = locked_kib();
    struct swf_cache_config cfg = {
        .object_size = 4096, .prefill = 512, .lock_memory = 1, .name = "locked"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err == ENOMEM || err == EPERM) {
        skip("RLIMIT_MEMLOCK does not allow 2 MiB here (%s)", swf_error_reason());
        return;
    }
    uint64_t after = locked_kib();
    ok(err == 0 && after >= before + 2048, "lock_memory: VmLck grew by %llu KiB for 2 MiB",
       (unsigned long long)(after - before));
    swf_cache_destroy(c);
    ok(locked_kib() <= before + 64, "destroy unlocks it with the unmapping");
}

static void small_alignments(void)
{
    size_t aligns[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        struct swf_cache_config cfg = {.object_size = 5, .align = aligns[i], .name = "tiny"};
        struct swf_cache *c;
        tap_require(swf_cache_create(&cfg, &c) == 0, "create");
        swf_cache_grow(c, 1000);
        int misaligned = 0;
        void *o[1000];
        for (int k = 0; k < 1000; k++) {
            o[k] = swf_cache_alloc(c, SWF_NOWAIT);
            misaligned += ((uintptr_t)o[k] & 7) != 0;
        }
        for (int k = 0; k < 1000; k++)
            swf_cache_free(c, o[k]);
        struct swf_cache_stats s = stats_of(c);
        ok(s.stride % 8 == 0 && misaligned == 0,
           "align %zu: stride %llu, every free object can hold its link (%d misaligned)", aligns[i],
           (unsigned long long)s.stride, misaligned);
        swf_cache_destroy(c);
    }
}

static void config_edges(void)
{
    struct swf_cache *c;
    struct swf_cache_config cfg = {.object_size = 64, .lock_memory = 2};
    int err = swf_cache_create(&cfg, &c);
    ok(err == EINVAL && strcmp(swf_error_reason(), "cfg->lock_memory is neither 0 nor 1") == 0,
       "lock_memory 2: EINVAL (%s)", swf_error_reason());
    cfg.lock_memory = 0;
    cfg.reserved[3] = 1;
    err = swf_cache_create(&cfg, &c);
    ok(err == EINVAL && strcmp(swf_error_reason(), "cfg->reserved is not zero") == 0,
       "a reserved field set: EINVAL (%s)", swf_error_reason());
}

#endif

#ifdef SMALL_TABLE
static void small_magazine_table(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .name = "small-table"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    int err = swf_cache_grow(c, 100000);
    ok(err == ENOMEM && stats_of(c).capacity == 0,
       "grow beyond what 512 magazines hold: ENOMEM at once, nothing mapped (%s)",
       swf_error_reason());
    /* Up to the table's end in steps of 5,000: the last one fails. */
    int grows = 0;
    while ((err = swf_cache_grow(c, stats_of(c).capacity + 5000)) == 0)
        grows++;
    ok(err == ENOMEM && grows > 0, "%d grows of 5,000 objects, then ENOMEM (%s)", grows,
       swf_error_reason());
    /* The reason states the most objects the cache can have ready: with the table full, exactly
     * that much is had, and one more is not. */
    unsigned long long most = 0;
    const char *at = strstr(swf_error_reason(), ": at most ");
    bool stated = at != NULL && sscanf(at, ": at most %llu objects can be ready", &most) == 1;
    bool beyond = stated && swf_cache_grow(c, (size_t)most + 1) == ENOMEM;
    bool within = stated && swf_cache_grow(c, (size_t)most) == 0 && stats_of(c).ready >= most;
    ok(stated && beyond && within,
       "the reason's figure is the limit: grow(%llu) succeeds, grow(%llu) does not", most,
       most + 1);
    struct swf_cache_stats s = stats_of(c);
    ok(s.capacity > 0 && s.capacity <= 512 * SWF_CACHE_MAGAZINE && mapped_is_used(&s),
       "it mapped %llu objects in %llu bytes: all of them ready, none it cannot hold",
       (unsigned long long)s.capacity, (unsigned long long)s.bytes_mapped);
    uint64_t before = s.bytes_mapped;
    err = swf_cache_grow(c, 200000);
    ok(err == ENOMEM && stats_of(c).bytes_mapped == before,
       "with the table full, another grow maps nothing at all");
    ok(swf_cache_destroy(c) == 0, "destroy");
}

int main(void)
{
    small_magazine_table();
    return tap_done();
}
#else
int main(void)
{
    lowered_object_limit();
    wait_batch_in_bytes((size_t)1 << 20, (uint64_t)16 << 20);
    wait_batch_in_bytes((size_t)64 << 20, (uint64_t)64 << 20);
    if (TAP_SANITIZED || tap_under_valgrind())
        skip("VmLck under a sanitizer or valgrind");
    else
        lock_memory();
    small_alignments();
    config_edges();
    return tap_done();
}
#endif
