#!/bin/sh
# tests/policy/run.sh: the policy contract suite (tests/policy/contract.c)
# against every built-in spec and the example plugin, then the plugin and
# `fleetsim policy` paths as users meet them. Its closing line adds the
# contract suite's counts to these checks'.
. tests/lib.sh
example=$BUILD/policies/examples/example_policy.so
bad_abi=$BUILD/tests/policy/plugin_bad_abi.so
demo=traces/examples/demo-gpu-cluster.swf

"$BUILD/tests/policy_contract" "$example" >"$TMP/contract" 2>&1
cat "$TMP/contract"
line=$(grep -E '^policy: [0-9]+ passed' "$TMP/contract")
PASSED=$(echo "$line" | sed -E 's/policy: ([0-9]+) passed.*/\1/')
FAILED=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
[ -n "$line" ] || fail "contract suite printed no result line"

# plugins: load and replay; ABI mismatch and missing files are clear errors
check "replay with the example plugin" "$FLEETSIM" replay -q --policy "$example" $demo
"$FLEETSIM" replay -q --json --policy "$example" $demo >"$TMP/a.json"
"$FLEETSIM" replay -q --json --policy "$example" $demo >"$TMP/b.json"
if cmp -s "$TMP/a.json" "$TMP/b.json"; then pass; else fail "plugin replay is not deterministic"; fi
expect_exit 2 "plugin with a wrong ABI" "$FLEETSIM" replay -q --policy "$bad_abi" $demo
if grep -q "has ABI version 42, but this fleetsim needs 3 to 4: rebuild it" "$TMP/err"; then pass
else fail "ABI mismatch message: $(cat "$TMP/err")"; fi
expect_exit 2 "plugin built against ABI 1" "$FLEETSIM" replay -q --policy "$BUILD/tests/policy/plugin_old_abi.so" $demo
if grep -q "has ABI version 1, but this fleetsim needs 3 to 4: rebuild it against this fleetsim's policies/policy.h (version 2 added GPU fractions" "$TMP/err"; then pass
else fail "ABI 1 message: $(cat "$TMP/err")"; fi
expect_exit 2 "plugin built against ABI 2" "$FLEETSIM" replay -q --policy "$BUILD/tests/policy/plugin_abi2.so" $demo
if grep -q "has ABI version 2, but this fleetsim needs 3 to 4: rebuild it against this fleetsim's policies/policy.h (version 3 added a job's node shape, policy_job.nodes" "$TMP/err"; then pass
else fail "ABI 2 message: $(cat "$TMP/err")"; fi
# ABI 4 only added information to the view: a plugin built against 3 loads
check "plugin built against ABI 3 loads" "$FLEETSIM" policy describe "$BUILD/tests/policy/plugin_abi3.so"
# ABI 2: the example plugin places fractional and GPU-model-constrained jobs
# the checker accepts (a refused pass would exit 1)
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,2,V100M16\nn1,1,1,4,T4\n' >"$TMP/nodes.csv"
cat >"$TMP/shared.jsonl" <<'JSONL'
{"id":1,"submit_s":0,"runtime_s":100,"gpus":1,"gpu_milli":500}
{"id":2,"submit_s":0,"runtime_s":100,"gpus":1,"gpu_milli":300,"gpu_model":"V100M16"}
{"id":3,"submit_s":1,"runtime_s":50,"gpus":2,"gpu_model":"V100M16"}
{"id":4,"submit_s":2,"runtime_s":10,"gpus":4}
JSONL
check "example plugin with shares and models" "$FLEETSIM" replay -q --policy "$example" --machines "$TMP/nodes.csv" "$TMP/shared.jsonl"
if grep -q "jobs         4 run" "$TMP/out"; then pass; else fail "example plugin shares: $(cat "$TMP/out")"; fi
expect_exit 3 "missing plugin" "$FLEETSIM" replay -q --policy ./no-such-policy.so $demo
expect_exit 2 "plugin params twice" "$FLEETSIM" replay -q --policy "$example:x" --policy-params y $demo
# built-in parameters: by spec, by --policy-params, and errors
"$FLEETSIM" replay -q --json --policy "fairshare(half_life_s=3600)+easy" $demo >"$TMP/p1.json"
"$FLEETSIM" replay -q --json --policy "fairshare+easy" --policy-params half_life_s=3600 $demo >"$TMP/p2.json"
if python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); a.pop("policy"); b.pop("policy"); assert a==b' "$TMP/p1.json" "$TMP/p2.json"; then pass
else fail "--policy-params differs from parameters in the spec"; fi
expect_exit 2 "unknown parameter" "$FLEETSIM" replay -q --policy "fairshare(halflife_s=3)" $demo
if grep -q "unknown parameter 'halflife_s' for 'fairshare'; did you mean 'half_life_s'?" "$TMP/err"; then pass
else fail "unknown parameter message: $(cat "$TMP/err")"; fi
expect_exit 2 "parameter out of range" "$FLEETSIM" replay -q --policy "tiresias(thresholds_gpu_s=5;3)" $demo
expect_exit 2 "preemption with conservative" "$FLEETSIM" replay -q --policy "fcfs+conservative+preempt" $demo
expect_exit 2 "two placements" "$FLEETSIM" replay -q --policy "fcfs+pack+spread" $demo
# Misbehaving plugins (tests/policy/plugin_misbehave.c): a crash, an abort,
# a decide() that never returns and a double start each end the run with
# one exact message naming the plugin, the signal or limit, and the time.
bad=$BUILD/tests/policy/plugin_misbehave.so
expect_message() { # CODE NAME MESSAGE COMMAND...
  want=$1 name=$2 msg=$3; shift 3
  "$@" >"$TMP/out" 2>"$TMP/err"; got=$?
  if [ "$got" = "$want" ] && grep -qxF "$msg" "$TMP/err"; then pass
  else fail "$name: exit $got (want $want), stderr: $(cat "$TMP/err")"; fi
}
expect_message 4 "replay: crashing plugin" \
  "fleetsim: error: policy '$bad:crash' crashed with SIGSEGV (segmentation fault) in decide() at t=1927000000 us" \
  "$FLEETSIM" replay -q --policy "$bad:crash" $demo
expect_message 4 "replay: aborting plugin" \
  "fleetsim: error: policy '$bad:abort' crashed with SIGABRT (abort) in decide() at t=1927000000 us" \
  "$FLEETSIM" replay -q --policy "$bad:abort" $demo
expect_message 4 "replay: looping plugin" \
  "fleetsim: error: policy '$bad:loop' did not return from decide() within 1 s at t=1927000000 us" \
  "$FLEETSIM" replay -q --decide-timeout 1 --policy "$bad:loop" $demo
expect_message 4 "replay: double-starting plugin" \
  "fleetsim: error: policy '$bad:double' broke the contract at t=1927000000 us: started a job twice (job '1')" \
  "$FLEETSIM" replay -q --policy "$bad:double" $demo
# create() that fills its error buffer without a NUL: cut, never overread
expect_exit 2 "plugin create() error without NUL" "$FLEETSIM" replay -q --policy "$bad:bogus" $demo
if grep -q "^fleetsim: error: policy '$bad:bogus' (misbehave): xxxx*$" "$TMP/err"; then pass
else fail "create() error message: $(cat "$TMP/err")"; fi
# bench: the misbehaving cells fail with the same messages; every other cell is printed
cat >"$TMP/suite.yaml" <<EOF
policies:
  - fcfs+easy
  - name: crash
    spec: $bad:crash
  - name: loop
    spec: $bad:loop
  - name: double
    spec: $bad:double
  - sjf+easy
workloads:
  - name: demo
    trace: $demo
EOF
"$FLEETSIM" bench -q -j 2 --decide-timeout 1 --json "$TMP/suite.yaml" >"$TMP/bench.json" 2>"$TMP/bench.err"
rc=$?
if [ $rc = 4 ] && python3 - "$TMP/bench.json" "$bad" <<'PY'
import json, sys
cells = {c["policy"]: c for c in json.load(open(sys.argv[1]))["cells"]}
bad = sys.argv[2]
want = {
    "crash": f"policy '{bad}:crash' crashed with SIGSEGV (segmentation fault) in decide() at t=1927000000 us",
    "loop": f"policy '{bad}:loop' did not return from decide() within 1 s at t=1927000000 us",
    "double": f"policy '{bad}:double' broke the contract at t=1927000000 us: started a job twice (job '1')",
}
for name, note in want.items():
    assert cells[name]["status"] == "failed" and cells[name]["note"] == note, (name, cells[name])
for name in ("fcfs+easy", "sjf+easy"):
    assert cells[name]["status"] == "ok" and cells[name]["jobs"] > 0, (name, cells[name])
PY
then pass; else fail "bench with misbehaving plugins: exit $rc: $(cat "$TMP/bench.err")"; fi
# the contract suite names each one and fails it
"$BUILD/tests/policy_contract" --decide-timeout 1 "$bad:crash" "$bad:loop" "$bad:double" >"$TMP/c.out" 2>&1
rc=$?
for m in "FAIL policy $bad:crash: views: policy '$bad:crash' crashed with SIGSEGV (segmentation fault) in decide() at t=" \
         "FAIL policy $bad:loop: views: policy '$bad:loop' did not return from decide() within 1 s at t=" \
         "FAIL policy $bad:double: views: policy '$bad:double' broke the contract at t="; do
  if [ $rc = 1 ] && grep -qF "$m" "$TMP/c.out"; then pass
  else fail "contract suite: no line '$m' (exit $rc)"; grep -F "$bad" "$TMP/c.out" | head -5; fi
done
if grep -qF "started a job twice" "$TMP/c.out"; then pass; else fail "contract suite: double start not named"; fi

# A plugin is a policy everywhere: forecast, a bench suite on a scenario's
# generated workload, and `trace generate` writes those very jobs.
scen=tests/policy/plugin-scenario.yaml
check "trace generate" "$FLEETSIM" trace generate -q "$scen" "$TMP/gen1.jsonl"
"$FLEETSIM" trace generate -q "$scen" "$TMP/gen2.jsonl"
"$FLEETSIM" trace generate -q --replication 1 "$scen" "$TMP/gen3.jsonl"
if cmp -s "$TMP/gen1.jsonl" "$TMP/gen2.jsonl" && ! cmp -s "$TMP/gen1.jsonl" "$TMP/gen3.jsonl"; then pass
else fail "trace generate: not deterministic per replication"; fi
generated=$(($(wc -l <"$TMP/gen1.jsonl") - 1))
[ "$generated" -gt 100 ] && pass || fail "trace generate wrote $generated jobs"
check "the generated trace replays on the scenario's cluster" \
  "$FLEETSIM" replay -q --scenario "$scen" "$TMP/gen1.jsonl"
expect_exit 2 "trace generate without a workload section" "$FLEETSIM" trace generate scenarios/examples/tiny.yaml "$TMP/x.jsonl"
grep -q "has no workload section" "$TMP/err" && pass || fail "trace generate message: $(cat "$TMP/err")"
# forecast with a plugin: runs, and -j does not change the result
"$FLEETSIM" forecast -q -j1 --json --policy "$example" "$scen" >"$TMP/f1.json" 2>"$TMP/err"; rc1=$?
"$FLEETSIM" forecast -q -j3 --json --policy "$example" "$scen" >"$TMP/f3.json" 2>>"$TMP/err"; rc3=$?
if [ $rc1 = 0 ] && [ $rc3 = 0 ] && cmp -s "$TMP/f1.json" "$TMP/f3.json" &&
   python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["completed"] == 3 and d["periods"][0]["utilization"]["mean"] > 0.1' "$TMP/f1.json"
then pass; else fail "forecast --policy plugin: exit $rc1/$rc3: $(cat "$TMP/err")"; fi
# a plugin that crashes in a forecast names itself
"$FLEETSIM" forecast -q -j1 --policy "$bad:crash" "$scen" >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc != 0 ] && grep -qF "policy '$bad:crash' crashed with SIGSEGV (segmentation fault) in decide() at t=" "$TMP/err"; then pass
else fail "forecast with a crashing plugin: exit $rc: $(cat "$TMP/err")"; fi
# bench: the plugin and a built-in on the scenario's generated workload
cat >"$TMP/scen-suite.yaml" <<EOF
policies:
  - fcfs+easy
  - name: plugin
    spec: $example
workloads:
  - name: generated
    scenario: $scen
EOF
if "$FLEETSIM" bench -q -j1 --json "$TMP/scen-suite.yaml" >"$TMP/sb.json" 2>"$TMP/err" &&
   python3 - "$TMP/sb.json" "$generated" <<'PY'
import json, sys
cells = {c["policy"]: c for c in json.load(open(sys.argv[1]))["cells"]}
for name in ("fcfs+easy", "plugin"):
    c = cells[name]
    assert c["status"] == "ok" and c["workload"] == "generated", c
    assert 0.9 * int(sys.argv[2]) <= c["jobs"] <= int(sys.argv[2]), (c["jobs"], sys.argv[2])  # those done by the horizon
PY
then pass; else fail "bench on a scenario workload: $(cat "$TMP/err")"; fi

# fleetsim policy
check "policy list" "$FLEETSIM" policy list
"$FLEETSIM" policy list >"$TMP/list"
for name in fcfs multifactor fairshare tiresias srtf easy greedy pack first-fit best-fit spread gavel preempt quota; do
  if grep -qE "^  $name " "$TMP/list"; then pass; else fail "policy list lacks $name"; fi
done
"$FLEETSIM" policy describe quota >"$TMP/quota"
if grep -q '| guarantee ' "$TMP/quota" && grep -q '| reclaim ' "$TMP/quota"; then pass; else fail "describe quota: no parameter table"; fi
check "describe the example plugin" "$FLEETSIM" policy describe "$example"
expect_exit 2 "describe unknown" "$FLEETSIM" policy describe fairshar
if grep -q "did you mean 'fairshare'" "$TMP/err"; then pass; else fail "describe suggestion: $(cat "$TMP/err")"; fi
expect_exit 3 "describe the wrong-ABI plugin" "$FLEETSIM" policy describe "$bad_abi"
expect_exit 2 "policy without subcommand" "$FLEETSIM" policy
finish policy
