#!/usr/bin/env bash
# docs/model/check.sh [WORKDIR] - model-check sweepfill's Promela models with spin and print TAP.
#
# For every configuration below: spin -a generates the verifier, gcc compiles pan.c, pan runs
# an exhaustive search (no bitstate or hash-compaction approximation) and the result becomes one
# TAP point with the states stored, the depth reached and the memory used. Correct models must
# finish with "errors: 0", a complete search and no memory-limit stop; each deliberately broken
# variant must end in the error named for it, which shows the model can catch that bug.
# Safety runs (-DSAFETY) check every assertion and invalid end states (deadlock); liveness runs
# check the LTL property `term` (<> sweep_done, or <> deact_done) for acceptance cycles. Each
# search may use SWF_MODEL_MEMLIM_MB of memory (4096 by default; the largest needs about 2.3 GB).
# docs/model/README.md explains the models, the properties and the figures.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work"
cp "$here"/*.pml "$work"/
cd "$work" || exit 1

# A missing tool skips the check; under CI=true, which installs both, it fails.
for tool in spin gcc; do
  if ! command -v "$tool" >/dev/null; then
    [ "${CI:-}" = true ] && { printf 'not ok 1 - %s is not installed (CI=true)\n1..1\n' "$tool"; exit 1; }
    echo "1..0 # SKIP $tool is not installed"
    exit 0
  fi
done

n=0
failed=0
memlim=${SWF_MODEL_MEMLIM_MB:-4096}

point() { # pass(0/1), text
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    failed=$((failed + 1))
  fi
}

# verify NAME MODEL KIND EXPECT SPIN_DEFINES
#   KIND: safety | liveness
#   EXPECT: "pass", or an extended regular expression the error report must match
verify() {
  local name=$1 model=$2 kind=$3 expect=$4
  shift 4
  local dir="run-$n-${name// /_}"
  mkdir -p "$dir" && cp ./*.pml "$dir"/
  local cflags=(-O1 -w "-DMEMLIM=$memlim") pflags=(-m200000)
  if [ "$expect" != pass ]; then
    # A broken variant fails within a few hundred thousand states: a quicker compile and a
    # smaller hash table (2^20 slots instead of 2^24) cost less than they lose.
    cflags[0]=-O0
    pflags+=(-w20)
  fi
  if [ "$kind" = safety ]; then
    cflags+=(-DSAFETY -DNOCLAIM)
  else
    pflags+=(-a)
  fi
  if ! (cd "$dir" && spin -a "$@" "$model" >spin.log 2>&1); then
    point 1 "$name: spin -a failed"
    sed 's/^/# /' "$dir/spin.log"
    return
  fi
  if ! (cd "$dir" && gcc "${cflags[@]}" -o pan pan.c >gcc.log 2>&1); then
    point 1 "$name: pan did not compile"
    sed 's/^/# /' "$dir/gcc.log" | head -20
    return
  fi
  local t0=$SECONDS
  (cd "$dir" && ./pan "${pflags[@]}" >pan.log 2>&1)
  local secs=$((SECONDS - t0))
  local log="$dir/pan.log"
  local states depth mem errors report
  states=$(sed -nE 's/^ *([0-9.e+]+) states, stored.*/\1/p' "$log" | head -1)
  depth=$(sed -nE 's/.*depth reached ([0-9]+).*/\1/p' "$log" | head -1)
  mem=$(sed -nE 's/^ *([0-9.]+)[[:space:]]+total actual memory usage.*/\1/p' "$log" | head -1)
  errors=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' "$log" | head -1)
  report=$(grep -m1 -E '^pan:[0-9]+: ' "$log" | sed -E 's/^pan:[0-9]+: //; s/ \(at depth [0-9]+\)//')
  local figures="${states:-?} states, depth ${depth:-?}, ${mem:-?} MB, ${secs} s"
  if [ "$expect" = pass ]; then
    if [ "${errors:-x}" = 0 ] && ! grep -qE 'Search not completed|reached -DMEMLIM|max search depth too small' "$log"; then
      point 0 "$name: $figures, no errors"
    else
      point 1 "$name: ${report:-search incomplete} ($figures)"
      grep -E 'assertion|cycle|MEMLIM|depth too small|not completed' "$log" | sed 's/^/# /'
    fi
  else
    if [ "${errors:-0}" != 0 ] && printf '%s\n' "$report" | grep -qE "$expect"; then
      point 0 "broken variant $name caught: $report ($figures)"
    else
      point 1 "broken variant $name NOT caught (wanted /$expect/, got '${report:-no error}')"
    fi
  fi
}

safety="completeness, single publication, no use after free, conservation, visit bound, no deadlock"

# The activation protocol: 2 members linked before activate + 2 adders, 1 deletion, 1 reader;
# a monitor checks in every state after activate returned 0 that every linked member has an
# object. WAIT_FAILS: the sweep's refills may get nothing. WEAK_PEEK: the sweep's relaxed
# emptiness check may read a stale NULL. ADD_ENOMEM: add's allocation may fail. Each of these
# adds a choice, so a run with one explores every behaviour of the same run without it as well:
# the plain R=1 K=1, R=2 K=1 and R=1 K=2 runs are contained in these three.
verify "activation [$safety, WAIT may fail: ENOMEM consistent] 4 members R=1 K=1" \
  activation.pml safety pass -DNI=2 -DR=1 -DK=1 -DWAIT_FAILS
verify "activation [$safety, stale emptiness check] 4 members R=2 K=1" activation.pml safety pass \
  -DNI=2 -DR=2 -DK=1 -DWEAK_PEEK
verify "activation [$safety, add may fail: ENOMEM links nothing] 4 members R=1 K=2" \
  activation.pml safety pass -DNI=2 -DR=1 -DK=2 -DADD_ENOMEM
verify "activation [termination: LTL <> sweep_done, no acceptance cycle] 4 members R=1 K=1" \
  activation.pml liveness pass -DNI=2 -DR=1 -DK=1 -DNO_VISIT_BOUND

# The resumable cursor: members linked before the sweep + adders, 2 deletions (cursor included).
# (3+1 added R=1 K=1 is contained in its WAIT_FAILS run below.)
verify "cursor [$safety] 4 members R=1 K=1" cursor.pml safety pass -DNI=4 -DNA=0 -DR=1 -DK=1
verify "cursor [$safety] 3+1 added R=2 K=1" cursor.pml safety pass -DNI=3 -DNA=1 -DR=2 -DK=1
verify "cursor [$safety] 3+1 added R=1 K=2" cursor.pml safety pass -DNI=3 -DNA=1 -DR=1 -DK=2
verify "cursor [$safety] 4+1 added R=1 K=1" cursor.pml safety pass -DNI=4 -DNA=1 -DR=1 -DK=1
verify "cursor [$safety, WAIT may fail: ENOMEM consistent] 3+1 added R=1 K=1" \
  cursor.pml safety pass -DNI=3 -DNA=1 -DR=1 -DK=1 -DWAIT_FAILS
verify "cursor [termination: LTL <> sweep_done, no acceptance cycle] 3+1 added R=1 K=1" \
  cursor.pml liveness pass -DNI=3 -DNA=1 -DR=1 -DK=1 -DNO_VISIT_BOUND

# Deactivation racing adds, a del and a reader, from an active registry whose members all have
# objects: K visits per section, B objects per retired batch. REC_FAILS: its reader record may
# not be allocated (ENOMEM, then the caller retries); RETIRE_FAILS: a deferred free may find no
# magazine (synchronous grace period, ENOMEM); RECORDS: epoch records evicted and recycled.
dsafety="each object freed once, readers safe until they leave, no use after free, active => filled, returned inactive => empty, no leak, visit bound, no deadlock"
verify "deactivate [$dsafety, record may fail: ENOMEM leaves it active] 2+2 added K=1 B=2" \
  deactivate.pml safety pass -DNI=2 -DNA=2 -DK=1 -DB=2 -DREC_FAILS
verify "deactivate [$dsafety] 3+1 added K=2 B=1" deactivate.pml safety pass -DNI=3 -DNA=1 -DK=2 -DB=1
verify "deactivate [$dsafety, record and deferral may fail: ENOMEM consistent] 2+1 added K=1 B=2" \
  deactivate.pml safety pass -DNI=2 -DNA=1 -DK=1 -DB=2 -DREC_FAILS -DRETIRE_FAILS
verify "deactivate [$dsafety, records evicted and recycled] 2+2 added K=1 B=2" deactivate.pml \
  safety pass -DNI=2 -DNA=2 -DK=1 -DB=2 -DRECORDS
verify "deactivate [termination: LTL <> deact_done, no acceptance cycle] 2+1 added K=1 B=2" \
  deactivate.pml liveness pass -DNI=2 -DNA=1 -DK=1 -DB=2

# del's finalisation and the release/re-add contract: 2 rounds of del (with a release callback
# or NULL) and a retried add of the same node, a reader, add's allocation failing.
rsafety="release never on a linked node, active => filled, no use after free, no leak, no deadlock"
verify "release [$rsafety] 2 rounds" release.pml safety pass -DNC=2 -DADD_ENOMEM
verify "release [$rsafety] 3 rounds" release.pml safety pass -DNC=3 -DADD_ENOMEM

# Exact activation on a user's list (feature.h): 2 adders racing an activation and a
# deactivation, a deletion, on a machine that buffers stores; fence A in full, or membarrier.
fsafety="filled when on, empty when off, each object freed once, no leak, no deadlock"
verify "feature [$fsafety] 1+2 added, fences" feature.pml safety pass -DNA=2
verify "feature [$fsafety] 1+2 added, membarrier" feature.pml safety pass -DNA=2 -DMEMBARRIER

# Catch-up (feature.h): 2 adders whose allocation may fail (owed), 2 threads calling
# swf_feature_catch_up twice each (two sweeps in flight, one waiting), the sweep's allocation may
# fail (ENOMEM, still owed). Checked at each return of 0: every member owed before the call has
# an object.
verify "feature catch-up [owed before the call => filled at its return 0, no deadlock] 2 adders, 2 callers x2, sweeps may fail" \
  feature.pml safety pass -DCATCH_UP -DNA=2 -DNC=2 -DSWEEP_FAILS

# The owed table (owed.pml): members owed in the table or, the table full, counted for a walk;
# deleted and released while a catch-up fills them, their memory reused by a new member owed
# again (the same entry: NT=1); an add's retry on its own marked slot racing a catch-up, which
# waits for the retry's claim; deactivate racing a release. Catch-up's contract as feature.h
# states it: a member owed before the call and still linked has an object at its return of 0,
# but one that a retry returning during the call left owed again (EAGAIN). Without that
# exception (CU_STRICT) the retry run fails: the exception is needed.
osafety="no touch of a released member, published once, freed once, no leak, table invariant, add 0 => filled, no deadlock"
verify "owed [$osafety, catch-up 0 => owed before filled] 2 members deleted, reused, table full" \
  owed.pml safety pass -DNT=1 -DNINC0=2 -DNTRY=1
verify "owed [$osafety, catch-up 0 => owed before filled but by a retry owed again, waits for a retry's claim] retries racing a catch-up" \
  owed.pml safety pass -DNT=1 -DNINC0=1 -DNTRY=2
verify "owed [$osafety, deactivated => no entry, mark or object] deactivate racing release, reuse, retries" \
  owed.pml safety pass -DNT=1 -DNINC0=2 -DNTRY=2 -DNTRY1=0 -DDEACT
verify "owed/contract-without-the-retry-exception (a retry marks an untabled member under the walk)" \
  owed.pml safety 'assertion violated caught_up' -DNT=1 -DNINC0=1 -DNTRY=2 -DCU_STRICT

# Broken variants: each must fail, with the error that names its bug.
uaf='assertion violated \(mst\[m\]!=3\)'
verify "activation/add-ignores-flag" activation.pml safety 'assertion violated \(slot\[i\]!=0\)' \
  -DBROKEN_NO_FLAG_CHECK
verify "activation/flag-read-outside-mutex" activation.pml safety \
  'assertion violated \(slot\[i\]!=0\)' -DBROKEN_FLAG_OUTSIDE
verify "activation/publish-before-init (no release)" activation.pml safety \
  'assertion violated \(ost\[o\]==2\)' -DNI=1 -DBROKEN_PUBLISH_BEFORE_INIT
verify "activation/del-without-grace-period" activation.pml safety "$uaf" -DBROKEN_NO_GRACE
verify "activation/reader-load-without-acquire" activation.pml safety \
  'assertion violated \(snap\[o\]==2\)' -DNI=1 -DBROKEN_READER_RELAXED
verify "activation/sweep-plain-store-after-stale-check" activation.pml safety \
  'assertion violated \(slot\[m\]==0\)' -DWEAK_PEEK -DBROKEN_SWEEP_PLAIN_STORE
verify "activation/add-links-before-publishing (no store fence)" activation.pml safety \
  'assertion violated \(slot\[n\]==0\)' -DBROKEN_ADD_LINK_BEFORE_PUBLISH
verify "activation/add-links-on-ENOMEM" activation.pml safety \
  'assertion violated (active_filled|\(slot\[i\]!=0\))' -DADD_ENOMEM -DBROKEN_ADD_ENOMEM_LINKS
verify "cursor/no-linked-check" cursor.pml safety "$uaf" -DBROKEN_NO_LINKED_CHECK
verify "cursor/reclaim-ignores-pin" cursor.pml safety "$uaf" -DBROKEN_NO_UNPIN_WAIT
verify "cursor/yield-restarts-from-head (termination, LTL)" cursor.pml liveness \
  'acceptance cycle' -DBROKEN_YIELD_RESTARTS -DNO_VISIT_BOUND
verify "cursor/yield-restarts-from-head (termination, visit bound)" cursor.pml safety \
  'assertion violated \(visits<=' -DBROKEN_YIELD_RESTARTS
verify "deactivate/flag-cleared-before-record (ENOMEM leaves it inactive)" deactivate.pml safety \
  'assertion violated inactive_empty' -DREC_FAILS -DBROKEN_CLEAR_THEN_FAIL
verify "deactivate/flag-cleared-after-walk (active, emptied)" deactivate.pml safety \
  'assertion violated active_filled' -DBROKEN_FLAG_AFTER_WALK
verify "deactivate/flag-cleared-after-walk (an add publishes after it)" deactivate.pml safety \
  'assertion violated inactive_empty' -DBROKEN_FLAG_AFTER_WALK -DMONITOR_INACTIVE_ONLY
verify "deactivate/retire-without-grace-period" deactivate.pml safety 'assertion violated valid' \
  -DBROKEN_RETIRE_NO_GRACE
verify "deactivate/retire-without-taking" deactivate.pml safety \
  'assertion violated \(owner\[o\]==255\)' -DBROKEN_DEACT_NO_TAKE
verify "deactivate/eviction-ignores-held" deactivate.pml safety "$uaf" -DRECORDS \
  -DBROKEN_EVICT_IGNORES_HELD
verify "release/old-contract (UNLINKED before release)" release.pml safety \
  'assertion violated \(mst\[m\]!=1\)' -DBROKEN_RELEASE_OLD
verify "release/state-store-overtakes-take (no release)" release.pml safety \
  'assertion violated \(slot\[0\]==0\)' -DBROKEN_FINALISE_STATE_EARLY
verify "release/add-links-on-ENOMEM" release.pml safety 'assertion violated active_filled' \
  -DADD_ENOMEM -DBROKEN_ADD_ENOMEM_LINKS
verify "feature/adder-without-fence (the link buffered past the flag's read)" feature.pml \
  safety 'assertion violated .*slot\[m\]!=0' -DBROKEN_NO_FENCE
verify "feature/activator-without-membarrier" feature.pml safety \
  'assertion violated .*slot\[m\]!=0' -DMEMBARRIER -DBROKEN_NO_FENCE
verify "feature/adder-reads-the-flag-before-linking" feature.pml safety \
  'assertion violated .*slot\[m\]!=0' -DBROKEN_READ_BEFORE_LINK
verify "feature/deactivate-does-not-wait-for-adders" feature.pml safety \
  'assertion violated \(slot\[i\]==0\)' -DBROKEN_NO_DRAIN
verify "feature/adder-does-not-read-the-flag-again" feature.pml safety \
  'assertion violated \(slot\[i\]==0\)' -DBROKEN_NO_RECHECK
verify "feature/catch-up-returns-early (an owed flag read without the mutex)" feature.pml \
  safety 'assertion violated .*slot\[i\]!=0' -DCATCH_UP -DBROKEN_EARLY_RETURN

verify "owed/settle-frees-the-entry-before-its-CAS" owed.pml safety \
  'assertion violated (table_ok|\(alive)' -DNTRY=1 -DBROKEN_SETTLE_ORDER
verify "owed/release-does-not-wait-for-a-claim" owed.pml safety \
  'assertion violated \(alive\[a\]&&\(inc\[a\]==ci\)\)' -DNTRY=1 -DBROKEN_RELEASE_NO_WAIT
verify "owed/release-frees-a-claimed-entry" owed.pml safety 'assertion violated (table_ok|\(alive)' \
  -DNTRY=1 -DBROKEN_CLAIM_IGNORED
verify "owed/retry-takes-its-own-mark-for-an-object" owed.pml safety 'assertion violated add_filled' \
  -DNINC0=1 -DBROKEN_RETRY_AS_FILLED
verify "owed/deactivate-without-clearing-the-table" owed.pml safety \
  'assertion violated  ?!\(\(m>=32\)\)|off_empty' -DDEACT -DNTRY=2 -DNTRY1=0 -DBROKEN_NO_CLEAR_OWED
verify "owed/claim-passes-an-entry-a-retry-claimed (catch-up returns before the retry settles it)" \
  owed.pml safety 'assertion violated caught_up' -DNT=1 -DNINC0=1 -DNTRY=2 -DBROKEN_SKIP_CLAIMED

# The library's pin (pin.h, lib/sweep/pin.c): swf_pin_retire racing the sweeps' swf_pin_put, with the
# grace period of an epoch/RCU list and of a lock-protected list (swf_grace_lock).
pinsafe="freed exactly once, no leak, no use after free, no pin after the grace period, completeness, visit bound, no deadlock"
verify "pin, epoch/RCU grace [$pinsafe] 2 sweeps, 3 members, 2 deletions" pin.pml safety pass \
  -DMODE_DEFER -DNM=3 -DNS=2 -DNREFILL=0
verify "pin, epoch/RCU grace [$pinsafe] 1 sweep with a refill + a reader, 4 members, 2 deletions" \
  pin.pml safety pass -DMODE_DEFER -DNM=4 -DNS=1 -DREADER -DNREFILL=1
verify "pin, lock grace [$pinsafe] 2 sweeps with a refill each, 3 members, 2 deletions" pin.pml \
  safety pass -DMODE_LOCK -DNM=3 -DNS=2 -DNREFILL=1
verify "pin, epoch/RCU grace [termination: LTL <> both sweeps done] 2 sweeps, 3 members" \
  pin.pml liveness pass -DMODE_DEFER -DNM=3 -DNS=2 -DND=1 -DNREFILL=1 -DNO_VISIT_BOUND
verify "pin/grace-over-reads-count-then-sets-bit (leak)" pin.pml safety \
  'assertion violated \(mst\[i\]!=2\)' -DMODE_DEFER -DNM=3 -DNREFILL=0 -DBROKEN_GRACE_SPLIT
verify "pin/put-frees-before-grace-period" pin.pml safety "$uaf" -DMODE_DEFER -DNM=3 -DNREFILL=0 \
  -DBROKEN_PUT_NO_GRACE
verify "pin/retire-after-the-next-unlink (the retire rule)" pin.pml safety "$uaf" -DMODE_DEFER \
  -DNM=3 -DNREFILL=0 -DBROKEN_RETIRE_LATE
verify "pin/lock-retire-frees-a-pinned-member" pin.pml safety "$uaf" -DMODE_LOCK -DNM=3 \
  -DBROKEN_LOCK_IGNORES_PIN
verify "pin/linked-ignores-retire (the refill revisits a freed cursor)" pin.pml safety "$uaf" \
  -DMODE_DEFER -DNM=3 -DNS=1 -DNREFILL=1 -DBROKEN_LINKED_TRUE

echo "1..$n"
[ "$failed" -eq 0 ]
