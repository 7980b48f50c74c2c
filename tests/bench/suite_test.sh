#!/bin/sh
# tests/bench/suite_test.sh: `fleetsim bench` as CI meets it: the same
# results whatever -j is, the regression gate (equal runs pass; a
# deliberately worse policy fails naming its cell), JUnit, bad suites.
. tests/lib.sh
demo=traces/examples/demo-gpu-cluster.swf
cat >"$TMP/suite.yaml" <<YAML
policies:
  - {name: candidate, spec: fcfs+easy}
  - name: fair
    ordering: {name: fairshare, half_life_s: 3600}
    backfill: easy
    placement: pack
  - tiresias+spread
workloads:
  - {name: demo, trace: $demo}
  - {name: demo-300, trace: $demo, jobs: 300, nodes: 8, slots: 8}
  - {name: missing, trace: $TMP/no-such-trace.swf}
YAML
# the deliberately worse candidate: no backfilling
sed 's/spec: fcfs+easy}/spec: fcfs}/' "$TMP/suite.yaml" >"$TMP/worse.yaml"

check "bench runs" "$FLEETSIM" bench -q "$TMP/suite.yaml"
"$FLEETSIM" bench -q --json -j 1 "$TMP/suite.yaml" >"$TMP/j1.json"
"$FLEETSIM" bench -q --json -j 3 "$TMP/suite.yaml" >"$TMP/j3.json"
if cmp -s "$TMP/j1.json" "$TMP/j3.json"; then pass; else fail "bench -j 1 and -j 3 differ"; fi
"$FLEETSIM" bench "$TMP/suite.yaml" >"$TMP/table" 2>"$TMP/err"
if grep -q "skipping workload 'missing'" "$TMP/err" && grep -q '| candidate | missing | skipped' "$TMP/table"; then pass
else fail "missing trace not skipped with a message"; fi
if head -1 "$TMP/table" | grep -q '| policy | workload | jobs | wait p50 (s) | wait p95 (s) | bounded slowdown | utilization | Jain fairness (teams) | preemptions |'; then pass
else fail "table header: $(head -1 "$TMP/table")"; fi

# the gate
expect_exit 0 "equal runs pass the gate" "$FLEETSIM" bench -q --baseline "$TMP/j1.json" --tolerance 2% "$TMP/suite.yaml"
expect_exit 1 "a worse policy fails the gate" "$FLEETSIM" bench -q --baseline "$TMP/j1.json" --tolerance 2% --junit "$TMP/junit.xml" "$TMP/worse.yaml"
if grep -q "regression: wait_p95_s of policy 'candidate' on workload 'demo'" "$TMP/err"; then pass
else fail "regressed cell not named: $(cat "$TMP/err")"; fi
if grep -q "policy 'fair'" "$TMP/err"; then fail "an unchanged policy was flagged"; else pass; fi
if python3 - "$TMP/junit.xml" <<'PY'
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
cases = {(c.get("classname"), c.get("name")): c for c in s.findall("testcase")}
assert s.get("tests") == "9" and int(s.get("failures")) >= 1, s.attrib
assert cases[("demo", "candidate")].find("failure") is not None
assert cases[("demo", "fair")].find("failure") is None
assert cases[("missing", "fair")].find("skipped") is not None
PY
then pass; else fail "junit xml"; fi
expect_exit 0 "a loose tolerance passes" "$FLEETSIM" bench -q --baseline "$TMP/j1.json" --tolerance 100000% "$TMP/worse.yaml"

# usage and bad suites
expect_exit 2 "--tolerance without --baseline" "$FLEETSIM" bench --tolerance 2% "$TMP/suite.yaml"
expect_exit 2 "bad tolerance" "$FLEETSIM" bench --baseline "$TMP/j1.json" --tolerance lots "$TMP/suite.yaml"
expect_exit 3 "missing suite" "$FLEETSIM" bench "$TMP/nope.yaml"
expect_exit 3 "missing baseline" "$FLEETSIM" bench -q --baseline "$TMP/nope.json" "$TMP/suite.yaml"
printf 'policies: [fcfs]\nworkload:\n  - {trace: x}\n' >"$TMP/bad.yaml"
expect_exit 2 "unknown suite key" "$FLEETSIM" bench "$TMP/bad.yaml"
if grep -q "bad.yaml:2:1: error: unknown key 'workload' in the suite; did you mean 'workloads'?" "$TMP/err"; then pass
else fail "suite error message: $(cat "$TMP/err")"; fi
printf 'policies: [fifo+easy]\nworkloads:\n  - {trace: %s}\n' "$demo" >"$TMP/badpolicy.yaml"
expect_exit 2 "unknown policy in a suite" "$FLEETSIM" bench "$TMP/badpolicy.yaml"
if grep -q "policy 'fifo+easy': unknown ordering 'fifo'" "$TMP/err"; then pass; else fail "suite policy message: $(cat "$TMP/err")"; fi

# a workload's convention: the same trace under pyss's order at one instant
# gives what `replay --convention pyss` gives, and EASY differs from the default
cat >"$TMP/conv.yaml" <<YAML
policies: [fcfs+easy]
workloads:
  - {name: demo, trace: $demo}
  - {name: demo-pyss, trace: $demo, convention: pyss}
YAML
"$FLEETSIM" bench -q --json "$TMP/conv.yaml" >"$TMP/conv.json"
"$FLEETSIM" replay -q --convention pyss --json "$demo" >"$TMP/replay-pyss.json"
if python3 - "$TMP/conv.json" "$TMP/replay-pyss.json" <<'PY'
import json, sys
cells = {c["workload"]: c for c in json.load(open(sys.argv[1]))["cells"]}
replay = json.load(open(sys.argv[2]))
assert abs(cells["demo-pyss"]["bsld"] - replay["bsld_mean"]) < 1e-6, (cells["demo-pyss"], replay["bsld_mean"])
assert cells["demo-pyss"]["bsld"] != cells["demo"]["bsld"], cells
PY
then pass; else fail "bench: a workload's 'convention: pyss' is not replay --convention pyss"; fi
printf 'policies: [fcfs]\nworkloads:\n  - {trace: %s, convention: slurm}\n' "$demo" >"$TMP/badconv.yaml"
expect_exit 2 "unknown convention in a suite" "$FLEETSIM" bench "$TMP/badconv.yaml"
if grep -q "badconv.yaml:3:.*: error: unknown convention 'slurm' (fleetsim, pyss, cqsim)" "$TMP/err"; then pass
else fail "suite convention message: $(cat "$TMP/err")"; fi
# the machine size is never guessed: a headerless trace needs the suite's
# nodes/slots or machines; Alea's X.swf.machines beside an SWF log and an
# openb node list beside a pod list are read, and give what the same
# cluster written out in the suite gives
grep -v '^;' "$demo" >"$TMP/bare.swf"
printf 'policies: [fcfs+easy]\nworkloads:\n  - {name: bare, trace: %s}\n' "$TMP/bare.swf" >"$TMP/bare.yaml"
expect_exit 2 "a headerless trace without a size" "$FLEETSIM" bench -q "$TMP/bare.yaml"
if grep -q "workload 'bare': '$TMP/bare.swf' gives no machine size (no MaxNodes/MaxProcs header, no machine list beside it): set 'nodes' and 'slots', or 'machines'" "$TMP/err"; then pass
else fail "no-size message: $(cat "$TMP/err")"; fi
printf '0\tfat\t2\t64\t1\t1000\n1\tthin\t3\t16\t1\t1000\n' >"$TMP/bare.swf.machines"
printf 'policies: [fcfs+easy, tiresias]\nworkloads:\n  - {name: w, trace: %s}\n' "$TMP/bare.swf" >"$TMP/alea.yaml"
"$FLEETSIM" bench -q --json "$TMP/alea.yaml" >"$TMP/alea.json" 2>"$TMP/err" || fail "bench with X.swf.machines: $(cat "$TMP/err")"
printf 'sn,cpu_milli,memory_mib,gpu,model\na,1,1,64,fat\nb,1,1,64,fat\nc,1,1,16,thin\nd,1,1,16,thin\ne,1,1,16,thin\n' >"$TMP/nodes.csv"
printf 'policies: [fcfs+easy, tiresias]\nworkloads:\n  - {name: w, trace: %s, machines: %s}\n' "$demo" "$TMP/nodes.csv" >"$TMP/listed.yaml"
"$FLEETSIM" bench -q --json "$TMP/listed.yaml" >"$TMP/listed.json" 2>"$TMP/err" || fail "bench with machines: $(cat "$TMP/err")"
printf 'policies: [fcfs+easy, tiresias]\nworkloads:\n  - {name: w, trace: %s}\n' "$demo" >"$TMP/header.yaml"
"$FLEETSIM" bench -q --json "$TMP/header.yaml" >"$TMP/header.json"
if python3 - "$TMP/alea.json" "$TMP/listed.json" "$TMP/header.json" <<'PY'
import json, sys
a, l, h = (json.load(open(p))["cells"] for p in sys.argv[1:4])
assert all(c["status"] == "ok" for c in a + l), (a, l)
assert a == l, (a, l)  # 2 x 64 + 3 x 16 slots, from the .machines file or the list
assert a != h, (a, h)  # not the header's 16 x 8
PY
then pass; else fail "X.swf.machines / machines: not the cluster they describe"; fi
printf 'policies: [fcfs]\nworkloads:\n  - {trace: %s, nodes: 2, slots: 8, machines: %s}\n' "$demo" "$TMP/nodes.csv" >"$TMP/both.yaml"
expect_exit 2 "machines with nodes" "$FLEETSIM" bench "$TMP/both.yaml"
if grep -q "both.yaml:3:.*: error: 'machines' sets the cluster: drop 'nodes' and 'slots'" "$TMP/err"; then pass
else fail "machines with nodes message: $(cat "$TMP/err")"; fi
# the shipped one: wagap-2013.swf.gz has no header; its wagap-2013.swf.machines
# (20 x 80 + 48 x 12 = 2,176 slots) is the cluster, as when named in the suite
wagap=${FLEETSIM_SHARED_TRACES:-../shared/traces}/wagap-2013.swf.gz
if [ -r "$wagap" ]; then
  printf 'policies: [fcfs+easy]\nworkloads:\n  - {name: w, trace: %s, jobs: 3000}\n' "$wagap" >"$TMP/wagap.yaml"
  printf 'policies: [fcfs+easy]\nworkloads:\n  - {name: w, trace: %s, jobs: 3000, machines: %s}\n' "$wagap" \
    "${wagap%.gz}.machines" >"$TMP/wagap-named.yaml"
  "$FLEETSIM" bench -q --json "$TMP/wagap.yaml" >"$TMP/wagap.json" 2>"$TMP/err" || fail "wagap beside its .machines: $(cat "$TMP/err")"
  "$FLEETSIM" bench -q --json "$TMP/wagap-named.yaml" >"$TMP/wagap-named.json" 2>&1
  if python3 - "$TMP/wagap.json" "$TMP/wagap-named.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["cells"] for p in sys.argv[1:3])
assert a == b and a[0]["status"] == "ok" and a[0]["jobs"] == 3000, (a, b)
PY
  then pass; else fail "wagap's .machines not read by itself"; fi
else
  skip "wagap-2013.swf.gz not in ../shared/traces"
fi
# an openb pod list finds its node list beside it; without it, no size
cat >"$TMP/x_pod_list_t.csv" <<CSV
name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p0,1000,1,1,500,,LS,Succeeded,0,100,0
p1,1000,1,1,500,,LS,Succeeded,0,100,0
p2,1000,1,1,0,,LS,Succeeded,0,10,0
p3,1000,1,1,1000,,LS,Succeeded,0,10,0
CSV
printf 'policies: [fcfs+easy]\nworkloads:\n  - {name: pods, trace: %s}\n' "$TMP/x_pod_list_t.csv" >"$TMP/pods.yaml"
expect_exit 2 "a pod list without its node list" "$FLEETSIM" bench -q "$TMP/pods.yaml"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,1,T4\n' >"$TMP/x_node_list_gpu_node.csv"
"$FLEETSIM" bench -q --json "$TMP/pods.yaml" >"$TMP/pods.json" 2>"$TMP/err" || fail "pod list with its node list: $(cat "$TMP/err")"
# two 500-milli pods share the one GPU for 100 s, the whole-GPU pods (gpu_milli
# 0 and 1000) follow: waits 0, 0, 100, 110 s (not 0, 100, 200, 210 in turn),
# busy 0.5 x 100 x 2 + 10 + 10 = 120 GPU-s over the 120 s makespan
if python3 - "$TMP/pods.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["cells"][0]
assert c["jobs"] == 4 and c["wait_p50_s"] == 50 and abs(c["wait_p95_s"] - 108.5) < 1e-9, c
assert abs(c["utilization"] - 1.0) < 1e-9, c
PY
then pass; else fail "openb node list beside the pod list: $(cat "$TMP/pods.json")"; fi
finish bench-suite
