#!/bin/sh
# tests/slurm/run.sh (group "slurm"): fleetsim against a real Slurm, on the
# 4-node x 8-GPU test cluster that cluster.sh starts in a temporary folder.
# Skips, with the reason, only where Slurm cannot be installed (exit 77 from
# cluster.sh). The cluster is stopped by pid on every exit path (trap).
. tests/lib.sh
CLUSTER=$TMP/cluster
stop_cluster() { sh tests/slurm/cluster.sh stop "$CLUSTER" >/dev/null 2>&1; }
trap 'stop_cluster; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

sh tests/slurm/cluster.sh start "$CLUSTER" >"$TMP/start.out" 2>&1; rc=$?
if [ $rc = 77 ]; then
  skip "$(grep 'slurm: SKIP' "$TMP/start.out")"
  finish slurm; exit $?
elif [ $rc != 0 ]; then
  fail "test cluster did not start"; sed 's/^/  | /' "$TMP/start.out"
  finish slurm; exit $?
fi
. "$CLUSTER/env"

# wait_done JOBID: until the job has left the queue's pending/running states
wait_done() {
  n=0
  while [ $n -lt 100 ]; do
    st=$(squeue -h -t all -j "$1" -o %T 2>/dev/null)
    case $st in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) return 0 ;; esac
    n=$((n + 1)); sleep 0.1
  done
  return 1
}

# --- the cluster itself (cluster.sh's promises) -----------------------------
[ "$(sinfo -h -p gpu -t idle -o %D)" = 4 ] && pass || fail "cluster: 4 idle nodes"
[ "$(wc -l <"$CLUSTER/pids")" = 6 ] && pass || fail "cluster: 6 pids recorded (munged, slurmctld, 4 slurmd)"
j=$(sbatch -p gpu --parsable --gres=gpu:2 -o "$TMP/smoke-%j.out" --wrap 'echo "$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"')
if wait_done "$j" && grep -qE '^n[1-4] 0,1$' "$TMP/smoke-$j.out"; then pass; else fail "cluster: a gpu:2 job sees CUDA_VISIBLE_DEVICES=0,1"; cat "$TMP/smoke-$j.out" 2>/dev/null; fi
j=$(sbatch -p ext --parsable -o "$TMP/smoke-%j.out" --wrap 'echo "$SLURMD_NODENAME"')
sleep 1.2
[ "$(squeue -h -j "$j" -o %T)" = PENDING ] && pass || fail "cluster: a job of partition ext arrives held"
scontrol update JobId="$j" ReqNodeList=n3 && scontrol release "$j"
if wait_done "$j" && [ "$(cat "$TMP/smoke-$j.out")" = n3 ]; then pass; else fail "cluster: pinned to n3 and released, the job ran on n3"; fi

# A second cluster beside the first (other ports), and stop kills by pid.
C2=$TMP/cluster2
if sh tests/slurm/cluster.sh start "$C2" >"$TMP/c2.out" 2>&1; then
  p1=$(sed -n 's/^SlurmctldPort=//p' "$CLUSTER/slurm.conf"); p2=$(sed -n 's/^SlurmctldPort=//p' "$C2/slurm.conf")
  [ "$p1" != "$p2" ] && pass || fail "cluster: two clusters on different ports"
  pids2=$(awk '{print $2}' "$C2/pids")
  sh tests/slurm/cluster.sh stop "$C2" >/dev/null 2>&1
  left=""; for p in $pids2; do kill -0 "$p" 2>/dev/null && ! grep -q '^State:.*Z' /proc/$p/status 2>/dev/null && left="$left $p"; done
  [ -z "$left" ] && pass || fail "cluster: stop left pids$left running"
  sh tests/slurm/cluster.sh stop "$C2" >/dev/null 2>&1 && pass || fail "cluster: a second stop is harmless"
  [ "$(sinfo -h -p gpu -t idle -o %D)" = 4 ] && pass || fail "cluster: the first cluster survives the second's stop"
else
  fail "cluster: a second cluster did not start"; sed 's/^/  | /' "$TMP/c2.out"
fi

finish slurm
