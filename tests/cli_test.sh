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
# a result says how it was reached: the JSON names the convention always,
# the text summary when it is not the default
"$FLEETSIM" replay -q --json --convention pyss $demo >"$TMP/conv-pyss.json"
"$FLEETSIM" replay -q --convention cqsim $demo >"$TMP/conv-cqsim.txt"
"$FLEETSIM" replay -q $demo >"$TMP/conv-default.txt"
if grep -q '"convention": "fleetsim"' "$TMP/conv-default.json" && grep -q '"convention": "pyss"' "$TMP/conv-pyss.json" &&
   grep -q '^convention   cqsim$' "$TMP/conv-cqsim.txt" && ! grep -q '^convention' "$TMP/conv-default.txt"; then pass
else fail "the convention in the summaries"; fi
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
# an output that cannot be written is refused before the trace is read (a
# long replay is not run for nothing): with a bad trace too, the output's
# error (3) comes first, and the check leaves no temporary file behind
expect_exit 3 "jobs csv in a missing folder, bad trace" "$FLEETSIM" replay -q --nodes 4 --jobs-csv "$TMP/no/such/dir/jobs.csv" "$TMP/bad.swf"
mkdir -p "$TMP/a-folder"
expect_exit 3 "jobs csv is a folder" "$FLEETSIM" replay -q --nodes 4 --jobs-csv "$TMP/a-folder" "$TMP/bad.swf"
if grep -q "a-folder: error: cannot write: is a folder" "$TMP/err"; then pass; else fail "folder message: $(cat "$TMP/err")"; fi
expect_exit 2 "bad trace after the output's check" "$FLEETSIM" replay -q --nodes 4 --jobs-csv "$TMP/probe.csv" "$TMP/bad.swf"
if [ ! -e "$TMP/probe.csv" ] && [ -z "$(ls "$TMP" | grep tmp)" ]; then pass; else fail "the output's check left a file"; fi
# the same check serves every command that writes a file (cli_check_output):
# refused before the trace is read or the suite run, nothing written
expect_exit 3 "trace convert into a missing folder, bad trace" "$FLEETSIM" trace convert -q "$TMP/bad.swf" "$TMP/no/such/dir/t.jsonl"
expect_exit 3 "fit -o into a folder, bad trace" "$FLEETSIM" fit -q -o "$TMP/a-folder" "$TMP/bad.swf"
expect_exit 3 "bench --junit into a missing folder, before the suite" "$FLEETSIM" bench -q --junit "$TMP/no/such/dir/j.xml" "$TMP/no-such-suite.yaml"
if grep -q "j.xml: error: cannot write: No such file or directory" "$TMP/err"; then pass; else fail "junit message: $(cat "$TMP/err")"; fi
expect_exit 2 "jobs csv on standard output" "$FLEETSIM" replay -q --jobs-csv - $demo
if grep -q "needs a file: standard output carries the summary" "$TMP/err" && [ ! -e ./- ]; then pass; else fail "--jobs-csv - message: $(cat "$TMP/err")"; fi

# a gzip'd SWF log replays while it is read (swf_feed_start, cmd_replay's
# replay_fed): the same summary, per-job CSV, messages and exit code as the
# same log plain, which is read whole first; also where the feed breaks and
# the replay runs again (a job out of order, absolute submits, a header
# that changes after the first job, an error near the end) and where it
# does not apply (no header: --nodes sizes the machine)
feed_log() { # feed_log NAME AWK-PROGRAM: NAME.swf and NAME.swf.gz of 20,000 jobs (1 MB)
  awk "BEGIN { srand(7); $2 }" >"$TMP/$1.swf" && gzip -c "$TMP/$1.swf" >"$TMP/$1.swf.gz"
}
jobs='for (i = 1; i <= 20000; i++) { s = (i == 10000 && out) ? 10 : base + 37 * i;
  if (i == 19990 && bad) print i, "x", 0, 100, 4
  else print i, s, 0, int(rand() * 600) + 1, int(rand() * 8) + 1, -1, -1, int(rand() * 8) + 1, 900, -1, 1,
             int(rand() * 9), 1, -1, -1, 1, -1, -1 }'
feed_log feed-sorted "print \"; MaxProcs: 64\"; base = 0; $jobs"
feed_log feed-unsorted "print \"; MaxProcs: 64\"; base = 0; out = 1; $jobs"
feed_log feed-absolute "print \"; MaxProcs: 64\"; base = 1300000000; $jobs"
feed_log feed-late-header "print \"; MaxProcs: 64\"; base = 0; $jobs; print \"; MaxProcs: 32\""
feed_log feed-error "print \"; MaxProcs: 64\"; base = 0; bad = 1; $jobs"
feed_log feed-headerless "base = 0; $jobs"
for log in feed-sorted feed-unsorted feed-absolute feed-late-header feed-error feed-headerless; do
  for p in fcfs+easy sjf+conservative; do
    extra=; [ $log = feed-headerless ] && extra="--nodes 64"
    "$FLEETSIM" replay --json --policy $p $extra --jobs-csv "$TMP/plain.csv" "$TMP/$log.swf" \
      >"$TMP/plain.out" 2>"$TMP/plain.err"
    prc=$?
    "$FLEETSIM" replay --json --policy $p $extra --jobs-csv "$TMP/fed.csv" "$TMP/$log.swf.gz" \
      >"$TMP/fed.out" 2>"$TMP/fed.err"
    frc=$?
    sed "s|$log.swf.gz|$log.swf|g" "$TMP/fed.out" >"$TMP/fed.out2"
    sed "s|$log.swf.gz|$log.swf|g" "$TMP/fed.err" >"$TMP/fed.err2"
    if [ $prc = $frc ] && cmp -s "$TMP/plain.out" "$TMP/fed.out2" && cmp -s "$TMP/plain.err" "$TMP/fed.err2" &&
       { [ $prc != 0 ] || cmp -s "$TMP/plain.csv" "$TMP/fed.csv"; }; then pass
    else fail "$log.swf.gz under $p: replayed as read, not as the plain log (exit $frc, plain $prc)"
      diff "$TMP/plain.err" "$TMP/fed.err2" | head -5; diff "$TMP/plain.out" "$TMP/fed.out2" | head -5; fi
    rm -f "$TMP/plain.csv" "$TMP/fed.csv"
  done
done
# the cases above reach each path: the error and the changed header say so
"$FLEETSIM" replay -q "$TMP/feed-error.swf.gz" >/dev/null 2>"$TMP/err"
if [ $? = 2 ] && grep -q "feed-error.swf.gz:19991:7: error: field 2 ('x') is not a number" "$TMP/err"; then pass
else fail "the error of a log replayed as read: $(cat "$TMP/err")"; fi
if "$FLEETSIM" replay "$TMP/feed-late-header.swf.gz" | grep -q "^cluster      32 nodes x 1 slots"; then pass
else fail "a header after the first job sizes the machine"; fi

# a forecast's teams are the scenario's, and "(trace)" (the jobs of a base
# trace) only when it has one: an idle made-up team would read as one with
# perfect waits
"$FLEETSIM" forecast -q -r 1 -j 1 --json tests/planner/teams.yaml >"$TMP/teams.json"
"$FLEETSIM" forecast -q -r 1 -j 1 --json tests/planner/known.yaml >"$TMP/known.json"
if python3 - "$TMP/teams.json" "$TMP/known.json" <<'PY'
import json, sys
teams = json.load(open(sys.argv[1]))["periods"][0]
known = json.load(open(sys.argv[2]))["periods"][0]
assert sorted(teams["team_gpu_hours_mean"]) == ["long", "quick"], teams["team_gpu_hours_mean"]
assert sorted(teams["team_waits"]) == ["long", "quick"], teams["team_waits"]
assert "(trace)" in known["team_gpu_hours_mean"] and "(trace)" in known["team_waits"], known["team_waits"]
PY
then pass; else fail "forecast teams"; fi

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
# the recommendation in the terminal and in --json: none needed at 75% of
# capacity; at 150% the shortfall, and the plan command that sizes the orders
if grep -q '^recommendation$' "$TMP/fc.txt" && grep -q '^- Capacity covers the offered load in every quarter' "$TMP/fc.txt" &&
   ! grep -q '^next:' "$TMP/fc.txt"; then pass; else fail "forecast: recommendation, no action"; cat "$TMP/fc.txt"; fi
sed 's/jobs_per_hour: 1,/jobs_per_hour: 2,/; s/length: 47w, period: quarter/length: 8w, period: month/' "$TMP/fc.yaml" >"$TMP/fc-short.yaml"
"$FLEETSIM" forecast -q -j 1 "$TMP/fc-short.yaml" >"$TMP/fc-short.txt"
if grep -q '^recommendation (action needed)$' "$TMP/fc-short.txt" &&
   grep -q '^- The offered load outgrows capacity from M1' "$TMP/fc-short.txt" &&
   grep -qF "next: fleetsim plan $TMP/fc-short.yaml --slo 'p95_wait <= 2h' finds the cheapest orders" "$TMP/fc-short.txt"; then pass
else fail "forecast: a shortfall's recommendation names fleetsim plan"; cat "$TMP/fc-short.txt"; fi
"$FLEETSIM" forecast -q -j 1 --json "$TMP/fc-short.yaml" >"$TMP/fc-short.json"
check "forecast --json: recommendation, action_needed, next" python3 - "$TMP/fc.json" "$TMP/fc-short.json" "$TMP/fc-short.yaml" <<'PY'
import json, sys
ok, short = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert ok["action_needed"] is False and "next" not in ok, ok.get("next")
assert any(l.startswith("Capacity covers the offered load") for l in ok["recommendation"]), ok["recommendation"]
assert short["action_needed"] is True
assert any(l.startswith("The offered load outgrows capacity from M1") for l in short["recommendation"]), short["recommendation"]
assert short["next"].startswith("fleetsim plan %s --slo 'p95_wait <= 2h' " % sys.argv[3]), short["next"]
PY
# ---- issue 11: one output writer, bounded inputs, no crash from a library ----
small=tests/fuzz/seeds/fuzz_replication/small-forecast.yaml
# an output that is also an input is refused before anything is read, and left as it was
cp $demo "$TMP/same.swf"
cp $demo "$TMP/same.orig"
expect_exit 2 "trace convert X X refused" "$FLEETSIM" trace convert "$TMP/same.swf" "$TMP/same.swf"
if grep -qxF "$TMP/same.swf: error: output is the same file as the input '$TMP/same.swf'" "$TMP/err"; then pass; else fail "convert X X message: $(cat "$TMP/err")"; fi
if cmp -s "$TMP/same.swf" "$TMP/same.orig"; then pass; else fail "trace convert X X changed X"; fi
expect_exit 2 "replay --jobs-csv T T refused" "$FLEETSIM" replay -q --jobs-csv "$TMP/same.swf" "$TMP/same.swf"
if cmp -s "$TMP/same.swf" "$TMP/same.orig"; then pass; else fail "replay --jobs-csv T T changed T"; fi
ln -s same.swf "$TMP/same-link.swf"
expect_exit 2 "an output reached through a symlink to the input refused" "$FLEETSIM" trace convert "$TMP/same-link.swf" "$TMP/same.swf"
expect_exit 2 "fit -o TRACE TRACE refused" "$FLEETSIM" fit -q -o "$TMP/same.swf" "$TMP/same.swf"
if cmp -s "$TMP/same.swf" "$TMP/same.orig"; then pass; else fail "fit -o T T changed T"; fi
expect_exit 2 "replay --jobs-csv SCENARIO refused" "$FLEETSIM" replay -q --scenario "$TMP/scn/s.yaml" --jobs-csv "$TMP/scn/s.yaml" $demo
# a regular output is replaced whole; a symlink to one keeps being a link
"$FLEETSIM" trace convert -q $demo "$TMP/conv.jsonl"
ln -s conv.jsonl "$TMP/conv-link"
expect_exit 0 "convert through a symlink" "$FLEETSIM" trace convert -q $demo "$TMP/conv-link"
if [ -L "$TMP/conv-link" ] && cmp -s "$TMP/conv.jsonl" "$TMP/conv-link"; then pass; else fail "symlinked output replaced"; fi
if ls "$TMP" | grep -q '\.tmp\.'; then fail "temporary files left: $(ls "$TMP" | grep '\.tmp\.')"; else pass; fi
# /dev/stdout, a pipe and a FIFO are written in place
"$FLEETSIM" trace convert -q $demo /dev/stdout | cmp -s - "$TMP/conv.jsonl" && pass || fail "convert to /dev/stdout (a pipe)"
"$FLEETSIM" trace convert -q $demo /dev/stdout >"$TMP/via-stdout.jsonl"
if cmp -s "$TMP/via-stdout.jsonl" "$TMP/conv.jsonl"; then pass; else fail "convert to /dev/stdout redirected to a file"; fi
ln -s /dev/stdout "$TMP/to-stdout"
"$FLEETSIM" trace convert -q $demo "$TMP/to-stdout" >"$TMP/via-link.jsonl"
if [ -L "$TMP/to-stdout" ] && cmp -s "$TMP/via-link.jsonl" "$TMP/conv.jsonl"; then pass; else fail "a symlink to /dev/stdout"; fi
mkfifo "$TMP/out.fifo"
cat "$TMP/out.fifo" >"$TMP/fifo.csv" &
reader=$!
expect_exit 0 "replay --jobs-csv FIFO" "$FLEETSIM" replay -q --jobs-csv "$TMP/out.fifo" $demo
wait $reader
if [ -p "$TMP/out.fifo" ] && [ "$(wc -l <"$TMP/fifo.csv")" -gt 1000 ]; then pass; else fail "FIFO output replaced or empty"; fi
# devices: written in place, never replaced (as root a rename would replace them)
if [ "$(id -u)" = 0 ] && mknod "$TMP/null" c 1 3 2>/dev/null && mknod "$TMP/full" c 1 7 2>/dev/null; then
  expect_exit 0 "replay --jobs-csv into a null device" "$FLEETSIM" replay -q --jobs-csv "$TMP/null" $demo
  if [ -c "$TMP/null" ]; then pass; else fail "a null device became a $(stat -c %F "$TMP/null")"; fi
  expect_exit 3 "replay --jobs-csv into a full device" "$FLEETSIM" replay -q --jobs-csv "$TMP/full" $demo
  if grep -qxF "$TMP/full: error: cannot write: No space left on device" "$TMP/err"; then pass; else fail "full device message: $(cat "$TMP/err")"; fi
  if [ -c "$TMP/full" ]; then pass; else fail "a full device became a $(stat -c %F "$TMP/full")"; fi
  if [ -c "$TMP/null" ] && [ -c "$TMP/full" ]; then
    # the same with the real ones, now that the private copies stayed devices
    expect_exit 0 "replay --jobs-csv /dev/null" "$FLEETSIM" replay -q --jobs-csv /dev/null $demo
    if [ -c /dev/null ]; then pass; else fail "/dev/null is no longer a character device"; fi
    expect_exit 3 "fit -o /dev/full" "$FLEETSIM" fit -q -o /dev/full $demo
    if [ -c /dev/full ]; then pass; else fail "/dev/full is no longer a character device"; fi
  fi
else
  skip "device outputs: not root, or mknod not allowed"
fi
# inputs that are not regular files are refused, or given up when silent
expect_exit 3 "trace stats /dev/zero refused" "$FLEETSIM" trace stats /dev/zero
if grep -qxF "/dev/zero: error: cannot read the trace '/dev/zero': it is a character device, not a regular file" "$TMP/err"; then pass; else fail "/dev/zero message: $(cat "$TMP/err")"; fi
expect_exit 3 "validate a folder" "$FLEETSIM" validate "$TMP"
expect_exit 3 "bench a folder" "$FLEETSIM" bench "$TMP"
if grep -qxF "$TMP: error: cannot read the suite '$TMP': it is a folder, not a regular file" "$TMP/err"; then pass; else fail "a folder as a suite: $(cat "$TMP/err")"; fi
mkfifo "$TMP/in.fifo"
expect_exit 3 "a silent FIFO (--pipe-wait 1)" "$FLEETSIM" --pipe-wait 1 validate "$TMP/in.fifo"
if grep -qxF "$TMP/in.fifo: error: cannot read the scenario '$TMP/in.fifo': a pipe with no data after 1 s (--pipe-wait sets the wait)" "$TMP/err"
then pass; else fail "silent FIFO: $(cat "$TMP/err")"; fi
expect_exit 3 "a silent FIFO as a trace" "$FLEETSIM" --pipe-wait=1 trace stats "$TMP/in.fifo"
if grep -qF "a pipe with no data after 1 s (--pipe-wait sets the wait)" "$TMP/err"; then pass; else fail "silent FIFO trace: $(cat "$TMP/err")"; fi
FLEETSIM_PIPE_WAIT_S=1 "$FLEETSIM" bench "$TMP/in.fifo" >/dev/null 2>"$TMP/err"
if grep -qF "a pipe with no data after 1 s" "$TMP/err"; then pass; else fail "silent FIFO suite (FLEETSIM_PIPE_WAIT_S): $(cat "$TMP/err")"; fi
cat $demo | "$FLEETSIM" trace stats /dev/stdin >"$TMP/out" 2>"$TMP/err" && grep -q "jobs         1000" "$TMP/out" && pass || fail "a trace through a pipe"
# size limits name themselves, and the option that raises them
head -c 2000000 /dev/zero | gzip >"$TMP/bomb.swf.gz"
expect_exit 3 "a gzip bomb over --max-input-mb 1" "$FLEETSIM" --max-input-mb 1 trace stats "$TMP/bomb.swf.gz"
if grep -qxF "$TMP/bomb.swf.gz: error: cannot read the trace '$TMP/bomb.swf.gz': larger than 1 MiB (the limit; --max-input-mb raises it)" "$TMP/err"
then pass; else fail "trace limit: $(cat "$TMP/err")"; fi
FLEETSIM_MAX_TRACE_MB=1 "$FLEETSIM" trace stats "$TMP/bomb.swf.gz" >/dev/null 2>"$TMP/err"
if grep -qF "larger than 1 MiB (the limit; --max-input-mb raises it)" "$TMP/err"; then pass; else fail "trace limit (FLEETSIM_MAX_TRACE_MB): $(cat "$TMP/err")"; fi
{ yes ';' | head -c 1500000; cat $demo; } | gzip >"$TMP/padded.swf.gz"
expect_exit 3 "a 1.6 MB trace over --max-input-mb 1" "$FLEETSIM" --max-input-mb 1 trace stats "$TMP/padded.swf.gz"
expect_exit 0 "a 1.6 MB trace under --max-input-mb=2" "$FLEETSIM" --max-input-mb=2 trace stats "$TMP/padded.swf.gz"
{ cat scenarios/examples/tiny.yaml; head -c 1100000 /dev/zero | tr '\0' '#'; echo; } >"$TMP/big.yaml"
expect_exit 3 "a scenario over --max-input-mb 1" "$FLEETSIM" --max-input-mb 1 validate "$TMP/big.yaml"
if grep -qxF "$TMP/big.yaml: error: cannot read the scenario '$TMP/big.yaml': larger than 1 MiB (the limit; --max-input-mb raises it)" "$TMP/err"
then pass; else fail "scenario limit: $(cat "$TMP/err")"; fi
expect_exit 0 "the same scenario under the default limit" "$FLEETSIM" validate "$TMP/big.yaml"
{ printf 'policies: [fcfs]\nworkloads:\n  - trace: %s\n' "$(pwd)/$demo"; head -c 1100000 /dev/zero | tr '\0' '#'; echo; } >"$TMP/big-suite.yaml"
expect_exit 3 "a suite over --max-input-mb 1" "$FLEETSIM" --max-input-mb 1 bench -q -j 1 "$TMP/big-suite.yaml"
if grep -qxF "$TMP/big-suite.yaml: error: cannot read the suite '$TMP/big-suite.yaml': larger than 1 MiB (the limit; --max-input-mb raises it)" "$TMP/err"
then pass; else fail "suite limit: $(cat "$TMP/err")"; fi
expect_exit 2 "--pipe-wait 0" "$FLEETSIM" --pipe-wait 0 validate "$TMP/big.yaml"
if grep -qxF "fleetsim: error: option '--pipe-wait' is 0, expected 1 to 86400" "$TMP/err"; then pass; else fail "--pipe-wait 0: $(cat "$TMP/err")"; fi
expect_exit 2 "--max-input-mb without a value" "$FLEETSIM" --max-input-mb
if grep -qxF "fleetsim: error: option '--max-input-mb' needs a value" "$TMP/err"; then pass; else fail "--max-input-mb alone: $(cat "$TMP/err")"; fi
FLEETSIM_PIPE_WAIT_S=soon "$FLEETSIM" validate "$TMP/big.yaml" >/dev/null 2>"$TMP/err"
if grep -qxF "fleetsim: error: FLEETSIM_PIPE_WAIT_S is 'soon', expected a whole number from 1 to 86400" "$TMP/err"; then pass; else fail "FLEETSIM_PIPE_WAIT_S=soon: $(cat "$TMP/err")"; fi
"$FLEETSIM" --help | grep -q -- "--max-input-mb N" && "$FLEETSIM" --help | grep -q -- "--pipe-wait S" && pass || fail "--help lacks the global options"
# no crash from GSL: a Weibull shape too small for Gamma() is refused by its key
{ cat scenarios/examples/tiny.yaml; printf 'failures:\n  preset: llama3\n  distribution: weibull\n  weibull_shape: 0.005\n'; } >"$TMP/weibull.yaml"
expect_exit 2 "forecast with weibull_shape 0.005" "$FLEETSIM" forecast -q -j 1 "$TMP/weibull.yaml"
if grep -qF "key 'failures.weibull_shape' is 0.005, too small" "$TMP/err"; then pass; else fail "weibull message: $(cat "$TMP/err")"; fi
# a workload that synthesizes no job runs (no qsort(NULL, 0)) and says what it did
expect_exit 0 "a forecast with no jobs" "$FLEETSIM" forecast -q -j 1 tests/fuzz/seeds/fuzz_replication/no-jobs.yaml
# a failure too rare to come within the horizon is no failure (not "out of memory")
expect_exit 0 "a forecast with a failure rate of 1e-300" "$FLEETSIM" forecast -q -j 1 tests/fuzz/seeds/fuzz_replication/rare-failures.yaml
# compare lines periods up by number: weeks beside quarters are refused before
# anything runs; a shorter horizon shows "-" once it has ended (not 0, not cut)
expect_exit 2 "compare weeks with quarters" "$FLEETSIM" compare -q -j 1 $small scenarios/examples/quarterly.yaml
if grep -qxF "fleetsim: error: cannot compare '$small' (horizon.period: week) with 'scenarios/examples/quarterly.yaml' (horizon.period: quarter): the variants are compared period by period, so their periods must be alike" "$TMP/err"
then pass; else fail "compare of different periods: $(cat "$TMP/err")"; fi
sed 's/^  length: 8w/  length: 3w/' $small >"$TMP/short.yaml"
expect_exit 0 "compare horizons of 8 and 3 weeks" "$FLEETSIM" compare -q -j 1 $small "$TMP/short.yaml"
if [ "$(grep -c '^[0-9]' "$TMP/out")" = 24 ] && [ "$(grep -cE '^[4-8] .* -$' "$TMP/out")" = 15 ] &&
   [ "$(grep -cE '^[1-3] .* -$' "$TMP/out")" = 0 ]; then pass; else fail "compare of 8 and 3 weeks: $(cat "$TMP/out")"; fi
# a scenario whose base trace is itself: the message names the file and line
printf 'cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 2}\nworkload:\n  trace: self.yaml\n' >"$TMP/scn/self.yaml"
expect_exit 4 "a scenario whose trace is itself" "$FLEETSIM" forecast -q -j 1 "$TMP/scn/self.yaml"
if grep -qF "replication 0: $TMP/scn/self.yaml:1:1: field 1 ('cluster:') is not a number" "$TMP/err"; then pass; else fail "self trace: $(cat "$TMP/err")"; fi
# a plugin that is no ELF file, or one built for another machine, says so (not "No such file")
printf 'hello' >"$TMP/notelf.so"
expect_exit 3 "a plugin that is no shared object" "$FLEETSIM" replay -q --policy "$TMP/notelf.so" $demo
if grep -qF "cannot load policy plugin '$TMP/notelf.so': not a shared object (no ELF header)" "$TMP/err"; then pass; else fail "not-ELF plugin: $(cat "$TMP/err")"; fi
if [ "$(uname -m)" = x86_64 ]; then
python3 -c "import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[18:20] = b'\xb7\x00'; open(sys.argv[2], 'wb').write(d)" \
  "$BUILD/policies/examples/example_policy.so" "$TMP/arm64.so"
expect_exit 3 "a plugin built for another machine" "$FLEETSIM" replay -q --policy "$TMP/arm64.so" $demo
if grep -qF "built for another machine (ELF class 2, machine 183;" "$TMP/err"; then pass; else fail "foreign plugin: $(cat "$TMP/err")"; fi
else
  skip "a plugin for another machine: the test patches an x86-64 plugin to aarch64"
fi
# a plugin with NULL fields is described; one that starts nothing fails its replay
idle=$BUILD/tests/policy/plugin_idle.so
expect_exit 0 "policy describe a plugin with NULL fields" "$FLEETSIM" policy describe "$idle"
if grep -qF "| (no name)" "$TMP/out" && grep -qF "bell??[31m" "$TMP/out"; then pass; else fail "describe idle: $(cat "$TMP/out")"; fi
expect_exit 1 "a policy that starts no job" "$FLEETSIM" replay --policy "$idle" $demo
if grep -qxF "fleetsim: error: policy '$idle' started none of the 1000 jobs it could run: its figures mean nothing" "$TMP/err"; then pass; else fail "idle message: $(cat "$TMP/err")"; fi
# a report is swapped in whole; one written over an old one on a full disk leaves the old one
expect_exit 0 "forecast --report" "$FLEETSIM" forecast -q -j 1 --report "$TMP/rep" $small
echo stale >"$TMP/rep/stale.dat"
expect_exit 0 "forecast --report over a report" "$FLEETSIM" forecast -q -j 1 --report "$TMP/rep" $small
if [ -f "$TMP/rep/index.html" ] && [ ! -e "$TMP/rep/stale.dat" ]; then pass; else fail "report not replaced whole"; fi
mkdir "$TMP/mine" && echo precious >"$TMP/mine/notes.txt"
expect_exit 3 "a folder that is not a report is not replaced" "$FLEETSIM" forecast -q -j 1 --report "$TMP/mine" $small
if [ "$(cat "$TMP/mine/notes.txt")" = precious ]; then pass; else fail "a user's folder was replaced"; fi
if [ "$(id -u)" = 0 ] && mkdir "$TMP/small-fs" && mount -t tmpfs -o size=2m tmpfs "$TMP/small-fs" 2>/dev/null; then
  expect_exit 0 "a report on a small tmpfs" "$FLEETSIM" forecast -q -j 1 --report "$TMP/small-fs/rep" $small
  cksum "$TMP/small-fs/rep/index.html" >"$TMP/old.sum"
  ls "$TMP/small-fs/rep" >"$TMP/old.ls"
  # fill the disk but for a few pages, so the next report fails midway
  avail=$(df -k --output=avail "$TMP/small-fs" | tail -1)
  dd if=/dev/zero of="$TMP/small-fs/filler" bs=1k count=$((avail - 24)) 2>/dev/null
  "$FLEETSIM" forecast -q -j 1 --report "$TMP/small-fs/rep" $small >/dev/null 2>"$TMP/err"
  got=$?
  if [ "$got" = 3 ] && grep -q "small-fs/rep/[a-z_]*\.[a-z]*: error: cannot write: No space left on device$" "$TMP/err"; then pass; else fail "report on a full disk: exit $got, $(cat "$TMP/err")"; fi
  cksum "$TMP/small-fs/rep/index.html" | cmp -s - "$TMP/old.sum" && pass || fail "the old report's index.html changed"
  ls "$TMP/small-fs/rep" | cmp -s - "$TMP/old.ls" && pass || fail "the old report's files changed"
  if [ "$(ls "$TMP/small-fs")" = "$(printf 'filler\nrep')" ]; then pass; else fail "left on the disk: $(ls "$TMP/small-fs")"; fi
  umount "$TMP/small-fs"
else
  skip "report on a full tmpfs: needs root and mount -t tmpfs"
fi

finish cli
