/*
 * docs/model/common.pml - what sweepfill's models share: the registry's CK_LIST with its
 * writer mutex, members with their slot, pins and pending bit, the object cache, ck_epoch
 * records with their read-side sections and grace periods, the deleter, a reader, and the
 * RESUME sweep with CAS publication and bounded sections (include/sweepfill/abi/sweep_inline.h).
 * docs/design.md maps every step here to the C it stands for.
 *
 * Before including this file a model defines:
 *   NM   members (indices 0 .. NM-1, at most 5)    NO   objects + 1 (object 0 is NULL)
 *   NR   epoch records (0 the sweep's or deactivate's, 1 the reader's)
 *   R    the sweep's reserve                       K    the section bound (0 = unbounded)
 *   MAXV the most visits a sweep may make (the bounded-loop assertion)
 * (the last three only if it runs sweep()), and may define REC_USED(i) (deactivate.pml),
 * OWN_READER (to write its own Reader), WEAK_PEEK, and the BROKEN_* switches documented where
 * they act.
 *
 * Granularity: each `d_step`/`atomic` below is one indivisible step. A step contains at most one
 * access that another process can tell apart from its neighbours (a load or store of the list,
 * a slot, a state, a pin count, a section flag); purely local work and accesses to things no one
 * else can reach yet (a member before it is linked, an object before it is published) are
 * merged into it. Where two shared accesses share a step the README says why that loses no
 * behaviour. Promela is sequentially consistent: a relaxed load that may read a stale value is
 * modelled as a nondeterministic choice of the values it may read (WEAK_PEEK), and a missing
 * release or acquire as the reordering it would allow (the BROKEN_* variants that name one),
 * not with a general weak memory model.
 */

#define NIL 255

/* struct swf_node.x_state, plus FREED: release() ran and the memory is the user's again, so any
 * later access by the sweep or a reader is a use after free. */
#define M_UNUSED  0
#define M_LINKED  1
#define M_DELETED 2
#define M_FREED   3

/* An object: free in the cache, allocated (contents unspecified), or initialised by init(). */
#define O_FREE  0
#define O_ALLOC 1
#define O_INIT  2

#define ENOMEM 12

byte mutex = 0;      /* the registry's writer mutex: 0 free, else the holder's _pid + 1 */
byte head = NIL;     /* CK_LIST_FIRST */
byte nxt[NM];        /* CK_LIST_NEXT; left alone by a removal, as CK_LIST_REMOVE does */
byte mst[NM];        /* member state */
byte slot[NM];       /* the member's object, 0 = NULL */
byte ref[NM];        /* pins (swf_node.x_ref without REF_PENDING) */
bool pend[NM];       /* REF_PENDING: the grace period ended while the member was pinned */
bool orphan[NM];     /* pushed on the registry's orphan stack by the last unpin */
byte ost[NO];        /* object state */
byte owner[NO];      /* the member whose slot holds the object, or NIL */
byte nfree = NO - 1; /* objects free in the cache */
byte insec[NR];      /* sections record i is inside (ck_epoch_record.active; more than 1 only
                        when two threads share a record, deactivate.pml's broken records) */
bool waitfor[2 * NR]; /* grace period g (0: del's, 1: deactivate's) still waits for record i:
                         waitfor[g * NR + i] */
bool sweep_done = 0; /* the sweep returned (for the termination property) */
byte unlinking = NIL; /* the member a del has taken off the list and not yet marked deleted:
                         LINKED in mst[] but no longer on the list (for the monitors) */

inline lock()
{
    atomic { mutex == 0 -> mutex = _pid + 1 }
}

inline unlock()
{
    assert(mutex == _pid + 1);
    mutex = 0
}

/* REC_USED(i): record i is registered, so grace periods look at it (ck_epoch_scan skips a
 * record that ck_epoch_unregister has marked free). Only deactivate.pml's RECORDS runs
 * unregister records; elsewhere every record is registered throughout. */
#ifndef REC_USED
#define REC_USED(i) (true)
#endif

/* ck_epoch_begin / ck_epoch_end on record p (sections nest: active counts them). When the last
 * one ends the record is quiescent for every grace period waiting. */
inline enter(p)
{
    insec[p]++
}

inline leave(p)
{
    assert(insec[p] > 0);
    insec[p]--;
    if
    :: insec[p] == 0 -> waitfor[p] = 0; waitfor[NR + p] = 0
    :: else
    fi
}

/* Grace period g (the ck_epoch_poll or barrier that runs a del's callback, g = 0, or the
 * barrier and synchronize that free deactivate's objects, g = 1): every section in progress on
 * a registered record when it began has ended, or its record was unregistered. Sections begun
 * later are not waited for. */
inline grace(g, gi)
{
    d_step {
        gi = 0;
        do
        :: gi < NR -> waitfor[g * NR + gi] = (insec[gi] > 0 && REC_USED(gi)); gi++
        :: else -> break
        od;
        gi = 0
    };
    do
    :: gi < NR -> (waitfor[g * NR + gi] == 0 || !REC_USED(gi)); gi++
    :: else -> break
    od;
    gi = 0 /* (a plain statement: a loop's exit may not jump into a d_step) */
}

/* Every access to a member's memory by the sweep or a reader. */
inline touch(m)
{
    assert(mst[m] != M_FREED)
}

/* The cache hands out the lowest free object (which one does not matter; reuse does). Callers
 * wrap these primitives in their step. */
inline alloc(o)
{
    assert(nfree > 0); /* the pool is sized so that WAIT never fails */
    o = 1;
    do
    :: ost[o] != O_FREE -> o++
    :: else -> break
    od;
    ost[o] = O_ALLOC;
    nfree--
}

inline free_obj(o)
{
    assert(ost[o] != O_FREE);   /* no double free */
    assert(owner[o] == NIL);    /* never free an object that is still published */
    ost[o] = O_FREE;
    nfree++;
    o = 0
}

inline init_obj(o)
{
    assert(ost[o] == O_ALLOC);
    ost[o] = O_INIT
}

/* swf_slot_publish_cas: a release compare-and-swap from NULL. */
inline publish_cas(m, o, won)
{
    if
    :: slot[m] == 0 ->
        assert(owner[o] == NIL); /* an object is published in one member at most */
        slot[m] = o; owner[o] = m; won = 1
    :: else -> won = 0
    fi
}

/* swf_slot_publish: a release store, for a slot no one else assigns (add, before linking). */
inline publish_store(m, o)
{
    assert(slot[m] == 0);    /* a member never gets a second object */
    assert(owner[o] == NIL);
    slot[m] = o; owner[o] = m
}

/* swf_slot_take: an exchange with NULL. */
inline take_slot(m, o)
{
    o = slot[m]; slot[m] = 0;
    if
    :: o != 0 -> assert(owner[o] == m); owner[o] = NIL
    :: else
    fi
}

/* registry ops_pin / ops_unpin (ops_linked is CURSOR_LINKED below). */
inline pin(m)
{
    touch(m); ref[m]++
}

inline unpin(m)
{
    touch(m);
    assert(ref[m] > 0);
    ref[m]--;
    if
    :: ref[m] == 0 && pend[m] -> orphan[m] = 1 /* orphan_push */
    :: else
    fi
}

/* CK_LIST_INSERT_HEAD, after x_state is set to LINKED. The member is unreachable until the
 * store to head. */
inline insert_head(n)
{
    mst[n] = M_LINKED; nxt[n] = head; head = n
}

/* CK_LIST_REMOVE: one store to the predecessor's next (or head); the member's own next stays,
 * so a walker standing on it can go on. */
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
    p = 0
}

/* finalise(): take the slot, free the object, call release (the memory is the user's). Nothing
 * else can reach the member any more, so it is one step. */
inline finalise(m, o)
{
    take_slot(m, o);
    if
    :: o != 0 -> free_obj(o)
    :: else
    fi;
    mst[m] = M_FREED; pend[m] = 0; orphan[m] = 0
}

/* node_grace_over(): ready when unpinned, else set the pending bit for the last unpin. */
inline grace_over(m, rdy)
{
#ifdef BROKEN_NO_UNPIN_WAIT
    rdy = 1 /* BROKEN: reclamation does not wait for the sweep's unpin */
#else
    if
    :: ref[m] == 0 -> rdy = 1
    :: else -> pend[m] = 1; rdy = 0
    fi
#endif
}

/* swf_registry_del() of a member chosen among the linked ones (NIL if none): unlink and mark it
 * under the writer mutex, then (after the unlock) a grace period, the callback, and
 * finalise_ready() if it was ready. */
inline del(m, o, p, rdy, gi)
{
    atomic {
        lock();
        if
        :: mst[0] == M_LINKED -> m = 0
        :: NM > 1 && mst[1] == M_LINKED -> m = 1
        :: NM > 2 && mst[2] == M_LINKED -> m = 2
        :: NM > 3 && mst[3] == M_LINKED -> m = 3
        :: NM > 4 && mst[4] == M_LINKED -> m = 4
        :: else -> m = NIL
        fi;
        if
        :: m != NIL -> list_remove(m, p); unlinking = m
        :: else -> unlock()
        fi
    };
    if
    :: m != NIL ->
        d_step { mst[m] = M_DELETED; unlinking = NIL; unlock() };
#ifndef BROKEN_NO_GRACE
        grace(0, gi);
#endif
        d_step {
            grace_over(m, rdy);
            if
            :: rdy -> rdy = 0; finalise(m, o)
            :: else
            fi
        }
    :: else
    fi;
    m = 0
}

/* finalise_ready(), for the members the last unpin orphaned. */
inline finalise_orphans(i, o)
{
    d_step {
        i = 0;
        do
        :: i < NM && orphan[i] -> finalise(i, o); i++
        :: i < NM && !orphan[i] -> i++
        :: else -> i = 0; break
        od
    }
}

/* swf_reserve_fill_: WAIT allocations up to R, never failing unless WAIT_FAILS (then a refill
 * may get nothing: the cache's limit). The batch is one step: it runs outside any section and
 * touches only the cache, whose objects are interchangeable. */
inline fill(o)
{
#ifdef WAIT_FAILS
    if
    :: skip
    :: wait_fails = 1
    fi;
#endif
    d_step {
        do
        :: nres < R && !wait_fails -> alloc(o); res[nres] = o; nres++; o = 0
        :: else -> break
        od;
        wait_fails = 0
    }
}

/* The cursor check after re-entering a section: swf_cursor_survived_ (ops_linked reads
 * x_state). */
#ifdef BROKEN_NO_LINKED_CHECK
#define CURSOR_LINKED(m) (true) /* BROKEN: the sweep trusts a cursor that may be unlinked */
#else
#define CURSOR_LINKED(m) (mst[m] == M_LINKED)
#endif

/* Leave and re-enter after handling m (swf_yield_), or step to the next member. */
inline advance()
{
    if
    :: K > 0 && secv >= K ->
        d_step { pin(m); leave(0) };
        d_step {
            enter(0); secv = 0; touch(m);
            cont = CURSOR_LINKED(m)
        };
        if
#ifdef YIELD_RESTARTS
        /* BROKEN: the sweep does not resume after a yield but walks again from the head */
        :: cont -> d_step { unpin(m); m = head; cont = 0 }
#else
        :: cont -> d_step { touch(m); nm = nxt[m] }; d_step { unpin(m); m = nm; nm = 0; cont = 0 }
#endif
        :: else -> d_step { unpin(m); m = head } /* lost cursor: restart from the head */
        fi
    :: else ->
        d_step { touch(m); m = nxt[m] }
    fi
}

/* swf_sweep_run_ / swf_walk_ for SWF_RESUME on a list that can pin, SWF_PUBLISH_CAS. Sets err
 * to 0 or ENOMEM. The caller declares the locals m nm o nres res[R] visits secv err (byte) and
 * won fromres isset cont wait_fails (bool). */
inline sweep()
{
    fill(o);
    d_step { enter(0); secv = 0; m = head };
    do
    :: m == NIL -> break
    :: else ->
        d_step {
#ifndef NO_VISIT_BOUND
            visits++;
            assert(visits <= MAXV); /* the bounded-loop termination check */
#endif
            secv++;
            touch(m);
            isset = (slot[m] != 0) /* swf_slot_peek: a relaxed load */
        };
#ifdef WEAK_PEEK
        /* The relaxed emptiness check may read a stale NULL: nothing orders an add's release
         * store to the slot before this load (the walk reached m through CK_LIST's plain
         * loads). It never reads a non-NULL that is not there: a slot a sweep may find set was
         * set by an add, once, and only finalise (after m left the list) empties it. */
        if
        :: skip
        :: isset -> isset = 0
        fi;
#endif
        if
        :: isset -> isset = 0; advance()
        :: else ->
            /* swf_take_: NOWAIT, which may fail at any call, else the reserve */
            if
            :: d_step { nfree > 0 -> alloc(o) }
            :: d_step {
                   o = 0;
                   if
                   :: nres > 0 -> nres--; o = res[nres]; res[nres] = 0; fromres = 1
                   :: else
                   fi
               }
            fi;
            if
            :: o != 0 ->
                /* swf_publish_: init, then the release CAS; a loser goes back */
#ifdef BROKEN_PUBLISH_BEFORE_INIT
                /* BROKEN: the object is visible before its initialisation (the reordering
                 * that a publication without release ordering permits) */
                d_step { touch(m); publish_cas(m, o, won) };
                d_step {
                    init_obj(o);
#else
                d_step {
                    init_obj(o);
#ifdef BROKEN_SWEEP_PLAIN_STORE
                    /* BROKEN: a plain release store after the relaxed emptiness check, not a
                     * CAS from NULL (safe only if the check could not read a stale NULL) */
                    touch(m); publish_store(m, o); won = 1;
#else
                    touch(m); publish_cas(m, o, won);
#endif
#endif
                    if
                    :: !won && fromres -> ost[o] = O_ALLOC; res[nres] = o; nres++; o = 0
                       /* (back in the reserve; init runs again when it is used) */
                    :: !won && !fromres -> free_obj(o)
                    :: else -> o = 0
                    fi;
                    fromres = 0; won = 0
                };
                advance()
            :: else ->
                /* swf_run_dry_: pin, leave, refill, enter, check the cursor */
                d_step { pin(m); leave(0) };
                fill(o);
                d_step {
                    enter(0); secv = 0; touch(m);
                    cont = CURSOR_LINKED(m)
                };
                if
                :: cont && nres == 0 -> d_step { unpin(m); err = ENOMEM; cont = 0 }; break
                :: cont && nres > 0 -> d_step { unpin(m); cont = 0 } /* revisit m */
                :: !cont && nres == 0 -> d_step { unpin(m); err = ENOMEM }; break
                :: !cont && nres > 0 -> d_step { unpin(m); m = head } /* restart */
                fi
            fi
        fi
    od;
    m = 0;
    /* leave, and swf_reserve_return_ (outside the section, touching only the cache) */
    d_step {
        leave(0);
        secv = 0;
        do
        :: nres > 0 -> nres--; o = res[nres]; res[nres] = 0; free_obj(o)
        :: else -> break
        od
    }
}

/* A reader: one walk inside a section, loading every slot and reading the object it finds.
 * BROKEN_READER_RELAXED: the slot is loaded without acquire ordering, so the reader's reads of
 * the object may be satisfied before the load of the slot: modelled as a snapshot of every
 * object's state taken in the step before the load, which the reader then reads from. */
#ifndef OWN_READER
proctype Reader()
{
    byte m, o;
#ifdef BROKEN_READER_RELAXED
    byte snap[NO], i;
#endif
    d_step { enter(1); m = head };
    do
    :: d_step { m == NIL -> leave(1) }; break
    :: else ->
#ifdef BROKEN_READER_RELAXED
        d_step {
            i = 0;
            do
            :: i < NO -> snap[i] = ost[i]; i++
            :: else -> i = 0; break
            od
        };
#endif
        d_step { touch(m); o = slot[m] }; /* swf_node_object: the acquire load */
        d_step {
            if
            :: o != 0 ->
#ifdef BROKEN_READER_RELAXED
                assert(snap[o] == O_INIT); /* BROKEN: what the early reads saw */
#endif
                assert(ost[o] == O_INIT); /* initialised, and not freed */
                assert(owner[o] == m);    /* not freed and handed to another member */
                o = 0
            :: else
            fi;
            touch(m);
            m = nxt[m]
        }
    od
}
#endif

/* At the end: every object alive is published in exactly one member whose memory is still
 * live (nothing leaked), and every deleted member was finalised and unpinned. */
inline conservation(i)
{
    d_step {
        i = 1;
        do
        :: i < NO ->
            assert(ost[i] == O_FREE || (owner[i] != NIL && slot[owner[i]] == i &&
                                        mst[owner[i]] != M_FREED));
            i++
        :: else -> break
        od;
        i = 0;
        do
        :: i < NM ->
            assert(mst[i] != M_DELETED);
            assert(ref[i] == 0);
            assert(slot[i] == 0 || owner[slot[i]] == i);
            i++
        :: else -> break
        od;
        i = 0
    }
}

/* The census the tests take: every member on the list (reachable from the head at this
 * instant) has an object. A member whose del has unlinked it is no longer on the list, even
 * before del marks it deleted. */
inline all_on_list_filled(i)
{
    d_step {
        i = head;
        do
        :: i != NIL -> assert(slot[i] != 0); i = nxt[i]
        :: else -> break
        od;
        i = 0
    }
}

/* Link members 0 .. n-1 in that order, with no object. */
inline initial_list(n, i)
{
    d_step {
        i = 0;
        do
        :: i < NO -> owner[i] = NIL; i++
        :: else -> break
        od;
        i = n;
        do
        :: i > 0 -> i--; insert_head(i)
        :: else -> break
        od
    }
}
