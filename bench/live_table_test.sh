#!/usr/bin/env bash
# bench/live_table_test.sh BENCH_LIVE - bench_live's tables show no measurement it did not make.
# At N = 2,000 an activation takes well under a millisecond and often ends before any request
# does; such a row must say "not measured" (with the activation's length), never latencies and a
# rate of 0, which read as a measurement. Runs bench_live at that N (one repetition, short phases;
# not --smoke, whose own checks are live_smoke's) and reads its Markdown. TAP.
set -u -o pipefail
exe=${1:?usage: live_table_test.sh BENCH_LIVE}
n=0
failed=0
ok() {
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
out=$("$exe" --n=2000 --sizes=64 --reps=1 --idle-ms=60 --on-ms=40 2>/dev/null)
rc=$?
ok $rc "bench_live --n=2000 --reps=1 ran (exit status $rc)"
# The first table: up to the line that opens the second.
first=$(sed -n '/^| N | size | variant | idle/,/^Requests above/p' <<<"$out" | grep '^| 2k | 64 |')
second=$(sed -n '/^Requests above/,$p' <<<"$out" | grep '^| 2k | 64 |')
rows=$(grep -c . <<<"$first")
[ "$rows" -ge 4 ]
ok $? "the latency table has a row per variant ($rows)"
# Fields split on " | " (the first holds the leading "| N"): 3 = variant, 5 = activation
# latencies, 7 = requests per second during activation.
zeros=$(awk -F' [|] ' '$5 == "0.00 / 0.00 / 0.00 / 0" || $7 == "0.00M"' <<<"$first")
[ -z "$zeros" ]
ok $? "no row shows activation latencies or a rate of 0${zeros:+: $zeros}"
bad=0
while IFS= read -r row; do
  variant=$(awk -F' [|] ' '{print $3}' <<<"$row")
  if [[ $row == *"not measured: no request ended during the "*" ms activation"* ]]; then
    grep -q "| $variant | not measured | not measured |" <<<"$second" || bad=1
  fi
done <<<"$first"
[ $bad = 0 ]
ok $? "a row not measured in the latency table is not measured in the slow-request table either"
unmeasured=$(grep -c 'not measured: no request ended' <<<"$first")
echo "# $unmeasured of $rows rows had no request end during the activation"
echo "1..$n"
exit $failed
