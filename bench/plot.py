#!/usr/bin/env python3
"""bench/plot.py - the benchmarks' plots, drawn with matplotlib (Debian: python3-matplotlib, which
bench/run installs). report.py reads the JSON and makes the tables; this draws.

    bench/plot.py seed FILE.json... --out seed.svg
        seconds (grow + sweep) against N, log-log: a line per algorithm and object size (64 B
        dashed), the baseline (walk + init + first touch) in grey; estimated points as open
        markers. Where an algorithm's point lies below the baseline, a note under the plot says
        why (the baseline is a yardstick, not a lower bound: report.py's seed notes).
    bench/plot.py alloc FILE.json... --out alloc.svg [--threads T]
        ns per alloc + free pair against object size, a line per allocator.

The axes fit the data: the x axis has a labelled tick at every N (or size) measured and no other,
the y axis spans the values plotted with a small margin. Text stays text in the SVG
(svg.fonttype none) and the file carries no date, so the same JSON gives the same file.
"""

import argparse
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullLocator  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "sweepfill",
                            "font.family": "sans-serif", "font.size": 10})

SEED_COLOURS = {"BATCH_RESTART": "#d62728", "RESTART": "#ff7f0e", "RESUME": "#1f77b4",
                "floor": "#7f7f7f"}


def count_label(v):
    """100000 -> '100k', 2000000 -> '2M', 64 -> '64'."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def size_label(v):
    return f"{v / 1024:g} KiB" if v >= 1024 else f"{v:g} B"


def loglog(series, xlabel, ylabel, title, path, xlabels=count_label, note=None):
    """Draw series on log-log axes into path (SVG, or whatever its extension says).

    series: dicts {"name", "points": [(x, y), ...], "dashed" (optional), "color" (optional),
    "open": x values drawn as open markers (optional)}; points with x <= 0 or y <= 0 are left
    out. The x axis is labelled at exactly the x values that occur; both axes span the data with
    a margin of a tenth of their logarithmic range (at least a factor of 1.2). In an SVG each
    series' line is the group series-I, its markers points-I and open-I (I counts from 0).
    note: a sentence printed under the plot (the group note in an SVG), or None.
    Returns the x ticks and the y limits."""
    pts = [(x, y) for s in series for x, y in s["points"] if x > 0 and y > 0]
    if not pts:
        raise ValueError("plot: no positive points to plot")
    xs = sorted({x for x, _ in pts})
    ys = [y for _, y in pts]

    def span(lo, hi):
        pad = max(0.1 * (math.log10(hi) - math.log10(lo)), math.log10(1.2))
        return 10 ** (math.log10(lo) - pad), 10 ** (math.log10(hi) + pad)

    fig, ax = plt.subplots(figsize=(9.5, 5.2 if note else 4.8))
    for i, s in enumerate(series):
        p = sorted((x, y) for x, y in s["points"] if x > 0 and y > 0)
        if not p:
            continue
        style = "--" if s.get("dashed") else "-"
        line, = ax.plot([x for x, _ in p], [y for _, y in p], style, color=s.get("color"),
                        linewidth=1.8, label=s["name"], gid=f"series-{i}")
        hollow = set(s.get("open", ()))
        filled = [(x, y) for x, y in p if x not in hollow]
        empty = [(x, y) for x, y in p if x in hollow]
        colour = line.get_color()
        if filled:
            ax.plot([x for x, _ in filled], [y for _, y in filled], "o", color=colour,
                    markersize=5, gid=f"points-{i}")
        if empty:
            ax.plot([x for x, _ in empty], [y for _, y in empty], "o", markerfacecolor="white",
                    markeredgecolor=colour, markeredgewidth=1.5, markersize=6, gid=f"open-{i}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*span(xs[0], xs[-1]))
    ylim = span(min(ys), max(ys))
    ax.set_ylim(*ylim)
    ax.set_xticks(xs, [xlabels(x) for x in xs])  # exactly the x values measured
    ax.xaxis.set_minor_locator(NullLocator())
    ax.grid(True, which="major", color="#dddddd")
    ax.grid(True, which="minor", axis="y", color="#f0f0f0")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    if note:
        fig.text(0.01, 0.01, note, ha="left", va="bottom", wrap=True, fontsize=8.5,
                 color="#444444", gid="note")
        fig.tight_layout(rect=(0, 0.06, 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)
    return xs, ylim


def seed_series(results):
    """The seed plot's series from report.seed_results(): the baseline (walk + init + first
    touch) first, then an algorithm per line; 64 B (and other sizes under 4 KiB) dashed."""
    series = []
    sizes = sorted({r["size"] for r in results if r["family"] == "seed"}, reverse=True)
    ns = sorted({r["n"] for r in results if r["family"] == "seed"})
    for size in sizes:
        dashed = size < 4096
        pts = [(n, report._floor_total(results, size, n)) for n in ns]
        pts = [(n, f) for n, f in pts if f]
        if pts:
            series.append({"name": f"baseline, {size_label(size)}", "points": pts,
                           "dashed": dashed, "color": SEED_COLOURS["floor"]})
        for algo in report.ALGOS:
            pts, est = [], []
            for n in ns:
                r = report._find(results, "seed", algo, size, n)
                if r and r["seconds"]:
                    pts.append((n, r["seconds"]))
                    if r["estimated"]:
                        est.append(n)
            if pts:
                name = f"{algo}, {size_label(size)}" + (" (open: estimated)" if est else "")
                series.append({"name": name, "points": pts, "dashed": dashed,
                               "color": SEED_COLOURS[algo], "open": est})
    return series


BASELINE_NOTE = ("Grey: the baseline, walk + init + first touch of the objects' memory. It is a "
                 "yardstick, not a lower bound: a line below it is faster than that plain way "
                 "(swf_cache_grow prepares memory with huge pages and one MADV_POPULATE_WRITE, "
                 "where the baseline takes a page fault per 4 KiB page).")


def below_baseline(results):
    """The (algorithm, size, N) whose seconds are below the baseline of the same size and N."""
    out = []
    for r in results:
        if r["family"] != "seed" or not r["seconds"] or r["error"]:
            continue
        base = report._floor_total(results, r["size"], r["n"])
        if base and r["seconds"] < base:
            out.append((r["kind"], r["size"], r["n"]))
    return out


def seed_plot(results, path):
    """The seed plot; with BASELINE_NOTE under it when a point lies below the baseline."""
    return loglog(seed_series(results), "members (N)", "seconds (grow + sweep)",
                  "Filling N empty slots: seconds against N", path,
                  note=BASELINE_NOTE if below_baseline(results) else None)


def alloc_plot(results, path, threads=1):
    series = {}
    for r in results:
        if r["family"] == "alloc_pair" and r["threads"] == threads and r["ns"]:
            series.setdefault(r["allocator"], []).append((r["size"], r["ns"]))
    return loglog([{"name": k, "points": v} for k, v in series.items()],
                  "object size", "ns per alloc + free pair",
                  f"alloc + free pair, {threads} thread{'s' if threads > 1 else ''}", path,
                  xlabels=size_label)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Google Benchmark JSON to plots (matplotlib)")
    sub = ap.add_subparsers(dest="family", required=True)
    sd = sub.add_parser("seed", help="seconds against N")
    sd.add_argument("files", nargs="+")
    sd.add_argument("--out", required=True, help="the plot's file (.svg, .png, ...)")
    a = sub.add_parser("alloc", help="ns per pair against object size")
    a.add_argument("files", nargs="+")
    a.add_argument("--out", required=True)
    a.add_argument("--threads", type=int, default=1, help="thread count plotted (default 1)")
    args = ap.parse_args(argv)
    runs = report.load_runs(args.files)
    if args.family == "seed":
        results = report.seed_results(runs)
        if not any(r["family"] == "seed" for r in results):
            print("plot.py: no seed runs in " + " ".join(args.files), file=sys.stderr)
            return 1
        seed_plot(results, args.out)
    else:
        results = report.alloc_results(runs)
        if not results:
            print("plot.py: no alloc runs in " + " ".join(args.files), file=sys.stderr)
            return 1
        alloc_plot(results, args.out, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
