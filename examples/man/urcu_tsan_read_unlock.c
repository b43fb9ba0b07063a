/* examples/man/urcu_tsan_read_unlock.c - SWF_URCU_TSAN_READ_UNLOCK(3)'s example: a liburcu
 * (memb) program's own read section, list changes, grace period, call_rcu and barrier, each
 * annotated so that a ThreadSanitizer build sees their ordering. Built when liburcu is found. */
#define URCU_INLINE_SMALL_FUNCTIONS 1 /* rcu_dereference loads with C11 atomics */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <urcu/urcu-memb.h>
#include <sweepfill/list_urcu.h>

struct item {
    struct cds_list_head link;
    int value;
    struct rcu_head rcu;
};

static CDS_LIST_HEAD(all);
static pthread_mutex_t writer = PTHREAD_MUTEX_INITIALIZER;
static int callbacks_done; /* written by the call_rcu thread, read after the barrier */

static void free_item(struct rcu_head *head)
{
    SWF_URCU_TSAN_CALLBACK(&urcu_memb_flavor, head);
    free(caa_container_of(head, struct item, rcu));
    callbacks_done++;
    SWF_URCU_TSAN_CALLBACK_END(&urcu_memb_flavor); /* the barrier's thread reads callbacks_done */
}

int main(void)
{
    urcu_memb_register_thread();
    for (int i = 1; i <= 3; i++) {
        struct item *it = calloc(1, sizeof(*it));
        if (it == NULL)
            return 1;
        it->value = i;
        pthread_mutex_lock(&writer);
        swf_cds_list_add_tail_rcu(&it->link, &all);
        pthread_mutex_unlock(&writer);
    }
    /* [man] */
    /* a reader */
    int sum = 0;
    struct item *it;
    urcu_memb_read_lock();
    cds_list_for_each_entry_rcu(it, &all, link)
    {
        sum += it->value;
    }
    SWF_URCU_TSAN_READ_UNLOCK(&urcu_memb_flavor);
    urcu_memb_read_unlock();

    /* a deleter that waits for the grace period itself */
    struct item *first = cds_list_first_entry(&all, struct item, link);
    pthread_mutex_lock(&writer);
    swf_cds_list_del_rcu(&first->link);
    pthread_mutex_unlock(&writer);
    urcu_memb_synchronize_rcu();
    SWF_URCU_TSAN_GRACE_OVER(&urcu_memb_flavor);
    free(first);

    /* a deleter that leaves the free to call_rcu (free_item begins with SWF_URCU_TSAN_CALLBACK) */
    struct item *second = cds_list_first_entry(&all, struct item, link);
    pthread_mutex_lock(&writer);
    swf_cds_list_del_rcu(&second->link);
    pthread_mutex_unlock(&writer);
    SWF_URCU_TSAN_CALL_RCU(&second->rcu);
    urcu_memb_call_rcu(&second->rcu, free_item);

    /* before exit: every callback has run */
    SWF_URCU_TSAN_BARRIER(&urcu_memb_flavor, urcu_memb_barrier());
    /* [man] */
    int left = 0;
    cds_list_for_each_entry(it, &all, link)
    {
        left += it->value;
    }
    printf("urcu_tsan_read_unlock: read sum %d, %d callback(s) run, left %d\n", sum, callbacks_done,
           left);
    int ok = sum == 6 && callbacks_done == 1 && left == 3;
    while (!cds_list_empty(&all)) {
        struct item *last = cds_list_first_entry(&all, struct item, link);
        swf_cds_list_del_rcu(&last->link);
        urcu_memb_synchronize_rcu();
        free(last);
    }
    urcu_memb_unregister_thread();
    return ok ? 0 : 1;
}
