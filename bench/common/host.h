/*
 * bench/common/host.h - what the host does to a measurement, where the benchmarks run in a
 * virtual machine: the memory it backs lazily, and the CPU time it steals. Plain C, no
 * dependency: the Google Benchmark families (through lists.h) and bench_live use it.
 */
#ifndef SWF_BENCH_HOST_H
#define SWF_BENCH_HOST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Where the program runs in a virtual machine whose host backs guest memory lazily, a mapping
 * costs what the host pays to back it again: a guest that reports its free memory hands it back,
 * and on this VM backing it again costs about 3 s per GiB, against 0.1-0.3 s for memory the host
 * still backs (bench/RESULTS.md, "Host memory"). Which of the two a measurement meets depends on
 * what ran in the seconds before it, so rows of one table could not be compared. With
 * bench_warm_host set (--host-memory=warm, the default of bench_seed and bench_live),
 * bench_host_warm(bytes) maps `bytes` 2 MiB-aligned with MADV_HUGEPAGE, faults them in and
 * unmaps them, untimed, just before a measurement: the memory the measurement then maps is
 * memory the host backs, for every row alike. With --host-memory=as-found it does nothing.
 */
extern bool bench_warm_host;
void bench_host_warm(size_t bytes);

/* bench_host_warm for what a cache maps to hold n objects of size bytes, or what a peer
 * allocates for them: the objects, a sixteenth for chunk rounding and magazines, and 12 MiB for
 * the magazines' own chunks and AUTO's probe (4 MiB, once per process). */
void bench_host_warm_objects(size_t n, size_t size);

/* Time the host has taken from this guest's virtual CPUs so far (the steal column of /proc/stat,
 * every CPU added up), seconds; -1 where it cannot be read. Its unit is the clock tick (10 ms
 * where USER_HZ is 100), so it tells a stolen millisecond only over a long stretch. */
double bench_steal_s(void);

#endif /* SWF_BENCH_HOST_H */
