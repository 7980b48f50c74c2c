/* Tests of traces/synth.c and the scenario's workload section: the same seed
 * gives the same jobs; a team's jobs do not depend on the other teams; the
 * number of arrivals matches the integral of the rate (profiles, bursts,
 * growth) within sampling error, in total and per hour of day and day of
 * week; limits follow limit_factor and limit_round; a base trace is replayed,
 * repeated and grown; a workload section loads into the spec synth uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenarios/scenario.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"
#include "traces/synth.h"

#define HOUR_US (3600 * SIM_US_PER_S)
#define WEEK_US (7 * 24 * HOUR_US)

/* One team: 1, 8 or 64 GPUs; training (log-normal) and finetune (Weibull). */
static struct team_spec *add_team(struct workload_spec *s, const char *name, double per_hour)
{
    struct team_spec *t = workload_spec_add_team(s);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->jobs_per_hour = per_hour;
    t->n_gpus = 3;
    t->gpus = malloc(3 * sizeof *t->gpus);
    t->gpu_weights = malloc(3 * sizeof *t->gpu_weights);
    int32_t g[] = {1, 8, 64};
    double wt[] = {0.5, 0.3, 0.2};
    memcpy(t->gpus, g, sizeof g);
    memcpy(t->gpu_weights, wt, sizeof wt);
    t->class_weights[JOB_CLASS_TRAINING] = 0.6;
    t->class_weights[JOB_CLASS_FINETUNE] = 0.4;
    t->runtime[JOB_CLASS_TRAINING].dist = (struct distribution){DIST_LOGNORMAL, 6 * 3600.0, 1.2};
    t->runtime[JOB_CLASS_FINETUNE].dist = (struct distribution){DIST_WEIBULL, 0.8, 7200.0};
    t->limit_factor = 2;
    return t;
}

static int gen(const struct workload_spec *s, sim_time end_us, int64_t unix_s, uint64_t seed, struct workload *w)
{
    struct err e;
    err_clear(&e);
    workload_init(w);
    int rc = synth_generate(s, 0, end_us, unix_s, seed, w, &e);
    if (rc != 0)
        printf("  synth: %s\n", e.msg);
    return rc;
}

static int same_job(const struct job *a, const struct job *b)
{
    return a->submit_us == b->submit_us && a->runtime_us == b->runtime_us && a->limit_us == b->limit_us &&
           a->slots == b->slots && a->job_class == b->job_class && a->team == b->team;
}

static void test_synth_deterministic(void)
{
    struct workload_spec s;
    workload_spec_init(&s);
    add_team(&s, "a", 30);
    add_team(&s, "b", 10)->growth_per_quarter = 0.3;
    struct workload w1, w2, w3;
    CHECK_INT(gen(&s, 4 * WEEK_US, 0, 42, &w1), 0);
    CHECK_INT(gen(&s, 4 * WEEK_US, 0, 42, &w2), 0);
    CHECK_INT(gen(&s, 4 * WEEK_US, 0, 43, &w3), 0);
    CHECK(w1.n > 20000);
    CHECK_INT(w1.n, w2.n);
    int same = w1.n == w2.n;
    for (size_t i = 0; same && i < w1.n; i++)
        same = same_job(&w1.jobs[i], &w2.jobs[i]) && w1.jobs[i].id == w2.jobs[i].id;
    CHECK(same);
    CHECK(w1.n != w3.n || !same_job(&w1.jobs[0], &w3.jobs[0])); /* another seed, other jobs */
    /* sorted by submit time, ids 1..n in that order, teams interned in order */
    int sorted = 1;
    for (size_t i = 0; i < w1.n; i++)
        sorted &= w1.jobs[i].id == (int64_t)i + 1 && (i == 0 || w1.jobs[i - 1].submit_us <= w1.jobs[i].submit_us);
    CHECK(sorted);
    CHECK_STR(string_table_get(&w1.teams, 0), "a");
    CHECK_STR(string_table_get(&w1.teams, 1), "b");
    /* only the sizes, classes and limits the spec allows */
    int ok = 1;
    for (size_t i = 0; i < w1.n; i++) {
        const struct job *j = &w1.jobs[i];
        ok &= (j->slots == 1 || j->slots == 8 || j->slots == 64) &&
              (j->job_class == JOB_CLASS_TRAINING || j->job_class == JOB_CLASS_FINETUNE) &&
              llabs(j->limit_us - 2 * j->runtime_us) <= 1 && j->runtime_us >= SIM_US_PER_S && j->user == -1 &&
              j->submit_us >= 0 && j->submit_us < 4 * WEEK_US;
    }
    CHECK(ok);
    workload_release(&w1);
    workload_release(&w2);
    workload_release(&w3);
    workload_spec_release(&s);
}

/* The jobs of team `team` (by name) of w. */
static size_t team_jobs(const struct workload *w, const char *name, struct job *out)
{
    size_t n = 0;
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(string_table_get(&w->teams, w->jobs[i].team), name) == 0)
            out[n++] = w->jobs[i];
    return n;
}

static void test_synth_teams_independent(void)
{
    struct workload_spec s;
    workload_spec_init(&s);
    add_team(&s, "a", 20);
    add_team(&s, "b", 5);
    struct workload w1, w2;
    CHECK_INT(gen(&s, 2 * WEEK_US, 0, 7, &w1), 0);
    /* change everything about team b: rate, mix, runtimes, growth */
    struct team_spec *b = &s.teams[1];
    b->jobs_per_hour = 50;
    b->growth_per_quarter = 2;
    b->class_weights[JOB_CLASS_INFERENCE] = 1;
    b->runtime[JOB_CLASS_INFERENCE].dist = (struct distribution){DIST_FIXED, 60, 0};
    b->gpu_weights[2] = 5;
    CHECK_INT(gen(&s, 2 * WEEK_US, 0, 7, &w2), 0);
    struct job *a1 = malloc(w1.n * sizeof *a1), *a2 = malloc(w2.n * sizeof *a2);
    size_t n1 = team_jobs(&w1, "a", a1), n2 = team_jobs(&w2, "a", a2);
    CHECK(n1 > 5000);
    CHECK_INT(n1, n2);
    int same = n1 == n2;
    for (size_t i = 0; same && i < n1; i++)
        same = same_job(&a1[i], &a2[i]);
    CHECK(same);
    /* ... and a changed job mix of a team leaves its arrival times alone */
    struct job *b1 = malloc(w1.n * sizeof *b1), *b2 = malloc(w2.n * sizeof *b2);
    b->jobs_per_hour = 5;
    b->growth_per_quarter = 0;
    struct workload w3;
    CHECK_INT(gen(&s, 2 * WEEK_US, 0, 7, &w3), 0);
    size_t m1 = team_jobs(&w1, "b", b1), m3 = team_jobs(&w3, "b", b2);
    CHECK_INT(m1, m3);
    int times = m1 == m3, mix_changed = 0;
    for (size_t i = 0; times && i < m1; i++) {
        times = b1[i].submit_us == b2[i].submit_us;
        mix_changed |= b1[i].job_class != b2[i].job_class;
    }
    CHECK(times);
    CHECK(mix_changed);
    free(a1);
    free(a2);
    free(b1);
    free(b2);
    workload_release(&w1);
    workload_release(&w2);
    workload_release(&w3);
    workload_spec_release(&s);
}

/* Counts within k standard deviations of a Poisson mean. */
static int poisson_ok(double count, double mean, double k)
{
    int ok = fabs(count - mean) <= k * sqrt(mean) + 1;
    if (!ok)
        printf("  count %.0f, expected %.1f (+- %.1f)\n", count, mean, k * sqrt(mean));
    return ok;
}

static void test_synth_rate_profiles_growth(void)
{
    struct workload_spec s;
    workload_spec_init(&s);
    struct team_spec *t = add_team(&s, "a", 8);
    t->growth_per_quarter = 0.5;
    double sum = 0;
    for (int h = 0; h < 24; h++)
        sum += t->hourly[h] = h >= 9 && h < 18 ? 3 : 0.5;
    for (int h = 0; h < 24; h++)
        t->hourly[h] *= 24 / sum;
    double weekly[7] = {1.3, 1.3, 1.3, 1.3, 1.3, 0.25, 0.25};
    memcpy(t->weekly, weekly, sizeof weekly);
    t->n_bursts = 1;
    t->bursts = malloc(sizeof *t->bursts);
    t->bursts[0] = (struct burst){5 * WEEK_US + 12 * HOUR_US, 6 * WEEK_US, 4};
    /* 2027-01-04 is a Monday; start on a Wednesday 00:00 to check the calendar */
    int64_t unix_s = 1798416000 + 2 * 86400;
    sim_time end = 26 * WEEK_US;
    struct workload w;
    CHECK_INT(gen(&s, end, unix_s, 11, &w), 0);
    /* the closed form against a plain sum over hours, with no burst edge inside an hour */
    double by_hour = 0;
    for (sim_time a = 0; a < end; a += HOUR_US)
        by_hour += synth_rate_per_hour(t, a, unix_s);
    double expected = synth_expected_jobs(t, 0, end, unix_s);
    CHECK_NEAR(expected, by_hour, 0.02 * by_hour); /* growth within an hour: tiny */
    CHECK(poisson_ok((double)w.n, expected, 4));
    /* no growth: the rate is exactly the profile's */
    struct team_spec flat = *t;
    flat.growth_per_quarter = 0;
    flat.n_bursts = 0;
    CHECK_NEAR(synth_expected_jobs(&flat, 0, WEEK_US, unix_s), 8 * 168, 1e-6);
    /* per quarter-ish (13 weeks), per hour of day, per day of week */
    double got_h[24] = {0}, exp_h[24] = {0}, got_d[7] = {0}, exp_d[7] = {0}, got_q[2] = {0}, exp_q[2] = {0};
    for (size_t i = 0; i < w.n; i++) {
        int64_t cal = unix_s + w.jobs[i].submit_us / SIM_US_PER_S + 3 * 86400;
        got_h[(cal / 3600) % 24]++;
        got_d[(cal / 86400) % 7]++;
        got_q[w.jobs[i].submit_us >= 13 * WEEK_US]++;
    }
    for (sim_time a = 0; a < end; a += HOUR_US) {
        int64_t cal = unix_s + a / SIM_US_PER_S + 3 * 86400;
        double e = synth_expected_jobs(t, a, a + HOUR_US, unix_s);
        exp_h[(cal / 3600) % 24] += e;
        exp_d[(cal / 86400) % 7] += e;
        exp_q[a >= 13 * WEEK_US] += e;
    }
    int ok = 1;
    for (int h = 0; h < 24; h++)
        ok &= poisson_ok(got_h[h], exp_h[h], 4.5);
    for (int d = 0; d < 7; d++)
        ok &= poisson_ok(got_d[d], exp_d[d], 4.5);
    for (int q = 0; q < 2; q++)
        ok &= poisson_ok(got_q[q], exp_q[q], 4.5);
    CHECK(ok);
    /* growth 0.5 per quarter: without the burst, the second 13 weeks expect
     * exactly 1.5 x the first (whole weeks: the profiles cancel) */
    struct team_spec grow = *t;
    grow.n_bursts = 0;
    CHECK_NEAR(synth_expected_jobs(&grow, 13 * WEEK_US, 26 * WEEK_US, unix_s) /
                   synth_expected_jobs(&grow, 0, 13 * WEEK_US, unix_s),
               1.5, 1e-9);
    CHECK_NEAR(got_q[1] / got_q[0], exp_q[1] / exp_q[0], 0.06);
    /* the burst week (day 35.5 to 42) has about 4 x the rate of the week before */
    double in_burst = 0, before = 0;
    for (size_t i = 0; i < w.n; i++) {
        sim_time at = w.jobs[i].submit_us;
        in_burst += at >= 5 * WEEK_US + 12 * HOUR_US && at < 6 * WEEK_US;
        before += at >= 4 * WEEK_US + 12 * HOUR_US && at < 5 * WEEK_US;
    }
    CHECK(poisson_ok(in_burst, synth_expected_jobs(t, 5 * WEEK_US + 12 * HOUR_US, 6 * WEEK_US, unix_s), 4.5));
    CHECK(in_burst > 3 * before);
    workload_release(&w);
    workload_spec_release(&s);
}

static void test_synth_limits_and_mix(void)
{
    struct workload_spec s;
    workload_spec_init(&s);
    struct team_spec *t = add_team(&s, "a", 100);
    t->limit_factor = 1.5;
    t->limit_round_s = 3600;
    struct workload w;
    CHECK_INT(gen(&s, 2 * WEEK_US, 0, 3, &w), 0);
    size_t gpus[65] = {0}, cls[JOB_CLASS_COUNT] = {0};
    int ok = 1;
    for (size_t i = 0; i < w.n; i++) {
        const struct job *j = &w.jobs[i];
        ok &= j->limit_us % HOUR_US == 0 && j->limit_us >= j->runtime_us &&
              j->limit_us - HOUR_US < (sim_time)(1.5 * (double)j->runtime_us) + 1;
        gpus[j->slots]++;
        cls[j->job_class]++;
    }
    CHECK(ok);
    double n = (double)w.n;
    CHECK_NEAR(gpus[1] / n, 0.5, 4 * sqrt(0.25 / n));
    CHECK_NEAR(gpus[64] / n, 0.2, 4 * sqrt(0.16 / n));
    CHECK_NEAR(cls[JOB_CLASS_FINETUNE] / n, 0.4, 4 * sqrt(0.24 / n));
    workload_release(&w);
    /* an empirical list is resampled: only its values come out */
    t->class_weights[JOB_CLASS_FINETUNE] = 0;
    double emp[] = {60, 600, 6000};
    t->runtime[JOB_CLASS_TRAINING].empirical_s = malloc(sizeof emp);
    memcpy(t->runtime[JOB_CLASS_TRAINING].empirical_s, emp, sizeof emp);
    t->runtime[JOB_CLASS_TRAINING].n_empirical = 3;
    CHECK_INT(gen(&s, WEEK_US, 0, 3, &w), 0);
    size_t seen[3] = {0};
    ok = 1;
    for (size_t i = 0; i < w.n; i++) {
        sim_time r = w.jobs[i].runtime_us / SIM_US_PER_S;
        ok &= r == 60 || r == 600 || r == 6000;
        seen[r == 60 ? 0 : r == 600 ? 1 : 2]++;
    }
    CHECK(ok);
    CHECK(seen[0] > w.n / 4 && seen[1] > w.n / 4 && seen[2] > w.n / 4);
    workload_release(&w);
    workload_spec_release(&s);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_synth_base_trace(void)
{
    char path[256];
    snprintf(path, sizeof path, "/tmp/fleetsim-test-synth-%ld.jsonl", (long)getpid());
    /* 3 jobs over 2 days, ids 100..102 */
    write_file(path, "{\"id\":100,\"submit_s\":3600,\"runtime_s\":60,\"gpus\":2,\"team\":\"base\",\"class\":\"inference\"}\n"
                     "{\"id\":101,\"submit_s\":7200,\"runtime_s\":30,\"limit_s\":90,\"gpus\":1,\"user\":\"u\"}\n"
                     "{\"id\":102,\"submit_s\":176400,\"runtime_s\":10,\"gpus\":4,\"team\":\"base\"}\n");
    struct workload_spec s;
    workload_spec_init(&s);
    s.base_trace = strdup(path);
    add_team(&s, "synthetic", 1);
    struct workload w;
    /* three weeks: the 2-day trace repeats every week (its span rounded up) */
    CHECK_INT(gen(&s, 3 * WEEK_US, 0, 5, &w), 0);
    size_t base = 0, synthetic = 0, kept_ids = 0;
    int64_t max_other = 0;
    for (size_t i = 0; i < w.n; i++) {
        const char *team = string_table_get(&w.teams, w.jobs[i].team);
        if (team && !strcmp(team, "synthetic")) {
            synthetic++;
        } else {
            base++;
            sim_time off = w.jobs[i].submit_us % WEEK_US;
            CHECK(off == 0 || off == 3600 * SIM_US_PER_S || off == 172800 * SIM_US_PER_S);
        }
        if (w.jobs[i].id >= 100 && w.jobs[i].id <= 102)
            kept_ids++;
        else if (w.jobs[i].id > max_other)
            max_other = w.jobs[i].id;
    }
    CHECK_INT(base, 9);
    CHECK_INT(kept_ids, 3);
    CHECK(synthetic > 300);
    CHECK_INT(max_other, 102 + (int64_t)(w.n - 3));
    CHECK_STR(string_table_get(&w.teams, 0), "synthetic"); /* the spec's teams first */
    CHECK_INT(w.jobs[0].job_class, JOB_CLASS_INFERENCE);
    workload_release(&w);
    /* growth: 100% per quarter over 26 weeks grows the base about 1.44 x on average */
    s.base_growth_per_quarter = 1.0;
    s.n_teams = 0; /* (the team's memory is still released with the spec below) */
    size_t total = 0;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        CHECK_INT(gen(&s, 26 * WEEK_US, 0, seed, &w), 0);
        total += w.n;
        workload_release(&w);
    }
    /* expected copies: sum over the 78 replayed jobs of 2^(t/13w) */
    double expect = 0;
    for (int week = 0; week < 26; week++) {
        double offs[] = {0, 3600, 172800}; /* shifted so the first job is at 0 */
        for (int k = 0; k < 3; k++)
            expect += pow(2, ((double)week * 604800 + offs[k]) / (13 * 604800.0));
    }
    CHECK(poisson_ok((double)total / 40, expect, 4.0 / sqrt(40)));
    s.n_teams = 1;
    workload_spec_release(&s);
    unlink(path);
}

static void test_synth_scenario_section(void)
{
    const char *text = "start_date: 2027-01-04\n"
                       "cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 8}\n"
                       "runtime: {default_class: finetune}\n"
                       "workload:\n"
                       "  teams:\n"
                       "    - name: vision\n"
                       "      jobs_per_hour: 12\n"
                       "      weekly: [2, 2, 2, 2, 2, 1, 1]\n"
                       "      bursts: [{start: 2027-03-01, end: 2027-03-08, multiplier: 3}, {start: 1w, end: 2w, multiplier: 0.5}]\n"
                       "      gpus: {64: 1, 1: 2, 8: 1}\n"
                       "      classes: {training: 0.5, inference: 0.5}\n"
                       "      runtime:\n"
                       "        training: {distribution: lognormal, median: 6h, sigma: 1.2}\n"
                       "        inference: {empirical: [1h, 2h, 30m]}\n"
                       "      limit_factor: 2.0\n"
                       "      limit_round: 1h\n"
                       "      growth_per_quarter: 0.3\n"
                       "      priority: 3\n"
                       "    - name: nlp\n"
                       "      jobs_per_hour: 1\n"
                       "      runtime: {finetune: 2h}\n"
                       "horizon: {length: 26w, period: month}\n"
                       "plan: {slo: 'p99_wait <= 30m'}\n"
                       "sweep: {growth: [0.1, 0.2], policy: [fcfs+easy, sjf+easy]}\n";
    struct scenario sc;
    struct diag_list d;
    struct err e;
    scenario_init(&sc);
    diag_list_init(&d, 50);
    err_clear(&e);
    int rc = scenario_load_buffer("w.yaml", text, strlen(text), &sc, &d, &e);
    if (!CHECK_INT(rc, 0))
        printf("  %s:%ld:%ld: %s\n", e.file, e.line, e.col, e.msg);
    CHECK(sc.has_workload);
    CHECK_INT(sc.workload.n_teams, 2);
    if (sc.workload.n_teams == 2) {
        const struct team_spec *t = &sc.workload.teams[0];
        CHECK_STR(t->name, "vision");
        CHECK_NEAR(t->weekly[0], 2 * 7 / 12.0, 1e-12); /* normalised to mean 1 */
        CHECK_NEAR(t->hourly[5], 1, 0);
        CHECK_INT(t->n_bursts, 2);
        CHECK_INT(t->bursts[0].start_us, 56 * 86400 * SIM_US_PER_S);
        CHECK_INT(t->bursts[1].end_us, 2 * WEEK_US);
        CHECK_INT(t->n_gpus, 3);
        CHECK_INT(t->gpus[0], 1); /* sorted by count */
        CHECK_NEAR(t->gpu_weights[0], 2, 0);
        CHECK_INT(t->gpus[2], 64);
        CHECK_NEAR(t->class_weights[JOB_CLASS_FINETUNE], 0, 0);
        CHECK_INT(t->runtime[JOB_CLASS_TRAINING].dist.kind, DIST_LOGNORMAL);
        CHECK_NEAR(t->runtime[JOB_CLASS_TRAINING].dist.a, 21600, 0);
        CHECK_INT(t->runtime[JOB_CLASS_INFERENCE].n_empirical, 3);
        CHECK_NEAR(t->limit_round_s, 3600, 0);
        CHECK_NEAR(t->growth_per_quarter, 0.3, 0);
        CHECK_INT(t->priority, 3);
        const struct team_spec *u = &sc.workload.teams[1];
        CHECK_NEAR(u->class_weights[JOB_CLASS_FINETUNE], 1, 0); /* runtime.default_class */
        CHECK_INT(u->runtime[JOB_CLASS_FINETUNE].dist.kind, DIST_FIXED);
        CHECK_INT(u->n_gpus, 1);
        CHECK_INT(u->gpus[0], 1);
        CHECK_NEAR(u->limit_factor, 1, 0);
    }
    CHECK_INT(sc.horizon.length_us, 26 * WEEK_US);
    CHECK_INT(sc.horizon.period, PERIOD_MONTH);
    CHECK_INT(sc.horizon.period_us, 365 * 86400 * SIM_US_PER_S / 12);
    CHECK_INT(sc.forecast.replications, 20);
    CHECK_STR(sc.forecast.policy, "fcfs+easy");
    CHECK(sc.plan.has_slo);
    CHECK_STR(sc.plan.slo_metric, "p99_wait");
    CHECK_NEAR(sc.plan.slo_threshold_s, 1800, 0);
    CHECK_INT(sc.plan.n_candidates, 1); /* default: the partitions' types */
    CHECK_NEAR(sc.plan.lead_time_s.a, 26 * 7 * 86400.0, 0);
    CHECK_INT(sc.sweep.n_growth, 2);
    CHECK_INT(sc.sweep.n_policies, 2);
    CHECK_STR(sc.sweep.policies[1], "sjf+easy");
    /* the loaded spec synthesizes */
    struct workload w;
    CHECK_INT(gen(&sc.workload, sc.horizon.length_us, sc.start_unix_s, sc.seed, &w), 0);
    CHECK(w.n > 1000);
    workload_release(&w);
    scenario_release(&sc);
    diag_list_release(&d);
    /* no workload section: has_workload 0 and the defaults */
    scenario_init(&sc);
    diag_list_init(&d, 50);
    text = "cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 4}\n";
    CHECK_INT(scenario_load_buffer("w.yaml", text, strlen(text), &sc, &d, &e), 0);
    CHECK(!sc.has_workload);
    CHECK_INT(sc.horizon.length_us, 52 * WEEK_US);
    CHECK_INT(sc.horizon.period, PERIOD_QUARTER);
    CHECK_INT(sc.horizon.sample_us, 86400 * SIM_US_PER_S);
    CHECK_INT(sc.plan.max_nodes, 1024);
    CHECK_NEAR(sc.plan.burn_in_s, 7 * 86400.0, 0);
    CHECK(!sc.plan.has_slo);
    scenario_release(&sc);
    diag_list_release(&d);
}

void suite_synth(void)
{
    test_run("synth deterministic", test_synth_deterministic);
    test_run("synth teams independent", test_synth_teams_independent);
    test_run("synth rate with profiles, bursts, growth", test_synth_rate_profiles_growth);
    test_run("synth limits and job mix", test_synth_limits_and_mix);
    test_run("synth base trace", test_synth_base_trace);
    test_run("synth scenario workload section", test_synth_scenario_section);
}
