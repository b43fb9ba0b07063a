#!/usr/bin/env python3
"""test/unit/layers.py SRCDIR | --self-test - the library's layers; arrows that run one way only.

lib/ is four layers, each in its folder: base, cache, sweep, registry. A file may use its own
layer and those below it (base <- cache <- sweep <- registry), never one above. This check reads
every lib/**/*.c and *.h and fails (TAP `not ok`, one point per file) on:
  - a file directly in lib/, in no layer;
  - an #include "..." of a lib header written without its layer's path ("util.h", not
    "base/util.h"), or of a header in a higher layer;
  - an #include of a public header (include/sweepfill) that belongs to a higher layer (the map
    below; a public header not in the map is reported, not checked);
  - a use of a function or variable that a file of a higher layer defines (its non-static
    swfi_ and swf_ definitions at file scope), by name, outside comments and strings;
  - a file-scope definition named swf_ that no public header names: swf_ is the public prefix,
    and a function or variable that lib/ files share among themselves is named swfi_;
  - a struct, union or enum tag defined in lib/ and named swf_ that no public header names:
    internal tags are named swfi_ (the public headers' tags, opaque or not, keep swf_);
  - an atomic operation written directly (__atomic_* builtins, C11 atomic_*_explicit or
    atomic_thread_fence, Concurrency Kit's ck_pr_*) anywhere but lib/base/atomic.h, whose
    wrappers carry the memory order in their names. The public headers (include/sweepfill) keep
    their builtins: their inline paths are the ABI, compiled into the user's code, and cannot
    include a lib/ header; lib/base/rseq.h reads the kernel's rseq area and the per-CPU slots
    inline beside include/sweepfill/abi/rseq_abi.h's sequences and is exempt with it
    (ATOMIC_EXEMPT).
A layer may hold rooms, folders that stack within it in the order ROOMS gives (lib/cache:
store/ <- front/ <- the layer's folder itself, the entry points): the same two rules hold between
rooms as between layers, a file including no header of a room above its own and using no name
that a file of one defines. A folder of a layer that ROOMS does not name is in no room, and fails.
Within a room, files may stand apart in groups (APART: the cache's two front ends, front/thread.c
and front/pcpu.c with front/percpu.c): a file of one group uses no name that a file of another
defines, so that each shares with the other only what the room's other files define.
Each point says what the file includes and which other files' names it uses, by layer and room.
Then one point per folder (a layer's, or a room's), on the .c files directly in it: their uses of
each other's non-static functions and variables (by name, outside comments and string and
character literals; a name after struct, union or enum is a tag, not a use; a use of a static
inline function of a header in the folder counts as a use of every name its body uses, so that
what a file reaches through such a header counts too) must form no circle. The point gives the
files in an order that keeps every use pointing down, each with the files it uses.
--self-test runs the check on a small tree with one of each violation and fails unless each is
found (and a clean tree passes).
"""
import os
import re
import sys
import tempfile

LAYERS = ["base", "cache", "sweep", "registry"]
# The rooms of a layer, bottom up; "" is the layer's own folder. A layer not named has one room.
ROOMS = {"cache": ["store", "front", ""]}
# Groups of a folder's files that use none of each other's names (see the docstring): the
# per-thread front end, and the per-CPU one with its magazines.
APART = {"lib/cache/front": [["thread.c"], ["pcpu.c", "percpu.c"]]}

# Public headers by the layer whose interface they are (abi/: the inline ABI, compiled into a
# user's code but not included by one). abi/binding.h is the owners' inline ABI
# (the per-thread binding table that cache.h's inline path reads), and rseq_abi.h the per-CPU
# sequences it runs (as lib/base/rseq.h does), hence base.
PUBLIC = {
    "api.h": "base",
    "version.h": "base",
    "abi/binding.h": "base",
    "abi/rseq_abi.h": "base",
    "cache.h": "cache",
    "abi/cache_abi.h": "cache",
    "sweep.h": "sweep",
    "abi/sweep_inline.h": "sweep",
    "list.h": "sweep",
    "list_hash.h": "sweep",
    "list_sysqueue.h": "sweep",
    "list_urcu.h": "sweep",
    "pin.h": "sweep",
    "feature.h": "sweep",
    "registry.h": "registry",
    "sweepfill.h": "registry",
}

# The one file that writes atomic operations directly, and the files exempt from the rule (see
# the docstring).
ATOMIC_HOME = "lib/base/atomic.h"
ATOMIC_EXEMPT = {"lib/base/rseq.h"}
ATOMIC = re.compile(r"\b(__atomic_\w+|ck_pr_\w+|atomic_\w+_explicit|atomic_thread_fence|"
                    r"atomic_signal_fence)\s*\(")
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
# File-scope definitions in clang-formatted C: they start in column 0. A function: a name, a
# parameter list, a body; a variable: a name, then an initialiser or the end of the statement.
FUNC_DEF = re.compile(r"^(?!static\b|extern\b|typedef\b)[A-Za-z_][\w \t*]*?\b(swfi?_\w+)[ \t]*"
                      r"\([^;{}]*\)[ \t\n]*(?:__attribute__\(\(.*?\)\)[ \t\n]*)?\{", re.M)
VAR_DEF = re.compile(r"^(?!static\b|extern\b|typedef\b|#|struct \w+ \{|union\b|enum\b)"
                     r"[A-Za-z_][\w \t*]*?\b(swfi?_\w+)[ \t]*(?:\[[^\]]*\][ \t]*)?"
                     r"(?:__attribute__\(\(.*?\)\)[ \t]*)?[=;]", re.M)
NAME = re.compile(r"\bswfi?_\w+\b")
# Within a layer: a name after struct, union or enum is a tag (struct swf_cache_stats is not the
# function swf_cache_stats); a header's static inline function, whose body the uses go through.
TAG_USE = re.compile(r"\b(?:struct|union|enum)[ \t\n]+\w+")
INLINE_DEF = re.compile(r"^static[ \t]+inline\b[^;{}=]*?\b(\w+)[ \t]*\([^;{}]*\)[ \t\n]*"
                        r"(?:__attribute__\(\(.*?\)\)[ \t\n]*)?\{", re.M)
TAG_DEF = re.compile(r"\b(?:struct|union|enum)[ \t\n]+(swf_\w+)[ \t\n]*\{")


def strip(text):
    """The text without comments and with string and character literals emptied, so that
    names there do not count."""
    def blank(m):
        t = m.group(0)
        return " " if t[0] == "/" else t[0] * 2
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', blank,
                  text, flags=re.S)


def layer_of(rel):
    parts = rel.split("/")
    return parts[1] if len(parts) > 2 and parts[1] in LAYERS else None


def room_of(rel):
    """The room of lib/LAYER/[ROOM/]FILE: "" for a file directly in its layer's folder, None for
    a folder that the layer's ROOMS do not name."""
    parts = rel.split("/")
    if len(parts) > 4:
        return None
    room = parts[2] if len(parts) == 4 else ""
    return room if room in ROOMS.get(parts[1], [""]) else None


def rank_of(rel):
    """(layer, room) ranks, bottom up, for comparing two files of lib/."""
    lay, room = layer_of(rel), room_of(rel)
    return (LAYERS.index(lay), ROOMS.get(lay, [""]).index(room))


def group_of(rel):
    """The index of rel's group among its folder's APART groups, or None."""
    for i, group in enumerate(APART.get(os.path.dirname(rel), [])):
        if os.path.basename(rel) in group:
            return i
    return None


def place(rel):
    room = room_of(rel)
    return layer_of(rel) + (f"/{room}" if room else "")


def check(root):
    """Returns [(ok, message)], one per file of lib/."""
    lib = os.path.join(root, "lib")
    files = []
    for dirpath, _, names in os.walk(lib):
        for n in names:
            if n.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(dirpath, n), root))
    files.sort(key=lambda f: (LAYERS.index(layer_of(f)) if layer_of(f) else -1, f))
    texts = {}
    for f in files:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            texts[f] = fh.read()
    stripped = {f: strip(t) for f, t in texts.items()}
    public = set()  # every swf_ name the public headers mention
    inc_dir = os.path.join(root, "include", "sweepfill")
    for dirpath, _, names in os.walk(inc_dir):
        for n in names:
            with open(os.path.join(dirpath, n), encoding="utf-8") as fh:
                public.update(NAME.findall(fh.read()))
    defined = {}  # name -> defining file
    for f in files:
        if f.endswith(".c"):
            for rx in (FUNC_DEF, VAR_DEF):
                for m in rx.finditer(stripped[f]):
                    defined.setdefault(m.group(1), f)
    results = []
    for f in files:
        lay = layer_of(f)
        if lay is None:
            results.append((False, f"{f}: in no layer (lib/{'|'.join(LAYERS)}/)"))
            continue
        if room_of(f) is None:
            results.append((False, f"{f}: in no room of {lay} "
                            f"({' '.join(r + '/' for r in ROOMS.get(lay, []) if r) or 'none'})"))
            continue
        rank, at = LAYERS.index(lay), rank_of(f)
        bad, seen = [], []
        for inc in INCLUDE.findall(texts[f]):
            if inc.startswith("sweepfill/"):
                target = PUBLIC.get(inc[len("sweepfill/"):])
                if target is None:
                    seen.append(f"{inc} (public, no layer: not checked)")
                    continue
            elif inc.split("/")[0] in LAYERS and os.path.exists(os.path.join(lib, inc)):
                target = inc.split("/")[0]
                home = "lib/" + inc
                if target == lay and room_of(home) is not None and rank_of(home) > at:
                    bad.append(f'#include "{inc}": {place(home)} is a room above {place(f)}')
            elif os.path.exists(os.path.join(root, os.path.dirname(f), inc)):
                bad.append(f'#include "{inc}" without its layer\'s path')
                continue
            else:
                seen.append(f"{inc} (not the library's)")
                continue
            seen.append(f"{inc} ({target})")
            if LAYERS.index(target) > rank:
                bad.append(f'#include "{inc}": {target} is above {lay}')
        for name, home in sorted(defined.items()):
            if home == f and name.startswith("swf_") and name not in public:
                bad.append(f"defines {name}, which no public header names (internal: swfi_)")
        for tag in sorted(set(TAG_DEF.findall(stripped[f]))):
            if tag not in public:
                bad.append(f"defines the tag {tag}, which no public header names (internal: swfi_)")
        if f != ATOMIC_HOME and f not in ATOMIC_EXEMPT:
            direct = sorted(set(ATOMIC.findall(stripped[f])))
            if direct:
                bad.append("uses atomic operations directly (" + " ".join(direct) +
                           "): go through base/atomic.h's named wrappers")
        uses = {}
        for name in sorted(set(NAME.findall(stripped[f]))):
            home = defined.get(name)
            if home is None or home == f:
                continue
            known = layer_of(home) is not None and room_of(home) is not None
            uses.setdefault(place(home) if known else "?", []).append(name)
            if layer_of(home) is None or LAYERS.index(layer_of(home)) > rank:
                bad.append(f"uses {name}, defined in {home} ({layer_of(home)}, above {lay})")
            elif known and rank_of(home) > at:
                bad.append(f"uses {name}, defined in {home} ({place(home)}, a room above "
                           f"{place(f)})")
            elif (os.path.dirname(home) == os.path.dirname(f) and group_of(f) is not None
                  and group_of(home) is not None and group_of(home) != group_of(f)):
                bad.append(f"uses {name}, defined in {home}, whose files stand apart from "
                           f"{os.path.basename(f)}'s (APART)")
        what = f"{f} ({place(f)}): includes " + (", ".join(seen) or "nothing of the library's")
        what += "; uses " + ("; ".join(f"{k}: {' '.join(v)}" for k, v in sorted(
            uses.items()))
            or "no other file's names")
        if bad:
            results.append((False, f"{f} ({place(f)}): " + "; ".join(bad) + "\n# " + what))
        else:
            results.append((True, what))
    for lay in LAYERS:
        for room in ROOMS.get(lay, [""]):
            folder = f"lib/{lay}" + (f"/{room}" if room else "")
            results.append(check_folder(folder, files, stripped, defined))
    return results


def body_at(text, brace):
    """The braced block of text that opens at index brace (comments and literals stripped)."""
    depth = 0
    for i in range(brace, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[brace:i + 1]
    return text[brace:]


def folder_uses(folder, files, stripped, defined):
    """The .c files directly in folder, and for each the files of them it uses: {file: {other:
    [names]}}."""
    cs = [f for f in files if os.path.dirname(f) == folder and f.endswith(".c")]
    hs = [f for f in files if os.path.dirname(f) == folder and f.endswith(".h")]
    inline = {}  # a header's static inline function -> the names its body uses
    for h in hs:
        for m in INLINE_DEF.finditer(stripped[h]):
            body = TAG_USE.sub(" ", body_at(stripped[h], m.end() - 1))
            inline[m.group(1)] = set(NAME.findall(body))
    uses = {}
    for f in cs:
        names = set(NAME.findall(TAG_USE.sub(" ", stripped[f])))
        todo, seen = [n for n in names if n in inline], set()
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                names |= inline[n]
                todo += [u for u in inline[n] if u in inline]
        by = {}
        for n in sorted(names):
            home = defined.get(n)
            if home in cs and home != f:
                by.setdefault(home, []).append(n)
        uses[f] = by
    return cs, uses


def circle_through(start, uses, among):
    """The shortest circle from start back to it through files of among, as a list, or None."""
    paths, seen = [[start]], {start}
    while paths:
        nxt = []
        for path in paths:
            for g in sorted(uses[path[-1]]):
                if g == start:
                    return path + [start]
                if g in among and g not in seen:
                    seen.add(g)
                    nxt.append(path + [g])
        paths = nxt
    return None


def check_folder(folder, files, stripped, defined):
    """(ok, message) for the files of one folder, a layer's or a room's: no circle."""
    cs, uses = folder_uses(folder, files, stripped, defined)
    short = os.path.basename
    bad = []
    # Files in an order where each uses only those before it, while one is left that does:
    # what remains at the end lies on, or above, a circle.
    done, left = [], sorted(cs)
    while True:
        ready = [f for f in left if all(g in done for g in uses[f])]
        if not ready:
            break
        done += ready
        left = [f for f in left if f not in ready]
    reported = set()
    for f in left:
        circle = circle_through(f, uses, set(left))
        if circle is None or frozenset(circle) in reported:
            continue
        reported.add(frozenset(circle))
        steps = [f"{short(a)} uses {short(b)} ({' '.join(uses[a][b])})"
                 for a, b in zip(circle, circle[1:])]
        bad.append("a circle: " + ", ".join(steps))
    listed = done + left
    what = "; ".join(f"{short(f)}" + (" -> " + " ".join(short(g) for g in sorted(uses[f]))
                                       if uses[f] else "") for f in listed)
    head = (f"{folder}/: {len(cs)} file{'s' if len(cs) != 1 else ''}, no circle among their "
            "uses of each other's functions")
    if bad:
        return False, f"{folder}/: " + "; ".join(bad) + "\n# " + what
    return True, head + ": " + what


def tap(results):
    print(f"1..{len(results)}")
    for i, (ok, msg) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {msg}")
    return 0 if all(ok for ok, _ in results) else 1


FIXTURE = {
    "lib/base/low.h": "int swfi_low(void);\n",
    "lib/base/low.c": '#include "base/low.h"\nint swfi_low(void)\n{\n    return 0;\n}\n',
    "lib/base/up_call.c": ("/* swfi_high() named in a comment does not count */\n"
                           "int swfi_high(void);\nint up(void)\n{\n    return swfi_high();\n}\n"),
    "lib/base/up_var.c": "extern int swfi_high_var;\nint f(void)\n{\n    return swfi_high_var;\n}\n",
    "lib/base/up_include.c": '#include "cache/high.h"\n',
    "lib/base/up_public.c": '#include "sweepfill/cache.h"\n',
    "lib/base/bare.c": '#include "low.h"\n',
    "lib/cache/high.h": '#include "base/low.h"\nint swfi_high(void);\n',
    "lib/cache/high.c": ('#include "cache/high.h"\n#include "sweepfill/cache.h"\n'
                         "int swfi_high_var = 1;\n\n"
                         "int swfi_high(void)\n{\n    return swfi_low();\n}\n"),
    "lib/stray.c": "int x;\n",
    "lib/base/public.c": "int swf_api(void)\n{\n    return 0;\n}\n",
    "lib/base/misnamed.c": "int swf_secret(void)\n{\n    return 0;\n}\n",
    "include/sweepfill/api.h": "int swf_api(void);\nstruct swf_open;\n",
    "lib/base/tag_public.h": "struct swf_open {\n    int x;\n};\n",
    "lib/base/tag_internal.h": "struct swfi_inner {\n    int x;\n};\n",
    "lib/base/tag_misnamed.h": ("/* struct swf_in_comment { does not count */\n"
                                "struct swf_inner {\n    int x;\n};\n"),
    "lib/base/atomic.h": ("static inline int swfi_load(int *p)\n{\n"
                          "    return __atomic_load_n(p, __ATOMIC_RELAXED);\n}\n"),
    "lib/base/raw_builtin.c": ("int f(int *p)\n{\n    /* __atomic_load_n() in a comment does not"
                               " count */\n    return __atomic_load_n(p, __ATOMIC_SEQ_CST);\n}\n"),
    "lib/base/raw_c11.c": ("#include <stdatomic.h>\nint f(_Atomic int *p)\n{\n"
                           "    return atomic_load_explicit(p, memory_order_relaxed);\n}\n"),
    "lib/base/raw_ck.c": "unsigned f(unsigned *p)\n{\n    return ck_pr_load_uint(p);\n}\n",
    # The cache's rooms: store/ <- front/ <- lib/cache/ itself. A store file that calls a front
    # function, a front file that includes the entry room's header, a front file that uses the
    # store as it may, and a folder that is no room.
    "lib/cache/store/st.h": "int swfi_st(void);\n",
    "lib/cache/store/st.c": ('#include "cache/store/st.h"\n'
                             "int swfi_st(void)\n{\n    return 0;\n}\n"),
    "lib/cache/store/st_up_call.c": "int st_up(void)\n{\n    return swfi_fr();\n}\n",
    "lib/cache/front/fr.c": ('#include "cache/store/st.h"\n'
                             "int swfi_fr(void)\n{\n    return swfi_st();\n}\n"),
    "lib/cache/front/fr_up_include.c": '#include "cache/high.h"\n',
    "lib/cache/attic/old.c": "int old;\n",
    # The front ends stand apart: pcpu.c calls thread.c's function; thread.c uses fr.c's, which
    # neither front end defines.
    "lib/cache/front/thread.c": "int swfi_th(void)\n{\n    return swfi_fr();\n}\n",
    "lib/cache/front/pcpu.c": "int swfi_pc(void)\n{\n    return swfi_th();\n}\n",
    # A circle, closed through a header's static inline function: ring_a.c uses ring_b.c, whose
    # call of swfi_ring_next reaches swfi_ring_a.
    "lib/sweep/ring.h": ("int swfi_ring_a(void);\nstatic inline int swfi_ring_next(void)\n{\n"
                         "    return swfi_ring_a();\n}\n"),
    "lib/sweep/ring_a.c": "int swfi_ring_a(void)\n{\n    return swfi_ring_b();\n}\n",
    "lib/sweep/ring_b.c": ('#include "sweep/ring.h"\n'
                           "int swfi_ring_b(void)\n{\n    return swfi_ring_next();\n}\n"),
    # No circle: r2.c names r1.c's function only in a comment, a string and a struct tag.
    "lib/registry/r1.c": "int swfi_r1(void)\n{\n    return swfi_r2()[0];\n}\n",
    "lib/registry/r2.c": ("struct swfi_r1;\nconst char *swfi_r2(void)\n{\n"
                          "    return \"swfi_r1()\"; /* not swfi_r1() */\n}\n"),
}
FIXTURE_BAD = {"lib/base/up_call.c", "lib/base/up_var.c", "lib/base/up_include.c",
               "lib/base/up_public.c", "lib/base/bare.c", "lib/stray.c",
               "lib/base/misnamed.c", "lib/base/raw_builtin.c", "lib/base/raw_c11.c",
               "lib/base/raw_ck.c", "lib/base/tag_misnamed.h",
               "lib/cache/store/st_up_call.c", "lib/cache/front/fr_up_include.c",
               "lib/cache/attic/old.c", "lib/cache/front/pcpu.c",
               "lib/sweep/"}  # the folders: a circle


def self_test():
    results = []
    with tempfile.TemporaryDirectory() as root:
        for rel, text in FIXTURE.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        found = check(root)
        for ok, msg in found:
            f = msg.split(" ")[0].rstrip(":")
            want = f not in FIXTURE_BAD
            results.append((ok == want, f"{f}: {'passes' if ok else 'fails'} "
                            f"({'as it should' if ok == want else 'WRONG'}): {msg}"))
        want_n = len([f for f in FIXTURE if f.startswith("lib/")]) + sum(
            len(ROOMS.get(lay, [""])) for lay in LAYERS)
        results.append((len(found) == want_n, f"{len(found)} points: the files and the folders"))
    return tap(results)


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        sys.exit(2)
    sys.exit(tap(check(sys.argv[1])))
