/* The version macros of sweepfill/version.h, swf_version() and meson's project version agree. */
#include <stdio.h>
#include <string.h>

#include <sweepfill/sweepfill.h>

#include "../common/tap.h"

#if !SWF_VERSION_CHECK(0, 1, 0)
#error "SWF_VERSION_CHECK(0, 1, 0) is false in #if"
#endif

int main(void)
{
    char project[64];
    snprintf(project, sizeof(project), "%d.%d.%d", SWF_VERSION_MAJOR, SWF_VERSION_MINOR,
             SWF_VERSION_PATCH);
    ok(strcmp(project, SWF_TEST_PROJECT_VERSION) == 0,
       "SWF_VERSION_MAJOR.MINOR.PATCH (%s) is meson's project version (%s)", project,
       SWF_TEST_PROJECT_VERSION);
    ok(SWF_VERSION == SWF_VERSION_MAJOR * 10000 + SWF_VERSION_MINOR * 100 + SWF_VERSION_PATCH,
       "SWF_VERSION (%d) is major * 10000 + minor * 100 + patch", SWF_VERSION);
    ok(SWF_VERSION_MINOR < 100 && SWF_VERSION_PATCH < 100, "minor and patch are below 100");
    ok(swf_version() == (unsigned)SWF_VERSION, "swf_version() (%u) is SWF_VERSION", swf_version());
    ok(SWF_VERSION_CHECK(SWF_VERSION_MAJOR, SWF_VERSION_MINOR, SWF_VERSION_PATCH),
       "SWF_VERSION_CHECK of the headers' own version is true");
    ok(SWF_VERSION_CHECK(0, 0, 0), "SWF_VERSION_CHECK(0, 0, 0) is true");
    ok(!SWF_VERSION_CHECK(SWF_VERSION_MAJOR, SWF_VERSION_MINOR, SWF_VERSION_PATCH + 1),
       "SWF_VERSION_CHECK of the next patch release is false");
    ok(!SWF_VERSION_CHECK(SWF_VERSION_MAJOR, SWF_VERSION_MINOR + 1, 0),
       "SWF_VERSION_CHECK of the next minor release is false");
    ok(!SWF_VERSION_CHECK(SWF_VERSION_MAJOR + 1, 0, 0),
       "SWF_VERSION_CHECK of the next major release is false");
    return tap_done();
}
