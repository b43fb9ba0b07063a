/* examples/man/version.c - swf_version(3)'s example: what the headers say at compile time, what
 * the library says at run time. */
#include <stdio.h>

#include <sweepfill/version.h>

/* [man] */
#if !SWF_VERSION_CHECK(0, 1, 0)
#error "sweepfill 0.1.0 or later is needed"
#endif

/* at start-up: refuse a library older than the headers */
static int check_library(void)
{
    if (swf_version() < SWF_VERSION) {
        fprintf(stderr, "built against sweepfill %d, running with the older %u\n", SWF_VERSION,
                swf_version());
        return -1;
    }
    return 0;
}
/* [man] */

int main(void)
{
    if (check_library() != 0)
        return 1;
    /* built together with the library: the same number, and no later version is claimed */
    if (SWF_VERSION_CHECK(SWF_VERSION_MAJOR, SWF_VERSION_MINOR, SWF_VERSION_PATCH + 1))
        return 1;
    return swf_version() == (unsigned)SWF_VERSION ? 0 : 1;
}
