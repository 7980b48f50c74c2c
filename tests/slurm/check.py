#!/usr/bin/env python3
"""tests/slurm/check.py: the Slurm group's checks, against Slurm's own records.

  placed SQUEUE_JSON STATE_DB OUTDIR IDS every one of the jobs in IDS completed once, on exactly
                                         the nodes the agent's decision names (Slurm's node
                                         list and the job's own SLURM_JOB_NODELIST), and saw
                                         CUDA_VISIBLE_DEVICES with its GPUs per node
  order TRACE CSV [AGENT_LOG]            the trace's start order against `fleetsim replay
                                         --jobs-csv`: identical, every job; and no start the
                                         agent could not carry out for the job's node shape
                                         (AGENT_LOG, --log-level debug): the policy contract
                                         carries the shape, so the policy never asks for one
  crash SQUEUE_JSON STATE_DB SLURMCTLD_LOG IDS
                                         after the crashes: all jobs in IDS completed, each decided
                                         once (one row) and allocated once in slurmctld's own
                                         log, and every pin of it there names the decided nodes
                                         (a pin repeated after a restart is a retry: counted)
  preempted SQUEUE_JSON STATE_DB OUTDIR VICTIM
                                         the victim was requeued by the agent (a preemption
                                         row), ran twice (restart count 0, then 1), completed
Prints one line per finding; exits 1 when a check fails.
"""
import json
import re
import sqlite3
import sys


def expand(hostlist):
    out = []
    for part in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", hostlist):
        m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", part)
        if not m:
            out.append(part)
            continue
        pre, ranges, post = m.groups()
        for r in ranges.split(","):
            a, _, b = r.partition("-")
            for i in range(int(a), int(b or a) + 1):
                out.append("%s%0*d%s" % (pre, len(a), i, post))
    return out


def jobs_of(path, ids_file=None):
    with open(path) as f:
        jobs = {j["job_id"]: j for j in json.load(f)["jobs"]}
    if ids_file:
        with open(ids_file) as f:
            want = {int(x) for x in f.read().split()}
        jobs = {k: v for k, v in jobs.items() if k in want}
        for k in want - set(jobs):
            jobs[k] = {"job_id": k, "job_state": "LOST", "nodes": "", "restart_cnt": 0}
    return jobs


def decisions(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT job_id, attempt, nodes, released FROM decisions ORDER BY job_id, attempt").fetchall()
    pre = con.execute("SELECT job_id, attempt FROM preemptions").fetchall()
    con.close()
    return rows, pre


def decided_nodes(db):
    """job id -> the node choices of its decisions ("n1:8,n2:8"), one per attempt"""
    rows, _ = decisions(db)
    by_job = {}
    for job_id, _, nodes, _ in rows:
        by_job.setdefault(job_id, []).append(nodes)
    return by_job


def gpus_per_node(j):
    m = re.search(r"gpu:(\d+)", j.get("tres_per_node") or "")
    return int(m.group(1)) if m else 0


def placed(squeue, db, outdir, ids):
    jobs = jobs_of(squeue, ids)
    n = len(open(ids).read().split())
    by_job = decided_nodes(db)
    bad = 0
    if len(jobs) != int(n):
        print("FAIL: %d jobs in the partition, want %s" % (len(jobs), n))
        bad += 1
    for jid, j in sorted(jobs.items()):
        chosen = by_job.get(jid, [])
        if j["job_state"] != "COMPLETED" or len(chosen) != 1:
            print("FAIL: job %d %s, %d decisions" % (jid, j["job_state"], len(chosen)))
            bad += 1
            continue
        want = [x.split(":")[0] for x in chosen[0].split(",")]
        per = {x.split(":")[0]: int(x.split(":")[1]) for x in chosen[0].split(",")}
        ran = expand(j["nodes"])
        try:
            with open("%s/%d.out" % (outdir, jid)) as f:
                seen = f.read().split()
        except OSError:
            seen = []
        # "run ID RESTARTS NODELIST NODENAME CUDA_VISIBLE_DEVICES"
        own = expand(seen[3]) if len(seen) >= 5 else []
        cvd = seen[5].split(",") if len(seen) >= 6 else []
        gpn = gpus_per_node(j)
        if sorted(ran) != sorted(want) or sorted(own) != sorted(want):
            print("FAIL: job %d ran on %s (its own view %s), the policy chose %s" % (jid, ran, own, want))
            bad += 1
        elif any(v != gpn for v in per.values()) or len(cvd) != gpn or len(set(cvd)) != gpn or \
                not all(c.isdigit() and int(c) < 8 for c in cvd):
            print("FAIL: job %d: %d GPUs per node, CUDA_VISIBLE_DEVICES=%s, decision %s" % (jid, gpn, cvd, chosen[0]))
            bad += 1
    print("placed: %d jobs, %d on the chosen nodes with their GPUs" % (len(jobs), len(jobs) - bad))
    return 1 if bad else 0


def first_refusal_s(log, epoch):
    """The pass of the first start the agent could not carry out for the job's shape, in trace microseconds."""
    with open(log) as f:
        for line in f:
            m = re.search(r"not the job's shape.* pass_us=(\d+)", line)
            if m:
                return int(m.group(1)) - epoch * 1000000
    return None


def order(trace, csv, log=None):
    rec = {}
    epoch = 0
    with open(trace) as f:
        for line in f:
            d = json.loads(line)
            if "id" in d:
                rec[d["id"]] = d["start_s"]
            else:
                epoch = d.get("unix_start_s", 0)
    rep = {}
    with open(csv) as f:
        next(f)
        for line in f:
            c = line.split(",")
            rep[int(c[0])] = float(c[2])
    if set(rec) != set(rep):
        print("FAIL: the trace has %d jobs, the replay %d" % (len(rec), len(rep)))
        return 1
    refused = first_refusal_s(log, epoch) if log else None
    by_rec = sorted(rec, key=lambda i: (rec[i], i))
    by_rep = sorted(rep, key=lambda i: (rep[i], i))
    same = by_rec == by_rep
    worst = max(abs(rec[i] - rep[i]) for i in by_rec) if by_rec else 0
    print("order: %d jobs; %s; all starts in the same order: %s; largest start difference %.6f s"
          % (len(rec), "no start refused for its shape" if refused is None else
             "FAIL: a start refused for its shape at %.6f s" % (refused / 1e6), "yes" if same else "NO", worst))
    if not same:
        for k in range(len(by_rec)):
            if by_rec[k] != by_rep[k]:
                print("  start %d: agent started job %d at %.6f, replay job %d at %.6f"
                      % (k + 1, by_rec[k], rec[by_rec[k]], by_rep[k], rep[by_rep[k]]))
                break
    return 0 if same and refused is None else 1


def crash(squeue, db, log, ids):
    jobs = jobs_of(squeue, ids)
    n = len(open(ids).read().split())
    chosen = decided_nodes(db)
    per = {job_id: len(choices) for job_id, choices in chosen.items()}
    bad = 0
    pins, allocs, off = {}, {}, {}
    with open(log) as f:
        for line in f:
            m = re.search(r"setting req_nodes to (\S+) for JobId=(\d+)", line)
            if m:
                jid = int(m.group(2))
                pins[jid] = pins.get(jid, 0) + 1
                wants = [sorted(c.split(":")[0] for c in nodes.split(",")) for nodes in chosen.get(jid, [])]
                if sorted(expand(m.group(1))) not in wants:
                    off[jid] = m.group(1)
            m = re.search(r"sched: Allocate JobId=(\d+) ", line)
            if m:
                allocs[int(m.group(1))] = allocs.get(int(m.group(1)), 0) + 1
    done = sum(1 for j in jobs.values() if j["job_state"] == "COMPLETED")
    if len(jobs) != int(n) or done != int(n):
        print("FAIL: %d jobs, %d completed, want %s" % (len(jobs), done, n))
        bad += 1
    for jid in sorted(jobs):
        if per.get(jid, 0) != 1 or pins.get(jid, 0) < 1 or allocs.get(jid, 0) != 1 or jid in off:
            print("FAIL: job %d: %d decisions, pinned %d times%s, started %d times"
                  % (jid, per.get(jid, 0), pins.get(jid, 0),
                     " (once to %s, not the decided nodes)" % off[jid] if jid in off else "", allocs.get(jid, 0)))
            bad += 1
    repinned = sum(1 for jid in jobs if pins.get(jid, 0) > 1)
    print("crash: %d jobs, %d completed, decided and started once, pinned to the decided nodes: %d"
          " (pinned again after a restart, same nodes: %d)" % (len(jobs), done, len(jobs) - bad, repinned))
    return 1 if bad else 0


def preempted(squeue, db, outdir, victim):
    victim = int(victim)
    j = jobs_of(squeue).get(victim)
    rows, pre = decisions(db)
    runs = []
    try:
        with open("%s/%d.out" % (outdir, victim)) as f:
            runs = [line.split() for line in f if line.startswith("run ")]
    except OSError:
        pass
    restarts = [r[2] for r in runs]
    ok = (j is not None and j["job_state"] == "COMPLETED" and j["restart_cnt"] >= 1 and (victim, 0) in pre
          and restarts[:1] == ["0"] and "1" in restarts
          and [a for (jid, a, _, _) in rows if jid == victim] == list(range(j["restart_cnt"] + 1)))
    print("preempted: job %d state %s restart_cnt %s, runs with restart counts %s, preemption rows %s"
          % (victim, j and j["job_state"], j and j["restart_cnt"], restarts, [p for p in pre if p[0] == victim]))
    return 0 if ok else 1


def main(argv):
    cmds = {"placed": placed, "order": order, "crash": crash, "preempted": preempted}
    if len(argv) < 2 or argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    return cmds[argv[1]](*argv[2:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
