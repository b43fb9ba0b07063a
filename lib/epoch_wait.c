/*
 * lib/epoch_wait.c - how sweepfill waits for a ck_epoch grace period.
 */
#include <ck_epoch.h>
#include <sched.h>

#include "util.h"

/*
 * ck calls this each time a scan finds a reader still inside an older section. Readers that hold
 * the grace period back are usually runnable but preempted (more threads than CPUs), so spinning
 * would only delay them: yield the CPU to them.
 */
void swf_epoch_wait_yield(struct ck_epoch *epoch, struct ck_epoch_record *rec, void *arg)
{
    (void)epoch, (void)rec, (void)arg;
    sched_yield();
}
