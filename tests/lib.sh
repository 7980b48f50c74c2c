# tests/lib.sh: shared helpers for the shell test scripts. Each script sources
# this, calls pass/fail/skip, and ends with `finish NAME`, which prints
# "NAME: N passed, N failed, N skipped" for tests/run.sh to add up.
BUILD=${BUILD:-build}
FLEETSIM=${FLEETSIM:-$BUILD/fleetsim}
SHARED_TRACES=${FLEETSIM_SHARED_TRACES:-../shared/traces}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fleetsim-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PASSED=0 FAILED=0 SKIPPED=0

pass() { PASSED=$((PASSED + 1)); }
fail() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }
skip() { SKIPPED=$((SKIPPED + 1)); echo "skip: $*"; }
# check NAME COMMAND...: passes if the command exits 0
check() { name=$1; shift; if "$@" >"$TMP/out" 2>&1; then pass; else fail "$name"; sed 's/^/  | /' "$TMP/out" | head -20; fi; }
# expect_exit CODE NAME COMMAND...: passes if the command exits with CODE
expect_exit() {
  want=$1 name=$2; shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"; got=$?
  if [ "$got" = "$want" ]; then pass; else fail "$name: exit $got, want $want"; sed 's/^/  | /' "$TMP/err" | head -10; fi
}
have_trace() { [ -r "$SHARED_TRACES/$1" ]; }
finish() { echo "$1: $PASSED passed, $FAILED failed, $SKIPPED skipped"; [ "$FAILED" = 0 ]; }
