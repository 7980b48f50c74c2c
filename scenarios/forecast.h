/* forecast: Monte Carlo replications of a scenario over its horizon, and
 * what a planner reads from them.
 *
 * One replication r synthesizes the workload (and the failures, the lead
 * times) from seed derive(scenario seed, r), runs it under the scenario's
 * policy, and measures every period (week, month or quarter) of the horizon
 * plus a time series sampled every `sample_us`. Replications are independent,
 * so hosts run them in parallel processes; the results depend only on the
 * scenario and r, never on how many run at once.
 */
#ifndef FLEETSIM_SCENARIOS_FORECAST_H
#define FLEETSIM_SCENARIOS_FORECAST_H

#include <stddef.h>
#include <stdint.h>

#include "models/simulation.h"
#include "scenarios/scenario.h"
#include "sim/engine.h"
#include "sim/err.h"

/* Waits of one team's jobs submitted in one period (as the period's). */
struct forecast_wait {
    double p50_s, p95_s, p99_s, mean_s;
    double jobs; /* submitted */
};

/* One period of one replication.
 *
 * Demand is kept apart from the backlog. The offered load is what the
 * workload asks for, whatever the cluster: the GPU-hours of the jobs
 * submitted in the period (runtimes on the reference GPU, cut at their
 * limits) over the period's hours, in reference-GPU equivalents; its peak is
 * the most GPUs the jobs would hold at once if capacity were unlimited (each
 * job running from its submission). The backlog is what the cluster could
 * not serve yet: GPUs asked by queued jobs, at its peak in the period. A
 * planner compares capacity with the offered load; a growing backlog is the
 * symptom, not the demand. */
struct forecast_period {
    double utilization;        /* busy / capacity present; jobs still running at the horizon count */
    double wait_p50_s, wait_p95_s, wait_p99_s; /* jobs submitted in the period (unstarted: to the horizon) */
    double wait_mean_s;
    double offered_load_gpus;  /* GPU-hours submitted / hours of the period */
    double offered_peak_gpus;  /* most GPUs held at once with unlimited capacity */
    double backlog_gpus;       /* most GPUs asked by queued jobs at one time */
    double capacity_gpus;      /* mean GPUs present over the period's part inside the horizon */
    double lost_gpu_hours;     /* work lost to failures (since last checkpoints; services: restarts) */
    double failures;
    double jobs_submitted, jobs_started;
    double jobs_too_big;       /* jobs larger than the whole cluster: never started, not in the waits */
    double *team_gpu_hours;    /* n_teams entries */
    struct forecast_wait *team_wait; /* n_teams entries */
};

/* One sample of the time series of one replication. */
struct forecast_sample {
    double capacity_gpus, in_use_gpus, backlog_gpus, queue_jobs;
    double offered_gpus; /* GPUs the submitted jobs would hold with unlimited capacity */
};

struct forecast_replication {
    struct forecast_period *periods; /* n_periods */
    struct forecast_sample *samples; /* n_samples */
    double *team_waits_s;            /* waits of started jobs, per team, sorted; ... */
    size_t *team_n_waits;            /* ... team t's are at team_waits_s[team_offset[t]..] */
    size_t *team_offset;
};

/* A metric across replications: mean and quantiles (linear interpolation),
 * and the 95% confidence interval of the mean (Student t over the
 * replications; equal to the mean with fewer than two). */
struct forecast_band {
    double mean, p5, p50, p95;
    double ci95_lo, ci95_hi;
};

struct forecast_result {
    const struct scenario *scenario; /* borrowed */
    uint32_t replications;           /* asked for */
    uint32_t completed;              /* finished (fewer: interrupted, partial) */
    int partial;
    sim_time start_us, period_us, sample_us;
    sim_time horizon_us;             /* the last period ends here, maybe before a whole period */
    uint32_t n_periods, n_samples;
    int last_period_partial;         /* the horizon ends inside the last period */
    char period_name[16];            /* "week", "month", "quarter" */
    size_t n_teams;
    char **team_names;
    struct forecast_replication *reps; /* completed entries */
    double *band_scratch;            /* one figure per replication: the bands' working copy,
                                      * made with the result so that no band allocates */
    const char *policy_override;     /* borrowed: the command's --policy, or NULL (the scenario's) */
};

/* Runs replication r of s (seed derived from the scenario's seed and r) under
 * the scenario's forecast policy (or `policy` when not NULL) and fills rep
 * (allocating its arrays; release with forecast_replication_release). n_teams
 * and team names come from the synthesized workload: every replication of a
 * scenario has the same teams. Returns 0 or -1. */
int forecast_run_replication(const struct scenario *s, uint32_t r, const char *policy,
                             struct forecast_replication *rep, struct err *err);
/* The same, with on_pass called after every scheduling pass of the run
 * (models/simulation.h): make bench times each quarter of one run with it. */
int forecast_run_replication_observed(const struct scenario *s, uint32_t r, const char *policy,
                                      sim_pass_hook on_pass, void *hook_ctx, struct forecast_replication *rep,
                                      struct err *err);
void forecast_replication_release(struct forecast_replication *rep, uint32_t n_periods);
/* The shape of a forecast of s: periods, samples, teams (names owned by r). */
int forecast_result_init(struct forecast_result *r, const struct scenario *s, uint32_t replications,
                         struct err *err);
void forecast_result_release(struct forecast_result *r);
/* The seed of replication r. */
uint64_t forecast_seed(const struct scenario *s, uint32_t r);

/* The names of the metrics of struct forecast_period, for tables and charts. */
enum forecast_metric {
    FM_UTILIZATION, FM_WAIT_P50, FM_WAIT_P95, FM_WAIT_P99, FM_WAIT_MEAN, FM_OFFERED_LOAD, FM_OFFERED_PEAK,
    FM_BACKLOG, FM_CAPACITY, FM_LOST_GPU_HOURS, FM_FAILURES, FM_JOBS_SUBMITTED, FM_JOBS_STARTED, FM_JOBS_TOO_BIG,
    FM_COUNT
};
const char *forecast_metric_name(enum forecast_metric m); /* "utilization", "wait_p95_s", ... */
double forecast_period_metric(const struct forecast_period *p, enum forecast_metric m);
/* The field behind metric m (hosts that move periods between processes). */
double *forecast_period_field(struct forecast_period *p, enum forecast_metric m);
/* How long period p lasts inside the horizon (the last one may be cut). */
sim_time forecast_period_length_us(const struct forecast_result *r, uint32_t p);
enum { FORECAST_SAMPLE_FIELDS = 5 };
/* The band of metric m in period p across the completed replications. */
struct forecast_band forecast_band_of(const struct forecast_result *r, uint32_t period, enum forecast_metric m);
struct forecast_band forecast_band_team(const struct forecast_result *r, uint32_t period, size_t team);
/* The band of team t's wait metric m (FM_WAIT_P50, _P95, _P99, _MEAN) in period p. */
struct forecast_band forecast_band_team_wait(const struct forecast_result *r, uint32_t period, size_t team,
                                             enum forecast_metric m);
/* Team t's value of wait metric m in one period (0 for other metrics). */
double forecast_team_wait_metric(const struct forecast_period *p, size_t team, enum forecast_metric m);
struct forecast_band forecast_band_sample(const struct forecast_result *r, uint32_t sample,
                                          size_t field /* 0 capacity, 1 in use, 2 backlog, 3 queue, 4 offered */);

#endif
