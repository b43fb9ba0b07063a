/*
 * test/unit/cache_footprint.c - a cache that was never used keeps little resident
 * (swf_cache_create(3), "Footprint": its tables, shared pairs and spare magazines wait for its
 * first use).
 *
 * 1,000 caches created without a prefill add at most 16 KiB of resident memory each (an average:
 * /proc/self/statm counts whole pages; not with debug checks, whose address map is larger), and
 * NOWAIT on one of them finds nothing (EAGAIN) until a blocking call has used it. A first WAIT
 * allocation maps one page of objects, and the caches used so (one WAIT allocation and its free
 * each, by one thread) add at most 32 KiB each. bench/families/footprint.c prints the figures
 * themselves.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

#define NCACHES 1000

static long resident_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL || fscanf(f, "%ld %ld", &size, &resident) != 2)
        resident = 0;
    if (f != NULL)
        fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

int main(void)
{
    if (TAP_SANITIZED || tap_under_valgrind()) {
        skip("resident memory under a sanitizer or valgrind is theirs");
        return tap_done();
    }
    struct swf_cache **c = calloc(NCACHES, sizeof(*c));
    struct swf_cache_config cfg = {.object_size = 64, .name = "footprint"};
    long before = resident_bytes();
    for (int i = 0; i < NCACHES; i++)
        tap_require(swf_cache_create(&cfg, &c[i]) == 0, "create");
    long each = (resident_bytes() - before) / NCACHES;
    if (swf_debug_checks())
        skip("debug checks give every cache an address map (%ld bytes resident each)", each);
    else
        ok(each <= 16 << 10, "an empty cache keeps %ld bytes resident (at most 16 KiB)", each);

    errno = 0;
    void *o = swf_cache_alloc(c[0], SWF_NOWAIT);
    ok(o == NULL && errno == EAGAIN, "NOWAIT on a cache never used: EAGAIN");
    o = swf_cache_alloc(c[0], SWF_WAIT);
    ok(o != NULL, "a WAIT allocation uses it");
    swf_cache_free(c[0], o);
    struct swf_cache_stats s;
    swf_cache_stats(c[0], &s);
    long page = sysconf(_SC_PAGESIZE);
    ok(s.bytes_mapped == (uint64_t)page && s.chunks == 1 && s.capacity == (uint64_t)page / 64,
       "its first chunk is one page (%llu bytes, %llu objects)", (unsigned long long)s.bytes_mapped,
       (unsigned long long)s.capacity);
    o = swf_cache_alloc(c[0], SWF_NOWAIT);
    ok(o != NULL, "NOWAIT finds objects then");
    swf_cache_free(c[0], o);

    /* The first use of each of the others: what a WAIT allocation makes stays resident. */
    before = resident_bytes();
    for (int i = 1; i < NCACHES; i++) {
        o = swf_cache_alloc(c[i], SWF_WAIT);
        tap_require(o != NULL, "WAIT");
        swf_cache_free(c[i], o);
    }
    each = (resident_bytes() - before) / (NCACHES - 1);
    if (swf_debug_checks())
        skip("debug checks give every chunk a state map (%ld bytes resident each)", each);
    else
        ok(each <= 32 << 10, "a cache used once keeps %ld bytes resident (at most 32 KiB)", each);

    int bad = 0;
    for (int i = 0; i < NCACHES; i++)
        bad += swf_cache_destroy(c[i]) != 0;
    ok(bad == 0, "destroy them all");
    free(c);
    return tap_done();
}
