#include "scenarios/forecast.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <gsl/gsl_statistics_double.h>
#include <stdlib.h>
#include <string.h>

#include "models/cluster.h"
#include "models/simulation.h"
#include "policies/radix_sort.h"
#include "scenarios/build.h"
#include "scenarios/policy_teams.h"
#include "sim/pcg32.h"

static const char *const metric_names[FM_COUNT] = {
    "utilization", "wait_p50_s", "wait_p95_s", "wait_p99_s", "wait_mean_s", "offered_load_gpus",
    "offered_peak_gpus", "backlog_gpus", "capacity_gpus", "lost_gpu_hours", "failures", "jobs_submitted",
    "jobs_started", "jobs_too_big",
};

const char *forecast_metric_name(enum forecast_metric m)
{
    return (unsigned)m < FM_COUNT ? metric_names[m] : "unknown";
}

double *forecast_period_field(struct forecast_period *p, enum forecast_metric m)
{
    switch (m) {
    case FM_UTILIZATION:
        return &p->utilization;
    case FM_WAIT_P50:
        return &p->wait_p50_s;
    case FM_WAIT_P95:
        return &p->wait_p95_s;
    case FM_WAIT_P99:
        return &p->wait_p99_s;
    case FM_WAIT_MEAN:
        return &p->wait_mean_s;
    case FM_OFFERED_LOAD:
        return &p->offered_load_gpus;
    case FM_OFFERED_PEAK:
        return &p->offered_peak_gpus;
    case FM_BACKLOG:
        return &p->backlog_gpus;
    case FM_CAPACITY:
        return &p->capacity_gpus;
    case FM_LOST_GPU_HOURS:
        return &p->lost_gpu_hours;
    case FM_FAILURES:
        return &p->failures;
    case FM_JOBS_SUBMITTED:
        return &p->jobs_submitted;
    case FM_JOBS_STARTED:
        return &p->jobs_started;
    case FM_JOBS_TOO_BIG:
        return &p->jobs_too_big;
    case FM_COUNT:
        break;
    }
    return NULL;
}

double forecast_period_metric(const struct forecast_period *p, enum forecast_metric m)
{
    const double *x = forecast_period_field((struct forecast_period *)p, m);
    return x ? *x : 0;
}

sim_time forecast_period_length_us(const struct forecast_result *r, uint32_t p)
{
    sim_time a = (sim_time)p * r->period_us, b = a + r->period_us;
    if (r->horizon_us > 0 && b > r->horizon_us)
        b = r->horizon_us;
    return b > a ? b - a : 0;
}

uint64_t forecast_seed(const struct scenario *s, uint32_t r)
{
    struct pcg32 rng;
    pcg32_stream(&rng, s->seed, RNG_REPLICATION, r);
    return ((uint64_t)pcg32_next(&rng) << 32) | pcg32_next(&rng);
}

int forecast_result_init(struct forecast_result *r, const struct scenario *s, uint32_t replications,
                         struct err *err)
{
    memset(r, 0, sizeof *r);
    r->scenario = s;
    r->replications = replications;
    r->start_us = 0;
    r->period_us = s->horizon.period_us;
    r->sample_us = s->horizon.sample_us;
    r->horizon_us = s->horizon.length_us;
    r->n_periods = (uint32_t)((s->horizon.length_us + r->period_us - 1) / r->period_us);
    r->last_period_partial = r->period_us > 0 && s->horizon.length_us % r->period_us != 0;
    r->n_samples = r->sample_us > 0 ? (uint32_t)(s->horizon.length_us / r->sample_us) + 1 : 0;
    static const char *const names[] = {"week", "month", "quarter"};
    snprintf(r->period_name, sizeof r->period_name, "%s", names[s->horizon.period]);
    /* the teams, and "(trace)" for the jobs of a base trace (or of no team)
     * only when there can be any: a scenario without a trace would show an
     * idle team with perfect waits */
    r->n_teams = s->workload.n_teams + (s->workload.base_trace || s->workload.n_teams == 0 ? 1 : 0);
    r->team_names = calloc(r->n_teams, sizeof *r->team_names);
    r->reps = calloc(replications ? replications : 1, sizeof *r->reps);
    r->band_scratch = malloc((replications ? replications : 1) * sizeof *r->band_scratch);
    if (!r->team_names || !r->reps || !r->band_scratch)
        return err_set(err, s->path, 0, 0, "out of memory");
    for (size_t t = 0; t < r->n_teams; t++) {
        const char *name = t < s->workload.n_teams ? s->workload.teams[t].name : "(trace)";
        r->team_names[t] = strdup(name);
        if (!r->team_names[t])
            return err_set(err, s->path, 0, 0, "out of memory");
    }
    return 0;
}

void forecast_replication_release(struct forecast_replication *rep, uint32_t n_periods)
{
    if (!rep)
        return;
    for (uint32_t p = 0; rep->periods && p < n_periods; p++) {
        free(rep->periods[p].team_gpu_hours);
        free(rep->periods[p].team_wait);
    }
    free(rep->periods);
    free(rep->samples);
    free(rep->team_waits_s);
    free(rep->team_n_waits);
    free(rep->team_offset);
    memset(rep, 0, sizeof *rep);
}

void forecast_result_release(struct forecast_result *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; r->reps && i < r->replications; i++)
        forecast_replication_release(&r->reps[i], r->n_periods);
    for (size_t t = 0; r->team_names && t < r->n_teams; t++)
        free(r->team_names[t]);
    free(r->team_names);
    free(r->reps);
    free(r->band_scratch);
    memset(r, 0, sizeof *r);
}

/* Linear interpolation between order statistics of sorted x (as numpy). */
static double quantile(const double *x, size_t n, double q)
{
    return n ? gsl_stats_quantile_from_sorted_data(x, 1, n, q) : 0;
}

/* Waits of the jobs submitted in each period: a job that never started
 * counts as waiting until the end of the horizon (a lower bound, so a
 * forecast never looks better for jobs it could not place). */
static int wait_stats(double *waits, size_t n, struct forecast_wait *out)
{
    if (radix_sort_doubles(waits, n) != 0)
        return -1;
    out->jobs = (double)n;
    out->p50_s = quantile(waits, n, 0.50);
    out->p95_s = quantile(waits, n, 0.95);
    out->p99_s = quantile(waits, n, 0.99);
    out->mean_s = n ? gsl_stats_mean(waits, 1, n) : 0;
    return 0;
}

static size_t team_of(const struct job *j, size_t n_teams)
{
    return j->team >= 0 && (size_t)j->team < n_teams - 1 ? (size_t)j->team : n_teams - 1;
}

/* The same waits, team by team (a base trace's jobs, of no scenario team,
 * count as the last, "(trace)"; without a trace every job has a team). */
static int period_team_waits(const struct workload *w, const struct sim_result *res,
                             const struct forecast_result *shape, sim_time end_us, struct forecast_period *periods,
                             struct err *err)
{
    size_t nt = shape->n_teams;
    double *waits = malloc((w->n ? w->n : 1) * sizeof *waits);
    size_t *count = calloc(nt + 1, sizeof *count), *at = calloc(nt + 1, sizeof *at);
    int rc = 0;
    if (!waits || !count || !at) {
        rc = err_set(err, NULL, 0, 0, "out of memory");
        goto done;
    }
    size_t i = 0;
    for (uint32_t p = 0; p < shape->n_periods; p++) {
        sim_time a = (sim_time)p * shape->period_us, b = a + shape->period_us;
        periods[p].team_wait = calloc(nt, sizeof *periods[p].team_wait);
        if (!periods[p].team_wait) {
            rc = err_set(err, NULL, 0, 0, "out of memory");
            goto done;
        }
        while (i < w->n && w->jobs[i].submit_us < a)
            i++;
        size_t lo = i, hi = i;
        while (hi < w->n && w->jobs[hi].submit_us < b)
            hi++;
        memset(count, 0, (nt + 1) * sizeof *count);
        for (size_t k = lo; k < hi; k++)
            count[team_of(&w->jobs[k], nt)]++;
        at[0] = 0;
        for (size_t t = 0; t < nt; t++)
            at[t + 1] = at[t] + count[t];
        memset(count, 0, (nt + 1) * sizeof *count);
        for (size_t k = lo; k < hi; k++) {
            const struct sim_job_result *jr = &res->jobs[k];
            if (jr->outcome == SIM_JOB_SKIPPED_INVALID || jr->outcome == SIM_JOB_SKIPPED_TOO_BIG)
                continue;
            size_t t = team_of(&w->jobs[k], nt);
            sim_time start = jr->start_us >= 0 ? jr->start_us : end_us;
            waits[at[t] + count[t]++] = (double)(start - w->jobs[k].submit_us) / 1e6;
        }
        for (size_t t = 0; t < nt; t++)
            if (wait_stats(waits + at[t], count[t], &periods[p].team_wait[t]) != 0) {
                rc = err_set(err, NULL, 0, 0, "out of memory");
                goto done;
            }
        i = hi;
    }
done:
    free(waits);
    free(count);
    free(at);
    return rc;
}

static int period_waits(const struct workload *w, const struct sim_result *res, const struct forecast_result *shape,
                        sim_time end_us, struct forecast_period *periods, struct err *err)
{
    double *waits = malloc((w->n ? w->n : 1) * sizeof *waits);
    size_t *first = calloc(shape->n_periods + 1, sizeof *first);
    if (!waits || !first) {
        free(waits);
        free(first);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    size_t i = 0;
    for (uint32_t p = 0; p < shape->n_periods; p++) {
        sim_time a = (sim_time)p * shape->period_us, b = a + shape->period_us;
        size_t n = 0, started = 0;
        while (i < w->n && w->jobs[i].submit_us < a)
            i++;
        for (; i < w->n && w->jobs[i].submit_us < b; i++) {
            const struct sim_job_result *jr = &res->jobs[i];
            if (jr->outcome == SIM_JOB_SKIPPED_INVALID || jr->outcome == SIM_JOB_SKIPPED_TOO_BIG)
                continue;
            sim_time start = jr->start_us >= 0 ? jr->start_us : end_us;
            started += jr->start_us >= 0;
            waits[n++] = (double)(start - w->jobs[i].submit_us) / 1e6;
        }
        if (radix_sort_doubles(waits, n) != 0) {
            free(waits);
            free(first);
            return err_set(err, NULL, 0, 0, "out of memory");
        }
        struct forecast_period *fp = &periods[p];
        fp->jobs_submitted = (double)n;
        fp->jobs_started = (double)started;
        fp->wait_p50_s = quantile(waits, n, 0.50);
        fp->wait_p95_s = quantile(waits, n, 0.95);
        fp->wait_p99_s = quantile(waits, n, 0.99);
        fp->wait_mean_s = n ? gsl_stats_mean(waits, 1, n) : 0;
    }
    free(waits);
    free(first);
    return 0;
}

/* Per-team waits of started jobs, sorted, for the CDF charts. */
static int team_waits(const struct workload *w, const struct sim_result *res, size_t n_teams,
                      struct forecast_replication *rep, struct err *err)
{
    rep->team_n_waits = calloc(n_teams, sizeof *rep->team_n_waits);
    rep->team_offset = calloc(n_teams + 1, sizeof *rep->team_offset);
    rep->team_waits_s = malloc((w->n ? w->n : 1) * sizeof *rep->team_waits_s);
    if (!rep->team_n_waits || !rep->team_offset || !rep->team_waits_s)
        return err_set(err, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < w->n; i++) {
        if (res->jobs[i].start_us < 0)
            continue;
        size_t t = team_of(&w->jobs[i], n_teams);
        rep->team_n_waits[t]++;
    }
    for (size_t t = 0; t < n_teams; t++)
        rep->team_offset[t + 1] = rep->team_offset[t] + rep->team_n_waits[t];
    size_t *fill = calloc(n_teams, sizeof *fill);
    if (!fill)
        return err_set(err, NULL, 0, 0, "out of memory");
    for (size_t i = 0; i < w->n; i++) {
        if (res->jobs[i].start_us < 0)
            continue;
        size_t t = team_of(&w->jobs[i], n_teams);
        rep->team_waits_s[rep->team_offset[t] + fill[t]++] = (double)(res->jobs[i].start_us - w->jobs[i].submit_us) / 1e6;
    }
    free(fill);
    for (size_t t = 0; t < n_teams; t++)
        if (radix_sort_doubles(rep->team_waits_s + rep->team_offset[t], rep->team_n_waits[t]) != 0)
            return err_set(err, NULL, 0, 0, "out of memory");
    return 0;
}

/* What the workload asks for, whatever the cluster (see struct
 * forecast_period): per period the GPU-hours submitted over the period's
 * hours, and the most GPUs held at once if every job ran from its
 * submission; per sample the GPUs held so at that instant. Jobs hold
 * [submit, end): the edges are swept in time order, and the peak is taken
 * once an instant is settled, so the order of the edges within an instant
 * does not matter (a radix sort by time alone: a comparison sort of the
 * 2.5 million edges of a year on 16,384 GPUs took 0.29 s). */
static int offered_load(const struct workload *w, const struct forecast_result *shape, struct forecast_replication *rep,
                        struct err *err)
{
    int64_t *at = malloc((2 * w->n + 1) * sizeof *at), *gpus = malloc((2 * w->n + 1) * sizeof *gpus);
    if (!at || !gpus) {
        free(at);
        free(gpus);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    size_t n = 0;
    for (size_t i = 0; i < w->n; i++) {
        const struct job *j = &w->jobs[i];
        sim_time rt = simulation_effective_runtime(j);
        if (j->slots < 1 || rt <= 0)
            continue;
        int64_t p = j->submit_us / shape->period_us;
        if (j->submit_us >= 0 && p < (int64_t)shape->n_periods)
            rep->periods[p].offered_load_gpus += (double)j->slots * (double)rt;
        at[n] = j->submit_us;
        gpus[n++] = j->slots;
        at[n] = j->submit_us + rt;
        gpus[n++] = -(int64_t)j->slots;
    }
    for (uint32_t p = 0; p < shape->n_periods; p++) {
        sim_time len = forecast_period_length_us(shape, p);
        rep->periods[p].offered_load_gpus = len > 0 ? rep->periods[p].offered_load_gpus / (double)len : 0;
    }
    if (radix_sort_i64(at, gpus, n) != 0) {
        free(at);
        free(gpus);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    int64_t held = 0;
    uint32_t k = 0, p = 0;
    for (size_t i = 0; i <= n; i++) {
        sim_time t = i < n ? at[i] : SIM_TIME_NEVER;
        /* samples and period starts before t see what is held now */
        for (; k < shape->n_samples && (sim_time)k * shape->sample_us < t; k++)
            rep->samples[k].offered_gpus = (double)held;
        for (; p < shape->n_periods && (sim_time)p * shape->period_us < t; p++)
            if ((double)held > rep->periods[p].offered_peak_gpus)
                rep->periods[p].offered_peak_gpus = (double)held;
        if (i == n)
            break;
        held += gpus[i];
        if (i + 1 < n && at[i + 1] == t)
            continue; /* the peak is taken once the instant is settled */
        int64_t q = t >= 0 ? t / shape->period_us : -1;
        if (q >= 0 && q < (int64_t)shape->n_periods && (double)held > rep->periods[q].offered_peak_gpus)
            rep->periods[q].offered_peak_gpus = (double)held;
    }
    free(at);
    free(gpus);
    return 0;
}

int forecast_run_replication(const struct scenario *s, uint32_t r, const char *policy,
                             struct forecast_replication *rep, struct err *err)
{
    return forecast_run_replication_observed(s, r, policy, NULL, NULL, rep, err);
}

int forecast_run_replication_observed(const struct scenario *s, uint32_t r, const char *policy,
                                      sim_pass_hook on_pass, void *hook_ctx, struct forecast_replication *rep,
                                      struct err *err)
{
    struct forecast_result shape;
    memset(rep, 0, sizeof *rep);
    if (forecast_result_init(&shape, s, 0, err) != 0) {
        forecast_result_release(&shape);
        return -1;
    }
    uint64_t seed = forecast_seed(s, r);
    struct workload w;
    workload_init(&w);
    struct cluster c;
    memset(&c, 0, sizeof c);
    struct policy_host ph;
    memset(&ph, 0, sizeof ph);
    struct sim_result res;
    memset(&res, 0, sizeof res);
    int rc = -1;
    workload_release(&w);
    if (scenario_build_workload(s, seed, &w, err) != 0)
        goto done;
    if (scenario_build_cluster(s, &c, err) != 0)
        goto done;
    struct sim_models models;
    scenario_build_models(s, &models);
    models.seed = seed;
    const char *spec = policy ? policy : s->forecast.policy;
    char msg[256], resolved[POLICY_SPEC_MAX * 2];
    /* a built-in's team names become indices; a plugin's parameters are its own */
    if (!policy_plugin_is_path(spec) &&
        policy_teams_resolve(&s->workload, spec, resolved, sizeof resolved, msg, sizeof msg) != 0) {
        err_set(err, s->path, 0, 0, "%s", msg);
        goto done;
    }
    struct policy_host_options po = {.host_name = "the simulator", .decide_timeout_s = s->forecast.decide_timeout_s};
    if (policy_host_open(&ph, policy_plugin_is_path(spec) ? spec : resolved, &po, err) != 0)
        goto done;
    struct sim_options opt;
    sim_options_init(&opt);
    opt.models = &models;
    opt.until_us = s->horizon.length_us;
    opt.period_start_us = 0;
    opt.period_us = shape.period_us;
    opt.n_periods = shape.n_periods;
    opt.sample_us = shape.sample_us;
    opt.n_samples = shape.n_samples;
    opt.on_pass = on_pass;
    opt.hook_ctx = hook_ctx;
    if (simulation_run(&w, &c, &ph, &opt, &res, err) != 0)
        goto done;
    rep->periods = calloc(shape.n_periods, sizeof *rep->periods);
    rep->samples = calloc(shape.n_samples ? shape.n_samples : 1, sizeof *rep->samples);
    if (!rep->periods || !rep->samples) {
        err_set(err, NULL, 0, 0, "out of memory");
        goto done;
    }
    for (uint32_t p = 0; p < shape.n_periods; p++) {
        struct forecast_period *fp = &rep->periods[p];
        const struct sim_period_stats *ps = &res.periods[p];
        sim_time len = forecast_period_length_us(&shape, p);
        fp->utilization = ps->capacity_slot_us > 0 ? ps->busy_slot_us / ps->capacity_slot_us : 0;
        fp->backlog_gpus = ps->peak_queued_slots;
        /* a period cut by the horizon is averaged over its part inside it */
        fp->capacity_gpus = len > 0 ? ps->capacity_slot_us / (double)len : 0;
        fp->jobs_too_big = (double)ps->jobs_too_big;
        fp->lost_gpu_hours = ps->lost_slot_us / 3.6e9;
        fp->failures = (double)ps->failures;
        fp->team_gpu_hours = calloc(shape.n_teams, sizeof *fp->team_gpu_hours);
        if (!fp->team_gpu_hours) {
            err_set(err, NULL, 0, 0, "out of memory");
            goto done;
        }
        /* the host counts jobs without a team last, as the forecast does */
        for (size_t t = 0; t < shape.n_teams && t < res.n_teams; t++)
            fp->team_gpu_hours[t] = res.team_busy_slot_us[p * res.n_teams + t] / 3.6e9;
    }
    for (uint32_t k = 0; k < shape.n_samples; k++)
        rep->samples[k] = (struct forecast_sample){res.samples[k].capacity_slots, res.samples[k].in_use_slots,
                                                   res.samples[k].queued_slots, res.samples[k].queue_jobs, 0};
    if (offered_load(&w, &shape, rep, err) != 0 ||
        period_waits(&w, &res, &shape, s->horizon.length_us, rep->periods, err) != 0 ||
        period_team_waits(&w, &res, &shape, s->horizon.length_us, rep->periods, err) != 0 ||
        team_waits(&w, &res, shape.n_teams, rep, err) != 0)
        goto done;
    rc = 0;
done:
    if (rc != 0 && !err->set)
        err_set(err, s->path, 0, 0, "out of memory");
    if (rc != 0)
        forecast_replication_release(rep, shape.n_periods);
    sim_result_release(&res);
    policy_host_close(&ph);
    cluster_release(&c);
    workload_release(&w);
    forecast_result_release(&shape);
    return rc;
}

static struct forecast_band band_of(double *x, size_t n)
{
    struct forecast_band b = {0, 0, 0, 0, 0, 0};
    if (!n)
        return b;
    b.mean = gsl_stats_mean(x, 1, n);
    b.ci95_lo = b.ci95_hi = b.mean;
    if (n > 1) {
        double half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * gsl_stats_sd_m(x, 1, n, b.mean) / sqrt((double)n);
        b.ci95_lo = b.mean - half;
        b.ci95_hi = b.mean + half;
    }
    gsl_sort(x, 1, n);
    b.p5 = quantile(x, n, 0.05);
    b.p50 = quantile(x, n, 0.50);
    b.p95 = quantile(x, n, 0.95);
    return b;
}

/* The band of one figure over the completed replications (pick reads it
 * from one), sorted in the result's scratch: a band that allocated read 0
 * when memory ran out, and a forecast reported waits of 0 as a success.
 * NaN for a result without one (not made by forecast_result_init). */
static struct forecast_band band_over(const struct forecast_result *r,
                                      double (*pick)(const struct forecast_replication *, const void *),
                                      const void *arg)
{
    double *x = r->band_scratch;
    if (!x || r->completed > r->replications)
        return (struct forecast_band){NAN, NAN, NAN, NAN, NAN, NAN};
    for (size_t i = 0; i < r->completed; i++)
        x[i] = pick(&r->reps[i], arg);
    return band_of(x, r->completed);
}

struct period_pick {
    uint32_t period;
    enum forecast_metric m;
    size_t team;
};

static double pick_period_metric(const struct forecast_replication *rep, const void *arg)
{
    const struct period_pick *k = arg;
    return forecast_period_metric(&rep->periods[k->period], k->m);
}

static double pick_team_gpu_hours(const struct forecast_replication *rep, const void *arg)
{
    const struct period_pick *k = arg;
    return rep->periods[k->period].team_gpu_hours[k->team];
}

static double pick_team_wait(const struct forecast_replication *rep, const void *arg)
{
    const struct period_pick *k = arg;
    return forecast_team_wait_metric(&rep->periods[k->period], k->team, k->m);
}

struct sample_pick {
    uint32_t sample;
    size_t field;
};

static double pick_sample(const struct forecast_replication *rep, const void *arg)
{
    const struct sample_pick *k = arg;
    const struct forecast_sample *s = &rep->samples[k->sample];
    return k->field == 0   ? s->capacity_gpus
           : k->field == 1 ? s->in_use_gpus
           : k->field == 2 ? s->backlog_gpus
           : k->field == 3 ? s->queue_jobs
                           : s->offered_gpus;
}

struct forecast_band forecast_band_of(const struct forecast_result *r, uint32_t period, enum forecast_metric m)
{
    struct period_pick k = {period, m, 0};
    return band_over(r, pick_period_metric, &k);
}

struct forecast_band forecast_band_team(const struct forecast_result *r, uint32_t period, size_t team)
{
    struct period_pick k = {period, FM_COUNT, team};
    return band_over(r, pick_team_gpu_hours, &k);
}

struct forecast_band forecast_band_sample(const struct forecast_result *r, uint32_t sample, size_t field)
{
    struct sample_pick k = {sample, field};
    return band_over(r, pick_sample, &k);
}

double forecast_team_wait_metric(const struct forecast_period *p, size_t team, enum forecast_metric m)
{
    if (!p->team_wait)
        return 0;
    const struct forecast_wait *w = &p->team_wait[team];
    return m == FM_WAIT_P50 ? w->p50_s : m == FM_WAIT_P95 ? w->p95_s : m == FM_WAIT_P99 ? w->p99_s
           : m == FM_WAIT_MEAN ? w->mean_s : 0;
}

struct forecast_band forecast_band_team_wait(const struct forecast_result *r, uint32_t period, size_t team,
                                             enum forecast_metric m)
{
    struct period_pick k = {period, m, team};
    return band_over(r, pick_team_wait, &k);
}
