#!/bin/sh
# tests/traces/run.sh: the GPU-cluster trace formats end to end, on the small
# files in this folder (written in each documented format) and, where
# ../shared/traces is there, on the real ones: detection and --format,
# trace stats (text and --json), trace convert to JSONL and back replaying
# job for job identically, and the cluster a replay builds from a machine or
# node list (or the message saying what it needs).
. tests/lib.sh
T=tests/traces

# file, format, GPU jobs read, jobs in the file
while read -r file fmt read total; do
  out=$("$FLEETSIM" trace stats -q "$T/$file" 2>"$TMP/err"); rc=$?
  if [ $rc = 0 ] && echo "$out" | grep -qx "format       $fmt" \
     && echo "$out" | grep -q "^GPU jobs     $read read, of $total in the file"; then pass
  else fail "trace stats $file: exit $rc, want format $fmt, $read of $total jobs"; sed 's/^/  | /' "$TMP/err" | head -5; fi
  check "trace stats --format $fmt $file" "$FLEETSIM" trace stats -q --format "$fmt" "$T/$file"
done <<'LIST'
itp-small.csv itp 40 40
philly-small.json philly 6 7
helios-small.csv helios 24 30
acme-small.csv helios 9 12
openb_pod_list_small.csv openb 8 10
pai_job_table.csv pai 4 6
LIST
check "--format acme" "$FLEETSIM" trace stats -q --format acme "$T/acme-small.csv"
expect_exit 2 "--format unknown" "$FLEETSIM" trace stats --format alibaba "$T/itp-small.csv"
if grep -q "formats\? *(auto, swf, jsonl, sacct, philly, helios, acme, pai, openb, itp)" "$TMP/err" \
   || grep -q "unknown format 'alibaba' (auto, swf, jsonl, sacct, philly, helios, acme, pai, openb, itp)" "$TMP/err"; then pass
else fail "unknown --format does not list the formats"; sed 's/^/  | /' "$TMP/err"; fi
# a format forced on the wrong file fails at the header, not silently
expect_exit 2 "ITP file read as openb" "$FLEETSIM" trace stats --format openb "$T/itp-small.csv"

# per-team (VC) figures, and --json carries them
if "$FLEETSIM" trace stats -q "$T/philly-small.json" | grep -Eq '^b436b2 +2 '; then pass; else fail "philly stats: VC b436b2 row"; fi
check "stats --json gpu section" sh -c "\"$FLEETSIM\" trace stats -q --json $T/helios-small.csv | python3 -c '
import json, sys
g = json.load(sys.stdin)[\"gpu\"]
assert g[\"format\"] == \"helios\" and g[\"jobs_in_file\"] == 30, g
o = g[\"overall\"]
assert o[\"jobs\"] == sum(t[\"jobs\"] for t in g[\"by_team\"]), o
assert abs(sum(o[\"outcome\"].values()) - 1) < 1e-9
assert o[\"queue_s\"][\"jobs\"] == o[\"jobs\"]
assert sum(o[\"gpus\"].values()) == o[\"jobs\"]
'"

# trace convert to JSONL and back: the same stats (queue times included) and
# the same schedule, job for job, under two policies
for case in "itp-small.csv --nodes 4 --slots 8" "philly-small.json --machines $T/philly-machines.csv" \
            "helios-small.csv --nodes 2 --slots 8" "acme-small.csv --nodes 2 --slots 8" \
            "openb_pod_list_small.csv --machines $T/openb_node_list_gpu_node.csv" "pai_job_table.csv --nodes 1 --slots 8"; do
  set -- $case; file=$1; shift
  j="$TMP/${file%.*}.jsonl"
  if ! "$FLEETSIM" trace convert -q "$T/$file" "$j"; then fail "trace convert $file"; continue; fi
  "$FLEETSIM" trace stats -q --json --by-team "$T/$file" | python3 -c 'import json,sys; g=json.load(sys.stdin)["gpu"]; print(json.dumps([g["overall"], g["by_team"]], sort_keys=True))' >"$TMP/s1"
  "$FLEETSIM" trace stats -q --json --by-team "$j" | python3 -c 'import json,sys; g=json.load(sys.stdin)["gpu"]; print(json.dumps([g["overall"], g["by_team"]], sort_keys=True))' >"$TMP/s2"
  if [ -s "$TMP/s1" ] && cmp -s "$TMP/s1" "$TMP/s2"; then pass; else fail "$file: stats differ after convert"; diff "$TMP/s1" "$TMP/s2" | head -5; fi
  for pol in fcfs+easy tiresias; do
    "$FLEETSIM" replay -q -p $pol --jobs-csv "$TMP/a.csv" "$@" "$T/$file" | sed 1d >"$TMP/a.txt"
    "$FLEETSIM" replay -q -p $pol --jobs-csv "$TMP/b.csv" "$@" "$j" | sed 1d >"$TMP/b.txt"
    # the trace line differs; a JSONL trace has no skipped-at-read count
    if [ -s "$TMP/a.csv" ] && cmp -s "$TMP/a.csv" "$TMP/b.csv" \
       && [ "$(grep -v '^jobs' "$TMP/a.txt")" = "$(grep -v '^jobs' "$TMP/b.txt")" ]; then pass
    else fail "$file under $pol: replay of the JSONL differs"; diff "$TMP/a.txt" "$TMP/b.txt" | head -6; fi
  done
done

# the cluster: an openb pod list finds its node list; the others say what they need
out=$("$FLEETSIM" replay -q "$T/openb_pod_list_small.csv")
if echo "$out" | grep -q "^cluster      4 nodes, 20 GPUs ($T/openb_node_list_gpu_node.csv: "; then pass
else fail "openb replay did not take its node list"; echo "$out" | sed 's/^/  | /'; fi
# openb honours a pod's gpu_spec: pod-b (V100M16) waits for pod-a's V100 to
# free at 1000 s although the T4 node's two GPUs are free all along (pod-c,
# unconstrained, runs there at once)
"$FLEETSIM" replay -q -p fcfs+easy --machines "$T/openb-constrained-nodes.csv" --jobs-csv "$TMP/constrained.csv" \
  "$T/openb-constrained-pods.csv" >/dev/null 2>"$TMP/err"
if [ "$(cut -d, -f1-4 "$TMP/constrained.csv" | tr '\n' ' ')" = "id,submit_s,start_s,end_s 1,0,0,1000 2,10,1000,1500 3,20,20,120 " ]; then pass
else fail "openb constrained pod did not wait for its GPU model"; sed 's/^/  | /' "$TMP/constrained.csv"; fi
expect_exit 2 "philly without a machine list" "$FLEETSIM" replay "$T/philly-small.json"
if grep -q "gives no machine size: give --machines with Philly's cluster_machine_list" "$TMP/err"; then pass
else fail "philly replay without a size: message"; sed 's/^/  | /' "$TMP/err"; fi
expect_exit 2 "itp without a size" "$FLEETSIM" replay "$T/itp-small.csv"
if grep -q "the ITP release gives no cluster sizes" "$TMP/err"; then pass; else fail "itp replay without a size: message"; fi
out=$("$FLEETSIM" replay -q --machines "$T/philly-machines.csv" "$T/philly-small.json")
if echo "$out" | grep -q "^cluster      5 nodes, 34 GPUs (.*1 machines without any left out)" && echo "$out" | grep -q "^jobs         6 run"; then pass
else fail "philly replay on its machine list"; echo "$out" | sed 's/^/  | /'; fi
out=$("$FLEETSIM" replay -q --machines "$T/helios-vc_gpu_number.csv" "$T/helios-small.csv")
if echo "$out" | grep -q "^cluster      3 nodes, 24 GPUs" && echo "$out" | grep -q "^jobs         24 run"; then pass
else fail "helios replay on its VC table"; echo "$out" | sed 's/^/  | /'; fi
expect_exit 2 "--machines with --nodes" "$FLEETSIM" replay --machines "$T/philly-machines.csv" --nodes 2 "$T/philly-small.json"
expect_exit 2 "--machines not a machine list" "$FLEETSIM" replay --machines "$T/itp-small.csv" "$T/philly-small.json"
expect_exit 2 "a machine list as a trace" "$FLEETSIM" replay --nodes 1 "$T/philly-machines.csv"
if grep -q "is a machine list, not a job trace: give it to 'fleetsim replay --machines'" "$TMP/err"; then pass
else fail "a machine list as a trace: message"; fi
printf '0\tzewura\t2\t80\t1\t529426432\n1\tzegox\t3\t12\t1\t94035968\n' >"$TMP/alea.machines"
out=$("$FLEETSIM" trace stats "$TMP/alea.machines")
if echo "$out" | grep -qx "nodes        5 with slots, 0 without" && echo "$out" | grep -qx "slots        196: 3 x 12 zegox, 2 x 80 zewura"; then pass
else fail "trace stats of an Alea .machines file"; echo "$out" | sed 's/^/  | /'; fi
out=$("$FLEETSIM" trace stats "$T/philly-machines.csv")
if echo "$out" | grep -qx "nodes        5 with GPUs, 1 without" && echo "$out" | grep -qx "GPUs         34: 4 x 8 24GB, 1 x 2 12GB"; then pass
else fail "trace stats of a machine list"; echo "$out" | sed 's/^/  | /'; fi

# the real traces, where they are
gpu_files="msft-itp-elasticflow-cluster01.csv.gz:1595 msft-itp-elasticflow-cluster10.csv.gz:260
philly-jobs-pass-4gpu-marwage.json.gz:3034 alibaba-v2023-openb_pod_list_default.csv.gz:8152"
for fc in $gpu_files; do
  f=${fc%%:*} n=${fc##*:}
  if ! have_trace "$f"; then skip "$f not in $SHARED_TRACES (set FLEETSIM_SHARED_TRACES)"; continue; fi
  got=$("$FLEETSIM" trace stats -q --json "$SHARED_TRACES/$f" | python3 -c 'import json,sys; print(json.load(sys.stdin)["gpu"]["jobs_in_file"])')
  if [ "$got" = "$n" ]; then pass; else fail "$f: $got jobs in the file, the README says $n"; fi
done
if have_trace msft-itp-elasticflow-cluster10.csv.gz; then
  f="$SHARED_TRACES/msft-itp-elasticflow-cluster10.csv.gz"
  "$FLEETSIM" trace convert -q "$f" "$TMP/itp10.jsonl"
  "$FLEETSIM" replay -q -p tiresias --nodes 8 --slots 8 --jobs-csv "$TMP/r1.csv" "$f" >/dev/null
  "$FLEETSIM" replay -q -p tiresias --nodes 8 --slots 8 --jobs-csv "$TMP/r2.csv" "$TMP/itp10.jsonl" >/dev/null
  if [ -s "$TMP/r1.csv" ] && cmp -s "$TMP/r1.csv" "$TMP/r2.csv"; then pass; else fail "ITP cluster10: JSONL replay differs"; fi
else skip "msft-itp-elasticflow-cluster10.csv.gz not in $SHARED_TRACES"; fi
if have_trace alibaba-v2023-openb_pod_list_default.csv.gz && have_trace alibaba-v2023-openb_node_list_gpu_node.csv.gz; then
  out=$("$FLEETSIM" replay -q "$SHARED_TRACES/alibaba-v2023-openb_pod_list_default.csv.gz")
  if echo "$out" | grep -q "^cluster      1213 nodes, 6212 GPUs"; then pass; else fail "openb default: node list not used"; fi
else skip "openb pod and node lists not in $SHARED_TRACES"; fi
# the fuzz targets of these readers build with the project's compiler and
# hold on their seeds (`make fuzz` runs them under libFuzzer with clang)
libs="$(pkg-config --libs gsl yaml-0.1 jansson zlib libisal 2>/dev/null) -lm -ldl"
for t in philly helios openb itp pai machines; do
  # $SAN: the sanitizer flags the libraries were built with (make asan)
  if ${CC:-cc} $SAN -std=c11 -I. -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -o "$TMP/fuzz_$t" "tests/fuzz/fuzz_$t.c" \
       tests/fuzz/standalone.c "$BUILD/libfleetcore.a" "$BUILD/libfleetpolicies.a" $libs 2>"$TMP/err" \
     && "$TMP/fuzz_$t" tests/fuzz/seeds/fuzz_$t/*; then pass
  else fail "fuzz_$t does not build or fails on its seeds"; sed 's/^/  | /' "$TMP/err" | head -5; fi
done
finish gputrace
