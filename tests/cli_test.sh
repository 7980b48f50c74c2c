#!/bin/sh
# tests/cli_test.sh: the fleetsim command as users meet it: help and exit
# codes, the demo's summary against its golden output, determinism, JSON,
# and the native format's round trip.
. tests/lib.sh
demo=traces/examples/demo-gpu-cluster.swf

# help and usage
expect_exit 0 "fleetsim --help" "$FLEETSIM" --help
expect_exit 0 "fleetsim --version" "$FLEETSIM" --version
expect_exit 0 "replay --help" "$FLEETSIM" replay --help
expect_exit 0 "trace --help" "$FLEETSIM" trace --help
expect_exit 0 "help replay" "$FLEETSIM" help replay
expect_exit 2 "no command" "$FLEETSIM"
expect_exit 2 "unknown command" "$FLEETSIM" frobnicate
expect_exit 2 "replay without trace" "$FLEETSIM" replay
expect_exit 2 "unknown option" "$FLEETSIM" replay --bogus $demo
expect_exit 2 "bad --nodes" "$FLEETSIM" replay --nodes 0 $demo
expect_exit 2 "unknown policy" "$FLEETSIM" replay --policy fifo $demo
expect_exit 2 "--compat-wait without protocol" "$FLEETSIM" replay --compat-wait $demo
expect_exit 2 "unknown --convention" "$FLEETSIM" replay --convention slurm $demo
if grep -q "unknown convention 'slurm' (fleetsim, pyss, cqsim)" "$TMP/err"; then pass; else fail "convention message: $(cat "$TMP/err")"; fi
expect_exit 2 "--convention with the rlscheduler protocol" "$FLEETSIM" replay --protocol rlscheduler --convention pyss $demo
if "$FLEETSIM" replay --help | grep -q -- "--convention NAME"; then pass; else fail "replay --help lacks --convention"; fi
# the default convention is fleetsim's, named or not
"$FLEETSIM" replay -q --json $demo >"$TMP/conv-default.json"
"$FLEETSIM" replay -q --json --convention fleetsim $demo >"$TMP/conv-fleetsim.json"
if cmp -s "$TMP/conv-default.json" "$TMP/conv-fleetsim.json"; then pass; else fail "--convention fleetsim is not the default"; fi
expect_exit 3 "missing trace file" "$FLEETSIM" replay "$TMP/does-not-exist.swf"
"$FLEETSIM" replay --policy fifo $demo 2>"$TMP/err"
if grep -q "unknown ordering 'fifo'" "$TMP/err"; then pass; else fail "unknown policy message: $(cat "$TMP/err")"; fi
"$FLEETSIM" replay --policy fcfs+backfill $demo 2>"$TMP/err"
if grep -q "did you mean 'easy'" "$TMP/err"; then pass; else fail "backfill suggestion: $(cat "$TMP/err")"; fi

# the demo against its golden summary (byte for byte)
for p in fcfs fcfs+easy fcfs+conservative sjf+easy; do
  golden=tests/golden/demo-$p.txt
  "$FLEETSIM" replay --policy $p $demo >"$TMP/summary" 2>"$TMP/err"
  if [ -n "$UPDATE_GOLDEN" ]; then cp "$TMP/summary" "$golden"; fi
  if cmp -s "$TMP/summary" "$golden"; then pass; else fail "golden $golden"; diff "$golden" "$TMP/summary" | head -20; fi
done

# determinism: the same run twice gives byte-identical per-job CSV and JSON
for p in fcfs+easy f1+conservative wfp3; do
  "$FLEETSIM" replay -q --policy $p --json --jobs-csv "$TMP/a.csv" $demo >"$TMP/a.json"
  "$FLEETSIM" replay -q --policy $p --json --jobs-csv "$TMP/b.csv" $demo >"$TMP/b.json"
  if cmp -s "$TMP/a.csv" "$TMP/b.csv" && cmp -s "$TMP/a.json" "$TMP/b.json" && [ "$(wc -l <"$TMP/a.csv")" = 1001 ]; then pass
  else fail "determinism $p"; fi
done
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["jobs"]["run"]==1000 and 0<d["utilization"]<=1' "$TMP/a.json"; then pass
else fail "JSON summary shape"; fi

# a failed run never leaves half a file, and keeps what was there
expect_exit 3 "jobs csv in a missing folder" "$FLEETSIM" replay -q --jobs-csv "$TMP/no/such/dir/jobs.csv" $demo
echo keep >"$TMP/keep.csv"
printf '1 0 -1 10 1 -1 -1 1 10\n2 x -1 10 1 -1 -1 1 10\n' >"$TMP/bad.swf"
expect_exit 2 "bad trace" "$FLEETSIM" replay -q --nodes 4 --jobs-csv "$TMP/keep.csv" "$TMP/bad.swf"
if [ "$(cat "$TMP/keep.csv")" = keep ] && [ -z "$(ls "$TMP" | grep tmp)" ]; then pass; else fail "a failed run touched its output"; fi

# native format: SWF -> JSONL -> replay gives the same schedule; convert is deterministic
check "convert to jsonl" "$FLEETSIM" trace convert -q $demo "$TMP/demo.jsonl"
check "convert again" "$FLEETSIM" trace convert -q $demo "$TMP/demo2.jsonl"
if cmp -s "$TMP/demo.jsonl" "$TMP/demo2.jsonl"; then pass; else fail "convert is not deterministic"; fi
"$FLEETSIM" replay -q --jobs-csv "$TMP/swf.csv" $demo >/dev/null
"$FLEETSIM" replay -q --jobs-csv "$TMP/jsonl.csv" "$TMP/demo.jsonl" >/dev/null
if cmp -s "$TMP/swf.csv" "$TMP/jsonl.csv"; then pass; else fail "SWF and its JSONL conversion replay differently"; fi
check "jsonl -> jsonl" "$FLEETSIM" trace convert -q "$TMP/demo.jsonl" "$TMP/demo3.jsonl"
if cmp -s "$TMP/demo.jsonl" "$TMP/demo3.jsonl"; then pass; else fail "jsonl round trip changed the file"; fi
check "trace stats" "$FLEETSIM" trace stats $demo
"$FLEETSIM" trace stats $demo | grep -q "^jobs *1000$" && pass || fail "trace stats job count"
check "trace stats --json" sh -c "\"$FLEETSIM\" trace stats --json $demo | python3 -c 'import json,sys; assert json.load(sys.stdin)[\"jobs\"]==1000'"
# scenarios: validate, the reference, and replay with the models
check "validate example" "$FLEETSIM" validate scenarios/examples/gpu-cluster.yaml
check "help scenario" sh -c "\"$FLEETSIM\" help scenario | grep -q 'cluster.fabric.oversubscription'"
"$FLEETSIM" replay -q --jobs-csv "$TMP/plain.csv" --nodes 16 --slots 8 $demo >/dev/null
"$FLEETSIM" replay -q --jobs-csv "$TMP/scen.csv" --scenario tests/golden/plain-h100-16.yaml $demo >/dev/null
if cmp -s "$TMP/plain.csv" "$TMP/scen.csv"; then pass; else fail "a scenario without fabric or failures changed the schedule"; fi
for run in 1 2; do
  "$FLEETSIM" replay -q --json --jobs-csv "$TMP/models$run.csv" --scenario scenarios/examples/gpu-cluster.yaml $demo >"$TMP/models$run.json"
done
if cmp -s "$TMP/models1.csv" "$TMP/models2.csv" && cmp -s "$TMP/models1.json" "$TMP/models2.json"; then pass
else fail "scenario replay is not deterministic"; fi
expect_exit 2 "--scenario with --nodes" "$FLEETSIM" replay --scenario tests/golden/plain-h100-16.yaml --nodes 4 $demo
expect_exit 2 "bad scenario" "$FLEETSIM" replay --scenario tests/bad/scenario-unknown-key.yaml $demo
# fit: a workload section from a trace that validate accepts with a cluster,
# written atomically; the same trace gives the same file; a base trace
# replayed by a scenario is found relative to the scenario file
expect_exit 0 "fit --help" "$FLEETSIM" fit --help
expect_exit 2 "fit without trace" "$FLEETSIM" fit
expect_exit 2 "fit bad --by" "$FLEETSIM" fit --by group $demo
expect_exit 3 "fit missing trace" "$FLEETSIM" fit "$TMP/does-not-exist.swf"
if "$FLEETSIM" fit -q --by none -o "$TMP/fit1.yaml" $demo 2>"$TMP/fit.err" && "$FLEETSIM" fit --by none $demo >"$TMP/fit2.yaml" 2>/dev/null \
   && cmp -s "$TMP/fit1.yaml" "$TMP/fit2.yaml" && grep -q "KS lognorm" "$TMP/fit.err"; then pass; else fail "fit -o and stdout differ, or no KS table"; fi
{ printf 'cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 16}\n'; cat "$TMP/fit1.yaml"; } >"$TMP/fitted.yaml"
check "fitted workload validates" "$FLEETSIM" validate "$TMP/fitted.yaml"
check "fit --json" sh -c "\"$FLEETSIM\" fit --json $demo | python3 -c 'import json,sys; g=json.load(sys.stdin)[\"groups\"]; assert g and all(0 <= x[\"interarrival\"][\"ks\"] <= 1 for x in g)'"
mkdir -p "$TMP/scn"
cp $demo "$TMP/scn/base.swf"
{ printf 'cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 16}\n'; printf 'workload:\n  trace: base.swf\n  base_growth_per_quarter: 0.2\n'; } >"$TMP/scn/s.yaml"
check "workload trace relative to the scenario" "$FLEETSIM" validate "$TMP/scn/s.yaml"
# forecast: the offered load apart from the backlog, and a partial last
# period flagged (47 weeks: quarter 4 is 8 weeks long)
cat >"$TMP/fc.yaml" <<'YAML'
seed: 3
cluster:
  partitions:
    - {name: a, node_type: H100-SXM, nodes: 2}
workload:
  teams:
    - {name: t, jobs_per_hour: 1, gpus: {4: 1}, runtime: {training: 3h}}
horizon: {length: 47w, period: quarter, sample: 1d}
forecast: {replications: 2, policy: fcfs+easy}
YAML
"$FLEETSIM" forecast -q -j 1 "$TMP/fc.yaml" >"$TMP/fc.txt"
if head -1 "$TMP/fc.txt" | grep -q 'offered mean/peak  backlog  capacity' && grep -q '^4\* ' "$TMP/fc.txt" &&
   grep -qF '(* the horizon ends 56.0 d into quarter 4: a partial quarter)' "$TMP/fc.txt"; then pass
else fail "forecast table: offered load, backlog, partial quarter"; cat "$TMP/fc.txt"; fi
"$FLEETSIM" forecast -q -j 1 --json "$TMP/fc.yaml" >"$TMP/fc.json"
check "forecast --json: offered load 12 GPUs (1/h x 4 GPUs x 3 h), capacity undiluted, partial flag" python3 - "$TMP/fc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["periods"]
assert [x["partial"] for x in p] == [False, False, False, True], [x["partial"] for x in p]
assert p[3]["length_s"] == 56 * 86400
for x in p:
    assert "peak_demand_gpus" not in x
    assert abs(x["offered_load_gpus"]["mean"] - 12) < 1.0, x["offered_load_gpus"]
    assert abs(x["capacity_gpus"]["mean"] - 16) < 1e-9, x["capacity_gpus"]
    assert x["offered_peak_gpus"]["mean"] >= x["offered_load_gpus"]["mean"]
    assert x["backlog_gpus"]["mean"] >= 0
PY
finish cli
