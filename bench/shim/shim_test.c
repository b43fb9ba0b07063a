/*
 * bench/shim/shim_test.c - the test of the C shim over Google Benchmark (swfb.h).
 *
 * Registers small benchmarks that exercise every part of the shim (arguments, threads, real and
 * manual time, iteration counts, the batch loop, each kind of counter, labels, errors, user data,
 * load-time registration), runs them through swfb_main with a short --benchmark_min_time and JSON
 * output to a temporary file, reads that file back and checks names, arguments, counters and
 * error reports. Nothing about timings is asserted: only values the shim and Google Benchmark
 * derive exactly (a rate counter times the time per iteration is 1; manual time is what was set).
 * Speaks TAP.
 */
#include "swfb.h"

#include "../../test/common/tap.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a small JSON reader: enough for Google Benchmark's output ------------------------------ */

enum json_type { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct json {
    enum json_type type;
    double num;
    bool b;
    char *str;         /* J_STR */
    size_t n;          /* J_ARR, J_OBJ: members */
    char **keys;       /* J_OBJ */
    struct json *item; /* J_ARR, J_OBJ */
};

struct json_in {
    const char *p;
    const char *end;
    bool bad;
};

static void json_ws(struct json_in *in)
{
    while (in->p < in->end && isspace((unsigned char)*in->p))
        in->p++;
}

static bool json_eat(struct json_in *in, char c)
{
    json_ws(in);
    if (in->p < in->end && *in->p == c) {
        in->p++;
        return true;
    }
    return false;
}

static char *json_string(struct json_in *in)
{
    if (!json_eat(in, '"')) {
        in->bad = true;
        return NULL;
    }
    char *out = malloc((size_t)(in->end - in->p) + 1);
    size_t n = 0;
    while (in->p < in->end && *in->p != '"') {
        char c = *in->p++;
        if (c == '\\' && in->p < in->end) {
            c = *in->p++;
            switch (c) {
            case 'n':
                c = '\n';
                break;
            case 't':
                c = '\t';
                break;
            case 'r':
                c = '\r';
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'u': /* only ASCII matters here; anything else becomes '?' */
                if (in->end - in->p >= 4) {
                    char hex[5] = {in->p[0], in->p[1], in->p[2], in->p[3], 0};
                    long v = strtol(hex, NULL, 16);
                    c = v > 0 && v < 128 ? (char)v : '?';
                    in->p += 4;
                }
                break;
            default: /* '"', '\\', '/' stand for themselves */
                break;
            }
        }
        out[n++] = c;
    }
    out[n] = 0;
    if (!json_eat(in, '"'))
        in->bad = true;
    return out;
}

static void json_value(struct json_in *in, struct json *v)
{
    memset(v, 0, sizeof(*v));
    json_ws(in);
    if (in->p >= in->end) {
        in->bad = true;
        return;
    }
    char c = *in->p;
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        in->p++;
        v->type = obj ? J_OBJ : J_ARR;
        size_t cap = 0;
        if (json_eat(in, obj ? '}' : ']'))
            return;
        do {
            if (v->n == cap) {
                cap = cap ? 2 * cap : 8;
                v->item = realloc(v->item, cap * sizeof(*v->item));
                if (obj)
                    v->keys = realloc(v->keys, cap * sizeof(*v->keys));
            }
            if (obj) {
                v->keys[v->n] = json_string(in);
                if (!json_eat(in, ':'))
                    in->bad = true;
            }
            json_value(in, &v->item[v->n++]);
        } while (!in->bad && json_eat(in, ','));
        if (!json_eat(in, obj ? '}' : ']'))
            in->bad = true;
    } else if (c == '"') {
        v->type = J_STR;
        v->str = json_string(in);
    } else if (strncmp(in->p, "true", 4) == 0 || strncmp(in->p, "false", 5) == 0) {
        v->type = J_BOOL;
        v->b = c == 't';
        in->p += v->b ? 4 : 5;
    } else if (strncmp(in->p, "null", 4) == 0) {
        v->type = J_NULL;
        in->p += 4;
    } else {
        char *e;
        v->type = J_NUM;
        v->num = strtod(in->p, &e);
        if (e == in->p)
            in->bad = true;
        in->p = e;
    }
}

static void json_free(struct json *v)
{
    for (size_t i = 0; i < v->n; i++) {
        json_free(&v->item[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->item);
    free(v->keys);
    free(v->str);
}

static const struct json *json_get(const struct json *obj, const char *key)
{
    if (obj == NULL || obj->type != J_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->item[i];
    return NULL;
}

static const char *json_str(const struct json *obj, const char *key)
{
    const struct json *v = json_get(obj, key);
    return v && v->type == J_STR ? v->str : NULL;
}

static double json_num(const struct json *obj, const char *key)
{
    const struct json *v = json_get(obj, key);
    return v && v->type == J_NUM ? v->num : NAN;
}

static bool json_true(const struct json *obj, const char *key)
{
    const struct json *v = json_get(obj, key);
    return v && v->type == J_BOOL && v->b;
}

/* The benchmarks array of the report. */
static const struct json *g_runs;

/* The run of that name (Google Benchmark's full run name), or NULL. */
static const struct json *run_named(const char *name)
{
    for (size_t i = 0; g_runs && i < g_runs->n; i++) {
        const char *s = json_str(&g_runs->item[i], "name");
        if (s && strcmp(s, name) == 0)
            return &g_runs->item[i];
    }
    return NULL;
}

static bool near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

/* ---- the benchmarks ------------------------------------------------------------------------- */

static void bm_args(swfb_state *st)
{
    while (swfb_keep_running(st)) {
    }
    swfb_counter_set(st, "x", (double)swfb_range(st, 0), SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "y", (double)swfb_range(st, 1), SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "past_last", (double)swfb_range(st, 2), SWFB_COUNTER_PLAIN);
}

static void bm_counters(swfb_state *st)
{
    uint64_t loops = 0;
    while (swfb_keep_running(st)) {
        loops++;
        swfb_clobber_memory();
    }
    double it = (double)swfb_iterations(st);
    if (swfb_thread_index(st) == 0) {
        swfb_counter_set(st, "plain42", 42, SWFB_COUNTER_PLAIN);
        swfb_set_label(st, "hello");
    }
    swfb_counter_set(st, "ones", 1, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "avg_one", 1, SWFB_COUNTER_AVG_THREADS);
    swfb_counter_set(st, "per_iter3", 3 * it, SWFB_COUNTER_AVG_ITERATIONS);
    swfb_counter_set(st, "inv_half", 2 * it, SWFB_COUNTER_AVG_ITERATIONS | SWFB_COUNTER_INVERT);
    swfb_counter_set(st, "rate", it, SWFB_COUNTER_RATE);
    swfb_counter_set(st, "loops", (double)loops, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "nthreads", swfb_threads(st), SWFB_COUNTER_AVG_THREADS);
    swfb_set_items_processed(st, swfb_iterations(st));
}

static void bm_error_before(swfb_state *st)
{
    swfb_skip_with_error(st, "deliberate: before the loop");
    while (swfb_keep_running(st)) {
    }
}

static void bm_error_inside(swfb_state *st)
{
    int n = 0;
    while (swfb_keep_running(st)) {
        if (++n == 5)
            swfb_skip_with_error(st, "deliberate: inside the loop");
    }
    swfb_counter_set(st, "loops", n, SWFB_COUNTER_PLAIN);
}

static void bm_returns_early(swfb_state *st)
{
    (void)st; /* never runs its loop: the shim must report an error, not hang or abort */
}

static void bm_batch(swfb_state *st)
{
    int64_t batches = 0;
    while (swfb_keep_running_batch(st, 64))
        batches++;
    swfb_counter_set(st, "batches", (double)batches, SWFB_COUNTER_PLAIN);
}

static void bm_iters(swfb_state *st)
{
    int64_t loops = 0;
    while (swfb_keep_running(st))
        loops++;
    swfb_counter_set(st, "loops", (double)loops, SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "reported", (double)swfb_iterations(st), SWFB_COUNTER_PLAIN);
    swfb_counter_set(st, "planned", (double)swfb_max_iterations(st), SWFB_COUNTER_PLAIN);
}

static void bm_manual(swfb_state *st)
{
    while (swfb_keep_running(st))
        swfb_set_iteration_time(st, 0.001);
}

static void bm_paused(swfb_state *st)
{
    while (swfb_keep_running(st)) {
        swfb_pause_timing(st);
        swfb_clobber_memory();
        swfb_resume_timing(st);
    }
}

static void bm_data(swfb_state *st)
{
    const int *v = swfb_data(st);
    while (swfb_keep_running(st)) {
    }
    swfb_counter_set(st, "data", v ? *v : -1, SWFB_COUNTER_PLAIN);
}

static int g_excluded_ran;

static void bm_excluded(swfb_state *st)
{
    g_excluded_ran = 1;
    while (swfb_keep_running(st)) {
    }
}

static void shim_ctor(swfb_state *st)
{
    while (swfb_keep_running(st)) {
    }
}
SWFB_BENCHMARK(shim_ctor)

static void shim_ctor_setup(swfb_state *st)
{
    while (swfb_keep_running(st)) {
    }
    swfb_counter_set(st, "x", (double)swfb_range(st, 0), SWFB_COUNTER_PLAIN);
}
static void setup_ctor(swfb_bench *b)
{
    swfb_bench_iterations(swfb_bench_arg(b, 9), 3);
}
SWFB_BENCHMARK_SETUP(shim_ctor_setup, setup_ctor)

/* Run swfb_main with these arguments, its console output sent to stderr (stdout is TAP). */
static int run_main(int argc, char **argv)
{
    fflush(stdout);
    int saved = dup(1);
    dup2(2, 1);
    int rc = swfb_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    return rc;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = 0;
    return buf;
}

int main(void)
{
    static int payload = 1234;
    swfb_bench *b;

    b = swfb_register("shim/args2", bm_args);
    swfb_bench_iterations(swfb_bench_args2(swfb_bench_args2(b, 3, 7), 5, 11), 10);
    b = swfb_register("shim/range", bm_args);
    swfb_bench_range_multiplier(b, 4);
    swfb_bench_iterations(swfb_bench_range(b, 2, 32), 10);
    b = swfb_register("shim/named", bm_args);
    swfb_bench_iterations(swfb_bench_arg_names(swfb_bench_arg(b, 100), "n", NULL), 10);
    b = swfb_register("shim/counters", bm_counters);
    swfb_bench_threads(swfb_bench_real_time(b), 2);
    swfb_bench_iterations(swfb_register("shim/error_before", bm_error_before), 100);
    swfb_bench_iterations(swfb_register("shim/error_inside", bm_error_inside), 100);
    swfb_register("shim/returns_early", bm_returns_early);
    swfb_bench_iterations(swfb_register("shim/batch", bm_batch), 100);
    swfb_bench_iterations(swfb_register("shim/iters", bm_iters), 1000);
    swfb_bench_iterations(swfb_bench_manual_time(swfb_register("shim/manual", bm_manual)), 10);
    b = swfb_register("shim/unit_us", bm_iters);
    swfb_bench_unit(swfb_bench_iterations(b, 10), SWFB_US);
    swfb_bench_iterations(swfb_register("shim/paused", bm_paused), 50);
    swfb_bench_iterations(swfb_register_data("shim/data", bm_data, &payload), 10);
    swfb_register("excluded/never", bm_excluded);
    ok(swfb_register(NULL, bm_data) == NULL && swfb_register("x", NULL) == NULL &&
           swfb_bench_arg(NULL, 1) == NULL && swfb_bench_threads(NULL, 2) == NULL,
       "registration refuses NULL names and functions, options pass NULL through");

    const char *tmp = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/swfb_shim_test_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    tap_require(fd >= 0, "mkstemp for the JSON output");
    close(fd);

    char out_flag[4200];
    snprintf(out_flag, sizeof(out_flag), "--benchmark_out=%s", path);
    char *argv[] = {"shim_test", "--benchmark_filter=^shim",    "--benchmark_min_time=0.01",
                    out_flag,    "--benchmark_out_format=json", NULL};
    int rc = run_main(5, argv);
    ok(rc == 2, "swfb_main returns 2 when a benchmark reported an error (got %d)", rc);
    ok(swfb_errors() == 3, "three bodies reported errors (got %lld)", (long long)swfb_errors());

    char *text = slurp(path);
    unlink(path);
    tap_require(text != NULL, "the JSON output file exists");
    struct json root;
    struct json_in in = {text, text + strlen(text), false};
    json_value(&in, &root);
    ok(!in.bad && root.type == J_OBJ, "the output is a JSON object");
    g_runs = json_get(&root, "benchmarks");
    tap_require(g_runs != NULL && g_runs->type == J_ARR, "the output has a benchmarks array");
    ok(json_get(&root, "context") != NULL, "the output has a context");

    const struct json *r;
    r = run_named("shim/args2/3/7/iterations:10");
    ok(r && json_num(r, "x") == 3 && json_num(r, "y") == 7 && json_num(r, "past_last") == 0,
       "two arguments reach the body: shim/args2/3/7 sees x=3, y=7, nothing past them");
    r = run_named("shim/args2/5/11/iterations:10");
    ok(r && json_num(r, "x") == 5 && json_num(r, "y") == 11, "second argument pair: 5/11");
    ok(r && json_num(r, "iterations") == 10, "Iterations(10) runs exactly 10 iterations");
    {
        /* Google Benchmark's range: lo, the powers of the multiplier between lo and hi, hi. */
        static const int want[] = {2, 4, 16, 32};
        bool all = true;
        char name[64];
        for (int i = 0; i < 4; i++) {
            snprintf(name, sizeof(name), "shim/range/%d/iterations:10", want[i]);
            const struct json *x = run_named(name);
            all = all && x != NULL && json_num(x, "x") == want[i];
        }
        ok(all && run_named("shim/range/8/iterations:10") == NULL,
           "a range 2..32 with multiplier 4 runs 2, 4, 16 and 32, each seeing its argument");
    }
    r = run_named("shim/named/n:100/iterations:10");
    ok(r && json_num(r, "x") == 100, "argument names appear in the run name (shim/named/n:100)");

    r = run_named("shim/counters/real_time/threads:2");
    ok(r != NULL, "a two-thread real-time run is named shim/counters/real_time/threads:2");
    if (r) {
        double it = json_num(r, "iterations");
        ok(json_num(r, "threads") == 2, "it ran with 2 threads");
        ok(json_num(r, "plain42") == 42, "a plain counter set to 42 by one thread reads 42");
        ok(json_num(r, "ones") == 2, "a plain counter set to 1 by each thread reads 2 (summed)");
        ok(json_num(r, "avg_one") == 1, "an averaged-over-threads counter of 1 per thread reads 1");
        ok(json_num(r, "nthreads") == 2, "each thread saw swfb_threads() == 2");
        ok(near(json_num(r, "per_iter3"), 3, 1e-12),
           "a per-iteration counter of 3 per iteration reads 3 (%.17g)", json_num(r, "per_iter3"));
        ok(near(json_num(r, "inv_half"), 0.5, 1e-12), "an inverted per-iteration 2 reads 0.5");
        ok(json_num(r, "loops") == it, "the loop turned exactly as often as the iterations (%.0f)",
           it);
        double rate = json_num(r, "rate");
        double ns = json_num(r, "real_time");
        ok(strcmp(json_str(r, "time_unit") ? json_str(r, "time_unit") : "", "ns") == 0 &&
               near(rate * ns * 1e-9, 1.0, 1e-6),
           "a rate counter of one per iteration is per second: rate x ns per iteration = 1e9 "
           "(%.6g x %.6g)",
           rate, ns);
        ok(near(json_num(r, "items_per_second"), rate, 1e-9),
           "items processed are reported as items_per_second, like the rate counter");
        ok(json_str(r, "label") && strcmp(json_str(r, "label"), "hello") == 0,
           "the label is reported");
        ok(!json_true(r, "error_occurred"), "no error for a clean run");
    }

    r = run_named("shim/error_before/iterations:100");
    ok(r && json_true(r, "error_occurred") && json_str(r, "error_message") &&
           strcmp(json_str(r, "error_message"), "deliberate: before the loop") == 0,
       "an error before the loop is reported with its message");
    r = run_named("shim/error_inside/iterations:100");
    ok(r && json_true(r, "error_occurred") && json_str(r, "error_message") &&
           strcmp(json_str(r, "error_message"), "deliberate: inside the loop") == 0,
       "an error inside the loop is reported with its message");
    r = run_named("shim/returns_early");
    ok(r && json_true(r, "error_occurred") && json_str(r, "error_message") &&
           strstr(json_str(r, "error_message"), "without running its loop") != NULL,
       "a body that returns without its loop is reported as an error, not a hang");

    r = run_named("shim/batch/iterations:100");
    ok(r && json_num(r, "iterations") == 128 && json_num(r, "batches") == 2,
       "batches of 64 for 100 planned iterations: 2 batches, 128 iterations counted (%.0f, %.0f)",
       r ? json_num(r, "iterations") : -1, r ? json_num(r, "batches") : -1);
    r = run_named("shim/iters/iterations:1000");
    ok(r && json_num(r, "loops") == 1000 && json_num(r, "reported") == 1000 &&
           json_num(r, "planned") == 1000 && json_num(r, "iterations") == 1000,
       "swfb_keep_running turns exactly the planned 1000 times and swfb_iterations says so");
    r = run_named("shim/manual/iterations:10/manual_time");
    ok(r && near(json_num(r, "real_time"), 1e6, 1e-9),
       "manual time: 1 ms set per iteration reads 1e6 ns per iteration");
    r = run_named("shim/unit_us/iterations:10");
    ok(r && json_str(r, "time_unit") && strcmp(json_str(r, "time_unit"), "us") == 0,
       "the time unit is reported as set (us)");
    r = run_named("shim/paused/iterations:50");
    ok(r && !json_true(r, "error_occurred") && json_num(r, "iterations") == 50,
       "pause and resume inside the loop run cleanly");
    r = run_named("shim/data/iterations:10");
    ok(r && json_num(r, "data") == 1234, "swfb_data hands the body the registered pointer");
    ok(run_named("shim_ctor") != NULL, "SWFB_BENCHMARK registers at load time (shim_ctor)");
    r = run_named("shim_ctor_setup/9/iterations:3");
    ok(r && json_num(r, "x") == 9, "SWFB_BENCHMARK_SETUP applies its setup (shim_ctor_setup/9)");
    ok(run_named("excluded/never") == NULL && !g_excluded_ran,
       "--benchmark_filter passes through: a benchmark it excludes neither runs nor appears");

    json_free(&root);
    free(text);

    char *bad_argv[] = {"shim_test", "--no_such_flag", NULL};
    ok(run_main(2, bad_argv) == 1, "an argument that is not a Google Benchmark flag is refused");
    return tap_done();
}
