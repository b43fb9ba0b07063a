#!/usr/bin/env python3
"""man/mkpage.py - make a manual page from its template, the headers and the example files.

The contract of each public function (who may call it concurrently, its progress, its memory
ordering, what it returns and its errors) is stated once, in the comment above its declaration
in include/sweepfill/; the manual pages take it from there at build time (docs/design.md,
"Documentation"). A template, man/NAME.3.in, is an mdoc page with three directives in mdoc
comment lines:

    .\\" @contract HEADER NAME [NAME...] [HEADER NAME [NAME...]...]
        Here go the sections CONCURRENCY, PROGRESS, MEMORY ORDERING and RETURN VALUES, made from
        the labelled paragraphs of the comment above each NAME's declaration in
        include/sweepfill/HEADER (a function, an inline function or a macro); a word ending in
        ".h" names the header of the names after it, for a page whose names several headers
        declare.
    .\\" @errors
        Here goes the ERRORS section, from the same comments' "Errors:" paragraphs.
    .\\" @example PATH [MARK]
        Here goes the file PATH (relative to the source root) as a literal display: the whole
        file, or the lines between its two lines "/* [MARK] */". Every file named so is a
        program examples/meson.build builds and runs as a test.

A contract comment ends with labelled paragraphs, each beginning a line:

    Concurrency: ...   Progress: ...   Ordering: ...   Returns: ...   Errors: ...

Errors holds one entry per error number, each beginning a line ("EINVAL: c is NULL."), after
an optional lead sentence (or only a sentence, for what cannot fail). A line "- ..." begins a bullet item. In the text, name() becomes
.Fn, name(N) .Xr, an error number .Er, NULL and upper-case names with an underscore .Dv.

    mkpage.py TEMPLATE OUTPUT SOURCE_ROOT [DEPFILE]
    mkpage.py --check SOURCE_ROOT       every template's directives resolve (exit 1 if not)
    mkpage.py --self-test               the conversion on made-up input, as TAP
"""

import os
import re
import sys
import textwrap

LABELS = {
    "Concurrency": "CONCURRENCY",
    "Progress": "PROGRESS",
    "Ordering": "MEMORY ORDERING",
    "Returns": "RETURN VALUES",
    "Errors": "ERRORS",
}
HEAD_SECTIONS = ["Concurrency", "Progress", "Ordering", "Returns"]
LABEL_LINE = re.compile(r"^(%s):\s*(.*)$" % "|".join(LABELS))
ERRNO_LINE = re.compile(r"^(E[A-Z0-9]{2,}(?:, E[A-Z0-9]{2,})*):\s*(.*)$")
ERRNOS = {
    "EINVAL", "ENOMEM", "EAGAIN", "EBUSY", "EPERM", "ENOTSUP", "EEXIST", "ENOENT", "EDEADLK",
    "EOVERFLOW", "ERANGE", "ENOSYS", "EINTR", "ESRCH", "EFAULT", "ENOSPC", "E2BIG", "EALREADY",
}
OPEN = "(["
CLOSE = ".,:;)]?!"
WORD = r"[A-Za-z_][A-Za-z0-9_]*"
WIDTH = 96  # columns of a line of running text in the page


class PageError(Exception):
    pass


# --- the headers ---------------------------------------------------------------------------

def comment_text(lines):
    """The text of a /* ... */ comment's lines, without the comment's marks."""
    out = []
    for line in lines:
        s = line.strip()
        if s.startswith("/*"):
            s = s[2:]
        if s.endswith("*/"):
            s = s[:-2]
        s = s.rstrip()
        if s.startswith("* ") or s == "*":
            s = s[2:]
        elif s.startswith(" "):
            s = s[1:]
        out.append(s.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def declares(line, name):
    """Whether a line of code at file level declares or defines name."""
    if re.match(r"^\s*#\s*define\s+%s\b" % re.escape(name), line):
        return True
    if line.lstrip().startswith(("#", "/*", "*", "//")) or line.startswith((" ", "\t")):
        return False
    return re.search(r"\b%s\s*\(" % re.escape(name), line) is not None


def contract_of(path, name):
    """The comment above name's first declaration in the header at path: the comment that ends
    on the line above it, or above the declarations run together with it (no blank line)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    depth = 0
    in_comment = False
    cxx = False  # inside #ifdef __cplusplus: the extern "C" braces do not nest
    for i, line in enumerate(lines):
        if re.match(r"^\s*#\s*(ifdef\s+__cplusplus|if\s+defined\s*\(?\s*__cplusplus)", line):
            cxx = True
        elif cxx and re.match(r"^\s*#\s*(endif|else|elif)", line):
            cxx = False  # the C side of the conditional, or its end
        if cxx:
            continue
        if depth == 0 and not in_comment and declares(line, name):
            return comment_above(lines, i, path, name)
        code = re.sub(r"/\*.*?\*/", "", line)
        if in_comment:
            if "*/" in code:
                in_comment = False
                code = code.split("*/", 1)[1]
            else:
                continue
        if "/*" in code:
            in_comment = "*/" not in code.split("/*", 1)[1]
            code = code.split("/*", 1)[0]
        code = re.sub(r"//.*", "", code)
        if not code.lstrip().startswith("#"):
            depth += code.count("{") - code.count("}")
    raise PageError("%s: no declaration of %s" % (path, name))


def comment_above(lines, i, path, name):
    j = i - 1
    while j >= 0 and lines[j].strip() and not lines[j].rstrip().endswith("*/"):
        j -= 1
    if j < 0 or not lines[j].rstrip().endswith("*/"):
        raise PageError("%s:%d: no comment above %s" % (path, i + 1, name))
    end = j
    while j >= 0 and "/*" not in lines[j]:
        j -= 1
    return comment_text(lines[j:end + 1])


def labelled(text, where):
    """The labelled paragraphs of a contract comment: {label: [lines]}."""
    parts = {}
    label = None
    for line in text:
        m = LABEL_LINE.match(line)
        if m:
            label = m.group(1)
            if label in parts:
                raise PageError("%s: two %s: paragraphs" % (where, label))
            parts[label] = [m.group(2)] if m.group(2) else []
        elif label:
            parts[label].append(line)
    for label in parts:
        while parts[label] and not parts[label][-1].strip():
            parts[label].pop()
    return parts


# --- text to mdoc --------------------------------------------------------------------------

def escape(word):
    return word.replace("\\", "\\e")


def split_delims(token):
    """(opening delimiters, core, closing delimiters) of a token."""
    lead = ""
    while token and token[0] in OPEN:
        lead, token = lead + token[0], token[1:]
    tail = ""
    while token and token[-1] in CLOSE:
        # keep the call parentheses of name() and name(3) in the core
        if token.endswith("()") or re.search(r"\(\d\)$", token):
            break
        tail, token = token[-1] + tail, token[:-1]
    return lead, token, tail


def macro_of(core):
    """The mdoc macro line arguments for a token's core, or None for plain text."""
    m = re.fullmatch(r"(%s)\(\)" % WORD, core)
    if m:
        return ["Fn", m.group(1)]
    m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_.-]*)\(([1-9])\)", core)
    if m:
        return ["Xr", m.group(1), m.group(2)]
    if core in ERRNOS:
        return ["Er", core]
    if core == "errno":
        return ["Va", core]
    if core == "NULL" or re.fullmatch(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+", core):
        return ["Dv", core]
    return None


def mdoc_text(words):
    """mdoc lines for running text: macros on lines of their own, a new line per sentence."""
    out = []
    plain = []

    def flush():
        line = ""
        for word in plain:
            if line and len(line) + 1 + len(word) > WIDTH:
                out.append(line)
                line = ""
            line = line + " " + word if line else word
            if line[0] in ".'":
                line = "\\&" + line
        if line:
            out.append(line)
        plain.clear()

    for k, token in enumerate(words):
        lead, core, tail = split_delims(token)
        macro = macro_of(core)
        if macro:
            flush()
            args = macro[:1] + list(lead) + macro[1:] + list(tail)
            out.append("." + " ".join(escape(a) for a in args))
            continue
        plain.append(escape(token))
        following = words[k + 1] if k + 1 < len(words) else ""
        if re.search(r"[.?!][)\"']*$", token) and following[:1].isupper():
            flush()
    flush()
    return out


def mdoc_block(lines):
    """mdoc for the lines of a paragraph: running text, and bullet lists where lines begin
    with "- "."""
    out = []
    words = []
    items = None
    for line in lines + [""]:
        s = line.strip()
        if s.startswith("- "):
            out += mdoc_text(words)
            words = []
            if items is None:
                out.append(".Bl -bullet")
                items = True
            out.append(".It")
            s = s[2:]
        elif not s:
            out += mdoc_text(words)
            words = []
            if items:
                out.append(".El")
                items = None
            continue
        words += s.split()
    return out


def paragraphs(lines):
    """Split lines at blank lines, keeping bullet lists together with their text."""
    groups, cur = [], []
    for line in lines:
        if line.strip():
            cur.append(line)
        elif cur:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    return groups


def mdoc_paragraphs(lines):
    out = []
    for group in paragraphs(lines):
        if out:
            out.append(".Pp")
        out += mdoc_block(group)
    return out


def mdoc_errors(lines, where):
    """mdoc for an Errors: paragraph: the lead text, then a tagged list of the error numbers."""
    lead, entries = [], []
    for line in lines:
        m = ERRNO_LINE.match(line.strip())
        if m:
            entries.append([m.group(1), [m.group(2)]])
        elif entries:
            entries[-1][1].append(line)
        else:
            lead.append(line)
    out = mdoc_paragraphs(lead)
    if not entries:  # "Errors: none: ..." - a macro, or a function that cannot fail
        return out
    out.append(".Bl -tag -width Er")
    for names, text in entries:
        out.append(".It " + " , ".join("Bq Er " + n for n in names.split(", ")))
        out += mdoc_paragraphs(text)
    out.append(".El")
    return out


# --- the page ------------------------------------------------------------------------------

class Contract:
    def __init__(self, root, args):
        """args: HEADER NAME... [HEADER NAME...]..."""
        if len(args) < 2 or not args[0].endswith(".h") or args[-1].endswith(".h"):
            raise PageError("@contract HEADER NAME... [HEADER NAME...]")
        self.paths = []
        self.names = []
        self.parts = []  # [names, paragraphs, comment]: one per comment
        for arg in args:
            if arg.endswith(".h"):
                header = arg
                path = os.path.join(root, "include", "sweepfill", header)
                self.paths.append(path)
                continue
            self.names.append(arg)
            text = contract_of(path, arg)
            for part in self.parts:
                if part[2] == text:  # one comment for a group of declarations
                    part[0].append(arg)
                    break
            else:
                self.parts.append([[arg], labelled(text, "%s: %s" % (header, arg)), text])
        self.header = ", ".join(os.path.basename(p) for p in self.paths)

    def section(self, label, render):
        """The lines of one section: each function's paragraph, after the names of the
        functions it is for where the page has several (identical paragraphs once)."""
        having = [(n, p[label]) for n, p, _ in self.parts if label in p]
        if not having:
            raise PageError("%s: no %s: paragraph for %s" % (self.header, label,
                                                             ", ".join(self.names)))
        groups = []
        for names, lines in having:
            for group in groups:
                if group[1] == lines:
                    group[0].extend(names)
                    break
            else:
                groups.append([list(names), lines])
        out = [".Sh " + LABELS[label]]
        for k, (names, lines) in enumerate(groups):
            if k:
                out.append(".Pp")
            if len(names) < len(self.names):
                for j, name in enumerate(names):
                    last = j == len(names) - 1
                    out.append(".Fn %s %s" % (name, ":" if last else ","))
            out += render(lines, "%s: %s" % (self.header, names[0]))
        return out

    def head(self):
        out = []
        for label in HEAD_SECTIONS:
            out += self.section(label, lambda lines, where: mdoc_paragraphs(lines))
        return out

    def errors(self):
        return self.section("Errors", mdoc_errors)


def example(root, path, mark):
    full = os.path.join(root, path)
    with open(full, encoding="utf-8") as f:
        lines = f.read().rstrip("\n").split("\n")
    if mark:
        marker = "/* [%s] */" % mark
        at = [i for i, line in enumerate(lines) if line.strip() == marker]
        if len(at) != 2:
            raise PageError("%s: %d lines %s, want 2" % (path, len(at), marker))
        lines = lines[at[0] + 1:at[1]]
    lines = textwrap.dedent("\n".join(lines)).split("\n")
    out = [".Bd -literal -offset indent"]
    for line in lines:
        line = line.replace("\\", "\\e")
        if line and line[0] in ".'":  # not "": a blank line stays blank in the display
            line = "\\&" + line
        out.append(line)
    out.append(".Ed")
    return out


DIRECTIVE = re.compile(r'^\.\\"\s*@(contract|errors|example)\b\s*(.*)$')


def make(template, root):
    """The page's lines, and the files it was made from."""
    with open(template, encoding="utf-8") as f:
        lines = f.read().rstrip("\n").split("\n")
    out, used, contract = [], [], None
    for n, line in enumerate(lines, 1):
        m = DIRECTIVE.match(line)
        if not m:
            out.append(line)
            continue
        what, args = m.group(1), m.group(2).split()
        where = "%s:%d" % (template, n)
        try:
            if what == "contract":
                contract = Contract(root, args)
                used += contract.paths
                out += contract.head()
            elif what == "errors":
                if contract is None:
                    raise PageError("@errors before @contract")
                out += contract.errors()
            else:
                if len(args) not in (1, 2):
                    raise PageError("@example PATH [MARK]")
                used.append(os.path.join(root, args[0]))
                out += example(root, args[0], args[1] if len(args) > 1 else None)
        except PageError as e:
            raise PageError("%s: %s" % (where, e))
        except OSError as e:
            raise PageError("%s: %s" % (where, e))
    return out, used


def check(root):
    """Every template makes its page, and every example it shows is run as a test: named in
    examples/meson.build's man_examples (or another of its lists)."""
    with open(os.path.join(root, "examples", "meson.build"), encoding="utf-8") as f:
        built = f.read()
    bad = 0
    mandir = os.path.join(root, "man")
    for name in sorted(os.listdir(mandir)):
        if not name.endswith(".in"):
            continue
        try:
            _, used = make(os.path.join(mandir, name), root)
        except PageError as e:
            print("# %s" % e)
            bad += 1
            continue
        for path in used:
            rel = os.path.relpath(path, os.path.join(root, "examples"))
            if rel.startswith("..") or not rel.endswith(".c"):
                continue
            stem = rel[:-2].split("/")
            if "'%s'" % stem[-1] not in built:
                print("# %s shows %s, which examples/meson.build does not run" %
                      (name, rel))
                bad += 1
    print("%s 1 - every template makes its page and shows only examples run as tests" %
          ("not ok" if bad else "ok"))
    print("1..1")
    return 1 if bad else 0


SELF_HEADER = """/*
 * Do x.
 *
 * Concurrency: any thread, but not inside swf_y() (swf_y(3)).
 * Progress: lock-free.
 * Ordering: none.
 * Returns: 0, or NULL with errno set.
 * Errors:
 * EINVAL: p is NULL.
 * ENOMEM: SWF_Z ran out.
 */
SWF_API int swf_x(void *p);

int swf_undocumented(void);
"""
SELF_EXAMPLE = "int main(void)\n{\n    /* [man] */\n    .5;\n\n    return 0;\n    /* [man] */\n}\n"


def self_test():
    """The conversion on a made-up header, template and example, and the failures it must
    report. TAP."""
    import tempfile
    results = []
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "include", "sweepfill"))
        os.makedirs(os.path.join(root, "examples"))
        with open(os.path.join(root, "include", "sweepfill", "x.h"), "w") as f:
            f.write(SELF_HEADER)
        with open(os.path.join(root, "examples", "x.c"), "w") as f:
            f.write(SELF_EXAMPLE)
        tpl = os.path.join(root, "x.3.in")

        def page(text):
            with open(tpl, "w") as f:
                f.write(text)
            return "\n".join(make(tpl, root)[0])

        out = page('.\\" @contract x.h swf_x\n.\\" @example examples/x.c man\n.\\" @errors\n')
        want = [".Sh CONCURRENCY", ".Fn swf_y", ".Xr ( swf_y 3 ) .", ".Sh PROGRESS",
                ".Sh MEMORY ORDERING", ".Sh RETURN VALUES", ".Dv NULL", ".Va errno",
                ".Sh ERRORS", ".It Bq Er EINVAL", ".Dv SWF_Z", "\\&.5;\n\nreturn 0;"]
        missing = [w for w in want if w not in out]
        results.append((not missing, "a contract, an example and errors convert"
                        + (" (missing: %s)" % ", ".join(missing) if missing else "")))
        for text, what in [('.\\" @contract x.h swf_undocumented\n', "a name without a comment"),
                           ('.\\" @contract x.h swf_nowhere\n', "a name not declared"),
                           ('.\\" @errors\n', "@errors before @contract"),
                           ('.\\" @example examples/x.c other\n', "a mark the example lacks")]:
            try:
                page(text)
                results.append((False, "%s is reported" % what))
            except PageError:
                results.append((True, "%s is reported" % what))
    for n, (good, what) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if good else "not ok", n, what))
    print("1..%d" % len(results))
    return 0 if all(g for g, _ in results) else 1


def main(argv):
    if len(argv) == 2 and argv[1] == "--self-test":
        return self_test()
    if len(argv) == 3 and argv[1] == "--check":
        return check(argv[2])
    if len(argv) not in (4, 5):
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        return 2
    template, output, root = argv[1:4]
    try:
        lines, used = make(template, root)
    except PageError as e:
        print("mkpage.py: %s" % e, file=sys.stderr)
        return 1
    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    if len(argv) == 5:
        with open(argv[4], "w", encoding="utf-8") as f:
            f.write("%s: %s\n" % (output, " ".join([template] + used)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
