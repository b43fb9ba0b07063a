/*
 * lib/cache/front/double_free.c - a single free's search for a double free: when the object
 * carries the free mark (store/freecheck.c), whether it is in the magazines this free goes to,
 * the thread state's or, in the per-CPU mode, this CPU's.
 */
#include "cache/front/front.h"

static bool in_mag(const struct swf_magazine_ *m, const void *obj)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->obj[i] == obj)
            return true;
    return false;
}

void swfi_free_check(struct swf_cache *c, struct swfi_tstate *ts, const char *fn, void *obj)
{
    swfi_owner_check(c, fn, obj);
    if (!swf_cache_marked_(&c->owner.head, obj))
        return;
    /* The magazines this free goes to: the thread's, or (per-CPU mode) its CPU's. */
    if (c->pcpu ? swfi_pcpu_holds(c, obj)
                : ts != NULL && (in_mag(ts->pub.loaded, obj) || in_mag(ts->pub.prev, obj)))
        swfi_die(fn, "double free of %p (cache '%s')", obj, c->name);
}
