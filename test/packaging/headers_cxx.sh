#!/usr/bin/env bash
# Every public header compiles alone as C++ without a warning, with g++ and with clang++, at
# -Wall -Wextra -Wshadow -Wzero-as-null-pointer-constant -Wold-style-cast -Werror; and
# abi/sweep_inline.h and list_urcu.h, included alone, stop the compilation with exactly one
# diagnostic, their #error, in C and in C++. TAP. Arguments: the include directory, then the
# headers (names under sweepfill/). A compiler that is not installed is skipped, with its name;
# under CI=true (test/run installs g++ and clang) it fails.
set -u
inc=$1
shift
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=1; fi; }
skip() {
  if [ "${CI:-}" = true ]; then ok 1 "$1: $2 (CI=true)"; else n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; fi
}
ck_flags=$(pkg-config --cflags ck 2>/dev/null)
warn=(-Wall -Wextra -Wshadow -Wzero-as-null-pointer-constant -Wold-style-cast -Werror)
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for cxx in g++ clang++; do
  if ! command -v "$cxx" >/dev/null; then
    skip "the headers alone under $cxx" "$cxx is not installed"
    continue
  fi
  for h in "$@"; do
    # shellcheck disable=SC2086
    printf '#include <sweepfill/%s>\n' "$h" |
      "$cxx" -x c++ -fsyntax-only "${warn[@]}" -I"$inc" $ck_flags - >"$out" 2>&1
    r=$?
    ok $r "sweepfill/$h alone: $cxx ${warn[*]}"
    [ $r = 0 ] || sed 's/^/# /' "$out" | head -n 20
  done
done

# The #error, and nothing after it: abi/sweep_inline.h without sweep.h, list_urcu.h without a
# liburcu flavour before it.
only_error() { # header, the #error's text (a fixed string)
  for cc in gcc clang g++ clang++; do
    command -v "$cc" >/dev/null || { skip "$1 alone under $cc" "$cc is not installed"; continue; }
    lang=c
    case $cc in *++) lang=c++ ;; esac
    # shellcheck disable=SC2086
    printf '#include <sweepfill/%s>\n' "$1" |
      "$cc" -x $lang -fsyntax-only -Wall -Wextra -I"$inc" $ck_flags - >"$out" 2>&1
    r=$?
    diags=$(grep -cE '(error|warning):' "$out")
    [ $r != 0 ] && [ "$diags" = 1 ] && grep -E '(error|warning):' "$out" | grep -qF "$2"
    ok $? "$1 alone under $cc: fails with one diagnostic, the #error ($diags diagnostic(s))"
    [ "$diags" = 1 ] || sed 's/^/# /' "$out" | head -n 20
  done
}
only_error abi/sweep_inline.h 'include <sweepfill/sweep.h>, not sweep_inline.h'
only_error list_urcu.h 'include your liburcu flavour'
echo "1..$n"
exit $failed
