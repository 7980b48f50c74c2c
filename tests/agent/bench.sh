#!/bin/sh
# tests/agent/bench.sh: fleetsim-agent figures for `make bench`:
#  (1) submit-to-start latency on an idle agent (p50/p95/max over 200 jobs),
#      from the client's call to the recorded start, and the agent's own
#      submit->start time;
#  (2) sustained submissions per second while 1,000 jobs wait in the queue
#      (the fake 2 x 8 GPUs are held by long jobs, so every submission queues
#      and triggers a scheduling pass over the whole queue);
#  (3) as root: root's submit latency while uid 65534 holds 1,000 idle
#      connections to the socket and 1,000 to the HTTP listener (a figure,
#      not a timed test).
# Each submission is a separate client process, as users run it.
BUILD=${BUILD:-build}
ROOT=$(pwd)
AGENT=$ROOT/$BUILD/fleetsim-agent
case $BUILD in /*) AGENT=$BUILD/fleetsim-agent ;; esac
TMP=$(mktemp -d "${TMPDIR:-/tmp}/fleetsim-agent-bench.XXXXXX")
SOCK=$TMP/agent.sock
cat >"$TMP/inv.json" <<'JSON'
{"nodes": [{"name": "gpu01", "gpus": 8}, {"name": "gpu02", "gpus": 8}]}
JSON
chmod 755 "$TMP"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "fleetsim-bench-token-0123456789" >"$TMP/token"; chmod 600 "$TMP/token"
{
  # as a user the agent cannot create cgroups; the benchmark's own submissions are not limited
  [ "$(id -u)" = 0 ] || echo "require_cgroup = no"
  echo "max_requests_per_uid = 100000000"
  echo "http_listen = 127.0.0.1:$port"
  echo "http_token_file = $TMP/token"
} >"$TMP/agent.conf"
"$AGENT" run --config "$TMP/agent.conf" --inventory "$TMP/inv.json" --state-dir "$TMP/state" --socket "$SOCK" \
  --log-level warn 2>"$TMP/agent.log" &
pid=$!
cleanup() {
  for id in $("$AGENT" queue --socket "$SOCK" --json 2>/dev/null | python3 -c \
      'import json,sys; print(" ".join(str(j["id"]) for j in json.load(sys.stdin)["jobs"]))' 2>/dev/null); do
    "$AGENT" cancel --socket "$SOCK" "$id" >/dev/null 2>&1
  done
  kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM PIPE
n=0; while ! "$AGENT" status --socket "$SOCK" >/dev/null 2>&1 && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done

echo "(1) submit-to-start latency, idle agent, 200 jobs of 1 GPU: from the client's call to the job"
echo "    running (it writes its own clock), and to the start the agent recorded"
python3 - "$AGENT" "$SOCK" "$TMP" <<'PY'
import json, os, subprocess, sys, time
agent, sock, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
ran, recorded = [], []
for k in range(200):
    stamp = os.path.join(tmp, "t%d" % k)
    t0 = time.time()
    jid = subprocess.run([agent, "submit", "--socket", sock, "--", "sh", "-c", 'date +%s%N >"$0"', stamp],
                         capture_output=True, text=True, cwd=tmp).stdout.strip()
    for _ in range(5000):
        if os.path.exists(stamp) and os.path.getsize(stamp) > 0:
            break
        time.sleep(0.0005)
    with open(stamp) as f:
        ran.append(int(f.read()) / 1e9 - t0)
    j = json.loads(subprocess.run([agent, "show", "--socket", sock, "--json", jid], capture_output=True, text=True).stdout)
    recorded.append(j["start_us"] / 1e6 - t0)
def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]
print("  call -> job running:        p50 %.2f ms, p95 %.2f ms, max %.2f ms" % (q(ran, .5) * 1e3, q(ran, .95) * 1e3, max(ran) * 1e3))
print("  call -> start recorded:     p50 %.2f ms, p95 %.2f ms (the decision, committed before exec)" % (q(recorded, .5) * 1e3, q(recorded, .95) * 1e3))
PY

echo "(2) sustained submissions with 1,000 queued jobs (16 GPUs held by long jobs)"
for node in 1 2; do (cd "$TMP" && "$AGENT" submit --socket "$SOCK" --gpus 8 --time 1h -- sleep 3600 >/dev/null); done
python3 - "$AGENT" "$SOCK" "$TMP" <<'PY'
import subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
agent, sock, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
def submit(_):
    r = subprocess.run([agent, "submit", "--socket", sock, "--time", "10m", "--", "true"], capture_output=True, cwd=tmp)
    return r.returncode
t0 = time.time()
with ThreadPoolExecutor(4) as ex:
    fill = list(ex.map(submit, range(1000)))
t1 = time.time()
print("  filling 0 -> 1,000 queued: %.0f submissions/s (4 concurrent clients)" % (1000 / (t1 - t0)))
t0 = time.time()
with ThreadPoolExecutor(4) as ex:
    more = list(ex.map(submit, range(1000)))
t1 = time.time()
print("  1,000 -> 2,000 queued:     %.0f submissions/s (4 concurrent clients)" % (1000 / (t1 - t0)))
t0 = time.time()
for i in range(200):
    submit(i)
t1 = time.time()
print("  one client, sequential:    %.0f submissions/s (%.2f ms each, fsync'd commit included)" % (200 / (t1 - t0), (t1 - t0) / 200 * 1e3))
bad = sum(1 for r in fill + more if r != 0)
if bad:
    print("  %d submissions failed" % bad)
    sys.exit(1)
PY

echo "(3) root's submit latency while uid 65534 holds 1,000 idle socket and 1,000 idle HTTP connections"
if [ "$(id -u)" != 0 ] || ! setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c pass 2>/dev/null; then
  echo "  skipped: needs root and /usr/bin/python3 (to flood as uid 65534 with setpriv)"
else
  NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
  $NOBODY /usr/bin/python3 "$ROOT/tests/agent/flood.py" unix "$SOCK" 1000 8 >"$TMP/flood-unix.out" 2>"$TMP/flood-unix.err" &
  f1=$!
  $NOBODY /usr/bin/python3 "$ROOT/tests/agent/flood.py" tcp "127.0.0.1:$port" 1000 8 >"$TMP/flood-tcp.out" 2>"$TMP/flood-tcp.err" &
  f2=$!
  n=0; while [ $n -lt 200 ] && ! { grep -q ready "$TMP/flood-unix.err" && grep -q ready "$TMP/flood-tcp.err"; }; do
    sleep 0.05; n=$((n + 1)); done
  python3 - "$AGENT" "$SOCK" "$TMP" <<'PY'
import subprocess, sys, time
agent, sock, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
lat, bad = [], 0
for i in range(50):
    t0 = time.time()
    r = subprocess.run([agent, "submit", "--socket", sock, "--time", "10m", "--", "true"], capture_output=True, cwd=tmp)
    lat.append(time.time() - t0)
    bad += r.returncode != 0
lat.sort()
print("  root submit (client process included): p50 %.1f ms, p95 %.1f ms, max %.1f ms over 50; %d failed"
      % (lat[25] * 1e3, lat[47] * 1e3, lat[-1] * 1e3, bad))
PY
  wait $f1 $f2
  echo "  socket flood: $(tr '\n' ';' <"$TMP/flood-unix.out" | cut -c1-160)"
  echo "  HTTP flood:   $(tr '\n' ';' <"$TMP/flood-tcp.out" | cut -c1-160)"
fi
