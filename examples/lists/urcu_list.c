/*
 * examples/lists/urcu_list.c - README "Your lists": liburcu's cds_list, read in RCU sections of
 * the flavour the program includes (memb here), with call_rcu as the grace period of the
 * library's pin. Built when liburcu is found.
 */
#include <stdio.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h> /* first: the flavour; list_urcu.h serves whichever is included */
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

static void free_session(struct swf_pin *pin) /* on the call_rcu thread, or in the sweep */
{
    struct session *s = (struct session *)((char *)pin - offsetof(struct session, pin));
    swf_cache_free(cache, swf_slot_take(&s->trace));
    free(s);
}

static int fill(struct cds_list_head *all) /* a registered thread (qsbr: offline) */
{
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = sessions_list(all);
    cfg.cache = cache;
    cfg.init = init_session;
    swf_guard_urcu(&cfg.guard, &urcu_memb_flavor); /* qsbr: swf_guard_urcu_qsbr */
    cfg.section_bound = 1024;
    return swf_sweep(&cfg, NULL);
}

static void end_session(struct session *s) /* with the update-side lock held */
{
    struct swf_grace grace;
    swf_grace_urcu(&grace, &urcu_memb_flavor); /* call_rcu */
    cds_list_del_rcu(&s->link);
    swf_pin_retire(&s->pin, &grace, free_session);
}
/* [README] */

int main(void)
{
    CDS_LIST_HEAD(all);
    urcu_memb_register_thread();
    struct swf_cache_config cc = {.object_size = 64, .name = "urcu"};
    if (swf_cache_create(&cc, &cache) != 0)
        return 1;
    for (int i = 0; i < 10000; i++) {
        struct session *s = calloc(1, sizeof(*s));
        cds_list_add_rcu(&s->link, &all);
    }
    int err = fill(&all);
    while (!cds_list_empty(&all))
        end_session(cds_list_first_entry(&all, struct session, link));
    urcu_memb_barrier(); /* every call_rcu callback has run */
    struct swf_cache_stats st;
    swf_cache_stats(cache, &st);
    printf("urcu_list: fill %d, objects alive after every session ended: %llu\n", err,
           (unsigned long long)st.alive);
    urcu_memb_unregister_thread();
    return err != 0 || st.alive != 0 || swf_cache_destroy(cache) != 0;
}
