/*
 * docs/model/cursor.pml - the sweep's resumable cursor (include/sweepfill/abi/sweep_inline.h) on
 * the registry's pinnable list (lib/registry/registry.c), as a Promela model for spin.
 *
 * Processes, all racing:
 *   Sweeper   the RESUME sweep with section bound K (it leaves its section after every K
 *             visits) and a reserve of R objects with NOWAIT failing at any call (so it also
 *             leaves to refill); both exits pin the cursor, and after re-entering it checks
 *             that the cursor is still linked, continuing from it or restarting from the head.
 *             Then it finalises the members its last unpin orphaned (finalise_ready).
 *   Deleter   ND deletions in a row, each of any member linked at the time - the cursor
 *             included, while the sweep is outside its section - each followed by a grace
 *             period, the callback (pending bit while pinned) and finalisation.
 *   Adder     links NA new members at the head, with no object (a plain list: the sweep's
 *             contract says nothing about members added during it).
 * NI members are linked before the sweep starts.
 *
 * Properties (assertions, checked in every reachable state):
 *   - when the sweep returns 0, every member linked for its whole duration (linked at its start
 *     and still on the list at its end) has an object;
 *   - no object is published twice (publish_cas);
 *   - the sweep never touches a member after its release: pin, unpin, linked, next and the
 *     slot are all checked (touch); no object is freed while still published (free_obj);
 *   - nothing leaks and every deleted member is finalised and unpinned (conservation);
 *   - the sweep terminates: at most MAXV visits (assertion), no invalid end state, and the LTL
 *     property `term` (<> sweep_done) checked separately for acceptance cycles.
 *
 * Broken variants:
 *   BROKEN_NO_LINKED_CHECK   the cursor is trusted after re-entering (must fail: use after free)
 *   BROKEN_NO_UNPIN_WAIT     reclamation ignores pins (must fail: use after free)
 *   BROKEN_YIELD_RESTARTS    every yield restarts from the head instead of resuming (must fail
 *                            the termination check: acceptance cycle, or the visit bound)
 */
#ifndef NI
#define NI 3
#endif
#ifndef R
#define R 1
#endif
#ifndef K
#define K 1
#endif
#ifndef NA
#define NA 1
#endif
#define NM (NI + NA)
#define NR 1
#define ND 2
#define NO (NM + R + 1)
/* As in activation.pml: (1 + ND) passes of at most NM visits, one revisit per refill. */
#define MAXV ((1 + ND) * NM + NM + 1)

#ifdef BROKEN_YIELD_RESTARTS
#define YIELD_RESTARTS 1
#endif

#include "common.pml"

bool lstart[NM]; /* linked when the sweep started */

proctype Sweeper()
{
    byte m, nm, o, nres, res[R], visits, secv, err, i;
    bool won, fromres, isset, cont, wait_fails;
    d_step {
        i = 0;
        do
        :: i < NM -> lstart[i] = (mst[i] == M_LINKED); i++
        :: else -> i = 0; break
        od
    };
    sweep();
    if
    :: err == 0 ->
        d_step {
            i = head;
            do
            :: i != NIL -> assert(!lstart[i] || slot[i] != 0); i = nxt[i]
            :: else -> i = 0; break
            od
        }
    :: else
    fi;
    sweep_done = 1;
    finalise_orphans(i, o)
}

proctype Deleter()
{
    byte m, o, p, gi, k;
    bool rdy;
    do
    :: k < ND -> del(m, o, p, rdy, gi); k++
    :: else -> break
    od;
    k = 0
}

proctype Adder()
{
    byte n = NI;
    do
    :: n < NM -> d_step { lock(); insert_head(n); unlock(); n++ }
    :: else -> break
    od;
    n = 0
}

init {
    byte i;
    initial_list(NI, i);
    atomic {
        run Sweeper();
        run Deleter();
        run Adder()
    };
    (_nr_pr == 1);
    conservation(i)
}

ltl term { <> sweep_done }
