/*
 * bench/shim/swfb.h - a C interface to Google Benchmark (1.7), so that every sweepfill benchmark
 * body is written in C. The implementation, bench/shim/swfb.cc, is the only C++ in the benchmarks.
 *
 * A benchmark is a C function `void fn(swfb_state *st)`. Its body does its setup, then runs the
 * measured operation once per turn of the keep-running loop, then reports counters:
 *
 *     static void bm_pair(swfb_state *st)
 *     {
 *         size_t size = (size_t)swfb_range(st, 0);       // the benchmark's first argument
 *         while (swfb_keep_running(st)) {                // timed: one iteration per turn
 *             void *p = malloc(size);
 *             swfb_do_not_optimize(p);
 *             free(p);
 *         }
 *         swfb_set_items_processed(st, swfb_iterations(st));
 *     }
 *
 * Registering. Either from main, before swfb_main, which allows arguments computed at run time:
 *
 *     int main(int argc, char **argv)
 *     {
 *         swfb_bench *b = swfb_register("pair/malloc", bm_pair);
 *         swfb_bench_arg(b, 64);
 *         swfb_bench_arg(b, 4096);              // two runs: pair/malloc/64 and pair/malloc/4096
 *         swfb_bench_threads(b, 1);
 *         swfb_bench_threads(b, 2);             // ... each with 1 and with 2 threads
 *         return swfb_main(argc, argv);
 *     }
 *
 * or at load time, next to the function, with SWFB_BENCHMARK(fn) (name "fn", no arguments) or
 * SWFB_BENCHMARK_SETUP(fn, setup) (setup(b) adds the arguments). Both run as ELF constructors, so
 * they must not depend on anything main sets up.
 *
 * The run-time names are Google Benchmark's: "name/arg0/arg1/iterations:N/real_time/threads:T",
 * with the parts that apply. swfb_main accepts Google Benchmark's own flags: --benchmark_filter=RE,
 * --benchmark_min_time=SECONDS (a plain number in 1.7), --benchmark_repetitions=N,
 * --benchmark_out=FILE --benchmark_out_format=json|csv|console, --benchmark_format=...,
 * --benchmark_list_tests, and the rest of `--help`.
 *
 * Threads. A benchmark registered with swfb_bench_threads(b, n) runs its body on n threads at once,
 * each with its own swfb_state and its own loop; thread 0 is the thread that called swfb_main.
 * Counters of the same name are summed over the threads before their flags apply. The functions
 * taking an swfb_state are called by the thread that owns it; registration, swfb_add_context and
 * the running functions (swfb_init, swfb_run, swfb_main) by one thread, outside any run.
 *
 * Time. Google Benchmark reports both wall-clock ("real") and CPU time per iteration, and uses
 * CPU time for rates and for deciding how long to run unless swfb_bench_real_time (or
 * swfb_bench_manual_time) says otherwise. With T threads, the real time per iteration is the
 * (average per-thread) elapsed time divided by the iterations of all threads together, a
 * throughput figure, so one thread's own time per iteration is T times it; the CPU time per
 * iteration is the threads' CPU time added up, divided by the same total.
 *
 * Figures only mean something from a release build of sweepfill (meson --buildtype=release).
 */
#ifndef SWFB_H
#define SWFB_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One benchmark thread's view of one run. The fields are the shim's own; a body only passes the
 * pointer to the functions below. It lives on the stack of the shim's wrapper for the length of
 * one call of the body.
 */
typedef struct swfb_state {
    uint64_t left_;  /* iterations still to hand out by swfb_keep_running */
    uint64_t total_; /* iterations granted to this thread for the run */
    void *gb_;       /* the benchmark::State */
    void *data_;     /* the pointer given to swfb_register_data */
    void *bench_;    /* the shim's record of the registered benchmark */
    int phase_;      /* 0 not started; 1 stepping, 2 batches; 3 done stepping, 4 done batches */
} swfb_state;

/* A registered benchmark, for adding arguments and options; owned by Google Benchmark. */
typedef struct swfb_bench swfb_bench;

/* A benchmark body. */
typedef void swfb_fn(swfb_state *st);

/* ---- the keep-running loop ---------------------------------------------------------------- */

/* The out-of-line part of swfb_keep_running: starts and ends the timed region. Not for bodies. */
bool swfb_keep_running_slow_(swfb_state *st);

/*
 * Returns true while the body should run one more iteration; false once the run is over (and
 * at any later call). The body must loop until it returns false, or report an error with
 * swfb_skip_with_error and return; a body that returns early otherwise is reported as an error.
 * The first call starts the timer (waiting, with several threads, until all threads are there);
 * the last one stops it. In between, a call costs a decrement and a branch: the shim takes all of
 * the run's iterations from Google Benchmark at once and counts them down here.
 * A body uses either this or swfb_keep_running_batch in one run, not both.
 */
static inline bool swfb_keep_running(swfb_state *st)
{
    if (__builtin_expect(st->left_ != 0, 1)) {
        st->left_--;
        return true;
    }
    return swfb_keep_running_slow_(st);
}

/*
 * Batch form: returns true when the body should run n more iterations (n > 0), each of which is
 * counted as one iteration, so reported times are per item of the batch. The last batch of a run
 * may take Google Benchmark past its planned count by up to n - 1 iterations; those are counted
 * as well. One out-of-line call per batch. Same rules as swfb_keep_running otherwise.
 */
bool swfb_keep_running_batch(swfb_state *st, int64_t n);

/* Iterations this thread has been handed so far in this run (all of them once the loop ended). */
int64_t swfb_iterations(const swfb_state *st);

/* The number of iterations Google Benchmark planned for this thread in this run. */
int64_t swfb_max_iterations(const swfb_state *st);

/* ---- what the body can ask ---------------------------------------------------------------- */

/* Argument i (0 or 1) of this run, as given by swfb_bench_arg/args2/range/...; 0 if absent. */
int64_t swfb_range(const swfb_state *st, int i);

/* This thread's index, 0 .. swfb_threads(st) - 1. */
int swfb_thread_index(const swfb_state *st);

/* How many threads run this benchmark's body at once in this run. */
int swfb_threads(const swfb_state *st);

/* The pointer given to swfb_register_data (NULL for swfb_register). */
void *swfb_data(const swfb_state *st);

/* ---- timing ------------------------------------------------------------------------------- */

/*
 * Stop and restart the timer around work that must not be measured, inside the loop. Each reads
 * the clocks (wall and thread CPU time), which costs far more than a cheap iteration: keep them
 * out of tight loops. They do nothing outside the loop or after an error; a pause must be
 * followed by a resume before the loop goes on.
 */
void swfb_pause_timing(swfb_state *st);
void swfb_resume_timing(swfb_state *st);

/*
 * For benchmarks registered with swfb_bench_manual_time: report the time this iteration took, in
 * seconds, measured by the body itself. The run's time is the sum of the reported times.
 */
void swfb_set_iteration_time(swfb_state *st, double seconds);

/* ---- results ------------------------------------------------------------------------------ */

/* How Google Benchmark turns a counter's value into the reported figure (flags combine with |). */
enum swfb_counter_flags {
    SWFB_COUNTER_PLAIN = 0,                    /* the value (summed over threads) */
    SWFB_COUNTER_RATE = 1 << 0,                /* divided by the run's seconds: "per second" */
    SWFB_COUNTER_AVG_THREADS = 1 << 1,         /* divided by the number of threads */
    SWFB_COUNTER_ITERATION_INVARIANT = 1 << 2, /* multiplied by the iterations */
    SWFB_COUNTER_AVG_ITERATIONS = 1 << 3,      /* divided by the iterations: "per iteration" */
    SWFB_COUNTER_INVERT = 1 << 4,              /* finally inverted (1/x): "seconds per ..." */
};

/*
 * Set this thread's counter `name` to value, replacing an earlier value of the same name. Google
 * Benchmark adds up the threads' values and then applies flags (enum swfb_counter_flags), in the
 * order rate, threads, iteration invariance, iterations, inversion. The counter appears under its
 * name in the console and JSON output. Call it outside the loop: it builds a C++ string.
 */
void swfb_counter_set(swfb_state *st, const char *name, double value, unsigned flags);

/* Google Benchmark's items_per_second and bytes_per_second: this thread's work, as rates. */
void swfb_set_items_processed(swfb_state *st, int64_t items);
void swfb_set_bytes_processed(swfb_state *st, int64_t bytes);

/* A free-form label shown next to the run (the JSON "label"); the last thread to set it wins. */
void swfb_set_label(swfb_state *st, const char *label);

/*
 * Report that this run cannot be measured: the run is shown with error_occurred and msg instead of
 * figures, and swfb_main returns 2 at the end. Ends this thread's loop: swfb_keep_running returns
 * false at its next call (or at once if the loop has not started). The body may also return right
 * away; the shim finishes the loop for it.
 */
void swfb_skip_with_error(swfb_state *st, const char *msg);

/* ---- registration ------------------------------------------------------------------------- */

/* Time units for reporting (swfb_bench_unit). The default is nanoseconds. */
enum swfb_unit { SWFB_NS, SWFB_US, SWFB_MS, SWFB_S };

/*
 * Register fn under name (copied). Returns the benchmark, for the swfb_bench_* calls, or NULL if
 * name or fn is NULL. Must happen before swfb_main runs the benchmarks; not thread-safe.
 * With no arguments added, the benchmark runs once, without arguments.
 */
swfb_bench *swfb_register(const char *name, swfb_fn *fn);

/* Same, and swfb_data(st) returns data in every run of this benchmark. */
swfb_bench *swfb_register_data(const char *name, swfb_fn *fn, void *data);

/*
 * Options. Each returns b, so that calls may nest; each does nothing and returns NULL if b is
 * NULL. The argument calls add runs: a benchmark takes one or two arguments, the same number in
 * every run.
 */
/* One run with argument x. */
swfb_bench *swfb_bench_arg(swfb_bench *b, int64_t x);
/* One run with arguments (x, y). */
swfb_bench *swfb_bench_args2(swfb_bench *b, int64_t x, int64_t y);
/* Runs with lo, each power of the range multiplier strictly between lo and hi, and hi. */
swfb_bench *swfb_bench_range(swfb_bench *b, int64_t lo, int64_t hi);
/* Runs with each pair of the two ranges' values (the cross product). */
swfb_bench *swfb_bench_ranges2(swfb_bench *b, int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1);
/* Runs with lo, lo + step, ... up to hi. */
swfb_bench *swfb_bench_dense_range(swfb_bench *b, int64_t lo, int64_t hi, int step);
/* The multiplier of the following range calls (default 8). */
swfb_bench *swfb_bench_range_multiplier(swfb_bench *b, int multiplier);
/* Names for the arguments in run names ("n:100/k:4" instead of "100/4"); name1 may be NULL. */
swfb_bench *swfb_bench_arg_names(swfb_bench *b, const char *name0, const char *name1);
/* Run with n threads; call again for more thread counts (each count is a separate run). */
swfb_bench *swfb_bench_threads(swfb_bench *b, int n);
/* Report wall-clock time instead of the CPU time of the threads. */
swfb_bench *swfb_bench_real_time(swfb_bench *b);
/* Report the times the body gives to swfb_set_iteration_time. */
swfb_bench *swfb_bench_manual_time(swfb_bench *b);
/* Run each measurement for at least this long (overrides --benchmark_min_time). */
swfb_bench *swfb_bench_min_time(swfb_bench *b, double seconds);
/* Run exactly n iterations per measurement instead of as many as the minimum time needs. */
swfb_bench *swfb_bench_iterations(swfb_bench *b, int64_t n);
/* Measure n times (overrides --benchmark_repetitions). */
swfb_bench *swfb_bench_repetitions(swfb_bench *b, int n);
/* The unit in which times are reported. */
swfb_bench *swfb_bench_unit(swfb_bench *b, enum swfb_unit unit);

/* At load time: register fn under the name "fn"; SETUP also calls setup(b) on it. */
#define SWFB_BENCHMARK(fn)                                        \
    __attribute__((constructor)) static void swfb_ctor_##fn(void) \
    {                                                             \
        (void)swfb_register(#fn, fn);                             \
    }
#define SWFB_BENCHMARK_SETUP(fn, setup)                           \
    __attribute__((constructor)) static void swfb_ctor_##fn(void) \
    {                                                             \
        setup(swfb_register(#fn, fn));                            \
    }

/* ---- running ------------------------------------------------------------------------------ */

/*
 * Add a key and value to the "context" of the report (JSON "context"; the console header), for
 * facts such as which allocator a binary uses. Before swfb_main or swfb_run.
 */
void swfb_add_context(const char *key, const char *value);

/*
 * Take Google Benchmark's flags out of argv (they are removed, argc is updated), leaving the
 * program's own. Call once, before swfb_run.
 */
void swfb_init(int *argc, char **argv);

/*
 * Run every registered benchmark that the flags select. Returns the number of runs reported;
 * swfb_errors() then says how many runs of a body ended with swfb_skip_with_error.
 */
int64_t swfb_run(void);

/* Bodies (per thread and per run, including Google Benchmark's trial runs) that reported an error.
 */
int64_t swfb_errors(void);

/*
 * The whole of a benchmark program's main: swfb_init, then refuse (return 1, after a message on
 * stderr) any argument that is not a Google Benchmark flag, then swfb_run. Returns 0 when every
 * run went without error, 2 when some body called swfb_skip_with_error, 1 for bad arguments.
 */
int swfb_main(int argc, char **argv);

/* ---- keeping the compiler honest ---------------------------------------------------------- */

/* Make the compiler believe p is used (and what it points to may be read): its computation stays.
 */
static inline void swfb_do_not_optimize(const void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

/* Make the compiler believe all memory may have been read and written here. */
static inline void swfb_clobber_memory(void)
{
    __asm__ volatile("" : : : "memory");
}

#ifdef __cplusplus
}
#endif

#endif /* SWFB_H */
