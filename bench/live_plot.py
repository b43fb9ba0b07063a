#!/usr/bin/env python3
"""bench/live_plot.py - request latency through an activation, from bench_live's JSON.

    bench/live_plot.py live.json --out live.png [--n N] [--size S] [--before-ms 200]

One line per variant: the p99 of the requests that ended in each 10 ms window (the first
repetition of the chosen N and object size; default: the configuration whose slowest activation
is the shortest above 20 ms, so that the lines have a few windows to show), against the time
since the variant's activation began. Each variant's activation is the shaded band of its
colour, its deactivation the hatched one. Windows without requests are left out (a gap).
matplotlib (Debian: python3-matplotlib).
"""

import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"registry": "#1f77b4", "sweep64": "#2ca02c", "sweep1024": "#17becf",
           "urcu": "#d62728", "stw": "#7f7f7f"}


def pick(runs, n, size):
    """The (n, size) to draw."""
    configs = {}
    for r in runs:
        if "window_p99_ns" in r:
            key = (r["n"], r["size"])
            configs[key] = max(configs.get(key, 0), r["act_wall_s"])
    if n is not None and size is not None:
        return n, size
    long_enough = [k for k, v in configs.items() if v > 0.02]
    if not long_enough:
        return max(configs, key=configs.get)
    return min(long_enough, key=lambda k: configs[k])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int)
    ap.add_argument("--size", type=int)
    ap.add_argument("--before-ms", type=float, default=200)
    a = ap.parse_args(argv)
    with open(a.json) as f:
        data = json.load(f)
    runs = data["runs"]
    n, size = pick(runs, a.n, a.size)
    win = data["context"].get("window_ms", 10)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    right = 0
    for r in runs:
        if r["n"] != n or r["size"] != size or "window_p99_ns" not in r:
            continue
        colour = COLOURS.get(r["variant"], None)
        t0 = r["act_at_ms"]
        xs, ys = [], []
        for i, p99 in enumerate(r["window_p99_ns"]):
            x = (i + 0.5) * win - t0
            if x < -a.before_ms:
                continue
            xs.append(x)
            ys.append(p99 / 1e3 if p99 > 0 else float("nan"))
        ax.plot(xs, ys, color=colour, linewidth=1.2,
                label=f'{r["variant"]} (activation {r["act_wall_s"] * 1e3:.0f} ms)')
        ax.axvspan(0, r["act_end_ms"] - t0, color=colour, alpha=0.10)
        ax.axvspan(r["deact_at_ms"] - t0, r["deact_end_ms"] - t0, hatch="//", fill=False,
                   edgecolor=colour, alpha=0.3, linewidth=0)
        right = max(right, xs[-1] if xs else 0)
    if right == 0:
        print(f"live_plot.py: no windows for n={n} size={size}", file=sys.stderr)
        return 1
    ax.set_yscale("log")
    ax.set_xlim(-a.before_ms, right)
    ax.set_xlabel("ms since the variant's activation began (shaded: activation; hatched: "
                  "deactivation)")
    ax.set_ylabel(f"request p99 per {win} ms window (us)")
    ctx = data["context"]
    ax.set_title(f"bench_live: N = {n:,}, {size} B objects, {ctx.get('workers', 1)} worker, "
                 f"writer every {ctx.get('writer_us')} us ({ctx.get('cores')} cores)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110, metadata={"Software": None} if a.out.endswith(".png") else None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
