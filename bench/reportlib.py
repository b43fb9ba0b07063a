"""bench/reportlib.py - what bench/report.py and bench/report_limits.py share: reading Google
Benchmark JSON, grouping repeated measurements and taking their medians, and writing Markdown.

Standard library only. report.py re-exports these names (report.load_runs and so on), so code that
imports report keeps working.
"""

import json
import math
import statistics
import sys

# ---- reading ------------------------------------------------------------------------------------

_NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def load_runs(paths):
    """Read Google Benchmark JSON files; return their runs as dicts, each with 'file' and
    'context' added. Each repetition's own row is kept; aggregate rows are dropped, except the
    "median" aggregate of a run whose repetitions the file does not hold
    (--benchmark_report_aggregates_only)."""
    runs = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        context = doc.get("context", {})
        rows = doc.get("benchmarks", [])
        measured = {run_name(r) for r in rows if r.get("run_type") != "aggregate"}
        for run in rows:
            if run.get("run_type") == "aggregate" and (
                    run.get("aggregate_name") != "median" or run_name(run) in measured):
                continue
            run = dict(run)
            run["file"] = path
            run["context"] = context
            runs.append(run)
    return runs


def run_name(run):
    """The run's name without an aggregate suffix ("_median")."""
    return run.get("run_name") or run["name"]


def ns_per_iteration(run, which="real_time"):
    """Time per iteration in nanoseconds (real_time or cpu_time), whatever the time unit."""
    return float(run[which]) * _NS_PER_UNIT[run.get("time_unit", "ns")]


def merge_runs(runs):
    """Group runs by (run name, label); return a list of groups in first-seen order, each a dict
    with 'name', 'label', 'runs' (the measurements), 'n', and 'error' (the first error message,
    or None). Medians are taken by the callers with median_of()."""
    groups = {}
    for run in runs:
        key = (run_name(run), run.get("label", ""))
        g = groups.setdefault(key, {"name": key[0], "label": key[1], "runs": [], "error": None})
        if run.get("error_occurred"):
            g["error"] = g["error"] or run.get("error_message", "error")
        else:
            g["runs"].append(run)
    for g in groups.values():
        g["n"] = len(g["runs"])
    return list(groups.values())


def median_of(group, fn):
    """Median of fn(run) over a group's measurements; None when there are none."""
    values = [fn(r) for r in group["runs"]]
    return statistics.median(values) if values else None


# ---- Markdown -----------------------------------------------------------------------------------


def md_table(headers, rows, align=None):
    """A Markdown table. align: a string of 'l'/'r' per column (default: all left)."""
    align = align or "l" * len(headers)
    cells = [[str(c) for c in row] for row in rows]
    out = ["| " + " | ".join(headers) + " |"]
    out.append("| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |")
    out.extend("| " + " | ".join(row) + " |" for row in cells)
    return "\n".join(out) + "\n"


def fmt_num(v, digits=3):
    """A number with about `digits` significant digits, without exponent for usual sizes."""
    if v is None:
        return "-"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    decimals = max(0, digits - 1 - mag)
    return f"{v:,.{decimals}f}"


def fmt_count(v):
    """A count: with thousands separators, without decimals when it is a whole number (the
    median of an even number of measurements may not be)."""
    if v is None:
        return "-"
    if abs(v - round(v)) < 1e-9:
        return f"{int(round(v)):,}"
    return fmt_num(v, 6)


def size_text(size):
    """An object size as text: "64 B", "4 KiB"."""
    return f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


# ---- runs of any family ----------------------------------------------------------------------------

STANDARD_KEYS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                  "repetitions", "repetition_index", "threads", "iterations", "real_time",
                  "cpu_time", "time_unit", "label", "file", "context", "error_occurred",
                  "error_message", "aggregate_name", "aggregate_unit"}


# ---- output -------------------------------------------------------------------------------------


def write(path, text):
    """Write text to path, or to stdout when path is None or "-"."""
    if path in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
