#!/usr/bin/env bash
# test/common/run_tap.sh DESCRIPTION PROGRAM [ARGS...] - run a program that is not a TAP producer
# and report it as one TAP point: ok when it exits 0. Its output is kept as TAP comments.
set -u
what=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out" | sed 's/^/# /'
if [ $status -eq 0 ]; then echo "ok 1 - $what"; else echo "not ok 1 - $what (exit $status)"; fi
echo "1..1"
exit $status
