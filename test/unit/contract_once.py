#!/usr/bin/env python3
"""test/unit/contract_once.py - each sentence of the contract is written once. Speaks TAP.

The headers' comments (include/sweepfill/*.h) hold each public function's contract, and
man/mkpage.py copies it into the manual pages at build time; the pages' own text (man/*.in and
the pages without a template) explains, and must not restate what a header says. This test
finds every run of RUN words that a header's comments and a page's own text share (mdoc macro
names and directive lines left out, case and punctuation ignored) and fails on each pair that
shares one, printing the first run of each.

    contract_once.py SOURCE_ROOT
    contract_once.py --self-test SOURCE_ROOT
"""

import glob
import os
import re
import sys

RUN = 14
WORD = re.compile(r"[a-z0-9_']+")


def header_words(text):
    comments = re.findall(r"/\*.*?\*/|//[^\n]*", text, re.S)
    return WORD.findall(" ".join(comments).lower())


def page_words(text):
    words = []
    for line in text.split("\n"):
        if line.startswith('.\\"'):
            continue
        if line.startswith("."):
            line = " ".join(line.split()[1:])
        words.append(line.replace("\\&", "").replace("\\e", "\\"))
    return WORD.findall(" ".join(words).lower())


def runs(words):
    return {tuple(words[i:i + RUN]): i for i in range(len(words) - RUN + 1)}


def shared(root):
    """[(header, page, count, first shared run)] for every pair that shares a run."""
    heads = {}
    for path in sorted(glob.glob(os.path.join(root, "include", "sweepfill", "*.h"))):
        with open(path, encoding="utf-8") as f:
            heads[os.path.relpath(path, root)] = runs(header_words(f.read()))
    found = []
    pages = sorted(glob.glob(os.path.join(root, "man", "*.[37]")) +
                   glob.glob(os.path.join(root, "man", "*.[37].in")))
    for path in pages:
        with open(path, encoding="utf-8") as f:
            page = runs(page_words(f.read()))
        for head, hruns in heads.items():
            both = sorted(set(page) & set(hruns), key=lambda r: page[r])
            if both:
                found.append((head, os.path.relpath(path, root), len(both), " ".join(both[0])))
    return found


def self_test(root):
    import tempfile
    n = 0
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "include", "sweepfill"))
        os.makedirs(os.path.join(tmp, "man"))
        sentence = ("a free releases everything the thread wrote to the object before it to the "
                    "object's next allocation by any thread")
        with open(os.path.join(tmp, "include", "sweepfill", "x.h"), "w") as f:
            f.write("/*\n * Ordering: %s.\n */\nint x(void);\n" % sentence)
        with open(os.path.join(tmp, "man", "x.3.in"), "w") as f:
            f.write('.Sh DESCRIPTION\nIn short,\n.Fn x :\n%s.\n.\\" @contract x.h x\n' %
                    sentence.replace("object's", "object\\&'s"))
        n += 1
        hit = shared(tmp)
        good = len(hit) == 1 and hit[0][2] >= 1
        ok &= good
        print("%s %d - a sentence restated in a page is found (control)" %
              ("ok" if good else "not ok", n))
        with open(os.path.join(tmp, "man", "x.3.in"), "w") as f:
            f.write('.Sh DESCRIPTION\nIt explains, it does not restate.\n'
                    '.\\" @contract x.h x\n')
        n += 1
        good = shared(tmp) == []
        ok &= good
        print("%s %d - a page that explains only passes (control)" % ("ok" if good else "not ok", n))
    print("1..%d" % n)
    return 0 if ok else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        return self_test(argv[2])
    if len(argv) != 2:
        print("usage: contract_once.py [--self-test] SOURCE_ROOT", file=sys.stderr)
        return 2
    found = shared(argv[1])
    for head, page, count, first in found:
        print("# %s and %s share %d runs of %d words, first: \"%s\"" %
              (head, page, count, RUN, first))
    print("%s 1 - no header comment and manual page share a run of %d words" %
          ("not ok" if found else "ok", RUN))
    print("1..1")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
