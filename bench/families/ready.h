/*
 * bench/families/ready.h - the `ready` family (ready.c), run by bench_seed beside the seed
 * and floor families: how long N objects of S bytes take to become ready for their first use by
 * each way of preparing memory, beside the cache's own swf_cache_grow, in the same process as the
 * seed table.
 */
#ifndef SWF_BENCH_READY_H
#define SWF_BENCH_READY_H

#include <stdint.h>
#include <stdio.h>

/*
 * Take ready.c's own flags out of argv (--huge-pages=auto|off|required, --grow-threads=N:
 * passed to the cache row's struct swf_cache_config when the library has those fields). Returns 0,
 * or -1 after a message on stderr for a malformed value or a flag this library cannot honour.
 */
int ready_take_flags(int *argc, char **argv);

/* Register ready/<method>/size:S/n:N for every size and N, and add the context keys. */
void ready_register(const int64_t *sizes, int nsizes, const int64_t *ns, int nn);

/*
 * AnonHugePages (kB) of the mappings of this process that overlap [lo, hi), read from
 * /proc/self/smaps; -1 if it cannot be read. The sum covers whole mappings, so a mapping that the
 * kernel merged with a neighbour counts the neighbour's huge pages too.
 */
int64_t ready_anon_huge_kb(const void *lo, const void *hi);

/*
 * Print the goal lines (ready.c's top comment) of the repetitions run so far to out: one for every
 * size and N that had both a thp_touch and a cache row; nothing when none had.
 */
void ready_report(FILE *out);

#endif /* SWF_BENCH_READY_H */
