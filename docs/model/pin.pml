/*
 * docs/model/pin.pml - the library's pin (include/sweepfill/pin.h, lib/sweep/pin.c): swf_pin_retire
 * racing the sweeps' swf_pin_put, with the grace period of an epoch/RCU list (ck_epoch_call,
 * call_rcu) or of a lock-protected list (swf_grace_lock: the unlink under the write lock is the
 * grace period), as a Promela model for spin.
 *
 * The pin word is modelled as its three parts, each operation on it one atomic step, as the C
 * code's single read-modify-write on one 32-bit word:
 *   get         (swf_pin_get)        cnt++
 *   put         (swf_pin_put)        cnt--; free if it took cnt to 0 with GRACE_OVER set
 *   retire      (swf_pin_retire)     RETIRED := 1, then the grace mechanism's defer
 *   grace_over  (swf_pin_grace_over) GRACE_OVER := 1; free if cnt was 0
 *   linked      (swf_pin_linked)     !RETIRED
 *
 * Processes, all racing:
 *   Sweeper     NS (1 or 2) bounded RESUME walks (section bound 1: they leave after every
 *               visit): pin the cursor, leave, enter, check linked, then follow the cursor's
 *               next and unpin (a section bound), or (NREFILL times) unpin and visit the cursor
 *               again in the same section (a refill: swf_run_dry_), or restart from the head
 *               (lost cursor). With two, a member can be pinned twice.
 *   Deleter     ND deletions of any linked member (a sweep's cursor included), each: unlink and
 *               retire under the writer lock, then (MODE_DEFER) a grace period and grace_over,
 *               or (MODE_LOCK) grace_over at once inside the write-locked retire.
 *   Reader      (with -DREADER) one walk inside a section.
 * MODE_DEFER: sections are ck_epoch/RCU read-side sections; the writer lock excludes writers
 * only. MODE_LOCK: sections take the read side of an rwlock that the deleter takes for writing.
 *
 * Properties (assertions in every reachable state, plus spin's invalid-end-state check):
 *   - exactly once: a member is never freed twice (free_member), and when everything has ended
 *     every retired member has been freed (no leak) with no pin left (init);
 *   - never too early: no sweep or reader touches a freed member (touch): not through a pin,
 *     not through a stale next pointer;
 *   - a pin is never taken after its member's grace period ended (get);
 *   - completeness: each sweep visited every member linked for its whole duration;
 *   - termination: each sweep makes at most MAXV visits (and LTL <> done, run separately).
 *
 * Broken variants (each must fail, docs/model/check.sh asserts the error):
 *   BROKEN_GRACE_SPLIT      grace_over reads the pin count and sets GRACE_OVER in two steps: a
 *                           put between them sees no GRACE_OVER and the callback saw a pin, so
 *                           nobody frees (a leak)
 *   BROKEN_PUT_NO_GRACE     put frees at count 0 once RETIRED, without waiting for GRACE_OVER:
 *                           a free before the grace period (a reader or the other sweep touches
 *                           the freed member) or a second free by grace_over
 *   BROKEN_RETIRE_LATE      the retire rule broken: the deleter unlinks a member, unlinks and
 *                           retires the next one, and retires the first only then; a sweep pinned
 *                           on the first still sees it linked after the second was freed, and
 *                           follows its stale next into freed memory
 *   BROKEN_LOCK_IGNORES_PIN (MODE_LOCK) retire frees at once even while a sweep holds the pin:
 *                           the sweep's linked check reads freed memory
 *   BROKEN_LINKED_TRUE      linked says true for a retired member (right for a walk by key,
 *                           wrong for the sweep): after a refill the sweep's put frees the
 *                           retired cursor and its revisit reads freed memory
 */
#ifndef NM
#define NM 4
#endif
#ifndef ND
#define ND 2
#endif
#ifndef NREFILL
#define NREFILL 1            /* refills (unpin, then revisit) a sweep may make */
#endif
#ifndef NS
#define NS 2                 /* sweepers: 1 or 2 */
#endif
#define NP (NS + 1)          /* section owners: sweepers 0..NS-1, the reader NS */
#define NIL 255
#define MAXV ((1 + ND) * NM + NREFILL) /* a pass is at most NM visits; a restart only per
                                        * lost cursor; one revisit per refill */

#define M_LINKED  1
#define M_UNLINKED 2
#define M_FREED   3

byte head = NIL;
byte nxt[NM];
byte mst[NM];
byte cnt[NM];          /* pins */
bool retired[NM];      /* RETIRED */
bool graceover[NM];    /* GRACE_OVER */
bool lstart[NS * NM];  /* linked when sweeper s started */
bool vis[NS * NM];     /* visited by sweeper s */
bool insec[NP];        /* MODE_DEFER: inside a read-side section */
bool waitfor[NP];      /* MODE_DEFER: the grace period in progress waits for that section */
byte readers = 0;      /* MODE_LOCK: read-side holders */
bool wlocked = 0;      /* the writer lock (MODE_LOCK: the rwlock's write side) */
byte sweeps_done = 0;

inline touch(m)
{
    assert(mst[m] != M_FREED)
}

inline free_member(m)
{
    assert(mst[m] != M_FREED); /* exactly once */
    assert(cnt[m] == 0);
    mst[m] = M_FREED
}

/* swf_pin_grace_over: one read-modify-write (an add of the bit, reading the count). */
inline grace_over(m)
{
    assert(retired[m] && !graceover[m]);
    graceover[m] = 1;
    if
    :: cnt[m] == 0 -> free_member(m)
    :: else
    fi
}

inline get(m)
{
    touch(m);
    assert(!graceover[m]); /* a pin is always taken before the grace period ends */
    cnt[m]++
}

inline put(m)
{
    touch(m);
    assert(cnt[m] > 0);
    cnt[m]--;
#ifdef BROKEN_PUT_NO_GRACE
    if
    :: cnt[m] == 0 && retired[m] -> free_member(m) /* BROKEN: does not wait for GRACE_OVER */
    :: else
    fi
#else
    if
    :: cnt[m] == 0 && graceover[m] -> free_member(m)
    :: else
    fi
#endif
}

/* Read-side sections. */
inline enter(p)
{
#ifdef MODE_LOCK
    atomic { !wlocked -> readers++ }
#else
    insec[p] = 1
#endif
}

inline leave(p)
{
#ifdef MODE_LOCK
    readers--
#else
    insec[p] = 0; waitfor[p] = 0
#endif
}

inline wlock()
{
#ifdef MODE_LOCK
    atomic { !wlocked && readers == 0 -> wlocked = 1 }
#else
    atomic { !wlocked -> wlocked = 1 }
#endif
}

/* MODE_DEFER: a grace period waits for every section in progress when it began. */
inline grace(gi)
{
    d_step {
        gi = 0;
        do
        :: gi < NP -> waitfor[gi] = insec[gi]; gi++
        :: else -> break
        od;
        gi = 0
    };
    do
    :: gi < NP -> (waitfor[gi] == 0); gi++
    :: else -> break
    od;
    gi = 0
}

/* The list's remove: one store to the predecessor's next; the member's own next stays. */
inline list_remove(m, p)
{
    if
    :: head == m -> head = nxt[m]
    :: else ->
        p = 0;
        do
        :: !(mst[p] == M_LINKED && nxt[p] == m) -> p++; assert(p < NM)
        :: else -> break
        od;
        nxt[p] = nxt[m]
    fi;
    mst[m] = M_UNLINKED;
    p = 0
}

inline choose_linked(m)
{
    if
    :: mst[0] == M_LINKED -> m = 0
    :: NM > 1 && mst[1] == M_LINKED -> m = 1
    :: NM > 2 && mst[2] == M_LINKED -> m = 2
    :: NM > 3 && mst[3] == M_LINKED -> m = 3
    :: NM > 4 && mst[4] == M_LINKED -> m = 4
    :: else -> m = NIL
    fi
}

/* Unlink m under the writer lock and retire it: RETIRED, then the grace mechanism. */
inline delete_one(m, p, gi)
{
    atomic {
        wlock();
        choose_linked(m);
        if
        :: m != NIL -> list_remove(m, p)
        :: else -> wlocked = 0
        fi
    };
    if
    :: m != NIL ->
#ifdef MODE_LOCK
        /* swf_grace_lock: the grace period is over inside the write-locked retire */
        d_step {
            retired[m] = 1;
#ifdef BROKEN_LOCK_IGNORES_PIN
            graceover[m] = 1; mst[m] = M_FREED; /* BROKEN: frees though a sweep holds a pin */
#else
            grace_over(m);
#endif
            wlocked = 0
        }
#else
        d_step { retired[m] = 1; wlocked = 0 };
        grace(gi);
#ifdef BROKEN_GRACE_SPLIT
        /* BROKEN: the count is read in one step and the bit set in another */
        d_step { assert(retired[m]); c = cnt[m] };
        d_step {
            graceover[m] = 1;
            if
            :: c == 0 -> free_member(m)
            :: else
            fi;
            c = 0
        }
#else
        d_step { grace_over(m) }
#endif
#endif
    :: else
    fi;
    m = 0
}

#ifdef BROKEN_RETIRE_LATE
/* BROKEN: unlink a, then unlink and retire b (whose grace period can end), then retire a. */
inline delete_two_late(a, b, p, gi)
{
    atomic { wlock(); choose_linked(a); if :: a != NIL -> list_remove(a, p) :: else fi; wlocked = 0 };
    atomic {
        wlock();
        choose_linked(b);
        if
        :: b != NIL -> list_remove(b, p); retired[b] = 1
        :: else
        fi;
        wlocked = 0
    };
    if
    :: b != NIL -> grace(gi); d_step { grace_over(b) }
    :: else
    fi;
    if
    :: a != NIL -> d_step { wlock(); retired[a] = 1; wlocked = 0 }; grace(gi); d_step { grace_over(a) }
    :: else
    fi;
    a = 0; b = 0
}
#endif

proctype Sweeper(byte s)
{
    byte m, nm, visits, i, refills;
    bool cont;
    d_step {
        i = 0;
        do
        :: i < NM -> lstart[s * NM + i] = (mst[i] == M_LINKED); i++
        :: else -> i = 0; break
        od
    };
    enter(s);
    m = head;
    do
    :: m == NIL -> break
    :: else ->
        /* the visit, then the section bound (1): pin the cursor and leave (one step: a
         * deletion of m between them is explored as one before the visit or after the leave,
         * with the same grace period outcome: it cannot end before the leave either way) */
        d_step {
            visits++;
#ifndef NO_VISIT_BOUND
            assert(visits <= MAXV);
#endif
            touch(m);
            vis[s * NM + m] = 1;
            get(m);
            leave(s)
        };
        enter(s);
#ifdef BROKEN_LINKED_TRUE
        d_step { touch(m); cont = 1 }; /* BROKEN: linked ignores the retire (a key-walk's idea) */
#else
        d_step { touch(m); cont = !retired[m] }; /* swf_pin_linked */
#endif
        if
        :: cont -> d_step { touch(m); nm = nxt[m] }; d_step { put(m); m = nm; nm = 0 }; cont = 0
        :: cont && refills < NREFILL ->
            /* a refill (swf_run_dry_): unpin, then visit the same member again */
            d_step { put(m); refills++; cont = 0 }
        :: else -> d_step { put(m); m = head } /* lost cursor: restart from the head */
        fi
    od;
    leave(s);
    /* completeness: every member linked at the start and still linked now was visited */
    d_step {
        i = 0;
        do
        :: i < NM -> assert(!lstart[s * NM + i] || mst[i] != M_LINKED || vis[s * NM + i]); i++
        :: else -> i = 0; break
        od;
        sweeps_done++
    }
}

proctype Deleter()
{
    byte m, m2, p, gi, k, c;
#ifdef BROKEN_RETIRE_LATE
    delete_two_late(m, m2, p, gi);
#else
    do
    :: k < ND -> delete_one(m, p, gi); k++
    :: else -> break
    od;
#endif
    k = 0; c = 0
}

proctype Reader()
{
    byte m;
    enter(NS);
    m = head;
    do
    :: m == NIL -> break
    :: else -> d_step { touch(m); m = nxt[m] }
    od;
    leave(NS)
}

init {
    byte i;
    d_step {
        i = NM;
        do
        :: i > 0 -> i--; mst[i] = M_LINKED; nxt[i] = head; head = i
        :: else -> break
        od
    };
    atomic {
        run Sweeper(0);
        if
        :: NS > 1 -> run Sweeper(1)
        :: else
        fi;
        run Deleter();
#ifdef READER
        run Reader()
#endif
    };
    (_nr_pr == 1);
    /* exactly once, no leak: every unlinked member was freed, no pin is left */
    d_step {
        i = 0;
        do
        :: i < NM ->
            assert(cnt[i] == 0);
            assert(mst[i] != M_UNLINKED);
            i++
        :: else -> break
        od
    }
}

ltl term { <> (sweeps_done == NS) }
