#!/bin/sh
# tests/agreement/run.sh: fleetsim's replay against the per-job outputs of two
# established simulators, pyss and CQSim, on the first 10,000 HPC2N jobs
# (../shared/validation/peers-hpc2n-10k; its README explains the jobs and
# each simulator's event convention). Job by job, start and end:
#  - FCFS, every convention: identical to pyss and to CQSim on every job.
#  - EASY with --convention pyss: identical to pyss on every job.
#  - EASY with --convention cqsim: identical to CQSim fed the requested time.
#  - EASY with the default convention (fleetsim's): the agreement with each
#    is printed and held above a floor (measured: 9,760 and 9,739 of 10,000).
# Needs ../shared (FLEETSIM_SHARED_TRACES, FLEETSIM_SHARED_PEERS); skips with
# a message when it is absent.
. tests/lib.sh
trace=HPC2N-2002-2.2-cln.swf.gz
PEERS=${FLEETSIM_SHARED_PEERS:-$SHARED_TRACES/../validation/peers-hpc2n-10k}
FLOOR_PYSS=9750
FLOOR_CQSIM=9730
if ! have_trace $trace; then
  skip "agreement: $SHARED_TRACES/$trace not found (set FLEETSIM_SHARED_TRACES)"; finish agreement; exit 0
fi
if [ ! -r "$PEERS/pyss_easy.csv.gz" ]; then
  skip "agreement: peer outputs not found in $PEERS (set FLEETSIM_SHARED_PEERS)"; finish agreement; exit 0
fi

# The jobs, as the peers' README builds them: the header and the first 10,000 job lines.
gzip -dc "$SHARED_TRACES/$trace" | awk '/^;/ {print; next} {if (++n <= 10000) print}' >"$TMP/hpc2n-10k.swf"
sum=$(md5sum <"$TMP/hpc2n-10k.swf" | cut -d' ' -f1)
if [ "$sum" = 5e7e351bf6c5aeb07c5b7d66aad01d4a ]; then pass; else
  fail "agreement: the 10,000-job prefix has md5 $sum, not the peers' 5e7e351bf6c5aeb07c5b7d66aad01d4a"; fi
for p in pyss_fcfs cqsim_fcfs pyss_easy cqsim-reqtime_easy cqsim_easy; do
  gzip -dc "$PEERS/$p.csv.gz" >"$TMP/$p.csv"
done

# ours CONVENTION POLICY -> $TMP/ours.csv (id,submit_s,start_s,end_s,...)
ours() {
  "$FLEETSIM" replay -q --convention "$1" --policy "$2" --jobs-csv "$TMP/ours.csv" "$TMP/hpc2n-10k.swf" >/dev/null
}
# same PEER -> jobs of the peer's 10,000 with our start and end equal to its own
same() {
  awk -F, 'FNR == 1 {next} NR == FNR {s[$1] = $3; e[$1] = $4; next}
    ($1 in s) && s[$1] == $3 && e[$1] == $4 {n++} END {print n + 0}' "$TMP/ours.csv" "$TMP/$1.csv"
}
# identical WHAT PEER: every one of the 10,000 jobs
identical() {
  n=$(same "$2")
  echo "agreement: $1 vs $2: $n of 10000 jobs with the same start and end"
  if [ "$n" = 10000 ]; then pass; else fail "agreement: $1 differs from $2 on $((10000 - n)) jobs"; fi
}

for c in fleetsim pyss cqsim; do
  if ours $c fcfs; then
    identical "fcfs --convention $c" pyss_fcfs
    identical "fcfs --convention $c" cqsim_fcfs
  else fail "agreement: fleetsim replay failed (fcfs, convention $c)"; fi
done

if ours pyss fcfs+easy; then
  identical "fcfs+easy --convention pyss" pyss_easy
  echo "agreement: fcfs+easy --convention pyss vs cqsim-reqtime_easy: $(same cqsim-reqtime_easy) of 10000 (the peers agree on 9979)"
else fail "agreement: fleetsim replay failed (fcfs+easy, convention pyss)"; fi

if ours cqsim fcfs+easy; then
  identical "fcfs+easy --convention cqsim" cqsim-reqtime_easy
  echo "agreement: fcfs+easy --convention cqsim vs pyss_easy: $(same pyss_easy) of 10000"
else fail "agreement: fleetsim replay failed (fcfs+easy, convention cqsim)"; fi

if ours fleetsim fcfs+easy; then
  np=$(same pyss_easy) nc=$(same cqsim-reqtime_easy) no=$(same cqsim_easy)
  echo "agreement: fcfs+easy (default convention) vs pyss_easy: $np of 10000 (floor $FLOOR_PYSS)"
  echo "agreement: fcfs+easy (default convention) vs cqsim-reqtime_easy: $nc of 10000 (floor $FLOOR_CQSIM)"
  echo "agreement: fcfs+easy (default convention) vs cqsim_easy (CQSim's run-time oracle, not textbook): $no of 10000"
  if [ "$np" -ge $FLOOR_PYSS ]; then pass; else fail "agreement: default convention vs pyss_easy: $np < floor $FLOOR_PYSS"; fi
  if [ "$nc" -ge $FLOOR_CQSIM ]; then pass; else fail "agreement: default convention vs cqsim-reqtime_easy: $nc < floor $FLOOR_CQSIM"; fi
else fail "agreement: fleetsim replay failed (fcfs+easy, default convention)"; fi
finish agreement
