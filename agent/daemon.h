/* daemon: `fleetsim-agent run`, the agent's event loop.
 *
 * One thread, one poll() over: the Unix socket and its connections, the
 * optional HTTP listener and its connections, a signalfd (SIGCHLD, SIGTERM,
 * SIGINT, SIGHUP) and a pidfd per supervisor re-adopted after a restart.
 * After any change (a submission, a job's end, a cancel, a drain or resume)
 * one scheduling pass runs (agent/scheduler.h); its starts are recorded in
 * one transaction and only then released (agent/executor.h). Timers enforce
 * time limits (SIGTERM, then SIGKILL of the group after kill_grace), poll GPU
 * health, and feed the systemd watchdog.
 *
 * Start-up recovers before it listens: queued jobs are reloaded; a running
 * job whose supervisor still lives is re-adopted, one whose supervisor wrote
 * its status is finished, one whose supervisor died is failed (or requeued if
 * it asked), and one that provably never started goes back to the queue.
 * SIGTERM stops the agent, not the jobs: they keep running under their
 * supervisors and are re-adopted by the next start (the systemd unit uses
 * KillMode=process for that reason).
 */
#ifndef FLEETSIM_AGENT_DAEMON_H
#define FLEETSIM_AGENT_DAEMON_H

#include "agent/config.h"
#include "sim/err.h"

/* Runs until SIGTERM/SIGINT. Returns 0, or -1 with err set when it cannot
 * start (bad inventory, store, policy, sockets) or fails fatally. */
int daemon_run(const struct agent_config *cfg, struct err *err);

#endif
