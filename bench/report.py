#!/usr/bin/env python3
"""bench/report.py - turn Google Benchmark JSON output into Markdown tables and SVG plots.

Standard library only. Usable as a module (the functions below) and as a command:

    bench/report.py alloc bench/out/alloc-*.json [--md OUT.md] [--svg OUT.svg]
        the alloc family: one row per run (allocator, object size, threads, ns per pair) and a
        summary per size and thread count: cache NOWAIT pair against the best malloc pair.
    bench/report.py table FILE.json... [--md OUT.md]
        every run of any family: name, label, time per iteration, iterations, counters.

Without --md the Markdown goes to stdout.

Measurements: when the same run (same run name and label) appears more than once - with
--benchmark_repetitions, or because several binaries ran it - its figures are the median of the
measurements, and the table says how many there were. When the files hold Google Benchmark's
aggregates (--benchmark_report_aggregates_only), the "median" aggregates are used.

The plot helper, svg_loglog(), draws any number of series of (x, y) points on log-log axes with
axis labels and a legend, in plain SVG (no matplotlib).
"""

import argparse
import json
import math
import re
import statistics
import sys
from xml.sax.saxutils import escape

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


# ---- SVG ----------------------------------------------------------------------------------------

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def _tick_label(v):
    if 1e-3 <= v < 1e4:
        return f"{v:g}"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div and v < 1e12:
            return f"{v / div:g}{suffix}"
    return f"1e{round(math.log10(v))}"


def svg_loglog(series, xlabel, ylabel, title=None, width=720, height=460):
    """A log-log line plot as an SVG document (a string).

    series: a list of dicts {"name": str, "points": [(x, y), ...], "dashed": bool (optional),
    "color": str (optional)}; points with x <= 0 or y <= 0 cannot be drawn and are left out.
    The axes span whole decades around the data, with a grid line at each decade and light ones
    at 2..9 times it; the legend lists the series in order, in the corner of the plot where it
    hides the least of the lines.
    """
    pts = [(x, y) for s in series for x, y in s["points"] if x > 0 and y > 0]
    if not pts:
        raise ValueError("svg_loglog: no positive points to plot")
    lx = [math.log10(x) for x, _ in pts]
    ly = [math.log10(y) for _, y in pts]
    x0, x1 = math.floor(min(lx)), math.ceil(max(lx))
    y0, y1 = math.floor(min(ly)), math.ceil(max(ly))
    if x1 == x0:
        x1 += 1
    if y1 == y0:
        y1 += 1

    left, right, top, bottom = 80, 30, 40 if title else 20, 60
    pw, ph = width - left - right, height - top - bottom

    def px(x):
        return left + (math.log10(x) - x0) / (x1 - x0) * pw

    def py(y):
        return top + ph - (math.log10(y) - y0) / (y1 - y0) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="white"/>']
    if title:
        out.append(f'<text x="{width / 2:.1f}" y="24" text-anchor="middle" font-size="15">'
                   f'{escape(title)}</text>')
    # grid and ticks
    for d in range(x0, x1 + 1):
        for m in range(1, 10):
            v = m * 10.0 ** d
            if math.log10(v) > x1 + 1e-9:
                break
            x = px(v)
            colour = "#bbbbbb" if m == 1 else "#eeeeee"
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" '
                       f'stroke="{colour}"/>')
            if m == 1:
                out.append(f'<text x="{x:.1f}" y="{top + ph + 18}" text-anchor="middle">'
                           f'{escape(_tick_label(v))}</text>')
    for d in range(y0, y1 + 1):
        for m in range(1, 10):
            v = m * 10.0 ** d
            if math.log10(v) > y1 + 1e-9:
                break
            y = py(v)
            colour = "#bbbbbb" if m == 1 else "#eeeeee"
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" '
                       f'stroke="{colour}"/>')
            if m == 1:
                out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">'
                           f'{escape(_tick_label(v))}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" '
               f'stroke="black"/>')
    out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 15}" text-anchor="middle">'
               f'{escape(xlabel)}</text>')
    out.append(f'<text x="18" y="{top + ph / 2:.1f}" text-anchor="middle" '
               f'transform="rotate(-90 18 {top + ph / 2:.1f})">{escape(ylabel)}</text>')
    # series
    for i, s in enumerate(series):
        colour = s.get("color") or PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="6 4"' if s.get("dashed") else ""
        p = sorted((x, y) for x, y in s["points"] if x > 0 and y > 0)
        if len(p) > 1:
            coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in p)
            out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" '
                       f'stroke-width="2"{dash}/>')
        for x, y in p:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{colour}"/>')
    # legend, in the corner of the plot where it covers the fewest points of the lines
    if series:
        lw = 28 + 7 * max(len(s["name"]) for s in series)
        lh = 8 + 18 * len(series)
        samples = []
        for s in series:
            p = sorted((px(x), py(y)) for x, y in s["points"] if x > 0 and y > 0)
            for (ax, ay), (bx, by) in zip(p, p[1:]):
                samples.extend((ax + (bx - ax) * k / 16, ay + (by - ay) * k / 16)
                               for k in range(17))
            samples.extend(p)
        corners = [(left + 10, top + 10), (left + pw - 10 - lw, top + 10),
                   (left + 10, top + ph - 10 - lh), (left + pw - 10 - lw, top + ph - 10 - lh)]

        def covered(c):
            return sum(1 for x, y in samples
                       if c[0] - 4 <= x <= c[0] + lw + 4 and c[1] - 4 <= y <= c[1] + lh + 4)

        lx0, ly0 = min(corners, key=covered)
        out.append(f'<rect x="{lx0}" y="{ly0}" width="{lw}" height="{lh}" fill="white" '
                   f'fill-opacity="0.9" stroke="#999999"/>')
        for i, s in enumerate(series):
            colour = s.get("color") or PALETTE[i % len(PALETTE)]
            dash = ' stroke-dasharray="6 4"' if s.get("dashed") else ""
            y = ly0 + 14 + 18 * i
            out.append(f'<line x1="{lx0 + 6}" y1="{y - 4}" x2="{lx0 + 22}" y2="{y - 4}" '
                       f'stroke="{colour}" stroke-width="2"{dash}/>')
            out.append(f'<text x="{lx0 + 26}" y="{y}">{escape(s["name"])}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---- the alloc family ---------------------------------------------------------------------------

_ALLOC_RE = re.compile(r"^(alloc_pair|alloc_batch64)/(cache_nowait|cache_wait|malloc)/(\d+)"
                       r"(?:/.*)?/threads:(\d+)$")
_IMPL_NAME = {"cache_nowait": "sweepfill cache, NOWAIT", "cache_wait": "sweepfill cache, WAIT"}
_IMPL_ORDER = {"cache_nowait": 0, "cache_wait": 1, "malloc": 2}


def alloc_results(runs):
    """The alloc family's runs as dicts: family, impl (cache_nowait, cache_wait, malloc),
    allocator, size, threads, ns (wall-clock ns per pair and per thread: time per iteration
    x threads), cpu (CPU ns per pair and per thread: Google Benchmark's cpu_time, which sums the
    threads' CPU time over all their iterations), mops (million pairs per second, all threads),
    fails (the failure counter: the largest of the measurements), n, error. Times and rates are
    medians of the measurements."""
    out = []
    for g in merge_runs(runs):
        m = _ALLOC_RE.match(g["name"])
        if not m:
            continue
        family, impl, size, threads = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        allocator = _IMPL_NAME.get(impl) or g["label"] or "malloc"
        ns = median_of(g, lambda r: ns_per_iteration(r) * threads)
        cpu = median_of(g, lambda r: ns_per_iteration(r, "cpu_time"))
        mops = median_of(g, lambda r: r.get("items_per_second", 0.0) / 1e6)
        fails = max((r.get("nowait_fails", r.get("fails", 0.0)) for r in g["runs"]), default=None)
        out.append({"family": family, "impl": impl, "allocator": allocator, "size": size,
                    "threads": threads, "ns": ns, "cpu": cpu, "mops": mops, "fails": fails,
                    "n": g["n"], "error": g["error"]})
    out.sort(key=lambda r: (r["family"] != "alloc_pair", r["family"], r["size"], r["threads"],
                            _IMPL_ORDER[r["impl"]], r["allocator"]))
    return out


def alloc_summary(results):
    """One line per (size, threads): cache NOWAIT pair against the best malloc pair."""
    lines = []
    pairs = [r for r in results if r["family"] == "alloc_pair" and r["ns"] is not None]
    for size, threads in sorted({(r["size"], r["threads"]) for r in pairs}):
        here = [r for r in pairs if (r["size"], r["threads"]) == (size, threads)]
        cache = [r for r in here if r["impl"] == "cache_nowait"]
        mallocs = [r for r in here if r["impl"] == "malloc"]
        if not cache or not mallocs:
            continue
        x = cache[0]["ns"]
        best = min(mallocs, key=lambda r: r["ns"])
        y = best["ns"]
        lines.append(f"{_size_text(size)}, {threads} thread{'s' if threads > 1 else ''}: "
                     f"cache NOWAIT pair = {fmt_num(x)} ns, best malloc pair = {fmt_num(y)} ns "
                     f"({best['allocator']}), ratio = X/Y = {x / y:.2f}")
    bad = [r for r in results if r["impl"] == "cache_nowait" and r["fails"]]
    if bad:
        lines.append("WARNING: NOWAIT failures in " + ", ".join(
            f"{r['family']}/{r['size']}/threads:{r['threads']}" for r in bad))
    errors = [r for r in results if r["error"]]
    for r in errors:
        lines.append(f"ERROR in {r['family']}/{r['impl']}/{r['size']}/threads:{r['threads']} "
                     f"({r['allocator']}): {r['error']}")
    return lines


def _size_text(size):
    return f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


def alloc_markdown(results):
    """The alloc table and its summary, as Markdown."""
    headers = ["benchmark", "allocator", "size", "threads", "ns per pair", "CPU ns per pair",
               "M pairs/s (all threads)", "failures", "n"]
    rows = []
    for r in results:
        what = "pair" if r["family"] == "alloc_pair" else "batch of 64"
        if r["error"]:
            rows.append([what, r["allocator"], _size_text(r["size"]), r["threads"],
                         "error: " + r["error"], "-", "-", "-", r["n"]])
            continue
        rows.append([what, r["allocator"], _size_text(r["size"]), r["threads"], fmt_num(r["ns"]),
                     fmt_num(r["cpu"]), fmt_num(r["mops"]), fmt_num(r["fails"]), r["n"]])
    text = md_table(headers, rows, "lllrrrrrr")
    text += ("\nns per pair: one allocation plus its free, as one thread sees it: wall-clock time "
             "per iteration x threads (each thread runs its own loop). CPU ns per pair: the same "
             "from the threads' CPU time; far below the wall-clock figure means the threads were "
             "waiting for a core. Batch rows: per object of a batch of 64 allocations followed by "
             "their 64 frees. n: how many results the figure is the median of (repetitions, or "
             "the same run in several binaries).\n\n")
    text += "".join(f"- {line}\n" for line in alloc_summary(results))
    return text


def alloc_svg(results, threads=1):
    """ns per pair against object size, one line per allocator (pair runs, `threads` threads)."""
    series = {}
    for r in results:
        if r["family"] == "alloc_pair" and r["threads"] == threads and r["ns"]:
            series.setdefault(r["allocator"], []).append((r["size"], r["ns"]))
    return svg_loglog([{"name": k, "points": v} for k, v in series.items()],
                      "object size (bytes)", "ns per alloc+free pair",
                      f"alloc + free pair, {threads} thread{'s' if threads > 1 else ''}")


# ---- any family ---------------------------------------------------------------------------------

_STANDARD_KEYS = {"name", "family_index", "per_family_instance_index", "run_name", "run_type",
                  "repetitions", "repetition_index", "threads", "iterations", "real_time",
                  "cpu_time", "time_unit", "label", "file", "context", "error_occurred",
                  "error_message", "aggregate_name", "aggregate_unit"}


def generic_markdown(runs):
    """Every run: name, label, real and CPU time per iteration, iterations, counters."""
    rows = []
    for g in merge_runs(runs):
        if g["error"]:
            rows.append([g["name"], g["label"], "error: " + g["error"], "-", "-", "-", g["n"]])
            continue
        counters = sorted({k for r in g["runs"] for k in r if k not in _STANDARD_KEYS})
        ctext = ", ".join(f"{k}={fmt_num(median_of(g, lambda r, k=k: float(r.get(k, 0))))}"
                          for k in counters)
        rows.append([g["name"], g["label"], fmt_num(median_of(g, ns_per_iteration)),
                     fmt_num(median_of(g, lambda r: ns_per_iteration(r, "cpu_time"))),
                     fmt_num(median_of(g, lambda r: float(r["iterations"]))), ctext, g["n"]])
    return md_table(["run", "label", "real ns/iter", "CPU ns/iter", "iterations", "counters",
                     "n"], rows, "llrrrlr")


# ---- command line -------------------------------------------------------------------------------


def _write(path, text):
    if path in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Google Benchmark JSON to Markdown and SVG")
    sub = ap.add_subparsers(dest="family", required=True)
    a = sub.add_parser("alloc", help="the alloc family's table, summary and plot")
    a.add_argument("files", nargs="+")
    a.add_argument("--md", help="write the Markdown here (default: stdout)")
    a.add_argument("--svg", help="also write a plot of ns per pair against object size")
    a.add_argument("--threads", type=int, default=1, help="thread count plotted (default 1)")
    t = sub.add_parser("table", help="every run of any family")
    t.add_argument("files", nargs="+")
    t.add_argument("--md", help="write the Markdown here (default: stdout)")
    args = ap.parse_args(argv)

    runs = load_runs(args.files)
    if args.family == "alloc":
        results = alloc_results(runs)
        if not results:
            print("report.py: no alloc runs in " + " ".join(args.files), file=sys.stderr)
            return 1
        _write(args.md, alloc_markdown(results))
        if args.svg:
            _write(args.svg, alloc_svg(results, args.threads))
    else:
        _write(args.md, generic_markdown(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
