#!/bin/sh
# tests/run.sh: runs every test group and ends with one closing line,
# "N passed, N failed, N skipped", added up over the groups. Used by
# `make test` (and so by CI); BUILD names the build folder.
BUILD=${BUILD:-build}
export BUILD
total_p=0 total_f=0 total_s=0 status=0
log=$(mktemp)

run_group() {
  "$@" >"$log" 2>&1 || status=1
  cat "$log"
  line=$(grep -E '^[a-z /-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "FAIL group '$*' printed no result line"; total_f=$((total_f + 1)); status=1; return
  fi
  p=$(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')
  f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
  s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
  total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + ${s:-0}))
}

run_group sh tests/check_layers.sh
run_group sh tests/check_seams.sh "${SEAMS_LIB:-$BUILD/libfleetpolicies.a}"
run_group "$BUILD/tests/unit_tests"
run_group sh tests/cli_test.sh
run_group sh tests/policy/run.sh
run_group sh tests/bench/suite_test.sh
run_group sh tests/bad/run.sh
run_group sh tests/oom/run.sh
run_group sh tests/traces/run.sh
run_group sh tests/report/run.sh
run_group sh tests/planner/run.sh
run_group sh tests/slurm/cli_test.sh
run_group sh tests/agent/run.sh
run_group sh tests/slurm/run.sh
run_group sh tests/paper/run.sh
run_group sh tests/agreement/run.sh
run_group sh tests/fit/run.sh
rm -f "$log"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$status" = 0 ] && [ "$total_f" = 0 ]
