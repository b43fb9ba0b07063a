#!/usr/bin/env python3
"""test/unit/docs.py SRCDIR | --self-test - what the texts say about the tree, held against it.

Prose drifts where no test reads it. This check reads the tracked text files and fails (TAP,
one point per kind of reference) on:
  - a Markdown link to a file of the tree that does not exist, or to a heading (#anchor) that
    the target does not have;
  - a path of the tree named in a text (docs/..., bench/..., test/..., lib/..., include/...,
    examples/..., man/... ending in a source or text suffix) that does not exist, relative to the
    root or to the naming file's folder (generated outputs under bench/out/ and placeholders in
    the checkers' own fixtures excepted);
  - a citation by line number ("(l. 421)", "registry.c:398"): cite the function instead;
  - a C, shell or Python file whose opening names a path other than its own;
  - a file map that lists a different set of files than its folder holds: docs/design.md's map
    of lib/ (folder by folder, a layer's rooms included: cache/store/);
  - a quotation of a header or a manual page template that it no longer holds: in a line of a
    Markdown file that names include/sweepfill/X.h or man/X.in, each "quoted" run of four words
    or more must be in one of the files the line names (compared word for word, so that line
    breaks and comment marks do not matter).
--self-test plants one of each in a small tree and fails unless each is found.
"""
import os
import re
import subprocess
import sys
import tempfile

TEXT_SUFFIXES = (".md", ".c", ".h", ".cc", ".py", ".sh", ".bash", ".3", ".7", ".pml", ".txt",
                 ".build", ".in")
PATH_RE = re.compile(r"(?<![\w/.-])((?:docs|bench|test|include|lib|examples|man)/[\w./-]*"
                     r"\.(?:c|h|cc|py|sh|bash|pml|md))\b")
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
LINE_CITE_RE = re.compile(r"\(l\. \d+|\b[\w/-]+\.(?:c|h|py|sh):\d+\b")
# Files whose paths are examples, not references: the checkers' fixtures and generated output.
NOT_REFERENCES = ("test/packaging/readme_snippets.py", "test/unit/layers.py", "test/unit/docs.py",
                  "man/mkpage.py")
GENERATED = ("bench/out/",)


def tracked(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split()
        if out:
            return sorted(out)
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
        files += [os.path.relpath(os.path.join(d, n), root) for n in names]
    return sorted(files)


def slug(heading):
    """The anchor a Markdown renderer gives a heading: lower case, punctuation dropped."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(root, rel):
    try:
        text = open(os.path.join(root, rel), encoding="utf-8").read()
    except OSError:
        return set()
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def exists(root, rel_dir, path):
    return (os.path.exists(os.path.join(root, path)) or
            os.path.exists(os.path.join(root, rel_dir, path)))


def check_links(root, files):
    bad = []
    for rel in files:
        if not rel.endswith(".md"):
            continue
        text = open(os.path.join(root, rel), encoding="utf-8").read()
        for m in LINK_RE.finditer(text):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
            if not os.path.exists(os.path.join(root, dest)):
                bad.append(f"{rel}: link to {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(root, dest):
                bad.append(f"{rel}: link to {target}: {dest} has no heading #{anchor}")
    return bad


def read_texts(root, files):
    for rel in files:
        if not rel.endswith(TEXT_SUFFIXES) and not os.path.basename(rel) in ("run", "compare"):
            continue
        try:
            yield rel, open(os.path.join(root, rel), encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue


def check_paths(root, files):
    bad = []
    for rel, text in read_texts(root, files):
        if rel in NOT_REFERENCES or rel.endswith(".in"):
            continue
        for m in PATH_RE.finditer(text):
            path = m.group(1).rstrip(".")
            if path.startswith(GENERATED) or exists(root, os.path.dirname(rel), path):
                continue
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{rel}:{line}: names {path}, which does not exist")
    return bad


def check_line_cites(root, files):
    bad = []
    for rel, text in read_texts(root, files):
        if rel in NOT_REFERENCES or not rel.endswith((".md", ".h", ".3", ".7")):
            continue
        for m in LINE_CITE_RE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{rel}:{line}: cites a line number ({m.group(0)}): cite the function")
    return bad


def check_openings(root, files):
    bad = []
    for rel, text in read_texts(root, files):
        if not rel.endswith((".c", ".h", ".py", ".sh", ".pml")):
            continue
        head = "\n".join(text.split("\n")[:3])
        m = re.search(r"^(?:/\*|#|\"\"\"| \*)\s*([\w./-]+\.(?:c|h|py|sh|pml))\b", head, re.M)
        if m and "/" in m.group(1) and not rel.endswith("/" + m.group(1)) and m.group(1) != rel:
            bad.append(f"{rel}: its opening names {m.group(1)}")
    return bad


def map_of_design(text):
    """docs/design.md's map of lib/: folder (a layer, or a room of one: cache/store) -> the .c and
    .h files named under it."""
    block = re.search(r"^lib/ .*?^```", text, re.M | re.S)
    if not block:
        return {}
    out, cur = {}, None
    for line in block.group(0).split("\n"):
        m = re.match(r"^  ([\w/]+)/\s", line + " ")
        if m:
            cur = m.group(1)
            out[cur] = set()
        if cur:
            out[cur] |= set(re.findall(r"\b(\w+\.[ch])\b", line))
    return out


def check_maps(root, files):
    bad = []
    design = os.path.join(root, "docs/design.md")
    if os.path.exists(design):
        for folder, named in map_of_design(open(design, encoding="utf-8").read()).items():
            have = {os.path.basename(f) for f in files
                    if os.path.dirname(f) == f"lib/{folder}" and f.endswith((".c", ".h"))}
            if named != have:
                bad.append(f"docs/design.md's map of lib/{folder}/: missing "
                           f"{sorted(have - named)}, not in the tree {sorted(named - have)}")
    return bad


QUOTED_FILE_RE = re.compile(r"((?:include/sweepfill|man)/[\w./-]+\.(?:h|in))\b")
QUOTE_RE = re.compile(r'"([^"]+)"')


def words(text):
    return " ".join(re.findall(r"[\w']+", text.lower()))


def check_quotes(root, files):
    bad = []
    cache = {}
    for rel, text in read_texts(root, files):
        if not rel.endswith(".md"):
            continue
        for n, line in enumerate(text.split("\n"), 1):
            named = QUOTED_FILE_RE.findall(line)
            if not named:
                continue
            for q in QUOTE_RE.findall(line):
                want = words(q.replace("...", " "))
                if len(want.split()) < 4:
                    continue
                parts = [words(p) for p in q.split("...")]
                found = False
                for path in named:
                    full = os.path.join(root, path)
                    if full not in cache:
                        try:
                            cache[full] = words(open(full, encoding="utf-8").read())
                        except OSError:
                            cache[full] = ""
                    body = cache[full]
                    if all(p in body for p in parts):
                        found = True
                if not found:
                    bad.append(f"{rel}, line {n}: \"{q}\" is not in {', '.join(named)}")
    return bad


CHECKS = [
    ("Markdown links resolve, anchors included", check_links),
    ("paths named in the texts exist", check_paths),
    ("no citation by line number", check_line_cites),
    ("each file's opening names its own path", check_openings),
    ("the file maps list the files their folders hold", check_maps),
    ("quotations of headers and page templates are in them", check_quotes),
]


def run(root):
    files = tracked(root)
    failed = 0
    for i, (what, check) in enumerate(CHECKS, 1):
        bad = check(root, files)
        print(f"{'not ok' if bad else 'ok'} {i} - {what}")
        for b in bad:
            print(f"# {b}")
        failed += bool(bad)
    print(f"1..{len(CHECKS)}")
    return failed


def self_test():
    planted = {
        "README.md": "# Top\n\nSee [the guide](docs/guide.md#no-such-part) and [gone](GONE.md).\n",
        "docs/guide.md": "# Guide\n\nbench/LIVE.md tells; `lib/x/a.c` (l. 12) does it.\n",
        "lib/x/a.c": "/*\n * lib/x/b.c - named wrong\n */\n",
        "docs/design.md": "```\nlib/  layers\n  x/  a.c gone.c\n```\n"
                          "`include/sweepfill/q.h` says \"every member linked now has one\"\n",
        "include/sweepfill/q.h": "/* Returns: 0, when every member linked at that moment has one. */\n",
    }
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in planted.items():
            os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
            open(os.path.join(tmp, rel), "w").write(text)
        files = tracked(tmp)
        results = [bool(check(tmp, files)) for _, check in CHECKS]
    for i, ((what, _), found) in enumerate(zip(CHECKS, results), 1):
        print(f"{'ok' if found else 'not ok'} {i} - planted drift found: {what}")
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "docs"))
        open(os.path.join(tmp, "README.md"), "w").write("# A\n\n[b](docs/b.md#part-two)\n")
        open(os.path.join(tmp, "docs/b.md"), "w").write("# B\n\n## Part two\n")
        clean = not any(check(tmp, tracked(tmp)) for _, check in CHECKS)
    print(f"{'ok' if clean else 'not ok'} {len(CHECKS) + 1} - a clean tree passes")
    print(f"1..{len(CHECKS) + 1}")
    return 0 if all(results) and clean else 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(1 if run(sys.argv[1]) else 0)
