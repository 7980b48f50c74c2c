#!/bin/sh
# tests/agreement/run.sh: fleetsim's replay against an independent Python
# re-implementation in the style of the established simulators
# (tests/agreement/reference_sim.py), job by job, on the full HPC2N log.
#  - FCFS without backfilling: every start time equal (the tie rule does not
#    matter without backfilling).
#  - EASY with fleetsim's tie rule: every start time equal.
#  - EASY with pyss's tie rule (submissions before terminations at an
#    instant, a pass per event): the large majority equal (>= 95%); the
#    rest differ only through that rule (see README, "Tie rules").
. tests/lib.sh
trace=HPC2N-2002-2.2-cln.swf.gz
if ! have_trace $trace; then
  skip "agreement: $SHARED_TRACES/$trace not found"; finish agreement; exit 0
fi
if ! command -v python3 >/dev/null; then
  skip "agreement: python3 not installed (make deps installs it)"; finish agreement; exit 0
fi
starts() { # policy -> "id start" lines sorted by id
  "$FLEETSIM" replay -q --policy "$1" --jobs-csv "$TMP/jobs.csv" "$SHARED_TRACES/$trace" >/dev/null &&
    tail -n +2 "$TMP/jobs.csv" | awk -F, '$3 >= 0 {print $1, $3}' | sort -n
}
reference() { python3 tests/agreement/reference_sim.py "$SHARED_TRACES/$trace" --policy "$1" --ties "$2" | sort -n; }

starts fcfs >"$TMP/ours_fcfs"
reference fcfs pyss >"$TMP/ref_fcfs"
n=$(wc -l <"$TMP/ours_fcfs")
if [ "$n" = 202871 ] && cmp -s "$TMP/ours_fcfs" "$TMP/ref_fcfs"; then pass; else
  fail "agreement: FCFS start times differ on $(diff "$TMP/ours_fcfs" "$TMP/ref_fcfs" | grep -c '^<') of $n jobs"; fi

starts fcfs+easy >"$TMP/ours_easy"
reference easy fleetsim >"$TMP/ref_easy"
if cmp -s "$TMP/ours_easy" "$TMP/ref_easy"; then pass; else
  fail "agreement: EASY (same tie rule) differs on $(diff "$TMP/ours_easy" "$TMP/ref_easy" | grep -c '^<') jobs"; fi

reference easy pyss >"$TMP/ref_easy_pyss"
differ=$(diff "$TMP/ours_easy" "$TMP/ref_easy_pyss" | grep -c '^<')
echo "agreement: EASY under pyss's tie rule: $differ of $n jobs start at another time"
if [ "$differ" -le $((n / 20)) ]; then pass; else fail "agreement: EASY under pyss's tie rule differs on $differ jobs (> 5%)"; fi
finish agreement
