/*
 * bench/common/cpu_hog.c - CPU hogs (cpu_hog.h): each thread spins on a relaxed load of a stop
 * flag, doing a little arithmetic, until hog_stop. They never block, so the scheduler preempts them
 * (and the measured threads) at the end of their slices: on a machine with as many hogs as cores,
 * every runnable thread gets its turn only when a slice ends.
 */
#include "cpu_hog.h"

#include <pthread.h>
#include <stdint.h>

static pthread_t hogs[HOG_MAX];
static int nhogs;
static int stop;

static void *hog_main(void *arg)
{
    volatile uint64_t x = (uint64_t)(uintptr_t)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    return NULL;
}

int hog_start(int n)
{
    __atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
    for (nhogs = 0; nhogs < n && nhogs < HOG_MAX; nhogs++)
        if (pthread_create(&hogs[nhogs], NULL, hog_main, (void *)(uintptr_t)(nhogs + 1)) != 0)
            break;
    return nhogs;
}

void hog_stop(void)
{
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < nhogs; i++)
        pthread_join(hogs[i], NULL);
    nhogs = 0;
}
