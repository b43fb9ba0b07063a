/*
 * test/concurrent/turns.h - an adder and a deleter taking turns, for the tests that put a delete
 * exactly where a caller's retry would run (feature_retry*.c): between the adder's unlock and
 * what it does next.
 *
 * The adder thread marks itself (turns_adder(true)); its wrapped unlock calls turns_give(), which
 * hands the deleter a turn and waits (yielding, by count, never by time) until the deleter says
 * turns_served(). The deleter loops on turns_take(), which returns false once the adder called
 * turns_stop(). Every store is a release and every load an acquire: what one side did before
 * handing over is what the other sees after.
 */
#ifndef SWF_TEST_TURNS_H
#define SWF_TEST_TURNS_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

static uint32_t turns_turn, turns_done, turns_stopped;
static _Thread_local bool turns_is_adder;

static inline void turns_adder(bool on)
{
    turns_is_adder = on;
}

/* On the adder's thread only: the deleter's turn, then back once it is served. */
static inline void turns_give(void)
{
    if (!turns_is_adder)
        return;
    uint32_t before = __atomic_load_n(&turns_done, __ATOMIC_ACQUIRE);
    __atomic_store_n(&turns_turn, 1, __ATOMIC_RELEASE);
    for (long i = 0; i < 100000000L && __atomic_load_n(&turns_done, __ATOMIC_ACQUIRE) == before;
         i++)
        sched_yield();
}

/* The deleter: wait for a turn; false when the adder has stopped. */
static inline bool turns_take(void)
{
    while (!__atomic_exchange_n(&turns_turn, 0, __ATOMIC_ACQ_REL))
        sched_yield();
    return !__atomic_load_n(&turns_stopped, __ATOMIC_ACQUIRE);
}

static inline void turns_served(void)
{
    __atomic_fetch_add(&turns_done, 1, __ATOMIC_RELEASE);
}

/* The adder is done: the deleter's next turns_take returns false. */
static inline void turns_stop(void)
{
    __atomic_store_n(&turns_stopped, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&turns_turn, 1, __ATOMIC_RELEASE);
}

#endif /* SWF_TEST_TURNS_H */
