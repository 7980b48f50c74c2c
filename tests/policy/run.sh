#!/bin/sh
# tests/policy/run.sh: the policy contract suite (tests/policy/contract.c)
# against every built-in spec and the example plugin, then the plugin and
# `fleetsim policy` paths as users meet them. Its closing line adds the
# contract suite's counts to these checks'.
. tests/lib.sh
example=$BUILD/policies/examples/example_policy.so
bad_abi=$BUILD/tests/policy/plugin_bad_abi.so
demo=traces/examples/demo-gpu-cluster.swf

"$BUILD/tests/policy_contract" "$example" >"$TMP/contract" 2>&1
cat "$TMP/contract"
line=$(grep -E '^policy: [0-9]+ passed' "$TMP/contract")
PASSED=$(echo "$line" | sed -E 's/policy: ([0-9]+) passed.*/\1/')
FAILED=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
[ -n "$line" ] || fail "contract suite printed no result line"

# plugins: load and replay; ABI mismatch and missing files are clear errors
check "replay with the example plugin" "$FLEETSIM" replay -q --policy "$example" $demo
"$FLEETSIM" replay -q --json --policy "$example" $demo >"$TMP/a.json"
"$FLEETSIM" replay -q --json --policy "$example" $demo >"$TMP/b.json"
if cmp -s "$TMP/a.json" "$TMP/b.json"; then pass; else fail "plugin replay is not deterministic"; fi
expect_exit 2 "plugin with a wrong ABI" "$FLEETSIM" replay -q --policy "$bad_abi" $demo
if grep -q "has ABI version 42, but this fleetsim needs 1: rebuild it" "$TMP/err"; then pass
else fail "ABI mismatch message: $(cat "$TMP/err")"; fi
expect_exit 3 "missing plugin" "$FLEETSIM" replay -q --policy ./no-such-policy.so $demo
expect_exit 2 "plugin params twice" "$FLEETSIM" replay -q --policy "$example:x" --policy-params y $demo
# built-in parameters: by spec, by --policy-params, and errors
"$FLEETSIM" replay -q --json --policy "fairshare(half_life_s=3600)+easy" $demo >"$TMP/p1.json"
"$FLEETSIM" replay -q --json --policy "fairshare+easy" --policy-params half_life_s=3600 $demo >"$TMP/p2.json"
if python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); a.pop("policy"); b.pop("policy"); assert a==b' "$TMP/p1.json" "$TMP/p2.json"; then pass
else fail "--policy-params differs from parameters in the spec"; fi
expect_exit 2 "unknown parameter" "$FLEETSIM" replay -q --policy "fairshare(halflife_s=3)" $demo
if grep -q "unknown parameter 'halflife_s' for 'fairshare'; did you mean 'half_life_s'?" "$TMP/err"; then pass
else fail "unknown parameter message: $(cat "$TMP/err")"; fi
expect_exit 2 "parameter out of range" "$FLEETSIM" replay -q --policy "tiresias(thresholds_gpu_s=5;3)" $demo
expect_exit 2 "preemption with conservative" "$FLEETSIM" replay -q --policy "fcfs+conservative+preempt" $demo
expect_exit 2 "two placements" "$FLEETSIM" replay -q --policy "fcfs+pack+spread" $demo
# fleetsim policy
check "policy list" "$FLEETSIM" policy list
"$FLEETSIM" policy list >"$TMP/list"
for name in fcfs multifactor fairshare tiresias srtf easy greedy pack first-fit best-fit spread gavel preempt quota; do
  if grep -qE "^  $name " "$TMP/list"; then pass; else fail "policy list lacks $name"; fi
done
"$FLEETSIM" policy describe quota >"$TMP/quota"
if grep -q '| guarantee ' "$TMP/quota" && grep -q '| reclaim ' "$TMP/quota"; then pass; else fail "describe quota: no parameter table"; fi
check "describe the example plugin" "$FLEETSIM" policy describe "$example"
expect_exit 2 "describe unknown" "$FLEETSIM" policy describe fairshar
if grep -q "did you mean 'fairshare'" "$TMP/err"; then pass; else fail "describe suggestion: $(cat "$TMP/err")"; fi
expect_exit 3 "describe the wrong-ABI plugin" "$FLEETSIM" policy describe "$bad_abi"
expect_exit 2 "policy without subcommand" "$FLEETSIM" policy
finish policy
