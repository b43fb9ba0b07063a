/*
 * lib/cache/failslab.c - parsing SWF_FAILSLAB and deciding which NOWAIT calls fail.
 *
 * The decision for call k is a pure function of (seed, k) and the interval, plus the shared
 * `times` budget: that is what makes a run reproducible for a seed. The parameters live in an
 * immutable block published by one release store (failslab.h), so a NOWAIT call racing with a
 * reconfiguration uses either the old or the new settings, each complete.
 */
#include "cache/failslab.h"

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/atomic.h"
#include "base/util.h"

int swfi_failslab_set(struct swfi_failslab_state *s, const struct swf_failslab *fs)
{
    struct swfi_failslab_block *b = NULL;
    if (fs != NULL && fs->probability > 0 && fs->times != 0) {
        b = calloc(1, sizeof(*b));
        if (b == NULL)
            return ENOMEM;
        b->probability = fs->probability;
        b->interval = fs->interval;
        b->seed = fs->seed;
        b->x_times = (uint64_t)(int64_t)fs->times;
        b->replaced = s->last;
        s->last = b;
    }
    /* Release: a NOWAIT call that loads b (acquire) sees its fields as written above. */
    swfi_store_release_ptr((void **)&s->x_cur, b);
    return 0;
}

void swfi_failslab_fini(struct swfi_failslab_state *s)
{
    for (struct swfi_failslab_block *b = s->last, *next; b != NULL; b = next) {
        next = b->replaced;
        free(b);
    }
    s->last = NULL;
    s->x_cur = NULL;
}

/* Take one failure from the budget; false when it is spent. */
static bool take_one_time(struct swfi_failslab_block *b)
{
    uint64_t t = swfi_load_relaxed_64(&b->x_times);
    for (;;) {
        if ((int64_t)t < 0)
            return true; /* unlimited */
        if (t == 0)
            return false;
        if (swfi_cas_acq_rel_64(&b->x_times, &t, t - 1))
            return true;
    }
}

bool swfi_failslab_should_fail(struct swfi_failslab_state *s, const void **block, uint64_t *calls)
{
    struct swfi_failslab_block *b = swfi_load_acquire_ptr((void *const *)&s->x_cur);
    if (b == NULL)
        return false;
    uint64_t k;
    if (block != NULL) {
        if (*block != b) {
            *block = b; /* new settings: numbering restarts */
            *calls = 0;
        }
        k = (*calls)++;
    } else {
        k = swfi_fetch_add_relaxed_64(&b->x_calls, 1);
    }
    if (b->interval > 1 && k % b->interval != b->interval - 1)
        return false;
    if (swfi_mix64(b->seed ^ swfi_mix64(k)) % 100 >= b->probability)
        return false;
    return take_one_time(b);
}

__attribute__((format(printf, 3, 4))) static int failf(char *err, size_t err_len, const char *fmt,
                                                       ...)
{
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return EINVAL;
}

/* The value of one digit in base 10 or 16, or -1. */
static int digit_value(char c, unsigned base)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (base == 16 && c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (base == 16 && c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * Parse the number spanning [s, end), exactly as cache.h documents it: decimal digits (leading
 * zeros allowed, still decimal), or 0x / 0X and hex digits; with sign_ok, also "-" and decimal
 * digits. Nothing else: no spaces, no "+", no octal. In range [min, max] or false.
 */
static bool parse_number(const char *s, const char *end, int64_t min, uint64_t max, bool sign_ok,
                         uint64_t *out)
{
    bool negative = s < end && *s == '-';
    if (negative) {
        if (!sign_ok)
            return false;
        s++;
    }
    unsigned base = 10;
    if (!negative && end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (s == end)
        return false;
    uint64_t v = 0;
    for (; s < end; s++) {
        int d = digit_value(*s, base);
        if (d < 0 || v > (UINT64_MAX - (uint64_t)d) / base)
            return false;
        v = v * base + (uint64_t)d;
    }
    if (negative) {
        if (v > (uint64_t)INT64_MAX || -(int64_t)v < min)
            return false;
        *out = (uint64_t) - (int64_t)v;
        return true;
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

static int parse_spec(const char *spec, struct swf_failslab *out, char *cache_name, size_t name_len,
                      char *err, size_t err_len)
{
    if (spec == NULL || out == NULL) {
        failf(err, err_len, "no specification");
        return swfi_fail("swf_failslab_parse", EINVAL,
                         spec == NULL ? "spec is NULL" : "out is NULL");
    }
    struct swf_failslab fs = {.probability = 0, .interval = 1, .times = -1, .seed = 0};
    bool have_probability = false;
    if (cache_name != NULL && name_len > 0)
        cache_name[0] = '\0';

    unsigned seen = 0; /* one bit per key: each may appear once */
    const char *p = spec;
    while (*p != '\0') {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq == NULL)
            return failf(err, err_len, "'%.*s' is not key=value", (int)(end - p), p);
        size_t klen = (size_t)(eq - p);
        const char *v = eq + 1;
        uint64_t n;
#define KEY_IS(k) (klen == sizeof(k) - 1 && memcmp(p, k, klen) == 0)
        static const char *const keys[] = {"probability", "interval", "times", "seed", "cache"};
        for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
            if (strlen(keys[i]) == klen && memcmp(p, keys[i], klen) == 0) {
                if (seen & (1u << i))
                    return failf(err, err_len, "%s= is given twice", keys[i]);
                seen |= 1u << i;
            }
        }
        if (KEY_IS("probability")) {
            if (!parse_number(v, end, 0, 100, false, &n))
                return failf(err, err_len, "probability must be 0..100, not '%.*s'", (int)(end - v),
                             v);
            fs.probability = (unsigned int)n;
            have_probability = true;
        } else if (KEY_IS("interval")) {
            if (!parse_number(v, end, 0, ULONG_MAX, false, &n))
                return failf(err, err_len, "interval must be a number >= 0, not '%.*s'",
                             (int)(end - v), v);
            fs.interval = (unsigned long)n;
        } else if (KEY_IS("times")) {
            if (!parse_number(v, end, -1, LONG_MAX, true, &n))
                return failf(err, err_len, "times must be -1 or a number >= 0, not '%.*s'",
                             (int)(end - v), v);
            fs.times = (long)(int64_t)n;
        } else if (KEY_IS("seed")) {
            if (!parse_number(v, end, 0, UINT64_MAX, false, &n))
                return failf(err, err_len, "seed must be an unsigned 64-bit number, not '%.*s'",
                             (int)(end - v), v);
            fs.seed = n;
        } else if (KEY_IS("cache")) {
            size_t vlen = (size_t)(end - v);
            if (vlen == 0)
                return failf(err, err_len, "cache= needs a name");
            if (cache_name != NULL) {
                if (vlen >= name_len)
                    return failf(err, err_len, "cache name '%.*s' is too long", (int)vlen, v);
                memcpy(cache_name, v, vlen);
                cache_name[vlen] = '\0';
            }
        } else {
            return failf(err, err_len,
                         "unknown key '%.*s' (expected probability, interval, times, seed, cache)",
                         (int)klen, p);
        }
#undef KEY_IS
        if (comma == NULL)
            break;
        p = comma + 1;
        if (*p == '\0')
            return failf(err, err_len, "trailing comma");
    }
    if (!have_probability)
        return failf(err, err_len, "probability= is required");
    *out = fs;
    return 0;
}

int swf_failslab_parse(const char *spec, struct swf_failslab *out, char *cache_name,
                       size_t name_len, char *err, size_t err_len)
{
    int e = parse_spec(spec, out, cache_name, name_len, err, err_len);
    if (e != 0 && spec != NULL && out != NULL)
        return swfi_fail(__func__, e, "spec is malformed (err says how)");
    return e;
}

int swfi_failslab_from_env(struct swfi_failslab_state *s, const char *name)
{
    const char *spec = getenv(SWF_FAILSLAB_ENV);
    if (spec == NULL)
        return 0;
    struct swf_failslab fs;
    char only[128];
    char err[160];
    /* One line naming the variable, what is wrong and the accepted syntax; the cache is not
     * created (cache.h: a malformed value is never ignored). */
    if (parse_spec(spec, &fs, only, sizeof(only), err, sizeof(err)) != 0) {
        fprintf(stderr,
                "sweepfill: swf_cache_create: %s=\"%.64s\" is malformed (%s); accepted: "
                "probability=P[,interval=I][,times=T][,seed=S][,cache=NAME]: EINVAL\n",
                SWF_FAILSLAB_ENV, spec, err);
        return EINVAL;
    }
    if (only[0] != '\0' && (name == NULL || strcmp(only, name) != 0))
        return 0;
    return swfi_failslab_set(s, &fs);
}
