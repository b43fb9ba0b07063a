#!/usr/bin/env python3
"""bench/report.py - turn Google Benchmark JSON output into Markdown tables (bench/plot.py draws
the plots, with matplotlib).

Standard library only. Usable as a module (the functions below) and as a command:

    bench/report.py alloc bench/out/alloc-*.json [--md OUT.md]
        the alloc family: one row per run (allocator, object size, threads, ns per pair) and a
        summary per size and thread count: cache NOWAIT pair against the best malloc pair.
    bench/report.py seed FILE.json... [--md OUT.md]
        the seed and floor families (bench_seed): the seed table per object size (N, algorithm,
        passes, visits, seconds, ns/member, ÷ baseline), the floors, the speedup of RESUME over
        BATCH_RESTART per N, and sweepfill's goals with the figures measured against them.
    bench/report.py nowait_failures|sweep_overhead|section_bounds FILE.json... [--md OUT.md]
        that family's table and summary lines.
    bench/report.py table FILE.json... [--md OUT.md]
        every run of any family: name, label, time per iteration, iterations, counters.
    bench/report.py ready|urcu_peer|many_threads FILE.json... [--md OUT.md]
    bench/report.py sidebyside BEFORE.json AFTER.json [--filter RE] [--metrics ...]
        the ready, urcu_peer and many_threads families, and two runs side by side: see
        report_limits.py.

Without --md the Markdown goes to stdout.

Verdicts on sweepfill's goals follow bench/README.md's "Decision rules": the median of the
per-repetition ratios (paired by repetition_index), printed with its sample count ("n=5"),
against the goal's limit, or 1 + a noise band (5 %, or an A/A control's) for a goal of no
difference; with fewer than 5 pairs, a verdict only where the figure clears the limit by the band.

Measurements: when the same run (same run name and label) appears more than once - with
--benchmark_repetitions, or because several binaries ran it - its figures are the median of the
measurements, and the table says how many there were. When the files hold Google Benchmark's
aggregates (--benchmark_report_aggregates_only), the "median" aggregates are used.
"""

import argparse
import re
import statistics
import sys

import report_limits
from reportlib import (STANDARD_KEYS, fmt_count, fmt_num, load_runs, md_table,
                       median_of, merge_runs, ns_per_iteration, size_text, write)

# ---- decision rules (bench/README.md, "Decision rules") -------------------------------------------

BAND = 0.05      # the fixed noise band (rule 3)
MIN_PAIRS = 5    # pairs a verdict needs to be read against the limit itself (rule 5)


def _rep_values(runs, fn):
    """{(file, repetition_index): fn(run)} over a run's measurements (position when unindexed)."""
    out = {}
    for i, r in enumerate(runs or ()):
        v = fn(r)
        if v is not None:
            out[(r.get("file"), r.get("repetition_index", i))] = float(v)
    return out


def run_seconds(run):
    """A measurement's seconds: its 'seconds' counter, else its real time per iteration."""
    if "seconds" in run:
        return float(run["seconds"])
    return ns_per_iteration(run) * 1e-9


def paired_ratio(num_runs, den_runs, fn=run_seconds, den_fn=None):
    """Rule 1: the median of the per-repetition ratios num / den, repetitions paired by
    (file, repetition_index); where the two share none, or one side was measured once, the ratio
    of their medians, unpaired.
    fn (den_fn: for den, when it differs) gives a measurement's figure. A dict: m (the figure), n
    (pairs, or the smaller side's count), paired; None without data."""
    a, b = _rep_values(num_runs, fn), _rep_values(den_runs, den_fn or fn)
    keys = [k for k in a if k in b and b[k]]
    if keys and len(a) > 1 and len(b) > 1:
        return {"m": statistics.median(a[k] / b[k] for k in keys), "n": len(keys),
                "paired": True}
    if a and b and statistics.median(b.values()):
        return {"m": statistics.median(a.values()) / statistics.median(b.values()),
                "n": min(len(a), len(b)), "paired": False}
    return None


def ratio_of_values(values):
    """Rule 1 for a family that reports each repetition's ratio itself: their median."""
    values = [float(v) for v in values if v is not None]
    if not values:
        return None
    return {"m": statistics.median(values), "n": len(values), "paired": True}


def fmt_ratio(r, digits=2, growth=False):
    """Rule 2: a ratio with its sample count, "1.04× (n=5)" (growth: "×1.04 (n=5)")."""
    if r is None:
        return "-"
    m = fmt_num(r["m"]) if r["m"] >= 100 or r["m"] < 0.1 else f"{r['m']:.{digits}f}"
    m = f"×{m}" if growth else f"{m}×"
    return f"{m} (n={r['n']}{'' if r['paired'] else ', unpaired'})"


def noise_band(aa=None):
    """Rule 3: (band, how it was sized). aa: the A/A control's paired ratio, or None."""
    if aa is None or aa["n"] < MIN_PAIRS:
        return BAND, f"band {BAND * 100:g} %, fixed"
    if abs(aa["m"] - 1) <= BAND:
        return BAND, f"band {BAND * 100:g} %, fixed; the A/A control, {fmt_ratio(aa, 3)}, is within it"
    band = abs(aa["m"] - 1)
    return band, f"band {band * 100:.1f} %, from the A/A control: {fmt_ratio(aa, 3)}"


def judge(r, limit, at_least=False, band=BAND):
    """Rules 4 and 5: 'met', 'missed (above the goal)' / 'missed (below the goal)', or
    'not judged (...)'. limit: the goal's L (for a goal of no difference, 1 + band)."""
    if r is None:
        return "not judged (no data)"
    m, n = r["m"], r["n"]

    def within(x, lim):
        return x >= lim if at_least else x <= lim
    miss = "missed (below the goal)" if at_least else "missed (above the goal)"
    if n >= MIN_PAIRS:
        return "met" if within(m, limit) else miss
    if within(m, limit * (1 + band) if at_least else limit / (1 + band)):
        return "met"
    if not within(m, limit / (1 + band) if at_least else limit * (1 + band)):
        return miss
    return f"not judged (n={n} < {MIN_PAIRS}, within the band of the limit)"


def worst(verdicts):
    """One verdict for several: missed if any is, else not judged if any is, else met."""
    for word in ("missed", "not judged"):
        hit = [v for v in verdicts if v.startswith(word)]
        if hit:
            return hit[0]
    return "met" if verdicts else "not judged (no data)"


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
        lines.append(f"{size_text(size)}, {threads} thread{'s' if threads > 1 else ''}: "
                     f"cache NOWAIT pair = {fmt_num(x)} ns, best malloc pair = {fmt_num(y)} ns "
                     f"({best['allocator']}), ratio = X/Y = {x / y:.2f} (medians of n="
                     f"{cache[0]['n']} and n={best['n']}, unpaired: separate binaries)")
    bad = [r for r in results if r["impl"] == "cache_nowait" and r["fails"]]
    if bad:
        lines.append("WARNING: NOWAIT failures in " + ", ".join(
            f"{r['family']}/{r['size']}/threads:{r['threads']}" for r in bad))
    errors = [r for r in results if r["error"]]
    for r in errors:
        lines.append(f"ERROR in {r['family']}/{r['impl']}/{r['size']}/threads:{r['threads']} "
                     f"({r['allocator']}): {r['error']}")
    return lines


def alloc_markdown(results):
    """The alloc table and its summary, as Markdown."""
    headers = ["benchmark", "allocator", "size", "threads", "ns per pair", "CPU ns per pair",
               "M pairs/s (all threads)", "failures", "n"]
    rows = []
    for r in results:
        what = "pair" if r["family"] == "alloc_pair" else "batch of 64"
        if r["error"]:
            rows.append([what, r["allocator"], size_text(r["size"]), r["threads"],
                         "error: " + r["error"], "-", "-", "-", r["n"]])
            continue
        rows.append([what, r["allocator"], size_text(r["size"]), r["threads"], fmt_num(r["ns"]),
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


# ---- the seed and floor families --------------------------------------------------------------

_SEED_RE = re.compile(r"^(seed|floor|ready)/(\w+)/(?:size:(\d+)/)?n:(\d+)(?:/.*)?$")
ALGOS = ["BATCH_RESTART", "RESTART", "RESUME"]
_ALGO_OF = {"batch_restart": "BATCH_RESTART", "restart": "RESTART", "resume": "RESUME"}
_SEED_COUNTERS = ("seconds", "grow_s", "sweep_s", "sections_s", "passes", "visits", "estimated",
                  "estimate_s", "probe_s", "formula_visits", "refills", "unsupported")


def _counter_median(group, key):
    vals = [float(r[key]) for r in group["runs"] if key in r]
    return statistics.median(vals) if vals else None


def seed_results(runs):
    """The seed, floor and ready runs as dicts: family ('seed', 'floor' or 'ready'), kind (an
    algorithm name in ALGOS, the floor: walk, walk_init, first_touch, populate, or the way of
    preparing memory: touch, populate, thp_touch, ...), size (bytes; None for walk),
    n, seconds (the 'seconds' counter, else the time per iteration), the other counters of
    _SEED_COUNTERS (None when absent), seconds_min and seconds_max (the fastest and the slowest
    measurement's), estimated (bool),
    label, count (measurements: medians are taken over them), runs (the measurements, for the
    paired ratios of the Decision rules), error, state (the host memory state its file's context
    records, "warm", "cold", "as-found", or "unstated"). A seed variant named <variant>_aa (an A/A
    control) has the kind "<ALGO> A/A". An estimated run counts as one measurement, whatever
    repetitions reported the same estimate."""
    out = []
    for g in _merge_by_state(runs):
        m = _SEED_RE.match(g["name"])
        if not m:
            continue
        family, kind = m.group(1), m.group(2)
        if family == "seed":
            # <variant>_aa: the variant run a second time, an A/A control (Decision rules, 3)
            base = kind[:-3] if kind.endswith("_aa") else kind
            kind = _ALGO_OF.get(base, base) + (" A/A" if base != kind else "")
        r = {"family": family, "kind": kind, "size": int(m.group(3)) if m.group(3) else None,
             "n": int(m.group(4)), "label": g["label"], "count": g["n"], "error": g["error"],
             "runs": g["runs"], "state": g["state"]}
        for key in _SEED_COUNTERS:
            r[key] = _counter_median(g, key)
        secs = [float(x["seconds"]) for x in g["runs"] if "seconds" in x]
        r["seconds_min"] = min(secs) if secs else None
        r["seconds_max"] = max(secs) if secs else None
        if r["seconds"] is None:
            t = median_of(g, ns_per_iteration)
            r["seconds"] = t * 1e-9 if t is not None else None
        r["estimated"] = bool(r["estimated"]) or g["label"].startswith("ESTIMATED")
        if r["estimated"] and r["runs"]:
            r["runs"], r["count"] = r["runs"][:1], 1  # one estimate, not several samples
        out.append(r)
    return out


def host_state(run):
    """The host memory state a run's file records (its context's host_memory), or "unstated"."""
    return (run.get("context") or {}).get("host_memory") or "unstated"


def _merge_by_state(runs):
    """merge_runs, apart per host memory state: each group has 'state' too."""
    out = []
    for state in sorted({host_state(r) for r in runs}, key=_state_order):
        for g in merge_runs([r for r in runs if host_state(r) == state]):
            g["state"] = state
            out.append(g)
    return out


def _state_order(state):
    return {"warm": 0, "cold": 1, "as-found": 2}.get(state, 3)


def states_of(results):
    """The host memory states of these results, warm first, then cold."""
    return sorted({r.get("state", "unstated") for r in results}, key=_state_order)


def in_state(results, state):
    return [r for r in results if r.get("state", "unstated") == state]


def _find(results, family, kind, size, n):
    for r in results:
        if (r["family"], r["kind"], r["n"]) == (family, kind, n) and \
                (r["size"] == size or r["size"] is None) and not r["error"]:
            return r
    return None


def _floor_total(results, size, n):
    """The baseline a row is compared with: walk + init of ready objects, plus first touch of
    the objects' memory (N x size bytes), both measured in the same run. None if either is
    missing. Not a lower bound: first touch takes a fault per 4 KiB page, and swf_cache_grow
    prepares memory faster than that."""
    wi = _find(results, "floor", "walk_init", size, n)
    ft = _find(results, "floor", "first_touch", size, n)
    if wi is None or ft is None or wi["seconds"] is None or ft["seconds"] is None:
        return None
    return wi["seconds"] + ft["seconds"]


def _restart_like_resume(results, size, ns):
    """A note when RESTART and RESUME made the same passes and visits at every N of this size
    (no NOWAIT allocation failed: the cache is grown before the sweep), saying what separates
    them and where it shows; "" when they differ somewhere."""
    pairs = [(_find(results, "seed", "RESTART", size, n), _find(results, "seed", "RESUME", size, n))
             for n in ns]
    pairs = [(a, b) for a, b in pairs if a and b]
    if not pairs or any((a["passes"], a["visits"]) != (b["passes"], b["visits"]) for a, b in pairs):
        return ""
    return ("RESTART and RESUME did the same work here (the same passes and visits at every N): "
            "both sweeps start with N + 32 objects ready in the cache, so no NOWAIT allocation "
            "failed, and the two differ only in what they do after one fails (RESTART walks again "
            "from the head, RESUME refills and goes on from its pinned cursor), so a difference "
            "in their seconds here is not that recovery. The nowait_failures family (`bench_nowait_failures`) "
            "injects NOWAIT failures to show it: `bench/run` prints its passes and visits at "
            "100 % failure.")


def _secs(v, estimated=False):
    if v is None:
        return "-"
    return f"≈ {fmt_num(v)}" if estimated else fmt_num(v)


def _ratio(a, b):
    return a / b if a is not None and b else None


def _times(v, estimated=False):
    if v is None:
        return "-"
    return f"≈ {fmt_num(v)}×" if estimated else f"{fmt_num(v)}×"


def _seed_size_tables(results, size, ns, state):
    """The seed table and the floors of one object size, in one host memory state."""
    text = ""
    text += f"### {size_text(size)} objects, host memory: {state}\n\n"
    rows = []
    for n in ns:
        floor = _floor_total(results, size, n)
        for algo in ALGOS:
            r = _find(results, "seed", algo, size, n)
            if r is None:
                continue
            if r["error"]:
                rows.append([f"{n:,}", algo, "-", "-", "error: " + r["error"], "-", "-",
                             "-"])
                continue
            est = r["estimated"]
            rows.append([f"{n:,}", algo + (" (estimated)" if est else ""),
                         fmt_count(r["passes"]), fmt_count(r["visits"]),
                         _secs(r["seconds"], est), _secs(_ratio(r["seconds"], n / 1e9), est),
                         _times(_ratio(r["seconds"], floor), est), r["count"]])
            if algo == "RESUME":
                rows.append([f"{n:,}", "RESUME: grow only", "-", "-", _secs(r["grow_s"]),
                             _secs(_ratio(r["grow_s"], n / 1e9)),
                             _times(_ratio(r["grow_s"], floor)), r["count"]])
                rows.append([f"{n:,}", "RESUME: in sections", "1", "-",
                             _secs(r["sections_s"]), _secs(_ratio(r["sections_s"], n / 1e9)),
                             _times(_ratio(r["sections_s"], floor)), r["count"]])
        if floor is not None:
            wi = _find(results, "floor", "walk_init", size, n)
            ft = _find(results, "floor", "first_touch", size, n)
            rows.append([f"{n:,}", "baseline: walk + init + first touch", "1", f"{n:,}",
                         _secs(floor), _secs(floor / n * 1e9), "1×",
                         f"{wi['count']} + {ft['count']}"])
    text += md_table(["N", "algorithm", "passes", "visits", "seconds", "ns/member",
                      "÷ baseline", "n"], rows, "llrrrrrr") + "\n"
    same = _restart_like_resume(results, size, ns)
    if same:
        text += same + "\n\n"

    frows = []
    for n in ns:
        cells = [f"{n:,}"]
        for kind in ("walk", "walk_init", "first_touch", "populate"):
            r = _find(results, "floor", kind, size, n)
            cells.append("-" if r is None or r["seconds"] is None else
                         f"{fmt_num(r['seconds'])} s ({fmt_num(r['seconds'] / n * 1e9)} ns)")
        frows.append(cells)
    text += (f"Floors, {size_text(size)} objects, host memory: {state} (seconds, and ns per "
             f"member):\n\n")
    text += md_table(["N", "walk", "walk + init", "first touch", "MAP_POPULATE"], frows,
                     "lrrrr") + "\n"

    return text


def seed_markdown(results, max_seconds=None):
    """The seed table (one per object size and host memory state, the states of a size side by
    side), the floors, the speedups, the goals; Markdown."""
    sizes = sorted({r["size"] for r in results if r["family"] == "seed"}, reverse=True)
    ns = sorted({r["n"] for r in results if r["family"] == "seed"})
    states = states_of(results)
    text = ""
    for size in sizes:
        for state in states:
            text += _seed_size_tables(in_state(results, state), size, ns, state)
    text += ("Speedup of RESUME over BATCH_RESTART, the sweep alone (sweep_s: the algorithms' "
             "own time; the grow, the same for both, apart):\n\n")
    for state in states:
        res = in_state(results, state)
        for size in sizes:
            for n in ns:
                b = _find(res, "seed", "BATCH_RESTART", size, n)
                r = _find(res, "seed", "RESUME", size, n)
                sp = paired_ratio(_runs_of(b), _runs_of(r), sweep_seconds) if b and r else None
                if sp is None or not r["sweep_s"] or b["sweep_s"] is None:
                    continue
                est = " (BATCH_RESTART estimated)" if b["estimated"] else ""
                text += (f"- host memory {state}, {size_text(size)}, N = {n:,}: "
                         f"{fmt_num(b['sweep_s'])} s / {fmt_num(r['sweep_s'])} s = "
                         f"{fmt_ratio(sp)}{est}\n")
    text += "\n"
    notes = [
        "n: the measurements (repetitions) each row's figures are the medians of; a ratio in "
        "the table divides two medians.",
        "seconds: swf_cache_grow(N + 32) on a fresh cache plus the sweep, for every algorithm "
        "(the same memory preparation for all); `RESUME: grow only` and `RESUME: in sections` "
        "split RESUME's figure into the memory preparation and the time inside read-side "
        "sections.",
        "÷ baseline: seconds divided by the baseline's seconds, same N and object size, same "
        "run. The baseline is the plain way to do the same work: walk the list, initialise and "
        "publish a ready object per member (floor/walk_init), plus the first touch of N "
        "objects' fresh memory, a write per 4 KiB page (floor/first_touch). It is a yardstick, "
        "not a lower bound: below 1× means faster than the baseline (0.1× = ten times faster), "
        "which sweepfill reaches where swf_cache_grow prepares the memory with transparent huge "
        "pages and one MADV_POPULATE_WRITE, while the baseline takes a page fault per 4 KiB "
        "page.",
    ]
    if any(r["estimated"] for r in results):
        bound = f" (--max-seconds={max_seconds})" if max_seconds else ""
        notes.append(
            "(estimated), ≈: not run, estimated, because the estimate exceeded the bound" + bound +
            ". The estimate: BATCH_RESTART's passes were cut into 8 groups; in each, a few "
            "consecutive passes were run for real from the state the earlier passes leave "
            "(the list's first (p-1)*32 members pre-set), each group's measured time per visit "
            "times the exact visits of its passes (formula B*P*(P-1)/2 + N + (P-1), P = "
            "ceil(N/B)), summed, plus a measured swf_cache_grow(N + 32). Passes and visits of "
            "estimated rows are the formula's, which is exact (test/unit/sweep_formulas checks it).")
    checked = [r for r in results if r["kind"] == "BATCH_RESTART" and not r["estimated"]
               and r["estimate_s"]]
    if checked:
        notes.append("The estimator against real runs of the same invocation: " + "; ".join(
            f"{size_text(r['size'])} N = {r['n']:,}: estimated {fmt_num(r['estimate_s'])} s, "
            f"measured {fmt_num(r['seconds'])} s ({(r['estimate_s'] / r['seconds'] - 1) * 100:+.1f} %)"
            for r in checked if r["seconds"]) + ".")
    text += "".join(f"- {n}\n" for n in notes)
    text += ("\nsweepfill's goals for these figures (bench/README.md, \"Goals\", says where "
             "each comes from), and where this run stands against them (measurements, not "
             "tests: no test asserts a timing):\n\n")
    text += "".join(f"- {line}\n" for line in seed_targets(results))
    errors = [r for r in results if r["error"]]
    text += "".join(f"\nERROR in {r['family']}/{r['kind']}/{r['size']}/{r['n']}: {r['error']}\n"
                    for r in errors)
    return text


def _verdict(ok, miss="above"):
    """A figure that is not a ratio of measurements (a count) against its goal."""
    return "met" if ok else f"missed ({miss} the goal)"


def _runs_of(r):
    return r["runs"] if r and r.get("runs") else []


def sweep_seconds(run):
    """A measurement's sweep alone (the sweep_s counter: the algorithm's own time, without the
    grow); its seconds where it has no such counter (older runs)."""
    if "sweep_s" in run:
        return float(run["sweep_s"])
    return run_seconds(run)


def grow_seconds(run):
    """A measurement's grow (grow_s), or None."""
    return float(run["grow_s"]) if "grow_s" in run else None


def _counter(key):
    return lambda run: run.get(key)


# The ways of preparing N objects' memory measured in the same run (the floor and ready
# families), each a floor for RESUME's grow + sweep; memset (memory made resident beforehand)
# and the cache itself are not.
MEMORY_FLOORS = (("floor", "first_touch", "floor/first_touch (mmap, a write per 4 KiB page)"),
                 ("floor", "populate", "floor/populate (MAP_POPULATE)"),
                 ("ready", "touch", "ready/touch (mmap, a write per 4 KiB page, then the writes)"),
                 ("ready", "populate", "ready/populate (MAP_POPULATE, then the writes)"),
                 ("ready", "thp_touch", "ready/thp_touch (THP + a write per page)"),
                 ("ready", "thp_popw", "ready/thp_popw (THP + MADV_POPULATE_WRITE)"),
                 ("ready", "popw", "ready/popw (MADV_POPULATE_WRITE)"))


def fastest_floor(results, size, n):
    """(result, name) of the fastest memory floor measured for N objects of this size (the
    smallest median seconds), or (None, None)."""
    found = []
    for family, kind, name in MEMORY_FLOORS:
        f = _find(results, family, kind, size, n)
        if f and f["size"] == size and f["seconds"] and not f.get("unsupported"):
            found.append((f["seconds"], name, f))
    if not found:
        return None, None
    _, name, f = min(found, key=lambda x: x[0])
    return f, name


def _one_pass(results, size, ns):
    """RESUME makes 1 pass at every N: a count, so checked on every repetition, not on a median
    (Decision rules, 6): passes == 1 and visits == N + refills in each."""
    parts, good, total = [], True, 0
    for n in ns:
        r = _find(results, "seed", "RESUME", size, n)
        runs = _runs_of(r)
        if not runs:
            continue
        total += len(runs)
        passes = sorted({float(x.get("passes", -1)) for x in runs})
        bad = [x for x in runs if float(x.get("passes", -1)) != 1 or
               float(x.get("visits", -1)) != n + float(x.get("refills", 0))]
        good = good and not bad
        ptext = "/".join(fmt_count(p) for p in passes)
        parts.append(f"N = {n:,}: passes {ptext}, visits = N + refills in "
                     f"{len(runs) - len(bad)} of {len(runs)}")
    if not parts:
        return []
    return [f"RESUME passes, {size_text(size)}, every repetition (goal: 1 pass, visits = N + "
            f"refills, at every N): {'; '.join(parts)} (n={total}): {_verdict(good, 'off')}"]


def _same_work(a, b):
    """RESUME and RESTART made the same passes and visits in every repetition: no NOWAIT
    allocation failed, and they ran the same loop (Decision rules, 7)."""
    counts = {(float(x.get("passes", -1)), float(x.get("visits", -1)))
              for x in _runs_of(a) + _runs_of(b)}
    return len(counts) == 1


def _resume_against_restart(results, size, ns):
    """RESUME against RESTART, goal "no slower", by the Decision rules: per N, the median of the
    paired ratios of their sweeps alone (sweep_s: the grow before them is the same and apart),
    within 1 + the band (5 %, or the A/A control's)."""
    parts, verdicts, same = [], [], []
    for n in ns:
        a, b = _find(results, "seed", "RESUME", size, n), _find(results, "seed", "RESTART", size, n)
        r = paired_ratio(_runs_of(a), _runs_of(b), sweep_seconds) if a and b else None
        if r is None:
            continue
        if _same_work(a, b):
            same.append(f"N = {n:,}: {fmt_ratio(r)}")
            continue
        aa = _find(results, "seed", "RESTART A/A", size, n)
        band, how = noise_band(paired_ratio(_runs_of(aa), _runs_of(b), sweep_seconds)
                               if aa else None)
        v = judge(r, 1 + band, band=band)
        verdicts.append(v)
        sa, sb = (a["sweep_s"], b["sweep_s"]) if a["sweep_s"] and b["sweep_s"] else \
            (a["seconds"], b["seconds"])
        parts.append(f"N = {n:,}: RESUME {fmt_num(sa)} s, RESTART "
                     f"{fmt_num(sb)} s (medians), {fmt_ratio(r)}, limit "
                     f"{1 + band:.3f}× ({how}): {v}")
    lines = []
    if same:
        lines.append(f"RESUME against RESTART, {size_text(size)}: not testable here (same loop "
                     f"when nothing fails: the same passes and visits in every repetition at "
                     f"{', '.join(x.split(':')[0][4:] for x in same)}; seconds "
                     f"{'; '.join(same)}, which is noise): judged in the nowait_failures table, "
                     f"where NOWAIT failures make them differ")
    if not parts:
        return lines
    return lines + [f"RESUME against RESTART, {size_text(size)}, the sweep alone (goal: no slower; median of "
            f"the paired ratios RESUME / RESTART within 1 + the band): {'; '.join(parts)}; "
            f"overall: {worst(verdicts)}"]


def seed_targets(results):
    """sweepfill's goals for the seed, floor and ready figures, each as one line with the figures
    it was judged on and its verdict, per host memory state (each line names its state). A goal
    on memory preparation (grow + sweep against the fastest floor, the ready time) is met only
    where it holds in every state measured: one more line says so when there are several."""
    lines, memory = [], {}
    for state in states_of(results):
        ls, mem = _seed_targets_state(in_state(results, state))
        lines += [f"[host memory: {state}] {line}" for line in ls]
        for goal, v in mem.items():
            memory.setdefault(goal, []).append((state, v))
    if len(states_of(results)) > 1:
        for goal, vs in memory.items():
            lines.append(f"{goal}, in every host memory state ("
                         f"{', '.join(f'{st}: {v}' for st, v in vs)}): {worst([v for _, v in vs])}")
    return lines


def _seed_targets_state(results):
    """seed_targets for the results of one host memory state: (lines, {memory goal: verdict})."""
    lines, memory = [], {}
    sizes = sorted({r["size"] for r in results if r["family"] == "seed"}, reverse=True)
    ns = sorted({r["n"] for r in results if r["family"] == "seed"})
    if not ns:
        return lines, memory
    lo, hi = ns[0], ns[-1]
    for size in sizes:
        res = [_find(results, "seed", "RESUME", size, n) for n in ns]
        res = [r for r in res if r is not None]
        if not res:
            continue
        st = size_text(size)
        lines += _one_pass(results, size, ns)
        a, b = _find(results, "seed", "RESUME", size, lo), _find(results, "seed", "RESUME", size, hi)
        g = paired_ratio(_runs_of(b), _runs_of(a), sweep_seconds) if a and b and hi > lo else None
        if g:
            allowed = 1.1 * hi / lo
            tg = paired_ratio(_runs_of(b), _runs_of(a))
            lines.append(f"RESUME growth, {st}: {lo:,} -> {hi:,} members: "
                         f"{fmt_ratio(g, growth=True)} in time, the sweep alone (sweep_s; grow + "
                         f"sweep {fmt_ratio(tg, growth=True)}, not judged here: the grow is "
                         f"memory) for ×{hi / lo:g} members (goal ≤ ×{allowed:.2f}): "
                         f"{judge(g, allowed)}")
        bb, rb = _find(results, "seed", "BATCH_RESTART", size, hi), b
        sp = paired_ratio(_runs_of(bb), _runs_of(rb), sweep_seconds) if bb and rb else None
        if sp:
            est = ", BATCH_RESTART estimated" if bb["estimated"] else ""
            few = (f", BATCH_RESTART measured {bb['count']} time{'s' if bb['count'] > 1 else ''}"
                   f" (fewer samples than 3)" if not bb["estimated"] and bb["count"] < 3 else "")
            lines.append(f"RESUME over BATCH_RESTART at N = {hi:,}, {st}, the sweep alone: "
                         f"{fmt_ratio(sp)}{est}{few} (goal ≥ 1,000×; the kernel patch reported "
                         f"2,476×): {judge(sp, 1000, at_least=True)}")
        if size <= 64:
            parts, verdicts = [], []
            for n in ns:
                r, w = _find(results, "seed", "RESUME", size, n), _find(results, "floor", "walk",
                                                                       None, n)
                x = paired_ratio(_runs_of(r), _runs_of(w), _counter("sections_s"),
                                 run_seconds) if r and w else None
                if x:
                    verdicts.append(judge(x, 1.3))
                    parts.append(f"N = {n:,}: {fmt_ratio(x)}")
            if parts:
                lines.append(f"RESUME inside read-side sections against the walk-only floor, "
                             f"{st}: {'; '.join(parts)} (goal ≤ 1.3×): {worst(verdicts)}")
        if size >= 4096:
            lines += _resume_against_restart(results, size, ns)
            parts, verdicts, grows = [], [], []
            for n in ns:
                r = _find(results, "seed", "RESUME", size, n)
                f, fname = fastest_floor(results, size, n)
                x = paired_ratio(_runs_of(r), _runs_of(f)) if r and f else None
                if x:
                    verdicts.append(judge(x, 1.1))
                    parts.append(f"N = {n:,}: {fmt_num(r['seconds'])} s against {fname} "
                                 f"{fmt_num(f['seconds'])} s: {fmt_ratio(x)}")
                gx = paired_ratio(_runs_of(r), _runs_of(f), grow_seconds, run_seconds) \
                    if r and f and r["grow_s"] is not None else None
                if gx:
                    grows.append(f"N = {n:,}: {fmt_num(r['grow_s'])} s, {fmt_ratio(gx)} "
                                 f"{fname}")
            if parts:
                goal = f"RESUME grow + sweep against the fastest memory floor, {st}"
                memory[goal] = worst(verdicts)
                lines.append(f"RESUME grow + sweep against the fastest memory floor measured "
                             f"for the same objects, {st}: {'; '.join(parts)} (goal ≤ 1.1×): "
                             f"{worst(verdicts)}")
            if grows:
                lines.append(f"RESUME's grow alone (swf_cache_grow(N + 32)) against the same "
                             f"floor, {st} (reported, no goal of its own): {'; '.join(grows)}")
    for size in sorted({r["size"] for r in results if r["family"] == "ready"}, reverse=True):
        parts, verdicts = [], []
        for n in sorted({r["n"] for r in results if r["family"] == "ready"}):
            if not 100000 <= n <= 400000:
                continue
            c, t = _find(results, "ready", "cache", size, n), _find(results, "ready", "thp_touch",
                                                                    size, n)
            if not c or not t or t.get("unsupported") or not t["seconds"]:
                continue
            x = paired_ratio(_runs_of(c), _runs_of(t))
            if x:
                verdicts.append(judge(x, 1.5))
                parts.append(f"N = {n:,}: {fmt_num(c['seconds'])} s against "
                             f"{fmt_num(t['seconds'])} s: {fmt_ratio(x)}")
        if parts:
            goal = f"The cache's ready time against THP + touch, {size_text(size)}"
            memory[goal] = worst(verdicts)
            lines.append(f"{goal} (ready/cache against ready/thp_touch, N = 100k-400k): "
                         f"{'; '.join(parts)} (goal ≤ 1.5×): {worst(verdicts)}")
    return lines, memory


# ---- the nowait_failures, sweep_overhead and section_bounds families -----------------------------

_FAULT_RE = re.compile(r"^nowait_failures/(restart|resume)/fail:(\d+)/n:(\d+)(?:/.*)?$")
_GENERIC_RE = re.compile(r"^sweep_overhead/(hand|macro|ops_table)/order:(\d+)/n:(\d+)(?:/.*)?$")
_SECTIONS_RE = re.compile(r"^section_bounds/(activate|alone)/bound:(\d+)/n:(\d+)(?:/.*)?$")
_GENERIC_LISTS_RE = re.compile(r"^sweep_overhead/(tailq|cds)_(hand|macro)/order:(\d+)/n:(\d+)(?:/.*)?$")
_SECTIONS_LOCK_RE = re.compile(
    r"^section_bounds/tailq_(rwlock_wpref|rwlock|mutex)/bound:(\d+)/n:(\d+)(?:/.*)?$")
_GENERIC_PAIR_RE = re.compile(r"^sweep_overhead/(ck|tailq|cds)_pair/order:(\d+)/n:(\d+)(?:/.*)?$")
_LIST_NAMES = {"ck": "CK_LIST (ck_epoch)", "tailq": "sys TAILQ (rwlock)",
               "cds": "cds_list (urcu-memb)"}
_LOCK_NAMES = {"rwlock_wpref": "rwlock, writer-preferring", "rwlock": "rwlock, glibc default",
               "mutex": "mutex"}


def _groups(runs, regex):
    for g in merge_runs(runs):
        m = regex.match(g["name"])
        if m:
            yield g, m


def nowait_failures_markdown(runs):
    """RESTART against RESUME under injected NOWAIT failure."""
    rows, by = [], {}
    for g, m in _groups(runs, _FAULT_RE):
        algo, fail, n = _ALGO_OF[m.group(1)], int(m.group(2)), int(m.group(3))
        if g["error"]:
            rows.append((fail, n, algo, [f"{fail} %", f"{n:,}", algo, "error: " + g["error"]] +
                         ["-"] * 5))
            continue
        c = {k: _counter_median(g, k) for k in ("passes", "visits", "refills", "restarts",
                                                  "seconds", "ns_per_member")}
        c["runs"] = g["runs"]
        by[(fail, n, algo)] = c
        rows.append((fail, n, algo, [f"{fail} %", f"{n:,}", algo, fmt_count(c["passes"]),
                                     fmt_count(c["visits"]), fmt_count(c["refills"]),
                                     fmt_count(c["restarts"]), fmt_num(c["seconds"] * 1e3),
                                     fmt_num(c["ns_per_member"])]))
    rows.sort(key=lambda r: (r[1], r[0], r[2] != "RESTART"))
    text = md_table(["NOWAIT failure", "N", "algorithm", "passes", "visits", "refills",
                     "restarts", "ms", "ns/member"], [r[3] for r in rows], "lllrrrrrr")
    text += "\n"
    for (fail, n, algo), c in sorted(by.items()):
        o = by.get((fail, n, "RESUME"))
        t = paired_ratio(c["runs"], o["runs"]) if algo == "RESTART" and o else None
        if t and o["visits"]:
            text += (f"- {fail} % failure, N = {n:,}: RESTART makes "
                     f"{c['visits'] / o['visits']:,.1f}× the visits of RESUME and takes "
                     f"{t['m']:,.1f}× its time (n={t['n']}"
                     f"{'' if t['paired'] else ', unpaired'})\n")
    text += "".join(f"- {line}\n" for line in nowait_failures_goal(by))
    return text


def nowait_failures_goal(by):
    """RESUME no slower than RESTART (bench/README.md, Goals), judged where NOWAIT failures make
    the two differ, by the Decision rules; where they did the same work (0 %), not testable."""
    lines = []
    for (fail, n, algo), c in sorted(by.items()):
        o = by.get((fail, n, "RESTART"))
        if algo != "RESUME" or not o:
            continue
        r = paired_ratio(c["runs"], o["runs"])
        if r is None:
            continue
        head = f"RESUME against RESTART at {fail} % NOWAIT failure, N = {n:,}, seconds"
        if _same_work({"runs": c["runs"]}, {"runs": o["runs"]}):
            lines.append(f"{head}: {fmt_ratio(r)}: not testable here (same loop when nothing "
                         f"fails: the same passes and visits)")
            continue
        v = judge(r, 1 + BAND)
        lines.append(f"{head} (goal: no slower; the median of the paired ratios RESUME / "
                     f"RESTART within 1 + the band): RESUME {fmt_num(c['seconds'] * 1e3)} ms, "
                     f"RESTART {fmt_num(o['seconds'] * 1e3)} ms (medians), {fmt_ratio(r)}, "
                     f"limit {1 + BAND:.3f}× (band {BAND * 100:g} %, fixed): {v}")
    return lines


def sweep_overhead_markdown(runs):
    """The hand-written loop, the macro-generated sweep and swf_sweep, per N and order."""
    by, groups = {}, {}
    for g, m in _groups(runs, _GENERIC_RE):
        key = (int(m.group(3)), int(m.group(2)))
        by.setdefault(key, {})[m.group(1)] = None if g["error"] else _counter_median(
            g, "ns_per_member")
        groups.setdefault(key, {})[m.group(1)] = None if g["error"] else g["runs"]
    rows, lines = [], []
    for (n, order), v in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        hand = v.get("hand")
        gv = groups[(n, order)]

        def cell(x):
            if x is None:
                return "-"
            return f"{fmt_num(x)} ({x / hand:.2f}×)" if hand else fmt_num(x)
        otext = "shuffled" if order else "in order"
        rows.append([f"{n:,}", otext, fmt_num(hand), cell(v.get("macro")),
                     cell(v.get("ops_table"))])
        x = paired_ratio(gv.get("macro"), gv.get("hand"), _counter("ns_per_member"))
        if hand and v.get("macro") and x:
            lines.append(f"macro against hand-written, N = {n:,}, {otext}: {fmt_ratio(x)} (goal ≤ "
                         f"1.05×): {judge(x, 1.05)}")
    text = md_table(["N", "order", "hand-written ns/member", "SWF_SWEEP_DEFINE ns/member",
                     "swf_sweep (ops table) ns/member"], rows, "llrrr")
    text += "\n" + "".join(f"- {line}\n" for line in lines)
    return text + sweep_overhead_lists_markdown(runs) + sweep_overhead_pairs_markdown(runs)


def sweep_overhead_lists_markdown(runs):
    """The other lists: each list's hand-written loop against SWF_SWEEP_DEFINE on its
    _AUTO adapter."""
    by, groups = {}, {}
    for g, m in _groups(runs, _GENERIC_LISTS_RE):
        key = (m.group(1), int(m.group(3)), int(m.group(4)))
        by.setdefault(key, {})[m.group(2)] = None if g["error"] else _counter_median(
            g, "ns_per_member")
        groups.setdefault(key, {})[m.group(2)] = None if g["error"] else g["runs"]
    if not by:
        return ""
    rows, lines = [], []
    for (kind, order, n), v in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        hand, macro = v.get("hand"), v.get("macro")
        gv = groups[(kind, order, n)]
        otext = "shuffled" if order else "in order"
        x = paired_ratio(gv.get("macro"), gv.get("hand"), _counter("ns_per_member")) \
            if hand and macro else None
        rows.append([_LIST_NAMES.get(kind, kind), f"{n:,}", otext, fmt_num(hand), fmt_num(macro),
                     fmt_ratio(x)])
        if x:
            lines.append(f"{_LIST_NAMES.get(kind, kind)}, N = {n:,}, {otext}: macro against "
                         f"hand-written {fmt_ratio(x)} (goal ≤ 1.05×): {judge(x, 1.05)}")
    text = "\n" + md_table(["list", "N", "order", "hand-written ns/member",
                            "SWF_SWEEP_DEFINE (_AUTO) ns/member", "macro / hand"], rows, "lllrrr")
    return text + "\n" + "".join(f"- {line}\n" for line in lines)


def sweep_overhead_pairs_markdown(runs):
    """Hand loop and generated sweep measured back to back in each iteration: the median ratio."""
    rows, lines = [], []
    for g, m in sorted(_groups(runs, _GENERIC_PAIR_RE),
                       key=lambda gm: (list(_LIST_NAMES).index(gm[1].group(1)),
                                       int(gm[1].group(2)), int(gm[1].group(3)))):
        kind, order, n = m.group(1), int(m.group(2)), int(m.group(3))
        otext = "shuffled" if order else "in order"
        if g["error"]:
            rows.append([_LIST_NAMES[kind], f"{n:,}", otext, "error: " + g["error"], "-", "-"])
            continue
        c = {k: _counter_median(g, k) for k in ("hand_ns_per_member", "macro_ns_per_member",
                                                 "ratio")}
        x = ratio_of_values(r.get("ratio") for r in g["runs"])
        rows.append([_LIST_NAMES[kind], f"{n:,}", otext, fmt_num(c["hand_ns_per_member"]),
                     fmt_num(c["macro_ns_per_member"]), fmt_ratio(x, 3)])
        if x:
            lines.append(f"{_LIST_NAMES[kind]}, N = {n:,}, {otext}, back to back: macro against "
                         f"hand-written {fmt_ratio(x, 3)} (goal ≤ 1.05×): {judge(x, 1.05)}")
    if not rows:
        return ""
    text = "\n" + md_table(["list", "N", "order", "hand-written ns/member",
                            "SWF_SWEEP_DEFINE ns/member", "median of macro / hand, paired"], rows,
                           "lllrrr")
    return text + "\n" + "".join(f"- {line}\n" for line in lines)


def section_bounds_markdown(runs):
    """Activation time and grace-period waits per section bound; the activation alone (no
    thread waiting for grace periods) beside it."""
    by = {}
    for g, m in _groups(runs, _SECTIONS_RE):
        by.setdefault((int(m.group(3)), int(m.group(2))), {})[m.group(1)] = g
    rows = []
    ms = (lambda v: "-" if v is None else fmt_num(v * 1e3))
    for (n, bound), v in sorted(by.items()):
        g, alone = v.get("activate"), v.get("alone")
        if g is None or g["error"]:
            err = g["error"] if g else "not run"
            rows.append([str(bound), f"{n:,}", "error: " + err] + ["-"] * 7)
            continue
        c = {k: _counter_median(g, k) for k in (
            "seconds", "ns_per_member", "preemptions", "sections", "longest_section",
            "max_gp_wait_s")}
        # The worst of the measurements' longest waits, beside their median.
        for k in ("max_gp_wait_s", "max_gp_wait_cpu_s"):
            vals = [float(r[k]) for r in g["runs"] if k in r]
            c["worst_" + k] = max(vals) if vals else None
        a = _counter_median(alone, "seconds") if alone and not alone["error"] else None
        rows.append([str(bound) if bound else "0 (unbounded)", f"{n:,}", ms(a),
                     ms(c["seconds"]), ms(c["max_gp_wait_s"]), ms(c["worst_max_gp_wait_s"]),
                     ms(c["worst_max_gp_wait_cpu_s"]), fmt_num(c["preemptions"], 2),
                     fmt_count(c["sections"]), fmt_count(c["longest_section"])])
    text = md_table(["section bound", "N", "activate ms, alone", "activate ms, with GP waiter",
                     "longest GP wait ms (median of runs)", "longest GP wait ms (worst run)",
                     "the same, waiter's CPU ms", "preemptions of the sweep",
                     "sections", "longest section (visits)"], rows, "llrrrrrrrr")
    return text + section_bounds_lock_markdown(runs)


def section_bounds_lock_markdown(runs):
    """A TAILQ swept under a lock while a writer takes the write side every 100 us: the writer's
    longest wait per lock kind and section bound."""
    rows = []
    ms = (lambda v: "-" if v is None else fmt_num(v * 1e3))
    for g, m in sorted(_groups(runs, _SECTIONS_LOCK_RE),
                       key=lambda gm: (list(_LOCK_NAMES).index(gm[1].group(1)),
                                       int(gm[1].group(3)), int(gm[1].group(2)))):
        kind, bound, n = m.group(1), int(m.group(2)), int(m.group(3))
        bname = str(bound) if bound else "0 (unbounded)"
        if g["error"]:
            rows.append([_LOCK_NAMES[kind], bname, f"{n:,}", "error: " + g["error"]] + ["-"] * 5)
            continue
        c = {k: _counter_median(g, k) for k in ("seconds", "max_lock_wait_s", "mean_lock_wait_s",
                                                 "writer_locks", "preemptions")}
        vals = [float(r["max_lock_wait_s"]) for r in g["runs"] if "max_lock_wait_s" in r]
        worst = max(vals) if vals else None
        rows.append([_LOCK_NAMES[kind], bname, f"{n:,}", ms(c["seconds"]),
                     ms(c["max_lock_wait_s"]), ms(worst), ms(c["mean_lock_wait_s"]),
                     fmt_num(c["writer_locks"], 1), fmt_num(c["preemptions"], 1)])
    if not rows:
        return ""
    return "\n" + md_table(["lock", "section bound", "N", "sweep ms",
                            "writer's longest wait ms (median of runs)",
                            "writer's longest wait ms (worst run)", "writer's mean wait ms",
                            "writer locks per sweep", "preemptions of the sweep"], rows,
                           "lllrrrrrr")


# ---- any family ---------------------------------------------------------------------------------

def generic_markdown(runs):
    """Every run: name, label, real and CPU time per iteration, iterations, counters."""
    rows = []
    for g in merge_runs(runs):
        if g["error"]:
            rows.append([g["name"], g["label"], "error: " + g["error"], "-", "-", "-", g["n"]])
            continue
        counters = sorted({k for r in g["runs"] for k in r if k not in STANDARD_KEYS})
        ctext = ", ".join(f"{k}={fmt_num(median_of(g, lambda r, k=k: float(r.get(k, 0))))}"
                          for k in counters)
        rows.append([g["name"], g["label"], fmt_num(median_of(g, ns_per_iteration)),
                     fmt_num(median_of(g, lambda r: ns_per_iteration(r, "cpu_time"))),
                     fmt_num(median_of(g, lambda r: float(r["iterations"]))), ctext, g["n"]])
    return md_table(["run", "label", "real ns/iter", "CPU ns/iter", "iterations", "counters",
                     "n"], rows, "llrrrlr")


# ---- two runs side by side ----------------------------------------------------------------------


# Two runs (JSON paths, or runs from load_runs) side by side as Markdown: report_limits.sidebyside.
sidebyside = report_limits.sidebyside


# ---- command line -------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description="Google Benchmark JSON to Markdown")
    sub = ap.add_subparsers(dest="family", required=True)
    a = sub.add_parser("alloc", help="the alloc family's table and summary")
    a.add_argument("files", nargs="+")
    a.add_argument("--md", help="write the Markdown here (default: stdout)")
    sd = sub.add_parser("seed", help="the seed table, floors, speedups and goals")
    sd.add_argument("files", nargs="+")
    sd.add_argument("--md", help="write the Markdown here (default: stdout)")
    for fam in ("nowait_failures", "sweep_overhead", "section_bounds"):
        f = sub.add_parser(fam, help=f"the {fam} family's table")
        f.add_argument("files", nargs="+")
        f.add_argument("--md", help="write the Markdown here (default: stdout)")
    t = sub.add_parser("table", help="every run of any family")
    t.add_argument("files", nargs="+")
    t.add_argument("--md", help="write the Markdown here (default: stdout)")
    report_limits.add_parsers(sub)
    args = ap.parse_args(argv)
    if args.family in report_limits.FAMILIES:
        return report_limits.main(args)

    runs = load_runs(args.files)
    if args.family == "seed":
        results = seed_results(runs)
        if not any(r["family"] == "seed" for r in results):
            print("report.py: no seed runs in " + " ".join(args.files), file=sys.stderr)
            return 1
        ctx = runs[0]["context"] if runs else {}
        write(args.md, seed_markdown(results, ctx.get("max_seconds")))
    elif args.family in ("nowait_failures", "sweep_overhead", "section_bounds"):
        fn = {"nowait_failures": nowait_failures_markdown, "sweep_overhead": sweep_overhead_markdown,
              "section_bounds": section_bounds_markdown}[args.family]
        write(args.md, fn(runs))
    elif args.family == "alloc":
        results = alloc_results(runs)
        if not results:
            print("report.py: no alloc runs in " + " ".join(args.files), file=sys.stderr)
            return 1
        write(args.md, alloc_markdown(results))
    else:
        write(args.md, generic_markdown(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
