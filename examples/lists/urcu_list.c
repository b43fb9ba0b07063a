/*
 * examples/lists/urcu_list.c - README "Your lists": liburcu's cds_list, read in RCU sections of
 * the flavour the program includes (memb here), with call_rcu as the grace period of the
 * library's pin; switched on and off exactly (feature.h). Built when liburcu is found.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h> /* first: the flavour; list_urcu.h serves whichever is included */
#include <sweepfill/feature.h>
#include <sweepfill/list_urcu.h>

static struct swf_cache *cache;

static void init_session(void *obj, void *member, void *arg)
{
    (void)arg;
    *(void **)obj = member;
}

/* [README] */
struct session {
    struct cds_list_head link;
    void *trace; /* the slot */
    struct swf_pin pin;
};
SWF_LIST_CDS_LIST_AUTO(sessions, session, link, trace, pin)

static struct swf_feature *tracing; /* one trace buffer per session while on */
static pthread_mutex_t update = PTHREAD_MUTEX_INITIALIZER;

static int make_feature(struct cds_list_head *all) /* a registered thread (qsbr: offline) */
{
    struct swf_feature_config cfg;
    swf_feature_config_init(&cfg);
    cfg.sweep.list = sessions_list(all);
    cfg.sweep.cache = cache;
    cfg.sweep.init = init_session;
    swf_guard_urcu(&cfg.sweep.guard, &urcu_memb_flavor); /* qsbr: swf_guard_urcu_qsbr */
    cfg.sweep.section_bound = 1024;
    cfg.synchronize = swf_synchronize_urcu; /* qsbr: swf_synchronize_urcu_qsbr */
    cfg.synchronize_arg = (void *)&urcu_memb_flavor;
    return swf_feature_create(&cfg, &tracing);
}

static void start_session(struct cds_list_head *all, struct session *s)
{
    pthread_mutex_lock(&update);
    cds_list_add_rcu(&s->link, all);
    int err = swf_feature_added(tracing, s, SWF_NOWAIT); /* under the lock; off: one load */
    pthread_mutex_unlock(&update);
    if (err == EAGAIN) /* s is owed; an end_session may free s now: catch up, not s itself */
        swf_feature_catch_up(tracing, NULL); /* outside the lock, a registered thread */
}

static void free_session(struct swf_pin *pin) /* on the call_rcu thread, or in the sweep */
{
    struct session *s = (struct session *)((char *)pin - offsetof(struct session, pin));
    swf_feature_release(tracing, s);
    free(s);
}

static void end_session(struct session *s)
{
    struct swf_grace grace;
    swf_grace_urcu(&grace, &urcu_memb_flavor); /* call_rcu */
    pthread_mutex_lock(&update);
    cds_list_del_rcu(&s->link);
    swf_pin_retire(&s->pin, &grace, free_session);
    pthread_mutex_unlock(&update);
}
/* [README] */

static size_t with_trace(struct cds_list_head *all)
{
    size_t n = 0;
    struct session *s;
    cds_list_for_each_entry(s, all, link)
    {
        n += swf_slot_load(&s->trace) != NULL;
    }
    return n;
}

int main(void)
{
    static CDS_LIST_HEAD(all);
    urcu_memb_register_thread();
    struct swf_cache_config cc = {.object_size = 64, .name = "urcu"};
    if (swf_cache_create(&cc, &cache) != 0 || make_feature(&all) != 0)
        return 1;
    for (int i = 0; i < 10000; i++)
        start_session(&all, calloc(1, sizeof(struct session)));
    int err = swf_feature_activate(tracing, NULL);
    for (int i = 0; i < 1000; i++) /* started while on: filled by their adder */
        start_session(&all, calloc(1, sizeof(struct session)));
    size_t on = with_trace(&all);
    err |= swf_feature_deactivate(tracing);
    size_t off = with_trace(&all);
    while (!cds_list_empty(&all))
        end_session(cds_list_first_entry(&all, struct session, link));
    urcu_memb_barrier(); /* every call_rcu callback has run */
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    printf("urcu_list: activate/deactivate %d, %zu of 11000 traced while on, %zu after; objects "
           "alive after every session ended: %llu\n",
           err, on, off, (unsigned long long)st.alive);
    urcu_memb_unregister_thread();
    return err != 0 || on != 11000 || off != 0 || st.alive != 0 ||
           swf_feature_destroy(tracing) != 0 || swf_cache_destroy(cache) != 0;
}
