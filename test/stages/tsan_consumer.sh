#!/usr/bin/env bash
# test/stages/tsan_consumer.sh ROOT - a consumer's ThreadSanitizer build is clean with no
# suppression file. Prints TAP (test/run runs it as a stage).
#
# What a user does for a TSan build of their program: build sweepfill with TSan too
# (-Db_sanitize=thread, which implies -Datomics=c11), install it, and build the program with
# -fsanitize=thread against the installed copy through pkg-config. The program,
# test/packaging/tsan_consumer/consumer.c, has readers walking a registry and checking each member
# and object, writers adding and deleting members, and activation switched on and off; it runs with
# TSAN_OPTIONS naming no suppressions, and TSan must report nothing. test/packaging/tsan_consumer/
# consumer_urcu.c does the same over a liburcu cds_list (list_urcu.h), when liburcu is installed.
# (A user of the Debian package links the packaged TSan build instead, pkg-config sweepfill-tsan:
# test/stages/deb.sh runs both programs against it.)
#
# The library comes from test/run's tsan stage (build/test-tsan) when that build is there;
# otherwise this configures and builds the library alone in build/test-tsan-consumer.
set -u
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
cd "$root" || exit 1
n=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; }
finish() { echo "1..$n"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! printf 'int main(void){return 0;}\n' | cc -fsanitize=thread -x c - -o "$tmp/probe" 2>/dev/null; then
  [ "${CI:-}" = true ] && { printf 'not ok 1 - tsan consumer: cc -fsanitize=thread does not link (libtsan2 missing; CI=true)\n1..1\n'; exit 1; }
  echo "ok 1 - tsan consumer # SKIP cc -fsanitize=thread does not link (libtsan missing)"
  echo "1..1"
  exit 0
fi

build=build/test-tsan
if [ -f "$build/build.ninja" ] && meson introspect --buildoptions "$build" 2>/dev/null |
  python3 -c 'import json,sys; o={x["name"]: x["value"] for x in json.load(sys.stdin)}; sys.exit(o.get("b_sanitize") != "thread")'; then
  ninja -C "$build" >"$tmp/build.log" 2>&1
  ok $? "the library's TSan build ($build, from the tsan stage) is up to date"
else
  build=build/test-tsan-consumer
  if [ -f "$build/build.ninja" ]; then
    meson setup --reconfigure "$build" >"$tmp/setup.log" 2>&1
  else
    meson setup "$build" -Dbuildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false \
      -Dtests=false -Dexamples=false -Dbench=disabled >"$tmp/setup.log" 2>&1
  fi && ninja -C "$build" >"$tmp/build.log" 2>&1
  r=$?
  ok $r "sweepfill built with -Db_sanitize=thread ($build)"
  [ $r = 0 ] || { tail -n 20 "$tmp/setup.log" "$tmp/build.log" | sed 's/^/# /'; finish; }
fi
grep -q -- '-DSWF_ATOMICS_C11' "$build/build.ninja"
ok $? "the TSan build uses C11 atomics (-Datomics=c11 implied by -Db_sanitize=thread)"

meson install -C "$build" --destdir "$tmp/root" --no-rebuild >"$tmp/install.log" 2>&1
ok $? "installed into a scratch destdir"
pc=$(find "$tmp/root" -name sweepfill.pc | head -n 1)
prefix=$(sed -n 's/^prefix=//p' "${pc:-/dev/null}")
pkgconf() {
  PKG_CONFIG_PATH=$(dirname "${pc:-/x}")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
    pkg-config --define-variable=prefix="$tmp/root$prefix" "$@"
}
libdir=$(pkgconf --variable=libdir sweepfill)
# shellcheck disable=SC2046
cc -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=thread -o "$tmp/consumer" \
  test/packaging/tsan_consumer/consumer.c $(pkgconf --cflags --libs sweepfill) -pthread >"$tmp/cc.log" 2>&1
r=$?
ok $r "cc -fsanitize=thread consumer.c \$(pkg-config --cflags --libs sweepfill)"
[ $r = 0 ] || { sed 's/^/# /' "$tmp/cc.log"; finish; }

# No suppressions: test/run's TSAN_OPTIONS (which name test/common/tsan.supp) are replaced.
TSAN_OPTIONS="halt_on_error=0 exitcode=66" \
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$tmp/consumer" --ms 500 --readers 2 --writers 2 >"$tmp/run.log" 2>&1
status=$?
reports=$(grep -c '^WARNING: ThreadSanitizer' "$tmp/run.log")
summary=$(grep '^tsan consumer:' "$tmp/run.log")
printf '%s\n' "$summary" | sed 's/^/# /'
[ "$reports" = 0 ]
ok $? "ThreadSanitizer reports nothing, with no suppression file ($reports reports)"
[ "$reports" = 0 ] || grep -A 8 '^WARNING: ThreadSanitizer' "$tmp/run.log" | head -n 60 | sed 's/^/# /'
[ $status = 0 ] && [[ $summary == *": OK" ]]
ok $? "the consumer's own checks hold: members and objects seen initialised, all released (exit $status)"

# The same for a liburcu (memb) program over its own cds_list: readers in rcu_read_lock
# sections, writers adding and deleting (swf_pin_retire through call_rcu), sweeps, a
# synchronize_rcu of its own and an rcu_barrier, annotated as list_urcu.h says.
if ! pkg-config --exists liburcu-memb 2>/dev/null; then
  n=$((n + 1))
  echo "ok $n - tsan consumer over liburcu # SKIP liburcu-memb is not installed"
  finish
fi
# shellcheck disable=SC2046
cc -std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=thread -o "$tmp/consumer_urcu" \
  test/packaging/tsan_consumer/consumer_urcu.c $(pkgconf --cflags --libs sweepfill) \
  $(pkg-config --cflags --libs liburcu-memb) -pthread >"$tmp/cc.log" 2>&1
r=$?
ok $r "cc -fsanitize=thread consumer_urcu.c \$(pkg-config --cflags --libs sweepfill liburcu-memb)"
[ $r = 0 ] || { sed 's/^/# /' "$tmp/cc.log"; finish; }
TSAN_OPTIONS="halt_on_error=0 exitcode=66" \
  LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  "$tmp/consumer_urcu" --ms 500 --readers 2 --writers 2 >"$tmp/run.log" 2>&1
status=$?
reports=$(grep -c '^WARNING: ThreadSanitizer' "$tmp/run.log")
summary=$(grep '^tsan consumer (urcu):' "$tmp/run.log")
printf '%s\n' "$summary" | sed 's/^/# /'
[ "$reports" = 0 ]
ok $? "liburcu consumer: ThreadSanitizer reports nothing, with no suppression file ($reports reports)"
[ "$reports" = 0 ] || grep -A 8 '^WARNING: ThreadSanitizer' "$tmp/run.log" | head -n 60 | sed 's/^/# /'
[ $status = 0 ] && [[ $summary == *": OK" ]]
ok $? "liburcu consumer's own checks hold: members and objects seen initialised, all freed (exit $status)"
finish
