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
    inline beside include/sweepfill/rseq_abi.h's sequences and is exempt with it (ATOMIC_EXEMPT).
Each point says what the file includes and which other files' names it uses, by layer.
--self-test runs the check on a small tree with one of each violation and fails unless each is
found (and a clean tree passes).
"""
import os
import re
import sys
import tempfile

LAYERS = ["base", "cache", "sweep", "registry"]

# Public headers by the layer whose interface they are. binding.h is the owners' inline ABI
# (the per-thread binding table that cache.h's inline path reads), and rseq_abi.h the per-CPU
# sequences it runs (as lib/base/rseq.h does), hence base.
PUBLIC = {
    "api.h": "base",
    "version.h": "base",
    "binding.h": "base",
    "rseq_abi.h": "base",
    "cache.h": "cache",
    "cache_abi.h": "cache",
    "sweep.h": "sweep",
    "sweep_inline.h": "sweep",
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
    for n in os.listdir(inc_dir) if os.path.isdir(inc_dir) else []:
        with open(os.path.join(inc_dir, n), encoding="utf-8") as fh:
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
        rank = LAYERS.index(lay)
        bad, seen = [], []
        for inc in INCLUDE.findall(texts[f]):
            if inc.startswith("sweepfill/"):
                target = PUBLIC.get(inc[len("sweepfill/"):])
                if target is None:
                    seen.append(f"{inc} (public, no layer: not checked)")
                    continue
            elif inc.split("/")[0] in LAYERS and os.path.exists(os.path.join(lib, inc)):
                target = inc.split("/")[0]
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
            uses.setdefault(layer_of(home) or "?", []).append(name)
            if layer_of(home) is None or LAYERS.index(layer_of(home)) > rank:
                bad.append(f"uses {name}, defined in {home} ({layer_of(home)}, above {lay})")
        what = f"{f} ({lay}): includes " + (", ".join(seen) or "nothing of the library's")
        what += "; uses " + ("; ".join(f"{k}: {' '.join(v)}" for k, v in sorted(
            uses.items(), key=lambda kv: LAYERS.index(kv[0]) if kv[0] in LAYERS else 9))
            or "no other file's names")
        if bad:
            results.append((False, f"{f} ({lay}): " + "; ".join(bad) + "\n# " + what))
        else:
            results.append((True, what))
    return results


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
}
FIXTURE_BAD = {"lib/base/up_call.c", "lib/base/up_var.c", "lib/base/up_include.c",
               "lib/base/up_public.c", "lib/base/bare.c", "lib/stray.c",
               "lib/base/misnamed.c", "lib/base/raw_builtin.c", "lib/base/raw_c11.c",
               "lib/base/raw_ck.c", "lib/base/tag_misnamed.h"}


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
        results.append((len(found) == len([f for f in FIXTURE if f.startswith("lib/")]), f"{len(found)} files checked"))
    return tap(results)


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        sys.exit(self_test())
    if len(sys.argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        sys.exit(2)
    sys.exit(tap(check(sys.argv[1])))
