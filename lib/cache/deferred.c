/*
 * lib/cache/deferred.c - frees after a ck_epoch grace period.
 *
 * The objects go into empty magazines, each magazine is queued with ck_epoch_call on the
 * caller's record, and the callback puts the magazine on the depot once the grace period is
 * over. The callback's last touch of the cache is a release add to x_deferred_done; destroy
 * (through stats) reads it with acquire, so a destroy that sees every deferred free done also
 * sees the callbacks' writes to the depot finished, and frees nothing under them.
 * Each ck_epoch_call is base/epoch.h's, after a full fence.
 */
#include "cache/cache_internal.h"

#include "base/epoch.h"
#include "base/section.h"

#include <errno.h>

#include "base/tsan.h"

static void deferred_done(ck_epoch_entry_t *e)
{
    struct swfi_magazine *m = SWF_CONTAINER_OF(e, struct swfi_magazine, epoch_entry);
    struct swf_cache *c = m->cache;
    uint32_t n = m->pub.n;
    swfi_tsan_acquire(m->epoch); /* the grace period is over: sections that saw these objects
                                   ended before this point */
    for (uint32_t i = 0; i < n; i++)
        swfi_debug_free(c, "swf_cache_free_deferred", m->pub.obj[i], OBJ_DEFERRED);
    swfi_depot_put(c, m);
    /* Release, and the last access to c: see the top of this file. */
    swfi_fetch_add_release_64(&c->x_deferred_done, n);
}

int swf_cache_free_deferred(struct swf_cache *c, ck_epoch_record_t *rec, void *const *objs,
                            size_t n)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(rec == NULL, EINVAL, "rec is NULL");
    SWF_CHECK_ARG(objs == NULL && n > 0, EINVAL, "objs is NULL and n is not 0");
    /* The always-on check, before anything is queued; it reads an object but writes none
     * (readers may still hold them). */
    struct swfi_tstate *ts = swfi_tls_get(&c->owner); /* the front's search may ignore it */
    for (size_t i = 0; i < n; i++)
        if (!swfi_free_ok(c, objs[i]))
            swfi_free_check(c, ts, "swf_cache_free_deferred", objs[i]);
    size_t want = (n + SWF_CACHE_MAGAZINE - 1) / SWF_CACHE_MAGAZINE;
    struct swfi_magazine *chain;
    if (swfi_mags_take_chain(c, want, false, &chain) < want) {
        swfi_mags_put_chain(c, chain);
        return swfi_fail(__func__, ENOMEM, "no magazine could be made for the deferred frees");
    }
    swfi_fetch_add_relaxed_64(&c->x_deferred_queued, n);
    size_t done = 0;
    while (chain != NULL) {
        struct swfi_magazine *m = chain;
        chain = swfi_mags_chain_next(c, m);
        while (m->pub.n < SWF_CACHE_MAGAZINE && done < n) {
            swfi_debug_transition(c, "swf_cache_free_deferred", objs[done], OBJ_ALLOC,
                                  OBJ_DEFERRED);
            m->pub.obj[m->pub.n++] = objs[done++];
        }
        m->epoch = rec->global;
        swfi_epoch_call(rec, &m->epoch_entry, deferred_done);
    }
    return 0;
}

int swf_cache_quiesce(struct swf_cache *c, ck_epoch_record_t *rec)
{
    SWF_CHECK_ARG(c == NULL, EINVAL, "c is NULL");
    SWF_CHECK_ARG(rec == NULL, EINVAL, "rec is NULL");
    SWFI_BLOCKING_CALL();
    struct swfi_epoch_waiter w;
    swfi_epoch_waiter_init(&w);
    int watch = swfi_watch_begin("the grace period of rec's epoch",
                                 "a section of the epoch that began before it has not ended (on "
                                 "this thread or another: ck_epoch_begin)");
    ck_epoch_barrier_wait(rec, swfi_epoch_wait, &w);
    swfi_watch_end(watch);
    return 0;
}
