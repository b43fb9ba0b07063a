/*
 * lib/error.c - why the last call failed (swf_error_reason), and the debug-check build's report.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "sweepfill/api.h"
#include "util.h"

/* Initial-exec, so that recording a reason on a NOWAIT path never allocates TLS. */
static _Thread_local const char *last_reason __attribute__((tls_model("initial-exec")));

int swf_fail(const char *function, int err, const char *reason)
{
    last_reason = reason;
    if (SWF_DEBUG && err == EINVAL)
        fprintf(stderr, "sweepfill: %s: EINVAL: %s\n", function, reason);
    return err;
}

void *swf_fail_null(const char *function, int err, const char *reason)
{
    errno = swf_fail(function, err, reason);
    return NULL;
}

const char *swf_error_reason(void)
{
    return last_reason ? last_reason : "no sweepfill call has failed on this thread";
}

int swf_debug_checks(void)
{
    return SWF_DEBUG;
}

void swf_die(const char *function, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "sweepfill: %s: ", function);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
