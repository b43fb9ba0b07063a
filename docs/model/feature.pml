/*
 * feature.pml - exact activation on a user's own list (include/sweepfill/feature.h,
 * lib/sweep/feature.c): adders racing an activation and a deactivation, on a machine that buffers
 * stores.
 *
 * Spin interleaves statements in one total order, so the reordering the fences are there for is
 * made explicit: each store of the race (an adder's link, the activator's raising of the flag)
 * first goes to its thread's store buffer and becomes visible later, at any moment the Memory
 * process chooses, or when a fence drains it (total store order: a load may pass an earlier
 * store of its own thread, which is what the store-buffering pattern needs, and all a weaker
 * machine adds for this pattern). The list is abstracted to which members are reachable; a walk
 * reaches, at the least, every member whose link was visible when the walk began (a member
 * linked later may or may not be reached: the model lets it be missed).
 *
 * Processes: member 0 is linked before anything starts; NA adders each link one member and call
 * swf_feature_added; the Activator raises the flag, runs barrier B and sweeps; then the
 * Deactivator clears the flag, waits for the adders counted in, walks taking every
 * slot, waits for a grace period and frees; a Deleter unlinks member 0 at any moment and
 * releases its object after a grace period (swf_feature_release). Objects are numbered; each
 * publication is a compare-and-swap from 0.
 *
 * Modes: -DMEMBARRIER: the adder's fence A is a compiler barrier only and barrier B drains every
 * thread's store buffer (membarrier); otherwise fence A is a full fence (the adder drains its
 * own buffer before reading the flag) and B drains the activator's.
 *
 * Properties (assertions):
 *   - when activate returns, every member linked and not deleted whose add returned has an
 *     object; an add that returns after activate returned and before deactivate began leaves
 *     its member with an object;
 *   - at the end (deactivated, everyone done) no member holds an object;
 *   - every object is freed exactly once (never twice: freed[o] checked before it is set), and
 *     all of them are freed at the end (no leak); no deadlock (invalid end states).
 * Broken variants (check.sh asserts each is caught):
 *   BROKEN_NO_FENCE          no fence A and no membarrier: the adder's link can stay buffered
 *                            past its read of the flag while the walk starts
 *   BROKEN_READ_BEFORE_LINK  the adder reads the flag before it links the member
 *   BROKEN_NO_DRAIN          deactivate walks without waiting for the adders counted in
 *   BROKEN_NO_RECHECK        a counted-in adder does not read the flag again after counting in
 *
 * Catch-up (-DCATCH_UP, its own processes and init at the end of this file): the feature is on
 * and member 0 holds an object; NA adders each link one member and call swf_feature_added,
 * whose allocation may fail (the member is owed: the owed count goes up); 2 CatchUp processes
 * each call swf_feature_catch_up (NC times), so two sweeps may be in flight, one of them
 * waiting for the mutex; a sweep's allocation may fail too (with -DSWEEP_FAILS: ENOMEM, counted
 * owed). The sweep visits members in index order, the adders' last, as a list whose newest
 * members are at its tail. swf_feature_catch_up snapshots the owed count and returns at once
 * only if a completed sweep covered it; else it takes the mutex, looks again, and sweeps; each
 * sweep reads the count as it begins and, completed, raises the covered count to it.
 * Property: when swf_feature_catch_up returns 0, every member owed before the call (its add had
 * returned EAGAIN when the call began) has an object. Broken variant:
 *   BROKEN_EARLY_RETURN      the previous code: one owed flag, cleared by a sweep as it begins,
 *                            read without the mutex; a caller that reads it clear while another
 *                            thread's sweep has not reached its owed member returns 0
 */
#ifndef NA
#define NA 2
#endif
#define N (NA + 1)
#define NOBJ 8

bool vis[N];      /* the member's link is visible: a walk beginning now reaches it */
bool pend[N];     /* its adder's link store is still in the adder's buffer */
bool deleted[N];
byte slot[N];     /* 0 or an object */
bool gate;        /* the flag, as other threads see it */
bool gate_pend;   /* the activator's store raising it, buffered */
byte adders_in;   /* adders counted in (the stripes, summed) */
byte nobj;        /* objects allocated so far: 1 .. nobj */
bool freed[NOBJ + 1];
bool act_done, deact_started, deact_done, walking;
bool returned[N]; /* swf_feature_added returned */
byte done;        /* processes finished */

inline free_obj(o)
{
    assert(!freed[o]);
    freed[o] = 1
}

/* Allocate, initialise, publish by compare-and-swap from 0; the loser frees its object (never
 * published, so at once). */
inline publish(m, o)
{
    atomic { nobj++; o = nobj };
    atomic {
        if
        :: slot[m] == 0 -> slot[m] = o
        :: else -> free_obj(o)
        fi
    };
    o = 0
}

#ifndef CATCH_UP
proctype Adder(byte m)
{
    byte o;
    bool g;
#ifdef BROKEN_READ_BEFORE_LINK
    g = gate;      /* BROKEN: the flag read before the link */
    pend[m] = 1;   /* link (into the buffer) */
#else
    pend[m] = 1;   /* link (into the buffer) */
#if !defined(MEMBARRIER) && !defined(BROKEN_NO_FENCE)
    atomic { pend[m] -> vis[m] = 1; pend[m] = 0 }   /* fence A: drain this thread's buffer */
#endif
    g = gate;      /* the inline path's relaxed load */
#endif
    if
    :: g ->
        adders_in++;   /* count in (C): a locked RMW drains the buffer */
        atomic { if :: pend[m] -> vis[m] = 1; pend[m] = 0 :: else fi };
#ifndef BROKEN_NO_RECHECK
        g = gate;
#endif
        if
        :: g && slot[m] == 0 -> publish(m, o)
        :: else
        fi;
        adders_in--    /* count out (release) */
    :: else
    fi;
    atomic {
        returned[m] = 1;
        /* An add that returns while the feature is fully on leaves its member filled. */
        assert(!(act_done && !deact_started) || slot[m] != 0)
    };
    done++
}

/* Stores leave the buffers in any order, at any time. */
proctype Memory()
{
    byte i;
end:
    do
    :: atomic { gate_pend -> gate = 1; gate_pend = 0 }
    :: atomic {
           i = 1;
           do
           :: i < N && !pend[i] -> i++
           :: i < N && pend[i] -> vis[i] = 1; pend[i] = 0; break
           :: i == N -> break
           od;
           i = 0
       }
    od
}

proctype Activator()
{
    byte i, o;
    bool seen[N];
    gate_pend = 1;   /* raise the flag (into the buffer) */
    atomic {         /* barrier B */
        if
        :: gate_pend -> gate = 1; gate_pend = 0
        :: else
        fi;
#if defined(MEMBARRIER) && !defined(BROKEN_NO_FENCE)
        /* membarrier: every thread executes a full barrier: all buffers drain */
        i = 1;
        do
        :: i < N -> if :: pend[i] -> vis[i] = 1; pend[i] = 0 :: else fi; i++
        :: i == N -> break
        od;
        i = 0
#endif
    };
    /* The sweep: reaches at least the members visible when it begins. */
    atomic {
        walking = 1;
        i = 0;
        do
        :: i < N -> seen[i] = vis[i]; i++
        :: i == N -> break
        od;
        i = 0
    };
    do
    :: i < N ->
        if
        :: seen[i] && slot[i] == 0 -> publish(i, o)   /* the relaxed check, then the CAS */
        :: else
        fi;
        i++
    :: i == N -> break
    od;
    atomic {
        walking = 0;
        act_done = 1;
        /* activate returned 0: every member linked, not deleted, and added has an object */
        i = 0;
        do
        :: i < N ->
            assert(!((vis[i] || pend[i]) && !deleted[i] && returned[i]) || slot[i] != 0);
            i++
        :: i == N -> break
        od;
        i = 0
    };
    done++
}

proctype Deactivator()
{
    byte i, nr;
    bool seen[N];
    byte taken[N];
    act_done;
    atomic { deact_started = 1; gate = 0 };   /* clear the flag (D) */
#ifndef BROKEN_NO_DRAIN
    adders_in == 0;                           /* wait for the adders counted in */
#endif
    atomic {
        walking = 1;
        i = 0;
        do
        :: i < N -> seen[i] = vis[i]; i++
        :: i == N -> break
        od;
        i = 0
    };
    do
    :: i < N ->
        atomic {
            if
            :: seen[i] && slot[i] != 0 -> taken[nr] = slot[i]; slot[i] = 0; nr++   /* exchange */
            :: else
            fi
        };
        i++
    :: i == N -> break
    od;
    walking = 0;
    /* the grace period (cfg.synchronize), then the frees */
    i = 0;
    do
    :: i < nr -> free_obj(taken[i]); i++
    :: i == nr -> break
    od;
    deact_done = 1;
    done++
}

/* Unlink member 0 at any moment; after its grace period (no walk that may hold it is running),
 * take its slot and free the object (swf_feature_release). */
proctype Deleter()
{
    byte o;
    atomic { vis[0] = 0; deleted[0] = 1 };
    !walking;
    atomic {
        o = slot[0];
        slot[0] = 0;
        if
        :: o != 0 -> free_obj(o)
        :: else
        fi
    };
    done++
}

init {
    byte i;
    vis[0] = 1;
    returned[0] = 1;
    atomic {
        i = 1;
        do
        :: i < N -> run Adder(i); i++
        :: i == N -> break
        od;
        run Memory();
        run Activator();
        run Deactivator();
        run Deleter()
    };
    done == NA + 3;
    /* Every buffered store is visible eventually; then: none holds an object, none leaked. */
    atomic {
        i = 0;
        do
        :: i < N -> assert(slot[i] == 0); i++
        :: i == N -> break
        od;
        i = 1;
        do
        :: i <= nobj -> assert(freed[i]); i++
        :: i > nobj -> break
        od
    }
}
#endif

#ifdef CATCH_UP
#ifndef NC
#define NC 1
#endif
#ifndef NCU
#define NCU 2
#endif
byte owed_seq;     /* x_owed: slots left empty, and sweeps that ran out of memory */
byte covered;      /* x_covered: the largest count a completed sweep read as it began */
bool owed_flag;    /* BROKEN_EARLY_RETURN: the previous code's x_owed flag */
bool owed_m[N];    /* the member's add returned EAGAIN (ghost) */
bool mutex;        /* f->lock */

/* One sweep under the mutex: 0, or 1 (ENOMEM). */
inline cu_sweep(err)
{
#ifdef BROKEN_EARLY_RETURN
    owed_flag = 0;   /* cleared as it begins: what it does not reach is owed still */
#else
    snap = owed_seq; /* acquire: the owed members counted so far are on the list */
#endif
    err = 0;
    i = 0;
    do
    :: i < N ->
        if
        :: vis[i] && slot[i] == 0 ->
            if
            :: publish(i, o)
#ifdef SWEEP_FAILS
            :: err = 1; break
#endif
            fi
        :: else
        fi;
        i++
    :: i == N -> break
    od;
    i = 0;
    if
    :: err ->
#ifdef BROKEN_EARLY_RETURN
        owed_flag = 1
#else
        owed_seq++
#endif
    :: else ->
#ifndef BROKEN_EARLY_RETURN
        if
        :: snap > covered -> covered = snap   /* release */
        :: else
        fi
#else
        skip
#endif
    fi
}

proctype CuAdder(byte m)
{
    byte o;
    vis[m] = 1;   /* linked (the fences are feature.pml's other mode) */
    if
    :: publish(m, o)           /* an object was ready */
    :: atomic {                /* none: EAGAIN, owed */
#ifdef BROKEN_EARLY_RETURN
           owed_flag = 1;
#else
           owed_seq++;         /* release, after the link */
#endif
           owed_m[m] = 1
       }
    fi;
    done++
}

proctype CatchUp()
{
    byte i, o, k, snap, before;   /* before: a bit per member owed when the call began */
    bool err;
    k = 0;
    do
    :: k < NC ->
        atomic {
            before = 0;
            i = 0;
            do
            :: i < N -> if :: owed_m[i] -> before = before | (1 << i) :: else fi; i++
            :: i == N -> break
            od;
            i = 0;
#ifndef BROKEN_EARLY_RETURN
            snap = owed_seq   /* acquire */
#endif
        };
        err = 0;
#ifdef BROKEN_EARLY_RETURN
        if
        :: owed_flag == 0 -> goto call_done   /* no mutex */
        :: else
        fi;
        atomic { !mutex -> mutex = 1 };
        if
        :: owed_flag -> cu_sweep(err)
        :: else
        fi;
#else
        if
        :: covered >= snap -> goto call_done   /* acquire: that sweep's publications */
        :: else
        fi;
        atomic { !mutex -> mutex = 1 };
        if
        :: covered < snap -> cu_sweep(err)
        :: else
        fi;
#endif
        mutex = 0;
call_done:
        atomic {
            i = 0;
            do
            :: i < N ->
                assert(err || !(before & (1 << i)) || slot[i] != 0);
                i++
            :: i == N -> break
            od;
            i = 0
        };
        k++
    :: k == NC -> break
    od;
    done++
}

init {
    byte i;
    atomic {
        vis[0] = 1;
        slot[0] = 1;   /* on: member 0 has the activation's object */
        nobj = 1;
        i = 1;
        do
        :: i < N -> run CuAdder(i); i++
        :: i == N -> break
        od;
        i = 0;
        do
        :: i < NCU -> run CatchUp(); i++
        :: i == NCU -> break
        od
    };
    done == NA + NCU
}
#endif
