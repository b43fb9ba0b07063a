/*
 * docs/model/activation.pml - the registry's activation protocol (lib/registry/registry.c), as a
 * Promela model for spin.
 *
 * Processes, all racing:
 *   Activator  swf_registry_activate: sets the active flag under the writer mutex, then runs the
 *              RESUME sweep with CAS publication, section bound K and a reserve of R objects,
 *              NOWAIT failing at any call, so it leaves its section to refill with its cursor
 *              pinned; afterwards it finalises the members its last unpin orphaned.
 *   Adder x2   swf_registry_add of a new member: under the writer mutex, reads the flag and, if
 *              set, allocates, initialises and publishes the object before linking the member;
 *              with ADD_ENOMEM the allocation may fail (ENOMEM, the member is not linked).
 *   Deleter    swf_registry_del of any linked member (chosen at the time), then the grace
 *              period, the callback (pending bit if pinned) and finalisation.
 *   Reader     one walk in a read-side section, reading every object it finds.
 *   Monitor    once activate has returned 0, checks in every state that every linked member
 *              has an object.
 * NI members are linked before activation starts. WEAK_PEEK lets the sweep's relaxed
 * emptiness check read a stale NULL (common.pml).
 *
 * Properties (assertions; each is checked in every reachable state of every interleaving):
 *   - when the sweep returns 0, every linked member has an object (in Activator), in every
 *     state after that (Monitor: adds link only members that have one, ENOMEM included), and
 *     when everything has finished (init);
 *   - no object is published twice: no member gets a second object, no object goes in two
 *     members (publish_cas, publish_store);
 *   - no member is touched after its release and no object is read after its free, by the sweep
 *     or the reader (touch, Reader);
 *   - nothing leaks and no deleted member is left unfinalised (conservation, at the end);
 *   - the sweep terminates: at most MAXV visits (assertion), no invalid end state, and the LTL
 *     property `term` (<> sweep_done) checked separately for acceptance cycles.
 *
 * Broken variants (each must produce an assertion violation):
 *   BROKEN_NO_FLAG_CHECK        add never looks at the flag
 *   BROKEN_FLAG_OUTSIDE         add reads the flag before taking the writer mutex
 *   BROKEN_PUBLISH_BEFORE_INIT  the sweep's object is visible before init (no release order)
 *   BROKEN_NO_GRACE             del frees without waiting for a grace period
 *   BROKEN_READER_RELAXED       the reader's slot load has no acquire (common.pml's Reader)
 *   BROKEN_SWEEP_PLAIN_STORE    the sweep publishes with a plain release store after its
 *                               relaxed check, not a CAS (caught only with WEAK_PEEK)
 *   BROKEN_ADD_LINK_BEFORE_PUBLISH  add's link becomes visible before its publication (no
 *                               store fence in CK_LIST_INSERT_HEAD)
 *   BROKEN_ADD_ENOMEM_LINKS     add links the member although its allocation failed
 */
#ifndef NI
#define NI 2
#endif
#ifndef R
#define R 1
#endif
#ifndef K
#define K 1
#endif
#define NA 2
#define NM (NI + NA)
#define NR 2
#define ND 1
/* Objects: one per member, a reserve, one in flight in an adder, and NULL. */
#define NO (NM + R + 2)
/* Each pass visits at most NM members and restarts only when a deletion took its cursor (at
 * most ND times); each refill gets at least one object and revisits one member, and at most NM
 * objects are needed, plus one refill that restarts. */
#define MAXV ((1 + ND) * NM + NM + 1)

#include "common.pml"

bool flag_on = 0; /* struct swf_registry.x_active */
byte act_err = NIL;

proctype Activator()
{
    byte m, nm, o, nres, res[R], visits, secv, err, i;
    bool won, fromres, isset, cont, wait_fails;
    d_step { lock(); flag_on = 1; unlock() } /* set_active(r, 1) */
    sweep();
    if
    :: err == 0 -> all_on_list_filled(i)
    :: else
    fi;
    act_err = err;
    sweep_done = 1;
    finalise_orphans(i, o)
}

/* swf_registry_add of member n. Allocating, initialising and publishing touch only n, which no
 * one can reach before the store to head, so they share the linking step. With ADD_ENOMEM the
 * allocation (NOWAIT, then WAIT) may fail: add returns ENOMEM and n is not linked. The C add
 * allocates with NOWAIT only under the mutex; its WAIT runs outside it, after which add starts
 * over under the mutex with the object in hand, so the step that links is still this one. */
proctype Adder(byte n)
{
    byte o;
    bool f, fail;
#ifdef BROKEN_FLAG_OUTSIDE
    f = flag_on; /* BROKEN: the flag is read before the writer mutex is taken */
    lock();
#else
    atomic { lock(); f = flag_on };
#endif
#ifdef BROKEN_NO_FLAG_CHECK
    f = 0; /* BROKEN: add never looks at the flag */
#endif
#ifdef ADD_ENOMEM
    if
    :: skip
    :: f -> fail = 1 /* object_for(): NOWAIT and WAIT both return NULL (the cache's limit) */
    fi;
#endif
#ifdef BROKEN_ADD_LINK_BEFORE_PUBLISH
    /* BROKEN: the store to the head becomes visible before the stores that published n's
     * object (CK_LIST_INSERT_HEAD without its store fence; the same if the slot's store were
     * relaxed and the list's a release: the pair needs a release between them) */
    d_step { insert_head(n) };
#endif
    d_step {
        if
        :: f && !fail -> alloc(o); init_obj(o); publish_store(n, o); o = 0
        :: else
        fi;
#ifndef BROKEN_ADD_LINK_BEFORE_PUBLISH
#ifdef BROKEN_ADD_ENOMEM_LINKS
        insert_head(n); /* BROKEN: links whether or not the allocation succeeded */
#else
        if
        :: !fail -> insert_head(n)
        :: else /* ENOMEM: n is not linked */
        fi;
#endif
#endif
        f = 0;
        fail = 0;
        unlock()
    }
}

/* The invariant activate's 0 promises from then on: every member linked has an object (adds
 * while active link only members that already have one; del's finalise empties a slot only
 * after the member left the list). It is checked in every state reachable after activate
 * returned 0, not only at the end. */
#define FILLED(i) (i >= NM || mst[i] != M_LINKED || slot[i] != 0 || unlinking == i)
#define ALL_FILLED (FILLED(0) && FILLED(1) && FILLED(2) && FILLED(3) && FILLED(4))

proctype Monitor()
{
    bool active_filled;
end:
    atomic {
        (act_err == 0 && !ALL_FILLED) ->
        active_filled = 0;
        assert(active_filled)
    }
}

proctype Deleter()
{
    byte m, o, p, gi;
    bool rdy;
    del(m, o, p, rdy, gi)
}

init {
    byte i;
    initial_list(NI, i);
    atomic {
        run Monitor(); /* first: a process ends only after those started later (it never does) */
        run Activator();
        run Adder(NI);
        run Adder(NI + 1);
        run Deleter();
        run Reader()
    };
    (_nr_pr == 2); /* all but the monitor have finished */
    conservation(i);
    if
    :: act_err == 0 -> all_on_list_filled(i)
    :: else
    fi
}

ltl term { <> sweep_done }
