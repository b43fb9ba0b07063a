/*
 * test/unit/sweep_fallback_visible.c - RESUME on a list that cannot pin runs as RESTART, returns 0
 * and says so: stats.fell_back always, and, in a library built with debug checks
 * (swf_debug_checks() == 1), one line on stderr naming the function called (swf_sweep, or the
 * sweep generated with SWF_SWEEP_DEFINE, by its own name) and saying the list cannot pin so RESUME
 * runs as RESTART. Nothing is printed when RESUME can resume (a list that pins, a guard that
 * tolerates blocking) or when the caller asked for RESTART.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/members.h"
#include "../common/tap.h"

#define LINE       "sweepfill: swf_sweep: the list cannot pin"
#define TYPED_LINE "sweepfill: typed_plain: the list cannot pin"

SWF_SWEEP_DEFINE(typed_plain, ml, payload_init)

struct outcome {
    int err;
    struct swf_sweep_stats st;
    int lines; /* lines on stderr containing LINE */
};

static struct outcome sweep_capturing_stderr(bool pinned, enum swf_algo algo,
                                             unsigned int guard_flags, bool typed)
{
    struct population pop;
    population_init(&pop, 100, 0);
    struct swf_cache_config ccfg = {.object_size = sizeof(struct payload), .name = "fallback"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&ccfg, &c) == 0, "cache");
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = pinned ? mla_list(&pop.list) : ml_list(&pop.list);
    cfg.cache = c;
    cfg.init = payload_init;
    cfg.algo = algo;
    swf_guard_none(&cfg.guard);
    cfg.guard.flags = guard_flags;

    FILE *capture = tmpfile();
    tap_require(capture != NULL, "tmpfile");
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(capture), 2);
    struct outcome o = {0, {0}, 0};
    o.err = typed ? typed_plain(&cfg, &o.st) : swf_sweep(&cfg, &o.st);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(capture);
    char line[512];
    while (fgets(line, sizeof(line), capture) != NULL)
        if (strstr(line, typed ? TYPED_LINE : LINE) != NULL &&
            strstr(line, "SWF_RESUME runs as SWF_RESTART") != NULL)
            o.lines++;
    fclose(capture);
    population_release(&pop, c, NULL);
    swf_cache_destroy(c);
    population_fini(&pop);
    return o;
}

int main(void)
{
    int want = swf_debug_checks() ? 1 : 0;
    const char *build = want ? "debug checks: one line" : "no debug checks: no line";

    struct outcome o = sweep_capturing_stderr(false, SWF_RESUME, 0, false);
    ok(o.err == 0 && o.st.fell_back == 1 && o.lines == want,
       "swf_sweep, RESUME on CK_LIST (no pins): returns 0, fell_back, %s (%d)", build, o.lines);
    o = sweep_capturing_stderr(false, SWF_RESUME, 0, true);
    ok(o.err == 0 && o.st.fell_back == 1 && o.lines == want,
       "SWF_SWEEP_DEFINE, RESUME on CK_LIST (no pins): returns 0, fell_back, %s (%d)", build,
       o.lines);
    o = sweep_capturing_stderr(true, SWF_RESUME, 0, false);
    ok(o.err == 0 && o.st.fell_back == 0 && o.lines == 0,
       "RESUME on CK_LIST_AUTO (the library's pin): no fallback, nothing printed");
    o = sweep_capturing_stderr(false, SWF_RESUME, SWF_GUARD_BLOCKING_OK, false);
    ok(o.err == 0 && o.st.fell_back == 0 && o.lines == 0,
       "RESUME on CK_LIST with a blocking-ok guard (refills in place): nothing printed");
    o = sweep_capturing_stderr(false, SWF_RESTART, 0, false);
    ok(o.err == 0 && o.st.fell_back == 0 && o.lines == 0,
       "RESTART asked for on CK_LIST: nothing printed");
    return tap_done();
}
