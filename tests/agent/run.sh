#!/bin/sh
# tests/agent/run.sh: fleetsim-agent end to end, with a fake 2-node x 8-GPU
# inventory and real processes: the policy's start order, each job seeing
# exactly its GPUs, time limits, exit codes, recovery after SIGKILL (500 jobs,
# ten kills), access control between two uids, the HTTP token, promtool on
# /metrics, the NVML path through a fake libnvidia-ml.so.1, and the closed
# loop (the recorded trace replayed by fleetsim gives the same start order),
# preemption by srtf, tiresias and +preempt, and misbehaving policy plugins.
# Runs as root (CI) or as a user (the uid tests are skipped then); needs no GPU.
. tests/lib.sh
ROOT=$(pwd)
AGENT=${AGENT:-$BUILD/fleetsim-agent}
case $AGENT in /*) ;; *) AGENT=$ROOT/$AGENT ;; esac
case $FLEETSIM in /*) ;; *) FLEETSIM=$ROOT/$FLEETSIM ;; esac
UNIT=$BUILD/tests/agent_unit_tests
CHECK="python3 $ROOT/tests/agent/check.py"
AGENT_ENV=
chmod 755 "$TMP"
mkdir -p "$TMP/run" "$TMP/pub" "$TMP/work" "$TMP/lib"
chmod 755 "$TMP/run"
chmod 1777 "$TMP/pub"

# Every agent this script starts is stopped, and its jobs cancelled, on exit.
cleanup() {
  for pidf in "$TMP"/*.pid; do
    [ -f "$pidf" ] || continue
    name=$(basename "$pidf" .pid)
    pid=$(cat "$pidf")
    if kill -0 "$pid" 2>/dev/null; then
      for id in $("$AGENT" queue --socket "$TMP/run/$name.sock" --json 2>/dev/null | python3 -c \
          'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))' 2>/dev/null); do
        "$AGENT" cancel --socket "$TMP/run/$name.sock" "$id" >/dev/null 2>&1
      done
      kill -TERM "$pid" 2>/dev/null
    fi
  done
  sleep 0.2
  for pidf in "$TMP"/*.pid; do [ -f "$pidf" ] && kill -KILL "$(cat "$pidf")" 2>/dev/null; done
  # supervisors of jobs that outlived a killed agent: their jobs are short
  for f in "$TMP"/*.supervisors; do [ -f "$f" ] && xargs -r kill -USR1 <"$f" 2>/dev/null; done
  return 0
}
trap 'cleanup; umount "$TMP/full.state" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM

# ---- the agent's unit tests (their counts join this group's) ----
if [ -x "$UNIT" ]; then
  "$UNIT" >"$TMP/unit.out" 2>&1
  cat "$TMP/unit.out"
  line=$(grep -E '^agent unit: [0-9]+ passed' "$TMP/unit.out" | tail -n 1)
  if [ -n "$line" ]; then
    PASSED=$((PASSED + $(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
    FAILED=$((FAILED + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
    SKIPPED=$((SKIPPED + $(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/')))
  else
    fail "agent unit tests printed no result line"
  fi
else
  fail "agent unit tests not built: $UNIT"
fi
if [ ! -x "$AGENT" ]; then fail "$AGENT not built"; finish agent; exit 1; fi
# the request protocol's fuzz target builds with the project's compiler and
# holds on its seeds, the inputs fuzzing found included (`make fuzz` runs it
# under libFuzzer with clang)
if ${CC:-cc} $SAN -std=c11 -I. -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -o "$TMP/fuzz_agent_request" \
     tests/fuzz/fuzz_agent_request.c tests/fuzz/standalone.c "$BUILD/agent/api.o" "$BUILD/agent/http.o" \
     "$BUILD/agent/buf.o" "$BUILD/libfleetcore.a" $(pkg-config --libs jansson 2>/dev/null || echo -ljansson) \
     2>"$TMP/err" && "$TMP/fuzz_agent_request" tests/fuzz/seeds/fuzz_agent_request/*; then pass
else fail "fuzz_agent_request does not build or fails on its seeds"; sed 's/^/  | /' "$TMP/err" | head -5; fi
# private copies: a rebuild of the tree during the test must not pull the
# binaries from under the agents this test restarts
cp "$AGENT" "$TMP/fleetsim-agent" && AGENT=$TMP/fleetsim-agent
cp "$FLEETSIM" "$TMP/fleetsim" && FLEETSIM=$TMP/fleetsim

# ---- fixtures ----
cat >"$TMP/inv.json" <<'EOF'
{"fleetsim_inventory": 1,
 "nodes": [
  {"name": "gpu01", "gpus": 8, "model": "NVIDIA H100 80GB HBM3", "memory_mib": 81559,
   "nvlink_domains": [[0, 1, 2, 3, 4, 5, 6, 7]]},
  {"name": "gpu02", "gpus": 8, "model": "NVIDIA H100 80GB HBM3", "memory_mib": 81559,
   "nvlink_domains": [[0, 1, 2, 3], [4, 5, 6, 7]]}]}
EOF
cat >"$TMP/inv1.json" <<'EOF'
{"fleetsim_inventory": 1,
 "nodes": [{"name": "solo", "gpus": 8, "model": "NVIDIA H100 80GB HBM3", "memory_mib": 81559}]}
EOF
# prints the GPUs it was given into DIR/cvd-JOBID.out, then sleeps
cat >"$TMP/cvd.sh" <<'EOF'
#!/bin/sh
printf '%s\n' "$CUDA_VISIBLE_DEVICES" >"$1/cvd-$FLEETSIM_JOB_ID.out"
[ -z "$2" ] || while [ ! -e "$2" ]; do sleep 0.05; done
EOF
# appends its token to a file: each run of a job leaves one line
cat >"$TMP/mark.sh" <<'EOF'
#!/bin/sh
echo "$1" >>"$2"
EOF
chmod 755 "$TMP/cvd.sh" "$TMP/mark.sh"

# write_config NAME [LINES...]
write_config() {
  _cn=$1; shift
  {
    echo "socket = $TMP/run/$_cn.sock"
    echo "state_dir = $TMP/$_cn.state"
    echo "inventory = $TMP/inv.json"
    echo "kill_grace = 1s"
    echo "log_level = info"
    # as a user the agent cannot create cgroups: jobs run uncontained
    [ "$(id -u)" = 0 ] || echo "require_cgroup = no"
    for l in "$@"; do echo "$l"; done
  } >"$TMP/$_cn.conf"
}
# client commands run in $TMP/work: jobs write fleetsim-ID.out/.err into the submitter's folder
ag() { _an=$1 _ac=$2; shift 2; (cd "$TMP/work" && "$AGENT" "$_ac" --socket "$TMP/run/$_an.sock" "$@"); }
# start_agent NAME: starts it and waits (at most 10 s) until it answers
start_agent() {
  _sn=$1
  env $AGENT_ENV "$AGENT" run --config "$TMP/$_sn.conf" 2>>"$TMP/$_sn.log" &
  echo $! >"$TMP/$_sn.pid"
  _t=0
  while [ $_t -lt 200 ]; do
    ag "$_sn" status >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$TMP/$_sn.pid")" 2>/dev/null || break
    sleep 0.05; _t=$((_t + 1))
  done
  fail "agent '$_sn' did not start"; sed 's/^/  | /' "$TMP/$_sn.log" | tail -20
  return 1
}
stop_agent() {
  _p=$(cat "$TMP/$1.pid"); kill -TERM "$_p" 2>/dev/null; wait "$_p" 2>/dev/null; rm -f "$TMP/$1.pid"
}
kill9_agent() {
  _p=$(cat "$TMP/$1.pid"); kill -KILL "$_p" 2>/dev/null; wait "$_p" 2>/dev/null
}
# wait_idle NAME SECONDS: until no job is queued or running
wait_idle() {
  _w=0 _wn=$(($2 * 10))
  while [ $_w -lt $_wn ]; do
    ag "$1" queue --json >"$TMP/q.json" 2>/dev/null && [ -z "$($CHECK ids "$TMP/q.json")" ] && return 0
    sleep 0.1; _w=$((_w + 1))
  done
  return 1
}
# wait_state NAME ID STATE SECONDS
wait_state() {
  _s=0 _sn=$(($4 * 10))
  while [ $_s -lt $_sn ]; do
    ag "$1" show --json "$2" >"$TMP/s.json" 2>/dev/null && [ "$($CHECK get "$TMP/s.json" state)" = "$3" ] && return 0
    sleep 0.1; _s=$((_s + 1))
  done
  return 1
}
job_field() { ag "$1" show --json "$2" >"$TMP/f.json" 2>/dev/null && $CHECK get "$TMP/f.json" "$3" 2>/dev/null; }
expect_field() { # NAME ID KEY WANT LABEL
  _got=$(job_field "$1" "$2" "$3")
  if [ "$_got" = "$4" ]; then pass; else fail "$5: job $2 $3 is '$_got', want '$4'"; fi
}
# wait_status NAME TEXT SECONDS: until 'status' prints TEXT
wait_status() {
  _s=0 _sn=$(($3 * 10))
  while [ $_s -lt $_sn ]; do
    ag "$1" status 2>/dev/null | grep -qF "$2" && return 0
    sleep 0.1; _s=$((_s + 1))
  done
  return 1
}
# gate FILE: a job's shell command that runs until FILE appears
gate() { echo "while [ ! -e '$1' ]; do sleep 0.05; done"; }
random_ms() { # random integer in [$1, $2)
  r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
  echo $(($1 + r % ($2 - $1)))
}

# ---- the command line, without an agent ----
for c in run inventory submit queue show cancel history nodes drain resume status; do
  expect_exit 0 "$c --help" "$AGENT" "$c" --help
done
expect_exit 0 "--help" "$AGENT" --help
expect_exit 2 "no command" "$AGENT"
expect_exit 2 "unknown command" "$AGENT" frobnicate
expect_exit 3 "no agent listening" "$AGENT" status --socket "$TMP/run/none.sock"
if grep -q "cannot reach the agent at '$TMP/run/none.sock'" "$TMP/err"; then pass; else fail "unreachable message: $(cat "$TMP/err")"; fi
expect_exit 3 "--socket before the command" "$AGENT" --socket "$TMP/run/none.sock" show 3
grep -q "cannot reach the agent at '$TMP/run/none.sock'" "$TMP/err" && pass || fail "--socket before show: $(cat "$TMP/err")"
expect_exit 2 "submit without a unit on --time" "$AGENT" submit --socket "$TMP/run/none.sock" --time 90 -- true
if grep -q "did you mean '90s' or '90m'" "$TMP/err"; then pass; else fail "time suggestion: $(cat "$TMP/err")"; fi
expect_exit 2 "submit with --time 0" "$AGENT" submit --socket "$TMP/run/none.sock" --time 0 -- true
grep -q "time '0' must be more than zero" "$TMP/err" && pass || fail "--time 0: $(cat "$TMP/err")"
expect_exit 2 "submit without a command" "$AGENT" submit --socket "$TMP/run/none.sock"
mkdir -p "$TMP/empty.state" && : >"$TMP/empty.state/state.db"
write_config empty
expect_exit 2 "an empty state.db is not taken for a new store" "$AGENT" run --config "$TMP/empty.conf"
grep -q "state store '$TMP/empty.state/state.db' is empty (0 bytes): restore it from a backup, or remove it" "$TMP/err" &&
  pass || fail "empty store: $(cat "$TMP/err")"
printf 'polcy = fcfs\nkill_grace = 10\n' >"$TMP/bad.conf"
expect_exit 2 "bad config" "$AGENT" run --config "$TMP/bad.conf"
if grep -q "bad.conf:1:1: error: unknown key 'polcy'; did you mean 'policy'?" "$TMP/err" &&
   grep -q "bad.conf:2:14: error: key 'kill_grace': expected a duration" "$TMP/err"; then pass
else fail "config errors: $(cat "$TMP/err")"; fi
echo '{"nodes":[{"name":"a","gpu":8}]}' >"$TMP/bad-inv.json"
expect_exit 2 "bad fake inventory" "$AGENT" inventory --inventory "$TMP/bad-inv.json"
if grep -q "unknown key 'gpu'; did you mean 'gpus'?" "$TMP/err"; then pass; else fail "inventory error: $(cat "$TMP/err")"; fi
LD_LIBRARY_PATH=/nonexistent "$AGENT" run --inventory nvml --state-dir "$TMP/nonvml" --socket "$TMP/run/nonvml.sock" \
  >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc = 3 ] && grep -q "libnvidia-ml.so.1 not found: use --inventory FILE" "$TMP/err"; then pass
else fail "no NVML: exit $rc: $(cat "$TMP/err")"; fi
"$AGENT" inventory --inventory "$TMP/inv.json" >"$TMP/out" 2>&1
if grep -q "gpu02: 8 GPUs" "$TMP/out" && grep -q "GPU-fa4e0000-0000-4000-8000-000001000007" "$TMP/out"; then pass
else fail "fake inventory listing: $(head -5 "$TMP/out")"; fi

# ---- the systemd unit: owner-only state, a delegated cgroup, hardening ----
for key in UMask=0077 StateDirectoryMode=0700 Delegate=yes KillMode=process ProtectSystem=full \
    SystemCallArchitectures=native RestrictAddressFamilies= CapabilityBoundingSet=; do
  grep -q "^$key" agent/fleetsim-agent.service && pass || fail "the unit lacks $key"
done
if command -v systemd-analyze >/dev/null 2>&1; then
  # only the binary and the man page may be missing here
  systemd-analyze verify agent/fleetsim-agent.service 2>&1 | grep -v "is not executable\|man fleetsim-agent\|^$" >"$TMP/out"
  [ ! -s "$TMP/out" ] && pass || fail "systemd-analyze verify: $(head -3 "$TMP/out")"
fi

# ---- policy order: EASY backfilling starts the small jobs before the big one ----
# (one 8-GPU node: a job runs on one node)
write_config order "policy = fcfs+easy"
sed -i "s#^inventory = .*#inventory = $TMP/inv1.json#" "$TMP/order.conf"
start_agent order || { finish agent; exit 1; }
# A and B run until the test lets them go (a file appears), so that each check
# sees the state it is about on a slow, loaded machine too: under ASan on two
# busy cores a poll can lag by seconds, and timed jobs ended before it looked.
A=$(ag order submit --gpus 8 --time 60s -- sh -c "$(gate "$TMP/pub/order.A")")
wait_state order "$A" running 20 || fail "job $A did not start"
B=$(ag order submit --gpus 4 --time 60s -- sh -c "$(gate "$TMP/pub/order.B")")
C=$(ag order submit --gpus 8 --time 5s -- sleep 0.3)
D=$(ag order submit --gpus 2 --time 2s -- sleep 0.3)
E=$(ag order submit --gpus 1 --time 2s -- sleep 0.3)
touch "$TMP/pub/order.A"
wait_state order "$B" running 20 || fail "job $B did not start"
wait_state order "$D" completed 20 && wait_state order "$E" completed 20 || fail "jobs $D and $E did not backfill"
# EASY's reservation for the first job that does not fit (C starts, and drops
# its reservation, once B is let go)
expect_field order "$C" state queued "the 8-GPU job waits for B"
r=$(job_field order "$C" reserved_us)
[ -n "$r" ] && pass || fail "the policy's reservation for job $C is not kept in the queue"
touch "$TMP/pub/order.B"
wait_idle order 20 || fail "order jobs did not finish"
order=$($CHECK trace-order "$TMP/order.state/trace.jsonl")
if [ "$order" = "$A $B $D $E $C" ]; then pass; else fail "fcfs+easy start order: $order, want $A $B $D $E $C"; fi
"$FLEETSIM" replay --policy fcfs+easy --jobs-csv "$TMP/order.csv" "$TMP/order.state/trace.jsonl" >/dev/null 2>"$TMP/err" ||
  fail "replay of the order trace: $(cat "$TMP/err")"
if [ "$($CHECK csv-order "$TMP/order.csv")" = "$order" ]; then pass
else fail "replayed order $($CHECK csv-order "$TMP/order.csv"), agent's $order"; fi
stop_agent order

# ---- local mode: a job runs on one node ----
write_config main "policy = fcfs+easy"
start_agent main || { finish agent; exit 1; }
# a second agent on the same state_dir is refused and told who holds it
write_config second "policy = fcfs+easy"
sed -i "s|^state_dir = .*|state_dir = $TMP/main.state|" "$TMP/second.conf"
"$AGENT" run --config "$TMP/second.conf" >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ "$rc" != 0 ] && grep -q "another agent (pid $(cat "$TMP/main.pid")) holds" "$TMP/err"; then pass
else fail "a second agent on main's state_dir: exit $rc, $(cat "$TMP/err")"; fi
expect_exit 2 "a job larger than the largest node is refused" ag main submit --gpus 12 -- true
grep -q "job asks for 12 GPUs; the largest node here ('gpu01') has 8: a job of this agent runs on one node (multi-node jobs need a Slurm backend)" "$TMP/err" &&
  pass || fail "refusal of a 12-GPU job: $(cat "$TMP/err")"
# 6 GPUs busy on each node: 2 + 2 are free, but a 4-GPU job must wait for a node
# (they run until the test lets them go, so that S3 is still waiting when it
# is looked at, on a slow machine too)
S1=$(ag main submit --gpus 6 --time 60s -- sh -c "$(gate "$TMP/pub/main.S")")
S2=$(ag main submit --gpus 6 --time 60s -- sh -c "$(gate "$TMP/pub/main.S")")
wait_state main "$S1" running 20 && wait_state main "$S2" running 20 || fail "the 6-GPU jobs did not start"
S3=$(ag main submit --gpus 4 --time 30s -- true)
sleep 0.5
expect_field main "$S3" state queued "a 4-GPU job does not start on 2 + 2 GPUs of two nodes"
touch "$TMP/pub/main.S"
wait_state main "$S3" completed 15 && pass || fail "the 4-GPU job did not run once a node was free"
ag main show --json "$S3" >"$TMP/s3.json"
[ "$(python3 -c 'import json,sys; print(len({p.split(":")[0] for p in json.load(open(sys.argv[1]))["placement"]}))' "$TMP/s3.json")" = 1 ] &&
  pass || fail "the 4-GPU job spans nodes: $(cat "$TMP/s3.json")"
grep -q "starts spread over nodes not carried out" "$TMP/main.log" && pass ||
  fail "the policy's start over two nodes was not refused (or not logged)"

# ---- idempotency keys: a repeated submission returns the first job's id ----
K1=$(ag main submit --key run-sh.k1 -- true)
K2=$(ag main submit --key run-sh.k1 -- true)
K3=$(ag main submit --key run-sh.k2 -- true)
[ -n "$K1" ] && [ "$K1" = "$K2" ] && pass || fail "a repeated key made a second job: $K1, $K2"
[ -n "$K3" ] && [ "$K3" != "$K1" ] && pass || fail "another key must make another job: $K1, $K3"
expect_exit 2 "a key with a blank is refused" ag main submit --key "a b" -- true
# a lost reply: the client sends the same request (same key) once more
cat >"$TMP/lost.py" <<'EOF'
import json, os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(4)
print("ready", flush=True)
c, _ = s.accept(); first = json.loads(c.makefile().readline()); c.close()   # the reply is lost
c, _ = s.accept(); second = json.loads(c.makefile().readline())
c.sendall(b'{"ok":true,"id":41}\n'); c.close()
print("same key" if first["job"]["key"] == second["job"]["key"] and first["job"]["key"].startswith("auto-") else "keys differ")
EOF
python3 "$TMP/lost.py" "$TMP/run/lost.sock" >"$TMP/lost.out" 2>&1 &
lost=$!
_n=0; while [ $_n -lt 50 ] && ! grep -q ready "$TMP/lost.out" 2>/dev/null; do sleep 0.1; _n=$((_n + 1)); done
got=$("$AGENT" submit --socket "$TMP/run/lost.sock" -- true 2>"$TMP/err")
wait $lost
[ "$got" = 41 ] && grep -q "same key" "$TMP/lost.out" && pass ||
  fail "retry after a lost reply: got '$got', $(cat "$TMP/lost.out" "$TMP/err")"

# ---- a request followed by a half-close (socat, nc -N) is answered ----
# The client shuts its sending side right after the request, with or without
# the final newline, then reads: the daemon must answer before it closes. A
# client that sends nothing and half-closes gets no answer, and no error.
cat >"$TMP/halfclose.py" <<'EOF'
import json, socket, sys
path = sys.argv[1]
def ask(data):
    s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(path)
    s.sendall(data); s.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        b = s.recv(65536)
        if not b: break
        got += b
    s.close()
    return got
for name, data in (("with newline", b'{"v":1,"op":"ping"}\n'), ("without newline", b'{"v":1,"op":"ping"}')):
    r = json.loads(ask(data))
    print(name, "ok" if r.get("ok") is True and "version" in r else "wrong: %r" % r)
r = json.loads(ask(b'{"v":1,"op":"pong"}'))
print("bad op", r.get("code"), r.get("error"))
print("nothing", repr(ask(b"")))
EOF
python3 "$TMP/halfclose.py" "$TMP/run/main.sock" >"$TMP/halfclose.out" 2>&1
cat >"$TMP/halfclose.want" <<'EOF'
with newline ok
without newline ok
bad op bad_request unknown op 'pong'; did you mean 'ping'?
nothing b''
EOF
if cmp -s "$TMP/halfclose.out" "$TMP/halfclose.want"; then pass
else fail "requests followed by a half-close: $(cat "$TMP/halfclose.out")"; fi

# ---- each job sees exactly its GPUs (8 jobs x 2 GPUs fill both nodes) ----
mkdir -p "$TMP/cvd" "$TMP/show"
ids=""
# (they hold their GPUs until all eight run at once, then are let go)
for k in 1 2 3 4 5 6 7 8; do ids="$ids $(ag main submit --gpus 2 --time 60s -- "$TMP/cvd.sh" "$TMP/cvd" "$TMP/pub/cvd.go")"; done
for id in $ids; do wait_state main "$id" running 20 || fail "GPU job $id did not start"; done
touch "$TMP/pub/cvd.go"
wait_idle main 20 || fail "GPU jobs did not finish"
for id in $ids; do ag main show --json "$id" >"$TMP/show/$id.json"; done
check "each job saw exactly its GPUs" $CHECK gpus-check "$TMP/cvd" "$TMP/show"
grep -q "16 GPUs seen by 8 jobs" "$TMP/out" && pass || fail "not all 16 GPUs were used: $(cat "$TMP/out")"
first=$(echo $ids | cut -d' ' -f1)
if grep -q "^GPU-fa4e" "$TMP/cvd/cvd-$first.out" && [ "$(tr ',' '\n' <"$TMP/cvd/cvd-$first.out" | wc -l)" = 2 ]; then pass
else fail "CUDA_VISIBLE_DEVICES holds two UUIDs: $(cat "$TMP/cvd/cvd-$first.out")"; fi

# ---- time limits, exit codes, signals ----
T1=$(ag main submit --time 1s -- sleep 30)
T2=$(ag main submit --time 1s -- sh -c 'trap "" TERM; while :; do sleep 0.1; done')
OK=$(ag main submit -- true)
NO=$(ag main submit -- false)
NX=$(ag main submit -- /nonexistent/command)
wait_idle main 15 || fail "limit jobs did not finish"
expect_field main "$T1" state timeout "time limit (SIGTERM)"
expect_field main "$T1" signal 15 "time limit (SIGTERM)"
expect_field main "$T2" state timeout "time limit (SIGKILL after the grace)"
expect_field main "$T2" signal 9 "time limit (SIGKILL after the grace)"
ran=$(ag main show --json "$T2" | python3 -c 'import json,sys; j=json.load(sys.stdin); print((j["end_us"]-j["start_us"])//100000)')
if [ "$ran" -ge 19 ] && [ "$ran" -le 40 ]; then pass; else fail "SIGTERM-ignoring job ran ${ran}00 ms, want 2-4 s"; fi
expect_field main "$OK" state completed "true"
expect_field main "$OK" exit_code 0 "true"
expect_field main "$NO" state failed "false"
expect_field main "$NO" exit_code 1 "false"
expect_field main "$NX" state failed "missing command"
job_field main "$NX" reason | grep -q "could not start: /nonexistent/command: No such file or directory" && pass ||
  fail "missing command reason: $(job_field main "$NX" reason)"
expect_exit 2 "more GPUs than the agent has" ag main submit --gpus 17 -- true
grep -q "job asks for 17 GPUs; this agent has 16" "$TMP/err" && pass || fail "too many GPUs: $(cat "$TMP/err")"
expect_exit 1 "show an unknown job" ag main show 99999
expect_exit 1 "cancel an ended job" ag main cancel "$OK"
grep -q "has already ended (completed)" "$TMP/err" && pass || fail "cancel ended: $(cat "$TMP/err")"
ag main history --limit 5 >"$TMP/out" && grep -q "timeout" "$TMP/out" && pass || fail "history: $(cat "$TMP/out")"

# ---- access: a second uid, an admin, drain/resume ----
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" != 0 ]; then
  skip "access tests need root (to act as uid 65534 with setpriv)"
elif ! $NOBODY true 2>/dev/null; then
  skip "access tests: setpriv cannot switch to uid 65534 here"
else
  N1=$(cd "$TMP/pub" && $NOBODY "$AGENT" submit --socket "$TMP/run/main.sock" --time 30s -- sh -c 'id -u; sleep 30')
  N2=$(cd "$TMP/pub" && $NOBODY "$AGENT" submit --socket "$TMP/run/main.sock" --time 30s -- sleep 30)
  R1=$(ag main submit --time 30s -- sleep 30)
  wait_state main "$N1" running 5 || fail "nobody's job did not start"
  expect_field main "$N1" uid 65534 "job owner"
  _n=0; while [ $_n -lt 100 ] && ! grep -q 65534 "$TMP/pub/fleetsim-$N1.out" 2>/dev/null; do sleep 0.05; _n=$((_n + 1)); done
  if [ "$(cat "$TMP/pub/fleetsim-$N1.out" 2>/dev/null)" = 65534 ]; then pass
  else fail "nobody's job ran as uid '$(cat "$TMP/pub/fleetsim-$N1.out" 2>/dev/null)'"; fi
  expect_exit 1 "another uid cannot cancel root's job" $NOBODY "$AGENT" cancel --socket "$TMP/run/main.sock" "$R1"
  grep -q "belongs to 'root': only its owner or an admin may cancel it" "$TMP/err" && pass || fail "cancel refusal: $(cat "$TMP/err")"
  expect_exit 0 "an admin cancels another's job" ag main cancel "$N1"
  expect_exit 0 "the owner cancels its own job" $NOBODY "$AGENT" cancel --socket "$TMP/run/main.sock" "$N2"
  expect_exit 0 "anyone reads the queue" $NOBODY "$AGENT" queue --socket "$TMP/run/main.sock"
  NK=$(cd "$TMP/pub" && $NOBODY "$AGENT" submit --socket "$TMP/run/main.sock" --key run-sh.k1 -- true)
  [ -n "$NK" ] && [ "$NK" != "$K1" ] && pass || fail "keys are per uid: uid 65534's run-sh.k1 got job '$NK' (root's is $K1)"
  $NOBODY "$AGENT" show --socket "$TMP/run/main.sock" --json "$R1" >"$TMP/out" 2>&1
  if ! grep -q '"argv"' "$TMP/out"; then pass; else fail "another uid sees root's command line"; fi
  expect_exit 1 "drain is admin-only" $NOBODY "$AGENT" drain --socket "$TMP/run/main.sock" gpu01
  expect_exit 0 "an admin drains a node" ag main drain --reason "maintenance" gpu01
  expect_exit 0 "an admin drains a GPU" ag main drain gpu02:3
  ag main nodes --json >"$TMP/nodes.json"
  st=$($CHECK get "$TMP/nodes.json" nodes 0 state) al=$($CHECK get "$TMP/nodes.json" nodes 0 allocated)
  { [ "$al" -gt 0 ] && [ "$st" = draining ]; } || { [ "$al" = 0 ] && [ "$st" = drained ]; } && pass ||
    fail "gpu01: state '$st' with $al GPUs allocated (draining while busy, drained when idle)"
  [ "$($CHECK get "$TMP/nodes.json" nodes 1 gpu_list 3 drained)" = True ] && pass || fail "gpu02:3 not drained"
  expect_exit 1 "resume is admin-only" $NOBODY "$AGENT" resume --socket "$TMP/run/main.sock" gpu01
  ag main cancel "$R1" >/dev/null
  wait_idle main 10 || fail "access jobs did not end"
  W=$(ag main submit --gpus 8 --time 5s -- true)
  sleep 0.3
  expect_field main "$W" state queued "no job starts on a drained node with 7 usable GPUs elsewhere"
  expect_exit 0 "an admin resumes" ag main resume gpu01
  expect_exit 1 "resuming a node that is not drained is refused" ag main resume gpu01
  grep -q "'gpu01' is not drained: nothing to resume" "$TMP/err" && pass || fail "resume of an undrained node: $(cat "$TMP/err")"
  expect_exit 0 "an admin resumes a GPU" ag main resume gpu02:3
  wait_state main "$W" completed 5 && pass || fail "job $W did not run after resume"
  expect_field main "$N1" state cancelled "cancelled by an admin"
  # secrets: another uid reads root's job environment and arguments by no path
  SEC=$(cd "$TMP/work" && HF_TOKEN=hf_ENVSECRET_4711 "$AGENT" submit --socket "$TMP/run/main.sock" --time 30s -- \
    sh -c 'sleep 30' x --token=ARGSECRET_0815)
  wait_state main "$SEC" running 5 || fail "the secret-holding job did not start"
  sqlite3 "$TMP/main.state/state.db" "select env from jobs where id = $SEC" 2>/dev/null | grep -q hf_ENVSECRET_4711 &&
    pass || fail "the store does not hold the job's environment (the test would prove nothing)"
  : >"$TMP/leak"
  $NOBODY "$AGENT" show --socket "$TMP/run/main.sock" --json "$SEC" >>"$TMP/leak" 2>&1
  $NOBODY "$AGENT" queue --socket "$TMP/run/main.sock" --json >>"$TMP/leak" 2>&1
  $NOBODY "$AGENT" history --socket "$TMP/run/main.sock" --json >>"$TMP/leak" 2>&1
  for f in state.db state.db-wal state.db-shm trace.jsonl jobs; do
    $NOBODY cat "$TMP/main.state/$f" >>"$TMP/leak" 2>/dev/null && fail "uid 65534 reads $f"
    $NOBODY ls "$TMP/main.state/$f" >/dev/null 2>&1 && fail "uid 65534 lists $f"
  done
  $NOBODY sqlite3 -readonly "$TMP/main.state/state.db" "select env, argv from jobs" >>"$TMP/leak" 2>&1 &&
    fail "uid 65534 opens the store with sqlite3"
  if grep -q "ENVSECRET\|ARGSECRET" "$TMP/leak"; then fail "uid 65534 read root's secrets: $(grep SECRET "$TMP/leak" | head -3)"; else pass; fi
  grep -q "ENVSECRET\|ARGSECRET" "$TMP/main.log" && fail "the agent's log holds a job's secrets" || pass
  ag main show --json "$SEC" | grep -q ARGSECRET_0815 && pass || fail "the owner does not see its own arguments"
  modes=$(cd "$TMP/main.state" && stat -c '%n=%a' . jobs state.db state.db-wal state.db-shm trace.jsonl agent.lock | tr '\n' ' ')
  [ "$modes" = ".=700 jobs=700 state.db=600 state.db-wal=600 state.db-shm=600 trace.jsonl=600 agent.lock=600 " ] &&
    pass || fail "state file modes: $modes"
  ag main cancel "$SEC" >/dev/null
  wait_state main "$SEC" cancelled 10 || fail "the secret-holding job was not cancelled"
  [ "$(stat -c %a "$TMP/work/fleetsim-$SEC.out")" = 600 ] && pass || fail "job output mode: $(stat -c %a "$TMP/work/fleetsim-$SEC.out")"
  # a state folder an older agent left open is made private at start
  mkdir -p "$TMP/old.state" && chmod 755 "$TMP/old.state"
  write_config old
  start_agent old && stop_agent old
  [ "$(stat -c %a "$TMP/old.state")" = 700 ] && pass || fail "an open state folder stays $(stat -c %a "$TMP/old.state")"
  # without a usable cgroup v2 the agent refuses to start unless told
  mkdir -p "$TMP/pub/nocg"
  write_config nocg
  sed -i -e "s#^socket = .*#socket = $TMP/pub/nocg/a.sock#" -e "s#^state_dir = .*#state_dir = $TMP/pub/nocg/state#" \
    -e '/^require_cgroup/d' "$TMP/nocg.conf"
  chmod 777 "$TMP/pub/nocg"
  expect_exit 3 "an agent that cannot create cgroups refuses to start" $NOBODY "$AGENT" run --config "$TMP/nocg.conf"
  grep -q "no usable cgroup v2 for jobs: .*or set 'require_cgroup = no' to run jobs uncontained" "$TMP/err" && pass ||
    fail "no-cgroup refusal: $(cat "$TMP/err")"
fi

# ---- containment: every job in its own cgroup; nothing of it survives its end ----
if [ "$(id -u)" != 0 ]; then
  skip "cgroup tests need root (the agent creates cgroups)"
elif ! grep -q "jobs run in cgroups" "$TMP/main.log"; then
  fail "the agent runs as root but found no usable cgroup v2: $(grep -i cgroup "$TMP/main.log" | head -2)"
else
  # distinct sleep lengths: other test runs on this host must not be counted
  t1=3011.$$ t2=3012.$$ t3=3013.$$
  G1=$(ag main submit --time 30s -- bash -c "setsid sleep $t1 & sleep 4")
  G2=$(ag main submit --time 30s -- sh -c "(sh -c 'sleep $t2 &' &); sleep 4")
  G3=$(ag main submit --time 4s -- sh -c "setsid sleep $t3 & sleep 30")
  # the escapes exist while the jobs run (counted as 'sleep ...' processes, not their shells)
  _w=0; n=0
  while [ $_w -lt 30 ]; do n=$(pgrep -fc "^sleep 301[123][.]$$\$"); [ "$n" = 3 ] && break; sleep 0.1; _w=$((_w + 1)); done
  [ "$n" = 3 ] && pass || fail "the escapes did not start: $n processes, want 3: $(pgrep -fa "sleep 301")"
  wait_state main "$G1" completed 10 && pass || fail "setsid job: $(job_field main "$G1" state)"
  wait_state main "$G2" completed 10 && pass || fail "double-fork job: $(job_field main "$G2" state)"
  wait_state main "$G3" timeout 10 && pass || fail "limit job: $(job_field main "$G3" state)"
  n=$(pgrep -fc "^sleep 301[123][.]$$\$")
  [ "$n" = 0 ] && pass || fail "$n processes of ended jobs survive: $(pgrep -fa "sleep 301[123][.]$$")"
  echo "containment: 3 escapes started (setsid, double fork, setsid at the limit); after the jobs ended $n survive"
  pgrep -f "sleep 301[123][.]$$" | xargs -r kill -KILL 2>/dev/null
  base=$(sed -n 's/.*msg="jobs run in cgroups".* base=\([^ ]*\).*/\1/p' "$TMP/main.log" | tail -1)
  [ -n "$base" ] && [ -d "$base" ] && [ ! -e "$base/job-$G1" ] && [ ! -e "$base/job-$G3" ] && pass ||
    fail "the jobs' cgroups were not removed (base '$base')"
  job_field main "$G1" cpu_s | grep -Eq '^[0-9.e-]+$' && pass || fail "no CPU time from the cgroup: $(job_field main "$G1" cpu_s)"
fi
stop_agent main

# ---- recovery: jobs outlive a SIGKILLed agent and are re-adopted, or settled ----
write_config rec "policy = fcfs+easy"
start_agent rec || { finish agent; exit 1; }
# L1 runs until it is let go after the restart (a timed job ended before the
# restart on a loaded machine, and was settled instead of re-adopted)
L1=$(ag rec submit --time 60s -- sh -c "$(gate "$TMP/pub/rec.L1")")
L2=$(ag rec submit --time 1s -- sleep 30)
# L3 and L4 must still run when their supervisors are killed: with 'sleep 3'
# an ASan build on a busy machine once took longer than that between the
# start and the kill, and L3 completed. L4's first attempt marks that it
# ran; the attempt after the requeue then ends at once.
L3=$(ag rec submit --time 60s -- sleep 20)
L4=$(ag rec submit --time 60s --requeue -- sh -c "test -e '$TMP/rec.L4-ran' && exit 0; touch '$TMP/rec.L4-ran'; sleep 20")
# (L2 may already be past its 1 s limit when it is looked at: it is not waited for)
for id in "$L1" "$L3" "$L4"; do wait_state rec "$id" running 20 || fail "job $id did not start"; done
_w=0
while [ ! -e "$TMP/rec.L4-ran" ] && [ $_w -lt 50 ]; do sleep 0.1; _w=$((_w + 1)); done
p3=$(job_field rec "$L3" supervisor_pid); p4=$(job_field rec "$L4" supervisor_pid)
echo "$p3 $p4" >"$TMP/rec.supervisors"
kill9_agent rec
expect_exit 3 "submit while the agent is down" ag rec submit -- true
kill -KILL "$p3" "$p4" 2>/dev/null # their supervisors die too: those jobs are lost
start_agent rec
grep -q "job re-adopted\" job=$L1" "$TMP/rec.log" && pass || fail "job $L1 not re-adopted: $(tail -5 "$TMP/rec.log")"
touch "$TMP/pub/rec.L1"
wait_state rec "$L1" completed 10 && pass || fail "re-adopted job $L1: $(job_field rec "$L1" state)"
wait_state rec "$L2" timeout 10 && pass || fail "time limit after a restart: $(job_field rec "$L2" state)"
expect_field rec "$L3" state failed "supervisor lost"
job_field rec "$L3" reason | grep -q "lost: its supervisor died" && pass || fail "lost reason: $(job_field rec "$L3" reason)"
wait_state rec "$L4" completed 10 && pass || fail "requeued job $L4: $(job_field rec "$L4" state)"
expect_field rec "$L4" attempts 2 "requeued job ran again"
stop_agent rec

# ---- crash test: SIGKILL the agent ten times during a 500-job load ----
write_config crash "policy = fcfs+easy"
start_agent crash || { finish agent; exit 1; }
: >"$TMP/marks"; : >"$TMP/acked"
(
  cd "$TMP/work" || exit 1
  # each job is retried while the agent is down; a job that cannot be
  # submitted in 200 tries (the agent is gone for good) ends the load
  k=1
  while [ $k -le 500 ]; do
    a=0
    while [ $a -lt 200 ]; do
      tok="$k.$a"
      if id=$("$AGENT" submit --socket "$TMP/run/crash.sock" --time 30s -- "$TMP/mark.sh" "$tok" "$TMP/marks" 2>/dev/null); then
        echo "$tok $id" >>"$TMP/acked"; break
      fi
      a=$((a + 1)); sleep 0.02
    done
    [ $a -ge 200 ] && break
    k=$((k + 1))
  done
  echo done >"$TMP/submitter.done"
) &
submitter=$!
crash_ok=1
kills=1
while [ $kills -le 10 ]; do
  sleep "0.$(random_ms 150 900)"
  kill9_agent crash
  cp "$TMP/acked" "$TMP/acked.before"
  start_agent crash || { crash_ok=0; break; }
  ag crash queue --json >"$TMP/cq.json" && ag crash history --limit 100000 --json >"$TMP/ch.json" &&
    $CHECK intact "$TMP/acked.before" "$TMP/cq.json" "$TMP/ch.json" >"$TMP/out" 2>&1 ||
    { fail "crash $kills: $(cat "$TMP/out")"; crash_ok=0; }
  kills=$((kills + 1))
done
n=0; while [ ! -f "$TMP/submitter.done" ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done
kill "$submitter" 2>/dev/null # bounded: never wait for a stuck load
wait "$submitter" 2>/dev/null
wait_idle crash 60 || fail "crash load did not drain"
ag crash queue --json >"$TMP/cq.json"; ag crash history --limit 100000 --json >"$TMP/ch.json"
if $CHECK crash "$TMP/acked" "$TMP/marks" "$TMP/ch.json" "$TMP/cq.json" >"$TMP/out" 2>&1 && [ $crash_ok = 1 ]; then pass
else fail "crash test: $(cat "$TMP/out")"; fi
echo "crash test: $(tail -1 "$TMP/out"), 10 SIGKILLs"
[ "$(wc -l <"$TMP/acked")" = 500 ] && pass || fail "only $(wc -l <"$TMP/acked") of 500 submissions acknowledged"
"$FLEETSIM" replay --quiet "$TMP/crash.state/trace.jsonl" >/dev/null 2>"$TMP/err" && pass ||
  fail "the trace after ten crashes does not replay: $(head -3 "$TMP/err")"
stop_agent crash

# ---- a full state disk: no job recorded as failed that did not fail, none run twice, recovery by itself ----
if [ "$(id -u)" != 0 ]; then
  skip "full-disk test needs root (mount -t tmpfs -o size=4m)"
elif ! mkdir -p "$TMP/full.state" || ! mount -t tmpfs -o size=4m fleetsim-test "$TMP/full.state" 2>"$TMP/err"; then
  skip "full-disk test: cannot mount a tmpfs: $(cat "$TMP/err")"
else
  write_config full "policy = fcfs+easy"
  start_agent full || { umount "$TMP/full.state"; finish agent; exit 1; }
  full_pid=$(cat "$TMP/full.pid")
  : >"$TMP/fmarks"; : >"$TMP/facked"; : >"$TMP/frefused"
  (
    cd "$TMP/work" || exit 1
    k=1
    while [ $k -le 200 ]; do
      a=0 rq=
      [ $((k % 5)) = 0 ] && rq=--requeue
      while [ $a -lt 300 ]; do
        if id=$("$AGENT" submit --socket "$TMP/run/full.sock" --time 30s $rq -- "$TMP/mark.sh" "f$k" "$TMP/fmarks" 2>"$TMP/ferr.$k"); then
          echo "f$k $id" >>"$TMP/facked"; break
        fi
        cat "$TMP/ferr.$k" >>"$TMP/frefused"
        a=$((a + 1)); sleep 0.05
      done
      [ $a -ge 300 ] && break
      k=$((k + 1))
    done
    echo done >"$TMP/fsubmitter.done"
  ) &
  fsub=$!
  _n=0; while [ "$(wc -l <"$TMP/facked")" -lt 60 ] && [ $_n -lt 300 ]; do sleep 0.05; _n=$((_n + 1)); done
  dd if=/dev/zero of="$TMP/full.state/filler" bs=4k 2>/dev/null # the disk is full now
  sleep 3
  ag full status >"$TMP/fstatus" 2>&1
  rm -f "$TMP/full.state/filler" # space returns
  n=0; while [ ! -f "$TMP/fsubmitter.done" ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n + 1)); done
  kill "$fsub" 2>/dev/null; wait "$fsub" 2>/dev/null
  wait_idle full 60 || fail "full-disk load did not drain"
  grep -q "STATE STORE CANNOT WRITE: .*database or disk is full" "$TMP/fstatus" && pass ||
    fail "status while the disk was full: $(cat "$TMP/fstatus")"
  grep -q "state store full or read-only (.*): the agent accepts no job until it can write; free space in '$TMP/full.state'" "$TMP/frefused" &&
    pass || fail "no clear refusal while the disk was full: $(sort -u "$TMP/frefused" | head -3)"
  grep -q "state store writes again: resuming" "$TMP/full.log" && pass || fail "the agent did not say it resumed"
  ag full queue --json >"$TMP/fq.json"; ag full history --limit 100000 --json >"$TMP/fh.json"
  if $CHECK crash "$TMP/facked" "$TMP/fmarks" "$TMP/fh.json" "$TMP/fq.json" >"$TMP/out" 2>&1; then pass
  else fail "full-disk test: $(cat "$TMP/out")"; fi
  [ "$(wc -l <"$TMP/facked")" = 200 ] && pass || fail "only $(wc -l <"$TMP/facked") of 200 submissions acknowledged"
  [ "$(cat "$TMP/full.pid")" = "$full_pid" ] && kill -0 "$full_pid" 2>/dev/null && pass || fail "the agent did not survive the full disk"
  echo "full disk: $(tail -1 "$TMP/out"), $(sort -u "$TMP/frefused" | grep -c 'state store full') kinds of refusal while full"
  stop_agent full
  umount "$TMP/full.state"
fi

# ---- HTTP: bearer token, /metrics, promtool ----
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "fleetsim-test-token-0123456789" >"$TMP/token"; chmod 600 "$TMP/token"
write_config web "http_listen = 127.0.0.1:$port" "http_token_file = $TMP/token"
start_agent web || { finish agent; exit 1; }
ag web submit -- true >/dev/null; wait_idle web 5
$CHECK http GET "http://127.0.0.1:$port/metrics" >"$TMP/out"
[ "$(head -1 "$TMP/out")" = 401 ] && pass || fail "GET /metrics without a token: $(head -1 "$TMP/out")"
$CHECK http GET "http://127.0.0.1:$port/metrics" wrong-token-0123456789 >"$TMP/out"
[ "$(head -1 "$TMP/out")" = 401 ] && pass || fail "GET /metrics with a wrong token: $(head -1 "$TMP/out")"
$CHECK http POST "http://127.0.0.1:$port/api" "" '{"op":"queue"}' >"$TMP/out"
[ "$(head -1 "$TMP/out")" = 401 ] && pass || fail "POST /api without a token: $(head -1 "$TMP/out")"
$CHECK http GET "http://127.0.0.1:$port/metrics" "$(cat "$TMP/token")" >"$TMP/out"
[ "$(head -1 "$TMP/out")" = 200 ] && pass || fail "GET /metrics with the token: $(head -1 "$TMP/out")"
python3 -c 'import sys, urllib.request; r = urllib.request.urlopen(urllib.request.Request(sys.argv[1], headers={"Authorization": "bearer " + sys.argv[2]})); print(r.status)' \
  "http://127.0.0.1:$port/metrics" "$(cat "$TMP/token")" >"$TMP/lc" 2>&1
[ "$(cat "$TMP/lc")" = 200 ] && pass || fail "'Authorization: bearer' (lower case): $(tail -1 "$TMP/lc")"
tail -n +2 "$TMP/out" >"$TMP/metrics.txt"
grep -q '^fleetsim_job_wait_seconds_bucket{le="+Inf"} 1$' "$TMP/metrics.txt" && pass || fail "wait histogram"
grep -q '^fleetsim_queued_jobs 0$' "$TMP/metrics.txt" && pass || fail "queue gauge"
if command -v promtool >/dev/null 2>&1; then
  check "promtool check metrics (fake inventory)" promtool check metrics <"$TMP/metrics.txt"
else
  skip "promtool not installed (Debian package 'prometheus'; 'make deps' installs it)"
fi
# DCGM names for the fake inventory's GPUs too (its memory size, zeros where it knows nothing)
[ "$(grep -c '^DCGM_FI_DEV_FB_FREE{' "$TMP/metrics.txt")" = 16 ] &&
  grep -q '^DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-fa4e0000-0000-4000-8000-000000000000",pci_bus_id="[0-9a-f:.]*",device="nvidia0",model_name="NVIDIA H100 80GB HBM3",Hostname="gpu01"} 81559$' "$TMP/metrics.txt" &&
  grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="7",.*Hostname="gpu02"} 0$' "$TMP/metrics.txt" && pass ||
  fail "DCGM series for the fake inventory: $(grep '^DCGM_FI_DEV_FB_FREE' "$TMP/metrics.txt" | head -2)"
grep -q '^fleetsim_gpu_drained{node="gpu01",gpu="0",UUID="GPU-fa4e0000-0000-4000-8000-000000000000"} 0$' "$TMP/metrics.txt" &&
  ! grep -q 'reason=' "$TMP/metrics.txt" && pass || fail "fleetsim_gpu_drained must carry no free text: $(grep drained "$TMP/metrics.txt" | head -2)"
# the GPU-to-job mapping: dcgm-exporter's hpc_job label and a gauge; the job's cgroup figures
HJ=$(ag web submit --time 30s -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 20')
wait_state web "$HJ" running 5 || fail "hpc_job test job did not start"
sleep 0.5
$CHECK http GET "http://127.0.0.1:$port/metrics" "$(cat "$TMP/token")" | tail -n +2 >"$TMP/metrics2.txt"
grep -q "^DCGM_FI_DEV_FB_USED{gpu=\"0\",.*Hostname=\"gpu01\",hpc_job=\"$HJ\"} 0\$" "$TMP/metrics2.txt" &&
  grep -q "^fleetsim_gpu_job{node=\"gpu01\",gpu=\"0\",UUID=\"[^\"]*\"} $HJ\$" "$TMP/metrics2.txt" &&
  grep -q '^fleetsim_gpu_job{node="gpu01",gpu="1",UUID="[^"]*"} 0$' "$TMP/metrics2.txt" && pass ||
  fail "GPU-to-job mapping: $(grep -E 'hpc_job|fleetsim_gpu_job' "$TMP/metrics2.txt" | head -3)"
if [ "$(id -u)" = 0 ]; then
  grep -q "^fleetsim_job_cpu_seconds_total{hpc_job=\"$HJ\"} [0-9.]*[1-9]" "$TMP/metrics2.txt" && pass ||
    fail "no CPU time from the job's cgroup: $(grep fleetsim_job_cpu "$TMP/metrics2.txt")"
fi
if command -v promtool >/dev/null 2>&1; then
  check "promtool check metrics (a job running: hpc_job, cgroup figures)" promtool check metrics <"$TMP/metrics2.txt"
fi
ag web cancel "$HJ" >/dev/null
$CHECK http POST "http://127.0.0.1:$port/api" "$(cat "$TMP/token")" '{"op":"queue"}' >"$TMP/out"
[ "$(head -1 "$TMP/out")" = 200 ] && grep -q '"ok":true' "$TMP/out" && pass || fail "POST /api queue: $(cat "$TMP/out")"
$CHECK http POST "http://127.0.0.1:$port/api" "$(cat "$TMP/token")" '{"op":"submit","job":{"argv":["true"],"gpus":1,"cwd":"/"}}' >"$TMP/out"
[ "$(head -1 "$TMP/out")" = 403 ] && pass || fail "submit over HTTP must be refused: $(cat "$TMP/out")"
$CHECK http POST "http://127.0.0.1:$port/api" "$(cat "$TMP/token")" '{"op":"cancle","id":1}' >"$TMP/out"
[ "$(head -1 "$TMP/out")" = 400 ] && grep -q "did you mean 'cancel'" "$TMP/out" && pass || fail "bad op over HTTP: $(cat "$TMP/out")"
stop_agent web
write_config remote "http_listen = 0.0.0.0:$port" "http_token_file = $TMP/token"
expect_exit 2 "a non-loopback listener needs http_allow_remote" "$AGENT" run --config "$TMP/remote.conf"
grep -q "is not a loopback address" "$TMP/err" && pass || fail "remote listen: $(cat "$TMP/err")"

# ---- floods: per-uid connection and request limits, idle timeouts, HTTP slots ----
if [ "$(id -u)" != 0 ] || ! $NOBODY /usr/bin/python3 -c pass 2>/dev/null; then
  skip "flood limits need root and /usr/bin/python3 (to flood as uid 65534 with setpriv)"
else
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  write_config flood "http_listen = 127.0.0.1:$port" "http_token_file = $TMP/token" "max_conns_per_uid = 8" \
    "max_requests_per_uid = 5" "conn_idle_timeout = 2s"
  start_agent flood || { finish agent; exit 1; }
  FLOOD="/usr/bin/python3 $ROOT/tests/agent/flood.py"
  $NOBODY $FLOOD unix "$TMP/run/flood.sock" 20 4 >"$TMP/flood.out" 2>"$TMP/flood.err" &
  fl=$!
  _n=0; while [ $_n -lt 100 ] && ! grep -q ready "$TMP/flood.err" 2>/dev/null; do sleep 0.05; _n=$((_n + 1)); done
  expect_exit 0 "root is served while uid 65534 holds its connections" ag flood status
  wait $fl
  grep -q "^opened 20 refused 12 line .*uid 65534 has 8 connections open (max_conns_per_uid)" "$TMP/flood.out" && pass ||
    fail "per-uid connection limit: $(cat "$TMP/flood.out" "$TMP/flood.err")"
  grep -q "^closed 8 of 8" "$TMP/flood.out" && pass || fail "idle connections not closed: $(cat "$TMP/flood.out")"
  : >"$TMP/rate"
  for k in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30; do
    $NOBODY "$AGENT" status --socket "$TMP/run/flood.sock" >/dev/null 2>>"$TMP/rate"
  done
  grep -q "uid 65534 makes more than 5 requests a second (max_requests_per_uid)" "$TMP/rate" && pass ||
    fail "no request was rate-limited in a burst of 30: $(head -2 "$TMP/rate")"
  for k in 1 2 3 4 5 6 7 8 9 10 11 12; do ag flood status >/dev/null || fail "root was rate-limited"; done
  $FLOOD tcp "127.0.0.1:$port" 20 4 >"$TMP/flood.out" 2>"$TMP/flood.err"
  grep -q "^opened 20 refused 4 " "$TMP/flood.out" && grep -q "^closed 16 of 16" "$TMP/flood.out" && pass ||
    fail "HTTP: 16 pending slots, closed after the header timeout: $(cat "$TMP/flood.out" "$TMP/flood.err")"
  $CHECK http GET "http://127.0.0.1:$port/metrics" "$(cat "$TMP/token")" >"$TMP/out"
  [ "$(head -1 "$TMP/out")" = 200 ] && grep -q '^fleetsim_connections_refused_total \(1[6-9]\|[2-9][0-9]\)' "$TMP/out" &&
    grep -q '^fleetsim_api_requests_total{result="rate_limited"} [1-9]' "$TMP/out" && pass ||
    fail "metrics after the floods: $(grep -E 'refused|rate_limited' "$TMP/out")"
  stop_agent flood
fi

# ---- NVML through a fake libnvidia-ml.so.1: inventory, XID drain, DCGM metrics ----
if cc -shared -fPIC -o "$TMP/lib/libnvidia-ml.so.1" tests/agent/fake_nvml/fake_nvml.c 2>"$TMP/err"; then
  LD_LIBRARY_PATH="$TMP/lib" "$AGENT" inventory --inventory nvml --json >"$TMP/nv.json" 2>"$TMP/err"
  [ "$($CHECK get "$TMP/nv.json" nodes 0 gpus 1 uuid)" = GPU-0b5e55ed-0000-4000-8000-000000000001 ] && pass ||
    fail "NVML inventory: $(cat "$TMP/nv.json" "$TMP/err")"
  [ "$($CHECK get "$TMP/nv.json" nodes 0 gpus 0 memory_bytes)" = 85520809984 ] && pass || fail "NVML memory"
  [ "$($CHECK get "$TMP/nv.json" nodes 0 gpus 0 nvlink_peers)" = "[1]" ] && pass || fail "NVML NVLink peers"
  [ "$($CHECK get "$TMP/nv.json" nvml_features)" = "nvlink ecc xid samples" ] && pass ||
    fail "a missing NVML symbol must only drop its feature: $($CHECK get "$TMP/nv.json" nvml_features)"
  port2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  write_config nv "http_listen = 127.0.0.1:$port2" "http_token_file = $TMP/token"
  sed -i "s|^inventory = .*|inventory = nvml|" "$TMP/nv.conf"
  AGENT_ENV="LD_LIBRARY_PATH=$TMP/lib FAKE_NVML_XID=79"
  start_agent nv
  AGENT_ENV=
  ag nv nodes --json >"$TMP/nodes.json"
  [ "$($CHECK get "$TMP/nodes.json" nodes 0 gpu_list 1 drain_reason)" = "critical xid 79" ] && pass ||
    fail "XID 79 did not drain GPU 1: $(cat "$TMP/nodes.json")"
  grep -q 'gpu drained by a health rule' "$TMP/nv.log" && pass || fail "no log line for the XID drain"
  J=$(ag nv submit -- "$TMP/cvd.sh" "$TMP/cvd")
  wait_state nv "$J" completed 5 || fail "job on NVML inventory did not run"
  [ "$(cat "$TMP/cvd/cvd-$J.out" 2>/dev/null)" = GPU-0b5e55ed-0000-4000-8000-000000000000 ] && pass ||
    fail "the job must get the healthy GPU 0: $(cat "$TMP/cvd/cvd-$J.out" 2>/dev/null)"
  $CHECK http GET "http://127.0.0.1:$port2/metrics" "$(cat "$TMP/token")" | tail -n +2 >"$TMP/metrics-nv.txt"
  grep -q '^DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-0b5e55ed-0000-4000-8000-000000000000",pci_bus_id="00000000:18:00.0",device="nvidia0",model_name="NVIDIA H100 80GB HBM3",Hostname=' "$TMP/metrics-nv.txt" &&
    grep -q '^DCGM_FI_DEV_XID_ERRORS{gpu="1".*} 79$' "$TMP/metrics-nv.txt" && pass ||
    fail "DCGM series: $(grep DCGM "$TMP/metrics-nv.txt" | head -5)"
  if command -v promtool >/dev/null 2>&1; then
    check "promtool check metrics (NVML, DCGM names)" promtool check metrics <"$TMP/metrics-nv.txt"
  else
    skip "promtool not installed"
  fi
  stop_agent nv
else
  skip "cannot build the fake NVML library: $(head -1 "$TMP/err")"
fi

# ---- preemption: the agent carries out POLICY_PREEMPT ----
# One 8-GPU node. A long job (8 GPUs, 60 s limit) runs; a short one (8 GPUs,
# 5 s) arrives: each preemptive policy stops the long job (SIGTERM), starts the
# short one, then restarts the long one with FLEETSIM_ATTEMPT=2; the recorded
# trace replayed by fleetsim starts them in the same order.
# appends its attempt number to FILE, then runs until GATE appears (the test
# lets the long job end only after the short one ran: a timed job could end
# before the short one came, on a loaded machine)
cat >"$TMP/attempt.sh" <<'EOF'
#!/bin/sh
echo "$FLEETSIM_ATTEMPT" >>"$1"
while [ ! -e "$2" ]; do sleep 0.05; done
EOF
chmod 755 "$TMP/attempt.sh"
for policy in srtf "tiresias(thresholds_gpu_s=4)" "fcfs+easy+preempt(team_tier=1:1)"; do
  name=pre$(echo "$policy" | tr -cd 'a-z' | cut -c1-12)
  write_config "$name" "policy = $policy"
  sed -i "s#^inventory = .*#inventory = $TMP/inv1.json#" "$TMP/$name.conf"
  start_agent "$name" || continue
  LONG=$(ag "$name" submit --gpus 8 --time 60s --team batch -- "$TMP/attempt.sh" "$TMP/$name.attempts" "$TMP/pub/$name.go")
  wait_state "$name" "$LONG" running 20 || fail "$policy: the long job did not start"
  sleep 1.2
  SHORT=$(ag "$name" submit --gpus 8 --time 5s --team urgent -- sleep 0.3)
  wait_state "$name" "$SHORT" completed 20 || fail "$policy: the short job did not run"
  touch "$TMP/pub/$name.go"
  wait_state "$name" "$LONG" completed 20 || fail "$policy: the long job did not finish after its restart"
  [ "$(cat "$TMP/$name.attempts" 2>/dev/null | tr '\n' ' ')" = "1 2 " ] && pass ||
    fail "$policy: the long job's attempts saw FLEETSIM_ATTEMPT '$(cat "$TMP/$name.attempts" 2>/dev/null | tr '\n' ' ')', want '1 2'"
  [ "$(job_field "$name" "$LONG" preemptions)" = 1 ] && [ "$(job_field "$name" "$LONG" attempts)" = 2 ] && pass ||
    fail "$policy: long job: preemptions $(job_field "$name" "$LONG" preemptions), attempts $(job_field "$name" "$LONG" attempts)"
  grep -q "job preempted by the policy.*job=$LONG " "$TMP/$name.log" && pass || fail "$policy: no log line for the preemption"
  stop_agent "$name"
  agent_order=$($CHECK trace-order "$TMP/$name.state/trace.jsonl")
  "$FLEETSIM" replay --quiet --policy "$policy" --jobs-csv "$TMP/$name.csv" "$TMP/$name.state/trace.jsonl" \
    >/dev/null 2>"$TMP/err" || fail "replay $policy: $(cat "$TMP/err")"
  sim_order=$($CHECK csv-order "$TMP/$name.csv")
  if [ "$agent_order" = "$LONG $SHORT" ] && [ "$agent_order" = "$sim_order" ]; then pass
  else fail "preemption closed loop $policy: agent started $agent_order; replay starts $sim_order"; fi
  echo "preemption $policy: long job $LONG preempted for $SHORT, restarted as attempt 2; replay starts $sim_order"
done

# ---- a misbehaving policy plugin never takes the daemon down ----
# The plugin (tests/policy/plugin_misbehave.c) is plain FCFS until a job of
# exactly 3 GPUs waits; then it crashes, hangs, or starts a job twice.
bad=$ROOT/$BUILD/tests/policy/plugin_misbehave.so
for mode in crash loop double; do
  name=bad$mode
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  write_config "$name" "policy = $bad:$mode@3" "decide_timeout = 1s" \
    "http_listen = 127.0.0.1:$port" "http_token_file = $TMP/token"
  start_agent "$name" || continue
  A=$(ag "$name" submit --gpus 1 --time 30s -- sh -c "$(gate "$TMP/pub/$name.A")")
  wait_state "$name" "$A" running 20 || fail "$mode: the first job did not start"
  P=$(ag "$name" submit --gpus 3 --time 30s -- true)
  case $mode in
    crash) want="POLICY FAILED: policy '$bad:crash@3' crashed with SIGSEGV (segmentation fault) in decide() at t=" ;;
    loop) want="POLICY FAILED: policy '$bad:loop@3' did not return from decide() within 1 s at t=" ;;
    double) want="" ;;
  esac
  sleep 1.5 # the loop mode needs its 1 s limit
  [ -n "$want" ] && wait_status "$name" "$want" 10
  kill -0 "$(cat "$TMP/$name.pid")" 2>/dev/null && pass || fail "$mode: the daemon died"
  ag "$name" status >"$TMP/status" 2>&1 || fail "$mode: status failed: $(cat "$TMP/status")"
  touch "$TMP/pub/$name.A"
  if [ -n "$want" ]; then
    grep -qF "$want" "$TMP/status" && pass || fail "$mode: status does not report the failure: $(cat "$TMP/status")"
    grep -qF "policy failed: no new job starts" "$TMP/$name.log" && pass || fail "$mode: no log line for the failure"
    $CHECK http GET "http://127.0.0.1:$port/metrics" "$(cat "$TMP/token")" >"$TMP/out"
    grep -q '^fleetsim_policy_failed 1$' "$TMP/out" && pass || fail "$mode: /metrics lacks fleetsim_policy_failed 1"
    # the running job goes on and completes; a new job waits
    wait_state "$name" "$A" completed 20 && pass || fail "$mode: the running job did not complete"
    C=$(ag "$name" submit --gpus 1 --time 30s -- true)
    sleep 0.5
    [ "$(job_field "$name" "$C" state)" = queued ] && pass || fail "$mode: a job started after the policy failed"
    # a restart recovers the queue, fails the same way, and stays up: no crash loop
    stop_agent "$name"
    start_agent "$name" || continue
    sleep 1.5
    wait_status "$name" "$want" 10
    kill -0 "$(cat "$TMP/$name.pid")" 2>/dev/null && ag "$name" status >"$TMP/status" 2>&1 &&
      grep -qF "$want" "$TMP/status" && pass || fail "$mode: after a restart: $(cat "$TMP/status")"
    [ "$(job_field "$name" "$P" state)" = queued ] && [ "$(job_field "$name" "$C" state)" = queued ] && pass ||
      fail "$mode: the queued jobs were not kept across the restart"
  else
    # a contract breach refuses the pass (and is retried), naming the rule
    grep -qF "policy '$bad:double@3' broke the contract at t=" "$TMP/$name.log" &&
      grep -qF "started a job twice (job '$P')" "$TMP/$name.log" && pass ||
      fail "double: the refused pass is not logged: $(grep -i contract "$TMP/$name.log" | head -3)"
    grep -qF "POLICY FAILED" "$TMP/status" && fail "double: a contract breach must not fail the policy" || pass
    $CHECK http GET "http://127.0.0.1:$port/metrics" "$(cat "$TMP/token")" >"$TMP/out"
    grep -q '^fleetsim_policy_contract_violations_total [1-9]' "$TMP/out" && pass ||
      fail "double: /metrics does not count the refused pass"
  fi
  ag "$name" cancel "$P" >/dev/null 2>&1
  stop_agent "$name"
done

# ---- closed loop: the agent's trace replayed by fleetsim starts jobs in the same order ----
# (a preemptive policy and gavel's placement too; preemption itself is above)
for policy in fcfs+easy sjf+conservative tiresias fcfs+easy+gavel; do
  name=loop$(echo "$policy" | tr -cd 'a-z')
  write_config "$name" "policy = $policy"
  # one node: the simulator may spread a job over nodes, the agent runs it on one
  sed -i "s#^inventory = .*#inventory = $TMP/inv1.json#" "$TMP/$name.conf"
  start_agent "$name" || continue
  # 24 jobs in a burst: sizes 1..8 GPUs (one node), distinct run times 0.3-2.3 s, limits at least 1 s
  # above them: a job killed at its limit ends when the agent has killed it, some tens of ms past the limit,
  # and the replay ends it at the limit itself (under ASan a job's launch took 0.33 s, and a margin of 0.28 s
  # ended one so, 55 ms late, and the replay backfilled into that gap a job the agent did not)
  awk 'BEGIN { srand(6); for (k = 1; k <= 24; k++) {
         g = int(2 ^ int(rand() * 4)); r = 0.3 + ((k * 7) % 24) * 0.085;
         printf "%d %.3f %ds\n", g, r, int(r * (1 + rand())) + 2 } }' >"$TMP/$name.jobs"
  while read -r g r l; do ag "$name" submit --gpus "$g" --time "$l" -- sleep "$r" >/dev/null; done <"$TMP/$name.jobs"
  wait_idle "$name" 60 || fail "$policy closed-loop jobs did not finish"
  stop_agent "$name"
  agent_order=$($CHECK trace-order "$TMP/$name.state/trace.jsonl")
  "$FLEETSIM" replay --quiet --policy "$policy" --jobs-csv "$TMP/$name.csv" "$TMP/$name.state/trace.jsonl" \
    >/dev/null 2>"$TMP/err" || fail "replay $policy: $(cat "$TMP/err")"
  sim_order=$($CHECK csv-order "$TMP/$name.csv")
  if [ -n "$agent_order" ] && [ "$agent_order" = "$sim_order" ]; then pass
  else fail "closed loop $policy: agent started $agent_order; replay starts $sim_order"; fi
  echo "closed loop $policy: $(echo "$agent_order" | wc -w) jobs, same start order in agent and replay"
done

finish agent
