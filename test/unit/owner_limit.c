/*
 * test/unit/owner_limit.c - exactly SWF_CACHE_MAX caches and registries can be alive at once.
 *
 * cache.h promises SWF_CACHE_MAX (65,536) caches and registries alive together, EAGAIN beyond,
 * and a freed place usable again. Registries are the cheap owner, so the test fills the table
 * with one cache and 65,535 registries, checks that both kinds are then refused with EAGAIN,
 * frees one place and takes it again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sweepfill/registry.h>

#include "../common/tap.h"

static void nothing(void *obj, void *member, void *arg)
{
    (void)obj, (void)member, (void)arg;
}

int main(void)
{
    if (tap_under_valgrind()) {
        skip("65,536 registries under valgrind take minutes; the plain builds run this");
        return tap_done();
    }
    struct swf_cache_config cfg = {.object_size = 64, .name = "owner"};
    struct swf_cache *c;
    tap_require(swf_cache_create(&cfg, &c) == 0, "cache");
    struct swf_registry_config rc;
    swf_registry_config_init(&rc);
    rc.cache = c;
    rc.init = nothing;
    struct swf_registry **regs = calloc(SWF_CACHE_MAX, sizeof(*regs));
    int made = 0;
    while (made < SWF_CACHE_MAX && swf_registry_create(&rc, &regs[made]) == 0)
        made++;
    ok(made == SWF_CACHE_MAX - 1, "%d registries beside the cache: %d owners alive", made,
       made + 1);
    struct swf_registry *one_more;
    int err = swf_registry_create(&rc, &one_more);
    ok(err == EAGAIN, "one more registry: EAGAIN (%d: %s)", err, swf_error_reason());
    struct swf_cache *another;
    err = swf_cache_create(&cfg, &another);
    ok(err == EAGAIN, "one more cache: EAGAIN (%d)", err);
    ok(swf_registry_destroy(regs[made / 2]) == 0, "destroy one registry");
    err = swf_cache_create(&cfg, &another);
    ok(err == 0, "its place serves a new cache (%d)", err);
    int bad = swf_cache_destroy(another) != 0;
    for (int i = 0; i < made; i++)
        if (i != made / 2)
            bad += swf_registry_destroy(regs[i]) != 0;
    ok(bad == 0 && swf_cache_destroy(c) == 0, "destroy them all");
    free(regs);
    return tap_done();
}
