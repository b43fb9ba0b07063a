# test/stages/lib/tap.bash - what every test/run stage script shares: TAP points, the plan, and
# skipping the whole stage when a tool is missing. Source it; it sets n and failed.
#   ok STATUS TEXT      a point: "ok N - TEXT" when STATUS is 0, else "not ok N - TEXT"
#   skip TEXT           a skipped point
#   finish              the plan, and exit 1 if a point failed
#   require_tools HINT TOOL...   when a TOOL is missing: one skipped point naming it and HINT
#                                (the Debian packages to install), the plan, exit 0; under
#                                CI=true a failing point instead, exit 1 (test/run installs
#                                every stage's packages, so a missing tool there is a bug)
#   missing TEXT        a point for something missing: skipped, or failing under CI=true
#   build_and_install BUILD SRC DESTDIR LOGDIR OPTION...
#                       meson setup BUILD (reconfigured when it exists) with the options, build,
#                       and install into DESTDIR; logs in LOGDIR/{setup,build,install}.log;
#                       the status of the first step that failed, or 0
n=0
failed=0
ok() {
  n=$((n + 1))
  if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
missing() {
  if [ "${CI:-}" = true ]; then ok 1 "$1 (CI=true: what is missing fails)"; else skip "$1"; fi
}
finish() {
  echo "1..$n"
  exit $failed
}
require_tools() {
  local hint=$1 tool
  shift
  for tool in "$@"; do
    if ! command -v "$tool" >/dev/null; then
      missing "$tool is not installed (Debian: $hint)"
      finish
    fi
  done
}
build_and_install() {
  local build=$1 src=$2 destdir=$3 logs=$4
  shift 4
  if [ -d "$build" ]; then
    meson setup --reconfigure "$build" "$src" "$@" >"$logs/setup.log" 2>&1
  else
    meson setup "$build" "$src" "$@" >"$logs/setup.log" 2>&1
  fi &&
    ninja -C "$build" >"$logs/build.log" 2>&1 &&
    meson install -C "$build" --destdir "$destdir" --no-rebuild >"$logs/install.log" 2>&1
}
