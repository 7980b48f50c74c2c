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
if [ $rc = 0 ] && grep -q "^order        2027-03-08: 2 x H100-SXM, in service by 2027-04-05, for quarter 2: \$600000$" "$TMP/plan.txt" &&
   [ "$(grep -c '^order ' "$TMP/plan.txt")" = 1 ]; then pass; else fail "plan: the known answer (exit $rc)"; cat "$TMP/plan.txt"; fi
"$FLEETSIM" plan -q -j 2 --json "$known" >"$TMP/plan.json"
if python3 - "$TMP/plan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
o = d["plan"]["orders"]
assert d["plan"]["met"] and len(o) == 1 and o[0]["count"] == 2 and o[0]["node_type"] == "H100-SXM"
assert abs(o[0]["order_day"] - 63) < 1e-9 and o[0]["for_period"] == 2 and o[0]["ready_date"] == "2027-04-05"
# the verdict is the confirmation's: fresh replications, more of them
assert d["completed"] == 4 and d["plan"]["search"]["confirm_replications"] == 4
assert all(x >= 0.9 for x in d["plan"]["search"]["confirm_share"])
PY
then pass; else fail "plan --json"; fi

# a 20-week lead time cannot save quarter 2 (it starts in 13 weeks)
sed 's/lead_time: 4w/lead_time: 20w/' "$known" >"$TMP/late.yaml"
cp tests/planner/known-base.jsonl "$TMP/"
"$FLEETSIM" plan -q -j 2 "$TMP/late.yaml" >"$TMP/late.txt"; rc=$?
if [ $rc = 1 ] && grep -q "quarter 2 cannot meet the SLO: an order placed now arrives after 140 days" "$TMP/late.txt" &&
   grep -q "^out of reach Q2$" "$TMP/late.txt" && ! grep -q "^order " "$TMP/late.txt"; then pass
else fail "plan: out of reach (exit $rc)"; cat "$TMP/late.txt"; fi

# the SLO on the command line wins over the scenario's
"$FLEETSIM" plan -q -j 1 --slo 'p99_wait <= 100d' "$known" >"$TMP/loose.txt"; rc=$?
if [ $rc = 0 ] && grep -q "^orders       none needed" "$TMP/loose.txt"; then pass; else fail "plan --slo (exit $rc)"; fi
expect_exit 2 "plan: bad SLO" "$FLEETSIM" plan --slo 'p95_latency <= 2h' "$known"

# Known answers from queueing theory: M/M/c (Poisson arrivals of 1-GPU jobs,
# exponential runtimes of mean 1 h, 1-GPU nodes, FCFS). For each load and
# SLO, Erlang C (tests/planner/erlang_c.py, computed here independently)
# gives the smallest c that meets it, and refuses a case where the threshold
# lies within a factor 1.4 of the neighbouring c's value (a knife edge that
# sampling could decide). The plan, searching on 10 replications of one
# 13-week period (6,500 to 52,000 jobs each) at 90% confidence and confirming
# on 20 fresh ones, must start from LAMBDA nodes and buy exactly c - LAMBDA.
for case in "3 p95_wait 80" "6 p95_wait 18" "24 p95_wait 2" "6 mean_wait 2.5" "12 mean_wait 10"; do
  set -- $case
  if ! want=$(python3 tests/planner/erlang_c.py "$1" "$2" "$3"); then fail "M/M/c case $case is a knife edge"; continue; fi
  c=${want%% *}
  sed "s/LAMBDA/$1/; s/NODES/$1/; s/\"SLO\"/\"$2 <= $3m\"/" tests/planner/mmc.yaml >"$TMP/mmc.yaml"
  "$FLEETSIM" plan -q -j 2 --json "$TMP/mmc.yaml" >"$TMP/mmc.json"; rc=$?
  got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["plan"]; print(int(sys.argv[2]) + sum(o["count"] for o in d["orders"]))' "$TMP/mmc.json" "$1" 2>/dev/null)
  if [ $rc = 0 ] && [ "$got" = "$c" ]; then pass
  else fail "M/M/c lambda=$1/h $2 <= $3 min: Erlang C says c=$c (at c-1, c: $want), plan gives ${got:-nothing} (exit $rc)"; fi
done

# Per-team SLOs: over all jobs the quick team's many jobs hide the long
# team's waits; 'long: p95_wait <= 30m' buys more, and its confirmation
# shows the long team's p95 under 30 min where the all-jobs plan's is over.
teams=tests/planner/teams.yaml
"$FLEETSIM" plan -q -j 2 --json "$teams" >"$TMP/all.json"; rc1=$?
"$FLEETSIM" plan -q -j 2 --json --slo 'long: p95_wait <= 30m' "$teams" >"$TMP/team.json"; rc2=$?
"$FLEETSIM" plan -q -j 2 --json --report "$TMP/bothrep" --slo 'p95_wait <= 30m' --slo 'long: p95_wait <= 30m' "$teams" >"$TMP/both.json"; rc3=$?
if [ $rc1 = 0 ] && [ $rc2 = 0 ] && [ $rc3 = 0 ] && python3 - "$TMP/all.json" "$TMP/team.json" "$TMP/both.json" <<'PY'
import json, sys
a, t, b = (json.load(open(f)) for f in sys.argv[1:])
n = lambda d: sum(o["count"] for o in d["plan"]["orders"])
long95 = lambda d: d["periods"][0]["team_waits"]["long"]["wait_p95_s"]["mean"]
assert n(t) > n(a), (n(t), n(a))
assert long95(t) <= 1800 < long95(a), (long95(t), long95(a))
assert n(b) == n(t) and b["plan"]["slos"] == ["p95_wait <= 30m", "long: p95_wait <= 30m"]
# the report judges the plan's goal, as its verdict does
r = json.load(open(sys.argv[3].replace("both.json", "bothrep/summary.json")))
assert r["slo"]["goal"] == "p95_wait <= 30m and long: p95_wait <= 30m"
assert r["periods"][0]["slo_share"] == b["plan"]["search"]["confirm_share"][0] >= 0.9
PY
then pass; else fail "plan: per-team SLO (exits $rc1 $rc2 $rc3)"; fi
expect_exit 2 "plan: SLO of an unknown team" "$FLEETSIM" plan --slo 'lng: p95_wait <= 1h' "$teams"
if "$FLEETSIM" plan -q --slo 'lng: p95_wait <= 1h' "$teams" 2>&1 | grep -q "did you mean 'long'"; then pass; else fail "plan: team suggestion"; fi

# A plan does not depend on -j: same scenario and seed, same bytes
"$FLEETSIM" plan -q -j 1 --json "$teams" >"$TMP/j1plan.json"
if [ -s "$TMP/j1plan.json" ] && cmp -s "$TMP/j1plan.json" "$TMP/all.json"; then pass; else fail "plan -j 1 and -j 2 differ"; fi

# Team names in policy parameters mean the team's index
"$FLEETSIM" forecast -q -j 2 -r 2 --json --policy 'fcfs+easy+quota(guarantee=long:8;quick:4)' "$teams" >"$TMP/named.json"
"$FLEETSIM" forecast -q -j 2 -r 2 --json --policy 'fcfs+easy+quota(guarantee=1:8;0:4)' "$teams" >"$TMP/numbered.json"
"$FLEETSIM" forecast -q -j 2 -r 2 --json --policy 'fcfs+easy' "$teams" >"$TMP/noquota.json"
if [ -s "$TMP/named.json" ] && cmp -s "$TMP/named.json" "$TMP/numbered.json" && ! cmp -s "$TMP/named.json" "$TMP/noquota.json"; then pass
else fail "policy parameters with team names"; fi
expect_exit 2 "forecast: a policy naming an unknown team" "$FLEETSIM" forecast -q --policy 'multifactor(shares=lng:2)+easy' "$teams"
sed 's/  policy: sjf+easy/  policy: "multifactor(shares=long:4;quick:1)+easy"/' "$teams" >"$TMP/mf.yaml"
if "$FLEETSIM" validate "$TMP/mf.yaml" >/dev/null 2>&1; then pass; else fail "validate: forecast.policy with team names"; fi

# A policy change beats buying: under fcfs the SLO needs a node; under
# sjf+easy (offered in plan.policies) it needs none, and the plan says so.
sed 's/  policy: sjf+easy/  policy: fcfs/; s/  burn_in: 0s/  burn_in: 0s\n  policies: [sjf+easy]/' "$teams" >"$TMP/pol.yaml"
"$FLEETSIM" plan -q -j 2 --slo 'p95_wait <= 4h' "$TMP/pol.yaml" >"$TMP/pol.txt"; rc=$?
if [ $rc = 0 ] && grep -q "^policy       sjf+easy (a change from the forecast's" "$TMP/pol.txt" &&
   grep -q "^instead of   fcfs: \$[1-9][0-9]*, 1 order, 0 quarters missed" "$TMP/pol.txt" &&
   grep -q "^orders       none needed" "$TMP/pol.txt"; then pass; else fail "plan: policy beats buying (exit $rc)"; cat "$TMP/pol.txt"; fi

# Rented capacity reaches a period that bought nodes cannot: a 20-week lead
# time misses quarter 2, a rental with a 1-week lead time is in time.
sed 's/  burn_in: 0$/  burn_in: 0\n  rent: {node_type: H100-SXM, usd_per_gpu_hour: 2, min_term: 30d, lead_time: 7d}/' "$TMP/late.yaml" >"$TMP/rent.yaml"
"$FLEETSIM" plan -q -j 2 "$TMP/rent.yaml" >"$TMP/rent.txt"; rc=$?
if [ $rc = 0 ] && grep -q "^rent         2027-03-29: 2 x H100-SXM, 2027-04-05 to 2027-07-05, for quarter 2: \$69888$" "$TMP/rent.txt"; then pass
else fail "plan: rent (exit $rc)"; cat "$TMP/rent.txt"; fi

# Buying serves every later period, a rental only its own: with 32 GPUs
# needed from day 100 to the end (tests/planner/steady.jsonl: four 8-GPU
# week-long jobs a week), a 20-week lead time and rent at $10 per GPU-hour,
# quarter 2 can only be rented ($349,440 for 2 nodes); quarters 3 and 4 would
# cost the same again each, so 2 nodes bought on day 42 for quarter 3
# ($600,000) replace those two rentals: $949,440 in all.
sed 's/known-base.jsonl/steady.jsonl/; s/lead_time: 4w/lead_time: 20w/; s/  burn_in: 0$/  burn_in: 0\n  rent: {node_type: H100-SXM, usd_per_gpu_hour: 10, min_term: 30d, lead_time: 7d}/' "$known" >"$TMP/steady.yaml"
cp tests/planner/steady.jsonl "$TMP/"
"$FLEETSIM" plan -q -j 2 "$TMP/steady.yaml" >"$TMP/steady.txt"; rc=$?
if [ $rc = 0 ] && [ "$(grep -c '^order \|^rent ' "$TMP/steady.txt")" = 2 ] &&
   grep -q "^order        2027-02-15: 2 x H100-SXM, in service by 2027-07-05, for quarter 3: \$600000$" "$TMP/steady.txt" &&
   grep -q "^rent         2027-03-29: 2 x H100-SXM, 2027-04-05 to 2027-07-05, for quarter 2: \$349440$" "$TMP/steady.txt" &&
   grep -q "^cost         \$949440$" "$TMP/steady.txt"; then pass
else fail "plan: buying replaces rentals that would be renewed (exit $rc)"; cat "$TMP/steady.txt"; fi

# Running costs: bought nodes draw power x PUE at $/kWh and cost hosting
# from arrival (day 91) to the horizon's end (day 364): 6,552 hours.
sed 's/    price_usd: 300000/    price_usd: 300000\n    power: 10kW/; s/  burn_in: 0$/  burn_in: 0\n  power_usd_per_kwh: 0.1\n  pue: 1.5\n  hosting_usd_per_node_year: 5000/' "$known" >"$TMP/run.yaml"
cp tests/planner/known-base.jsonl "$TMP/"
"$FLEETSIM" plan -q -j 2 --json "$TMP/run.yaml" >"$TMP/run.json"; rc=$?
if [ $rc = 0 ] && python3 - "$TMP/run.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["plan"]
o = p["orders"][0]
want = 2 * 6552 * (10 * 1.5 * 0.1 + 5000 / 8760)
assert o["count"] == 2 and abs(o["running_usd"] - want) < 1e-6 * want, (o, want)
assert abs(p["cost_usd"] - (600000 + want)) < 1e-6 * want
PY
then pass; else fail "plan: running costs (exit $rc)"; fi

# A budget per quarter: $300k buys one node where two are needed
sed 's/  burn_in: 0$/  burn_in: 0\n  budget_per_quarter: 300000/' "$known" >"$TMP/budget.yaml"
"$FLEETSIM" plan -q -j 2 "$TMP/budget.yaml" >"$TMP/budget.txt"; rc=$?
if [ $rc = 1 ] && grep -q "quarter 2 cannot meet the SLO even with what the quarter's budget allows" "$TMP/budget.txt"; then pass
else fail "plan: budget (exit $rc)"; cat "$TMP/budget.txt"; fi

# The report of a plan: titled as a plan, each order once, its ready date
"$FLEETSIM" plan -q -j 2 --report "$TMP/planrep" "$known" >/dev/null
if python3 - "$TMP/planrep" <<'PY'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
o = s["plan"]["orders"]
assert len(o) == 1 and o[0]["ready_date"] == "2027-04-05", o
html = open(d + "/index.html").read()
assert "<title>fleetsim plan" in html and "<h1>Capacity plan" in html and 'id="team-waits"' in html
assert html.count('<td class="l">plan order</td>') == 1 and "order placed" not in html
PY
then pass; else fail "plan --report: title, orders once, ready date"; fi

# Ctrl-C while searching: the best plan so far, marked partial, exit 130
"$FLEETSIM" plan -j 2 scenarios/examples/quarterly.yaml >"$TMP/pplan.txt" 2>"$TMP/pplan.err" &
pid=$!
sleep 3
kill -INT $pid
wait $pid; rc=$?
if [ $rc = 130 ] && grep -q "^verdict      PARTIAL: interrupted" "$TMP/pplan.txt"; then pass
else fail "plan interrupted: exit $rc"; tail -3 "$TMP/pplan.err"; cat "$TMP/pplan.txt"; fi

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
