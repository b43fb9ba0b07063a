// bench/shim/swfb.cc - the C shim over Google Benchmark 1.7 declared in swfb.h.
//
// Each registered C function becomes a Google Benchmark lambda that builds an swfb_state around
// the benchmark::State, calls the function, and then repairs a body that returned without
// finishing its loop (so that the runner's per-thread barriers stay balanced and the run is
// reported as an error rather than aborting the program).
//
// The fast loop: on the first swfb_keep_running of a run, the shim takes every iteration Google
// Benchmark planned for this thread with one KeepRunningBatch(max_iterations) (which also starts
// the timer) and counts them down inline in swfb_state::left_. When the count is spent, one more
// KeepRunning() finds nothing left and stops the timer. This is what Google Benchmark's own
// range-for loop does; it keeps the cost of a turn of the loop to a decrement and a branch.

#include "swfb.h"

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

namespace
{

// The shim's record of a registered benchmark; owned by the lambda registered with Google
// Benchmark (through a shared_ptr), so it lives exactly as long as the registration.
struct Record {
    benchmark::internal::Benchmark *gb = nullptr;
    swfb_fn *fn = nullptr;
    void *data = nullptr;
    int nargs = 0; // arguments per run, as the argument calls set them
};

std::atomic<int64_t> g_errors{0};

enum Phase { kNotStarted = 0, kStepping = 1, kBatches = 2, kDoneStepping = 3, kDoneBatches = 4 };

benchmark::State &gb_state(const swfb_state *st)
{
    return *static_cast<benchmark::State *>(st->gb_);
}

void note_error(swfb_state *st, const char *msg)
{
    benchmark::State &s = gb_state(st);
    if (!s.error_occurred()) {
        s.SkipWithError(msg);
        g_errors.fetch_add(1, std::memory_order_relaxed);
    }
    st->left_ = 0;
}

void run_body(const std::shared_ptr<Record> &rec, benchmark::State &s)
{
    swfb_state st;
    st.left_ = 0;
    st.total_ = 0;
    st.gb_ = &s;
    st.data_ = rec->data;
    st.bench_ = rec.get();
    st.phase_ = kNotStarted;

    rec->fn(&st);

    switch (st.phase_) {
    case kDoneStepping:
    case kDoneBatches:
        return;
    case kNotStarted:
        note_error(&st, "swfb: benchmark body returned without running its loop");
        break;
    default:
        note_error(&st, "swfb: benchmark body returned before its loop ended");
        break;
    }
    // With an error recorded, this starts (if needed) and finishes the run at once, passing the
    // runner's start and stop barriers as every other thread of the run does.
    while (s.KeepRunning()) {
    }
}

benchmark::TimeUnit gb_unit(enum swfb_unit u)
{
    switch (u) {
    case SWFB_US:
        return benchmark::kMicrosecond;
    case SWFB_MS:
        return benchmark::kMillisecond;
    case SWFB_S:
        return benchmark::kSecond;
    case SWFB_NS:
    default:
        return benchmark::kNanosecond;
    }
}

benchmark::Counter::Flags gb_flags(unsigned f)
{
    int g = benchmark::Counter::kDefaults;
    if (f & SWFB_COUNTER_RATE)
        g |= benchmark::Counter::kIsRate;
    if (f & SWFB_COUNTER_AVG_THREADS)
        g |= benchmark::Counter::kAvgThreads;
    if (f & SWFB_COUNTER_ITERATION_INVARIANT)
        g |= benchmark::Counter::kIsIterationInvariant;
    if (f & SWFB_COUNTER_AVG_ITERATIONS)
        g |= benchmark::Counter::kAvgIterations;
    if (f & SWFB_COUNTER_INVERT)
        g |= benchmark::Counter::kInvert;
    return static_cast<benchmark::Counter::Flags>(g);
}

Record *rec_of(swfb_bench *b)
{
    return reinterpret_cast<Record *>(b);
}

} // namespace

extern "C" {

// ---- the loop ---------------------------------------------------------------------------------

bool swfb_keep_running_slow_(swfb_state *st)
{
    benchmark::State &s = gb_state(st);
    switch (st->phase_) {
    case kNotStarted: {
        st->phase_ = kStepping;
        const benchmark::IterationCount n = s.max_iterations;
        if (s.KeepRunningBatch(n)) { // starts the timer and takes all n iterations
            st->total_ = static_cast<uint64_t>(n);
            st->left_ = static_cast<uint64_t>(n) - 1;
            return true;
        }
        st->phase_ = kDoneStepping; // an error before the loop: the run is already finished
        return false;
    }
    case kStepping:
        st->phase_ = kDoneStepping;
        st->left_ = 0;
        (void)s.KeepRunning(); // nothing left: stops the timer and finishes the run
        return false;
    case kBatches:
        note_error(st, "swfb: swfb_keep_running used after swfb_keep_running_batch in one run");
        (void)s.KeepRunning();
        st->phase_ = kDoneBatches;
        return false;
    default:
        return false;
    }
}

bool swfb_keep_running_batch(swfb_state *st, int64_t n)
{
    benchmark::State &s = gb_state(st);
    if (n < 1)
        n = 1;
    switch (st->phase_) {
    case kNotStarted:
    case kBatches:
        st->phase_ = kBatches;
        if (s.KeepRunningBatch(n))
            return true;
        st->phase_ = kDoneBatches;
        return false;
    case kStepping:
        note_error(st, "swfb: swfb_keep_running_batch used after swfb_keep_running in one run");
        (void)s.KeepRunning();
        st->phase_ = kDoneStepping;
        return false;
    default:
        return false;
    }
}

int64_t swfb_iterations(const swfb_state *st)
{
    switch (st->phase_) {
    case kStepping:
    case kDoneStepping:
        return static_cast<int64_t>(st->total_ - st->left_);
    case kBatches:
    case kDoneBatches:
        return static_cast<int64_t>(gb_state(st).iterations());
    default:
        return 0;
    }
}

int64_t swfb_max_iterations(const swfb_state *st)
{
    return static_cast<int64_t>(gb_state(st).max_iterations);
}

// ---- queries ----------------------------------------------------------------------------------

int64_t swfb_range(const swfb_state *st, int i)
{
    const Record *rec = static_cast<const Record *>(st->bench_);
    if (i < 0 || i >= rec->nargs)
        return 0;
    return gb_state(st).range(static_cast<std::size_t>(i));
}

int swfb_thread_index(const swfb_state *st)
{
    return gb_state(st).thread_index();
}

int swfb_threads(const swfb_state *st)
{
    return gb_state(st).threads();
}

void *swfb_data(const swfb_state *st)
{
    return st->data_;
}

// ---- timing -----------------------------------------------------------------------------------

static bool timing_allowed(const swfb_state *st)
{
    return (st->phase_ == kStepping || st->phase_ == kBatches) && !gb_state(st).error_occurred();
}

void swfb_pause_timing(swfb_state *st)
{
    if (timing_allowed(st))
        gb_state(st).PauseTiming();
}

void swfb_resume_timing(swfb_state *st)
{
    if (timing_allowed(st))
        gb_state(st).ResumeTiming();
}

void swfb_set_iteration_time(swfb_state *st, double seconds)
{
    gb_state(st).SetIterationTime(seconds);
}

// ---- results ----------------------------------------------------------------------------------

void swfb_counter_set(swfb_state *st, const char *name, double value, unsigned flags)
{
    if (name == nullptr)
        return;
    gb_state(st).counters[name] = benchmark::Counter(value, gb_flags(flags));
}

void swfb_set_items_processed(swfb_state *st, int64_t items)
{
    gb_state(st).SetItemsProcessed(items);
}

void swfb_set_bytes_processed(swfb_state *st, int64_t bytes)
{
    gb_state(st).SetBytesProcessed(bytes);
}

void swfb_set_label(swfb_state *st, const char *label)
{
    gb_state(st).SetLabel(label != nullptr ? label : "");
}

void swfb_skip_with_error(swfb_state *st, const char *msg)
{
    note_error(st, msg != nullptr ? msg : "swfb: error");
}

// ---- registration -----------------------------------------------------------------------------

swfb_bench *swfb_register_data(const char *name, swfb_fn *fn, void *data)
{
    if (name == nullptr || fn == nullptr)
        return nullptr;
    std::shared_ptr<Record> rec = std::make_shared<Record>();
    rec->fn = fn;
    rec->data = data;
    rec->gb = benchmark::RegisterBenchmark(name, [rec](benchmark::State &s) { run_body(rec, s); });
    return reinterpret_cast<swfb_bench *>(rec.get());
}

swfb_bench *swfb_register(const char *name, swfb_fn *fn)
{
    return swfb_register_data(name, fn, nullptr);
}

swfb_bench *swfb_bench_arg(swfb_bench *b, int64_t x)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->nargs = 1;
    rec_of(b)->gb->Arg(x);
    return b;
}

swfb_bench *swfb_bench_args2(swfb_bench *b, int64_t x, int64_t y)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->nargs = 2;
    rec_of(b)->gb->Args({x, y});
    return b;
}

swfb_bench *swfb_bench_range(swfb_bench *b, int64_t lo, int64_t hi)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->nargs = 1;
    rec_of(b)->gb->Range(lo, hi);
    return b;
}

swfb_bench *swfb_bench_ranges2(swfb_bench *b, int64_t lo0, int64_t hi0, int64_t lo1, int64_t hi1)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->nargs = 2;
    rec_of(b)->gb->Ranges({{lo0, hi0}, {lo1, hi1}});
    return b;
}

swfb_bench *swfb_bench_dense_range(swfb_bench *b, int64_t lo, int64_t hi, int step)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->nargs = 1;
    rec_of(b)->gb->DenseRange(lo, hi, step);
    return b;
}

swfb_bench *swfb_bench_range_multiplier(swfb_bench *b, int multiplier)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->RangeMultiplier(multiplier);
    return b;
}

swfb_bench *swfb_bench_arg_names(swfb_bench *b, const char *name0, const char *name1)
{
    if (b == nullptr || name0 == nullptr)
        return b;
    if (name1 == nullptr)
        rec_of(b)->gb->ArgName(name0);
    else
        rec_of(b)->gb->ArgNames({name0, name1});
    return b;
}

swfb_bench *swfb_bench_threads(swfb_bench *b, int n)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->Threads(n);
    return b;
}

swfb_bench *swfb_bench_real_time(swfb_bench *b)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->UseRealTime();
    return b;
}

swfb_bench *swfb_bench_manual_time(swfb_bench *b)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->UseManualTime();
    return b;
}

swfb_bench *swfb_bench_min_time(swfb_bench *b, double seconds)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->MinTime(seconds);
    return b;
}

swfb_bench *swfb_bench_iterations(swfb_bench *b, int64_t n)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->Iterations(n);
    return b;
}

swfb_bench *swfb_bench_repetitions(swfb_bench *b, int n)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->Repetitions(n);
    return b;
}

swfb_bench *swfb_bench_unit(swfb_bench *b, enum swfb_unit unit)
{
    if (b == nullptr)
        return nullptr;
    rec_of(b)->gb->Unit(gb_unit(unit));
    return b;
}

// ---- running ----------------------------------------------------------------------------------

void swfb_add_context(const char *key, const char *value)
{
    if (key != nullptr && value != nullptr)
        benchmark::AddCustomContext(key, value);
}

void swfb_init(int *argc, char **argv)
{
    benchmark::Initialize(argc, argv);
}

int64_t swfb_run(void)
{
    g_errors.store(0, std::memory_order_relaxed);
    return static_cast<int64_t>(benchmark::RunSpecifiedBenchmarks());
}

int64_t swfb_errors(void)
{
    return g_errors.load(std::memory_order_relaxed);
}

int swfb_main(int argc, char **argv)
{
    swfb_init(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    (void)swfb_run();
    benchmark::Shutdown();
    return swfb_errors() > 0 ? 2 : 0;
}

} // extern "C"
