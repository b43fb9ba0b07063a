/*
 * test/unit/cache_grow_bounds.c - a grow that can never be satisfied fails at once, and one that
 * fails part-way keeps what it mapped (cache.h, swf_cache_grow).
 *
 *   - Under an 8 GiB RLIMIT_AS, swf_cache_grow(c, SIZE_MAX) (a caller's `n - reserve` gone below
 *     zero) fails with ENOMEM within a second, having mapped nothing, with the process's peak
 *     resident memory under 256 MiB, for 64-byte and 4 KiB objects; so do a count beyond the
 *     limit of the address space and one beyond the cache's own limit.
 *   - A grow the address space allows in total but not on top of what the process has mapped
 *     already fails part-way, soon: the 64 MiB steps mapped before the failure stay ready, and
 *     NOWAIT hands out every one of their objects.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A line of /proc/self/status, in KiB ("VmHWM", "VmSize"). */
static uint64_t status_kib(const char *key)
{
    char line[256], fmt[64];
    unsigned long long kib = 0;
    snprintf(fmt, sizeof(fmt), "%s: %%llu kB", key);
    FILE *f = fopen("/proc/self/status", "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, fmt, &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

static uint64_t capacity_of(struct swf_cache *c)
{
    struct swf_cache_stats s;
    swf_cache_stats(c, &s);
    return s.capacity;
}

/* grow(n) fails at once: ENOMEM within a second, nothing mapped, the peak RSS still small. */
static void fails_at_once(size_t size, size_t limit, size_t n, const char *what)
{
    struct swf_cache_config cfg = {.object_size = size, .limit = limit, .name = "bounds"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    double t0 = now();
    int err = swf_cache_grow(c, n);
    double took = now() - t0;
    uint64_t hwm = status_kib("VmHWM");
    ok(err == ENOMEM && took < 1.0 && capacity_of(c) == 0 && hwm < (256 << 10),
       "%zu B objects, %s: ENOMEM in %.3f s, nothing mapped, peak RSS %llu MiB (%s)", size, what,
       took, (unsigned long long)(hwm >> 10), swf_error_reason());
    ok(swf_cache_grow(c, 1000) == 0 && capacity_of(c) >= 1000, "the cache grows afterwards");
    swf_cache_destroy(c);
}

/* Address space for 100 MiB more than the process has: a grow of 512 MiB of 4 KiB objects
 * passes the up-front check (a PROT_NONE reservation of 1 GiB makes the limit larger than 512
 * MiB) and fails at its second 64 MiB step. */
static void fails_part_way(void)
{
    void *reserve = mmap(NULL, (size_t)1 << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    tap_require(reserve != MAP_FAILED, "a 1 GiB reservation");
    struct swf_cache_config cfg = {.object_size = 4096, .name = "part-way"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "create");
    struct rlimit old, as;
    getrlimit(RLIMIT_AS, &old);
    as = old;
    as.rlim_cur = ((status_kib("VmSize") << 10) + ((uint64_t)100 << 20));
    tap_require(setrlimit(RLIMIT_AS, &as) == 0, "RLIMIT_AS");
    double t0 = now();
    int err = swf_cache_grow(c, (size_t)512 << 8);
    double took = now() - t0;
    setrlimit(RLIMIT_AS, &old);
    uint64_t cap = capacity_of(c);
    ok(err == ENOMEM && took < 10.0 && cap >= (16u << 10) && cap < (32u << 10),
       "512 MiB with 100 MiB of address space left: ENOMEM after %.3f s with %llu objects "
       "mapped (%s)",
       took, (unsigned long long)cap, swf_error_reason());
    void **o = calloc(cap + 1, sizeof(void *));
    uint64_t got = 0;
    while (got <= cap && (o[got] = swf_cache_alloc(c, SWF_NOWAIT)) != NULL)
        got++;
    ok(got == cap, "NOWAIT hands out all %llu of them", (unsigned long long)got);
    for (uint64_t i = 0; i < got; i++)
        swf_cache_free(c, o[i]);
    free(o);
    ok(swf_cache_destroy(c) == 0, "destroy");
    munmap(reserve, (size_t)1 << 30);
}

int main(void)
{
    if (TAP_SANITIZED || tap_under_valgrind()) {
        skip("RLIMIT_AS and peak RSS under a sanitizer or valgrind");
        return tap_done();
    }
    if (tap_under_qemu()) {
        skip("qemu-user does not apply RLIMIT_AS to the guest, and its own memory is in the peak "
             "RSS; a native build runs this test");
        return tap_done();
    }
    struct rlimit as;
    getrlimit(RLIMIT_AS, &as);
    if (as.rlim_max != RLIM_INFINITY && as.rlim_max < ((rlim_t)8 << 30)) {
        skip("RLIMIT_AS is below 8 GiB here");
        return tap_done();
    }
    as.rlim_cur = (rlim_t)8 << 30;
    tap_require(setrlimit(RLIMIT_AS, &as) == 0, "an 8 GiB RLIMIT_AS");
    size_t sizes[] = {64, 4096};
    for (int i = 0; i < 2; i++) {
        fails_at_once(sizes[i], 0, SIZE_MAX, "grow(SIZE_MAX)");
        fails_at_once(sizes[i], 0, ((size_t)9 << 30) / sizes[i], "9 GiB of objects");
        fails_at_once(sizes[i], 5000, 5001, "one object past the cache's limit");
    }
    fails_part_way();
    return tap_done();
}
