#!/usr/bin/env python3
"""test/packaging/readme_snippets.py - every C block in README.md and docs/*.md compiles. Speaks TAP.

The documents checked: those named on the command line (README.md), and every docs/*.md of the
source tree that has a C block, so that a block moved out of the README into a new page stays
checked without registering the page anywhere. Each fenced ```c block of a document must carry,
on the line just above its opening fence, one of three markers (HTML comments, invisible on a
rendered page):

    <!-- example: examples/NAME.c -->
        The block is that file, verbatim: a whole program, which examples/meson.build builds and
        runs as a test (suite examples) in every build of test/run. Edit the file and paste it
        back, or the other way round; this test says where they differ.

    <!-- excerpt: examples/DIR/NAME.c -->
        The block is the part of that file between its two /* [README] */ marker lines,
        verbatim: the file is a whole program built and run as a test, and the README shows the
        lines that matter (docs/lists.md does this).

    <!-- fragment -->
        A few statements, not a program: compiled here (-std=c11 -pedantic-errors -Wall -Wextra
        -Werror -Wno-unused -fsyntax-only) as the body of a function in a file that includes <sweepfill/sweepfill.h>, <ck_epoch.h>, <stdio.h> and
        <stdlib.h>. Everything it uses must be declared in the block itself.

A block with no marker fails, and so does an examples/readme_*.c that no marker of any checked
document names, or an example with [README] markers that no excerpt names (either would no
longer be what the documents show).

    readme_snippets.py DOC.md [DOC.md...] SOURCE_ROOT [CC [CFLAGS...]]
    readme_snippets.py --self-test SOURCE_ROOT [CC [CFLAGS...]]

CC defaults to cc; CFLAGS to -I SOURCE_ROOT/include and pkg-config's flags for ck. --self-test
checks the checker on a made-up README: a verbatim example, a marked fragment, a fragment that
does not compile, an unmarked block and an example that differs from its file; then on a README
and a docs/*.md found by itself, where the page's excerpt is what shows an example file.
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


def check_doc(doc, root, cc, say, named):
    """Check one document's C blocks; say(ok, what, detail_lines) reports each point, and the
    example files its markers name are added to the set named."""
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    label = os.path.relpath(doc, root)
    if label.startswith(os.pardir):
        label = os.path.basename(doc)
    found = [b for b in blocks(text) if b[0] == "c"]
    say(bool(found), f"{label} has C blocks ({len(found)})", [])
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
                say(False, f"{label}:{line}: {rel} exists", [str(e)])
                continue
            what = "verbatim"
            if EXCERPT.match(above):
                lines = want.split("\n")
                marks = [i for i, l in enumerate(lines) if l.strip() == EXCERPT_MARK]
                if len(marks) != 2:
                    say(False, f"{label}:{line}: {rel} has two {EXCERPT_MARK} lines", [])
                    continue
                want = "\n".join(lines[marks[0] + 1:marks[1]]) + "\n"
                what = "its [README] part, verbatim"
            diff = list(difflib.unified_diff(want.splitlines(), code.splitlines(), rel,
                                             f"{label}:{line}", lineterm="", n=1))
            say(not diff, f"{label}:{line}: the block is {rel}, {what}", diff[:30])
        elif FRAGMENT.match(above):
            with tempfile.TemporaryDirectory() as d:
                src = os.path.join(d, "fragment.c")
                with open(src, "w", encoding="utf-8") as f:
                    f.write(WRAP_HEAD + f'#line {line} "{label}"\n' + code + "}\n")
                p = subprocess.run(cc + FRAGMENT_FLAGS + [src],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            say(p.returncode == 0, f"{label}:{line}: the fragment compiles as a function body",
                p.stdout.splitlines()[:30])
        else:
            say(False, f"{label}:{line}: the block is marked <!-- example: examples/FILE.c -->, "
                       f"<!-- excerpt: examples/FILE.c --> or <!-- fragment --> on the line "
                       f"above its fence", [f"above: {above!r}"])


def docs_with_c(root):
    """The docs/*.md files of the source tree that have a C block, sorted."""
    ddir = os.path.join(root, "docs")
    out = []
    for name in sorted(os.listdir(ddir)) if os.path.isdir(ddir) else []:
        path = os.path.join(ddir, name)
        if name.endswith(".md") and os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                if any(b[0] == "c" for b in blocks(f.read())):
                    out.append(path)
    return out


def check(docs, root, cc, say):
    """Check the documents given and every docs/*.md with a C block; then that every example
    file that must be shown is named by a marker of one of them."""
    given = {os.path.realpath(d) for d in docs}
    docs = list(docs) + [d for d in docs_with_c(root) if os.path.realpath(d) not in given]
    named = set()
    for doc in docs:
        check_doc(doc, root, cc, say, named)
    where = " or ".join(os.path.relpath(d, root) if not os.path.relpath(d, root).startswith(
        os.pardir) else os.path.basename(d) for d in docs)
    exdir = os.path.join(root, "examples")
    for dirpath, _, names in sorted(os.walk(exdir)):
        for name in sorted(names):
            if not name.endswith(".c"):
                continue
            rel = os.path.normpath(os.path.relpath(os.path.join(dirpath, name), root))
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                marked = EXCERPT_MARK in f.read()
            if (name.startswith("readme_") and dirpath == exdir) or marked:
                say(rel in named, f"{rel} is shown in {where}", [])


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
    """The checker against made-up documents whose verdicts are known."""
    tap = Tap()
    prog = "int main(void)\n{\n    return 0;\n}\n"
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "examples"))
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
        check([readme], d, cc, lambda good, what, detail: got.append((good, what)))
    want = [True, True, True, False, False, False, True, True, False]
    labels = ["C blocks found", "a verbatim example passes", "a good fragment compiles",
              "a fragment that does not compile fails", "an unmarked block fails",
              "an example that differs from its file fails", "a shown example file passes",
              "a shown example file passes", "an example file the README does not show fails"]
    verdicts(tap, "the made-up README", got, want, labels)

    # A page of docs/ that nobody names is checked too, and what it shows counts as shown.
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "examples", "dir"))
        os.mkdir(os.path.join(d, "docs"))
        with open(os.path.join(d, "examples", "readme_good.c"), "w", encoding="utf-8") as f:
            f.write(prog)
        with open(os.path.join(d, "examples", "dir", "x.c"), "w", encoding="utf-8") as f:
            f.write("int a;\n/* [README] */\nint b;\n/* [README] */\n" + prog)
        readme = os.path.join(d, "README.md")
        with open(readme, "w", encoding="utf-8") as f:
            f.write("# t\n\n<!-- example: examples/readme_good.c -->\n```c\n" + prog + "```\n")
        with open(os.path.join(d, "docs", "prose.md"), "w", encoding="utf-8") as f:
            f.write("# no C here\n\n```sh\nls\n```\n")
        page = os.path.join(d, "docs", "page.md")  # its fragment's code is on line 10
        with open(page, "w", encoding="utf-8") as f:
            f.write("# p\n\n<!-- excerpt: examples/dir/x.c -->\n```c\nint b;\n```\n\n"
                    "<!-- fragment -->\n```c\nundeclared_function(42);\n```\n")
        got = []
        check([readme], d, cc, lambda good, what, detail: got.append((good, what, detail)))
    want = [True, True, True, True, False, True, True]
    labels = ["README.md's C blocks found", "README.md's example passes",
              "docs/page.md is checked without being named (and docs/prose.md, which has no C "
              "block, is not)", "the page's excerpt passes",
              "the page's broken fragment fails, under its own name",
              "readme_good.c is shown",
              "the page's excerpt counts as showing examples/dir/x.c"]
    verdicts(tap, "README.md with docs/page.md", [g[:2] for g in got], want, labels)
    said = [line for g in got if not g[0] for line in g[2]]
    tap.say(any(line.startswith("docs/page.md:10:") for line in said),
            "self-test: the compiler's diagnostic names the page and its line (docs/page.md:10)",
            said)
    return tap


def verdicts(tap, what, got, want, labels):
    """One TAP point for the count of verdicts, then one per verdict against its expectation."""
    tap.say(len(got) == len(want), f"{what} gives {len(want)} verdicts ({len(got)})",
            [f"{g}: {w}" for g, w in got])
    for (good, said), expect, label in zip(got, want, labels):
        tap.say(good == expect, f"self-test: {label} ({said})", [])


def main(argv):
    selftest = argv[:1] == ["--self-test"]
    if selftest:
        argv = argv[1:]
    docs = []
    while argv and argv[0].endswith(".md"):
        docs.append(argv.pop(0))
    if not argv or (not docs and not selftest):
        print(__doc__, file=sys.stderr)
        return 2
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
        check(docs, root, cc, tap.say)
    print(f"1..{tap.n}")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
