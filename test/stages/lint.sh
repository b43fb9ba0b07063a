#!/usr/bin/env bash
# test/stages/lint.sh SRCROOT - the gates for what no test reads, as TAP, in well under a minute:
#   - clang-format --dry-run --Werror (the repository's .clang-format) over every C and C++ file;
#   - lib/ built with -Werror at meson's warning_level 2 (-Wall -Wextra) and the warnings below,
#     with gcc and with clang;
#   - lib/ built again under gcc's -fanalyzer, with the C11 atomics (what the analyzer can follow;
#     ck_pr's inline assembly hides the stores that publish a pointer, which reads as a leak);
#   - shellcheck over every shell script (SC2317, "unreachable", is off: it cannot see functions
#     called through a variable, as test/run's stage does);
#   - pyflakes over every Python file.
# Skips itself when a tool is missing; fails instead under CI=true.
set -u -o pipefail
src=$(cd "${1:?usage: lint.sh SRCROOT}" && pwd)
# shellcheck source=lib/tap.bash
. "$(dirname "$0")/lib/tap.bash"
require_tools "clang-format, meson, ninja-build, shellcheck, pyflakes3, gcc" clang-format meson \
  ninja shellcheck pyflakes3 gcc
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The tree's files: git's list where this is a checkout, else every file under the root.
tracked() {
  if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$src" ls-files
  else
    find . -path ./build -prune -o -type f -print | sed 's|^\./||'
  fi
}
tracked | sort >"$tmp/files"

# show FILE: the first lines of a failure's output, as TAP comments.
show() { head -n 40 "$1" | sed 's/^/# /'; }

c_files=$(grep -E '\.(c|h|cc)$' "$tmp/files")
# shellcheck disable=SC2086 # one name a word
clang-format --dry-run --Werror $c_files >"$tmp/format.log" 2>&1
r=$?
ok $r "clang-format --dry-run --Werror: $(echo "$c_files" | wc -l) C and C++ files as .clang-format has them"
[ $r = 0 ] || show "$tmp/format.log"
# A section banner is one line: clang-format moves the closing */ of one past 100 columns onto a
# line of its own, where it stays formatted and reads badly.
# shellcheck disable=SC2086 # one name a word
grep -n -A1 '^ */\* ---- ' $c_files | grep -E -- '-[0-9]+- *\*/$' >"$tmp/banners.log"
[ ! -s "$tmp/banners.log" ]
ok $? "every section banner is one line (/* ---- name ---- */ within 100 columns)"
show "$tmp/banners.log"

# lib/ with -Werror. Beyond -Wall -Wextra: the warnings that catch what review misses in a
# library of this kind (a shadowed name, a format string, an undefined macro in #if, a function
# without a prototype, arithmetic on void *, a VLA, an implicit double).
warnings="-Wshadow -Wformat=2 -Wundef -Wstrict-prototypes -Wmissing-prototypes -Wpointer-arith"
warnings="$warnings -Wvla -Wnull-dereference -Wdouble-promotion"
lib_only=(-Dtests=false -Dexamples=false -Dbench=disabled -Dwerror=true)
# lib_build NAME OPTION...: configure build/stage-lint-NAME from scratch and build it.
lib_build() {
  local dir=$src/build/stage-lint-$1
  shift
  rm -rf "$dir"
  meson setup "$dir" "$src" "$@" >"$tmp/setup.log" 2>&1 && ninja -C "$dir" -k 0 >"$tmp/build.log" 2>&1
}
lib_build werror "${lib_only[@]}" -Dc_args="$warnings"
r=$?
ok $r "lib/ builds with -Werror, -Wall -Wextra $warnings"
[ $r = 0 ] || show "$tmp/build.log"
CC=clang lib_build clang "${lib_only[@]}" -Dc_args="$warnings"
r=$?
ok $r "lib/ builds with clang -Werror and the same warnings (the fuzz harness builds it with clang)"
[ $r = 0 ] || show "$tmp/build.log"
lib_build analyzer "${lib_only[@]}" -Dbuildtype=debug -Datomics=c11 -Dc_args=-fanalyzer
r=$?
ok $r "lib/ builds with -Werror under gcc -fanalyzer (C11 atomics)"
[ $r = 0 ] || grep -A3 'warning\|error' "$tmp/build.log" | show /dev/stdin

shell_files=$(while read -r f; do
  case $f in
  *.sh | *.bash) echo "$f" ;;
  *.*) ;;
  *) head -n 1 "$f" 2>/dev/null | grep -qE '^#!.*(ba)?sh' && echo "$f" ;;
  esac
done <"$tmp/files")
# shellcheck disable=SC2086 # one name a word
shellcheck -x -P SCRIPTDIR -e SC2317 $shell_files >"$tmp/shellcheck.log" 2>&1
r=$?
ok $r "shellcheck: $(echo "$shell_files" | wc -l) shell scripts"
[ $r = 0 ] || show "$tmp/shellcheck.log"

py_files=$(grep -E '\.py$' "$tmp/files")
# shellcheck disable=SC2086 # one name a word
pyflakes3 $py_files >"$tmp/pyflakes.log" 2>&1
r=$?
ok $r "pyflakes: $(echo "$py_files" | wc -l) Python files"
[ $r = 0 ] || show "$tmp/pyflakes.log"

# Controls: each gate fails on what it is there to catch.
printf 'int f(void){return 1;}\n' >"$tmp/bad.c"
! clang-format --style=file:"$src/.clang-format" --dry-run --Werror "$tmp/bad.c" >/dev/null 2>&1
ok $? "clang-format fails on a function body on one line (control)"
# shellcheck disable=SC2016 # the control script's own $1, unexpanded
printf '#!/bin/sh\necho $1\n' >"$tmp/bad.sh"
! shellcheck "$tmp/bad.sh" >/dev/null 2>&1
ok $? "shellcheck fails on an unquoted expansion (control)"
printf 'import os\n' >"$tmp/bad.py"
! pyflakes3 "$tmp/bad.py" >/dev/null 2>&1
ok $? "pyflakes fails on an unused import (control)"

finish
