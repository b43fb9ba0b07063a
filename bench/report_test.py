#!/usr/bin/env python3
"""bench/report_test.py - the test of bench/report.py, on made-up Google Benchmark JSON.

Checks the reading (repetitions, median aggregates, runs repeated across files, errors), the
alloc table and its summary line, the generic table, and that the SVG plot is well-formed XML
with one line per series and a legend. Speaks TAP.
"""

import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

count = 0
failed = 0


def ok(cond, what):
    global count, failed
    count += 1
    if not cond:
        failed += 1
    print(f"{'' if cond else 'not '}ok {count} - {what}")


def run(name, real_ns, label, threads=1, rep=None, **counters):
    r = {"name": name, "run_name": name, "run_type": "iteration", "threads": threads,
         "iterations": 1000, "real_time": real_ns, "cpu_time": real_ns * threads,
         "time_unit": "ns", "label": label, "items_per_second": 1e9 / real_ns}
    if rep is not None:
        r["repetition_index"] = rep
    r.update(counters)
    return r


def write(dirname, fname, runs, allocator):
    path = os.path.join(dirname, fname)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"context": {"allocator": allocator}, "benchmarks": runs}, f)
    return path


with tempfile.TemporaryDirectory() as d:
    nowait = "alloc_pair/cache_nowait/64/real_time/threads:1"
    malloc = "alloc_pair/malloc/64/real_time/threads:1"
    a = write(d, "alloc-glibc.json", [
        run(nowait, 2.0, "sweepfill", rep=0, nowait_fails=0),
        run(nowait, 3.0, "sweepfill", rep=1, nowait_fails=0),
        run(nowait, 100.0, "sweepfill", rep=2, nowait_fails=0),
        run(malloc, 8.0, "glibc", fails=0),
        {"name": "alloc_pair/cache_wait/64/real_time/threads:1", "run_type": "iteration",
         "error_occurred": True, "error_message": "broken on purpose", "label": ""},
    ], "glibc")
    med = dict(run(malloc, 4.0, "jemalloc", fails=0), name=malloc + "_median",
               run_type="aggregate", aggregate_name="median")
    mean = dict(run(malloc, 40.0, "jemalloc", fails=0), name=malloc + "_mean",
                run_type="aggregate", aggregate_name="mean")
    b = write(d, "alloc-jemalloc.json", [med, mean, run(nowait, 4.0, "sweepfill", nowait_fails=0)],
              "jemalloc")

    runs = report.load_runs([a, b])
    ok(len(runs) == 7, f"repetitions and median aggregates are read, other aggregates dropped "
                       f"({len(runs)} runs)")
    res = report.alloc_results(runs)
    by = {(r["impl"], r["allocator"]): r for r in res}
    nw = by.get(("cache_nowait", "sweepfill cache, NOWAIT"))
    ok(nw is not None and nw["n"] == 4 and nw["ns"] == 3.5,
       "a run repeated across files is one row, the median of its 4 measurements")
    je = by.get(("malloc", "jemalloc"))
    ok(je is not None and je["ns"] == 4.0, "a median aggregate stands for its run")
    gl = by.get(("malloc", "glibc"))
    ok(gl is not None and gl["size"] == 64 and gl["threads"] == 1 and gl["family"] == "alloc_pair",
       "size, threads and family come from the run name, the allocator from the label")
    err = by.get(("cache_wait", "sweepfill cache, WAIT"))
    ok(err is not None and err["error"] == "broken on purpose",
       "an errored run is kept as an error")

    md = report.alloc_markdown(res)
    ok("| pair | jemalloc | 64 B | 1 | 4.00 |" in md, "the alloc table has a row per run")
    ok("cache NOWAIT pair = 3.50 ns, best malloc pair = 4.00 ns (jemalloc), ratio = X/Y = 0.88"
       in md, "the summary compares cache NOWAIT with the best malloc")
    ok("ERROR in alloc_pair/cache_wait/64/threads:1" in md, "errors are named under the table")

    gen = report.generic_markdown(runs)
    ok(gen.count("\n") == 2 + 4 and "nowait_fails=0" in gen,
       "the generic table has a row per run and shows counters")

    svg = report.svg_loglog(
        [{"name": "BATCH_RESTART", "points": [(1e5, 15.3), (2e5, 59.1), (4e5, 227.8)]},
         {"name": "RESUME", "points": [(1e5, 0.019), (2e5, 0.047), (4e5, 0.092)]},
         {"name": "floor", "points": [(1e5, 0.01), (4e5, 0.04)], "dashed": True}],
        "members (N)", "seconds", "seed table")
    try:
        root = ET.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        lines = root.findall(f"{ns}polyline")
        texts = [t.text for t in root.iter(f"{ns}text")]
        ok(True, "the plot is well-formed XML")
        ok(len(lines) == 3, "one polyline per series")
        ok(all(n in texts for n in ("BATCH_RESTART", "RESUME", "floor", "seconds", "members (N)")),
           "legend and axis labels are present")
        ok("100k" in texts and "0.01" in texts, "decade ticks are labelled (100k, 0.01)")
    except ET.ParseError as e:
        ok(False, f"the plot is well-formed XML ({e})")
    try:
        report.svg_loglog([{"name": "x", "points": [(0, 1)]}], "x", "y")
        ok(False, "a plot with nothing drawable is refused")
    except ValueError:
        ok(True, "a plot with nothing drawable is refused")

    out = os.path.join(d, "out.md")
    ok(report.main(["alloc", a, b, "--md", out, "--svg", os.path.join(d, "a.svg")]) == 0
       and "best malloc pair" in open(out, encoding="utf-8").read()
       and os.path.getsize(os.path.join(d, "a.svg")) > 0, "the command line writes both files")

print(f"1..{count}")
sys.exit(1 if failed else 0)
