#!/usr/bin/env bash
# test/common/missing.sh WHAT PACKAGE - the TAP of tests that were not built because PACKAGE (a
# Debian package) is not installed: a skipped point naming both, so that test/run lists it among the
# skips; under CI=true, where test/run installs PACKAGE, a failing point.
if [ "${CI:-}" = true ]; then
  echo "not ok 1 - $1: $2 is not installed (CI=true: what is missing fails)"
  echo "1..1"
  exit 1
fi
echo "ok 1 - $1 # SKIP $2 is not installed"
echo "1..1"
