#!/usr/bin/env python3
"""tests/agent/flood.py: idle connections against fleetsim-agent, for
run.sh (limits) and bench.sh (latency under a flood).

  flood.py unix PATH N HOLD_S    open N connections to the socket, send
                                 nothing; after 1 s report how many the agent
                                 refused at once (and with what line), then
                                 how many it closed within HOLD_S (idle timeout)
  flood.py tcp HOST:PORT N HOLD_S the same for the HTTP listener
Prints "opened N refused R line L" and then "closed C of K"; "ready" on
stderr once the connections are open (a caller waits for it).
"""
import os, resource, select, socket, sys, time

kind, where, n, hold = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
if soft < n + 64:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 64), hard))
socks = []
for _ in range(n):
    if kind == "unix":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        addr = where
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        host, port = where.rsplit(":", 1)
        addr = (host, int(port))
    s.settimeout(5)
    ok = False
    for _try in range(200):  # a full listen backlog: wait for the agent to accept
        try:
            s.connect(addr)
            ok = True
            break
        except (BlockingIOError, InterruptedError):
            time.sleep(0.002)
        except OSError:
            break
    if not ok:
        s.close()
        continue
    s.setblocking(False)
    socks.append(s)
print("ready", file=sys.stderr, flush=True)
time.sleep(1.0)
refused, line, alive = 0, "", []
for s in socks:
    try:
        data = s.recv(4096)
        refused += 1  # data or EOF: the agent refused it at once
        if data and not line:
            line = data.decode(errors="replace").strip()
        s.close()
    except BlockingIOError:
        alive.append(s)
    except OSError:
        refused += 1
        s.close()
print("opened %d refused %d line %s" % (len(socks), refused, line or "-"), flush=True)
deadline = time.time() + hold
closed = 0
while alive and time.time() < deadline:
    p = select.poll()
    for s in alive:
        p.register(s, select.POLLIN)
    fds = {s.fileno() for s in alive}
    r = [s for s in alive if s.fileno() in {fd for fd, _ in p.poll(200)} & fds]
    for s in r:
        try:
            s.recv(4096)
        except OSError:
            pass
        closed += 1
        alive.remove(s)
        s.close()
print("closed %d of %d" % (closed, closed + len(alive)), flush=True)
