/*
 * docs/model/release.pml - del's finalisation and the release / re-add contract, with add's
 * ENOMEM path, as a Promela model for spin.
 *
 * The contract: del finalises a member after a grace period and its last unpin: finalise takes
 * the slot, frees the object, sets the node's state, then calls the user's release callback,
 * after which the library never touches the node. With a release callback, finalise sets the
 * state to RELEASED (not UNLINKED), and add returns EBUSY for a DELETED or RELEASED node; the
 * user makes it addable again with swf_node_init(n), inside release or after it (having
 * learnt from release that it may). With no callback, finalise sets UNLINKED directly: that
 * store is its last access to the node.
 *
 * Processes, all racing, on an active registry (the flag stays set) with members 0 and 1
 * linked, each holding an object:
 *   Deleter  swf_registry_del(0, release) with release chosen at the time (a callback or NULL);
 *            then the grace period, the callback and finalise as above. The callback checks
 *            that the node is not linked, then either re-initialises it (swf_node_init) or
 *            tells the adder that it may.
 *   Adder    a user that wants member 0 back on the list: calls swf_registry_add(0) until it
 *            returns 0 (EEXIST while linked, EBUSY while deleted or released, ENOMEM when
 *            the allocation fails - ADD_ENOMEM - all retried); after the callback told it,
 *            re-initialises the node itself.
 *   Reader   one walk in a read-side section, reading every object it finds.
 *   Monitor  checks the invariants in every reachable state.
 *
 * Properties (assertions, in every reachable state):
 *   - release never runs on a linked node: no add succeeds between finalise's state store and
 *     the release call (in release());
 *   - while active, every linked member has an object (Monitor), also when add's allocation
 *     fails: add links a member only with its object;
 *   - no object is freed twice or while published (free_obj), the reader never reads a freed
 *     or reused object (Reader), nothing touches a member after its release (touch);
 *   - at the end member 0 is linked again with an object, every object is free or in a live
 *     member's slot (conservation).
 *
 * Broken variants:
 *   BROKEN_RELEASE_OLD            the old contract: finalise sets UNLINKED, then calls release,
 *                                 so a retried add can link the node before release runs
 *   BROKEN_FINALISE_STATE_EARLY   finalise's UNLINKED store (no callback) is not a release: it
 *                                 becomes visible before the slot is taken, so an add re-links
 *                                 the node with a new object that finalise then takes and frees
 *   BROKEN_ADD_ENOMEM_LINKS       (with ADD_ENOMEM) add links the node whether or not the
 *                                 allocation succeeded
 */
#define NM 2
#ifndef NC
#define NC 2 /* rounds of del and re-add */
#endif
#define NR 2 /* records: 0 unused here (no sweep), 1 the reader */
#define NO (NM + 2)

#include "common.pml"

/* finalised with a release callback that has not returned yet: add returns EBUSY */
#define M_RELEASED 4

bool flag_on = 1;
bool may_init = 0; /* release told the adder that the node is its own again */

/* The user's release callback: the node must not be linked; then it is the user's. */
inline release_cb(m)
{
    d_step {
        assert(mst[m] != M_LINKED); /* release never runs on a node that is linked */
        if
        :: mst[m] == M_RELEASED -> skip
        :: else -> assert(mst[m] == M_UNUSED) /* (the old contract) */
        fi
    };
    if
    :: d_step { mst[m] = M_UNUSED } /* swf_node_init(n) inside release */
    :: may_init = 1 /* or: tell the adder, which calls swf_node_init(n) itself */
    fi
}

/* finalise(): take the slot and free the object, set the state, call release. */
inline finalise_rel(m, o, rel)
{
#ifdef BROKEN_FINALISE_STATE_EARLY
    if
    :: !rel ->
        /* BROKEN: the UNLINKED store overtakes the take (a relaxed store) */
        mst[m] = M_UNUSED;
        d_step { take_slot(m, o); if :: o != 0 -> free_obj(o) :: else fi }
    :: else ->
        d_step { take_slot(m, o); if :: o != 0 -> free_obj(o) :: else fi };
        mst[m] = M_RELEASED
    fi;
#else
    /* swf_slot_take, swf_cache_free, x_ref, registry and release cleared: nothing else can
     * reach the node yet (add returns EBUSY while it is DELETED) */
    d_step { take_slot(m, o); if :: o != 0 -> free_obj(o) :: else fi; pend[m] = 0; orphan[m] = 0 };
    /* the release store of the state, the last access when there is no callback */
#ifdef BROKEN_RELEASE_OLD
    mst[m] = M_UNUSED; /* BROKEN: UNLINKED before release is called */
#else
    if
    :: rel -> mst[m] = M_RELEASED
    :: else -> mst[m] = M_UNUSED
    fi;
#endif
#endif
    if
    :: rel -> release_cb(m)
    :: else
    fi
}

/* swf_registry_add(0), retried until it returns 0. */
inline add_retrying(o, st, fail)
{
    do
    :: atomic { lock(); st = mst[0] };
        if
        :: st == M_UNUSED ->
#ifdef ADD_ENOMEM
            if
            :: skip
            :: fail = 1 /* NOWAIT and WAIT both failed */
            fi;
#endif
            d_step {
                if
                :: !fail -> alloc(o); init_obj(o); publish_store(0, o); o = 0; insert_head(0)
#ifdef BROKEN_ADD_ENOMEM_LINKS
                :: fail -> insert_head(0) /* BROKEN: linked although the allocation failed */
#else
                :: fail /* ENOMEM: not linked */
#endif
                fi;
                st = 0;
                unlock()
            };
            if
            :: !fail -> break
            :: else -> fail = 0 /* ENOMEM: try again */
            fi
        :: st == M_LINKED -> d_step { st = 0; unlock() }  /* EEXIST: try again */
        :: st == M_DELETED || st == M_RELEASED ->
            d_step { st = 0; unlock() }; /* EBUSY: try again */
            if
            :: may_init -> d_step { may_init = 0; mst[0] = M_UNUSED } /* swf_node_init(n) */
            :: else
            fi
        fi
    od
}

/* NC rounds: delete member 0 once it is linked (again). */
proctype Deleter()
{
    byte m, o, p, gi, k;
    bool rel;
    do
    :: k < NC ->
        if
        :: rel = 1 /* swf_registry_del(r, n, release) */
        :: rel = 0 /* swf_registry_del(r, n, NULL) */
        fi;
        atomic { /* once the node is linked (again): lock(), then unlink it */
            (mutex == 0 && mst[0] == M_LINKED) -> mutex = _pid + 1;
            m = 0; list_remove(m, p); unlinking = m
        };
        d_step { mst[m] = M_DELETED; unlinking = NIL; unlock() };
        grace(0, gi);
        /* node_grace_over: no sweep here, so never pinned: ready */
        finalise_rel(m, o, rel);
        m = 0;
        rel = 0;
        k++
    :: else -> break
    od;
    k = 0
}

/* swf_registry_add(0), retried until it returns 0, NC times (after each del). */
proctype Adder()
{
    byte o, st, k;
    bool fail;
    do
    :: k < NC -> add_retrying(o, st, fail); k++
    :: else -> break
    od;
    k = 0
}

#define FILLED(i) (mst[i] != M_LINKED || slot[i] != 0 || unlinking == i)

proctype Monitor()
{
    bool active_filled;
end:
    atomic {
        !(FILLED(0) && FILLED(1)) ->
        active_filled = 0;
        assert(active_filled)
    }
}

init {
    byte i, o;
    d_step {
        i = 0;
        do
        :: i < NO -> owner[i] = NIL; i++
        :: else -> break
        od;
        i = NM;
        do
        :: i > 0 -> i--; alloc(o); init_obj(o); publish_store(i, o); insert_head(i); o = 0
        :: else -> break
        od
    };
    atomic {
        run Monitor(); /* first: a process ends only after those started later (it never does) */
        run Deleter();
        run Adder();
        run Reader()
    };
    (_nr_pr == 2);
    assert(mst[0] == M_LINKED && slot[0] != 0); /* the node is back, with an object */
    conservation(i)
}
