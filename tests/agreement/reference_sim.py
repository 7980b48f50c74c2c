#!/usr/bin/env python3
"""An independent, deliberately plain re-implementation of FCFS and EASY
replay of an SWF log, in the style of the long-standing Python simulators
(pyss): an event list ordered by (time, event-type order, counter), the
scheduler invoked after events.

Conventions (the ones fleetsim's replay documents):
  size     = requested processors (field 8), else allocated (field 5)
  runtime  = field 4, cut at the requested time (field 9) when given
  estimate = field 9 when given, else the runtime
  machine  = MaxProcs from the header (or --procs)
  jobs without a runtime or a size are skipped; jobs larger than the
  machine are skipped.

--ties fleetsim : at one instant, terminations settle before submissions and
                  one scheduling pass runs after all of them (fleetsim's rule)
--ties pyss     : submissions are handled before terminations at one instant,
                  and the scheduler runs after every single event (pyss's
                  later versions)

Prints "id start" lines, one per started job, sorted by id.
"""
import argparse
import gzip
import heapq
import sys


def read_swf(path):
    opener = gzip.open if path.endswith(".gz") else open
    jobs, procs = [], None
    with opener(path, "rt") as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.startswith(";"):
                if s[1:].strip().startswith("MaxProcs:"):
                    procs = int(s.split(":", 1)[1])
                continue
            v = [float(x) for x in s.split()[:18]]
            jid, submit, run, alloc, req, reqtime = int(v[0]), v[1], v[3], v[4], v[7], v[8]
            size = req if req > 0 else alloc
            if run < 0 or size <= 0:
                continue
            est = reqtime if reqtime > 0 else run
            run = min(run, reqtime) if reqtime > 0 else run
            jobs.append((submit, jid, int(size), run, est))
    jobs.sort(key=lambda j: (j[0], j[1]))
    return jobs, procs


def simulate(jobs, procs, easy, ties):
    SUBMIT, END = (0, 1) if ties == "pyss" else (1, 0)
    events, counter = [], 0
    for i, j in enumerate(jobs):
        if j[2] <= procs:
            events.append((j[0], SUBMIT, counter, i))
            counter += 1
    heapq.heapify(events)
    free = procs
    queue = []          # indices, FCFS order
    running = {}        # index -> expected end (start + estimate)
    start = {}

    def schedule(now):
        nonlocal free, counter
        started = []
        while queue and jobs[queue[0]][2] <= free:
            started.append(queue.pop(0))
            free -= jobs[started[-1]][2]
            running[started[-1]] = now + jobs[started[-1]][4]
        if easy and queue and free > 0:
            head = jobs[queue[0]]
            avail, shadow = free, now
            for end, i in sorted((e, i) for i, e in running.items()):
                if avail >= head[2]:
                    break
                avail += jobs[i][2]
                shadow = end
            extra = avail - head[2]
            k = 1
            while k < len(queue) and free > 0:
                j = jobs[queue[k]]
                in_time = now + max(j[4], 1e-6) <= shadow
                if j[2] <= free and (in_time or j[2] <= extra):
                    i = queue.pop(k)
                    free -= j[2]
                    running[i] = now + j[4]
                    started.append(i)
                    if not in_time:
                        extra -= j[2]
                else:
                    k += 1
        for i in started:
            start[i] = now
            heapq.heappush(events, (now + jobs[i][3], END, counter, i))
            counter += 1

    while events:
        now = events[0][0]
        if ties == "pyss":
            t, kind, _, i = heapq.heappop(events)
            if kind == SUBMIT:
                queue.append(i)
            else:
                free += jobs[i][2]
                del running[i]
            schedule(now)
        else:
            while events and events[0][0] == now:
                t, kind, _, i = heapq.heappop(events)
                if kind == SUBMIT:
                    queue.append(i)
                else:
                    free += jobs[i][2]
                    del running[i]
            schedule(now)
    return start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--policy", choices=["fcfs", "easy"], default="fcfs")
    ap.add_argument("--ties", choices=["fleetsim", "pyss"], default="fleetsim")
    ap.add_argument("--procs", type=int)
    a = ap.parse_args()
    jobs, procs = read_swf(a.trace)
    procs = a.procs or procs
    start = simulate(jobs, procs, a.policy == "easy", a.ties)
    out = sys.stdout
    for i in sorted(start, key=lambda i: jobs[i][1]):
        t = start[i]
        out.write("%d %s\n" % (jobs[i][1], ("%d" % t) if t == int(t) else repr(t)))


if __name__ == "__main__":
    main()
