#!/bin/sh
# tests/planner/run.sh: the capacity planner's commands end to end.
#  - plan finds the answer known by construction (known.yaml);
#  - it says when no plan can meet the SLO (a lead time longer than the time
#    left), and exits 1;
#  - forecasts are byte-identical whatever the number of workers (-j);
#  - Ctrl-C stops a forecast cleanly and marks what it prints as partial.
. tests/lib.sh
known=tests/planner/known.yaml

"$FLEETSIM" plan -q -j 2 "$known" >"$TMP/plan.txt"; rc=$?
if [ $rc = 0 ] && grep -q "^order        2027-03-08: 2 x H100-SXM (\$600000), for quarter 2$" "$TMP/plan.txt" &&
   [ "$(grep -c '^order ' "$TMP/plan.txt")" = 1 ]; then pass; else fail "plan: the known answer (exit $rc)"; cat "$TMP/plan.txt"; fi
"$FLEETSIM" plan -q -j 2 --json "$known" >"$TMP/plan.json"
if python3 - "$TMP/plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
o = d["plan"]["orders"]
assert d["plan"]["met"] and len(o) == 1 and o[0]["count"] == 2 and o[0]["node_type"] == "H100-SXM"
assert abs(o[0]["order_day"] - 63) < 1e-9 and o[0]["for_period"] == 2
PY
then pass; else fail "plan --json"; fi

# a 20-week lead time cannot save quarter 2 (it starts in 13 weeks)
sed 's/lead_time: 4w/lead_time: 20w/' "$known" >"$TMP/late.yaml"
cp tests/planner/known-base.jsonl "$TMP/"
"$FLEETSIM" plan -q -j 2 "$TMP/late.yaml" >"$TMP/late.txt"; rc=$?
if [ $rc = 1 ] && grep -q "quarter 2 cannot meet the SLO: an order placed now arrives after 140 days" "$TMP/late.txt"; then pass
else fail "plan: out of reach (exit $rc)"; cat "$TMP/late.txt"; fi

# the SLO on the command line wins over the scenario's
"$FLEETSIM" plan -q -j 1 --slo 'p99_wait <= 100d' "$known" >"$TMP/loose.txt"; rc=$?
if [ $rc = 0 ] && grep -q "^orders       none needed" "$TMP/loose.txt"; then pass; else fail "plan --slo (exit $rc)"; fi
expect_exit 2 "plan: bad SLO" "$FLEETSIM" plan --slo 'p95_latency <= 2h' "$known"

# forecasts do not depend on -j
q=scenarios/examples/quarterly.yaml
"$FLEETSIM" forecast -q -r 3 -j 1 --json "$q" >"$TMP/j1.json"
"$FLEETSIM" forecast -q -r 3 -j 3 --json "$q" >"$TMP/j3.json"
if cmp -s "$TMP/j1.json" "$TMP/j3.json" && [ -s "$TMP/j1.json" ]; then pass; else fail "forecast -j 1 and -j 3 differ"; fi
"$FLEETSIM" forecast -q -r 3 -j 1 --report "$TMP/r1" "$q" >/dev/null
"$FLEETSIM" forecast -q -r 3 -j 2 --report "$TMP/r2" "$q" >/dev/null
if diff -r "$TMP/r1" "$TMP/r2" >/dev/null; then pass; else fail "forecast reports differ with -j"; fi

# compare: a sweep of 2 growth rates x 2 policies gives 4 variants, each forecast
sed 's/  replications: 8/  replications: 2/' "$q" >"$TMP/sweep.yaml"
printf 'sweep:\n  growth: [0.1, 0.3]\n  policy: [fcfs+easy, sjf+easy]\n' >>"$TMP/sweep.yaml"
"$FLEETSIM" compare -q -j 2 --json --report "$TMP/cmp" "$TMP/sweep.yaml" >"$TMP/cmp.json"
if python3 - "$TMP/cmp.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))["variants"]
assert [x["variant"] for x in v] == ["sweep.yaml g=0.10 fcfs+easy", "sweep.yaml g=0.10 sjf+easy",
                                    "sweep.yaml g=0.30 fcfs+easy", "sweep.yaml g=0.30 sjf+easy"]
u = [x["periods"][3]["utilization"]["mean"] for x in v]
assert u[2] > u[0] and u[3] > u[1]  # more growth, busier last quarter
PY
then pass; else fail "compare: sweep variants"; fi
if [ "$(wc -l <"$TMP/cmp/compare.csv")" = 17 ] && [ -f "$TMP/cmp/variant-4/index.html" ]; then pass; else fail "compare --report"; fi

# Ctrl-C: partial results, exit 130
"$FLEETSIM" forecast -r 64 -j 2 "$q" >"$TMP/partial.txt" 2>"$TMP/partial.err" &
pid=$!
sleep 2
kill -INT $pid
wait $pid; rc=$?
if [ $rc = 130 ] && grep -q "PARTIAL" "$TMP/partial.txt" && grep -q "results are partial" "$TMP/partial.err"; then pass
else fail "forecast interrupted: exit $rc"; cat "$TMP/partial.err" | tail -3; fi
finish planner
