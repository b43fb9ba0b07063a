# bench/lib/limits.sh - bench/run's steps for how close sweepfill comes to the physical limits,
# sourced by it: the memory-preparation floors (the ready family, from bench_seed's JSON), and the
# section_bounds family beside CPU hogs, the many_threads family and the urcu_peer family. bench/run
# --all runs them after the other families, bench/run --limits alone. Uses bench/run's variables
# (bin, out, quick, q, pinned: bench/README.md, "One protocol") and functions (step, result, say,
# report, family_run, annotate); defines three functions. Nothing here is pinned but the ready
# family (bench_seed's, pinned like it): the section_bounds waiter and hogs, many_threads' threads
# and urcu_peer's synchronizer run beside the measured thread.
# shellcheck shell=bash disable=SC2154 # bin, out, quick, q and pinned are bench/run's

# ready_table JSON: the memory-preparation floors (the ready/* rows of bench_seed's JSON).
ready_table() {
  [ -f "$1" ] || return 0
  step "memory-preparation floors written (report.py ready)" \
    report ready "$@" --md "$out/ready.md" &&
    { echo; echo "## Memory preparation: ready time of N objects (ready/*)"; echo;
      cat "$out/ready.md"; } | say
}

# After bench_seed: the ready rows of the same run.
limits_ready() {
  ready_table "$out/seed.json" ${seed_jsons[@]+"${seed_jsons[@]:1}"}
}

# With --all, after the other families (section_bounds among them, quiet).
limits_all() {
  local sb=section_bounds
  # section_bounds again, beside two spinning threads: the "before" of a sleeping grace-period wait
  if [ -x "$bin/bench_$sb" ]; then
    step "$sb family ran beside 2 CPU hogs (--hog=2)" "$bin/bench_$sb" "${q[@]}" \
      --hog=2 --benchmark_out="$out/$sb-hog.json" --benchmark_out_format=json &&
      annotate "$out/$sb-hog.json" no &&
      step "$sb-hog table written" report $sb "$out/$sb-hog.json" --md "$out/$sb-hog.md" &&
      { [ ! -f "$out/$sb.json" ] ||
        step "$sb quiet against beside hogs written (report.py sidebyside)" \
          report sidebyside "$out/$sb.json" "$out/$sb-hog.json" \
          --filter "^$sb/activate/" --metrics time,max_gp_wait_s,preemptions \
          --labels quiet,hog --md "$out/$sb-vs-hog.md"; } &&
      { echo; echo "## $sb beside 2 CPU hogs"; echo; cat "$out/$sb-hog.md";
        [ ! -f "$out/$sb-vs-hog.md" ] || { echo; cat "$out/$sb-vs-hog.md"; }; } | say
  fi
  family_run many_threads
  if [ -x "$bin/bench_urcu_peer" ]; then
    family_run urcu_peer
  else
    echo "bench_urcu_peer not built (liburcu missing, or a sanitizer build): skipped" | say
  fi
}

# bench/run --limits: the ready family alone (bench_seed filtered to its rows, into ready.json),
# section_bounds quiet, then what limits_all runs.
limits_alone() {
  step "ready family ran (bench_seed --benchmark_filter='^ready/')" \
    ${pinned[@]+"${pinned[@]}"} "$bin/bench_seed" "${q[@]}" --benchmark_filter='^ready/' \
    --benchmark_out="$out/ready.json" --benchmark_out_format=json &&
    annotate "$out/ready.json" yes && ready_table "$out/ready.json"
  family_run section_bounds
  limits_all
}
