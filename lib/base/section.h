/*
 * lib/base/section.h - what this thread is doing in sweepfill, for the messages of the guards and
 * of the waits: how deep it is in the read-side sections of sweepfill's own guards, which public
 * blocking call it is running, and a watchdog for waits that do not end.
 *
 * A blocking public call (one that waits for a guard, a grace period or cfg.synchronize) starts
 * with SWFI_BLOCKING_CALL(): inside a sweepfill section it aborts at once (it could wait for that
 * section, which cannot end while the call waits), else it names itself for the messages below.
 * The name stays the outermost call's: swf_feature_activate's sweep reports as
 * swf_feature_activate, not swf_sweep. NOWAIT paths never come here.
 *
 * A wait the library cannot see the end of (a ready-made guard's lock once its try failed, a
 * synchronize, a grace period) runs between swfi_watch_begin and swfi_watch_end. A watchdog thread,
 * started by the first watched wait, prints one line when a wait has lasted SWFI_WATCH_DELAY_MS,
 * and the wait goes on. Once per blocking call: after a line, the rest of the call is not watched.
 */
#ifndef SWF_LIB_BASE_SECTION_H
#define SWF_LIB_BASE_SECTION_H

#include <stdbool.h>

/* The watchdog's delay: the figure the public headers state (sweep.h). */
#define SWFI_WATCH_DELAY_MS 5000

/* Sections of sweepfill's guards (and the registry's readers) open on this thread. */
extern _Thread_local unsigned int swfi_section_depth_ __attribute__((tls_model("initial-exec")));

static inline void swfi_section_entered(void)
{
    swfi_section_depth_++;
}

static inline void swfi_section_left(void)
{
    if (swfi_section_depth_ > 0)
        swfi_section_depth_--;
}

/* The start of a blocking public call: aborts inside a section; returns whether this call is the
 * outermost (then swfi_call_end clears the name). */
int swfi_call_begin(const char *function);
void swfi_call_end(int outermost);

static inline void swfi_call_end_at_scope_exit(int *outermost)
{
    swfi_call_end(*outermost);
}

/* One line at a blocking public function's entry (after its argument checks): the checks and the
 * name above, the name cleared when the function returns. */
#define SWFI_BLOCKING_CALL() SWFI_BLOCKING_CALL_AS(1, __func__)

/* The same when cond holds (a mode that may block), under the public name `function`. */
#define SWFI_BLOCKING_CALL_AS(cond, function)                                           \
    __attribute__((cleanup(swfi_call_end_at_scope_exit), unused)) int swfi_outermost_ = \
        (cond) ? swfi_call_begin(function) : 0

/* The public function running on this thread, or fallback when none is. */
const char *swfi_call_name(const char *fallback);

/* A lock call of a ready-made guard returned err: one line naming the running public function
 * (fallback when none, e.g. the guard's maker), what failed, the error and the hint; abort. */
__attribute__((noreturn)) void swfi_lock_failed(const char *fallback, const char *what, int err,
                                                const char *hint);

/* Watch a wait: `what` waits (a string literal: "cfg.synchronize"), `cause` is the likely reason
 * when it lasts (a literal too). Returns a token for swfi_watch_end; 0 when nothing is watched
 * (this thread already watches a wait, this call already printed its line, or no watchdog
 * thread runs: a child of fork, or none could be made, which one line says). Past the table's
 * slots, the thread's own record serves. Outside NOWAIT paths only: it reads the clock, and
 * past the table it takes a mutex. */
int swfi_watch_begin(const char *what, const char *cause);

/* The same, naming fallback (a guard's maker) when no public call runs on the thread. */
int swfi_watch_begin_in(const char *fallback, const char *what, const char *cause);
void swfi_watch_end(int token);

/* For tests (linked with the static library): the delay, in milliseconds, for waits that begin
 * after the call. */
void swfi_watch_set_delay_ms(unsigned int ms);

#endif /* SWF_LIB_BASE_SECTION_H */
