/* examples/man/pin_retire.c - swf_pin_retire(3)'s example: a deleter retires a member that a
 * sweep holds pinned; the member is freed once, by the last of the grace period and the put. */
#include <pthread.h>
#include <stdlib.h>

#include <ck_epoch.h>
#include <ck_queue.h>
#include <sweepfill/pin.h>

/* [man] */
static int freed; /* how many times free_task ran */

struct task {
    CK_LIST_ENTRY(task) link;
    int id;
    struct swf_pin pin; /* zero-filled by calloc: no swf_pin_init needed */
};
CK_LIST_HEAD(task_list, task);

static pthread_mutex_t writers = PTHREAD_MUTEX_INITIALIZER;

static void free_task(struct swf_pin *pin)
{
    struct task *t = SWF_CONTAINER_OF(pin, struct task, pin);
    freed++;
    free(t);
}

/* the deleter, on the thread that owns the epoch record own */
static void delete_task(struct task *t, ck_epoch_record_t *own)
{
    struct swf_grace grace;
    swf_grace_epoch(&grace, own);
    pthread_mutex_lock(&writers);
    CK_LIST_REMOVE(t, link);
    swf_pin_retire(&t->pin, &grace, free_task); /* right after the unlink */
    pthread_mutex_unlock(&writers);
}
/* [man] */

int main(void)
{
    static ck_epoch_t epoch;
    static ck_epoch_record_t rec;
    struct task_list tasks = CK_LIST_HEAD_INITIALIZER(tasks);
    ck_epoch_init(&epoch);
    ck_epoch_register(&epoch, &rec, NULL);
    struct task *t = calloc(1, sizeof(*t));
    if (t == NULL)
        return 1;
    CK_LIST_INSERT_HEAD(&tasks, t, link);

    /* What a sweep does: pin the member it stands on inside a read-side section. */
    ck_epoch_begin(&rec, NULL);
    struct task *first = CK_LIST_FIRST(&tasks);
    swf_pin_get(&first->pin);
    ck_epoch_end(&rec, NULL);

    delete_task(t, &rec);
    ck_epoch_barrier(&rec); /* the grace period ends: still pinned, so not freed */
    if (freed != 0 || swf_pin_linked(&first->pin))
        return 1;
    swf_pin_put(&first->pin); /* the last put frees */
    return freed == 1 ? 0 : 1;
}
