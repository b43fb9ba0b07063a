/*
 * lib/base/version.c - the version of the library a program runs with.
 */
#include "sweepfill/version.h"

unsigned swf_version(void)
{
    return SWF_VERSION;
}
