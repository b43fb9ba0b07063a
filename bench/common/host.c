/*
 * bench/common/host.c - host.h: preparing the host's memory (warm, cold), reading its steal time
 * and the kernel's memory events.
 */
#include "host.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

enum bench_host_state bench_host_state = BENCH_HOST_AS_FOUND;
double bench_host_cold_sleep_s = BENCH_HOST_COLD_SLEEP_S;
size_t bench_host_ballast_max = (size_t)4 << 30;

static const size_t HUGE_2M = (size_t)2 << 20;

const char *bench_host_state_name(enum bench_host_state s)
{
    return s == BENCH_HOST_WARM ? "warm" : s == BENCH_HOST_COLD ? "cold" : "as-found";
}

static const char *take(int *argc, char **argv, const char *name)
{
    const char *value = NULL;
    size_t len = strlen(name);
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) == 0 && strncmp(a + 2, name, len) == 0 && a[2 + len] == '=') {
            value = a + 3 + len;
            continue;
        }
        argv[out++] = argv[i];
    }
    argv[out] = NULL;
    *argc = out;
    return value;
}

int bench_host_take_flags(int *argc, char **argv, const char *prog)
{
    const char *v = take(argc, argv, "host-memory");
    if (v != NULL) {
        if (strcmp(v, "warm") == 0)
            bench_host_state = BENCH_HOST_WARM;
        else if (strcmp(v, "cold") == 0)
            bench_host_state = BENCH_HOST_COLD;
        else if (strcmp(v, "as-found") == 0)
            bench_host_state = BENCH_HOST_AS_FOUND;
        else {
            fprintf(stderr, "%s: --host-memory=%s: expected warm, cold or as-found\n", prog, v);
            return -1;
        }
    }
    if ((v = take(argc, argv, "cold-sleep")) != NULL) {
        char *end;
        double s = strtod(v, &end);
        if (end == v || *end != '\0' || !(s >= 0)) {
            fprintf(stderr, "%s: --cold-sleep=%s: expected seconds\n", prog, v);
            return -1;
        }
        bench_host_cold_sleep_s = s;
    }
    return 0;
}

/* Map `bytes` (rounded up to 2 MiB) and fault them in with the page size `pages` names (one
 * of the two). Returns the mapping (*len: its length), or NULL. */
static void *fault_in(size_t bytes, unsigned pages, size_t *len)
{
    bytes = (bytes + HUGE_2M - 1) & ~(HUGE_2M - 1);
    *len = bytes + HUGE_2M;
    char *raw = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)raw + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
    if (pages & BENCH_PAGES_HUGE) {
        (void)madvise(p, bytes, MADV_HUGEPAGE);
        if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0)
            return raw;
    } else {
        (void)madvise(p, bytes, MADV_NOHUGEPAGE);
    }
    for (size_t off = 0; off < bytes; off += 4096)
        ((volatile char *)p)[off] = 1;
    return raw;
}

static void fault_in_and_unmap(size_t bytes, unsigned pages)
{
    size_t len;
    void *p = fault_in(bytes, pages, &len);
    if (p != NULL)
        munmap(p, len);
}

/* ---- cold: one sleep, shared through a ballast ---- */

enum { MAX_BALLAST = 256 };
static struct {
    void *p;
    size_t len;
} ballast[MAX_BALLAST];
static int nballast;
static size_t ballast_bytes, dirty_bytes; /* dirty: faulted in since the sleep, not in ballast */
static int slept;                         /* a sleep happened in this process */

static void drop_ballast(void)
{
    for (int i = 0; i < nballast; i++)
        munmap(ballast[i].p, ballast[i].len);
    nballast = 0;
    ballast_bytes = 0;
}

static void cold(size_t bytes)
{
    bytes = (bytes + HUGE_2M - 1) & ~(HUGE_2M - 1);
    if (!slept || nballast == MAX_BALLAST ||
        ballast_bytes + dirty_bytes + bytes > bench_host_ballast_max) {
        drop_ballast();
        /* The bytes this measurement will take, freed now so that the host is told of them. */
        fault_in_and_unmap(bytes, BENCH_PAGES_HUGE);
        struct timespec ts = {
            (time_t)bench_host_cold_sleep_s,
            (long)((bench_host_cold_sleep_s - (double)(time_t)bench_host_cold_sleep_s) * 1e9)};
        while (nanosleep(&ts, &ts) != 0)
            ;
        slept = 1;
        dirty_bytes = 0;
    } else if (dirty_bytes > 0) {
        /* The earlier measurements' memory, freed but still backed and first in the free lists:
         * the ballast takes it, so that this measurement takes memory that was reported. */
        size_t len;
        void *p = fault_in(dirty_bytes, BENCH_PAGES_HUGE, &len);
        if (p != NULL) {
            ballast[nballast].p = p;
            ballast[nballast++].len = len;
            ballast_bytes += len;
        }
        dirty_bytes = 0;
    }
    dirty_bytes += bytes;
}

void bench_host_prepare(size_t bytes, unsigned pages)
{
    if (bytes == 0)
        return;
    if (bench_host_state == BENCH_HOST_WARM) {
        /* Each page size the contender uses, at once, so that neither warms the other's. */
        size_t lh = 0, lb = 0;
        void *h = pages & BENCH_PAGES_HUGE ? fault_in(bytes, BENCH_PAGES_HUGE, &lh) : NULL;
        void *b = pages & BENCH_PAGES_BASE ? fault_in(bytes, BENCH_PAGES_BASE, &lb) : NULL;
        if (h != NULL)
            munmap(h, lh);
        if (b != NULL)
            munmap(b, lb);
    } else if (bench_host_state == BENCH_HOST_COLD) {
        cold(pages & BENCH_PAGES_BASE && pages & BENCH_PAGES_HUGE ? 2 * bytes : bytes);
    }
}

void bench_host_prepare_objects(size_t n, size_t size, unsigned pages)
{
    size_t objs = n * size;
    bench_host_prepare(objs + objs / 16 + ((size_t)12 << 20), pages);
}

double bench_steal_s(void)
{
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8];
    int got = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                         &v[3], &v[4], &v[5], &v[6], &v[7])
                : 0;
    if (f != NULL)
        fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    return got == 8 && hz > 0 ? (double)v[7] / (double)hz : -1;
}

void bench_vm_read(struct bench_vm *v)
{
    memset(v, 0, sizeof(*v));
    FILE *f = fopen("/proc/vmstat", "r");
    char key[64];
    unsigned long long val;
    while (f != NULL && fscanf(f, "%63s %llu", key, &val) == 2) {
        if (strcmp(key, "thp_fault_alloc") == 0)
            v->thp_fault_alloc = (double)val;
        else if (strcmp(key, "thp_fault_fallback") == 0)
            v->thp_fault_fallback = (double)val;
        else if (strcmp(key, "compact_stall") == 0)
            v->compact_stall = (double)val;
        else if (strcmp(key, "pgfault") == 0)
            v->pgfault = (double)val;
    }
    if (f != NULL)
        fclose(f);
    v->steal_s = bench_steal_s();
}

void bench_vm_delta(struct bench_vm *d, const struct bench_vm *after, const struct bench_vm *before)
{
    d->thp_fault_alloc = after->thp_fault_alloc - before->thp_fault_alloc;
    d->thp_fault_fallback = after->thp_fault_fallback - before->thp_fault_fallback;
    d->compact_stall = after->compact_stall - before->compact_stall;
    d->pgfault = after->pgfault - before->pgfault;
    d->steal_s =
        after->steal_s >= 0 && before->steal_s >= 0 ? after->steal_s - before->steal_s : -1;
}
