/* Forecasts against a case whose answer is known: an M/M/8 queue (Poisson
 * arrivals, exponential runtimes, single-GPU jobs, FCFS on 8 GPUs). The
 * forecast's 95% band for the mean wait must cover Erlang C's value in about
 * 95% of repeated forecasts. */
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/forecast.h"
#include "scenarios/policy_teams.h"
#include "scenarios/scenario.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

/* load 0.7 on 8 GPUs, mean runtime 1 h: 5.6 jobs an hour */
static const char mmc_yaml[] = "seed: %llu\n"
                               "cluster:\n"
                               "  partitions:\n"
                               "    - {name: all, node_type: H100-SXM, nodes: 1}\n"
                               "workload:\n"
                               "  teams:\n"
                               "    - name: poisson\n"
                               "      jobs_per_hour: 5.6\n"
                               "      gpus: {1: 1}\n"
                               "      classes: {training: 1}\n"
                               "      runtime:\n"
                               "        training: {distribution: weibull, shape: 1, scale: 1h}\n"
                               "      limit_factor: 1000\n"
                               "horizon: {length: 26w, period: quarter, sample: 1w}\n"
                               "forecast: {replications: 8, policy: fcfs}\n";

static double erlang_c_wait_s(int c, double lambda_per_s, double mu_per_s)
{
    double a = lambda_per_s / mu_per_s, rho = a / c, sum = 0;
    for (int k = 0; k < c; k++)
        sum += exp(k * log(a) - gsl_sf_lngamma(k + 1.0));
    double top = exp(c * log(a) - gsl_sf_lngamma(c + 1.0)) / (1 - rho);
    return top / (sum + top) / (c * mu_per_s - lambda_per_s);
}

static void test_mmc_coverage(void)
{
    const int forecasts = 30;
    double truth = erlang_c_wait_s(8, 5.6 / 3600, 1.0 / 3600);
    int covered = 0;
    for (int f = 0; f < forecasts; f++) {
        char yaml[2048];
        snprintf(yaml, sizeof yaml, mmc_yaml, 1000ULL + (unsigned long long)f);
        struct scenario s;
        struct diag_list d;
        struct err err;
        scenario_init(&s);
        diag_list_init(&d, 10);
        err_clear(&err);
        if (!CHECK_INT(scenario_load_buffer("mmc.yaml", yaml, strlen(yaml), &s, &d, &err), 0)) {
            printf("  %s\n", err.msg);
            return;
        }
        struct forecast_result r;
        CHECK_INT(forecast_result_init(&r, &s, s.forecast.replications, &err), 0);
        for (uint32_t i = 0; i < r.replications; i++)
            CHECK_INT(forecast_run_replication(&s, i, NULL, &r.reps[i], &err), 0);
        r.completed = r.replications;
        /* the second quarter: the first starts empty */
        struct forecast_band b = forecast_band_of(&r, 1, FM_WAIT_MEAN);
        covered += b.ci95_lo <= truth && truth <= b.ci95_hi;
        if (getenv("FLEETSIM_TEST_VERBOSE"))
            printf("  forecast %d: mean wait %.1f s, 95%% band [%.1f, %.1f], Erlang C %.1f s\n", f, b.mean, b.ci95_lo,
                   b.ci95_hi, truth);
        forecast_result_release(&r);
        diag_list_release(&d);
        scenario_release(&s);
    }
    /* Binomial(30, 0.95): 25 or more covered with probability 0.998 */
    if (!CHECK(covered >= 25))
        printf("  the band covered Erlang C's %.1f s in %d of %d forecasts\n", truth, covered, forecasts);
    CHECK(covered <= forecasts);
}

/* The same scenario and replication give the same numbers. */
static void test_replication_deterministic(void)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, mmc_yaml, 7ULL);
    struct scenario s;
    struct diag_list d;
    struct err err;
    scenario_init(&s);
    diag_list_init(&d, 10);
    err_clear(&err);
    CHECK_INT(scenario_load_buffer("mmc.yaml", yaml, strlen(yaml), &s, &d, &err), 0);
    struct forecast_replication a, b;
    CHECK_INT(forecast_run_replication(&s, 3, NULL, &a, &err), 0);
    CHECK_INT(forecast_run_replication(&s, 3, NULL, &b, &err), 0);
    CHECK(a.periods[1].wait_mean_s == b.periods[1].wait_mean_s);
    CHECK(a.periods[0].utilization == b.periods[0].utilization);
    CHECK(a.periods[0].jobs_submitted > 10000); /* 5.6/h over 13 weeks: about 12,230 */
    CHECK_NEAR(a.periods[0].utilization, 0.7, 0.03);
    forecast_replication_release(&a, 2);
    forecast_replication_release(&b, 2);
    diag_list_release(&d);
    scenario_release(&s);
}

/* Loads yaml and runs replication 0 into rep; returns 0 when both worked. */
static int run_one(const char *yaml, struct scenario *s, struct forecast_result *shape, struct forecast_replication *rep)
{
    struct diag_list d;
    struct err err;
    scenario_init(s);
    diag_list_init(&d, 10);
    err_clear(&err);
    int rc = scenario_load_buffer("t.yaml", yaml, strlen(yaml), s, &d, &err);
    if (rc == 0)
        rc = forecast_result_init(shape, s, 1, &err);
    if (rc == 0)
        rc = forecast_run_replication(s, 0, NULL, rep, &err);
    if (rc != 0)
        printf("  %s\n", err.msg);
    diag_list_release(&d);
    return rc;
}

/* The offered load is what the workload asks for (rate x size x runtime),
 * not the backlog: on M/M/8 at load 0.7 it is about 5.6 GPUs. */
static void test_offered_load(void)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, mmc_yaml, 11ULL);
    struct scenario s;
    struct forecast_result shape;
    struct forecast_replication rep;
    if (!CHECK_INT(run_one(yaml, &s, &shape, &rep), 0))
        return;
    CHECK_INT(shape.last_period_partial, 0);
    for (uint32_t p = 0; p < 2; p++) {
        CHECK_NEAR(rep.periods[p].offered_load_gpus, 5.6, 0.3);
        CHECK(rep.periods[p].offered_peak_gpus >= rep.periods[p].offered_load_gpus);
        CHECK(rep.periods[p].offered_peak_gpus <= 40);
        CHECK(rep.periods[p].backlog_gpus < 100);
        CHECK_NEAR(rep.periods[p].capacity_gpus, 8, 1e-9);
    }
    CHECK(shape.n_samples > 2 && rep.samples[2].offered_gpus >= 0);
    forecast_replication_release(&rep, shape.n_periods);
    forecast_result_release(&shape);
    scenario_release(&s);
}

/* Jobs longer than the horizon keep the cluster busy: every week counts
 * them (they used to end after the horizon and count nowhere). A horizon
 * shorter than its period does not dilute capacity, and is flagged. */
static const char long_jobs_yaml[] = "seed: 5\n"
                                     "cluster:\n"
                                     "  partitions:\n"
                                     "    - {name: all, node_type: H100-SXM, nodes: 2}\n"
                                     "workload:\n"
                                     "  teams:\n"
                                     "    - name: long\n"
                                     "      jobs_per_hour: 2\n"
                                     "      gpus: {16: 1}\n"
                                     "      classes: {training: 1}\n"
                                     "      runtime: {training: 5w}\n"
                                     "horizon: {length: %s, period: %s, sample: 1d}\n"
                                     "forecast: {replications: 1, policy: fcfs}\n";

static void test_long_jobs_short_horizon(void)
{
    char yaml[2048];
    struct scenario s;
    struct forecast_result shape;
    struct forecast_replication rep;
    snprintf(yaml, sizeof yaml, long_jobs_yaml, "4w", "week");
    if (!CHECK_INT(run_one(yaml, &s, &shape, &rep), 0))
        return;
    CHECK_INT(shape.n_periods, 4);
    for (uint32_t p = 1; p < 4; p++)
        CHECK_NEAR(rep.periods[p].utilization, 1.0, 1e-9);
    CHECK(rep.periods[0].utilization > 0.95);
    CHECK_INT(shape.last_period_partial, 0);
    forecast_replication_release(&rep, shape.n_periods);
    forecast_result_release(&shape);
    scenario_release(&s);

    snprintf(yaml, sizeof yaml, long_jobs_yaml, "4w", "quarter");
    if (!CHECK_INT(run_one(yaml, &s, &shape, &rep), 0))
        return;
    CHECK_INT(shape.n_periods, 1);
    CHECK_INT(shape.last_period_partial, 1);
    CHECK_NEAR(rep.periods[0].capacity_gpus, 16, 1e-9); /* not 16 x 4/13 */
    CHECK(rep.periods[0].utilization > 0.95);
    forecast_replication_release(&rep, shape.n_periods);
    forecast_result_release(&shape);
    scenario_release(&s);

    snprintf(yaml, sizeof yaml, long_jobs_yaml, "47w", "quarter");
    if (!CHECK_INT(run_one(yaml, &s, &shape, &rep), 0))
        return;
    CHECK_INT(shape.n_periods, 4);
    CHECK_INT(shape.last_period_partial, 1);
    CHECK_INT(forecast_period_length_us(&shape, 3) / 1000000, 8 * 7 * 86400);
    CHECK_NEAR(rep.periods[3].capacity_gpus, 16, 1e-9); /* not 16 x 8/13 */
    forecast_replication_release(&rep, shape.n_periods);
    forecast_result_release(&shape);
    scenario_release(&s);
}

/* Services restart in place after a failure: each failure costs at most
 * one replica's restart (8 GPUs x 10 min here), and no replica goes back to
 * the queue; the same jobs as batch jobs roll back and queue again. */
static const char service_yaml[] = "seed: 9\n"
                                   "cluster:\n"
                                   "  partitions:\n"
                                   "    - {name: all, node_type: H100-SXM, nodes: 8}\n"
                                   "failures:\n"
                                   "  categories:\n"
                                   "    - {name: flaky, scope: node, rate_per_unit_hour: 0.002, repair: 4h}\n"
                                   "workload:\n"
                                   "  teams:\n"
                                   "    - name: serving\n"
                                   "      jobs_per_hour: 0.02\n"
                                   "      gpus: {8: 1}\n"
                                   "      classes: {inference: 1}\n"
                                   "      runtime: {inference: 10d}\n"
                                   "%s"
                                   "horizon: {length: 13w, period: quarter, sample: 1d}\n"
                                   "forecast: {replications: 1, policy: fcfs}\n";

static void test_services_restart_in_place(void)
{
    char yaml[2048];
    struct scenario s;
    struct forecast_result shape;
    struct forecast_replication svc, batch;
    snprintf(yaml, sizeof yaml, service_yaml, "      service: {replicas: 2, restart: 10min}\n");
    if (!CHECK_INT(run_one(yaml, &s, &shape, &svc), 0))
        return;
    const struct forecast_period p0 = svc.periods[0], *p = &p0;
    CHECK(p->failures >= 5); /* 8 nodes x 0.002/h x 2184 h: about 35 */
    CHECK(p->lost_gpu_hours > 0);
    CHECK(p->lost_gpu_hours <= p->failures * 8 * (10.0 / 60) + 1e-9);
    CHECK(p->jobs_submitted >= 2 && (int64_t)p->jobs_submitted % 2 == 0); /* two replicas per deployment */
    if (getenv("FLEETSIM_TEST_VERBOSE"))
        printf("  services: %.0f failures, %.1f GPU-h lost\n", p->failures, p->lost_gpu_hours);
    forecast_replication_release(&svc, shape.n_periods);
    forecast_result_release(&shape);
    scenario_release(&s);

    snprintf(yaml, sizeof yaml, service_yaml, "");
    if (!CHECK_INT(run_one(yaml, &s, &shape, &batch), 0))
        return;
    /* batch inference jobs without checkpoints lose what they ran */
    CHECK(batch.periods[0].lost_gpu_hours > 10 * p->failures * 8 * (10.0 / 60));
    if (getenv("FLEETSIM_TEST_VERBOSE"))
        printf("  batch: %.0f failures, %.1f GPU-h lost\n", batch.periods[0].failures, batch.periods[0].lost_gpu_hours);
    forecast_replication_release(&batch, shape.n_periods);
    forecast_result_release(&shape);
    scenario_release(&s);
}

/* Team names in policy specs become the indices policies take. */
static void test_policy_team_names(void)
{
    struct workload_spec w;
    workload_spec_init(&w);
    snprintf(workload_spec_add_team(&w)->name, TEAM_NAME_MAX, "research");
    snprintf(workload_spec_add_team(&w)->name, TEAM_NAME_MAX, "serving");
    char out[256], msg[256];
    CHECK_INT(policy_teams_resolve(&w, "fcfs+easy+quota(guarantee=research:8;serving:4;-1:2,borrow=0)", out,
                                   sizeof out, msg, sizeof msg),
              0);
    CHECK_STR(out, "fcfs+easy+quota(guarantee=0:8;1:4;-1:2,borrow=0)");
    CHECK_INT(policy_teams_resolve(&w, "multifactor(half_life_s=3600,shares=serving:1.5)+easy", out, sizeof out, msg,
                                   sizeof msg),
              0);
    CHECK_STR(out, "multifactor(half_life_s=3600,shares=1:1.5)+easy");
    CHECK_INT(policy_teams_resolve(&w, "quota(guarantee=reserch:8)", out, sizeof out, msg, sizeof msg), -1);
    CHECK_STR(msg, "policy 'quota(guarantee=reserch:8)' names team 'reserch', which the workload does not have; did "
                   "you mean 'research'?");
    CHECK_INT(policy_teams_resolve(&w, "fcfs", out, 3, msg, sizeof msg), -1);
    workload_spec_release(&w);
}

void suite_forecast(void)
{
    test_run("forecast policy specs with team names", test_policy_team_names);
    test_run("forecast services restart in place", test_services_restart_in_place);
    test_run("forecast offered load apart from the backlog", test_offered_load);
    test_run("forecast long jobs, short and partial horizons", test_long_jobs_short_horizon);
    test_run("forecast replication deterministic", test_replication_deterministic);
    test_run("forecast 95% band covers Erlang C (M/M/8)", test_mmc_coverage);
}
