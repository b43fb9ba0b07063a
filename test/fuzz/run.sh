#!/usr/bin/env bash
# test/fuzz/run.sh SRCROOT OUTDIR [SECONDS] - build and run the libFuzzer harness; print TAP.
#
#   1. build test/fuzz/fuzz_api.c and the library sources with clang
#      -fsanitize=fuzzer,address,undefined into OUTDIR (the harness needs clang; the
#      library's own builds use the default compiler);
#   2. replay every input of the committed seed corpus (test/fuzz/corpus/);
#   3. replay every regression input (test/fuzz/regressions/): inputs that once failed; then the
#      seed and regression inputs again with SWF_FUZZ_MIGRATE=1 (the harness moves its thread to
#      another CPU before every operation, as a loaded machine may; the harness keeps its process
#      on one CPU, so the model stays exact), in the default per-CPU mode and with cpu_id;
#   4. replay the inputs that show known library bugs (test/fuzz/known-bugs/) in strict mode -
#      only when SWF_FUZZ_KNOWN_BUGS=1, since they fail until those bugs are fixed; skipped
#      otherwise;
#   5. fuzz for SECONDS (default 60, or SWF_FUZZ_SECONDS) from a copy of the corpus, and report
#      the executions, the rate and the corpus growth. A failure is minimised
#      (-minimize_crash=1) and left in OUTDIR to be kept under test/fuzz/regressions/.
set -u -o pipefail
src=$(cd "${1:?usage: run.sh SRCROOT OUTDIR [SECONDS]}" && pwd)
out=${2:?usage: run.sh SRCROOT OUTDIR [SECONDS]}
secs=${3:-${SWF_FUZZ_SECONDS:-60}}
cc=${SWF_FUZZ_CC:-clang}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Without clang the fuzzing is skipped; under CI=true, which installs it, that fails.
if ! command -v "$cc" >/dev/null; then
  [ "${CI:-}" = true ] && { printf 'not ok 1 - %s is not installed (CI=true)\n1..1\n' "$cc"; exit 1; }
  echo "1..0 # SKIP $cc is not installed (libFuzzer needs clang and libclang-rt-dev)"
  exit 0
fi

n=0
failed=0
point() { # status(0 ok, 1 not ok, 2 skip), text
  n=$((n + 1))
  case $1 in
    0) echo "ok $n - $2" ;;
    2) echo "ok $n # SKIP $2" ;;
    *) echo "not ok $n - $2"; failed=$((failed + 1)) ;;
  esac
}

# Replay files one by one (libFuzzer runs each file given on its command line once).
replay() { # label, env assignment or "", files...
  local label=$1 env=$2
  shift 2
  if [ $# -eq 0 ]; then
    point 2 "no $label inputs"
    return
  fi
  local bad=0 f
  for f in "$@"; do
    # shellcheck disable=SC2086 # $env is a list of NAME=VALUE words
    if ! env $env "$out/fuzz_api" "$f" >"$out/replay.log" 2>&1; then
      bad=$((bad + 1))
      echo "# $label input $(basename "$f") fails:"
      grep -E -A2 'fuzz_api: operation|ERROR: AddressSanitizer|runtime error|ERROR: LeakSanitizer' \
        "$out/replay.log" | head -8 | sed 's/^/#   /'
    fi
  done
  if [ $bad -eq 0 ]; then
    point 0 "replays the $# $label inputs with no failure"
  else
    point 1 "$bad of $# $label inputs fail"
  fi
}

# 1. Build. The ignore list only keeps coverage callbacks out of cache_free_memory's loop over
# the debug build's address map (65,536 entries per destroyed cache), which halves the rate.
echo "fun:cache_free_memory" >"$out/coverage-ignore.txt"
# shellcheck disable=SC2054 # the commas are -fsanitize's own
build=("$cc" -g -O1 -std=c11 -Wall -Wextra -D_GNU_SOURCE
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  "-fsanitize-coverage-ignorelist=$out/coverage-ignore.txt"
  -I"$src/include" -I"$src/lib" -I"$src/test"
  "$src"/lib/*/*.c "$src"/lib/*/*/*.c "$src/test/fuzz/fuzz_api.c" -lck -lpthread -o "$out/fuzz_api")
if ! "${build[@]}" >"$out/build.log" 2>&1; then
  point 1 "fuzz_api does not build with $cc -fsanitize=fuzzer,address,undefined"
  sed 's/^/# /' "$out/build.log" | head -20
  echo "1..$n"
  exit 1
fi
warnings=$(grep -c 'warning:' "$out/build.log")
if [ "$warnings" -eq 0 ]; then
  point 0 "fuzz_api builds with $cc -fsanitize=fuzzer,address,undefined, no warnings"
else
  point 1 "fuzz_api builds with $warnings warnings"
  grep 'warning:' "$out/build.log" | head -10 | sed 's/^/# /'
fi

# 2-4. Replays.
shopt -s nullglob
replay "seed corpus" "" "$src"/test/fuzz/corpus/*
replay "regression" "" "$src"/test/fuzz/regressions/*.bin
replay "migrated seed and regression" "SWF_FUZZ_MIGRATE=1" \
  "$src"/test/fuzz/corpus/* "$src"/test/fuzz/regressions/*.bin
replay "migrated cpu_id-mode regression" "SWF_FUZZ_MIGRATE=1 SWF_PERCPU=cpu_id" \
  "$src"/test/fuzz/regressions/*.bin
known=("$src"/test/fuzz/known-bugs/*.bin)
if [ "${SWF_FUZZ_KNOWN_BUGS:-0}" = 1 ]; then
  replay "known-bug" "SWF_FUZZ_STRICT_PARSE=1" "${known[@]}"
else
  point 2 "${#known[@]} inputs show known library bugs (test/fuzz/known-bugs/README.md); set SWF_FUZZ_KNOWN_BUGS=1 to run them"
fi

# 5. Fuzz. ASan keeps no allocation stacks while fuzzing (twice the rate); a failure found is
# replayed with them.
rm -rf "$out/corpus" "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*
mkdir -p "$out/corpus"
cp "$src"/test/fuzz/corpus/* "$out/corpus/"
start=$(find "$out/corpus" -type f | wc -l)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_context_size=0" \
  "$out/fuzz_api" -max_total_time="$secs" -timeout=30 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$out/" "$out/corpus" >"$out/fuzz.log" 2>&1
rc=$?
execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$out/fuzz.log")
rate=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$out/fuzz.log")
rss=$(sed -nE 's/^stat::peak_rss_mb: *([0-9]+)/\1/p' "$out/fuzz.log")
cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$out/fuzz.log" | tail -1)
end=$(find "$out/corpus" -type f | wc -l)
artifacts=("$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*)
artifact=${artifacts[0]:-}
if [ $rc -eq 0 ] && [ -z "$artifact" ]; then
  point 0 "fuzzed ${secs} s: ${execs:-?} executions (${rate:-?}/s), ${cov:-coverage ?}, corpus $start -> $end inputs, peak RSS ${rss:-?} MB, no failure"
else
  point 1 "fuzzing failed after ${execs:-?} executions: ${artifact:-exit status $rc}"
  if [ -n "$artifact" ]; then
    "$out/fuzz_api" -minimize_crash=1 -runs=20000 -exact_artifact_path="$out/minimized" \
      "$artifact" >"$out/minimize.log" 2>&1
    "$out/fuzz_api" "$out/minimized" >"$out/minimized.log" 2>&1
    echo "# minimised to $out/minimized ($(wc -c <"$out/minimized") bytes): keep it as"
    echo "#   test/fuzz/regressions/<name>.bin once the bug is understood. It fails with:"
  fi
  log="$out/fuzz.log"
  [ -n "$artifact" ] && log="$out/minimized.log"
  grep -E -A3 'fuzz_api: operation|ERROR: AddressSanitizer|runtime error|ERROR: LeakSanitizer|ERROR: libFuzzer' \
    "$log" | head -16 | sed 's/^/#   /'
fi

echo "1..$n"
[ $failed -eq 0 ]
