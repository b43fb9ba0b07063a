#!/usr/bin/env bash
# test/readme_snippets.sh SOURCE_ROOT - the README's "Your lists" code blocks are the examples
# that the examples build compiles and runs: for every file under examples/ with [README]
# markers, the lines between its two markers must appear verbatim in README.md. Prints TAP.
set -u
root=${1:-.}
python3 - "$root" <<'PY'
import glob, os, sys
root = sys.argv[1]
readme = open(os.path.join(root, "README.md")).read()
files = sorted(glob.glob(os.path.join(root, "examples", "**", "*.c"), recursive=True))
n = failed = 0
for path in files:
    lines = open(path).read().split("\n")
    marks = [i for i, l in enumerate(lines) if l.strip() == "/* [README] */"]
    if not marks:
        continue
    n += 1
    rel = os.path.relpath(path, root)
    if len(marks) != 2:
        print(f"not ok {n} - {rel}: expected two [README] markers, found {len(marks)}")
        failed += 1
        continue
    block = "\n".join(lines[marks[0] + 1:marks[1]])
    if "```c\n" + block + "\n```" in readme:
        print(f"ok {n} - README.md shows {rel} as it is built")
    else:
        print(f"not ok {n} - README.md's block for {rel} differs from the file (or is missing)")
        failed += 1
print(f"1..{n}")
sys.exit(1 if failed else 0)
PY
