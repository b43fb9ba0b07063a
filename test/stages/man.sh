#!/usr/bin/env bash
# test/stages/man.sh SRCROOT - the manual pages and the installed documentation, as TAP.
#
# Builds and installs sweepfill (build/stage-man, into a scratch destdir), then checks that
#   - every installed page passes `mandoc -T lint -W warning` and has the contract's sections
#     (SYNOPSIS, DESCRIPTION, CONCURRENCY, PROGRESS, MEMORY ORDERING, RETURN VALUES, ERRORS);
#   - the pages' special characters (\(xx, \[xx]) are only those they mean to use: mandoc
#     accepts any glyph, and \(tm (a trademark sign) once stood where \(mu (a multiplication
#     sign) was meant;
#   - each page's .Nm names are exactly the names it is installed under (its file and the
#     links man/meson.build makes to it), and every link resolves (also through man -w);
#   - every swf_ symbol the built libsweepfill.so exports, every public function-like macro and
#     every public inline function of the installed headers has a page under its own name, so
#     that a function added later fails here until it is documented; the exported helpers of the
#     inline paths (names ending in an underscore) and every symbol lib/sweepfill.map names
#     appear in some page's NAME or SYNOPSIS, and the library exports nothing the map does not
#     let through;
#   - docs/design.md and every examples/**/*.c (at its path under examples/) are installed under
#     share/doc/sweepfill.
# Skips itself when mandoc or meson is missing; fails instead under CI=true.
set -u -o pipefail
src=$(cd "${1:?usage: man.sh SRCROOT}" && pwd)
build=$src/build/stage-man
# shellcheck source=lib/tap.bash
. "$(dirname "$0")/lib/tap.bash"
require_tools "mandoc, meson, ninja-build, binutils" mandoc meson ninja nm
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

build_and_install "$build" "$src" "$tmp/root" "$tmp" -Dbuildtype=release -Dtests=false \
  -Dexamples=false -Dbench=disabled
r=$?
ok $r "sweepfill builds and installs into a scratch destdir"
if [ $r != 0 ]; then
  tail -n 30 "$tmp"/*.log | sed 's/^/# /'
  echo "1..$n"
  exit 1
fi

man7=$(find "$tmp/root" -path '*/man/man7/sweepfill.7' | head -n 1)
[ -n "$man7" ]
ok $? "sweepfill(7) is installed (${man7#"$tmp/root"})"
mandir=$(dirname "$(dirname "${man7:-/nonexistent/x/y}")")
man3=$mandir/man3
incdir=$(find "$tmp/root" -type d -path '*/include/sweepfill' | head -n 1)
so=$build/lib/libsweepfill.so

# Every real page (not a link): lint, and the contract's sections.
pages=$(find "$mandir" -type f -name '*.[0-9]' | sort)
# shellcheck disable=SC2086
sections=$(awk '/^\.Sh / { sub(/^\.Sh /, ""); print FILENAME ": " $0 }' $pages)
for page in $pages; do
  rel=${page#"$mandir/"}
  lint=$(mandoc -T lint -W warning "$page" 2>&1)
  r=$?
  [ -z "$lint" ] || printf '%s\n' "$lint" | sed 's/^/# /'
  ok $r "mandoc -T lint -W warning $rel"
  case $rel in
  man3/*)
    missing=""
    for sec in SYNOPSIS DESCRIPTION CONCURRENCY PROGRESS "MEMORY ORDERING" "RETURN VALUES" ERRORS; do
      [[ $'\n'"$sections"$'\n' == *$'\n'"$page: $sec"$'\n'* ]] || missing="$missing, $sec"
    done
    [ -z "$missing" ]
    ok $? "$rel states synopsis, description, concurrency, progress, ordering, returns, errors${missing:+ (missing${missing#,})}"
    ;;
  esac
done

# Special characters: the glyphs these pages use on purpose. Anything else, such as \(tm (TM),
# \(co or \(rg, is a typo for one of them until it is added here.
glyphs_meant=' em en lq rq aq dq mu di <= >= != -> <- ti ha ba bu pl mi '
# odd_glyphs FILE...: "FILE:LINE: GLYPH" for each special character not in glyphs_meant.
odd_glyphs() {
  grep -Hno -e '\\([^ ][^ ]' -e '\\\[[^] ]*\]' "$@" | while IFS= read -r hit; do
    glyph=${hit##*:}
    name=${glyph#\\(}
    [ "$name" != "$glyph" ] || { name=${glyph#\\[}; name=${name%]}; }
    [[ $glyphs_meant == *" $name "* ]] || echo "${hit%:*}: $glyph"
  done
}
printf '.Pp\nB\\(tmP(P\\-1)/2 and \\[co] but \\(mu and \\(em\n' >"$tmp/glyphs.3"
[ "$(odd_glyphs "$tmp/glyphs.3" | sed "s|^$tmp/||")" = $'glyphs.3:2: \\(tm\nglyphs.3:2: \\[co]' ]
ok $? "the glyph check reports \\(tm and \\[co] and passes \\(mu and \\(em (control)"
# shellcheck disable=SC2086
odd=$(odd_glyphs $pages | sed "s|^$mandir/||")
[ -z "$odd" ]
ok $? "the pages use no unexpected special character (\\(tm where \\(mu was meant)"
[ -z "$odd" ] || printf '%s\n' "$odd" | sed 's/^/# /'

# The names a page documents (.Nm) are the names it is installed under: the page's own and the
# links to it.
# shellcheck disable=SC2086
have=$(awk '/^\.Nm [A-Za-z0-9_]/ { f = FILENAME; sub(/.*\//, "", f); print f, $2 }' $pages | sort -u)
want=$( (
  for page in $pages; do echo "$(basename "$page") $(basename "${page%.*}")"; done
  find "$mandir" -type l -printf '%l %f\n' | sed 's/\.[0-9]$//'
) | sort -u)
[ -n "$have" ] && [ "$have" = "$want" ]
ok $? "each page's .Nm names are the names it is installed under ($(echo "$pages" | wc -l) pages, $(echo "$want" | wc -l) names)"
[ "$have" = "$want" ] || diff <(echo "$have") <(echo "$want") | sed 's/^/# .Nm (<) vs installed (>): /'

dangling=$(find "$mandir" -type l ! -exec test -e {} \; -print)
[ -z "$dangling" ]
ok $? "every man page link resolves${dangling:+ (dangling: $dangling)}"
if command -v man >/dev/null; then
  names=$(find "$man3" -name '*.3' -printf '%f\n' | sed 's/\.3$//' | sort)
  # shellcheck disable=SC2086
  found=$(man -M "$mandir" -w 3 $names 2>"$tmp/man.err" | wc -l)
  [ "$found" = "$(echo "$names" | wc -l)" ] && [ ! -s "$tmp/man.err" ]
  ok $? "man -w finds every section 3 name ($found)"
  sed 's/^/# /' "$tmp/man.err"
else
  missing "man is not installed (Debian: man-db)"
fi

# documented NAME: a man3 page is installed under NAME.
documented() { [ -e "$man3/$1.3" ]; }
! documented swf_no_such_function_
ok $? "the coverage check reports an undocumented name (control)"

# What users call: exported functions and variables, public function-like macros, public inline
# functions. Names ending in an underscore are internal.
exported=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | grep '^swf_' |
  grep -v '_$' | sort -u)
[ -n "$exported" ]
ok $? "libsweepfill.so exports swf_ symbols ($(echo "$exported" | wc -l))"
macros=$(cat "$incdir"/*.h | sed -n 's/^#define \(SWF_[A-Z0-9_]*[A-Z0-9]\)(.*/\1/p' | sort -u)
[ -n "$macros" ]
ok $? "the headers define public function-like macros ($(echo "$macros" | tr '\n' ' '))"
inlines=$(cat "$incdir"/*.h |
  sed -n 's/^static inline [^(]*[^A-Za-z0-9_#]\(swf_[a-z0-9_]*[a-z0-9]\)(.*/\1/p' | sort -u)
[ -n "$inlines" ]
ok $? "the headers define public inline functions ($(echo "$inlines" | wc -l))"
for name in $exported; do
  documented "$name"
  ok $? "exported $name has a man page"
done

# The helpers the inline paths call (swf_feature_added_slow_, swf_thread_self_, ...): a page's
# NAME (.Nm) or SYNOPSIS (.Fn, .Fo, .Va, .Vt, or its literal block) names each.
# in_synopsis NAME: some page's NAME or SYNOPSIS section holds NAME as a word.
in_synopsis() {
  # shellcheck disable=SC2086
  awk -v name="$1" '
    /^\.Sh / { sec = $0; sub(/^\.Sh /, "", sec) }
    (sec == "NAME" || sec == "SYNOPSIS") {
      line = $0; gsub(/[^A-Za-z0-9_]+/, " ", line)
      n = split(line, w, " ")
      for (i = 1; i <= n; i++) if (w[i] == name) { found = 1; exit }
    }
    END { exit found ? 0 : 1 }' $pages
}
! in_synopsis swf_no_such_helper_
ok $? "the NAME/SYNOPSIS check reports an undocumented helper (control)"
helpers=$(nm -D --defined-only "$so" | awk '{print $3}' | sed 's/@.*//' | grep '^swf_.*_$' | sort -u)
for name in $helpers; do
  in_synopsis "$name"
  ok $? "exported helper $name is named in a page's NAME or SYNOPSIS"
done
# lib/sweepfill.map: the names it exports by name, and the patterns it lets through.
map=$src/lib/sweepfill.map
map_names=$(sed -n '/global:/,/local:/p' "$map" | tr -d ' \t;' | grep -v -e '^global:' -e '^local:' -e '^$' -e '\*')
map_globs=$(sed -n '/global:/,/local:/p' "$map" | tr -d ' \t;' | grep '\*' || true)
for name in $map_names; do
  in_synopsis "$name" || documented "$name"
  ok $? "$name, named in lib/sweepfill.map, is named in a page's NAME or SYNOPSIS"
done
outside=""
for name in $(nm -D --defined-only "$so" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u); do
  let_through=no
  for glob in $map_globs; do
    # shellcheck disable=SC2254
    case $name in $glob) let_through=yes ;; esac
  done
  [[ $'\n'"$map_names"$'\n' == *$'\n'"$name"$'\n'* ]] && let_through=yes
  [ $let_through = yes ] || outside="$outside $name"
done
[ -z "$outside" ]
ok $? "libsweepfill.so exports only what lib/sweepfill.map lets through${outside:+ (also:$outside)}"
for name in $macros; do
  documented "$name"
  ok $? "macro $name has a man page"
done
for name in $inlines; do
  documented "$name"
  ok $? "inline $name has a man page"
done

# The design notes and the examples.
docdir=$(find "$tmp/root" -type d -path '*/share/doc/sweepfill' | head -n 1)
[ -n "$docdir" ] && cmp -s "$src/docs/design.md" "$docdir/design.md"
ok $? "docs/design.md is installed under share/doc/sweepfill"
missing=""
examples=$(cd "$src/examples" && find . -name '*.c' | sed 's|^\./||' | sort)
for ex in $examples; do
  cmp -s "$src/examples/$ex" "${docdir:-/nonexistent}/examples/$ex" || missing="$missing $ex"
done
[ -n "$examples" ] && [ -z "$missing" ]
ok $? "every examples/**/*.c is installed under share/doc/sweepfill/examples, at its relative path ($(echo "$examples" | wc -l))${missing:+ (not:$missing)}"

finish
