#!/bin/sh
# tests/bad/run.sh: every file in tests/bad with a NAME.expect beside it is
# given to fleetsim, which must exit as the first line says ("exit N") and
# print each further line verbatim on stderr. See tests/bad/README.md (what
# runs each kind of case: scenarios, suites, policy specs, traces).
. tests/lib.sh
for expect in tests/bad/*.expect; do
  input=${expect%.expect}
  name=$(basename "$input")
  if [ ! -e "$input" ]; then fail "$name: no input file beside $expect"; continue; fi
  # jobs larger than the cluster are the simulator's to report, not the reader's;
  # scenarios are checked by `fleetsim validate`
  case $name in
    too-big.*|replay-*) set -- replay "$input" ;;
    suite-*.yaml) set -- bench -q -j 1 "$input" ;;
    compare-*.yaml) set -- compare -q -j 1 scenarios/examples/quarterly.yaml "$input" ;;
    policy-*.spec) set -- replay -q --policy "$(cat "$input")" traces/examples/demo-gpu-cluster.swf ;;
    *.yaml) set -- validate "$input" ;;
    *) set -- trace stats "$input" ;;
  esac
  "$FLEETSIM" "$@" >/dev/null 2>"$TMP/err"
  got=$?
  want=$(sed -n '1s/^exit //p' "$expect")
  ok=1
  if [ "$got" != "$want" ]; then ok=0; echo "  $name: exit $got, want $want"; fi
  sed 1d "$expect" >"$TMP/lines"
  while IFS= read -r line; do
    if ! grep -qxF -- "$line" "$TMP/err"; then ok=0; echo "  $name: missing on stderr: $line"; fi
  done <"$TMP/lines"
  if [ $ok = 1 ]; then pass; else fail "$name (fleetsim $*)"; sed 's/^/  | /' "$TMP/err" | head -10; fi
done
finish bad
