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

/* Not initial-exec: big enough to matter in the static TLS a dlopen'ed library shares (util.h). */
enum { REASON_MAX = 512 };
static _Thread_local char built[REASON_MAX];
static _Thread_local size_t built_len;

void swfi_reason_start(void)
{
    built_len = 0;
    built[0] = '\0';
}

void swfi_reason_add(const char *s)
{
    static const char cut[] = "...";
    for (; *s != '\0'; s++) {
        if (built_len == REASON_MAX - sizeof(cut)) { /* full: end on "..." (again, if cut) */
            memcpy(built + built_len, cut, sizeof(cut));
            return;
        }
        built[built_len++] = *s;
        built[built_len] = '\0';
    }
}

void swfi_reason_add_u64(uint64_t v)
{
    char digits[21];
    size_t i = sizeof(digits) - 1;
    digits[i] = '\0';
    do
        digits[--i] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    swfi_reason_add(digits + i);
}

const char *swfi_reason_text(void)
{
    return built;
}

const char *swf_error_reason(void)
{
    return last_reason ? last_reason : "no sweepfill call has failed on this thread";
}

bool swfi_checks_all_on = SWF_DEBUG;

/* Whether the comma- or space-separated list s names `word`. */
static bool names(const char *s, const char *word)
{
    size_t len = strlen(word);
    for (const char *p = s; (p = strstr(p, word)) != NULL; p += len) {
        bool starts = p == s || p[-1] == ',' || p[-1] == ' ';
        bool ends = p[len] == '\0' || p[len] == ',' || p[len] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

/* Read SWF_DEBUG once, when the library is loaded: before any cache exists, so that every cache
 * is created with the same setting and no call pays for a getenv. */
__attribute__((constructor)) static void read_swf_debug(void)
{
    const char *v = getenv(SWF_DEBUG_ENV);
    if (v != NULL && names(v, "checks"))
        swfi_checks_all_on = true;
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
