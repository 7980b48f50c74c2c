/* scheduler: the agent's host for a policy, the live counterpart of
 * models/simulation.c. It builds a `struct cluster_view` from the inventory
 * and the active jobs, calls the policy's decide(), checks every decision as
 * the simulator does (the job is waiting and its id matches, the allocation
 * is on up nodes, within their free GPUs, and adds up to the request) and
 * refuses the whole pass if one is wrong. POLICY_RESERVE decisions are kept
 * in the queued job's reserved_us, so a policy that honours promises stays a
 * pure function of the view. For each start it then picks the node's actual
 * GPUs (inventory_pick_gpus: one NVLink domain when possible).
 *
 * The nodes: a node is up unless an admin drained it (draining) or all its
 * GPUs are drained (down); its slots are its GPUs that are not drained, its
 * free slots those not running a job. Queued jobs are in arrival order
 * (submit time, id); a job larger than all usable GPUs, or than the usable
 * GPUs of the largest node, is left out of the pass (it waits for GPUs to
 * come back), as the simulator leaves out jobs larger than its cluster.
 * A job runs on one node: a start the policy spreads over several nodes is
 * not carried out (counted in spanning_refused; the job waits), since a
 * local job is one process tree with one CUDA_VISIBLE_DEVICES.
 *
 * The policy is a built-in found by spec ("fcfs+easy") or a plugin,
 * "PATH.so[:PARAMS]"; models/policy_host.h loads it (ABI first), checks
 * every pass with the simulator's own checker and wording, and contains a
 * plugin that crashes or does not return (the scheduler is then marked
 * failed: the daemon keeps its running jobs and starts no new ones).
 *
 * The view is the simulator's: attained service (earlier attempts plus the
 * current one), preemption counts, job classes, node types and their speeds
 * (the GPU model matched to the built-in catalog; unknown models run at 1),
 * NVLink domains, and leaves and pods where the inventory gives them.
 * POLICY_PREEMPT decisions are returned for the daemon to carry out (SIGTERM,
 * grace, SIGKILL, back to the queue); a start that needs GPUs a preempted job
 * still holds waits for a later pass.
 * The scheduler owns the policy instance and its scratch buffers.
 */
#ifndef FLEETSIM_AGENT_SCHEDULER_H
#define FLEETSIM_AGENT_SCHEDULER_H

#include <stdint.h>

#include "agent/inventory.h"
#include "agent/job.h"
#include "models/node_types.h"
#include "models/policy_host.h"
#include "policies/policy.h"
#include "sim/err.h"

struct sched_start {
    struct agent_job *job;
    int32_t *gpus; /* inventory indices; n = job->gpus; points into the result's pool */
};

struct sched_result {
    struct sched_start *starts;
    uint32_t n_starts, cap_starts;
    int32_t *gpu_pool;
    uint32_t n_pool, cap_pool;
    struct agent_job **reserved; /* jobs whose reserved_us changed */
    uint32_t n_reserved, cap_reserved;
    struct agent_job **preempts; /* running jobs the policy stops (back to the queue) */
    uint32_t n_preempts, cap_preempts;
    uint32_t deferred;  /* starts that wait for GPUs a preempted job still holds */
    int resumed;        /* the starts are the deferred ones of an earlier, preempting pass */
    uint32_t left_out;  /* queued jobs larger than the usable GPUs, or than the largest node */
    uint32_t spanning;  /* starts not carried out: their GPUs were on more than one node */
};

struct scheduler {
    struct policy_host ph; /* the policy, its spec (ph.spec), its guard and the checker */
    struct node_catalog catalog; /* the built-in node types: speeds for the view */
    double *type_speed;          /* (catalog types + 1 unknown) x POLICY_JOB_CLASSES */
    /* scratch, reused across passes */
    struct policy_node *nodes;
    uint32_t *with_free;
    struct policy_job *queued;
    struct agent_job **queued_jobs;
    uint32_t cap_queued;
    struct policy_running *running;
    uint32_t *by_end;
    uint32_t cap_running;
    struct policy_alloc *allocs;
    uint32_t cap_allocs;
    struct policy_decisions out;
    uint8_t *busy;
    int32_t *free_left;
    uint8_t *started;
    /* counters for /metrics */
    uint64_t passes, starts, reserves, preempts, contract_errors;
    uint64_t spanning_refused; /* starts spread over nodes, not carried out (local mode: one node per job) */
    int64_t pass_ns_total;
    /* The starts of a preempting pass that wait for their victims to stop
     * (the simulator starts them in the same instant). While a victim is
     * stopping no pass runs; then these start first, on the nodes the
     * policy chose, before the policy is asked again. */
    struct deferred_start {
        int64_t job_id;
        uint32_t first, count; /* into deferred_allocs */
    } *deferred;
    uint32_t n_deferred, cap_deferred;
    struct policy_alloc *deferred_allocs;
    uint32_t n_deferred_allocs, cap_deferred_allocs;
    /* The Slurm backend: a start may span nodes (Slurm launches multi-node
     * jobs), and a job larger than the largest node stays in the view. */
    int multi_node;
    /* set once the policy crashed or did not return: no pass runs again */
    int failed;
    char failure[512];
};

/* Creates the policy (a built-in spec or PATH.so[:PARAMS], through
 * models/policy_host.h). decide_timeout_s: 0 for the default. */
int scheduler_init(struct scheduler *s, const char *spec, double decide_timeout_s, struct err *err);
void scheduler_release(struct scheduler *s);
void sched_result_init(struct sched_result *r);
void sched_result_release(struct sched_result *r);
/* One pass. queued: waiting jobs in arrival order; running: running jobs
 * with their gpu_idx (those already being preempted included: they hold
 * their GPUs until they stop). Fills res (reset first). Returns 0, or -1
 * with err set when the policy broke the contract (nothing is applied) or
 * failed (s->failed is then set and no pass runs again). */
int scheduler_pass(struct scheduler *s, int64_t now_us, const struct inventory *inv, struct agent_job *const *queued,
                   uint32_t n_queued, struct agent_job *const *running, uint32_t n_running, struct sched_result *res,
                   struct err *err);
/* Tells the policy (if it observes) what happened to a job. */
void scheduler_observe(struct scheduler *s, int32_t kind, int64_t now_us, const struct agent_job *j, int64_t ran_us);
/* The catalog type of a GPU model name ("NVIDIA H100 80GB HBM3" -> H100-SXM),
 * or -1: a catalog type matches when the part of its name before '-' is a
 * whole word of the model. */
int scheduler_node_type(const struct node_catalog *c, const char *gpu_model);

#endif
