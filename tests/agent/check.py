"""check.py: small helpers for tests/agent/run.sh (JSON and HTTP without
extra packages). Each subcommand prints what the shell test compares and
exits 0, or prints why not and exits 1.

  http METHOD URL [TOKEN] [BODY]   print the status code, then the body
  ids FILE                         the job ids of a queue/history answer
  get FILE KEY...                  print a value from a JSON file (keys/indices)
  trace-order TRACE                job ids by (start_s, id) from an agent trace
  csv-order CSV                    job ids by (start_s, id) from replay --jobs-csv
  crash ACKED MARKS HISTORY QUEUE  the crash test's invariants
  intact ACKED QUEUE HISTORY       every acknowledged job is in the queue or history
  gpus-check DIR SHOWDIR           each job saw exactly its GPUs, none shared
"""
import json
import os
import sys
import urllib.error
import urllib.request


def http(method, url, token=None, body=None):
    req = urllib.request.Request(url, method=method, data=body.encode() if body else None)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            print(r.status)
            sys.stdout.write(r.read().decode())
    except urllib.error.HTTPError as e:
        print(e.code)
        sys.stdout.write(e.read().decode())
    return 0


def get(path, *keys):
    with open(path) as f:
        v = json.load(f)
    for k in keys:
        v = v[int(k)] if isinstance(v, list) else v[k]
    print(json.dumps(v) if isinstance(v, (dict, list)) else v)
    return 0


def ids(path):
    print(" ".join(str(j["id"]) for j in load_jobs(path)))
    return 0


def trace_order(path):
    jobs = []
    with open(path) as f:
        for line in f:
            o = json.loads(line)
            if "id" in o:
                jobs.append((o["start_s"], o["id"]))
    print(" ".join(str(i) for _, i in sorted(jobs)))
    return 0


def csv_order(path):
    jobs = []
    with open(path) as f:
        next(f)
        for line in f:
            c = line.strip().split(",")
            if c[2] != "-1":
                jobs.append((float(c[2]), int(c[0])))
    print(" ".join(str(i) for _, i in sorted(jobs)))
    return 0


def load_jobs(path):
    with open(path) as f:
        return json.load(f)["jobs"]


def crash(acked_path, marks_path, history_path, queue_path):
    acked = {}
    with open(acked_path) as f:
        for line in f:
            tok, jid = line.split()
            acked[tok] = int(jid)
    counts = {}
    with open(marks_path) as f:
        for line in f:
            counts[line.strip()] = counts.get(line.strip(), 0) + 1
    bad = []
    twice = [t for t, n in counts.items() if n > 1]
    if twice:
        bad.append("%d jobs ran more than once: %s" % (len(twice), " ".join(sorted(twice)[:10])))
    missing = [t for t in acked if counts.get(t, 0) != 1]
    if missing:
        bad.append("%d acknowledged jobs did not run exactly once: %s" % (len(missing), " ".join(missing[:10])))
    hist = {j["id"]: j for j in load_jobs(history_path)}
    queue = load_jobs(queue_path)
    if queue:
        bad.append("%d jobs still in the queue" % len(queue))
    lost = [str(i) for i in acked.values() if i not in hist]
    if lost:
        bad.append("%d acknowledged jobs missing from history: %s" % (len(lost), " ".join(lost[:10])))
    notdone = [str(i) for i in acked.values() if i in hist and hist[i]["state"] != "completed"]
    if notdone:
        bad.append("%d jobs did not complete: %s" % (len(notdone), " ".join(
            "%s(%s: %s)" % (i, hist[int(i)]["state"], hist[int(i)].get("reason", "")) for i in notdone[:5])))
    multi = [str(j["id"]) for j in hist.values() if j.get("attempts", 1) != 1]
    if multi:
        bad.append("jobs with more than one attempt: %s" % " ".join(multi[:10]))
    for b in bad:
        print(b)
    print("acknowledged %d, ran %d distinct, history %d" % (len(acked), len(counts), len(hist)))
    return 1 if bad else 0


def intact(acked_path, queue_path, history_path):
    ids = set()
    for p in (queue_path, history_path):
        ids.update(j["id"] for j in load_jobs(p))
    lost = []
    with open(acked_path) as f:
        for line in f:
            tok, jid = line.split()
            if int(jid) not in ids:
                lost.append(jid)
    if lost:
        print("lost after restart: %s" % " ".join(lost[:10]))
        return 1
    return 0


def gpus_check(out_dir, show_dir):
    bad = []
    seen = {}
    for name in sorted(os.listdir(show_dir)):
        with open(os.path.join(show_dir, name)) as f:
            job = json.load(f)
        want = sorted(job["gpu_uuids"])
        with open(os.path.join(out_dir, "cvd-%d.out" % job["id"])) as f:
            got = sorted(f.read().strip().split(","))
        if got != want:
            bad.append("job %d saw %s, was given %s" % (job["id"], got, want))
        for g in got:
            if g in seen:
                bad.append("GPU %s given to jobs %d and %d at once" % (g, seen[g], job["id"]))
            seen[g] = job["id"]
    for b in bad:
        print(b)
    print("%d GPUs seen by %d jobs" % (len(seen), len(os.listdir(show_dir))))
    return 1 if bad else 0


def main(argv):
    cmds = {"ids": ids, "http": http, "get": get, "trace-order": trace_order, "csv-order": csv_order, "crash": crash,
            "intact": intact, "gpus-check": gpus_check}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    return cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
