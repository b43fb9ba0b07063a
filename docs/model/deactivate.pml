/*
 * docs/model/deactivate.pml - the registry's deactivation (lib/registry/registry.c:
 * swf_registry_deactivate, unpublish_all, retire, barrier) racing add, del and a reader, with the
 * epoch records of deactivate and the reader, as a Promela model for spin.
 *
 * Processes, all racing, from a registry that is active with NI members each holding an object
 * (what activate returning 0 leaves):
 *   Deactivator  swf_registry_deactivate, called again once if it returns ENOMEM: takes its
 *                reader record (which may fail: REC_FAILS), clears the active flag under the
 *                writer mutex, takes every slot with an exchange in a walk with section bound K,
 *                leaving its section with the cursor pinned every K visits or when B objects are
 *                taken, to retire them (deferred free; with RETIRE_FAILS the deferral may fail,
 *                and the objects are freed after a synchronous grace period, ENOMEM); then a
 *                barrier (grace period) frees every retired object, and it finalises the members
 *                its last unpin orphaned.
 *   Adder x NA   swf_registry_add of a new member, as in activation.pml: with the flag set it
 *                publishes an object before linking.
 *   Deleter      swf_registry_del of any linked member (chosen at the time), then the grace
 *                period, the callback (pending bit if pinned) and finalisation.
 *   Reader       one walk in a read-side section; it checks every object it loads, and checks
 *                the last one again just before it leaves (still valid until it leaves).
 * With RECORDS the epoch records are modelled too: the deactivating thread's binding to its
 * record may be given back (reader_release) where the thread calls into another TLS owner (in
 * retire) and after deactivate; the reader takes its record with ck_epoch_recycle, so it gets
 * the deactivator's record if that one was unregistered, and gives its binding back when its
 * thread ends.
 *   Monitor      checks the invariants in every reachable state.
 *
 * Properties (assertions; every reachable state of every interleaving):
 *   - every object is freed exactly once, and never while published (free_obj): del's
 *     finalise and deactivate's exchange never both free an object;
 *   - no reader dereferences a freed or reused object: an object it loaded is initialised and
 *     still the member's (or taken by deactivate and not yet freed) until it leaves (Reader);
 *   - nothing touches a member after its release (touch), the walk included;
 *   - while the flag is set every linked member has an object, and once deactivate has
 *     returned with the flag clear no linked member has one (Monitor): adds after the flag
 *     cleared assign nothing, adds before it published before it, and an ENOMEM return leaves
 *     the registry active and filled;
 *   - no leak: at the end every object is free or in the slot of a live member (conservation);
 *   - the walk terminates: at most MAXV visits; no invalid end state (deadlock).
 *
 * Broken variants (each must be caught):
 *   BROKEN_CLEAR_THEN_FAIL   the flag is cleared before the reader record is taken: an ENOMEM
 *                            return leaves an inactive registry with objects published, and the
 *                            caller's retry gets EALREADY (the old order)
 *   BROKEN_FLAG_AFTER_WALK   the flag is cleared after the walk: an add in between publishes
 *   BROKEN_RETIRE_NO_GRACE   taken objects are freed at once, not after a grace period
 *   BROKEN_DEACT_NO_TAKE     the walk loads a slot and retires its object without emptying it
 *   BROKEN_EVICT_IGNORES_HELD  (RECORDS) reader_release unregisters a record that a walk holds
 *                            across sections: the reader recycles it, unregisters it when its
 *                            thread ends, and grace periods stop waiting for the walk's sections
 */
#ifndef NI
#define NI 2
#endif
#ifndef NA
#define NA 1
#endif
#ifndef K
#define K 1
#endif
#ifndef B
#define B 2
#endif
#define NM (NI + NA)
#define NR 2 /* records: 0 the deactivating thread's, 1 the reader's own */
#define ND 1
/* Objects: at most one per member alive at a time (taken ones until freed), and NULL. */
#define NO (NM + 1)
/* The walk restarts from the head only when a deletion took its cursor: at most 1 + ND passes
 * of at most NM visits. */
#define MAXV ((1 + ND) * NM)

#define EALREADY 114

#ifdef RECORDS
/* Record states: never made, registered, unregistered (ck_epoch_unregister: free for
 * ck_epoch_recycle). held: a walk uses it across sections; detached: its binding was given back
 * while in use, so its user unregisters it when done (reader_done_with). */
#define R_NONE 0
#define R_USED 1
#define R_FREE 2
byte rstate[NR];
bool held[NR];
bool detached[NR];
#define REC_USED(i) (rstate[i] == R_USED)
#endif

#define OWN_READER /* the reader below also checks what it holds when it leaves */
#include "common.pml"

bool flag_on = 1;   /* struct swf_registry.x_active: activate returned 0 before the model */
bool retired[NO];   /* taken by deactivate, waiting for its grace period */
bool deact_done = 0; /* deactivate (and its one retry) returned */
bool dbound = 0;    /* the deactivating thread has a bound reader record (record 0) */
byte deact_ret = NIL;

/* ---- reader records (lib/registry/registry.c: reader_get, reader_release, reader_done_with) */

inline unregister(p)
{
#ifdef RECORDS
    rstate[p] = R_FREE
#else
    skip
#endif
}

/* reader_release: the thread's binding is given back. */
inline reader_release(p)
{
#ifdef RECORDS
#ifdef BROKEN_EVICT_IGNORES_HELD
    if
    :: insec[p] == 0 -> unregister(p) /* BROKEN: a walk holding it across sections is ignored */
    :: else -> detached[p] = 1
    fi
#else
    if
    :: insec[p] == 0 && !held[p] -> unregister(p)
    :: else -> detached[p] = 1
    fi
#endif
#else
    skip
#endif
}

/* The deactivating thread's binding is given back (RECORDS): swf_tls evicts it when the thread
 * binds another owner's state to the same TLS way, i.e. where the thread calls into the cache:
 * in retire (swf_cache_free_deferred, outside any section, the record held) and after
 * deactivate (any later call); and at thread exit, also after deactivate. Nowhere else in
 * deactivate does the thread touch TLS, so the binding cannot go anywhere else (between
 * reader_get and held++ in particular). At most once. */
inline evict_point()
{
#ifdef RECORDS
    if
    :: dbound -> dbound = 0; reader_release(0)
    :: skip
    fi
#else
    skip
#endif
}

/* reader_done_with: after leaving a section or letting go of a held record. */
inline reader_done_with(p)
{
#ifdef RECORDS
    if
    :: detached[p] && insec[p] == 0 && !held[p] -> detached[p] = 0; unregister(p)
    :: else
    fi
#else
    skip
#endif
}

/* ---- deactivate --------------------------------------------------------------------------- */

inline take_for_retire(m, o)
{
#ifdef BROKEN_DEACT_NO_TAKE
    o = slot[m] /* BROKEN: the object is retired but stays published */
#else
    take_slot(m, o) /* swf_slot_take: an exchange with NULL */
#endif
}

inline free_retired(o)
{
    retired[o] = 0;
    free_obj(o)
}

/* retire(): the batch goes to swf_cache_free_deferred on the registry's epoch record, freed
 * after a grace period (the barrier at the end); with RETIRE_FAILS there may be no magazine for
 * it, and the batch is freed after a synchronous grace period instead (ENOMEM). Called outside
 * any section. */
inline retire()
{
    if
    :: nb == 0
    :: nb > 0 ->
        evict_point();
#ifdef BROKEN_RETIRE_NO_GRACE
        d_step { /* BROKEN: freed at once, not after a grace period */
            do
            :: nb > 0 -> nb--; o = batch[nb]; batch[nb] = 0; free_retired(o)
            :: else -> break
            od
        }
#else
#ifdef RETIRE_FAILS
        if
        :: d_step { /* deferred: freed by the barrier */
               do
               :: nb > 0 -> nb--; batch[nb] = 0
               :: else -> break
               od
           }
        :: grace(1, gi); /* ck_epoch_synchronize_wait, then swf_cache_free */
            d_step {
                do
                :: nb > 0 -> nb--; o = batch[nb]; batch[nb] = 0; free_retired(o)
                :: else -> break
                od;
                err = ENOMEM
            }
        fi
#else
        d_step {
            do
            :: nb > 0 -> nb--; batch[nb] = 0
            :: else -> break
            od
        }
#endif
#endif
    fi
}

/* reader_get for the deactivating thread: its bound record, or a new one (record 0), which may
 * fail to be allocated with REC_FAILS. */
inline get_record(ok)
{
    if
    :: dbound -> ok = 1
#ifdef REC_FAILS
    :: !dbound -> ok = 0 /* posix_memalign failed: ENOMEM */
#endif
    :: !dbound ->
        d_step {
#ifdef RECORDS
            assert(rstate[0] == R_NONE); /* (one deactivate call makes it: no recycling here) */
            rstate[0] = R_USED; held[0] = 0; detached[0] = 0;
#endif
            dbound = 1; ok = 1
        }
    fi
}

inline clear_flag()
{
    d_step { lock(); flag_on = 0; unlock() } /* set_active(r, 0); r->complete = 0 */
}

/* unpublish_all: take every slot, in sections bounded by K visits or B taken objects, with the
 * cursor pinned while outside, as the sweep walks. */
inline unpublish_all()
{
    d_step {
#ifdef RECORDS
        held[0] = 1;
#endif
        enter(0); secv = 0; m = head
    };
    do
    :: m == NIL -> break
    :: else ->
        d_step {
            visits++;
            assert(visits <= MAXV); /* the bounded-loop termination check */
            touch(m);
            take_for_retire(m, o);
            if
            :: o != 0 -> retired[o] = 1; batch[nb] = o; nb++; o = 0
            :: else
            fi;
            secv++
        };
        if
        :: nb < B && (K == 0 || secv < K) -> d_step { touch(m); m = nxt[m] }
        :: else ->
            /* leave the section to hand the batch over, or to bound it */
            d_step { pin(m); leave(0); reader_done_with(0) };
            retire();
            d_step { enter(0); secv = 0; touch(m); cont = (mst[m] == M_LINKED) };
            if
            :: cont -> d_step { touch(m); nm = nxt[m] }; d_step { unpin(m); m = nm; nm = 0; cont = 0 }
            :: else -> d_step { unpin(m); m = head } /* the cursor was deleted: from the head */
            fi
        fi
    od;
    m = 0; /* (a plain statement: a loop's exit may not jump into a d_step) */
    d_step { leave(0); reader_done_with(0); secv = 0; visits = 0 };
    retire();
    d_step {
#ifdef RECORDS
        held[0] = 0;
#endif
        reader_done_with(0)
    }
}

/* swf_registry_deactivate: ret = 0, EALREADY or ENOMEM. */
inline deactivate()
{
    d_step { ret = 0; err = 0; if :: !flag_on -> ret = EALREADY :: else fi };
    if
    :: ret == EALREADY
    :: else ->
#ifdef BROKEN_CLEAR_THEN_FAIL
        clear_flag(); /* BROKEN: the flag is cleared before what can fail */
#endif
        get_record(ok);
        if
        :: !ok -> ret = ENOMEM
        :: else ->
#if !defined(BROKEN_CLEAR_THEN_FAIL) && !defined(BROKEN_FLAG_AFTER_WALK)
            clear_flag();
#endif
            unpublish_all();
#ifdef BROKEN_FLAG_AFTER_WALK
            clear_flag(); /* BROKEN: an add between the walk and this publishes */
#endif
            /* barrier(): a grace period, then the deferred frees run */
            grace(1, gi);
            d_step {
                i = 1;
                do
                :: i < NO && retired[i] -> o = i; free_retired(o); i++
                :: i < NO && !retired[i] -> i++
                :: else -> i = 0; break
                od;
                ret = err; err = 0
            };
            finalise_orphans(i, o) /* finalise_ready(r, true) */
        fi;
        ok = 0
    fi
}

proctype Deactivator()
{
    byte m, nm, o, nb, batch[B], visits, secv, err, ret, i, gi, tries;
    bool ok, cont;
    do
    :: tries < 2 ->
        tries++;
        deactivate();
        if
        :: ret == ENOMEM /* the caller tries again */
        :: else -> break
        fi
    :: else -> break
    od;
    tries = 0;
    d_step { deact_ret = ret; deact_done = 1; ret = 0 };
    evict_point() /* the thread goes on to other calls, or ends */
}

/* swf_registry_add of member n (activation.pml's Adder without the broken switches). */
proctype Adder(byte n)
{
    byte o;
    bool f;
    atomic { lock(); f = flag_on };
    d_step {
        if
        :: f -> alloc(o); init_obj(o); publish_store(n, o); o = 0
        :: else
        fi;
        insert_head(n);
        f = 0;
        unlock()
    }
}

proctype Deleter()
{
    byte m, o, p, gi;
    bool rdy;
    del(m, o, p, rdy, gi)
}

/* An object the reader loaded from member hm is still safe to read: initialised, and still
 * hm's or taken by deactivate and waiting for its grace period (not freed, not reused). */
#define STILL_VALID(o, hm) (ost[o] == O_INIT && (owner[o] == hm || retired[o]))

proctype Reader()
{
    byte m, o, h, hm, rr = 1;
    bool valid;
#ifdef RECORDS
    d_step { /* reader_get: ck_epoch_recycle hands out an unregistered record if there is one */
        if
        :: rstate[0] == R_FREE -> rr = 0; held[0] = 0; detached[0] = 0
        :: else -> rr = 1
        fi;
        rstate[rr] = R_USED
    };
#endif
    d_step { enter(rr); m = head };
    do
    :: m == NIL -> break
    :: else ->
        d_step { touch(m); o = slot[m] }; /* swf_node_object: the acquire load */
        d_step {
            if
            :: o != 0 ->
                valid = STILL_VALID(o, m);
                assert(valid);
                h = o; hm = m; o = 0
            :: else
            fi;
            touch(m);
            m = nxt[m]
        }
    od;
    m = 0;
    d_step {
        /* the last object loaded is still safe to read when the section ends */
        if
        :: h != 0 -> valid = STILL_VALID(h, hm); assert(valid); h = 0; hm = 0
        :: else
        fi;
        leave(rr);
        reader_done_with(rr)
    };
#ifdef RECORDS
    d_step { reader_release(rr) } /* the reading thread ends: its binding is given back */
#endif
}


#define LINKED_FILLED(i) (i >= NM || mst[i] != M_LINKED || slot[i] != 0 || unlinking == i)
#define LINKED_EMPTY(i) (i >= NM || mst[i] != M_LINKED || slot[i] == 0 || unlinking == i)
#define ALL_FILLED \
    (LINKED_FILLED(0) && LINKED_FILLED(1) && LINKED_FILLED(2) && LINKED_FILLED(3) && LINKED_FILLED(4))
#define ALL_EMPTY (LINKED_EMPTY(0) && LINKED_EMPTY(1) && LINKED_EMPTY(2) && LINKED_EMPTY(3) && LINKED_EMPTY(4))

/* While active, every linked member has an object; once deactivate has returned with the flag
 * clear, none has. MONITOR_INACTIVE_ONLY leaves out the first, to show what a broken variant
 * does after deactivate returns. */
#ifdef MONITOR_INACTIVE_ONLY
#define ACTIVE_BAD false
#else
#define ACTIVE_BAD (flag_on && !ALL_FILLED)
#endif

proctype Monitor()
{
    bool active_filled, inactive_empty;
end:
    atomic {
        ACTIVE_BAD || (deact_done && !flag_on && !ALL_EMPTY) ->
        active_filled = !flag_on || ALL_FILLED;
        inactive_empty = flag_on || ALL_EMPTY;
#ifndef MONITOR_INACTIVE_ONLY
        assert(active_filled);
#endif
        assert(inactive_empty)
    }
}

/* Members 0 .. NI-1 linked, each with an initialised object (activate returned 0). */
inline initial_filled(i, o)
{
    d_step {
        i = 0;
        do
        :: i < NO -> owner[i] = NIL; i++
        :: else -> break
        od;
        i = NI;
        do
        :: i > 0 -> i--; alloc(o); init_obj(o); publish_store(i, o); insert_head(i); o = 0
        :: else -> break
        od
    }
}

init {
    byte i, o;
    initial_filled(i, o);
    atomic {
        run Monitor(); /* first: a process ends only after those started later (it never does) */
        run Deactivator();
        i = 0;
        do
        :: i < NA -> run Adder(NI + i); i++
        :: else -> i = 0; break
        od;
        run Deleter();
        run Reader()
    };
    (_nr_pr == 2); /* all but the monitor have finished */
    conservation(i);
    d_step {
        i = 1;
        do
        :: i < NO -> assert(!retired[i]); i++ /* every taken object was freed */
        :: else -> i = 0; break
        od
    }
}

ltl term { <> deact_done }
