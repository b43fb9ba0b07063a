/*
 * test/common/one_cpu.h - keep a test process on the CPU it runs on, and move a thread to another
 * CPU the way the scheduler may.
 *
 * In the per-CPU mode a NOWAIT allocation reaches the magazine of the CPU (or mm_cid) it runs on:
 * objects freed into another one are out of its reach until a thread runs there or a blocking
 * call moves them (cache.h, swf_cache_grow). A test whose model counts exactly which objects a
 * NOWAIT reaches either keeps its process on one CPU (this header: tap.h's SWF_TEST_ONE_CPU=1,
 * test/fuzz/fuzz_api.c always) or allows for that reach. Pinned before the process starts any
 * thread (a constructor), every thread it makes inherits the one CPU; with the mm_cid index its
 * threads take turns on that CPU and use that CPU's id.
 */
#ifndef SWF_TEST_ONE_CPU_H
#define SWF_TEST_ONE_CPU_H

#include <sched.h>

/* Restrict the calling thread (in a constructor: the whole process to come) to the CPU it runs
 * on. Returns that CPU, or -1 when the system refused (the thread may then move). */
static inline int one_cpu_stay(void)
{
    int cpu = sched_getcpu();
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu < 0 ? 0 : cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0 ? (cpu < 0 ? 0 : cpu) : -1;
}

/* Move the calling thread to the next CPU its affinity allows, as the scheduler may at any
 * moment, and give it back the same affinity (it stays where it was moved until the scheduler
 * moves it again). Returns the CPU it runs on afterwards; with one CPU allowed, it stays. */
static inline int one_cpu_migrate(void)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0)
        return sched_getcpu();
    int here = sched_getcpu();
    for (int i = 1; i < CPU_SETSIZE; i++) {
        int cpu = (here + i) % CPU_SETSIZE;
        if (cpu != here && CPU_ISSET(cpu, &allowed)) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            if (sched_setaffinity(0, sizeof(one), &one) == 0)
                (void)sched_setaffinity(0, sizeof(allowed), &allowed);
            break;
        }
    }
    return sched_getcpu();
}

#endif /* SWF_TEST_ONE_CPU_H */
