#!/bin/sh
# tests/fit/run.sh: `fleetsim fit` keeps the workload's shape. On KTH-SP2 and
# HPC2N (../shared/traces, skipped when absent) the trace replayed on its
# machine and 5 forecasts of the fitted workload on the same machine, same
# policy (fcfs+easy), must agree:
#  - utilization within 0.04 (absolute). The fit keeps the work: GPU counts
#    as observed and runtimes per size class as bin means (the mean exact),
#    so what is left is arrival noise, the replay killing jobs at their
#    limits and the horizon's end: measured 0.012 (KTH) and 0.021 (HPC2N),
#    with a spread of about 0.03 between replications (KTH), 0.013 for the
#    mean of five; 0.04 is three of those. (Folding every job above 16
#    into 16, as fit did before, gave 0.50-0.55 against 0.70 on KTH.)
#  - wait p95 within a factor of 2 either way. At 60-70% utilization the
#    p95 wait is made by bursts (job arrays, load swings over weeks): the
#    replications alone span a factor of 1.7 on KTH (8.0 h to 13.8 h);
#    measured 1.13 (KTH) and 1.38 (HPC2N). A factor of 2 still tells a 2 h
#    SLO from a 1 d one; it is not a promise of minutes.
#  - wait p50 under 10 min where the replay's is under a minute (both: 0 s).
# Also: no GPU count is merged by default, the fitted section is a valid
# scenario workload, and two runs are byte-identical.
. tests/lib.sh
for trace in KTH-SP2-1996-2.1-cln.swf.gz HPC2N-2002-2.2-cln.swf.gz; do
  if ! have_trace $trace; then
    skip "fit: $SHARED_TRACES/$trace not found: round trip not checked"; continue
  fi
  if ! "$FLEETSIM" fit --json -q -o "$TMP/w.yaml" "$SHARED_TRACES/$trace" >"$TMP/fit.json" 2>"$TMP/err"; then
    fail "fit: fleetsim fit $trace failed"; sed 's/^/  | /' "$TMP/err" | head -5; continue
  fi
  check "fit: $trace round trip agrees (utilization, wait p50/p95)" python3 - "$TMP/fit.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rt = d["round_trip"]
r, f = rt["replay"], rt["forecast_mean"]
assert rt["policy"] == "fcfs+easy" and len(rt["forecasts"]) == 5, rt
print("  replay utilization %.3f wait p50 %.0f s p95 %.2f h; forecast %.3f, %.0f s, %.2f h"
      % (r["utilization"], r["wait_p50_s"], r["wait_p95_s"] / 3600,
         f["utilization"], f["wait_p50_s"], f["wait_p95_s"] / 3600))
assert abs(f["utilization"] - r["utilization"]) <= 0.04, "utilization"
ratio = f["wait_p95_s"] / r["wait_p95_s"]
assert 0.5 <= ratio <= 2, "wait p95 ratio %.2f" % ratio
if r["wait_p50_s"] < 60:
    assert f["wait_p50_s"] < 600, "wait p50"
for g in d["groups"]:
    assert g["gpu_values_merged"]["counts"] == 0, g["name"]
PY
  cat "$TMP/out" | grep '^  replay' || true
  { printf 'cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 64}\n'; cat "$TMP/w.yaml"; } >"$TMP/s.yaml"
  check "fit: $trace fitted workload is a valid scenario section" "$FLEETSIM" validate "$TMP/s.yaml"
  "$FLEETSIM" fit --json -q -o "$TMP/w2.yaml" "$SHARED_TRACES/$trace" >"$TMP/fit2.json" 2>/dev/null
  cmp -s "$TMP/w.yaml" "$TMP/w2.yaml" && cmp -s "$TMP/fit.json" "$TMP/fit2.json" && pass ||
    fail "fit: two fits of $trace differ"
done
# merging is said, with the share of work: KTH's jobs above the 8 most
# frequent counts carry about half of its work
trace=KTH-SP2-1996-2.1-cln.swf.gz
if have_trace $trace; then
  "$FLEETSIM" fit --by none --gpu-values 8 --check-replications 0 -o "$TMP/w8.yaml" "$SHARED_TRACES/$trace" 2>"$TMP/err" >/dev/null
  grep -q "warning: group 'all': 89 of 97 GPU counts merged into the nearest kept ones (17.2% of its jobs, 52.3% of its work); --gpu-values 0 keeps every count" "$TMP/err" &&
    pass || { fail "fit: merging GPU counts is not warned with its share of work"; sed 's/^/  | /' "$TMP/err" | head -3; }
fi
finish fit
