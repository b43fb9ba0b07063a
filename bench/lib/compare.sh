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
#   --force      compare even where the two sides' host state or cache mode differ (below)
#   -- FLAGS     the binary's flags (default: --quick --benchmark_min_time=0.05
#                --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true: the
#                protocol's repetitions, bench/README.md "One protocol"; a one-thread family runs
#                pinned to the last CPU, as bench/run runs it)
# Before comparing, the two JSON contexts are read: where they record different host memory
# states (host_memory: warm or as-found, bench_seed's and bench_live's) or cache modes
# (cache_mode, which bench/run and this script record: per-CPU or per-thread), the two runs
# measured different things and the comparison is refused (exit 3) unless --force; where a side
# does not record one, a line says so.
# The table is compare.py's: per benchmark, the relative change of time (and CPU time) from A to
# B, -0.10 meaning B takes 10 % less; with repetitions, a Mann-Whitney U test per benchmark says
# whether the difference stands out of the noise. The seed family reports manual time (the grow
# and the sweep only). A shared machine moves figures by tens of per cent: compare runs made
# close together, with repetitions.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
family=seed out=$root/bench/out/compare force=0
args=() flags=()
while [ $# -gt 0 ]; do
  case $1 in
  --family=*) family=${1#*=} ;;
  --out=*) out=${1#*=} ;;
  --force) force=1 ;;
  --) shift; flags=("$@"); break ;;
  -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*) echo "bench/run --compare: unknown option $1 (see --help)" >&2; exit 2 ;;
  *) args+=("$1") ;;
  esac
  shift
done
[ ${#args[@]} -eq 2 ] || { echo "usage: bench/run --compare [--family=F] [--out=DIR] A B [-- FLAGS...]" >&2; exit 2; }
[ ${#flags[@]} -gt 0 ] || flags=(--quick --benchmark_min_time=0.05 --benchmark_repetitions=5
  --benchmark_enable_random_interleaving=true)
pinned=()
case $family in seed | nowait_failures | sweep_overhead | alloc_*)
  command -v taskset >/dev/null && pinned=(taskset -c $(($(nproc) - 1))) ;;
esac
cache_mode="per-CPU where the system has rseq (the default)"
[ "${SWF_PERCPU:-}" = 0 ] && cache_mode="per-thread (SWF_PERCPU=0)"
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
  echo "bench/run --compare: $a ($name): ${pinned[*]} bench_$family ${flags[*]}" >&2
  # Debian's libbenchmark is compiled without NDEBUG ("Library was built as DEBUG"): the
  # harness's build, not this release build's.
  ${pinned[@]+"${pinned[@]}"} "$build/bench/bench_$family" "${flags[@]}" \
    --benchmark_out="$out/$family-$name.json" --benchmark_out_format=json 2>&1 |
    sed '/Library was built as DEBUG/d' >>"$out/$name.log" || {
    echo "bench/run --compare: bench_$family failed at $a (see $out/$name.log)" >&2
    return 1
  }
  /usr/bin/python3 - "$out/$family-$name.json" "$cache_mode" <<'PY'
import json, sys
with open(sys.argv[1], encoding="utf-8") as f:
    doc = json.load(f)
doc.setdefault("context", {})["cache_mode"] = sys.argv[2]
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(doc, f, indent=2)
PY
  echo "$out/$family-$name.json"
}

a=$(json_of "${args[0]}") || exit 1
b=$(json_of "${args[1]}") || exit 1
echo "bench/run --compare: $a -> $b" >&2
# The two sides must have measured the same thing: the same host memory state and cache mode.
/usr/bin/python3 - "$a" "$b" "$force" <<'PY'
import json, sys
a, b, force = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
ctx = [json.load(open(p, encoding="utf-8")).get("context", {}) for p in (a, b)]
differ = False
for key, what in (("host_memory", "host memory state"), ("cache_mode", "cache mode")):
    va, vb = (c.get(key) for c in ctx)
    if va is None and vb is None:
        continue
    if va is None or vb is None:
        print(f"bench/run --compare: {a if va is None else b} does not record its {what} "
              f"({key}); the other side's: {va or vb}", file=sys.stderr)
    elif va != vb:
        differ = True
        print(f"bench/run --compare: the two sides' {what} differ ({key}: {va} against {vb}): "
              f"they measured different things", file=sys.stderr)
if differ and not force:
    print("bench/run --compare: refused (--force compares them anyway)", file=sys.stderr)
    sys.exit(3)
PY
r=$?
[ $r = 0 ] || exit $r
color=()
[ -t 1 ] || color=(--no-color)
/usr/bin/python3 "$tool" "${color[@]}" benchmarks "$a" "$b"
