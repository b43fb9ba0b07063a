/*
 * owed.pml - a feature's owed table (lib/sweep/owed.h, owed.c; lib/sweep/feature.c: fill, owe,
 * publish_owed, fill_owed, clear_owed, swf_feature_release, swf_feature_catch_up,
 * swf_feature_deactivate), with members deleted, their memory reused, and a full table.
 *
 * An owed member's slot holds mark(i), an odd value, and entry i holds the member's address;
 * an entry is NULL, RESERVED, a member, or a member with its claim bit set. Entries hold
 * addresses, not members: a member deleted and released and a new member at the same address
 * are the same value to the table (the ABA the protocol must survive). Ghost variables tell the
 * incarnations apart: alive[a] (the address holds a member: its release has not returned) and
 * inc[a] (which member it holds).
 *
 * The feature is on, complete, with no member linked. Processes:
 *   Member(a, ninc, ntry)  (address 0: NINC0 members, NTRY calls each; address 1: one member,
 *                    NTRY1 calls, 0: no process) the life of the members at address a, one after
 *                    the other:
 *                    link, swf_feature_added (counted in with the flag seen on: peek the slot;
 *                    an allocation that may fail (NOWAIT and the add reserve both empty); none:
 *                    owe (an entry NULL -> RESERVED, the slot NULL -> mark(i), then the entry :=
 *                    member; the table full: x_owed++); EAGAIN), retried while it returns EAGAIN
 *                    up to ntry calls in all (a retry on its own marked slot claims the entry as
 *                    a filler would, waiting out a filler's claim, and settles it); then, but
 *                    for the last member, unlink, the grace period (no walk in flight),
 *                    swf_feature_release (exchange the slot; a mark: take the entry member ->
 *                    NULL, waiting while it is claimed), and the memory is freed: the next
 *                    member at a is a new one (its slot NULL), added and owed again, perhaps in
 *                    the same entry.
 *   CatchUp          NC calls of swf_feature_catch_up: snapshot x_owed; return at once when no
 *                    member is tabled and x_covered has reached the snapshot; else, under the
 *                    mutex and with the flag on: fill_owed (allocate before the claim; claim the
 *                    next member entry, init, passing NULL and RESERVED entries and waiting on
 *                    one that a retry has claimed until it is no longer claimed, then looking at
 *                    the same entry again; settle: the slot mark(i) -> obj by CAS, then the
 *                    entry := NULL; with -DFILL_FAILS an allocation may fail: ENOMEM), then the
 *                    sweep if x_covered is below the snapshot (it reads x_owed, walks the members
 *                    linked when it began, fills empty slots by CAS - a mark is not empty - and
 *                    raises x_covered).
 *   Deactivator      (-DDEACT) at any moment: under the mutex clear the flag, wait for the adders
 *                    counted in, clear_owed (claim each member entry as fill_owed does, waiting
 *                    included, and settle it with NULL), then
 *                    take every reached slot by exchange, and free after the grace period.
 *   Monitor          the table's invariant in every state, and once deactivate returned, that
 *                    nothing is owed or filled.
 * Objects come from per-process ranges (they are interchangeable: no global counter renames
 * them). A filler's claim and its init are one step (the claim keeps the member's memory; init
 * touches no slot).
 *
 * Properties:
 *   - no access to a member's memory after its release returned: every touch of a member by a
 *     filler (init, the settle's CAS), the sweep and deactivate's walk asserts that the address
 *     still holds the member it claimed or reached (touch); the slot of a new member at a
 *     reused address is NULL when it is linked (nothing wrote into the freed memory);
 *   - every object is published once (only a fresh private object goes into a slot) and freed
 *     once (free_obj); at the end every object is freed or in the slot of exactly one live
 *     member (no leak);
 *   - add_filled: an add that returns 0 after it saw the flag on at C leaves an object;
 *   - caught_up: feature.h's contract: when swf_feature_catch_up returns 0, the feature is off
 *     or every member owed before the call (its add had returned EAGAIN) and still linked has an
 *     object (not a mark), also while its own adder retries, except a member that such a retry,
 *     running during the call, leaves owed again (it returns EAGAIN). Ghosts: reowed[a], the
 *     last add of a that returned after the call began returned EAGAIN (excused at once); a
 *     member unfilled at the return while an add of it is in flight (adding[a]) is excused only
 *     if that add returns EAGAIN: pend[a], asserted (caught_up, in Member) when it returns.
 *     With -DCU_STRICT the exception is dropped (the contract before c2da708): caught
 *     (check.sh asserts it), case (b) below;
 *   - table_ok (Monitor): a slot holding mark(i) has entry i RESERVED or holding its address
 *     (claimed or not), and an unclaimed entry holding a has a's slot at mark(i), or a's release
 *     is between its exchange and its take of the entry;
 *   - off_empty (Monitor): after deactivate returned, no entry holds anything, no slot a mark,
 *     no linked member an object; no deadlock (every wait ends: spin's invalid end states, the
 *     filler's wait on a retry's claim included).
 *
 * The bug this model found (fixed in c2da708): swf_feature_catch_up could return 0 while a
 * member owed before the call held its mark, when an swf_feature_added of that member (its
 * retry) overlapped the call: (a) the retry had claimed the entry (publish_owed), and
 * fill_owed's swfi_owed_claim skipped it as not a member, no walk being due: now the filler
 * waits for the claim to end (BROKEN_SKIP_CLAIMED restores the skip); (b) the member was owed
 * untabled (the table was full); the walk peeks its slot NULL, the retry, finding no object,
 * marks it with the entry freed meanwhile, and the walk's CAS from NULL fails on the mark:
 * counted as a lost race; x_covered is raised. That retry returns EAGAIN: the contract's
 * exception (feature.h), which -DCU_STRICT drops.
 *
 * Broken variants (check.sh asserts each is caught):
 *   BROKEN_SETTLE_ORDER      settle frees the entry before its CAS on the slot
 *   BROKEN_RELEASE_NO_WAIT   release returns when it finds the entry claimed, without waiting
 *   BROKEN_RETRY_AS_FILLED   an add's retry takes its own mark for a filled slot and returns 0
 *   BROKEN_CLAIM_IGNORED     release frees the entry when it holds the member claimed as well
 *   BROKEN_NO_CLEAR_OWED     deactivate does not clear the table before its walk
 *   BROKEN_SKIP_CLAIMED      swfi_owed_claim passes an entry a retry has claimed (the code before
 *                            c2da708): caught_up, case (a)
 */
#define NM 2          /* addresses */
#ifndef NT
#define NT 1          /* entries in the owed table */
#endif
#ifndef NC
#define NC 1          /* catch-up calls */
#endif
#ifndef NTRY
#define NTRY 2        /* swf_feature_added calls per member while they return EAGAIN */
#endif
#ifndef NINC0
#define NINC0 2       /* members at address 0, one after the other (its memory reused) */
#endif
#ifndef NTRY1
#define NTRY1 NTRY    /* the same for the one member at address 1 (0: none) */
#endif
#define NOBJ 24       /* objects: Member(a) 1 + 6a .. 6 + 6a, CatchUp 13 .. 24 */

#define MARK(i)     (32 + (i))
#define ISMARK(v)   ((v) >= 32)
#define ISOBJ(v)    ((v) != 0 && (v) < 32)
#define RES         1
#define MEM(a)      (2 + (a))
#define CL          16
#define CLAIMED(a)  (MEM(a) + CL)
#define ISMEMBER(e) ((e) >= 2 && (e) < CL)
#define ISCLAIMED(e) ((e) >= CL)
#define NONE        255

byte slot[NM];      /* 0, an object (1 .. NOBJ) or a mark */
bool linked[NM];
bool alive[NM];     /* ghost: the address holds a member whose release has not returned */
byte inc[NM];       /* ghost: which member it holds */
bool owed[NM];      /* ghost: the member's last add returned EAGAIN */
bool relx[NM];      /* ghost: its release exchanged a mark and has not yet given the entry back */
bool cu_in;         /* ghost: a catch-up call has begun and not returned */
bool reowed[NM];    /* ghost: the last add of a that returned during that call returned EAGAIN */
bool adding[NM];    /* ghost: an add of a is counted in (in flight) */
bool pend[NM];      /* ghost: a catch-up returned 0 with a unfilled while an add of a was in
                     * flight: the contract holds only if that add returns EAGAIN */
byte entry[NT];
byte tabled;        /* x_tabled */
byte x_owed, covered;
bool gate = 1;
byte adders_in;
bool mutex, walking;
byte ost[NOBJ + 1]; /* 0 unused, 1 private, 2 published, 3 taken from a slot, 4 freed */
bool deact_done;
byte done;

/* An allocation from the process's own range (next: a local counter): objects are
 * interchangeable, so no global counter renames them. */
inline alloc(o, next)
{
    o = next;
    next++;
    ost[o] = 1
}

inline free_obj(o)
{
    assert(ost[o] == 1 || ost[o] == 3);   /* private or taken: never published, never freed */
    ost[o] = 4
}

/* A filler, the sweep or deactivate touches member a, which it claimed or reached as member ci. */
inline touch(a, ci)
{
    assert(alive[a] && inc[a] == ci)
}

/* Into a's slot: object o (private until now: published once) or NULL. */
inline put(a, o)
{
    if
    :: o != 0 -> assert(ost[o] == 1); ost[o] = 2
    :: else
    fi;
    slot[a] = o
}

/* swfi_owed_settle: the slot mark(i) -> o by CAS (o may be 0: clear_owed), then the entry freed
 * (release). ci: the member the caller claimed; NONE for the adder's own member. */
inline settle(i, a, o, ok, ci)
{
#ifdef BROKEN_SETTLE_ORDER
    atomic { tabled--; entry[i] = 0 };
#endif
    atomic {
        if :: ci != NONE -> touch(a, ci) :: else fi;
        if
        :: slot[a] == MARK(i) -> put(a, o); ok = 1
        :: else -> ok = 0
        fi
    };
#ifndef BROKEN_SETTLE_ORDER
    tabled--;
    entry[i] = 0   /* release: the last touch of the member */
#endif
}

/* swfi_owed_claim's step on entry i, the filler's init of a's object merged in (the claim
 * keeps a's memory from being freed; the init touches no slot): a = the member, or NONE.
 * The caller runs it only once CLAIM_READY(i): an entry claimed by someone else (under the
 * mutex: a member's adder, retrying) is waited for, then looked at again (the yield loop of
 * swfi_owed_claim as a blocking guard: the load that ends the wait and the CAS are one step,
 * as elsewhere). */
#ifdef BROKEN_SKIP_CLAIMED
#define CLAIM_READY(i) 1   /* BROKEN: a claimed entry is passed as not a member */
#else
#define CLAIM_READY(i) (!ISCLAIMED(entry[i]))
#endif
inline claim(i, a, ci)
{
    atomic {
        if
        :: ISMEMBER(entry[i]) ->
            a = entry[i] - 2; entry[i] = entry[i] + CL; ci = inc[a];
            touch(a, ci)
        :: else -> a = NONE   /* NULL or RESERVED: passed (claimed: BROKEN_SKIP_CLAIMED only) */
        fi
    }
}

#ifdef BROKEN_RETRY_AS_FILLED
#define FILLED(m) ((m) != 0)   /* BROKEN: its own mark taken for an object */
#else
#define FILLED(m) ISOBJ(m)
#endif

/* fill() for member a, counted in with the flag on: err = 0 (an object) or 1 (EAGAIN). */
inline fill(a, err)
{
    atomic {
        /* count in and read the flag again (C); then swf_slot_peek (nothing another process
         * does between them depends on the count but deactivate's wait: merged) */
        if
        :: gate -> adders_in++; adding[a] = 1
        :: else -> err = 0; goto not_on   /* off: 0 */
        fi;
        m = slot[a];
        if
        :: FILLED(m) -> err = 0; r = 3   /* the sweep, or a catch-up, was first */
        :: !FILLED(m) -> alloc(o, next)   /* NOWAIT or the add reserve; init */
        :: !FILLED(m) -> o = 0   /* NOWAIT found nothing ready, and the add reserve is empty */
        fi
    };
    if
    :: r == 3 -> skip
    :: r != 3 && o == 0 && m == 0 ->   /* owe: swfi_owed_mark */
        atomic { select (start : 0 .. NT - 1); k2 = 0; r = 0 };   /* the thread's stripe */
        do
        :: k2 < NT ->
            atomic {
                i = (start + k2) % NT;
                if :: entry[i] == 0 -> entry[i] = RES; ok = 1 :: else -> ok = 0; k2++ fi
            };
            if
            :: ok ->
                atomic { if :: slot[a] == 0 -> slot[a] = MARK(i); ok = 1 :: else -> ok = 0 fi };
                if
                :: !ok -> atomic { entry[i] = 0; r = 2 }   /* a sweep filled it first */
                :: else -> tabled++; atomic { entry[i] = MEM(a); r = 1 }
                fi;
                break
            :: else
            fi
        :: else -> break
        od;
        atomic {
            if
            :: r == 0 -> x_owed++   /* the table is full: counted (release), for a walk */
            :: else
            fi;
            err = (r != 2);
            k2 = 0; start = 0
        }
    :: r != 3 && o == 0 && m != 0 -> err = 1   /* owed already, in the table */
    :: r != 3 && o != 0 && m == 0 ->
        atomic { if :: slot[a] == 0 -> put(a, o); ok = 1 :: else -> ok = 0 fi; err = 0 }
    :: r != 3 && o != 0 && m != 0 ->   /* publish_owed: reclaim the entry, waiting out a filler's claim */
        atomic {
            i = m - 32;
            err = 0;
            if
            :: entry[i] == MEM(a) -> entry[i] = CLAIMED(a); ok = 1
            :: entry[i] != MEM(a) && entry[i] != CLAIMED(a) -> ok = 0   /* settled */
            fi
        };
        if
        :: ok -> settle(i, a, o, ok, NONE)
        :: else
        fi
    fi;
    if
    :: o != 0 && !ok -> free_obj(o)   /* never published */
    :: else
    fi;
    atomic {
        adders_in--;   /* count out */
        adding[a] = 0;
        if
        :: !err -> add_filled = ISOBJ(slot[a]); assert(add_filled); owed[a] = 0   /* 0: an object */
        :: else -> owed[a] = 1   /* EAGAIN: owed */
        fi;
        if :: cu_in -> reowed[a] = err :: else fi;   /* returned during a catch-up call */
        if
        :: pend[a] ->   /* a catch-up returned 0 while this add was in flight, a unfilled */
            caught_up = err;   /* excused only if this retry leaves a owed again */
            assert(caught_up);
            pend[a] = 0; caught_up = 0
        :: else
        fi;
        o = 0; m = 0; i = 0; r = 0; ok = 0; add_filled = 0
    };
not_on:
    skip
}

/* swf_feature_release(a), after a's unlink and grace period. */
inline release(a)
{
    atomic {
        m = slot[a];
        slot[a] = 0;   /* the exchange */
        if
        :: ISMARK(m) -> relx[a] = 1
        :: ISOBJ(m) -> ost[m] = 3
        :: else
        fi
    };
    if
    :: ISMARK(m) ->   /* swfi_owed_forget: take the entry, waiting out a claim */
        atomic {
            i = m - 32;
            if
#ifdef BROKEN_CLAIM_IGNORED
            :: entry[i] == MEM(a) || entry[i] == CLAIMED(a) -> entry[i] = 0; ok = 1
#else
            :: entry[i] == MEM(a) -> entry[i] = 0; ok = 1
#ifdef BROKEN_RELEASE_NO_WAIT
            :: entry[i] == CLAIMED(a) -> ok = 0
#endif
#endif
            :: entry[i] != MEM(a) && entry[i] != CLAIMED(a) -> ok = 0
            fi;
            relx[a] = 0
        };
        if
        :: ok -> tabled--
        :: else
        fi
    :: ISOBJ(m) -> free_obj(m)
    :: else
    fi
}

proctype Member(byte a; byte ninc; byte ntry)
{
    byte k, tries, o, m, i, r, k2, start, next;
    bool ok, err, add_filled, caught_up;
    next = 1 + 6 * a;
    do
    :: atomic {
        k < ninc ->
        /* a new member at a (the memory of the last one, if any, reused): link it */
        assert(slot[a] == 0); alive[a] = 1; inc[a]++; owed[a] = 0; linked[a] = 1 };
        do
        :: tries < ntry ->
            fill(a, err);   /* swf_feature_added */
            atomic {
                tries++;
                if
                :: err -> skip   /* retry */
                :: err -> err = 0; break
                :: else -> break
                fi
            }
        :: else -> break
        od;
        atomic {
            tries = 0; err = 0; k++;
            if
            :: k < ninc -> linked[a] = 0   /* delete it: unlink, ... */
            :: else -> break
            fi
        };
        !walking;   /* ... the grace period, release; its memory is freed */
        release(a);
        atomic { alive[a] = 0; owed[a] = 0; m = 0; i = 0; ok = 0 }
    :: else -> break
    od;
    done++
}

/* fill_owed, under the mutex with the flag on: one pass over the table. */
inline fill_owed(err)
{
    do
    :: atomic { tabled == 0 -> a = NONE }; break   /* swfi_owed_count */
    :: atomic {
           tabled != 0 ->
           if
           :: o == 0 -> alloc(o, next)   /* before the claim: no claim waits for memory */
#ifdef FILL_FAILS
           :: o == 0 -> err = 1
#endif
           :: else
           fi
       };
       if
       :: err -> break
       :: else
       fi;
       do   /* swfi_owed_claim from i: waits while entry i is claimed */
       :: atomic {
              i < NT && CLAIM_READY(i) ->
              claim(i, a, ci);
              if
              :: a != NONE -> break
              :: else -> i++
              fi
          }
       :: atomic { i == NT -> a = NONE; break }
       od;
       if
       :: a == NONE -> break
       :: else
       fi;
       settle(i, a, o, ok, ci);
       atomic {
           if :: ok -> o = 0 :: else fi;
           a = NONE; ci = 0; ok = 0;
           i++
       }
    od;
    atomic {
        if
        :: o != 0 -> free_obj(o); o = 0   /* never published */
        :: else
        fi;
        a = 0;
        i = 0
    }
}

/* The sweep, under the mutex: it walks the members linked when it began (one deleted meanwhile
 * it may or may not reach: it may stand on it), fills empty slots by CAS, a mark is not empty. */
inline sweep()
{
    atomic {
        snap = x_owed;   /* acquire */
        walking = 1;
        seen = 0;
        a = 0;
        do
        :: a < NM -> if :: linked[a] -> seen = seen | (1 << a); sinc[a] = inc[a] :: else fi; a++
        :: else -> break
        od;
        a = 0
    };
    do
    :: a < NM ->
        atomic {
            if
            :: (seen & (1 << a)) && linked[a] -> ok = 1
            :: (seen & (1 << a)) && !linked[a] -> if :: ok = 1 :: ok = 0 fi
            :: else -> ok = 0
            fi;
            if
            :: ok ->
                touch(a, sinc[a]);
                if
                :: slot[a] == 0 -> alloc(o, next)   /* the relaxed peek; the init */
                :: else -> ok = 0
                fi
            :: else
            fi
        };
        if
        :: ok ->
            atomic {
                touch(a, sinc[a]);
                if :: slot[a] == 0 -> put(a, o); ok = 1 :: else -> ok = 0 fi
            };
            if :: !ok -> free_obj(o) :: else fi   /* a lost race: never published */
        :: else
        fi;
        atomic { o = 0; ok = 0; a++ }
    :: else -> break
    od;
    atomic { walking = 0; seen = 0; a = 0; sinc[0] = 0; sinc[1] = 0 };
    atomic {
        if
        :: snap > covered -> covered = snap   /* release */
        :: else
        fi;
        snap = 0
    }
}

proctype CatchUp()
{
    byte k, i, o, a, ci, snapo, snap, seen, before, next;
    byte binc[NM], sinc[NM];
    bool ok, err, caught_up;
    next = 13;
    do
    :: k < NC ->
        atomic {   /* ghost: the members owed as the call begins; then x_owed (acquire) */
            cu_in = 1;
            reowed[0] = 0; reowed[1] = 0;
            before = 0;
            a = 0;
            do
            :: a < NM ->
                if :: owed[a] -> before = before | (1 << a) :: else fi;
                binc[a] = inc[a];
                a++
            :: else -> break
            od;
            a = 0;
            snapo = x_owed
        };
        if
        :: tabled == 0 ->
            if
            :: covered >= snapo -> goto ret   /* nothing owed since a completed sweep */
            :: else
            fi
        :: else
        fi;
        atomic { !mutex -> mutex = 1; ok = gate; i = 0; o = 0 };   /* only its holder writes the flag */
        if
        :: ok ->
            ok = 0;
            fill_owed(err);
            if
            :: !err && covered < snapo -> sweep()
            :: else
            fi
        :: else
        fi;
        mutex = 0;
ret:
        atomic {
            /* returned 0: off, or every member owed before the call and still linked is filled,
             * but one that an add (a retry) returning during the call left owed again */
            a = 0;
            do
            :: a < NM ->
                caught_up = err || !gate || !(before & (1 << a)) || !linked[a] ||
                            inc[a] != binc[a] ||
#ifndef CU_STRICT
                            reowed[a] ||   /* the exception: owed again by a retry in the call */
#endif
                            ISOBJ(slot[a]);
#ifndef CU_STRICT
                if   /* an add of a in flight (it ran during the call): its return decides */
                :: !caught_up && adding[a] -> pend[a] = 1; caught_up = 1
                :: else
                fi;
#endif
                assert(caught_up);
                a++
            :: else -> break
            od;
            a = 0; before = 0; binc[0] = 0; caught_up = 0; binc[1] = 0; err = 0; snapo = 0;
            cu_in = 0; reowed[0] = 0; reowed[1] = 0;
            k++
        }
    :: else -> break
    od;
    done++
}

proctype Deactivator()
{
    byte i, a, ci, nt, seen, m;
    byte taken[NM], sinc[NM];
    bool ok;
    atomic { !mutex -> mutex = 1 };
    gate = 0;           /* D */
    adders_in == 0;     /* the adders counted in */
#ifndef BROKEN_NO_CLEAR_OWED
    do   /* clear_owed: claim every member entry and settle it with NULL */
    :: i < NT ->
        CLAIM_READY(i);   /* swfi_owed_claim's wait (no claim is left once the adders drained) */
        claim(i, a, ci);
        if
        :: a != NONE -> settle(i, a, 0, ok, ci)
        :: else
        fi;
        atomic { a = 0; ci = 0; ok = 0; i++ }
    :: else -> break
    od;
#endif
    atomic {   /* take_all: the walk takes every slot it reaches, by exchange */
        i = 0;
        walking = 1;
        a = 0;
        do
        :: a < NM -> if :: linked[a] -> seen = seen | (1 << a); sinc[a] = inc[a] :: else fi; a++
        :: else -> break
        od;
        a = 0
    };
    do
    :: a < NM ->
        atomic {
            if
            :: (seen & (1 << a)) && linked[a] -> ok = 1
            :: (seen & (1 << a)) && !linked[a] -> if :: ok = 1 :: ok = 0 fi
            :: else -> ok = 0
            fi;
            if
            :: ok ->
                touch(a, sinc[a]);
                m = slot[a];
                slot[a] = 0;
                assert(!ISMARK(m));   /* it would be freed as an object */
                if :: ISOBJ(m) -> ost[m] = 3; taken[nt] = m; nt++ :: else fi
            :: else
            fi;
            m = 0; ok = 0;
            a++
        }
    :: else -> break
    od;
    atomic { walking = 0; seen = 0; sinc[0] = 0; sinc[1] = 0 };
    atomic {   /* the grace period, then the frees */
        do
        :: nt > 0 -> nt--; free_obj(taken[nt]); taken[nt] = 0
        :: else -> break
        od;
        deact_done = 1;
        mutex = 0
    };
    done++
}

/* The table's invariant for member a and entry i (outside the steps that change both). */
#define INV(a, i) \
    ((slot[a] != MARK(i) || entry[i] == RES || entry[i] == MEM(a) || entry[i] == CLAIMED(a)) && \
     (entry[i] != MEM(a) || slot[a] == MARK(i) || relx[a]))
#define OFF_OK(a) (!ISMARK(slot[a]) && (!linked[a] || slot[a] == 0))
#if NT == 1
#define TABLE_OK (INV(0, 0) && INV(1, 0))
#define ENTRIES_EMPTY (entry[0] == 0)
#else
#define TABLE_OK (INV(0, 0) && INV(1, 0) && INV(0, 1) && INV(1, 1))
#define ENTRIES_EMPTY (entry[0] == 0 && entry[1] == 0)
#endif
#define DEACT_OK (!deact_done || (ENTRIES_EMPTY && OFF_OK(0) && OFF_OK(1)))

proctype Monitor()
{
    bool table_ok, off_empty;
end:
    atomic {
        !(TABLE_OK && DEACT_OK) ->
        table_ok = TABLE_OK;
        off_empty = DEACT_OK;
        assert(table_ok);
        assert(off_empty)
    }
}

init {
    byte o, a, n;
    atomic {
        run Monitor();   /* first: a process ends only after those started later */
        run Member(0, NINC0, NTRY);
#if NTRY1 > 0
        run Member(1, 1, NTRY1);
#else
        done++;
#endif
        run CatchUp();
#ifdef DEACT
        run Deactivator()
#else
        done++
#endif
    };
    done == 4;
    atomic {
        /* no leak: every object freed, or published in the slot of exactly one live member */
        o = 1;
        do
        :: o <= NOBJ ->
            n = 0;
            a = 0;
            do
            :: a < NM -> if :: slot[a] == o -> assert(alive[a]); n++ :: else fi; a++
            :: else -> break
            od;
            assert(ost[o] == 0 && n == 0 || ost[o] == 4 && n == 0 || ost[o] == 2 && n == 1);
            o++
        :: else -> break
        od;
        assert(TABLE_OK && DEACT_OK)
    }
}
