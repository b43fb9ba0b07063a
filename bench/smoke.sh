#!/bin/sh
# bench/smoke.sh - run one benchmark binary briefly and report the outcome as TAP, so that
# `meson test --suite bench` keeps every benchmark building and running (no timing is judged).
# Usage: bench/smoke.sh BINARY [FLAG...]; prints the binary's output as TAP comments, then
# "ok 1 - NAME ran" when it exited with status 0, "not ok 1 - NAME ran (exit status N)" otherwise.
if [ $# -lt 1 ]; then
  echo "usage: $0 BINARY [FLAG...]" >&2
  exit 2
fi
bin=$1
shift
name=$(basename "$bin")
out=$(mktemp "${TMPDIR:-/tmp}/swf_smoke.XXXXXX") || exit 2
"$bin" "$@" >"$out" 2>&1
rc=$?
sed 's/^/# /' "$out"
rm -f "$out"
if [ "$rc" -eq 0 ]; then
  echo "ok 1 - $name ran"
else
  echo "not ok 1 - $name ran (exit status $rc)"
fi
echo "1..1"
