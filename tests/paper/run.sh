#!/bin/sh
# tests/paper/run.sh: published results reproduced digit for digit.
#  1. RLScheduler (SC'20) Tables V and VI: every heuristic cell (40) for
#     Lublin-1 and HPC2N, with and without backfilling; WFP3 and UNICEP in
#     the documented compatibility mode (--compat-wait).
#  2. The per-window FCFS values on Lublin-1 given for debugging.
# Needs ../shared/traces (FLEETSIM_SHARED_TRACES); skips with a message if absent.
. tests/lib.sh
table=tests/paper/rlscheduler_tables.txt
grep -v '^#' "$table" | while read -r trace backfill ordering bsld util; do
  echo "$trace $backfill $ordering $bsld $util"
done >"$TMP/cells"
while read -r trace backfill ordering bsld util; do
  if ! have_trace "$trace"; then skip "paper: $SHARED_TRACES/$trace not found"; skip "paper"; continue; fi
  spec=$ordering; [ "$backfill" = yes ] && spec="$ordering+backfill"
  compat=""; case $ordering in wfp3|unicep) compat=--compat-wait ;; esac
  if ! "$FLEETSIM" replay --protocol rlscheduler $compat --policy "$spec" --json -q "$SHARED_TRACES/$trace" >"$TMP/r.json" 2>"$TMP/r.err"; then
    fail "paper: $trace $spec: fleetsim failed: $(cat "$TMP/r.err")"; fail "paper"; continue
  fi
  got_bsld=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["bsld_mean"])' "$TMP/r.json")
  got_util=$(python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["utilization_mean"])' "$TMP/r.json")
  if [ "$got_bsld" = "$bsld" ]; then pass; else fail "paper: $trace $spec bsld $got_bsld, published $bsld"; fi
  if [ "$got_util" = "$util" ]; then pass; else fail "paper: $trace $spec utilization $got_util, published $util"; fi
done <"$TMP/cells"

# Per-window FCFS bsld on Lublin-1 (the protocol's debugging aid).
if have_trace lublin_256.swf.gz; then
  for mode in no yes; do
    if [ $mode = no ]; then spec=fcfs; want="6862.26 7034.45 9090.84 5405.50 7847.37 6366.98 7655.81 7535.14 10071.42 4867.95"
    else spec=fcfs+backfill; want="163.71 263.50 247.54 128.57 261.42 239.81 192.07 358.81 297.78 204.96"; fi
    got=$("$FLEETSIM" replay --protocol rlscheduler --policy $spec --json -q "$SHARED_TRACES/lublin_256.swf.gz" |
      python3 -c 'import json,sys; print(" ".join("%.2f" % w["bsld"] for w in json.load(sys.stdin)["windows"]))')
    if [ "$got" = "$want" ]; then pass; else fail "paper: lublin $spec windows: got $got, want $want"; fi
  done
else
  skip "paper: lublin_256.swf.gz not found (per-window check)"
fi
finish paper
