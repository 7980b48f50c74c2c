#!/bin/sh
# tests/slurm/cli_test.sh (group "slurm-cli"): forecast, compare, plan and
# bench with --slurm on the 4-node test cluster (tests/slurm/cluster.sh),
# checked byte for byte against the same command run locally with -j 2,
# plus what goes wrong: no sbatch, a work folder the nodes do not see, a
# partition that does not exist, a task whose replication fails, a task
# Slurm cancels. Skips (with the reason) only where Slurm cannot be
# installed. The cluster is stopped by pid on every exit path.
. tests/lib.sh
CLUSTER=$TMP/cluster
stop_cluster() { sh tests/slurm/cluster.sh stop "$CLUSTER" >/dev/null 2>&1; }
trap 'stop_cluster; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

# --- what needs no cluster --------------------------------------------------
env PATH=/nonexistent "$FLEETSIM" forecast --slurm tests/planner/known.yaml >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ $rc = 3 ] && grep -q "needs Slurm's 'sbatch', which is not on PATH" "$TMP/err" && [ ! -s "$TMP/out" ]; then pass
else fail "no sbatch: exit $rc, want 3 and a message naming sbatch"; cat "$TMP/err"; fi
expect_exit 2 "--partition without --slurm" "$FLEETSIM" forecast --partition gpu tests/planner/known.yaml
expect_exit 2 "bench --partition without --slurm" "$FLEETSIM" bench --partition gpu tests/bench/ci.yaml
for cmd in forecast plan compare bench; do
  "$FLEETSIM" $cmd --help | grep -q -- '--slurm' && "$FLEETSIM" $cmd --help | grep -q -- '--partition' && pass ||
    fail "$cmd --help names --slurm and --partition"
done

sh tests/slurm/cluster.sh start "$CLUSTER" >"$TMP/start.out" 2>&1; rc=$?
if [ $rc = 77 ]; then
  skip "$(grep 'slurm: SKIP' "$TMP/start.out")"
  finish slurm-cli; exit $?
elif [ $rc != 0 ]; then
  fail "test cluster did not start"; sed 's/^/  | /' "$TMP/start.out"
  finish slurm-cli; exit $?
fi
. "$CLUSTER/env"
WORK=$TMP/work # where --slurm makes its work folders (FLEETSIM_SLURM_DIR)
mkdir -p "$WORK"
export FLEETSIM_SLURM_DIR="$WORK"

# same NAME ARGS...: `fleetsim ARGS --slurm` (with --partition $PART when
# set) and `fleetsim ARGS -j 2` print the same bytes on stdout and exit the
# same way
PART=
same() {
  name=$1; shift
  "$FLEETSIM" "$@" -j 2 >"$TMP/local.out" 2>"$TMP/local.err"; lrc=$?
  "$FLEETSIM" "$@" --slurm ${PART:+--partition "$PART"} >"$TMP/slurm.out" 2>"$TMP/slurm.err"; src=$?
  if [ $lrc = $src ] && [ -s "$TMP/local.out" ] && cmp -s "$TMP/local.out" "$TMP/slurm.out"; then pass
  else
    fail "$name: --slurm (exit $src) differs from -j 2 (exit $lrc)"
    diff "$TMP/local.out" "$TMP/slurm.out" | head -10; sed 's/^/  | /' "$TMP/slurm.err" | head -10
  fi
}

# --- byte-identical results -------------------------------------------------
same "forecast quarterly --json" forecast scenarios/examples/quarterly.yaml --json
if grep -q "^forecast: 8 replications submitted as Slurm job array [0-9]* and merge job [0-9]*" "$TMP/slurm.err"; then pass
else fail "forecast --slurm says what it submitted"; cat "$TMP/slurm.err"; fi
# the merge job ran after the array (afterok) and did the merging
merge_state=$(squeue -h -t all -n fleetsim-forecast-merge -o %T | sort -u)
tasks=$(squeue -h -t all -n fleetsim-forecast -o '%i %T' | grep -c '_[0-7] COMPLETED$')
if [ "$merge_state" = COMPLETED ] && [ "$tasks" = 8 ]; then pass
else fail "8 array tasks and the merge job completed (merge: '$merge_state', tasks: $tasks)"; fi
same "forecast text table" forecast tests/planner/teams.yaml -r 3

cp tests/planner/teams.yaml "$TMP/sweep.yaml"
printf 'sweep:\n  growth: [0.1, 0.5]\n  policy: [fcfs+easy, sjf+easy]\n' >>"$TMP/sweep.yaml"
PART=gpu
same "compare of a sweep (growth x policy) --json" compare -r 3 "$TMP/sweep.yaml" --json
PART=
if [ "$(grep -c '"variant"' "$TMP/slurm.out")" = 4 ] && [ "$(grep -c 'submitted as Slurm job array' "$TMP/slurm.err")" = 4 ]
then pass; else fail "compare: 4 variants, one job array each"; fi

# plan: every forecast of the search is an array; candidate orders travel in the task description
same "plan --json (orders found, confirmed)" plan tests/planner/known.yaml --json
grep -q '"count": 2' "$TMP/slurm.out" && pass || fail "plan --slurm finds the known order of 2 nodes"
same "plan text" plan -q tests/planner/known.yaml

cat >"$TMP/suite.yaml" <<'EOF'
policies:
  - fcfs+easy
  - sjf+easy
  - name: fair
    ordering: {name: fairshare, half_life_s: 3600}
    backfill: easy
workloads:
  - name: demo
    trace: traces/examples/demo-gpu-cluster.swf
    jobs: 300
  - name: teams
    scenario: tests/planner/teams.yaml
    jobs: 300
  - name: absent
    trace: /nonexistent/trace.swf
EOF
same "bench --json (a scenario workload and a skipped one)" bench -q "$TMP/suite.yaml" --json
same "bench markdown" bench -q "$TMP/suite.yaml"

left=$(ls "$WORK")
[ -z "$left" ] && pass || fail "work folders removed after success: $left"

# --- what goes wrong ----------------------------------------------------------
"$FLEETSIM" forecast --slurm --partition nope tests/planner/known.yaml >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ $rc = 3 ] && grep -q "sbatch refused the probe job for partition 'nope': .*invalid partition" "$TMP/err"; then pass
else fail "unknown partition: exit $rc"; cat "$TMP/err"; fi

# A work folder only this machine sees: a private tmpfs over it in a mount
# namespace of our own; slurmd (outside it) sees the empty folder below.
mkdir -p "$TMP/private"
if unshare -m sh -c "mount -t tmpfs none '$TMP/private'" 2>/dev/null; then
  before=$(squeue -h -t all -o %i | wc -l)
  unshare -m sh -c "mount -t tmpfs none '$TMP/private' && FLEETSIM_SLURM_DIR='$TMP/private' \
    '$FLEETSIM' forecast --slurm tests/planner/known.yaml" >"$TMP/out" 2>"$TMP/err"; rc=$?
  if [ $rc = 3 ] && grep -q "the work folder '$TMP/private/fleetsim-slurm\..*' is not visible from the compute nodes" "$TMP/err" &&
     [ "$(squeue -h -t all -o %i | wc -l)" = $((before + 1)) ]; then pass
  else fail "unshared work folder: exit $rc, want 3, said before any array was submitted"; cat "$TMP/err"; fi
  # the same for a fleetsim binary that only this machine has
  unshare -m sh -c "mount -t tmpfs none '$TMP/private' && cp '$FLEETSIM' '$TMP/private/fleetsim' && \
    '$TMP/private/fleetsim' forecast --slurm tests/planner/known.yaml" >"$TMP/out" 2>"$TMP/err"; rc=$?
  if [ $rc = 3 ] && grep -q "'$TMP/private/fleetsim' does not run on the compute nodes" "$TMP/err"; then pass
  else fail "a binary the nodes do not have: exit $rc, want 3"; cat "$TMP/err"; fi
else
  skip "unshared work folder and binary: no mount namespace here (unshare -m)"
fi

# A replication that fails in a task: the same message as a local run, exit 4.
# Every replication fails alike, and the first failure Slurm reports
# cancels the tasks still running (slurm_array_wait), so which
# replication's message comes back depends on the order the tasks end.
mkdir -p "$TMP/bad"
cp tests/planner/known.yaml "$TMP/bad/"
echo "garbage line" >"$TMP/bad/known-base.jsonl"
"$FLEETSIM" forecast -q -j 2 "$TMP/bad/known.yaml" 2>"$TMP/local.err"; lrc=$?
"$FLEETSIM" forecast -q --slurm "$TMP/bad/known.yaml" 2>"$TMP/slurm.err"; src=$?
if [ $lrc = 4 ] && [ $src = 4 ] && grep -q "^fleetsim: error: replication [0-9]*: $TMP/bad/known-base.jsonl:1:7: invalid json" "$TMP/slurm.err" &&
   grep -q "the Slurm work folder is kept for a look: $WORK/fleetsim-slurm\." "$TMP/slurm.err"; then pass
else fail "a failed replication: exit $src (local $lrc), want 4 and the local message"; cat "$TMP/slurm.err"; fi

# The command's input limits hold in the tasks: a base trace over
# --max-input-mb fails there as it does in a local worker.
mkdir -p "$TMP/big"
cp tests/planner/known.yaml tests/planner/known-base.jsonl "$TMP/big/"
head -c 1200000 /dev/zero | tr '\0' '\n' >>"$TMP/big/known-base.jsonl"
"$FLEETSIM" --max-input-mb 1 forecast -q -j 2 "$TMP/big/known.yaml" >/dev/null 2>"$TMP/local.err"; lrc=$?
"$FLEETSIM" --max-input-mb 1 forecast -q --slurm "$TMP/big/known.yaml" >/dev/null 2>"$TMP/slurm.err"; src=$?
if [ $lrc = 4 ] && [ $src = 4 ] && grep -q "replication 0: cannot read the trace .*larger than 1 MiB" "$TMP/slurm.err"; then pass
else fail "--max-input-mb in the tasks: exit $src (local $lrc), want 4 and the limit named"; cat "$TMP/slurm.err"; fi

# compare: a variant that fails cancels the variants queued after it.
"$FLEETSIM" compare -r 3 --slurm "$TMP/bad/known.yaml" "$TMP/sweep.yaml" >"$TMP/out" 2>"$TMP/err"; rc=$?
sleep 1
left=$(squeue -h -t PD,R -o '%i %j')
if [ $rc = 4 ] && [ "$(grep -c 'submitted as Slurm job array' "$TMP/err")" = 5 ] && [ -z "$left" ] &&
   grep -q "replication [0-9]*: .*known-base.jsonl:1:7: invalid json" "$TMP/err"; then pass
else fail "compare with a failing variant: exit $rc, want 4 and nothing left queued (left: $left)"; cat "$TMP/err"; fi

# A task that Slurm cancels while it runs leaves no result: named, exit 4.
"$FLEETSIM" forecast --slurm scenarios/examples/quarterly.yaml --json >"$TMP/cancel.out" 2>"$TMP/cancel.err" &
pid=$!
id=
n=0
while [ -z "$id" ] && [ $n -lt 150 ]; do
  id=$(squeue -h -t R -n fleetsim-forecast -o %i | grep '_' | head -n 1); n=$((n + 1)); sleep 0.2
done
[ -n "$id" ] && scancel "$id"
wait $pid; rc=$?
if [ -n "$id" ] && [ $rc = 4 ] && grep -q "Slurm task $id CANCELLED without a result; its log '.*task-[0-9]*.out' ends: " "$TMP/cancel.err" &&
   [ ! -s "$TMP/cancel.out" ]; then pass
else fail "a cancelled task ($id): exit $rc, want 4 and the task named"; cat "$TMP/cancel.err"; fi

# Ctrl-C: the jobs are cancelled, what finished is reported as partial, exit 130.
"$FLEETSIM" forecast --slurm scenarios/examples/quarterly.yaml >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
n=0
while [ -z "$(squeue -h -t R -n fleetsim-forecast -o %i)" ] && [ $n -lt 150 ]; do n=$((n + 1)); sleep 0.2; done
kill -INT $pid
wait $pid; rc=$?
sleep 1
left=$(squeue -h -t PD,R -o '%i %j')
if [ $rc = 130 ] && grep -q "interrupted: [0-8] of 8 replications finished; results are partial" "$TMP/int.err" &&
   grep -q "replications, PARTIAL\|nothing to report" "$TMP/int.out" && [ -z "$left" ]; then pass
else fail "Ctrl-C: exit $rc, want 130, a partial result and no jobs left (left: $left)"; cat "$TMP/int.err"; fi

finish slurm-cli
