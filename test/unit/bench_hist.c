/*
 * test/unit/bench_hist.c - the percentile arithmetic of bench/common/hist.h, the histogram of
 * bench_live: bucket edges (exact below 2 * HIST_SUB, then HIST_SUB sub-buckets per power of two,
 * contiguous and at most 1/HIST_SUB of their values wide), percentiles of known sets (never below
 * the true value, above it by less than a bucket), the rank rule at p50 / p99 / p99.9 / p100, the
 * clamp at the maximum, the last bucket, and merging.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../bench/common/hist.h"
#include "../common/tap.h"

static struct hist h, h2;

/* Every value maps to a bucket whose edges hold it, and buckets follow each other. */
static void check_edges(void)
{
    bool inside = true, contiguous = true, narrow = true;
    for (unsigned i = 0; i + 1 < HIST_BUCKETS; i++) {
        contiguous &= hist_highest(i) + 1 == hist_lowest(i + 1);
        narrow &= (hist_highest(i) - hist_lowest(i) + 1) * HIST_SUB <= hist_lowest(i) ||
                  hist_highest(i) == hist_lowest(i);
    }
    for (uint64_t v = 0; v < (1u << 20); v++) {
        unsigned i = hist_index(v);
        inside &= hist_lowest(i) <= v && v <= hist_highest(i);
    }
    for (unsigned e = 20; e < HIST_TOP; e++)
        for (uint64_t v = (1ull << e) - 3; v < (1ull << e) + 3; v++) {
            unsigned i = hist_index(v);
            inside &= hist_lowest(i) <= v && v <= hist_highest(i);
        }
    ok(inside, "every value lies between its bucket's lowest and highest");
    ok(contiguous, "bucket i + 1 starts right after bucket i ends");
    ok(narrow, "a bucket is exact, or at most 1/%u of its lowest value wide", HIST_SUB);
    ok(hist_index(63) == 63 && hist_index(64) == 64 && hist_lowest(64) == 64 &&
           hist_highest(64) == 65 && hist_index(127) == 95 && hist_index(128) == 96,
       "the first inexact buckets: 64-65, and 128 starts bucket 96");
    ok(hist_index(UINT64_MAX) == HIST_BUCKETS - 1 &&
           hist_index(1ull << HIST_TOP) == HIST_BUCKETS - 1,
       "values at or above 2^%d go into the last bucket", HIST_TOP);
}

static void check_percentiles(void)
{
    hist_clear(&h);
    ok(hist_percentile(&h, 50) == 0, "an empty histogram's percentiles are 0");
    for (uint64_t v = 1; v <= 1000; v++)
        hist_record(&h, v);
    /* the true values: rank ceil(p * 1000 / 100) */
    const double ps[] = {50, 99, 99.9, 100};
    const uint64_t truth[] = {500, 990, 999, 1000};
    for (int k = 0; k < 4; k++) {
        uint64_t got = hist_percentile(&h, ps[k]);
        unsigned i = hist_index(truth[k]);
        ok(got == (hist_highest(i) < 1000 ? hist_highest(i) : 1000),
           "1..1000: p%g is %llu, the top of the bucket of %llu", ps[k], (unsigned long long)got,
           (unsigned long long)truth[k]);
        ok(got >= truth[k] && got - truth[k] < (truth[k] + HIST_SUB - 1) / HIST_SUB + 1,
           "1..1000: p%g never below the truth, above it by less than a bucket", ps[k]);
    }
    ok(hist_percentile(&h, 50) == 503, "1..1000: p50 = 503 (bucket 496-503)");
    ok(hist_percentile(&h, 100) == 1000 && h.max == 1000, "p100 is the exact maximum");

    hist_clear(&h);
    for (int k = 0; k < 999; k++)
        hist_record(&h, 10);
    hist_record(&h, 1000000);
    ok(hist_percentile(&h, 99.9) == 10, "999 x 10 and one 1e6: p99.9 = 10 (rank 999)");
    ok(hist_percentile(&h, 99.91) == 1000000, "... and p99.91 is the outlier, clamped to max");
    hist_record(&h, 10);
    ok(hist_percentile(&h, 99.9) == 10 && hist_percentile(&h, 100) == 1000000,
       "1001 values: p99.9 (rank 1000) still 10");

    hist_clear(&h);
    hist_record(&h, 7);
    ok(hist_percentile(&h, 0.001) == 7 && hist_percentile(&h, 100) == 7,
       "one value: every percentile is it");
}

static void check_merge(void)
{
    hist_clear(&h);
    hist_clear(&h2);
    uint64_t seed = 1;
    for (int k = 0; k < 100000; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t v = (seed >> 33) % 100000;
        hist_record(k & 1 ? &h2 : &h, v);
    }
    struct hist *all = calloc(1, sizeof(*all));
    seed = 1;
    for (int k = 0; k < 100000; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        hist_record(all, (seed >> 33) % 100000);
    }
    hist_merge(&h, &h2);
    ok(h.count == 100000 && h.max == all->max && memcmp(h.b, all->b, sizeof(h.b)) == 0,
       "two halves merged equal the whole");
    ok(hist_percentile(&h, 99) == hist_percentile(all, 99), "and so do their percentiles");
    free(all);
}

int main(void)
{
    check_edges();
    check_percentiles();
    check_merge();
    return tap_done();
}
