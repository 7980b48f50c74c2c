#!/bin/sh
# tests/slurm/bench.sh: the Slurm backend's decision latency for `make bench`:
# a job submitted with plain sbatch to the agent's partition -> released by
# the agent (its "job released" log line), while 1,000 other jobs wait held.
# Setup on the 4-node x 8-GPU test cluster (tests/slurm/cluster.sh): three
# nodes run long jobs, the 1,000 waiting jobs each need two whole nodes, so
# only the probes fit (1 GPU, 1 minute: EASY backfills them on the fourth
# node, before the head job's reservation). 20 probes, one at a time.
# Skips with a message where Slurm cannot be installed.
BUILD=${BUILD:-build}
AGENT=$BUILD/fleetsim-agent
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fleetsim-slurm-bench.XXXXXX")
CLUSTER=$TMP/cluster
AGENT_PID=""
cleanup() {
  [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
  sh tests/slurm/cluster.sh stop "$CLUSTER" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
sh tests/slurm/cluster.sh start "$CLUSTER" >"$TMP/start.out" 2>&1; rc=$?
if [ $rc != 0 ]; then
  echo "slurm bench: skipped: $(grep -h 'SKIP\|error' "$TMP/start.out" | head -1)"
  exit 0
fi
. "$CLUSTER/env"
"$AGENT" run --backend slurm --partition ext --policy fcfs+easy+pack --state-dir "$TMP/state" \
  --socket "$TMP/state/sock" --poll-ms 200 >"$TMP/agent.log" 2>&1 &
AGENT_PID=$!
for k in 1 2 3; do sbatch -p ext --gres=gpu:8 -t 30 -o /dev/null --wrap 'sleep 600' >/dev/null; done
n=0; while [ "$(squeue -h -p ext -t R -o %i | wc -l)" -lt 3 ] && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.1; done
t0=$(date +%s)
i=0
while [ $i -lt 1000 ]; do sbatch -p ext -N2 --gres=gpu:8 -t 10 -o /dev/null --wrap 'sleep 1' >/dev/null; i=$((i + 1)); done
n=0; while [ "$(squeue -h -p ext -t PD -o '%k' | grep -c 'held for policy')" -lt 1000 ] && [ $n -lt 600 ]; do n=$((n + 1)); sleep 0.1; done
echo "slurm: 1,000 held jobs submitted and seen by the agent in $(($(date +%s) - t0)) s"
: >"$TMP/lat"
k=0
while [ $k -lt 20 ]; do
  s=$(date +%s.%N)
  id=$(sbatch --parsable -p ext --gres=gpu:1 -t 1 -o /dev/null --wrap 'sleep 0')
  n=0
  while ! grep -q "msg=\"job released\" job=$id " "$TMP/agent.log" && [ $n -lt 300 ]; do n=$((n + 1)); sleep 0.01; done
  ts=$(grep "msg=\"job released\" job=$id " "$TMP/agent.log" | sed 's/^ts=\([^ ]*\)Z.*/\1/')
  [ -n "$ts" ] && python3 -c 'import datetime, sys; t = datetime.datetime.fromisoformat(sys.argv[1]).replace(tzinfo=datetime.timezone.utc).timestamp(); print("%.3f" % (t - float(sys.argv[2])))' "$ts" "$s" >>"$TMP/lat"
  sleep 0.5
  k=$((k + 1))
done
sort -n "$TMP/lat" | awk '{ v[NR] = $1 } END {
  if (NR == 0) { print "slurm decision latency: no probe was released"; exit }
  printf "slurm decision latency, submitted -> released, 1,000 held jobs: p50 %.3f s, p95 %.3f s, max %.3f s (%d probes)\n",
    v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.5)], v[NR], NR }'
passes=$(grep -c 'job released' "$TMP/agent.log")
echo "slurm: the agent released $passes jobs; pass = squeue --json over 1,004 jobs + sinfo + policy + scontrol"
