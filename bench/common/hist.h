/*
 * bench/common/hist.h - a log-linear latency histogram (the layout of HdrHistogram, written small):
 * values below 2 * HIST_SUB are counted exactly; above, each power of two [2^e, 2^(e+1)) is
 * split into HIST_SUB equal sub-buckets, so a bucket is at most 1/HIST_SUB of its values wide
 * (about 3% with 32). Values at or above 2^HIST_TOP go into the last bucket (the exact maximum
 * is kept apart). One histogram per thread, no atomics: merge them when the threads are done.
 *
 * A percentile p (0 < p <= 100) is the smallest recorded bucket whose cumulative count reaches
 * ceil(p / 100 * count) (at least 1), reported as the highest value that bucket can hold, and
 * never above the exact maximum: so it is never below the true percentile, and above it by less
 * than one bucket's width. test/unit/bench_hist.c checks this arithmetic.
 */
#ifndef SWF_BENCH_HIST_H
#define SWF_BENCH_HIST_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#define HIST_SUB_BITS 5
#define HIST_SUB      (1u << HIST_SUB_BITS)
#define HIST_TOP      40 /* 2^40 ns: 18 minutes */
#define HIST_BUCKETS  ((HIST_TOP - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
    uint64_t count;
    uint64_t max;
    uint64_t b[HIST_BUCKETS];
};

static inline void hist_clear(struct hist *h)
{
    memset(h, 0, sizeof(*h));
}

static inline unsigned hist_index(uint64_t v)
{
    if (v < HIST_SUB)
        return (unsigned)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* v is in [2^e, 2^(e+1)) */
    if (e >= HIST_TOP)
        return HIST_BUCKETS - 1;
    unsigned shift = e - HIST_SUB_BITS;
    return (shift + 1) * HIST_SUB + (unsigned)(v >> shift) - HIST_SUB;
}

/* The smallest value bucket i holds. */
static inline uint64_t hist_lowest(unsigned i)
{
    if (i < HIST_SUB)
        return i;
    unsigned k = i / HIST_SUB;
    return (uint64_t)(HIST_SUB + i % HIST_SUB) << (k - 1);
}

/* The largest value bucket i holds. */
static inline uint64_t hist_highest(unsigned i)
{
    if (i < HIST_SUB)
        return i;
    return hist_lowest(i) + (1ull << (i / HIST_SUB - 1)) - 1;
}

static inline void hist_record(struct hist *h, uint64_t v)
{
    h->b[hist_index(v)]++;
    h->count++;
    if (v > h->max)
        h->max = v;
}

static inline void hist_merge(struct hist *into, const struct hist *from)
{
    for (unsigned i = 0; i < HIST_BUCKETS; i++)
        into->b[i] += from->b[i];
    into->count += from->count;
    if (from->max > into->max)
        into->max = from->max;
}

/* The p-th percentile (see the top comment); 0 for an empty histogram. */
static inline uint64_t hist_percentile(const struct hist *h, double p)
{
    if (h->count == 0)
        return 0;
    /* less a little: 99.9 / 100 * 1000 is 999.0000000000001 in doubles, not 999 */
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->count - 1e-9);
    if (rank < 1)
        rank = 1;
    if (rank > h->count)
        rank = h->count;
    uint64_t seen = 0;
    for (unsigned i = 0; i < HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t v = hist_highest(i);
            return v < h->max ? v : h->max;
        }
    }
    return h->max;
}

#endif /* SWF_BENCH_HIST_H */
