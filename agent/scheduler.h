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
 * The view: a node is up unless an admin drained it (draining) or all its
 * GPUs are drained (down); its slots are its GPUs that are not drained, its
 * free slots those not running a job. Queued jobs are in arrival order
 * (submit time, id); a job larger than all usable GPUs is left out of the
 * pass (it waits for GPUs to come back), as the simulator leaves out jobs
 * larger than its cluster.
 *
 * The policy is a built-in found by spec ("fcfs+easy") or a plugin,
 * "PATH.so[:PARAMS]", loaded with dlopen and checked for POLICY_ABI_VERSION.
 * The scheduler owns the policy instance and its scratch buffers.
 */
#ifndef FLEETSIM_AGENT_SCHEDULER_H
#define FLEETSIM_AGENT_SCHEDULER_H

#include <stdint.h>

#include "agent/inventory.h"
#include "agent/job.h"
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
    uint32_t left_out; /* queued jobs larger than the usable GPUs */
};

struct scheduler {
    const struct policy_ops *ops;
    void *policy;
    void *plugin; /* dlopen handle, NULL for a built-in */
    char spec[512];
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
    uint64_t passes, starts, reserves, contract_errors;
    int64_t pass_ns_total;
};

int scheduler_init(struct scheduler *s, const char *spec, struct err *err);
void scheduler_release(struct scheduler *s);
void sched_result_init(struct sched_result *r);
void sched_result_release(struct sched_result *r);
/* One pass. queued: waiting jobs in arrival order; running: running jobs
 * with their gpu_idx. Fills res (reset first). Returns 0, or -1 with err set
 * when the policy failed or broke the contract (nothing is applied then). */
int scheduler_pass(struct scheduler *s, int64_t now_us, const struct inventory *inv, struct agent_job *const *queued,
                   uint32_t n_queued, struct agent_job *const *running, uint32_t n_running, struct sched_result *res,
                   struct err *err);
/* Tells the policy (if it observes) that a job started or finished. */
void scheduler_observe(struct scheduler *s, int32_t kind, int64_t now_us, const struct agent_job *j, int64_t ran_us);

#endif
