/*
 * lib/cache/front/double_free.c - a single free's search for a double free: when the object
 * carries the free mark (store/freecheck.c), whether it is in the magazines this free goes to,
 * as the front end says (struct swfi_front's holds): the thread state's (swfi_tstate_holds, the
 * per-thread front's), or this CPU's (swfi_pcpu_holds).
 */
#include "cache/front/front.h"

static bool in_mag(const struct swf_magazine_ *m, const void *obj)
{
    for (uint32_t i = 0; i < m->n; i++)
        if (m->obj[i] == obj)
            return true;
    return false;
}

bool swfi_tstate_holds(struct swf_cache *c, const struct swfi_tstate *ts, const void *obj)
{
    (void)c;
    return ts != NULL && (in_mag(ts->pub.loaded, obj) || in_mag(ts->pub.prev, obj));
}

void swfi_free_check(struct swf_cache *c, struct swfi_tstate *ts, const char *fn, void *obj)
{
    swfi_owner_check(c, fn, obj);
    if (!swf_cache_marked_(&c->owner.head, obj))
        return;
    /* The magazines this free goes to: the thread's, or (per-CPU mode) its CPU's. */
    if (c->front->holds(c, ts, obj))
        swfi_die(fn, "double free of %p (cache '%s')", obj, c->name);
}
