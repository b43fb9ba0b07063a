/*
 * test/unit/cache_huge_choice.c - SWF_HUGE_PAGES_AUTO measures once per process whether the host
 * prepares huge pages about as fast as base pages, and stats.huge_choice tells the answer
 * (cache.h, enum swf_huge_pages): nothing is measured before a chunk needs it, nor for a cache
 * with huge pages off; the first large AUTO grow measures (where the system has transparent huge
 * pages); every cache of the process then reports the same answer. Which way the host goes is
 * its own business: the test holds the answer consistent, not to one value.
 */
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

#include "../common/tap.h"

enum { LARGE = 65536 }; /* 4 MiB of 64-byte objects: AUTO's huge pages apply from 2 MiB */

static bool thp_on(void)
{
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f == NULL)
        return false;
    bool on = fgets(line, sizeof(line), f) != NULL &&
              (strstr(line, "[always]") != NULL || strstr(line, "[madvise]") != NULL);
    fclose(f);
    return on;
}

static struct swf_cache *grown(unsigned int huge_pages, size_t n, struct swf_cache_stats *s)
{
    struct swf_cache_config cfg = {.object_size = 64, .huge_pages = huge_pages, .name = "huge"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "swf_cache_create");
    tap_require(n == 0 || swf_cache_grow(c, n) == 0, "swf_cache_grow");
    tap_require(swf_cache_stats(c, s) == 0, "swf_cache_stats");
    return c;
}

int main(void)
{
    struct swf_cache_stats s;
    struct swf_cache *empty = grown(SWF_HUGE_PAGES_AUTO, 0, &s);
    ok(s.huge_choice == 0, "nothing measured before a chunk needs it (%llu)",
       (unsigned long long)s.huge_choice);
    struct swf_cache *off = grown(SWF_HUGE_PAGES_OFF, LARGE, &s);
    ok(s.huge_choice == 0 && s.huge_bytes == 0,
       "a large grow with huge pages off measures nothing and gets none");
    struct swf_cache *autoc = grown(SWF_HUGE_PAGES_AUTO, LARGE, &s);
    uint64_t choice = s.huge_choice;
    if (thp_on()) {
        ok(choice == 1 || choice == 2, "the first large AUTO grow measured: %s",
           choice == 1   ? "huge pages"
           : choice == 2 ? "base pages"
                         : "nothing");
    } else {
        ok(choice == 0, "no transparent huge pages: nothing to measure");
        ok(s.huge_bytes == 0, "and no huge page");
    }
    struct swf_cache_stats again;
    tap_require(swf_cache_stats(empty, &again) == 0, "swf_cache_stats");
    ok(again.huge_choice == choice, "another cache of the process reports the same answer");
    struct swf_cache *second = grown(SWF_HUGE_PAGES_AUTO, LARGE, &s);
    ok(s.huge_choice == choice, "a second large AUTO grow keeps it (measured once)");
    struct swf_cache *all[] = {empty, off, autoc, second};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        tap_require(swf_cache_destroy(all[i]) == 0, "swf_cache_destroy");
    return tap_done();
}
