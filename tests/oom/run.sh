#!/bin/sh
# tests/oom/run.sh (group `oom`): memory that runs out, at every place it
# can. fail_alloc.so (LD_PRELOAD) makes the k-th allocation of a run fail;
# each case runs once per k (every k, or a spread of 300 where a run makes
# thousands; FLEETSIM_OOM_ALL=1 walks every k) and must then either
# succeed with exactly the output of a normal run, or exit 4 saying "out of
# memory", never die of a signal, exit with another status (2 would blame
# the input, 3 the files) or leave a half-written output file. Skipped under
# the sanitizers, whose allocator must come first. The count goes on in a
# forked worker (forecast -j 1) and starts again in a program the run
# executes, which LD_PRELOAD reaches too: no case here executes one.
. tests/lib.sh
if [ -n "$SAN" ]; then
  skip "under sanitizers: their allocator cannot be preloaded over"
  finish oom
  exit $?
fi
case $FLEETSIM in /*) ;; *) FLEETSIM=$(pwd)/$FLEETSIM ;; esac
SHIM=$TMP/fail_alloc.so
if ! ${CC:-cc} -O1 -shared -fPIC -Wall -Wextra -Werror -o "$SHIM" tests/oom/fail_alloc.c 2>"$TMP/err"; then
  fail "cannot build the allocation-failure library: $(head -3 "$TMP/err")"
  finish oom
  exit 1
fi
DEMO=traces/examples/demo-gpu-cluster.swf
gzip -c "$DEMO" >"$TMP/demo.swf.gz"

# walk NAME OUTFILE CMD...: OUTFILE ("-" for none) is a file CMD writes
walk() {
  _name=$1 _file=$2; shift 2
  rm -f "$_file"
  if ! "$@" >"$TMP/ref.out" 2>"$TMP/ref.err"; then
    fail "$_name: the run without failures failed: $(head -3 "$TMP/ref.err")"
    return
  fi
  [ "$_file" = - ] || mv "$_file" "$TMP/ref.file"
  rm -f "$TMP/count"
  if ! FLEETSIM_ALLOC_COUNT=$TMP/count LD_PRELOAD=$SHIM "$@" >/dev/null 2>&1; then
    fail "$_name: the run counting allocations failed"
    return
  fi
  _n=$(cat "$TMP/count" 2>/dev/null)
  if [ -z "$_n" ] || [ "$_n" -lt 10 ]; then
    fail "$_name: the library counted no allocations ('$_n')"
    return
  fi
  _step=$(((_n + 299) / 300))
  [ -n "$FLEETSIM_OOM_ALL" ] && _step=1
  _k=1 _runs=0 _bad=0 _ok=0
  while [ $_k -le "$_n" ]; do
    rm -f "$_file"
    FLEETSIM_FAIL_ALLOC=$_k LD_PRELOAD=$SHIM "$@" >"$TMP/out" 2>"$TMP/err"
    _rc=$?
    _why=
    if [ $_rc = 0 ]; then
      _ok=$((_ok + 1))
      cmp -s "$TMP/out" "$TMP/ref.out" || _why="succeeded with other output"
      [ "$_file" = - ] || cmp -s "$_file" "$TMP/ref.file" || _why="succeeded with another $_file"
    elif [ $_rc = 4 ]; then
      grep -q -e "out of memory" -e "Cannot allocate memory" "$TMP/err" || _why="exit 4 without 'out of memory'"
      # a file written whole before the failure may stay; none half-written
      [ "$_file" = - ] || [ ! -e "$_file" ] || cmp -s "$_file" "$TMP/ref.file" || _why="exit 4 and $_file half-written"
    else
      _why="exit $_rc"
    fi
    if [ -n "$_why" ]; then
      _bad=$((_bad + 1))
      [ $_bad -le 3 ] && echo "  $_name: allocation $_k failing: $_why: $(head -c 200 "$TMP/err" | tr '\n' ' ')"
    fi
    _runs=$((_runs + 1))
    _k=$((_k + _step))
  done
  if [ $_bad = 0 ]; then pass; else fail "$_name: $_bad of $_runs runs went wrong"; fi
  echo "oom $_name: $_runs of $_n allocations failed in turn: $_ok runs succeeded as without, $((_runs - _ok)) exited 4"
}

walk "replay fcfs+conservative" - "$FLEETSIM" replay --policy fcfs+conservative "$DEMO"
walk "replay sjf+easy, gzip, --json, --jobs-csv" "$TMP/jobs.csv" \
  "$FLEETSIM" replay --json --jobs-csv "$TMP/jobs.csv" --policy sjf+easy "$TMP/demo.swf.gz"
walk "replay srtf (preempts)" - "$FLEETSIM" replay --policy srtf "$DEMO"
walk "replay tiresias with starvation (preempts)" - "$FLEETSIM" replay --policy "tiresias(starve_factor=2)" "$DEMO"
walk "trace convert to JSONL" "$TMP/demo.jsonl" "$FLEETSIM" trace convert "$DEMO" "$TMP/demo.jsonl"
walk "forecast: fabric, failures, services" - "$FLEETSIM" forecast -j 1 --json tests/oom/tiny.yaml
walk "validate --json" - "$FLEETSIM" validate --json tests/oom/tiny.yaml
walk "trace stats --json (Philly)" - "$FLEETSIM" trace stats --json tests/traces/philly-small.json
walk "fit --json (ITP)" - "$FLEETSIM" fit --json tests/traces/itp-small.csv
finish oom
