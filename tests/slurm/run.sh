#!/bin/sh
# tests/slurm/run.sh (group "slurm"): fleetsim against a real Slurm, on the
# 4-node x 8-GPU test cluster that cluster.sh starts in a temporary folder.
# Skips, with the reason, only where Slurm cannot be installed (exit 77 from
# cluster.sh). The cluster is stopped by pid on every exit path (trap).
. tests/lib.sh
CLUSTER=$TMP/cluster
AGENT=${AGENT:-$BUILD/fleetsim-agent}
CHECK="python3 -B tests/slurm/check.py"
AGENT_PID=""
stop_cluster() {
  [ -n "$AGENT_PID" ] && kill -9 "$AGENT_PID" 2>/dev/null
  sh tests/slurm/cluster.sh stop "$CLUSTER" >/dev/null 2>&1
}
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

# --- the command line ------------------------------------------------------------
expect_exit 2 "run --backend slurm without --partition" "$AGENT" run --backend slurm
expect_exit 2 "run --backend nope" "$AGENT" run --backend nope --partition ext
expect_exit 2 "run --partition without --backend slurm" "$AGENT" run --partition ext
expect_exit 2 "run --backend slurm --partition nope" "$AGENT" run --backend slurm --partition nope \
  --state-dir "$TMP/nope.state" --poll-ms 10
grep -q "partition 'nope' has no nodes" "$TMP/err" && pass || fail "unknown partition: $(cat "$TMP/err")"
expect_exit 3 "run without Slurm's commands" env PATH=/nonexistent "$(pwd)/$AGENT" run --backend slurm \
  --partition ext --state-dir "$TMP/nocmd.state" --poll-ms 10
grep -q "cannot use Slurm: .*cannot run 'squeue'" "$TMP/err" && pass || fail "no squeue: $(cat "$TMP/err")"
expect_exit 2 "submit --backend slurm without --partition" "$AGENT" submit --backend slurm -- true
expect_exit 2 "submit --backend slurm, GPUs not split evenly" "$AGENT" submit --backend slurm --partition ext \
  --gpus 9 --nodes 2 -- true
"$AGENT" submit --backend slurm --help | grep -q -- "--partition NAME" && pass || fail "submit --backend slurm --help"
"$AGENT" run --help | grep -q -- "--backend B" && pass || fail "run --help names --backend"
# through sbatch: the job arrives held, with its GPUs, nodes, limit, name and account
j=$(cd "$TMP" && "$OLDPWD/$AGENT" submit --backend slurm --partition ext --gpus 16 --nodes 2 --time 90s \
  --name "it's" -- sh -c 'echo "$1"' sh "a 'quoted' arg")
if [ -n "$j" ] && squeue -h -j "$j" -o '%T %r %D %b %l %j' | grep -q "^PENDING JobHeld.* 2 gres:gpu:8 2:00 it's\$"; then pass
else fail "submit --backend slurm: job '$j' is $(squeue -h -j "$j" -o '%T %r %D %b %l %j' 2>&1)"; fi
scontrol release "$j" 2>/dev/null; wait_done "$j"
grep -qx "a 'quoted' arg" "$TMP/slurm-$j.out" && pass || fail "submit --backend slurm: argv not kept: $(cat "$TMP/slurm-$j.out")"

# SLURM_QUICK=1: the cluster and the command line only (a minute less)
if [ -n "${SLURM_QUICK:-}" ]; then finish slurm; exit $?; fi

# --- the agent as the scheduler of partition ext ------------------------------
# start_agent NAME POLICY: the agent on partition ext, its state in $TMP/NAME.state
start_agent() {
  mkdir -p "$TMP/$1.state"
  "$AGENT" run --backend slurm --partition ext --policy "$2" --state-dir "$TMP/$1.state" \
    --socket "$TMP/$1.state/sock" --poll-ms 200 --log-level debug >>"$TMP/$1.log" 2>&1 &
  AGENT_PID=$!
}
stop_agent() { [ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID"; AGENT_PID=""; }

# submit_mix N OUTDIR "SIZES": N jobs cycling through SIZES GPUs (16 = two whole
# nodes), with plain sbatch, limits of 1-3 minutes, sleeping 0-2 s; each writes
# "run ID RESTARTS NODELIST NODENAME CUDA_VISIBLE_DEVICES"; their ids in OUTDIR/ids
submit_mix() {
  mkdir -p "$2"; : >"$2/ids"; i=0
  set -- "$1" "$2" $3
  n=$1 dir=$2; shift 2
  while [ "$i" -lt "$n" ]; do
    k=$((i % $# + 1)); eval "g=\${$k}"
    if [ "$g" -gt 8 ]; then shape="-N$((g / 8)) --gres=gpu:8"; else shape="--gres=gpu:$g"; fi
    # shellcheck disable=SC2086
    sbatch --parsable -p ext $shape -t $((1 + i % 3)) -o "$dir/%j.out" --open-mode=append --wrap \
      "echo run \$SLURM_JOB_ID \${SLURM_RESTART_COUNT:-0} \$SLURM_JOB_NODELIST \$SLURMD_NODENAME \$CUDA_VISIBLE_DEVICES; sleep $((i % 3))" \
      >>"$dir/ids" || return 1
    i=$((i + 1))
  done
}

# wait_ended IDS SECONDS: until every job listed has ended
wait_ended() {
  n=0 want=$(wc -w <"$1")
  while [ "$n" -lt $(($2 * 5)) ]; do
    ended=$(squeue -h -t all -p ext -o '%i %T' | awk 'NR == FNR {w[$1] = 1; next} ($1 in w) && $2 !~ /PENDING|RUNNING|CONFIGURING|COMPLETING|REQUEUE/' "$1" - | wc -l)
    [ "$ended" -ge "$want" ] && return 0
    n=$((n + 1)); sleep 0.2
  done
  return 1
}

# wait_traced TRACE N: until the agent's next passes have traced N jobs (10 s at most)
wait_traced() {
  n=0
  while [ "$(grep -c '"id"' "$1" 2>/dev/null)" -lt "$2" ] && [ $n -lt 50 ]; do n=$((n + 1)); sleep 0.2; done
}

# The closed loop. The trace records what the agent saw, at the instant of
# the pass that saw it: a job's submission when a pass first saw it held, its
# start when the agent released it, its end when a pass saw it ended. Slurm's
# own times are whole seconds, and slurmctld starts a released job on its next
# one-second loop (0.2-1 s later); recorded that way, a replay would see nodes
# free up to 2 s early and reorder starts. Recorded at the agent's pass
# instants (microseconds), the simulator runs its passes at the same instants
# on the same state, so the tolerance on start order is zero: the same jobs
# start in the same order at the same recorded instants. A Slurm job is N
# nodes x G GPUs; the trace keeps it ("nodes": N) and the policy contract
# carries it (policy_job.nodes), so both hosts place a 4-GPU job on one node
# and a 16-GPU job on two whole ones, and the agent never has to refuse a
# start for its shape (check.py fails if its log shows one).
e2e() { # NAME POLICY N "SIZES"
  start_agent "$1" "$2"
  t0=$(date +%s)
  submit_mix "$3" "$TMP/$1.out" "$4" || fail "$1: sbatch failed"
  if wait_ended "$TMP/$1.out/ids" 300; then pass; else fail "$1: $3 jobs not done in 300 s"; squeue -p ext | head -5; fi
  echo "$1: $3 jobs of $4 GPUs scheduled by '$2' through Slurm in $(($(date +%s) - t0)) s"
  wait_traced "$TMP/$1.state/trace.jsonl" "$3"
  stop_agent
  squeue --json -t all -p ext >"$TMP/$1.squeue.json"
  check "$1: each job on the nodes the policy chose, with its GPUs" \
    $CHECK placed "$TMP/$1.squeue.json" "$TMP/$1.state/slurm.db" "$TMP/$1.out" "$TMP/$1.out/ids"
  cat "$TMP/out"
  [ "$(grep -c '"id"' "$TMP/$1.state/trace.jsonl")" = "$3" ] && pass || fail "$1: $3 jobs in the trace"
  if "$FLEETSIM" replay --quiet --policy "$2" --jobs-csv "$TMP/$1.csv" "$TMP/$1.state/trace.jsonl" >/dev/null 2>"$TMP/err"; then
    if $CHECK order "$TMP/$1.state/trace.jsonl" "$TMP/$1.csv" "$TMP/$1.log" >"$TMP/out" 2>&1; then pass; else
      fail "$1: the replay starts the jobs in the agent's order"
      # SLURM_KEEP=DIR keeps what a failing closed loop recorded
      [ -n "${SLURM_KEEP:-}" ] && mkdir -p "$SLURM_KEEP" && cp -r "$TMP/$1".* "$SLURM_KEEP/"
    fi
    cat "$TMP/out"
  else
    fail "$1: replay: $(cat "$TMP/err")"
  fi
}
e2e pack fcfs+easy+pack 60 "1 2 4 8 16"
PLUGIN=$BUILD/policies/examples/example_policy.so
if [ -r "$PLUGIN" ]; then e2e plugin "$PLUGIN" 60 "1 2 4 8 16"; else fail "no example plugin at $PLUGIN (make)"; fi

# --- Slurm's node states and other partitions' jobs ----------------------------
# n4 drained by the admin, n1 busy with a job of partition gpu (Slurm's own
# scheduling): the agent's 8-GPU jobs may only land on n2 and n3.
scontrol update NodeName=n4 State=DRAIN Reason="fleetsim test"
foreign=$(sbatch --parsable -p gpu -w n1 --gres=gpu:8 -o /dev/null --wrap 'sleep 60')
n=0; while [ "$(squeue -h -j "$foreign" -o %T)" != RUNNING ] && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.1; done
start_agent drain fcfs+easy+pack
mkdir -p "$TMP/drain.out"; : >"$TMP/drain.out/ids"
for k in 1 2 3 4; do
  sbatch --parsable -p ext --gres=gpu:8 -t 1 -o /dev/null --wrap 'sleep 1' >>"$TMP/drain.out/ids"
done
if wait_ended "$TMP/drain.out/ids" 60; then pass; else fail "drain: 4 jobs not done in 60 s"; fi
stop_agent
ran=$(squeue -h -t all -p ext -o '%i %N' | awk 'NR == FNR {w[$1] = 1; next} ($1 in w) {print $2}' "$TMP/drain.out/ids" - | sort | uniq -c | tr -s ' ' | tr '\n' ';')
case $ran in *n1*|*n4*) fail "drain: jobs ran on the drained node or the busy one: $ran" ;; *) pass ;; esac
echo "drain: n4 drained, n1 busy in partition gpu; the agent's four 8-GPU jobs ran on:$ran"
scancel "$foreign"; scontrol update NodeName=n4 State=RESUME
n=0; while [ "$(sinfo -h -p ext -t idle -o %D)" != 4 ] && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.1; done

# --- a killed agent's command dies with it ------------------------------------
# A slow scontrol (first in PATH) writes its pid and waits 4 s before it pins.
# The agent is SIGKILLed while its pin waits and a new one starts at once: it
# carries the stored decision out itself. The waiting pin must die with its
# agent (sim/child.c: PR_SET_PDEATHSIG), or it would act on Slurm after the new
# agent took over; slurmctld's log shows one pin and one allocation.
real_scontrol=$(command -v scontrol)
mkdir -p "$TMP/slow.bin" "$TMP/orphan.state"
cat >"$TMP/slow.bin/scontrol" <<EOF
#!/bin/sh
case "\$*" in *ReqNodeList=*) echo \$\$ >>"$TMP/slow.pins"; sleep 4; echo \$\$ >>"$TMP/slow.landed" ;; esac
exec "$real_scontrol" "\$@"
EOF
chmod +x "$TMP/slow.bin/scontrol"
PATH="$TMP/slow.bin:$PATH" "$AGENT" run --backend slurm --partition ext --policy fcfs+easy \
  --state-dir "$TMP/orphan.state" --socket "$TMP/orphan.state/sock" --poll-ms 200 >>"$TMP/orphan.log" 2>&1 &
AGENT_PID=$!
j=$(sbatch --parsable -p ext --gres=gpu:8 -t 1 -o /dev/null --wrap 'sleep 1')
n=0; while [ ! -s "$TMP/slow.pins" ] && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.1; done
slow=$(head -1 "$TMP/slow.pins" 2>/dev/null)
kill -9 "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
# (a zombie is dead: in a container nobody may reap it)
alive() { st=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
n=0; while alive "$slow" && [ $n -lt 10 ]; do n=$((n + 1)); sleep 0.1; done
if alive "$slow"; then fail "orphan: the killed agent's scontrol (pid $slow) still runs"; else pass; fi
start_agent orphan fcfs+easy
if [ -n "$slow" ] && wait_done "$j"; then pass; else fail "orphan: no slow pin seen ('$slow') or job $j not done"; fi
stop_agent
sleep 4 # past the slow pin's wait, had it survived
[ ! -e "$TMP/slow.landed" ] && pass || fail "orphan: the killed agent's pin went on to Slurm"
pins=$(grep -c "setting req_nodes to [^ ]* for JobId=$j\$" "$CLUSTER/log/slurmctld.log")
allocs=$(grep -c "sched: Allocate JobId=$j " "$CLUSTER/log/slurmctld.log")
if [ "$pins" = 1 ] && [ "$allocs" = 1 ] && grep -q "decision carried out after restart.*job=$j " "$TMP/orphan.log"; then pass
else fail "orphan: job $j pinned $pins times, allocated $allocs times; want once each, by the new agent"
  grep -E "job=$j |level=(warn|error)" "$TMP/orphan.log" | sed 's/^/  | /' | head; fi
echo "orphan: the agent killed while its pin of job $j waited 4 s; pinned $pins time(s), allocated $allocs time(s)"

# --- crash: SIGKILL the agent at random points while 200 jobs flow, ten times ---
# After each restart the agent reconciles with Slurm: a decision committed but
# not carried out is carried out with its stored nodes, never re-decided.
# Slurm's own log is the witness: each job allocated once ("sched: Allocate")
# and pinned to its decided nodes ("setting req_nodes"); the store holds one
# decision per job. A pin may repeat, with the same nodes: a kill can fall after
# scontrol sent its request and before Slurm applied it, so the next agent's
# read of the queue may miss it (the case above shows the pin dies with its
# agent when it has not been sent).
start_agent crash fcfs+easy+pack
t0=$(date +%s)
submit_mix 200 "$TMP/crash.out" "1 2 4 8 16" &
submit_pid=$!
kills=0
for pause in $(awk 'BEGIN { srand(13); for (k = 0; k < 10; k++) printf "%.2f ", 0.3 + rand() * 3.5 }'); do
  sleep "$pause"
  kill -9 "$AGENT_PID" 2>/dev/null && kills=$((kills + 1))
  wait "$AGENT_PID" 2>/dev/null
  start_agent crash fcfs+easy+pack
done
wait "$submit_pid" || fail "crash: sbatch failed"
if wait_ended "$TMP/crash.out/ids" 400; then pass; else fail "crash: 200 jobs not done in 400 s"; fi
wait_traced "$TMP/crash.state/trace.jsonl" 200
stop_agent
echo "crash: 200 jobs, the agent killed $kills times, all done in $(($(date +%s) - t0)) s"
squeue --json -t all -p ext >"$TMP/crash.squeue.json"
check "crash: no job lost, none decided or started twice, none pinned elsewhere" \
  $CHECK crash "$TMP/crash.squeue.json" "$TMP/crash.state/slurm.db" "$CLUSTER/log/slurmctld.log" "$TMP/crash.out/ids"
cat "$TMP/out"
[ "$(grep '"id"' "$TMP/crash.state/trace.jsonl" | sed 's/,.*//' | sort | uniq | wc -l)" = 200 ] &&
  [ "$(grep -c '"id"' "$TMP/crash.state/trace.jsonl")" = 200 ] && pass || fail "crash: 200 distinct jobs in the trace"
starts=$(grep -c 'agent started' "$TMP/crash.log")
if [ "$starts" = 11 ]; then pass; else
  fail "crash: $starts agent starts in the log, want 11 (kills: $kills)"
  grep -E 'level=(warn|error)|msg="?agent st|^[a-z-]+: ' "$TMP/crash.log" | head -40 | sed 's/^/  | /'
fi

# --- preemption through scontrol requeuehold -----------------------------------
# srtf: four long jobs (limit 10 min) fill the nodes; a short one (limit 1 min)
# arrives and preempts one of them, which goes back to the queue held (a new
# attempt) and runs again once the short job is done.
start_agent preempt srtf
mkdir -p "$TMP/preempt.out"; : >"$TMP/preempt.out/ids"
for k in 1 2 3 4; do
  sbatch --parsable -p ext --gres=gpu:8 -t 10 -o "$TMP/preempt.out/%j.out" --open-mode=append --wrap \
    'echo run $SLURM_JOB_ID ${SLURM_RESTART_COUNT:-0} $SLURM_JOB_NODELIST; sleep 5' >>"$TMP/preempt.out/ids"
done
n=0; while [ "$(squeue -h -p ext -t R -o %i | wc -l)" -lt 4 ] && [ $n -lt 100 ]; do n=$((n + 1)); sleep 0.1; done
short=$(sbatch --parsable -p ext --gres=gpu:8 -t 1 -o "$TMP/preempt.out/%j.out" --wrap 'echo run $SLURM_JOB_ID 0 $SLURM_JOB_NODELIST; sleep 1')
echo "$short" >>"$TMP/preempt.out/ids"
if wait_ended "$TMP/preempt.out/ids" 90; then pass; else fail "preempt: jobs not done in 90 s"; squeue -p ext; fi
stop_agent
squeue --json -t all -p ext >"$TMP/preempt.squeue.json"
victim=$(python3 -c 'import sqlite3, sys; r = sqlite3.connect(sys.argv[1]).execute("SELECT job_id FROM preemptions").fetchall(); print(r[0][0] if r else 0)' "$TMP/preempt.state/slurm.db")
if [ "$victim" != 0 ]; then
  check "preempt: job $victim requeued by the agent, restarted and completed" \
    $CHECK preempted "$TMP/preempt.squeue.json" "$TMP/preempt.state/slurm.db" "$TMP/preempt.out" "$victim"
  cat "$TMP/out"
  grep -q "Requeuing JobId=$victim\$" "$CLUSTER/log/slurmctld.log" && pass ||
    fail "preempt: slurmctld's log shows no requeue of job $victim"
else
  fail "preempt: srtf preempted no job"; tail -5 "$TMP/preempt.log"
fi

finish slurm
