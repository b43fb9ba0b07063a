# bench/run_limits.sh - bench/run's steps for how close sweepfill comes to the physical limits,
# sourced by it: the memory-preparation floors (from bench_seed's own JSON), and with --all the
# sections family beside CPU hogs, the threads family and the peer family. Uses bench/run's variables
# (bin, out, quick, q) and functions (step, result, say, report); defines two functions.
# shellcheck shell=bash disable=SC2154 # bin, out, quick and q are bench/run's

# After bench_seed: the memory-preparation floors (floor/ready_* rows of the same run).
limits_ready() {
  [ -f "$out/seed.json" ] || return 0
  step "memory-preparation floors written (report.py ready)" \
    report ready "$out/seed.json" --md "$out/ready.md" &&
    { echo; echo "## Memory preparation: ready time of N objects (floor/ready_*)"; echo;
      cat "$out/ready.md"; } | say
}

# With --all, after the other families.
limits_all() {
  # sections again, beside two spinning threads: the "before" of a sleeping grace-period wait
  if [ -x "$bin/bench_sections" ]; then
    step "sections family ran beside 2 CPU hogs (--hog=2)" "$bin/bench_sections" "${q[@]}" \
      --hog=2 --benchmark_out="$out/sections-hog.json" --benchmark_out_format=json &&
      step "sections-hog table written" report sections "$out/sections-hog.json" \
        --md "$out/sections-hog.md" &&
      { [ ! -f "$out/sections.json" ] ||
        step "sections quiet against beside hogs written (report.py sidebyside)" \
          report sidebyside "$out/sections.json" "$out/sections-hog.json" \
          --filter '^sections/activate/' --metrics time,max_gp_wait_s,preemptions \
          --labels quiet,hog --md "$out/sections-vs-hog.md"; } &&
      { echo; echo "## sections beside 2 CPU hogs"; echo; cat "$out/sections-hog.md";
        [ ! -f "$out/sections-vs-hog.md" ] || { echo; cat "$out/sections-vs-hog.md"; }; } | say
  fi
  local tq=(--benchmark_repetitions=3) family
  [ "$quick" = 1 ] && tq=(--quick)
  for family in threads peer; do
    if [ ! -x "$bin/bench_$family" ]; then
      if [ $family = peer ]; then
        echo "bench_peer not built (liburcu missing, or a sanitizer build): skipped" | say
      else
        result 1 "bench_$family present"
      fi
      continue
    fi
    step "$family family ran" "$bin/bench_$family" "${tq[@]}" \
      --benchmark_out="$out/$family.json" --benchmark_out_format=json &&
      step "$family table written" report "$family" "$out/$family.json" --md "$out/$family.md" &&
      { echo; echo "## $family"; echo; cat "$out/$family.md"; } | say
  done
}
