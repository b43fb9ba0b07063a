#!/usr/bin/env bash
# bench/lib/compare.sh - what bench/run --compare runs: compare two benchmark runs with Google
# Benchmark's own tool, compare.py (Debian: libbenchmark-tools, /usr/share/benchmark/compare.py;
# it needs python3-scipy), installed here when missing (as root).
#
# Usage: bench/run --compare [OPTIONS] A B [-- BENCHMARK FLAGS...]
#   A and B are each either a Google Benchmark JSON file (what bench/run writes: bench/out/*.json)
#   or a git revision (a commit, branch or tag of this repository). For a revision, compare checks
#   it out into a temporary directory (git archive: the repository itself is not touched), builds
#   it there (release, the library and that one benchmark), runs the family's binary with the
#   flags, and compares the JSON it writes; the two revisions run one after the other, with the
#   same flags.
#   --family=F   the benchmark binary for revisions, bench_F: seed (default), nowait_failures,
#                sweep_overhead, section_bounds, many_threads, or alloc_M for the alloc family
#                against malloc M (glibc, jemalloc, mimalloc, tcmalloc: bench_alloc_M, built
#                where M is installed)
#   --out=DIR    where the JSON of revisions goes (default bench/out/compare)
#   -- FLAGS     the binary's flags (default: --quick --benchmark_min_time=0.05
#                --benchmark_repetitions=3; repetitions give compare.py's U test something to
#                work with)
# The table is compare.py's: per benchmark, the relative change of time (and CPU time) from A to
# B, -0.10 meaning B takes 10 % less; with repetitions, a Mann-Whitney U test per benchmark says
# whether the difference stands out of the noise. The seed family reports manual time (the grow
# and the sweep only). A shared machine moves figures by tens of per cent: compare runs made
# close together, with repetitions.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
family=seed out=$root/bench/out/compare
args=() flags=()
while [ $# -gt 0 ]; do
  case $1 in
  --family=*) family=${1#*=} ;;
  --out=*) out=${1#*=} ;;
  --) shift; flags=("$@"); break ;;
  -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "bench/run --compare: unknown option $1 (see --help)" >&2; exit 2 ;;
  *) args+=("$1") ;;
  esac
  shift
done
[ ${#args[@]} -eq 2 ] || { echo "usage: bench/run --compare [--family=F] [--out=DIR] A B [-- FLAGS...]" >&2; exit 2; }
[ ${#flags[@]} -gt 0 ] || flags=(--quick --benchmark_min_time=0.05 --benchmark_repetitions=3)
case $family in seed | nowait_failures | sweep_overhead | section_bounds | many_threads | alloc_glibc | alloc_jemalloc | alloc_mimalloc | alloc_tcmalloc) ;; *) echo "bench/run --compare: no family $family" >&2; exit 2 ;; esac

tool=/usr/share/benchmark/compare.py
if [ ! -f "$tool" ] || ! /usr/bin/python3 -c 'import scipy' 2>/dev/null; then
  "$root/.ci/install-deps" libbenchmark-tools python3-scipy python3-numpy || exit 1
fi
[ -f "$tool" ] || { echo "bench/run --compare: $tool not found (Debian package libbenchmark-tools)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# json_of A: the JSON file for A, running the benchmark at revision A if A is not a file.
json_of() {
  local a=$1 rev name wt build
  if [ -f "$a" ]; then
    echo "$a"
    return 0
  fi
  rev=$(git -C "$root" rev-parse --verify --quiet "$a^{commit}") || {
    echo "bench/run --compare: $a is neither a file nor a revision" >&2
    return 1
  }
  name=$(git -C "$root" rev-parse --short "$rev")
  wt=$tmp/src-$name build=$tmp/build-$name
  mkdir -p "$out" "$wt"
  echo "bench/run --compare: $a ($name): building a checkout of it in $tmp (log: $out/$name.log)" >&2
  git -C "$root" archive "$rev" | tar -x -C "$wt" || return 1
  { meson setup "$build" "$wt" --buildtype=release -Dbench=enabled -Dtests=false \
      -Dexamples=false && ninja -C "$build" "bench/bench_$family"; } >>"$out/$name.log" 2>&1 || {
    echo "bench/run --compare: $a did not build; the end of $out/$name.log:" >&2
    tail -n 15 "$out/$name.log" >&2
    return 1
  }
  echo "bench/run --compare: $a ($name): bench_$family ${flags[*]}" >&2
  "$build/bench/bench_$family" "${flags[@]}" --benchmark_out="$out/$family-$name.json" \
    --benchmark_out_format=json >>"$out/$name.log" 2>&1 || {
    echo "bench/run --compare: bench_$family failed at $a (see $out/$name.log)" >&2
    return 1
  }
  echo "$out/$family-$name.json"
}

a=$(json_of "${args[0]}") || exit 1
b=$(json_of "${args[1]}") || exit 1
echo "bench/run --compare: $a -> $b" >&2
color=()
[ -t 1 ] || color=(--no-color)
/usr/bin/python3 "$tool" "${color[@]}" benchmarks "$a" "$b"
