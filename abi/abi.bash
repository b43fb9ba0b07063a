# abi/abi.bash - sourced by abi/update.sh and test/stages/abi.sh: how the library whose ABI is
# recorded is built, how its ABI is written down, and how a build is judged against the record.
# Both scripts must build and dump the same way, or the comparison would measure the build.
# shellcheck shell=bash disable=SC2034 # the variables are used by the scripts that source this

# The baseline: abidw's description of libsweepfill.so.0, restricted to the types the public
# headers define.
swf_abi_baseline=abi/libsweepfill.so.0.abi
# Optional: abidiff suppression specifications for changes the policy allows but abidiff
# reports (for instance a reserved field given a name); none are needed so far.
swf_abi_suppressions=abi/suppressions.abignore

# A release build (as distributions install it) with debug information, which abidw reads.
swf_abi_meson_options=(-Dbuildtype=release -Dc_args=-g -Ddebug_checks=false -Datomics=ck
  -Ddefault_library=shared -Dtests=false -Dexamples=false -Dbench=disabled)

# swf_abi_build SRC BUILDDIR LOG: configure (or reconfigure) and build; output goes to LOG.
swf_abi_build() {
  if [ -d "$2" ]; then
    meson setup --reconfigure "$2" "$1" "${swf_abi_meson_options[@]}" >"$3" 2>&1
  else
    meson setup "$2" "$1" "${swf_abi_meson_options[@]}" >"$3" 2>&1
  fi && ninja -C "$2" >>"$3" 2>&1
}

# swf_abi_dump LIBRARY HEADERSDIR OUT: write the library's ABI as abixml. No absolute paths and
# hashed type ids, so that regenerating it on another checkout changes only what changed.
swf_abi_dump() {
  abidw --headers-dir "$2" --no-corpus-path --no-comp-dir-path --short-locs \
    --type-id-style hash --out-file "$3" "$1"
}

# swf_abi_check SRC OLD HEADERS1 NEW HEADERS2: the policy. abidiff with added functions and
# variables ignored (adding is compatible); its exit status is 0, or has bit 4 (an ABI change,
# such as a public struct's size or members) or bit 8 (an incompatible change, such as a removed
# function) set, or bits 1-2 when abidiff itself failed. Anything but 0 breaks the policy.
swf_abi_check() {
  local supp=()
  [ -f "$1/$swf_abi_suppressions" ] && supp=(--suppressions "$1/$swf_abi_suppressions")
  abidiff --no-added-syms "${supp[@]}" --headers-dir1 "$3" --headers-dir2 "$5" "$2" "$4"
}
