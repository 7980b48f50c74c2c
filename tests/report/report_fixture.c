/* report_fixture: fills a forecast_result with known synthetic numbers and
 * writes its report, for tests/report/run.sh.
 *
 *   report_fixture [--no-plan] [--unmet] [--partial] [--no-dates] [--short-last] [--no-slo] DIR
 *   report_fixture --self-test
 *
 * Prints one line, "gnuplot_missing=N charts_written=N charts_failed=N
 * error=...", and exits 0; 2 if the report could not be written. The numbers
 * (see fill_result) are chosen so the tests can check them: with 5
 * replications, period p's utilization mean is 0.52 + 0.1 p, capacity is
 * 2048 GPUs in Q1-Q3 and 2560 in Q4, peak demand passes capacity in Q3.
 * One team is named `a_b^c "quoted" <tag>`, another has a quote, a comma,
 * backquotes and a macro sign, to check escaping everywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/csv.h"
#include "report/forecast_report.h"
#include "report/gnuplot.h"
#include "report/html.h"
#include "scenarios/forecast.h"
#include "scenarios/scenario.h"
#include "sim/units.h"

#define HOSTILE_TEAM "a_b^c \"quoted\" <tag>"
/* gnuplot runs `commands` in backquotes inside double-quoted strings */
#define THIRD_TEAM "gamma's, `touch PWNED` @x team"
enum { REPS = 5, PERIODS = 4, TEAMS = 3, WAITS_PER_TEAM = 40 };
static const sim_time day_us = 86400 * SIM_US_PER_S;

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fputs("report_fixture: out of memory\n", stderr);
        exit(2);
    }
    return p;
}

static void fill_scenario(struct scenario *s, int dates)
{
    s->path = strdup("examples/fixture \"<quarterly>\".yaml");
    s->seed = 42;
    if (dates)
        units_parse_date("2027-01-01", &s->start_unix_s);
    struct node_type t = {0};
    snprintf(t.name, sizeof t.name, "H100-SXM");
    t.gpus = 8;
    t.price_usd = 250000;
    int k = node_catalog_put(&s->catalog, &t);
    s->partitions = xcalloc(1, sizeof *s->partitions);
    s->n_partitions = 1;
    snprintf(s->partitions[0].name, sizeof s->partitions[0].name, "main");
    s->partitions[0].type = k;
    s->partitions[0].nodes = 256;
    /* an order already placed: 64 nodes on day 10, 26 weeks + 7 days later in service */
    struct purchase_order o = {.order_us = 10 * day_us, .type = k, .count = 64,
                               .lead_time_s = {DIST_FIXED, 26 * 7 * 86400.0, 0}, .burn_in_s = 7 * 86400.0};
    procurement_add_order(&s->procurement, &o);
    s->plan.has_slo = 1;
    snprintf(s->plan.slo_metric, sizeof s->plan.slo_metric, "p95_wait");
    s->plan.slo_threshold_s = 7200;
    s->plan.confidence = 0.8;
}

static void fill_result(struct forecast_result *r, const struct scenario *s, int partial)
{
    memset(r, 0, sizeof *r);
    r->scenario = s;
    r->replications = REPS;
    r->completed = partial ? 3 : REPS;
    r->partial = partial;
    r->start_us = 0;
    r->period_us = 91 * day_us;
    r->sample_us = 7 * day_us;
    r->n_periods = PERIODS;
    r->horizon_us = (sim_time)PERIODS * r->period_us;
    r->n_samples = PERIODS * 13 + 1;
    snprintf(r->period_name, sizeof r->period_name, "quarter");
    r->n_teams = TEAMS;
    r->team_names = xcalloc(TEAMS, sizeof *r->team_names);
    r->team_names[0] = strdup("alpha");
    r->team_names[1] = strdup(HOSTILE_TEAM);
    r->team_names[2] = strdup(THIRD_TEAM);
    r->reps = xcalloc(REPS, sizeof *r->reps);
    r->band_scratch = xcalloc(REPS, sizeof *r->band_scratch); /* as forecast_result_init makes it */
    for (uint32_t i = 0; i < r->completed; i++) {
        struct forecast_replication *rep = &r->reps[i];
        rep->periods = xcalloc(PERIODS, sizeof *rep->periods);
        for (uint32_t p = 0; p < PERIODS; p++) {
            struct forecast_period *fp = &rep->periods[p];
            fp->utilization = 0.5 + 0.1 * p + 0.01 * i;
            fp->wait_p50_s = 600.0 * (p + 1) + 10 * i;
            fp->wait_p95_s = 3600.0 * (p + 1) + 60 * i; /* Q1 meets 2h; Q2 does in 4 of 5 reps */
            fp->wait_p99_s = 7200.0 * (p + 1) + 60 * i;
            fp->wait_mean_s = 900.0 * (p + 1);
            fp->offered_load_gpus = 1800 + 150.0 * p + 10 * i;
            fp->offered_peak_gpus = 1.6 * fp->offered_load_gpus;
            fp->backlog_gpus = 50.0 * p + i;
            fp->capacity_gpus = p < 3 ? 2048 : 2560;
            fp->lost_gpu_hours = 100.0 * (p + 1) + i;
            fp->failures = 3 + p + (i % 2);
            fp->jobs_submitted = 1000 + 100 * p;
            fp->jobs_started = 990 + 100 * p;
            fp->team_gpu_hours = xcalloc(TEAMS, sizeof *fp->team_gpu_hours);
            for (size_t t = 0; t < TEAMS; t++)
                fp->team_gpu_hours[t] = 1000.0 * (t + 1) + 100.0 * p + i;
        }
        rep->samples = xcalloc(r->n_samples, sizeof *rep->samples);
        for (uint32_t k = 0; k < r->n_samples; k++) {
            struct forecast_sample *fs = &rep->samples[k];
            fs->capacity_gpus = k < 3 * 13 ? 2048 : 2560;
            fs->offered_gpus = 1600 + 12.0 * k + 15 * i;
            fs->in_use_gpus = fs->offered_gpus < fs->capacity_gpus ? fs->offered_gpus : fs->capacity_gpus;
            fs->backlog_gpus = fs->offered_gpus - fs->in_use_gpus;
            fs->queue_jobs = 5 + 0.5 * k + i;
        }
        rep->team_n_waits = xcalloc(TEAMS, sizeof *rep->team_n_waits);
        rep->team_offset = xcalloc(TEAMS, sizeof *rep->team_offset);
        rep->team_waits_s = xcalloc(TEAMS * WAITS_PER_TEAM, sizeof *rep->team_waits_s);
        for (size_t t = 0; t < TEAMS; t++) {
            rep->team_offset[t] = t * WAITS_PER_TEAM;
            rep->team_n_waits[t] = WAITS_PER_TEAM;
            for (size_t j = 0; j < WAITS_PER_TEAM; j++)
                rep->team_waits_s[t * WAITS_PER_TEAM + j] = 60.0 * (t + 1) * j + i;
        }
    }
}

static int failures;

static void expect_output(const char *what, void (*fn)(FILE *, const char *), const char *in, const char *want)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    fn(fp, in);
    fclose(fp);
    if (strcmp(buf, want) != 0) {
        printf("FAIL %s(%s): got [%s], want [%s]\n", what, in, buf, want);
        failures++;
    }
    free(buf);
}

static int self_test(void)
{
    expect_output("csv_write_field", csv_write_field, "plain", "plain");
    expect_output("csv_write_field", csv_write_field, "a,b", "\"a,b\"");
    expect_output("csv_write_field", csv_write_field, HOSTILE_TEAM, "\"a_b^c \"\"quoted\"\" <tag>\"");
    expect_output("csv_write_field", csv_write_field, "two\nlines", "\"two\nlines\"");
    expect_output("csv_write_field", csv_write_field, " lead", "\" lead\"");
    expect_output("html_write_text", html_write_text, HOSTILE_TEAM "&'", "a_b^c &quot;quoted&quot; &lt;tag&gt;&amp;&#39;");
    expect_output("gnuplot_write_string", gnuplot_write_string, "it's \\n \"x\"", "'it''s \\n \"x\"'");
    expect_output("gnuplot_write_string", gnuplot_write_string, "new\nline", "'new line'");
    char buf[CSV_NUMBER_MAX];
    csv_format_number(buf, sizeof buf, -0.0, "");
    if (strcmp(buf, "0") != 0) {
        printf("FAIL csv_format_number(-0) = %s\n", buf);
        failures++;
    }
    csv_format_number(buf, sizeof buf, 0.0 / 0.0, "NaN");
    if (strcmp(buf, "NaN") != 0) {
        printf("FAIL csv_format_number(nan) = %s\n", buf);
        failures++;
    }
    printf("self-test: %d failed\n", failures);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    int plan_mode = 1, partial = 0, dates = 1, short_last = 0, no_slo = 0;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--self-test") == 0)
            return self_test();
        else if (strcmp(argv[i], "--no-plan") == 0)
            plan_mode = 0;
        else if (strcmp(argv[i], "--unmet") == 0)
            plan_mode = 2;
        else if (strcmp(argv[i], "--partial") == 0)
            partial = 1;
        else if (strcmp(argv[i], "--no-slo") == 0)
            no_slo = 1;
        else if (strcmp(argv[i], "--short-last") == 0)
            short_last = 1;
        else if (strcmp(argv[i], "--no-dates") == 0)
            dates = 0;
        else if (argv[i][0] != '-' && !dir)
            dir = argv[i];
        else {
            fprintf(stderr, "usage: report_fixture [--no-plan] [--unmet] [--partial] [--no-dates] [--short-last] [--no-slo] DIR\n");
            return 2;
        }
    }
    if (!dir) {
        fprintf(stderr, "usage: report_fixture [--no-plan] [--unmet] [--partial] [--no-dates] [--short-last] [--no-slo] DIR\n");
        return 2;
    }
    struct scenario s;
    scenario_init(&s);
    fill_scenario(&s, dates);
    if (no_slo)
        s.plan.has_slo = 0;
    struct forecast_result r;
    fill_result(&r, &s, partial);
    if (short_last) { /* the horizon ends 30 days into Q4 */
        r.horizon_us = 3 * r.period_us + 30 * day_us;
        r.last_period_partial = 1;
    }
    struct plan_order order = {.date_us = 31 * day_us, .ready_us = (31 + 26 * 7 + 7) * day_us, .count = 32,
                               .gpus = 0, .cost_usd = 32 * 250000.0};
    snprintf(order.node_type, sizeof order.node_type, "H100-SXM");
    struct plan_summary plan = {.orders = &order, .n_orders = 1, .total_cost_usd = order.cost_usd, .met = 1,
                                .slo = "p95_wait <= 2h"};
    if (plan_mode == 2) {
        plan.n_orders = 0;
        plan.total_cost_usd = 0;
        plan.met = 0;
        plan.reason = "the lead time (26w + 7d burn-in) ends after the last quarter in which the SLO is missed";
    }
    struct report_status st;
    struct err err;
    err_clear(&err);
    int rc = forecast_report_write(dir, &r, plan_mode ? &plan : NULL, &st, &err);
    printf("gnuplot_missing=%d charts_written=%d charts_failed=%d error=%s\n", st.gnuplot_missing,
           st.charts_written, st.charts_failed, st.first_gnuplot_error);
    if (rc) {
        char msg[1024];
        err_format(&err, msg, sizeof msg);
        fprintf(stderr, "report_fixture: %s\n", msg);
    }
    forecast_result_release(&r);
    scenario_release(&s);
    return rc ? 2 : 0;
}
