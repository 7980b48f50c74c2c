/* Tests of traces/fit.c: a round trip (synthesize from known distributions,
 * fit, find the true parameters inside the confidence intervals), the KS
 * statistic on known cases, and a real shared trace whose fitted section a
 * scenario accepts.
 *
 * The intervals are the fit's own (traces/fit.h: asymptotic normal, Poisson
 * for the rate, the MLE's Fisher information for the Weibull, the normal
 * theory for the log-normal), here at z = 3.29 (99.9%): about a dozen
 * parameters are checked, so 95% intervals would miss one in two runs by
 * design. The seed is fixed, so the outcome is too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenarios/scenario.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"
#include "traces/fit.h"
#include "traces/synth.h"
#include "traces/trace.h"

#define WEEK_US (7 * 86400 * SIM_US_PER_S)

static int within(const char *what, const struct fit_param *p, double truth)
{
    int ok = truth >= p->lo && truth <= p->hi;
    if (!ok)
        printf("  %s: true %.6g outside [%.6g, %.6g] (estimate %.6g)\n", what, truth, p->lo, p->hi, p->value);
    return ok;
}

/* A binomial share within z standard errors. */
static int share_ok(const char *what, double got, double p, double n, double z)
{
    int ok = fabs(got - p) <= z * sqrt(p * (1 - p) / n);
    if (!ok)
        printf("  %s: %.4f, true %.4f\n", what, got, p);
    return ok;
}

static void test_fit_round_trip(void)
{
    struct workload_spec s;
    workload_spec_init(&s);
    struct team_spec *t = workload_spec_add_team(&s);
    snprintf(t->name, sizeof t->name, "vision");
    t->jobs_per_hour = 10;
    double weekly[7] = {1.3, 1.3, 1.3, 1.3, 1.3, 0.25, 0.25};
    memcpy(t->weekly, weekly, sizeof weekly);
    t->n_gpus = 3;
    t->gpus = malloc(3 * sizeof *t->gpus);
    t->gpu_weights = malloc(3 * sizeof *t->gpu_weights);
    t->gpus[0] = 1, t->gpus[1] = 8, t->gpus[2] = 64;
    t->gpu_weights[0] = 0.5, t->gpu_weights[1] = 0.3, t->gpu_weights[2] = 0.2;
    t->class_weights[JOB_CLASS_TRAINING] = 0.6;
    t->class_weights[JOB_CLASS_FINETUNE] = 0.4;
    t->runtime[JOB_CLASS_TRAINING].dist = (struct distribution){DIST_LOGNORMAL, 6 * 3600.0, 1.2};
    t->runtime[JOB_CLASS_FINETUNE].dist = (struct distribution){DIST_WEIBULL, 0.8, 7200.0};
    t->limit_factor = 2;
    /* 12 weeks at 10 jobs/h: about 20,000 jobs */
    struct workload w;
    struct err e;
    err_clear(&e);
    workload_init(&w);
    CHECK_INT(synth_generate(&s, 0, 12 * WEEK_US, 0, 2027, &w, &e), 0);
    CHECK(w.n > 19000 && w.n < 21500);
    struct fit_options o;
    fit_options_init(&o);
    o.z = 3.29;
    struct fit_result r;
    CHECK_INT(fit_workload(&w, &o, &r, &e), 0);
    CHECK_INT(r.spec.n_teams, 1);
    if (r.spec.n_teams == 1) {
        const struct fit_group *g = &r.groups[0];
        const struct team_spec *f = &r.spec.teams[0];
        double n = (double)g->jobs;
        CHECK_STR(f->name, "vision");
        CHECK(within("jobs_per_hour", &g->jobs_per_hour, 10));
        const struct fit_runtime *tr = &g->runtime[JOB_CLASS_TRAINING], *ft = &g->runtime[JOB_CLASS_FINETUNE];
        CHECK(within("training median", &tr->ln_median_s, 21600));
        CHECK(within("training sigma", &tr->ln_sigma, 1.2));
        CHECK_INT(tr->chosen, DIST_LOGNORMAL);
        CHECK(within("finetune shape", &ft->wb_shape, 0.8));
        CHECK(within("finetune scale", &ft->wb_scale_s, 7200));
        CHECK_INT(ft->chosen, DIST_WEIBULL);
        /* the right family fits well, the wrong one visibly worse */
        CHECK(tr->ks_lognormal < 0.02 && tr->ks_weibull > 2 * tr->ks_lognormal);
        CHECK(ft->ks_weibull < 0.02 && ft->ks_lognormal > 2 * ft->ks_weibull);
        CHECK(share_ok("training share", f->class_weights[JOB_CLASS_TRAINING], 0.6, n, o.z));
        CHECK_INT(f->n_gpus, 3);
        CHECK(share_ok("1 GPU", f->gpu_weights[0], 0.5, n, o.z));
        CHECK(share_ok("64 GPUs", f->gpu_weights[2], 0.2, n, o.z));
        CHECK_NEAR(f->limit_factor, 2, 1e-6);
        CHECK_NEAR(f->limit_round_s, 0, 0);
        /* a Poisson process with the fitted profile: rescaled gaps are Exp(1) */
        CHECK(g->ks_interarrival >= 0 && g->ks_interarrival < 0.02);
        CHECK(g->weekly_fitted && g->hourly_fitted);
        for (int d = 0; d < 7; d++)
            CHECK_NEAR(f->weekly[d], weekly[d] * 7 / 7.0, 0.1 * weekly[d]);
        for (int h = 0; h < 24; h++)
            CHECK_NEAR(f->hourly[h], 1, 0.2); /* flat, within noise of ~800 jobs per bin */
    }
    /* the written section loads and synthesizes again */
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    fputs("cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 8}\n", mem);
    CHECK_INT(fit_write_yaml(mem, &r, "synthetic"), 0);
    fclose(mem);
    struct scenario sc;
    struct diag_list d;
    scenario_init(&sc);
    diag_list_init(&d, 20);
    int rc = scenario_load_buffer("fitted.yaml", buf, len, &sc, &d, &e);
    if (!CHECK_INT(rc, 0))
        printf("  %s:%ld:%ld: %s\n%s", e.file, e.line, e.col, e.msg, buf);
    CHECK_INT(sc.workload.n_teams, 1);
    if (sc.workload.n_teams == 1) {
        CHECK_NEAR(sc.workload.teams[0].runtime[JOB_CLASS_FINETUNE].dist.a, r.groups[0].runtime[1].wb_shape.value,
                   1e-5 * r.groups[0].runtime[1].wb_shape.value);
        CHECK_NEAR(sc.workload.teams[0].jobs_per_hour, r.spec.teams[0].jobs_per_hour, 1e-5);
    }
    scenario_release(&sc);
    diag_list_release(&d);
    free(buf);
    fit_result_release(&r);
    workload_release(&w);
    workload_spec_release(&s);
}

static void test_fit_ks_and_small_groups(void)
{
    /* KS of a sample against itself is 1/n at most; against a far one near 1 */
    double x[100];
    for (int i = 0; i < 100; i++)
        x[i] = -log(1 - (i + 0.5) / 100) * 50; /* exponential quantiles, mean 50 */
    struct distribution right = {DIST_EXPONENTIAL, 50, 0}, wrong = {DIST_EXPONENTIAL, 5000, 0};
    CHECK(fit_ks(x, 100, &right) <= 0.0051);
    CHECK(fit_ks(x, 100, &wrong) > 0.9);
    /* a class with few runtimes is kept as an empirical list; groups under
     * min_jobs merge into "other" */
    struct workload w;
    workload_init(&w);
    const char *teams[] = {"big", "tiny1", "tiny2"};
    for (int i = 0; i < 3; i++)
        string_table_intern(&w.teams, teams[i]);
    for (int i = 0; i < 300; i++) {
        struct job j = {.id = i + 1, .submit_us = (sim_time)i * 600 * SIM_US_PER_S, .runtime_us = (60 + i) * SIM_US_PER_S,
                        .limit_us = 3600 * SIM_US_PER_S, .slots = i % 3 == 0 ? 4 : 1, .user = -1,
                        .team = i < 280 ? 0 : i < 290 ? 1 : 2, .status = 1, .job_class = i % 50 == 0 ? 2 : -1};
        workload_push(&w, &j);
    }
    struct fit_options o;
    fit_options_init(&o);
    o.min_jobs = 50;
    struct fit_result r;
    struct err e;
    err_clear(&e);
    CHECK_INT(fit_workload(&w, &o, &r, &e), 0);
    CHECK_INT(r.spec.n_teams, 2);
    if (r.spec.n_teams == 2) {
        CHECK_STR(r.groups[0].name, "big");
        CHECK_STR(r.groups[1].name, "other");
        CHECK_INT(r.groups[1].jobs, 20);
        const struct team_spec *t = &r.spec.teams[0];
        CHECK(!r.groups[0].runtime[JOB_CLASS_INFERENCE].parametric);
        CHECK_INT(t->runtime[JOB_CLASS_INFERENCE].n_empirical, 6);
        CHECK_NEAR(t->limit_round_s, 3600, 0);
        CHECK_INT(t->n_gpus, 2);
    }
    fit_result_release(&r);
    o.by = FIT_BY_NONE;
    CHECK_INT(fit_workload(&w, &o, &r, &e), 0);
    CHECK_INT(r.spec.n_teams, 1);
    CHECK_STR(r.groups[0].name, "all");
    fit_result_release(&r);
    workload_release(&w);
}

static void test_fit_real_trace(void)
{
    const char *path = test_shared_trace("KTH-SP2-1996-2.1-cln.swf.gz");
    if (!path)
        path = test_shared_trace("HPC2N-2002-2.2-cln.swf.gz");
    if (!path) {
        test_skip("no KTH-SP2 or HPC2N trace in ../shared/traces (set FLEETSIM_SHARED_TRACES)");
        return;
    }
    struct workload w;
    struct diag_list d;
    struct err e;
    workload_init(&w);
    diag_list_init(&d, 100);
    err_clear(&e);
    CHECK_INT(trace_read(path, TRACE_AUTO, SWF_REPLAY, &w, &d, &e), 0);
    struct fit_options o;
    fit_options_init(&o);
    struct fit_result r;
    CHECK_INT(fit_workload(&w, &o, &r, &e), 0);
    CHECK(r.spec.n_teams >= 2);
    int ok = 1;
    size_t fits = 0;
    for (size_t i = 0; i < r.spec.n_teams; i++) {
        const struct fit_group *g = &r.groups[i];
        ok &= g->ks_interarrival >= 0 && g->ks_interarrival <= 1;
        for (int k = 0; k < JOB_CLASS_COUNT; k++) {
            const struct fit_runtime *f = &g->runtime[k];
            if (!f->parametric)
                continue;
            fits++;
            ok &= f->ks_lognormal >= 0 && f->ks_lognormal <= 1 && f->ks_weibull >= 0 && f->ks_weibull <= 1;
            ok &= f->ln_sigma.value > 0 && f->wb_shape.value > 0 && f->wb_scale_s.value > 0;
        }
    }
    CHECK(ok);
    CHECK(fits >= 2);
    printf("  %s: %zu groups, first: KS inter-arrival %.3f, runtime lognormal %.3f, weibull %.3f\n", path,
           r.spec.n_teams, r.groups[0].ks_interarrival, r.groups[0].runtime[0].ks_lognormal,
           r.groups[0].runtime[0].ks_weibull);
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    fputs("cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 16}\n", mem);
    CHECK_INT(fit_write_yaml(mem, &r, path), 0);
    fclose(mem);
    struct scenario sc;
    struct diag_list d2;
    scenario_init(&sc);
    diag_list_init(&d2, 20);
    int rc = scenario_load_buffer("kth-fitted.yaml", buf, len, &sc, &d2, &e);
    if (!CHECK_INT(rc, 0))
        printf("  %s:%ld:%ld: %s\n", e.file, e.line, e.col, e.msg);
    CHECK_INT(sc.workload.n_teams, r.spec.n_teams);
    scenario_release(&sc);
    diag_list_release(&d2);
    free(buf);
    fit_result_release(&r);
    workload_release(&w);
    diag_list_release(&d);
}

void suite_fit(void)
{
    test_run("fit round trip", test_fit_round_trip);
    test_run("fit ks and small groups", test_fit_ks_and_small_groups);
    test_run("fit real trace", test_fit_real_trace);
}
