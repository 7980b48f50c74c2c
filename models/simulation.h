/* simulation: the simulator's host for a policy. It replays a workload on a
 * cluster with the event engine: arrivals queue jobs, completions free their
 * slots, and after all state changes at an instant one scheduling pass asks
 * the policy what to start, has every decision checked against the contract
 * in policies/policy.h (models/policy_host.h, the one checker), and applies
 * it.
 *
 * Rules of the replay:
 *  - Jobs arrive in the workload's order, which must be sorted by submit time
 *    (workload_sort_by_submit); ties keep that order.
 *  - At one instant, completions settle before arrivals, then one pass runs
 *    (the default convention; sim_options.convention lines the replay up
 *    with pyss or CQSim instead).
 *  - A job whose trace runtime exceeds its requested time (limit) is killed
 *    at the limit, as a real resource manager would; the policy sees the limit
 *    as the job's estimate (or the runtime itself when the trace has none).
 *  - A job larger than the whole cluster can never start: it is skipped and
 *    counted, as is a job asking for no slots.
 * The view handed to the policy is kept up to date incrementally, so a pass
 * costs what the policy does, not the size of the cluster.
 *
 * With `struct sim_models` (a scenario's hardware and operations models) the
 * replay also has: node types with speed factors and a fabric with contention
 * (models/runtime_model.h, models/contention.h), so a running job progresses at a rate and its
 * end moves when the rate changes; failures that take nodes down and kill,
 * checkpoint-roll-back and requeue the jobs on them (models/failures.h),
 * except service replicas (jobs of a team with a restart time in
 * sim_models.service_restart_us), which restart in place: they keep their
 * GPUs and lose only their restart time; and
 * nodes that arrive by purchase order or leave by retirement
 * (models/procurement.h). Simulated time 0 is the scenario's start. Without
 * models the replay is the foundation's, bit for bit.
 */
#ifndef FLEETSIM_MODELS_SIMULATION_H
#define FLEETSIM_MODELS_SIMULATION_H

#include <stddef.h>
#include <stdint.h>

#include "models/cluster.h"
#include "models/failures.h"
#include "models/periods.h" /* struct sim_period_stats */
#include "models/policy_host.h"
#include "models/procurement.h"
#include "models/workload.h"
#include "policies/policy.h"
#include "sim/engine.h"
#include "sim/err.h"

enum sim_job_outcome {
    SIM_JOB_UNFINISHED = 0,  /* still queued or running when the run stopped */
    SIM_JOB_COMPLETED = 1,
    SIM_JOB_KILLED_AT_LIMIT = 2,
    SIM_JOB_SKIPPED_TOO_BIG = 3,
    SIM_JOB_SKIPPED_INVALID = 4
};

struct sim_job_result {
    sim_time start_us; /* first start, -1 if it never started */
    sim_time end_us;   /* -1 if it never ended */
    int32_t outcome;   /* enum sim_job_outcome */
    int32_t n_nodes;   /* nodes it ran on (last attempt) */
    int32_t interruptions; /* attempts killed by failures */
    int32_t preemptions;   /* attempts stopped by the policy */
    int32_t span;      /* enum span_level of the last attempt */
};

struct sim_stats {
    uint64_t events;
    uint64_t passes;
    uint64_t starts;
    uint32_t max_queue_len; /* jobs still waiting after a pass */
    size_t completed, killed_at_limit, skipped_too_big, skipped_invalid, unfinished;
    sim_time first_submit_us;
    sim_time last_end_us;
    double busy_slot_us; /* sum of run time x slots over every attempt */
    int64_t total_slots;  /* every node, ordered ones included */
    /* capacity present (delivered, not retired), integrated from the first
     * submit to the last end: the denominator of utilization */
    double capacity_slot_us;
    /* failures and their cost */
    uint64_t failures;
    uint64_t *failures_by_category; /* n_categories entries, or NULL */
    size_t n_categories;
    uint64_t interruptions; /* job attempts killed by failures */
    uint64_t preemptions;   /* job attempts stopped by the policy */
    double lost_slot_us;    /* work lost since the last checkpoint, x slots */
    double node_up_us, node_present_us; /* availability = up / present */
    uint64_t deliveries, retirements;
    uint64_t contention_updates, contention_flows; /* max-min solves (of regions), and flows in them */
};

/* Called after each pass with the view the policy saw and what it decided
 * (before they are applied). Tests use it to check properties. */
typedef void (*sim_pass_hook)(void *ctx, const struct cluster_view *view,
                              const struct policy_decisions *decisions);

/* The physical models of a scenario. Borrowed for the run. */
struct sim_models {
    const struct failure_spec *failures;        /* NULL or !enabled: none */
    /* how jobs checkpoint (failures and preemption roll back to the last) */
    struct checkpoint_policy checkpoint[JOB_CLASS_COUNT];
    const struct procurement_spec *procurement; /* NULL: none */
    double comm_fraction[JOB_CLASS_COUNT];
    enum job_class default_class;
    uint64_t seed;
    /* services: jobs of team t (t < n_service_teams) with
     * service_restart_us[t] > 0 restart in place after a failure, out that
     * long, instead of rolling back and queueing again. NULL: none. */
    const sim_time *service_restart_us;
    size_t n_service_teams;
};

/* A sample of the time series, taken every sample_us. */
struct sim_sample {
    double capacity_slots, in_use_slots, queued_slots, queue_jobs;
};

/* What happens first at one instant, and how often the policy is asked
 * (README, "Tie rules"). Only the order of events at equal times differs.
 *  fleetsim  failures, completions, capacity changes, then arrivals, then one
 *            pass for the instant.
 *  pyss      as the pyss simulator: a job that ends exactly at its expected end
 *            is free from that instant on (pyss's profile); then arrivals, then
 *            the other completions, in the order the jobs started; a pass after
 *            each arrival and each completion.
 *  cqsim     as CQSim: completions (in the order the jobs started), then
 *            arrivals; a pass after each. */
enum sim_convention { SIM_CONVENTION_FLEETSIM = 0, SIM_CONVENTION_PYSS, SIM_CONVENTION_CQSIM };

struct sim_options {
    enum sim_convention convention;
    sim_time until_us; /* SIM_TIME_NEVER: run until every job is done */
    /* optional: periods [period_start + k x period_us) for k < n_periods,
     * and samples at period_start + k x sample_us for k < n_samples */
    sim_time period_start_us, period_us, sample_us;
    uint32_t n_periods, n_samples;
    sim_pass_hook on_pass;
    void *hook_ctx;
    const struct sim_models *models; /* NULL: the foundation's replay */
    /* tests: tell the policy nothing of how the queue changed between
     * passes (policy.h, ABI 4), as a host that does not track it would */
    int untracked_queue;
    /* tests: close every gap a pass leaves in the queue, even for a policy
     * that reads gaps (policy.h, policy_job.gap) */
    int compact_queue;
    /* a workload still being read (models/workload.h): jobs are taken as
     * they become final; its array must not move (w->cap holds) */
    const struct workload_feed *feed;
};

struct sim_result {
    struct sim_job_result *jobs; /* parallel to the workload's jobs */
    size_t n;
    struct sim_stats stats;
    struct sim_period_stats *periods; /* n_periods, when asked for */
    double *team_busy_slot_us;        /* n_periods x n_teams: [period * n_teams + team] */
    size_t n_teams;                   /* the workload's teams, plus one for jobs without */
    struct sim_sample *samples;       /* n_samples, when asked for */
};

void sim_options_init(struct sim_options *o);
/* "fleetsim", "pyss", "cqsim": 0, or -1 for another name. */
int simulation_convention_parse(const char *name, enum sim_convention *out);
const char *simulation_convention_name(enum sim_convention c);
/* The names, comma-separated, for messages. */
#define SIM_CONVENTION_NAMES "fleetsim, pyss, cqsim"
/* Runs the whole replay. The policy (models/policy_host.h: it checks every
 * decision and contains a plugin that crashes or hangs) is borrowed.
 * Returns 0, or -1 with err set (a broken policy contract, a failed policy,
 * memory), or SIM_FEED_BROKEN when opt->feed broke (nothing set: run again
 * on the whole workload). */
enum { SIM_FEED_BROKEN = -2 };
int simulation_run(const struct workload *w, const struct cluster *c, struct policy_host *policy,
                   const struct sim_options *opt, struct sim_result *res, struct err *err);
void sim_result_release(struct sim_result *res);
/* The estimate a policy sees for a job: its limit, or its runtime without one. */
sim_time simulation_estimate(const struct job *j);
/* What a job actually runs for: its runtime, cut at its limit. */
sim_time simulation_effective_runtime(const struct job *j);

#endif
