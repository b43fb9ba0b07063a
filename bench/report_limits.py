"""bench/report_limits.py - the Markdown of the families that measure how close sweepfill comes to
the physical limits (ready, urcu_peer, many_threads), and of two runs side by side, for
bench/report.py, which imports it and offers each as a subcommand:

    bench/report.py ready SEED.json... [--md OUT.md]
        the memory-preparation floors (ready/* rows of bench_seed): per object size and N,
        the ready time of each way of preparing memory, its parts, whether huge pages were used,
        and the cache's ready time divided by each.
    bench/report.py urcu_peer URCU_PEER.json... [--md OUT.md]
        the urcu_peer family (bench_urcu_peer): a liburcu list filled with malloc in one read-side
        section against swf_sweep and the registry: activation time, longest grace period, page faults
        inside read-side sections.
    bench/report.py many_threads MANY_THREADS.json... [--md OUT.md]
        the many_threads family (bench_many_threads): NOWAIT pairs with 2 and 10,000 threads
        alive, bound and unbound, and the ratio of the two.
    bench/report.py sidebyside BEFORE.json[,MORE.json] AFTER.json[,MORE.json] [--filter RE]
                    [--metrics time,COUNTER,...] [--labels before,after] [--md OUT.md]
        two runs of any family side by side, with the ratio after/before: the "before/after
        from one run" tables.

Figures are medians over the measurements of a run (repetitions, or several files), as in
report.py. Standard library only.
"""

import re
import statistics

import reportlib

# ---- helpers ------------------------------------------------------------------------------------


def _median_counter(group, key):
    vals = [float(r[key]) for r in group["runs"] if key in r]
    return statistics.median(vals) if vals else None


def _max_counter(group, key):
    vals = [float(r[key]) for r in group["runs"] if key in r]
    return max(vals) if vals else None


def _ms(v):
    return "-" if v is None else reportlib.fmt_num(v * 1e3)


def _ratio_text(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{reportlib.fmt_num(a / b)}×"


def _groups(runs, regex):
    for g in reportlib.merge_runs(runs):
        m = regex.match(g["name"])
        if m:
            yield g, m


# ---- memory preparation (ready/*) --------------------------------------------------------

READY_METHODS = [
    ("touch", "first touch: mmap, a write per 4 KiB page"),
    ("populate", "MAP_POPULATE"),
    ("thp_touch", "THP + touch: 2 MiB-aligned, MADV_HUGEPAGE, a write per page"),
    ("thp_popw", "THP + MADV_POPULATE_WRITE"),
    ("popw", "MADV_POPULATE_WRITE"),
    ("memset", "memset of resident memory (bandwidth floor)"),
    ("cache", "swf_cache_grow(c, N) + N NOWAIT allocations"),
]
_READY_RE = re.compile(r"^ready/(\w+)/size:(\d+)/n:(\d+)(?:/.*)?$")
_READY_COUNTERS = ("seconds", "prep_s", "write_s", "cpu_s", "ns_per_object", "gib_per_s",
                   "mapped_kb", "anon_huge_kb", "faults", "unsupported")


def ready_results(runs):
    """The ready/* runs as dicts: method, size, n, the medians of _READY_COUNTERS, label,
    count (measurements), error, unsupported (bool)."""
    out = []
    for g, m in _groups(runs, _READY_RE):
        r = {"method": m.group(1), "size": int(m.group(2)), "n": int(m.group(3)),
             "label": g["label"], "count": g["n"], "error": g["error"]}
        for k in _READY_COUNTERS:
            r[k] = _median_counter(g, k)
        r["unsupported"] = bool(r["unsupported"]) or g["label"].startswith("unsupported")
        out.append(r)
    return out


def _ready_find(results, method, size, n):
    for r in results:
        if (r["method"], r["size"], r["n"]) == (method, size, n):
            return r
    return None


def _huge_text(r):
    if r["anon_huge_kb"] is None or r["mapped_kb"] is None:
        return "-"
    return f"{reportlib.fmt_num(r['anon_huge_kb'] / 1024)} of {reportlib.fmt_num(r['mapped_kb'] / 1024)}"


def host_state(run):
    """The host memory state a run's file records (its context's host_memory), or "unstated"."""
    return (run.get("context") or {}).get("host_memory") or "unstated"


def by_state(runs):
    """[(state, runs)], warm first, then cold: runs of different host states are never pooled."""
    order = {"warm": 0, "cold": 1, "as-found": 2}
    states = sorted({host_state(r) for r in runs}, key=lambda s: order.get(s, 3))
    return [(s, [r for r in runs if host_state(r) == s]) for s in states]


def ready_markdown(runs):
    """Per object size and host memory state (the states of a size side by side): a row per
    (N, method) with the ready time, its parts, huge pages used, and the cache row divided by
    each method; then one line per (size, N) naming the ratios."""
    results = []
    for state, sruns in by_state(runs):
        for r in ready_results(sruns):
            r["state"] = state
            results.append(r)
    if not results:
        return "No ready/* runs.\n"
    states = list(dict.fromkeys(r["state"] for r in results))
    names = dict(READY_METHODS)
    order = {m: i for i, (m, _) in enumerate(READY_METHODS)}
    text = ""
    lines = []
    every = results
    for size, state in [(z, st) for z in sorted({r["size"] for r in every}, reverse=True)
                        for st in states]:
        results = [r for r in every if r["state"] == state]
        rows = []
        for n in sorted({r["n"] for r in results if r["size"] == size}):
            cache = _ready_find(results, "cache", size, n)
            here = sorted((r for r in results if (r["size"], r["n"]) == (size, n)),
                          key=lambda r: order.get(r["method"], 99))
            for r in here:
                name = names.get(r["method"], r["method"])
                if r["error"]:
                    rows.append([f"{n:,}", name, "error: " + r["error"]] + ["-"] * 8)
                    continue
                if r["unsupported"]:
                    rows.append([f"{n:,}", name, "unsupported"] + ["-"] * 8)
                    continue
                rows.append([f"{n:,}", name, _ms(r["seconds"]), _ms(r["prep_s"]),
                             _ms(r["write_s"]), _ms(r["cpu_s"]),
                             reportlib.fmt_num(r["ns_per_object"]), reportlib.fmt_num(r["gib_per_s"]),
                             _huge_text(r), reportlib.fmt_count(r["faults"]),
                             "1×" if r["method"] == "cache" else
                             _ratio_text(cache and cache["seconds"], r["seconds"])])
            if cache and cache["seconds"] and not cache["error"]:
                parts = []
                for method, _ in READY_METHODS[:-1]:
                    f = _ready_find(results, method, size, n)
                    if f and f["seconds"] and not f["error"] and not f["unsupported"]:
                        parts.append(f"{reportlib.fmt_num(cache['seconds'] / f['seconds'])}× "
                                     f"{method}")
                lines.append(f"host memory {state}, {n:,} × {reportlib.size_text(size)}: the "
                             f"cache's ready time "
                             f"{_ms(cache['seconds'])} ms = " + ", ".join(parts))
        if not rows:
            continue
        text += f"### {reportlib.size_text(size)} objects, host memory: {state}\n\n"
        text += reportlib.md_table(
            ["N", "method", "ready ms", "prepare ms", "write pass ms", "CPU ms", "ns/object",
             "GiB/s", "huge pages MiB (of mapped)", "page faults", "cache ÷ this"],
            rows, "llrrrrrrrrr") + "\n"
    text += ("ready: mapping + preparation + one 8-byte write to every object (the first use); "
             "prepare: everything before the write pass (for the cache: swf_cache_grow); write "
             "pass: the writes (for the cache: N NOWAIT allocations, each with its write); CPU: "
             "the process's CPU time over the same span (far below `ready` means the thread "
             "waited for a core); huge pages: AnonHugePages of the mapping after the write pass "
             "(/proc/self/smaps); cache ÷ this: the cache row's ready time divided by this "
             "row's, measured in the same run.\n\n")
    text += "".join(f"- {line}\n" for line in lines)
    return text


# ---- the urcu_peer family -------------------------------------------------------------------------

PEER_VARIANTS = [
    ("urcu_malloc", "urcu list + malloc, one read-side section"),
    ("swf_resume", "swf_sweep RESUME, one section (grow first)"),
    ("swf_resume_b1024", "swf_sweep RESUME, bound 1024 (grow first)"),
    ("registry", "swf_registry_activate (bound 1024)"),
]
_PEER_RE = re.compile(r"^urcu_peer/(\w+)/size:(\d+)/n:(\d+)(?:/.*)?$")
_PEER_COUNTERS = ("seconds", "grow_s", "sweep_s", "max_gp_wait_s", "faults_total",
                  "faults_in_sections", "faults_grow", "sections", "longest_section_s",
                  "longest_section", "preemptions", "grace_periods", "cpu_s", "syncer_cpu_s",
                  "syncer", "longest_section_cpu_s", "steal_s")


def urcu_peer_results(runs):
    """The urcu_peer runs as dicts: variant, size, n, medians of _PEER_COUNTERS, worst_gp (the
    largest max_gp_wait_s of the measurements), malloc (the context's peer_malloc), count,
    error."""
    out = []
    for g, m in _groups(runs, _PEER_RE):
        r = {"variant": m.group(1), "size": int(m.group(2)), "n": int(m.group(3)),
             "count": g["n"], "error": g["error"]}
        for k in _PEER_COUNTERS:
            r[k] = _median_counter(g, k)
        r["worst_gp"] = _max_counter(g, "max_gp_wait_s")
        r["no_syncer"] = r["syncer"] == 0  # absent (older runs): a synchronizer ran
        ctx = g["runs"][0]["context"] if g["runs"] else {}
        r["malloc"] = ctx.get("peer_malloc", "malloc")
        out.append(r)
    return out


def _section_text(r):
    """The longest section in ms, with its CPU time where the run measured it (older runs did
    not): a section whose CPU time is its wall time with no preemption lost it to neither the
    scheduler nor a page fault."""
    wall, cpu = r["longest_section_s"], r["longest_section_cpu_s"]
    if wall is None or wall < 0:
        return "n/a"
    return _ms(wall) if cpu is None or cpu < 0 else f"{_ms(wall)} (CPU {_ms(cpu)})"


def _count_or_na(v):
    if v is None or v < 0:
        return "n/a"
    return reportlib.fmt_count(round(v))


def urcu_peer_markdown(runs):
    """One table: a row per (N, object size, variant); then a summary line per (N, size)."""
    results = urcu_peer_results(runs)
    if not results:
        return "No urcu_peer runs.\n"
    names = dict(PEER_VARIANTS)
    order = {v: i for i, (v, _) in enumerate(PEER_VARIANTS)}
    malloc = next((r["malloc"] for r in results if r["variant"] == "urcu_malloc"), "malloc")
    rows, lines = [], []
    keys = sorted({(r["size"], r["n"]) for r in results})
    for size, n in keys:
        here = sorted((r for r in results if (r["size"], r["n"]) == (size, n)),
                      key=lambda r: order.get(r["variant"], 99))
        base = next((r for r in here if r["variant"] == "urcu_malloc" and not r["error"]), None)
        for r in here:
            name = names.get(r["variant"], r["variant"])
            if r["variant"] == "urcu_malloc":
                name = name.replace("malloc", f"malloc ({malloc})")
            if r["error"]:
                rows.append([f"{n:,}", reportlib.size_text(size), name, "error: " + r["error"]] +
                            ["-"] * 12)
                continue
            rows.append([f"{n:,}", reportlib.size_text(size), name, _ms(r["seconds"]),
                         "-" if r["variant"] in ("urcu_malloc", "registry") else _ms(r["grow_s"]),
                         reportlib.fmt_num(r["seconds"] / n * 1e9) if r["seconds"] else "-",
                         _ratio_text(r["seconds"], base and base["seconds"]), _ms(r["cpu_s"]),
                         "no waiter" if r["no_syncer"] else
                         f"{_ms(r['max_gp_wait_s'])} ({_ms(r['worst_gp'])})",
                         "-" if r["no_syncer"] else _ms(r["syncer_cpu_s"]),
                         _count_or_na(r["faults_in_sections"]), _count_or_na(r["faults_total"]),
                         reportlib.fmt_count(r["sections"]), _section_text(r),
                         reportlib.fmt_num(r["preemptions"], 2),
                         "n/a" if r["steal_s"] is None or r["steal_s"] < 0 else _ms(r["steal_s"])])
        if base is None:
            continue
        for r in here:
            if r["variant"] == "urcu_malloc" or r["error"] or not r["seconds"]:
                continue
            if r["no_syncer"] or base["no_syncer"]:
                lines.append(f"{n:,} × {reportlib.size_text(size)}, {names.get(r['variant'])}: "
                             f"activation {_ratio_text(r['seconds'], base['seconds'])} the urcu "
                             f"peer's (no grace-period waiter); page faults inside sections "
                             f"{_count_or_na(r['faults_in_sections'])} (the peer's "
                             f"{_count_or_na(base['faults_in_sections'])})")
                continue
            lines.append(f"{n:,} × {reportlib.size_text(size)}, {names.get(r['variant'])}: "
                         f"activation {_ratio_text(r['seconds'], base['seconds'])} the urcu "
                         f"peer's; longest grace period {_ms(r['max_gp_wait_s'])} ms (the peer's "
                         f"{_ms(base['max_gp_wait_s'])} ms: peer / this = "
                         f"{_ratio_text(base['max_gp_wait_s'], r['max_gp_wait_s'])}); page "
                         f"faults inside sections {_count_or_na(r['faults_in_sections'])} (the "
                         f"peer's {_count_or_na(base['faults_in_sections'])})")
    text = reportlib.md_table(
        ["N", "object", "variant", "activation ms", "of which grow ms", "ns/member", "× urcu",
         "CPU ms", "longest GP wait ms (worst)", "waiter CPU ms", "faults in sections",
         "faults, whole activation", "sections", "longest section ms", "preemptions",
         "host steal ms"], rows, "lllrrrrrrrrrrrrr")
    text += ("\nactivation: from the start of the work to its end, memory preparation included "
             "(swf_sweep: swf_cache_grow(N + 32) then the sweep; the registry's activate grows "
             "first too); each measurement is a first activation in a freshly forked process. "
             "longest GP wait: the longest single grace-period wait of a thread looping "
             "synchronize_rcu() / ck_epoch_synchronize() / swf_registry_synchronize() (100 µs "
             "apart) during the activation: median of the measurements, worst in brackets; waiter CPU: "
             "that thread's CPU time meanwhile (a wait that spins or yields takes a core from "
             "the activation); CPU: the activating thread's CPU time. "
             "faults in sections: minor page faults of the activating thread inside read-side "
             "sections (n/a: the registry's sections are internal to it); whole activation: all "
             "of its faults, the grow's included. preemptions: its involuntary context "
             "switches. of which grow: swf_cache_grow's part of the activation (the registry's is "
             "inside its activate). longest section: its wall time, with the thread's CPU time "
             "in it in brackets (the CPU clock leaves out time the host takes the virtual CPU "
             "away, but counts a memory access that waits on the host: bench/RESULTS.md, "
             "\"Sections the host stalls\"). host steal: the steal time /proc/stat counted over "
             "the activation, every virtual CPU added up, in clock ticks.\n\n")
    text += "".join(f"- {line}\n" for line in lines)
    return text


# ---- the many_threads family ----------------------------------------------------------------------

_THREADS_RE = re.compile(r"^many_threads/nowait_pair/bound:(\d)/t:(\d+)(?:/.*)?$")


def many_threads_markdown(runs):
    """A row per (binding, thread count); then, per binding, the most threads against the
    fewest: wall and CPU time per pair."""
    by = {}
    rows = []
    for g, m in _groups(runs, _THREADS_RE):
        bound, t = int(m.group(1)), int(m.group(2))
        c = {k: _median_counter(g, k) for k in ("ns_per_pair", "cpu_ns_per_pair",
                                                 "start_spread_s", "preemptions",
                                                 "pairs_per_thread", "fails")}
        c["error"], c["n"] = g["error"], g["n"]
        by[(bound, t)] = c
    for (bound, t), c in sorted(by.items(), key=lambda kv: (-kv[0][0], kv[0][1])):
        what = "bound (own magazines)" if bound else "unbound (shared depot)"
        if c["error"]:
            rows.append([what, f"{t:,}", "error: " + c["error"]] + ["-"] * 6)
            continue
        rows.append([what, f"{t:,}", reportlib.fmt_count(c["pairs_per_thread"]),
                     reportlib.fmt_num(c["ns_per_pair"]), reportlib.fmt_num(c["cpu_ns_per_pair"]),
                     _ms(c["start_spread_s"]), reportlib.fmt_num(c["preemptions"], 2),
                     reportlib.fmt_count(c["fails"]), c["n"]])
    text = reportlib.md_table(["threads", "alive", "pairs per thread", "wall ns per pair",
                            "CPU ns per pair", "start spread ms", "preemptions", "failures",
                            "n"], rows, "llrrrrrrr")
    text += ("\nwall ns per pair: from the release of all threads to the end of the last one's "
             "loop, divided by all pairs of all threads; CPU ns per pair: the threads' CPU time "
             "over their loops, added up, divided by the same. start spread: from the release "
             "until the last thread began. n: measurements (medians).\n\n")
    for bound in (1, 0):
        ts = sorted(t for b, t in by if b == bound and not by[(b, t)]["error"])
        if len(ts) < 2:
            continue
        lo, hi = by[(bound, ts[0])], by[(bound, ts[-1])]
        what = "bound" if bound else "unbound"
        text += (f"- {what}, {ts[-1]:,} threads / {ts[0]:,} threads: wall per pair "
                 f"{_ratio_text(hi['ns_per_pair'], lo['ns_per_pair'])}, CPU per pair "
                 f"{_ratio_text(hi['cpu_ns_per_pair'], lo['cpu_ns_per_pair'])}\n")
    return text


# ---- two runs side by side ------------------------------------------------------------------------


def _load(spec):
    """A list of runs from: runs already loaded, a path, or paths (a list, or one string of
    comma-separated paths)."""
    if isinstance(spec, str):
        spec = [p for p in spec.split(",") if p]
    if spec and isinstance(spec[0], dict):
        return spec
    return reportlib.load_runs(spec)


def _by_name(runs, pattern):
    out = {}
    rx = re.compile(pattern) if pattern else None
    for run in runs:
        name = reportlib.run_name(run)
        if rx and not rx.search(name):
            continue
        g = out.setdefault(name, {"runs": [], "error": None})
        if run.get("error_occurred"):
            g["error"] = g["error"] or run.get("error_message", "error")
        else:
            g["runs"].append(run)
    return out


_SKIP = reportlib.STANDARD_KEYS | {"items_per_second", "bytes_per_second"}


def _metric(group, metric):
    if metric == "time":
        return reportlib.median_of(group, reportlib.ns_per_iteration) if group["runs"] else None
    if metric == "cpu_time":
        return reportlib.median_of(group, lambda r: reportlib.ns_per_iteration(r, "cpu_time")) \
            if group["runs"] else None
    return _median_counter(group, metric)


def _fmt_metric(metric, v):
    if v is None:
        return "-"
    if metric in ("time", "cpu_time"):
        for div, unit in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
            if v >= div:
                return f"{reportlib.fmt_num(v / div)} {unit}"
        return f"{reportlib.fmt_num(v)} ns"
    return reportlib.fmt_num(v)


def sidebyside(before, after, pattern=None, metrics=None, labels=("before", "after")):
    """Two runs of a family side by side, as Markdown. before, after: paths (a list, or a string
    of comma-separated paths) of Google Benchmark JSON, or runs from reportlib.load_runs. Runs are
    matched by run name (labels may differ); pattern (a regex searched in the name) selects
    runs. metrics: "time" (real time per iteration), "cpu_time", or counter names; by default
    the time and every counter either side has for that run. A row per (run, metric): the
    median on each side (over repetitions and files) and after / before; a metric neither side
    has for a run is left out."""
    a, b = _by_name(_load(before), pattern), _by_name(_load(after), pattern)
    names = list(a) + [n for n in b if n not in a]
    # Registration order (Google Benchmark's family_index, per_family_instance_index), which
    # --benchmark_enable_random_interleaving does not change; first seen where absent.
    seen = {n: i for i, n in enumerate(names)}

    def order(name):
        for g in (a.get(name), b.get(name)):
            for r in (g["runs"] if g else []):
                if "family_index" in r:
                    return (r["family_index"], r.get("per_family_instance_index", 0))
        return (float("inf"), seen[name])
    names.sort(key=order)
    rows = []
    for name in names:
        ga, gb = a.get(name), b.get(name)
        if metrics:
            wanted = list(metrics)
        else:
            keys = []
            for g in (ga, gb):
                for r in (g["runs"] if g else []):
                    keys.extend(k for k, v in r.items() if k not in _SKIP and
                                isinstance(v, (int, float)) and k not in keys)
            wanted = ["time"] + keys
        for metric in wanted:
            cells = []
            vals = []
            for g in (ga, gb):
                if g is None:
                    cells.append("not run")
                    vals.append(None)
                elif g["error"] and not g["runs"]:
                    cells.append("error: " + g["error"])
                    vals.append(None)
                else:
                    v = _metric(g, metric)
                    cells.append(_fmt_metric(metric, v))
                    vals.append(v)
            if vals == [None, None] and cells == ["-", "-"]:
                continue  # neither side has this metric for this run
            rows.append([name, metric] + cells + [_ratio_text(vals[1], vals[0])])
    return reportlib.md_table(["run", "metric", labels[0], labels[1],
                            f"{labels[1]} / {labels[0]}"], rows, "llrrr")


# ---- command line (called from report.py) -----------------------------------------------------------

FAMILIES = ("ready", "urcu_peer", "many_threads", "sidebyside")


def add_parsers(sub):
    """Add this module's subcommands to report.py's argparse subparsers."""
    for fam, what in (("ready", "the memory-preparation floors (bench_seed's ready/*)"),
                      ("urcu_peer", "the urcu_peer family: urcu + malloc against sweepfill"),
                      ("many_threads", "the many_threads family: 2 against 10,000 threads")):
        f = sub.add_parser(fam, help=what)
        f.add_argument("files", nargs="+")
        f.add_argument("--md", help="write the Markdown here (default: stdout)")
    s = sub.add_parser("sidebyside", help="two runs side by side, with ratios")
    s.add_argument("before", help="JSON file(s), comma-separated")
    s.add_argument("after", help="JSON file(s), comma-separated")
    s.add_argument("--filter", help="only runs whose name matches this regex")
    s.add_argument("--metrics", help="comma-separated: time, cpu_time, counter names "
                   "(default: time and every counter)")
    s.add_argument("--labels", default="before,after", help="the two columns' names")
    s.add_argument("--md", help="write the Markdown here (default: stdout)")


def main(args):
    """Run the subcommand args.family; returns the exit status."""
    if args.family == "sidebyside":
        labels = tuple(args.labels.split(",", 1)) if "," in args.labels else ("before", "after")
        metrics = [m for m in args.metrics.split(",") if m] if args.metrics else None
        text = sidebyside(args.before, args.after, args.filter, metrics, labels)
    else:
        runs = reportlib.load_runs(args.files)
        text = {"ready": ready_markdown, "urcu_peer": urcu_peer_markdown,
                "many_threads": many_threads_markdown}[args.family](runs)
    reportlib.write(args.md, text)
    return 0
