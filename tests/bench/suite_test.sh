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
finish bench-suite
