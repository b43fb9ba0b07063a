#!/usr/bin/env bash
# bench/lib/live.sh - the live family (bench_live, bench/README.md, "live"): requests served while
# a feature is switched on and off. What bench/run --live runs.
#
# Usage: bench/run --live [--quick] [--build-dir=DIR] [--out=DIR] [bench_live flags...]
#   --quick          bench_live --smoke --n=100k (64 B, one repetition, short phases): seconds,
#                    not minutes; N large enough that the activation lasts long enough for
#                    requests to end during it (at --smoke's own N = 2000 it takes under a
#                    millisecond, and the table would have nothing to show for it)
#   --build-dir=DIR  use DIR/bench/bench_live as built; otherwise configure and build the
#                    release build build/bench (as bench/run does) and use it
#   --out=DIR        where the results go (default bench/out)
#   other arguments go to bench_live (e.g. --reps=5, --n=100k, --grow-first)
# Writes OUT/live.json (bench_live's JSON), OUT/live.md (the tables), OUT/live.png (the p99 per
# 10 ms window through an activation, bench/live_plot.py, when matplotlib is installed) and
# OUT/live.log (bench_live's per-measurement lines). The full run takes about 10 minutes on
# 2 cores. Do not run it under nice or beside other work if the figures are to mean anything.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build_dir='' out='' flags=()
for arg in "$@"; do
  case $arg in
  --quick) flags+=(--smoke --n=100k) ;;
  --build-dir=*) build_dir=${arg#*=} ;;
  --out=*) out=${arg#*=} ;;
  -h | --help)
    sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *) flags+=("$arg") ;;
  esac
done
out=${out:-$root/bench/out}
mkdir -p "$out" || exit 1
: >"$out/live.log"
if [ -z "$build_dir" ]; then
  build_dir=$root/build/bench
  opts=(-Dbuildtype=release -Dbench=enabled -Dtests=false -Dexamples=false)
  if [ -f "$build_dir/build.ninja" ]; then
    meson configure "$build_dir" "${opts[@]}" >>"$out/live.log" 2>&1
  else
    meson setup "$build_dir" "$root" "${opts[@]}" >>"$out/live.log" 2>&1
  fi || { echo "bench/run --live: configuring $build_dir failed ($out/live.log)" >&2; exit 1; }
  ninja -C "$build_dir" bench/bench_live >>"$out/live.log" 2>&1 ||
    { echo "bench/run --live: building bench_live failed ($out/live.log)" >&2; exit 1; }
fi
exe=$build_dir/bench/bench_live
[ -x "$exe" ] || { echo "bench/run --live: $exe not found" >&2; exit 1; }

echo "running bench_live ${flags[*]} (per-measurement lines: $out/live.log)"
"$exe" --json="$out/live.json" "${flags[@]}" >"$out/live.md" 2>>"$out/live.log"
rc=$?
cat "$out/live.md"
python=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null; then
    python=$p
    break
  fi
done
if [ $rc -eq 0 ] && [ -n "$python" ]; then
  "$python" "$root/bench/live_plot.py" "$out/live.json" --out "$out/live.png" || rc=1
  echo "plot: $out/live.png"
elif [ -z "$python" ]; then
  echo "no plot: matplotlib is not installed (python3-matplotlib)"
fi
[ $rc -eq 0 ] || echo "bench/run --live: bench_live failed (the end of $out/live.log):" >&2
[ $rc -eq 0 ] || tail -n 5 "$out/live.log" >&2
exit $rc
