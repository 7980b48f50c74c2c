/* synth: synthetic workloads from a description of teams, calibrated by
 * traces/fit or written by hand in a scenario's `workload` section.
 *
 * Per team: Poisson arrivals at jobs_per_hour, shaped by an hour-of-day and a
 * day-of-week profile (multipliers averaging 1) and bursts (a multiplier over
 * an interval), growing by growth_per_quarter, compounded continuously over
 * the quarter (rate x (1 + g)^(t / 13 weeks)); a job mix: the GPU count from a
 * discrete distribution, the class from class weights, the runtime from the
 * class's distribution (log-normal, Weibull, or an empirical list resampled),
 * the requested time as runtime x limit_factor rounded up to limit_round_s.
 * Arrivals are drawn by thinning a homogeneous process at the peak rate.
 *
 * Every random purpose of every team has its own PCG stream (arrivals,
 * sizes, durations; index = team), so the jobs a seed generates never depend
 * on the policy, the cluster, or on other teams. Jobs are sorted by submit
 * time; ids count from 1. Each accepted arrival takes exactly two uniforms
 * from its team's sizes stream (GPU count, class) and one from its
 * durations stream (inverse CDF or empirical index; a second one with
 * observed limits), so changing a team's job mix leaves its arrival times
 * unchanged, and vice versa. An arrival with a batch (job arrays) or a
 * service deployment brings that many copies of its job.
 *
 * Calendar: growth counts from simulated time 0 (the scenario start), so a
 * team grows (1 + g)^(t / 13 w). Hour of day and day of week come from
 * start_unix_s + t; with start_unix_s = 0, time 0 is taken as a Monday
 * 00:00 UTC.
 *
 * A base trace (base_trace) is read with trace_read and replayed shifted so
 * its first submission falls on start_us; a trace shorter than the window is
 * repeated, every repetition shifted by its span rounded up to whole weeks
 * (so the daily and weekly patterns stay in place). With
 * base_growth_per_quarter g != 0, each replayed job at time t is copied
 * floor(f - 1) times plus once more with probability frac(f - 1), where
 * f = (1 + g)^(t / 13 w), each copy submitted up to an hour later (uniform);
 * with g < 0 a job is kept with probability f. These draws use their own
 * stream (RNG_ARRIVALS, index SYNTH_BASE_STREAM). Replayed jobs of the first
 * repetition keep the trace's ids; every other job is numbered from the
 * largest trace id + 1, in submit order. Base teams and users are interned
 * after the spec's teams.
 */
#ifndef FLEETSIM_TRACES_SYNTH_H
#define FLEETSIM_TRACES_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "models/distribution.h"
#include "models/node_types.h"
#include "models/workload.h"
#include "sim/err.h"

enum { TEAM_NAME_MAX = 48 };

/* The stream index of the base trace's growth draws (teams use 0..n-1). */
#define SYNTH_BASE_STREAM UINT64_C(0xBA5E0000)

struct burst {
    sim_time start_us;
    sim_time end_us;
    double multiplier;
};

struct runtime_spec {
    struct distribution dist; /* seconds; usually DIST_LOGNORMAL or DIST_WEIBULL (any kind samples) */
    double *empirical_s;      /* if non-NULL, resampled instead of dist */
    size_t n_empirical;
};

/* Runtimes by size: a job of more GPUs than the previous entry's up_to_gpus
 * and at most this one's takes this runtime instead of its class's (jobs
 * larger than every entry: the last). fit writes them, since on real
 * traces large jobs run longer, and losing that loses most of the work. */
struct size_runtime {
    int32_t up_to_gpus;
    struct runtime_spec runtime;
};

struct team_spec {
    char name[TEAM_NAME_MAX];
    double jobs_per_hour;
    double hourly[24]; /* multipliers by hour of day (UTC), mean 1 */
    double weekly[7];  /* by day of week, Monday first, mean 1 */
    struct burst *bursts;
    size_t n_bursts;
    int32_t *gpus;     /* GPU counts (none: every job 1 GPU) ... */
    double *gpu_weights; /* ... and their weights */
    size_t n_gpus;
    double class_weights[JOB_CLASS_COUNT];
    struct runtime_spec runtime[JOB_CLASS_COUNT];
    double limit_factor;   /* requested time = runtime x factor (>= 1) */
    double limit_round_s;  /* rounded up to a multiple of this (0 = exact) */
    double growth_per_quarter;
    int32_t priority;
    struct size_runtime *by_size; /* sorted by up_to_gpus; none: the class runtimes */
    /* requested times as users give them, sorted: a job's limit is drawn
     * among those at least its runtime (one more uniform from its team's
     * durations stream), else its runtime; none: limit_factor */
    double *limits_s;
    size_t n_limits;
    /* jobs per arrival (job arrays, scripted submissions), resampled; an
     * arrival brings that many jobs at once, and arrivals come at
     * jobs_per_hour / their mean (one more uniform from the arrivals
     * stream per arrival); none: one job per arrival */
    double *batch_sizes;
    size_t n_batch;
    size_t n_by_size;
    /* services: each arrival deploys `replicas` jobs (same submission and
     * lifetime) that restart in place after a failure, out service_restart_s
     * (models/simulation.h); 0: batch jobs */
    int is_service;
    int32_t replicas;
    double service_restart_s;
};

struct workload_spec {
    struct team_spec *teams;
    size_t n_teams;
    char *base_trace;       /* optional: a trace replayed as the base load */
    double base_growth_per_quarter; /* the base trace's jobs are replicated to grow like this */
};

void workload_spec_init(struct workload_spec *s);
void workload_spec_release(struct workload_spec *s);
/* Defaults of one team: flat profiles, no bursts, no GPU counts (n_gpus 0:
 * every job takes 1 GPU), all jobs of class `cls`, runtimes fixed 1 h,
 * limit_factor 1, no growth, rate 0 (set jobs_per_hour). */
void team_spec_init(struct team_spec *t, enum job_class cls);
/* Appends a team initialised by team_spec_init (default class training);
 * the spec owns what the team points to. Returns it, or NULL (memory). */
struct team_spec *workload_spec_add_team(struct workload_spec *s);

/* The team's arrival rate in jobs per hour at simulated time at_us: profiles,
 * bursts and growth applied, as synth_generate draws it. */
double synth_rate_per_hour(const struct team_spec *t, sim_time at_us, int64_t start_unix_s);
/* The expected number of the team's jobs submitted in [start_us, end_us):
 * the integral of the rate, exact (piecewise by hour and burst edges), times
 * a service's replicas. */
double synth_expected_jobs(const struct team_spec *t, sim_time start_us, sim_time end_us, int64_t start_unix_s);

/* Generates the jobs submitted in [start_us, end_us) into w (initialised by
 * the caller; teams are interned in team order). start_unix_s places the
 * profiles on the calendar (0 = a Monday 00:00 UTC). Returns 0 or -1. */
int synth_generate(const struct workload_spec *spec, sim_time start_us, sim_time end_us, int64_t start_unix_s,
                   uint64_t seed, struct workload *w, struct err *err);

#endif
