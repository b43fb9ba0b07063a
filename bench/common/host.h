/*
 * bench/common/host.h - what the host does to a measurement, where the benchmarks run in a
 * virtual machine: the memory it backs lazily, and the CPU time it steals. Plain C, no
 * dependency: the Google Benchmark families (through lists.h), bench_urcu_peer and bench_live use
 * it.
 */
#ifndef SWF_BENCH_HOST_H
#define SWF_BENCH_HOST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Where the program runs in a virtual machine whose host backs guest memory lazily, a mapping
 * costs what the host pays to back it again: a guest that reports its free memory hands it back
 * (this one: free blocks of 8 MiB and more, a few seconds after they are freed), and on this VM
 * backing it again costs about 3 s per GiB on huge pages, against 0.1-0.3 s for memory the host
 * still backs (bench/RESULTS.md, "Host memory"). Which of the two a measurement meets depends on
 * what ran in the seconds before it, so a measurement that maps memory states which it meets:
 *
 *   BENCH_HOST_WARM   bench_host_prepare(bytes, pages) maps `bytes`, faults them in with the page
 *                     sizes `pages` names - the ones the measured code itself will use, with its
 *                     own advice: BENCH_PAGES_HUGE (2 MiB-aligned, MADV_HUGEPAGE,
 *                     MADV_POPULATE_WRITE), BENCH_PAGES_BASE (MADV_NOHUGEPAGE, a write per 4 KiB
 *                     page), or both - and unmaps them, untimed: each contender meets memory the
 *                     host backs, prepared the way it will use it, and no other.
 *   BENCH_HOST_COLD   the measurement meets memory the host has taken back: untimed, the bytes
 *                     are mapped, faulted in and unmapped, then the program sleeps
 *                     bench_host_cold_sleep_s (default BENCH_HOST_COLD_SLEEP_S, past the
 *                     guest's page-reporting delay), so that they are reported free and handed
 *                     back. One sleep is shared by the measurements that follow it: before each,
 *                     the memory the earlier ones faulted in since the sleep (freed, but still
 *                     backed, and first in the guest's free lists) is taken by a ballast held
 *                     until the next sleep, so the next measurement takes memory that was
 *                     reported; when the ballast would pass bench_host_ballast_max, it is freed
 *                     and the program sleeps again.
 *   BENCH_HOST_AS_FOUND  nothing: the measurement meets what the seconds before it left.
 */
enum bench_host_state { BENCH_HOST_AS_FOUND, BENCH_HOST_WARM, BENCH_HOST_COLD };
enum { BENCH_PAGES_BASE = 1, BENCH_PAGES_HUGE = 2 };
#define BENCH_HOST_COLD_SLEEP_S 6.0

extern enum bench_host_state bench_host_state;
extern double bench_host_cold_sleep_s;
extern size_t bench_host_ballast_max; /* bytes; default 4 GiB */

/* The state's name as flags and JSON contexts spell it: "warm", "cold", "as-found". */
const char *bench_host_state_name(enum bench_host_state s);

/* Parse --host-memory=warm|cold|as-found and --cold-sleep=SECONDS out of argv (bench_take_flag's
 * rules: each taken out). prog names the program in messages. 0, or -1 after a message. */
int bench_host_take_flags(int *argc, char **argv, const char *prog);

/* Prepare the host for a measurement that maps `bytes` with the page sizes `pages`, by the
 * state (above). Untimed: call it before the clock starts. */
void bench_host_prepare(size_t bytes, unsigned pages);

/* bench_host_prepare for what a cache maps to hold n objects of size bytes (huge pages, the
 * cache's default), or what a peer allocates for them (pages: the peer's): the objects, a
 * sixteenth for chunk rounding and magazines, and 12 MiB for the magazines' own chunks and AUTO's
 * probe (4 MiB, once per process). */
void bench_host_prepare_objects(size_t n, size_t size, unsigned pages);

/* Time the host has taken from this guest's virtual CPUs so far (the steal column of /proc/stat,
 * every CPU added up), seconds; -1 where it cannot be read. Its unit is the clock tick (10 ms
 * where USER_HZ is 100), so it tells a stolen millisecond only over a long stretch. */
double bench_steal_s(void);

/* What decides a memory measurement, read around it: /proc/vmstat's thp_fault_alloc,
 * thp_fault_fallback, compact_stall and pgfault, and the steal time. bench_vm_read fills a
 * snapshot; bench_vm_delta subtracts two (after - before). */
struct bench_vm {
    double thp_fault_alloc, thp_fault_fallback, compact_stall, pgfault, steal_s;
};
void bench_vm_read(struct bench_vm *v);
void bench_vm_delta(struct bench_vm *d, const struct bench_vm *after,
                    const struct bench_vm *before);

#endif /* SWF_BENCH_HOST_H */
