/* examples/man/cache_free_deferred.c - swf_cache_free_deferred(3)'s example: unpublish, defer. */
#include <ck_epoch.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sweepfill/cache.h>
#include <sweepfill/list.h>

struct member {
    void *slot; /* the object readers reach through it */
};

int main(void)
{
    struct swf_cache_config cfg = {.object_size = 64, .prefill = 8, .name = "deferred"};
    struct swf_cache *c;
    int err = swf_cache_create(&cfg, &c);
    if (err != 0) {
        fprintf(stderr, "swf_cache_create: %s: %s\n", strerror(err), swf_error_reason());
        return 1;
    }
    ck_epoch_t epoch;
    ck_epoch_record_t record; /* this thread's */
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &record, NULL);
    ck_epoch_record_t *my_record = &record;
    struct member member = {NULL}, *m = &member;
    void *obj = swf_cache_alloc(c, SWF_WAIT);
    if (obj == NULL)
        return 1;
    swf_slot_publish(&m->slot, obj);

    /* [man] */
    void *old = swf_slot_take(&m->slot); /* unpublish */
    if (old != NULL)
        err = swf_cache_free_deferred(c, my_record, &old, 1);
    /* ... later, outside any epoch section */
    int busy = swf_cache_destroy(c); /* EBUSY: old awaits its grace period */
    swf_cache_quiesce(c, my_record);
    /* [man] */
    if (old == NULL || err != 0 || busy != EBUSY || swf_cache_destroy(c) != 0) {
        fprintf(stderr, "cache_free_deferred: the deferred free did not happen as shown\n");
        return 1;
    }
    ck_epoch_unregister(&record);
    return 0;
}
