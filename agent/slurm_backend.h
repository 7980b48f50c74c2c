/* slurm_backend: `fleetsim-agent run --backend slurm --partition NAME`, the
 * agent as the scheduler of one Slurm partition (the way Moab and Maui drove
 * Slurm from outside). Slurm holds every job of the partition
 * (job_submit.lua, or `sbatch --hold`); each pass the agent reads Slurm's
 * truth (`sinfo --json`, `squeue --json -t all -p NAME`), builds the policy's
 * view through the same host core the simulator uses (agent/scheduler.h over
 * models/policy_host.h), runs the policy, and carries out its decisions with
 * scontrol: a start pins exactly the nodes the policy chose (ReqNodeList)
 * and releases the job; a preemption is `scontrol requeuehold` (the job goes
 * back to the queue, held, as a new attempt). Slurm launches, contains and
 * accounts; the agent only decides.
 *
 * The view: the partition's nodes (GPUs from gres; a drained node is
 * draining, a down one down; GPUs in use by jobs of other partitions are
 * left out; the node's active features are its GPU model, so a feature
 * "H100" makes it the catalog's H100 type); queued = the held jobs with no
 * decision for their attempt; running = the jobs holding nodes, and the
 * jobs the agent released that Slurm has not started yet (on the nodes the
 * policy chose). A Slurm job is N nodes x G GPUs: a start whose nodes and
 * GPUs do not have that shape is not carried out (the job waits; counted),
 * and its nodes take no later start of that pass, so they drain towards its
 * shape.
 *
 * Crash safety: agent/slurm_store.h. Every finished job that the agent
 * started is written to the native trace (agent/record.h) once.
 * Ownership: the backend owns everything it opens; run returns when SIGTERM
 * or SIGINT arrives (jobs in Slurm are untouched).
 */
#ifndef FLEETSIM_AGENT_SLURM_BACKEND_H
#define FLEETSIM_AGENT_SLURM_BACKEND_H

#include "agent/config.h"
#include "sim/err.h"

/* Runs the backend until SIGTERM/SIGINT. poll_ms: the pause between passes
 * when nothing happened (Slurm's own scheduler loop is one second). */
int slurm_backend_run(const struct agent_config *cfg, const char *partition, int poll_ms, struct err *err);

/* `fleetsim-agent submit --backend slurm`: submits argv (no shell) with
 * sbatch to partition, GPUs per node and nodes, a time limit (0 = the
 * partition's), a name and account ("" = none). Prints the job id on stdout.
 * Returns 0, or -1 with err set. */
struct slurm_submit {
    const char *partition;
    int gpus;        /* whole job; > 8 per node needs nodes */
    int nodes;       /* 0 = 1 */
    int64_t time_us; /* 0 = the partition's default */
    const char *name, *account;
    char *const *argv;
    int argc;
};
int slurm_backend_submit(const struct slurm_submit *s, struct err *err);

#endif
