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
#include "base/atomic.h"
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

void swfi_reason_start(struct swfi_reason *r)
{
    r->len = 0;
    r->text[0] = '\0';
}

void swfi_reason_add(struct swfi_reason *r, const char *s)
{
    static const char cut[] = "...";
    for (; *s != '\0'; s++) {
        if (r->len == sizeof(r->text) - sizeof(cut)) { /* full: end on "..." (again, if cut) */
            memcpy(r->text + r->len, cut, sizeof(cut));
            return;
        }
        r->text[r->len++] = *s;
        r->text[r->len] = '\0';
    }
}

void swfi_reason_add_u64(struct swfi_reason *r, uint64_t v)
{
    char digits[21];
    size_t i = sizeof(digits) - 1;
    digits[i] = '\0';
    do
        digits[--i] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    swfi_reason_add(r, digits + i);
}

/*
 * The built reasons, each kept once and never changed: entries of a 4-byte header (the text's
 * length plus one, stored with release once the text is written; 0 while it is being written)
 * and the text with its NUL, padded to 4 bytes. A writer reserves its entry with a
 * compare-and-swap on x_arena_used; a reader walks the entries below what it loaded, stopping at
 * one still being written (it may then append a second copy: harmless). A thread that dies
 * mid-write (fork) leaves an entry that stops every later walk, never a wrong text.
 */
enum { ARENA_BYTES = 16384 };
static _Alignas(4) char arena[ARENA_BYTES];
static uint32_t x_arena_used;

static uint32_t entry_bytes(uint32_t head)
{
    return 4 + ((head + 3) & ~3u);
}

const char *swfi_reason_text(const struct swfi_reason *r, const char *fallback)
{
    uint32_t head = (uint32_t)r->len + 1;
    uint32_t used = swfi_load_acquire_32(&x_arena_used);
    for (uint32_t off = 0; off + 4 <= used;) {
        uint32_t h = swfi_load_acquire_32((uint32_t *)(void *)(arena + off));
        if (h == 0)
            break; /* being written */
        if (h == head && memcmp(arena + off + 4, r->text, head) == 0)
            return arena + off + 4;
        off += entry_bytes(h);
    }
    do
        if (used + entry_bytes(head) > ARENA_BYTES)
            return fallback;
    while (!swfi_cas_acq_rel_32(&x_arena_used, &used, used + entry_bytes(head)));
    memcpy(arena + used + 4, r->text, head);
    swfi_store_release_32((uint32_t *)(void *)(arena + used), head);
    return arena + used + 4;
}

const char *swf_error_reason(void)
{
    return last_reason ? last_reason : "no sweepfill call has failed on this thread";
}

const char *swf_reason_keep_(void)
{
    return last_reason;
}

void swf_reason_restore_(const char *kept)
{
    last_reason = kept;
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
