/*
 * bench/common/host.c - host.h: warming the host's memory, reading its steal time.
 */
#include "host.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

bool bench_warm_host = false;

void bench_host_warm(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (!bench_warm_host || bytes == 0)
        return;
    bytes = (bytes + huge - 1) & ~(huge - 1);
    char *raw =
        mmap(NULL, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return; /* no memory to warm with: the measurement meets what it meets */
    char *p = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    if (madvise(p, bytes, 23 /* MADV_POPULATE_WRITE, Linux 5.14 */) != 0)
        for (size_t off = 0; off < bytes; off += 4096)
            ((volatile char *)p)[off] = 1;
    munmap(raw, bytes + huge);
}

void bench_host_warm_objects(size_t n, size_t size)
{
    size_t objs = n * size;
    bench_host_warm(objs + objs / 16 + ((size_t)12 << 20));
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
