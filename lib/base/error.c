/*
 * lib/base/error.c - why the last call failed (swf_error_reason), the misuse report, and whether
 * the full misuse checks are on for the process (a debug-check build, or SWF_DEBUG=checks).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweepfill/api.h"
#include "base/util.h"

/* Initial-exec, so that recording a reason on a NOWAIT path never allocates TLS. */
static _Thread_local const char *last_reason __attribute__((tls_model("initial-exec")));

int swfi_fail(const char *function, int err, const char *reason)
{
    last_reason = reason;
    if (swfi_checks_all() && err == EINVAL)
        fprintf(stderr, "sweepfill: %s: EINVAL: %s\n", function, reason);
    return err;
}

void *swfi_fail_null(const char *function, int err, const char *reason)
{
    errno = swfi_fail(function, err, reason);
    return NULL;
}

const char *swf_error_reason(void)
{
    return last_reason ? last_reason : "no sweepfill call has failed on this thread";
}

bool swfi_checks_all_on = SWF_DEBUG;

/* Read SWF_DEBUG once, when the library is loaded: before any cache exists, so that every cache
 * is created with the same setting and no call pays for a getenv. A comma- or space-separated list
 * of words; the one known word is "checks" (sweepfill(7), ENVIRONMENT). A word not known gets one
 * line naming it and the accepted words, and changes nothing: a typo never passes silently for
 * a check that is on. */
__attribute__((constructor)) static void read_swf_debug(void)
{
    const char *v = getenv(SWF_DEBUG_ENV);
    if (v == NULL)
        return;
    char unknown[128] = "";
    size_t used = 0;
    for (const char *p = v; *p != '\0';) {
        size_t len = strcspn(p, ", ");
        if (len == 6 && strncmp(p, "checks", 6) == 0) {
            swfi_checks_all_on = true;
        } else if (len > 0) {
            int n = snprintf(unknown + used, sizeof(unknown) - used, "%s\"%.*s\"",
                             used > 0 ? ", " : "", (int)(len > 32 ? 32 : len), p);
            if (n > 0 && (size_t)n < sizeof(unknown) - used)
                used += (size_t)n;
        }
        p += len;
        p += strspn(p, ", ");
    }
    if (used > 0)
        fprintf(stderr,
                "sweepfill: SWF_DEBUG=\"%.64s\": %s not known (the accepted word: checks, in a "
                "comma- or space-separated list): ignored\n",
                v, unknown);
}

int swf_debug_checks(void)
{
    return swfi_checks_all();
}

void swfi_die(const char *function, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "sweepfill: %s: ", function);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
