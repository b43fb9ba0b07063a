#!/usr/bin/env python3
"""test/packaging/readme_snippets.py - every C block in README.md compiles. Speaks TAP.

Each fenced ```c block of the README must carry, on the line just above its opening fence, one of
three markers (HTML comments, invisible on a rendered page):

    <!-- example: examples/NAME.c -->
        The block is that file, verbatim: a whole program, which examples/meson.build builds and
        runs as a test (suite examples) in every build of test/run. Edit the file and paste it
        back, or the other way round; this test says where they differ.

    <!-- excerpt: examples/DIR/NAME.c -->
        The block is the part of that file between its two /* [README] */ marker lines,
        verbatim: the file is a whole program built and run as a test, and the README shows the
        lines that matter (the "Your lists" section does this).

    <!-- fragment -->
        A few statements, not a program: compiled here (-std=c11 -pedantic-errors -Wall -Wextra
        -Werror -Wno-unused -fsyntax-only) as the body of a function in a file that includes <sweepfill/sweepfill.h>, <ck_epoch.h>, <stdio.h> and
        <stdlib.h>. Everything it uses must be declared in the block itself.

A block with no marker fails, and so does an examples/readme_*.c that no marker names, or an
example with [README] markers that no excerpt names (either would no longer be what the README
shows).

    readme_snippets.py README SOURCE_ROOT [CC [CFLAGS...]]
    readme_snippets.py --self-test SOURCE_ROOT [CC [CFLAGS...]]

CC defaults to cc; CFLAGS to -I SOURCE_ROOT/include and pkg-config's flags for ck. --self-test
checks the checker on a made-up README: a verbatim example, a marked fragment, a fragment that
does not compile, an unmarked block and an example that differs from its file.
"""

import difflib
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```\s*([A-Za-z0-9_+-]*)\s*$")
EXAMPLE = re.compile(r"^<!--\s*example:\s*(\S+)\s*-->\s*$")
EXCERPT = re.compile(r"^<!--\s*excerpt:\s*(\S+)\s*-->\s*$")
EXCERPT_MARK = "/* [README] */"
FRAGMENT = re.compile(r"^<!--\s*fragment\s*-->\s*$")
FRAGMENT_FLAGS = ["-std=c11", "-pedantic-errors", "-Wall", "-Wextra", "-Werror", "-Wno-unused",
                  "-fsyntax-only"]
WRAP_HEAD = ("#include <ck_epoch.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
             "#include <sweepfill/sweepfill.h>\n\nvoid swf_readme_fragment(void);\n"
             "void swf_readme_fragment(void)\n{\n")


def blocks(text):
    """The fenced blocks of a Markdown text: (language, first line number of the code, code,
    the line above the opening fence)."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1).lower()
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            i += 1
        code = "\n".join(lines[start + 1:i]) + "\n"
        above = lines[start - 1] if start > 0 else ""
        out.append((lang, start + 2, code, above))
        i += 1
    return out


def check(readme, root, cc, say):
    """Check one README; say(ok, what, detail_lines) reports each point."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    named = set()
    found = [b for b in blocks(text) if b[0] == "c"]
    say(bool(found), f"{os.path.basename(readme)} has C blocks ({len(found)})", [])
    for _, line, code, above in found:
        m = EXAMPLE.match(above) or EXCERPT.match(above)
        if m:
            rel = m.group(1)
            named.add(os.path.normpath(rel))
            path = os.path.join(root, rel)
            try:
                with open(path, encoding="utf-8") as f:
                    want = f.read()
            except OSError as e:
                say(False, f"line {line}: {rel} exists", [str(e)])
                continue
            what = "verbatim"
            if EXCERPT.match(above):
                lines = want.split("\n")
                marks = [i for i, l in enumerate(lines) if l.strip() == EXCERPT_MARK]
                if len(marks) != 2:
                    say(False, f"line {line}: {rel} has two {EXCERPT_MARK} lines", [])
                    continue
                want = "\n".join(lines[marks[0] + 1:marks[1]]) + "\n"
                what = "its [README] part, verbatim"
            diff = list(difflib.unified_diff(want.splitlines(), code.splitlines(), rel,
                                             f"README.md:{line}", lineterm="", n=1))
            say(not diff, f"line {line}: the block is {rel}, {what}", diff[:30])
        elif FRAGMENT.match(above):
            with tempfile.TemporaryDirectory() as d:
                src = os.path.join(d, "fragment.c")
                with open(src, "w", encoding="utf-8") as f:
                    f.write(WRAP_HEAD + f'#line {line} "README.md"\n' + code + "}\n")
                p = subprocess.run(cc + FRAGMENT_FLAGS + [src],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            say(p.returncode == 0, f"line {line}: the fragment compiles as a function body",
                p.stdout.splitlines()[:30])
        else:
            say(False, f"line {line}: the block is marked <!-- example: examples/FILE.c -->, "
                       f"<!-- excerpt: examples/FILE.c --> or <!-- fragment --> on the line "
                       f"above its fence", [f"above: {above!r}"])
    exdir = os.path.join(root, "examples")
    for dirpath, _, names in sorted(os.walk(exdir)):
        for name in sorted(names):
            if not name.endswith(".c"):
                continue
            rel = os.path.normpath(os.path.relpath(os.path.join(dirpath, name), root))
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                marked = EXCERPT_MARK in f.read()
            if (name.startswith("readme_") and dirpath == exdir) or marked:
                say(rel in named, f"{rel} is shown in {os.path.basename(readme)}", [])


class Tap:
    def __init__(self):
        self.n = self.failed = 0

    def say(self, good, what, detail):
        self.n += 1
        self.failed += not good
        print(f"{'' if good else 'not '}ok {self.n} - {what}")
        for d in detail:
            print(f"# {d}")


def self_test(root, cc):
    """The checker against a README whose verdicts are known."""
    tap = Tap()
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "examples"))
        prog = "int main(void)\n{\n    return 0;\n}\n"
        for name, body in (("readme_good.c", prog), ("readme_other.c", prog),
                           ("readme_unshown.c", prog)):
            with open(os.path.join(d, "examples", name), "w", encoding="utf-8") as f:
                f.write(body)
        readme = os.path.join(d, "README.md")
        with open(readme, "w", encoding="utf-8") as f:
            f.write("# t\n\n<!-- example: examples/readme_good.c -->\n```c\n" + prog + "```\n\n"
                    "<!-- fragment -->\n```c\nstruct swf_cache *c = NULL;\n"
                    "(void)swf_cache_alloc(c, SWF_NOWAIT);\n```\n\n"
                    "<!-- fragment -->\n```c\nundeclared_function(42);\n```\n\n"
                    "```c\nint unmarked;\n```\n\n"
                    "<!-- example: examples/readme_other.c -->\n```c\nint main(void) { }\n```\n"
                    "\n```sh\nnot C\n```\n")
        got = []
        check(readme, d, cc, lambda good, what, detail: got.append((good, what)))
    want = [True, True, True, False, False, False, True, True, False]
    tap.say(len(got) == len(want), f"the made-up README gives {len(want)} verdicts ({len(got)})",
            [f"{g}: {w}" for g, w in got])
    labels = ["C blocks found", "a verbatim example passes", "a good fragment compiles",
              "a fragment that does not compile fails", "an unmarked block fails",
              "an example that differs from its file fails", "a shown example file passes",
              "a shown example file passes", "an example file the README does not show fails"]
    for (good, what), expect, label in zip(got, want, labels):
        tap.say(good == expect, f"self-test: {label} ({what})", [])
    return tap


def main(argv):
    selftest = argv[:1] == ["--self-test"]
    if selftest:
        argv = argv[1:]
        readme = None
    else:
        readme = argv[0]
        argv = argv[1:]
    root = argv[0]
    cc = argv[1:] or ["cc"]
    if len(cc) == 1:
        ck = subprocess.run(["pkg-config", "--cflags", "ck"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
        cc = cc + ["-I" + os.path.join(root, "include")] + ck.stdout.split()
    if selftest:
        tap = self_test(root, cc)
    else:
        tap = Tap()
        check(readme, root, cc, tap.say)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
