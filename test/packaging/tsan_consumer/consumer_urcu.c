/*
 * test/packaging/tsan_consumer/consumer_urcu.c - a liburcu (memb) program that uses an installed
 * sweepfill over its own cds_list, built with -fsanitize=thread: ThreadSanitizer must report
 * nothing, with no suppression file.
 *
 * Readers walk the list in rcu_read_lock sections (cds_list_for_each_entry_rcu) and check every
 * member's own fields (written before the add) and every object in a slot (written by init
 * before the sweep published it); writers add fresh members and delete them again, retiring each
 * with swf_pin_retire through call_rcu, whose callback frees object and member; the main thread
 * sweeps the list again and again to give the new members objects, waits for a grace period
 * itself with synchronize_rcu to free a member it unlinked, and replaces a settings block that
 * the readers read, freeing the old one with a call_rcu of its own. The program's own
 * read sections and grace periods carry list_urcu.h's annotation macros. At the end: every
 * member freed, no object alive. Exit status 0 when all holds (TSan's 66 when it reported).
 *
 *   consumer_urcu [--ms MS] [--readers R] [--writers W]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* usleep under -std=c11 */
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* rcu_dereference inline, as a C11 consume load that TSan sees (otherwise it passes the pointer's
 * value, read with a plain load, to a function of liburcu). */
#define URCU_INLINE_SMALL_FUNCTIONS 1
#include <urcu/urcu-memb.h>
#include <sweepfill/list_urcu.h>

#define CANARY 0x5eedf111c0ffee00ull

struct object {
    uint64_t canary;
    uint64_t owner;
};

struct member {
    struct cds_list_head link;
    uint64_t id; /* written before the add, read by readers */
    uint64_t payload[4];
    void *obj; /* the slot */
    struct swf_pin pin;
};
SWF_LIST_CDS_LIST_AUTO(members, member, link, obj, pin)

static CDS_LIST_HEAD(all);
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static struct swf_cache *objects;
static int stop;
static uint64_t added, freed, bad, next_id;

static void init_object(void *obj, void *m, void *arg)
{
    (void)arg;
    struct object *o = obj;
    o->canary = CANARY;
    o->owner = ((struct member *)m)->id;
}

static void free_member(struct member *m)
{
    swf_cache_free(objects, swf_slot_take(&m->obj));
    free(m);
    __atomic_fetch_add(&freed, 1, __ATOMIC_RELAXED);
}

static void free_retired(struct swf_pin *pin) /* on the call_rcu thread, or in a sweep's put */
{
    free_member((struct member *)(void *)((char *)pin - offsetof(struct member, pin)));
}

/* A settings block the readers read in their sections; the main thread replaces it and frees
 * the old one with call_rcu of its own. */
struct settings {
    struct rcu_head rcu;
    uint64_t generation;
    uint64_t check; /* ~generation */
};
static struct settings *settings;
static uint64_t settings_freed; /* written only by the callbacks (the call_rcu thread) */

static void free_settings(struct rcu_head *head)
{
    SWF_URCU_TSAN_CALLBACK(&urcu_memb_flavor, head);
    free(caa_container_of(head, struct settings, rcu));
    settings_freed++;
    SWF_URCU_TSAN_CALLBACK_END(&urcu_memb_flavor); /* main reads settings_freed after a barrier */
}

static void replace_settings(uint64_t generation)
{
    struct settings *s = malloc(sizeof(*s));
    if (s == NULL)
        abort();
    s->generation = generation;
    s->check = ~generation;
    /* A C11 exchange, not rcu_xchg_pointer (TSan does not see liburcu 0.13's). */
    struct settings *old = __atomic_exchange_n(&settings, s, __ATOMIC_ACQ_REL);
    if (old != NULL) {
        SWF_URCU_TSAN_CALL_RCU(&old->rcu);
        urcu_memb_call_rcu(&old->rcu, free_settings);
    }
}

static bool running(void)
{
    return !__atomic_load_n(&stop, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
    (void)arg;
    urcu_memb_register_thread();
    while (running()) {
        urcu_memb_read_lock();
        struct settings *set = rcu_dereference(settings);
        if (set->check != ~set->generation)
            __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
        struct member *m;
        cds_list_for_each_entry_rcu(m, &all, link)
        {
            struct object *o = swf_slot_load(&m->obj);
            if (m->payload[0] != m->id || (o != NULL && (o->canary != CANARY || o->owner != m->id)))
                __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
        }
        SWF_URCU_TSAN_READ_UNLOCK(&urcu_memb_flavor); /* before every read unlock */
        urcu_memb_read_unlock();
    }
    urcu_memb_unregister_thread();
    return NULL;
}

static void add_one(void)
{
    struct member *m = calloc(1, sizeof(*m));
    if (m == NULL)
        abort();
    m->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 4; i++)
        m->payload[i] = m->id;
    pthread_mutex_lock(&writer);
    if (m->id % 2) /* cds_list_add_rcu and cds_list_add_tail_rcu, with stores TSan sees */
        swf_cds_list_add_rcu(&m->link, &all);
    else
        swf_cds_list_add_tail_rcu(&m->link, &all);
    pthread_mutex_unlock(&writer);
    __atomic_fetch_add(&added, 1, __ATOMIC_RELAXED);
}

/* Unlink the last member; retire it (call_rcu), or return it for a synchronous free. */
static struct member *del_one(bool retire)
{
    struct swf_grace grace;
    swf_grace_urcu(&grace, &urcu_memb_flavor);
    pthread_mutex_lock(&writer);
    struct member *m = NULL;
    if (!cds_list_empty(&all)) {
        m = cds_list_entry(all.prev, struct member, link);
        swf_cds_list_del_rcu(&m->link);
        if (retire)
            swf_pin_retire(&m->pin, &grace, free_retired);
    }
    pthread_mutex_unlock(&writer);
    return retire ? NULL : m;
}

static void *writer_thread(void *arg)
{
    (void)arg;
    urcu_memb_register_thread();
    while (running()) {
        add_one();
        del_one(true);
        usleep(20);
    }
    urcu_memb_unregister_thread();
    return NULL;
}

static uint64_t assigned; /* objects the sweeps published */

static int sweep(void)
{
    struct swf_sweep_config cfg;
    swf_sweep_config_init(&cfg);
    cfg.list = members_list(&all);
    cfg.cache = objects;
    cfg.init = init_object;
    swf_guard_urcu(&cfg.guard, &urcu_memb_flavor);
    cfg.section_bound = 16;
    cfg.publish = SWF_PUBLISH_CAS;
    struct swf_sweep_stats st;
    int err = swf_sweep(&cfg, &st);
    assigned += st.assigned;
    return err;
}

int main(int argc, char **argv)
{
    int ms = 1000, readers = 2, writers = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--ms") == 0)
            ms = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--readers") == 0)
            readers = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--writers") == 0)
            writers = atoi(argv[i + 1]);
    }
    struct swf_cache_config cc = {.object_size = sizeof(struct object), .name = "tsan-urcu"};
    if (swf_cache_create(&cc, &objects) != 0)
        return 1;
    urcu_memb_register_thread();
    replace_settings(0);
    for (int i = 0; i < 200; i++)
        add_one();
    pthread_t t[64];
    int n = 0;
    for (int i = 0; i < readers && n < 64; i++)
        pthread_create(&t[n++], NULL, reader, NULL);
    for (int i = 0; i < writers && n < 64; i++)
        pthread_create(&t[n++], NULL, writer_thread, NULL);
    int sweeps = 0, failed = 0;
    for (int round = 0; round < ms / 10; round++) {
        failed += sweep() != 0;
        sweeps++;
        /* A grace period of the program's own: unlink, wait, free. */
        replace_settings((uint64_t)round + 1);
        struct member *m = del_one(false);
        if (m != NULL) {
            urcu_memb_synchronize_rcu();
            SWF_URCU_TSAN_GRACE_OVER(&urcu_memb_flavor); /* after every synchronize_rcu */
            free_member(m);
        }
        usleep(10000);
    }
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    while (del_one(true) == NULL && !cds_list_empty(&all))
        ;
    struct settings *last = __atomic_exchange_n(&settings, NULL, __ATOMIC_ACQ_REL);
    SWF_URCU_TSAN_CALL_RCU(&last->rcu);
    urcu_memb_call_rcu(&last->rcu, free_settings);
    SWF_URCU_TSAN_BARRIER(&urcu_memb_flavor, urcu_memb_barrier()); /* every callback has run */
    urcu_memb_unregister_thread();
    struct swf_cache_stats st;
    swf_cache_stats(objects, &st);
    uint64_t a = __atomic_load_n(&added, __ATOMIC_RELAXED);
    uint64_t f = __atomic_load_n(&freed, __ATOMIC_RELAXED);
    bool good = bad == 0 && failed == 0 && a == f && st.alive == 0 && assigned > 0 &&
                settings_freed == (uint64_t)sweeps + 1;
    printf("tsan consumer (urcu): %d sweeps assigned %llu objects, %llu members added, %llu freed, "
           "%llu objects alive, %llu bad: %s\n",
           sweeps, (unsigned long long)assigned, (unsigned long long)a, (unsigned long long)f,
           (unsigned long long)st.alive, (unsigned long long)bad, good ? "OK" : "FAILED");
    return good && swf_cache_destroy(objects) == 0 ? 0 : 1;
}
