#!/usr/bin/env python3
"""bench/report_limits_test.py - the test of bench/report_limits.py (the tables of ready,
urcu_peer, many_threads, and sidebyside), on made-up Google Benchmark JSON. Speaks TAP."""

import json
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402
import report_limits  # noqa: E402

count = 0
failed = 0


def ok(cond, what):
    global count, failed
    count += 1
    if not cond:
        failed += 1
        print(f"not ok {count} - {what}")
    else:
        print(f"ok {count} - {what}")


def run(name, secs, label="", rep=None, **counters):
    r = {"name": name, "run_name": name, "run_type": "iteration", "threads": 1,
         "iterations": 1, "real_time": secs * 1e3, "cpu_time": secs * 1e3,
         "time_unit": "ms", "label": label}
    if rep is not None:
        r["repetition_index"] = rep
    r.update(counters)
    return r


def write(d, name, runs, context=None):
    path = os.path.join(d, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"context": context or {}, "benchmarks": runs}, f)
    return path


with tempfile.TemporaryDirectory() as d:
    # ---- ready ------------------------------------------------------------------------------
    rr = []
    for method, secs, huge in (("touch", 0.6, 0), ("populate", 0.5, 0),
                               ("thp_touch", 0.3, 1600000), ("popw", 0.45, 0),
                               ("memset", 0.1, 0), ("cache", 0.66, 0)):
        for rep, extra in ((0, 0.0), (1, 0.01), (2, -0.01)):
            rr.append(run(f"ready/{method}/size:4096/n:400000/manual_time", secs + extra,
                          rep=rep, seconds=secs + extra, prep_s=secs * 0.9, write_s=secs * 0.1,
                          cpu_s=secs, ns_per_object=secs / 400000 * 1e9, gib_per_s=2.0,
                          mapped_kb=1600000, anon_huge_kb=huge, faults=400000, unsupported=0))
    rr.append(run("ready/thp_popw/size:4096/n:400000/iterations:1/manual_time", 0,
                  label="unsupported: madvise(MADV_POPULATE_WRITE) returned EINVAL",
                  unsupported=1))
    rpath = write(d, "seed.json", rr)
    res = report_limits.ready_results(report.load_runs([rpath]))
    cache = next(r for r in res if r["method"] == "cache")
    ok(cache["count"] == 3 and abs(cache["seconds"] - 0.66) < 1e-12,
       "a ready row is the median of its repetitions")
    md = report_limits.ready_markdown(report.load_runs([rpath]))
    ok("| 400,000 | first touch: mmap, a write per 4 KiB page | 600 | 540 | 60.0 |" in md,
       "the first-touch row: ready, prepare and write-pass times in ms")
    ok("| 1.10× |" in md and "| 400,000 | swf_cache_grow(c, N) + N NOWAIT allocations | 660 |"
       in md and md.count("1×") >= 1, "the cache row and its ratio to first touch (1.10×)")
    ok("1,562 of 1,562" in md, "huge pages used are shown against the mapping (MiB)")
    ok("| THP + MADV_POPULATE_WRITE | unsupported |" in md,
       "an unsupported method says so instead of a time")
    ok("the cache's ready time 660 ms = 1.10× touch" in md and "6.60× memset" in md,
       "the summary line names the cache's ratio to every floor")

    # ---- urcu_peer --------------------------------------------------------------------------
    pr = []
    for var, secs, gp, fs in (("urcu_malloc", 2.0, 2.0, 1000000), ("swf_resume", 2.2, 0.1, 0),
                              ("swf_resume_b1024", 2.3, 0.001, 0), ("registry", 2.4, 0.002, -1)):
        for rep, g in ((0, gp), (1, gp * 2), (2, gp)):
            pr.append(run(f"urcu_peer/{var}/size:4096/n:1000000/iterations:1/manual_time", secs,
                          rep=rep, seconds=secs, grow_s=0, sweep_s=secs, max_gp_wait_s=g,
                          faults_total=1000100, faults_in_sections=fs, faults_grow=0,
                          sections=1, longest_section_s=-1 if fs < 0 else secs,
                          longest_section=1000000, preemptions=3, grace_periods=4, cpu_s=1.0,
                          syncer_cpu_s=0.5, syncer=1, longest_section_cpu_s=-1 if fs < 0 else 0.5,
                          steal_s=0.03))
    ppath = write(d, "urcu_peer.json", pr, {"peer_malloc": "tcmalloc"})
    pmd = report_limits.urcu_peer_markdown(report.load_runs([ppath]))
    ok("| 1,000,000 | 4 KiB | urcu list + malloc (tcmalloc), one read-side section | 2,000 | - | "
       "2,000 | 1.00× | 1,000 | 2,000 (4,000) | 500 | 1,000,000 |" in pmd,
       "the urcu_peer row: activation, ns/member, CPU, longest GP wait (median, worst), the "
       "waiter's CPU, faults")
    ok("| swf_registry_activate (bound 1024) | 2,400 | - | 2,400 | 1.20× | 1,000 | 2.00 (4.00) | "
       "500 | n/a |" in pmd, "the registry row: faults inside its sections are n/a")
    ok("| 2,300 (CPU 500) | 3.0 | 30.0 |" in pmd,
       "the longest section shows its CPU time, and the host's steal time follows")
    nos = [dict(r, syncer=0, max_gp_wait_s=0) for r in pr]
    nmd = report_limits.urcu_peer_markdown(report.load_runs([write(d, "urcu_peer0.json", nos)]))
    ok("| no waiter | - |" in nmd and "(no grace-period waiter)" in nmd,
       "a run without a synchronizer (--syncer=0) says so instead of a grace period")
    ok("peer / this = 2,000×" in pmd, "the summary compares grace periods with the peer's")

    # ---- many_threads -----------------------------------------------------------------------
    tr = []
    for bound, t, ns, cpu in ((1, 2, 3.0, 2.9), (1, 10000, 9.0, 3.5), (0, 2, 50.0, 45.0),
                              (0, 10000, 60.0, 47.0)):
        tr.append(run(f"many_threads/nowait_pair/bound:{bound}/t:{t}/iterations:1/manual_time",
                      ns * 1e-2, ns_per_pair=ns, cpu_ns_per_pair=cpu, start_spread_s=0.001,
                      preemptions=1, pairs_per_thread=10000000 // t, fails=0))
    tpath = write(d, "many_threads.json", tr)
    tmd = report_limits.many_threads_markdown(report.load_runs([tpath]))
    ok("| bound (own magazines) | 10,000 | 1,000 | 9.00 | 3.50 |" in tmd,
       "the many_threads table: a row per binding and thread count")
    ok("- bound, 10,000 threads / 2 threads: wall per pair 3.00×, CPU per pair 1.21×" in tmd
       and "- unbound, 10,000 threads / 2 threads: wall per pair 1.20×" in tmd,
       "the 10,000 / 2 ratios, bound and unbound")

    # ---- sidebyside -------------------------------------------------------------------------
    a = write(d, "a.json", [run("section_bounds/activate/bound:0/n:1000000/manual_time", 0.2,
                                label="one unbounded section", max_gp_wait_s=0.2,
                                preemptions=1),
                            run("section_bounds/alone/bound:0/n:1000000/manual_time", 0.15,
                                preemptions=0)])
    b = write(d, "b.json", [run("section_bounds/activate/bound:0/n:1000000/manual_time", 0.4,
                                label="one unbounded section, beside 2 hogs",
                                max_gp_wait_s=0.3, preemptions=50),
                            {"name": "section_bounds/alone/bound:0/n:1000000/manual_time",
                             "run_name": "section_bounds/alone/bound:0/n:1000000/manual_time",
                             "run_type": "iteration", "error_occurred": True,
                             "error_message": "broken on purpose", "label": ""}])
    sbs = report_limits.sidebyside(a, b, "activate", ["time", "max_gp_wait_s", "preemptions"],
                                   ("quiet", "hog"))
    ok("| section_bounds/activate/bound:0/n:1000000/manual_time | time | 200 ms | 400 ms | 2.00× |"
       in sbs, "runs are matched by name whatever their labels; time with its unit; ratio")
    ok("| max_gp_wait_s | 0.200 | 0.300 | 1.50× |" in sbs and "| preemptions | 1.00 | 50.0 | 50.0× |"
       in sbs, "the counters asked for, each with its ratio")
    ok("alone" not in sbs, "the filter selects runs")
    full = report.sidebyside(a + "," + a, b)
    ok("error: broken on purpose" in full and "| time | 150 ms |" in full,
       "report.sidebyside: comma-separated files, errors shown, every counter by default")
    shuffled = [dict(run("x/b", 0.2), family_index=1), dict(run("x/a", 0.1), family_index=0)]
    sb = report_limits.sidebyside(shuffled, shuffled, metrics=["time"])
    ok(sb.index("x/a") < sb.index("x/b"),
       "rows come in registration order (family_index), whatever order the runs ran in")
    out = os.path.join(d, "s.md")
    ok(report.main(["sidebyside", a, b, "--metrics", "time", "--labels", "x,y", "--md", out])
       == 0 and "| run | metric | x | y | y / x |" in open(out, encoding="utf-8").read(),
       "report.py sidebyside writes the table with the labels given")
    out = os.path.join(d, "p.md")
    ok(report.main(["urcu_peer", ppath, "--md", out]) == 0 and report.main(["many_threads", tpath, "--md", os.path.join(d, "t.md")]) == 0
       and report.main(["ready", rpath, "--md", os.path.join(d, "r.md")]) == 0,
       "report.py urcu_peer, many_threads and ready run from the command line")

print(f"1..{count}")
sys.exit(1 if failed else 0)
