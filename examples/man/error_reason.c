/* examples/man/error_reason.c - swf_error_reason(3)'s example: a failing call's error number and
 * its reason, and whether the full misuse checks are on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 0, .name = "example"}; /* size 0: invalid */
    struct swf_cache *c = NULL;
    /* [man] */
    int err = swf_cache_create(&cfg, &c);
    if (err != 0)
        fprintf(stderr, "swf_cache_create: %s (%s)\n", strerror(err), swf_error_reason());
    if (swf_debug_checks())
        fprintf(stderr, "sweepfill: full misuse checks on\n");
    /* [man] */
    /* the call failed as documented, and the reason names what was wrong */
    return err == EINVAL && c == NULL && strstr(swf_error_reason(), "object_size") != NULL ? 0 : 1;
}
