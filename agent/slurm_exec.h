/* slurm_exec: runs one Slurm command (sinfo, squeue, scontrol, sbatch) through
 * sim/child (fork + exec of an argv, stopped at a limit), the
 * way the Slurm backend needs: argv, never a shell (job names and comments
 * come from users), stdin from /dev/null, stdout captured whole, the first
 * line of stderr kept for the message, and a wall-clock limit after which
 * the command is killed (a slurmctld that does not answer must not stall
 * the agent forever; Slurm's own MessageTimeout is shorter).
 */
#ifndef FLEETSIM_AGENT_SLURM_EXEC_H
#define FLEETSIM_AGENT_SLURM_EXEC_H

#include "agent/buf.h"
#include "sim/err.h"

/* Runs argv[0] (found on PATH) with argv. out (may be NULL) receives stdout.
 * Returns 0 when it exited 0; otherwise -1 with err naming the command and
 * saying why (its stderr's first line, its exit status, or the limit). */
int slurm_exec(const char *const *argv, struct buf *out, int timeout_ms, struct err *err);

#endif
