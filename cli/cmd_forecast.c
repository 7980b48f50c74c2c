/* fleetsim forecast|plan|compare: the capacity planner's commands. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/forecast_runner.h"
#include "report/forecast_digest.h"
#include "report/forecast_report.h"
#include "scenarios/forecast.h"
#include "scenarios/plan.h"
#include "scenarios/scenario.h"
#include "sim/atomic_file.h"
#include "sim/units.h"

enum { CLI_INTERRUPTED = 130 };

struct planner_args {
    const char *report_dir;
    const char *slo;
    const char *policy;
    double confidence;
    int64_t replications; /* -1: the scenario's */
    int64_t jobs;
    int json, quiet;
    char **files;
    int n_files;
};

static const char forecast_usage[] =
    "usage: fleetsim forecast [options] SCENARIO\n"
    "\n"
    "Runs the scenario's Monte Carlo replications over its horizon (parallel worker\n"
    "processes) and reports, per period: utilization, queue-wait p50/p95/p99, the\n"
    "offered load (GPU-hours submitted per hour, and its peak with unlimited capacity),\n"
    "the backlog (GPUs queued), capacity, GPU-hours per team and failure losses, each\n"
    "with its spread across replications (mean and\n"
    "5th-95th percentiles). The scenario needs workload and horizon sections\n"
    "('fleetsim help scenario').\n"
    "\n"
    "options:\n"
    "  -r, --replications N   override forecast.replications\n"
    "  -j, --jobs N           worker processes (default: the number of cores)\n"
    "      --policy SPEC      override forecast.policy\n"
    "      --report DIR       write index.html with charts, CSV and JSON into DIR\n"
    "      --json             print the forecast as JSON on stdout\n"
    "  -q, --quiet            no progress or warnings\n"
    "  -h, --help             this help\n"
    "\n"
    "Results depend only on the scenario and its seed, never on -j. Ctrl-C stops\n"
    "cleanly: what finished is reported and marked partial (exit 130).\n"
    "exit codes: 0 ok, 2 usage or bad scenario, 3 I/O error, 4 internal error, 130 interrupted\n";

static const char plan_usage[] =
    "usage: fleetsim plan [options] SCENARIO\n"
    "\n"
    "Finds the cheapest purchase orders (node type, count, order date) that keep the\n"
    "SLO in every period of the horizon in at least the requested share of the\n"
    "replications, under the scenario's lead times and burn-in, and prints them as\n"
    "dated orders with their cost and the resulting forecast. Says which periods no\n"
    "plan can save (a lead time longer than the time left to them).\n"
    "\n"
    "options:\n"
    "      --slo 'METRIC <= DURATION'   e.g. 'p95_wait <= 2h' (METRIC: p50_wait, p95_wait,\n"
    "                                   p99_wait); default: the scenario's plan.slo\n"
    "      --confidence C     share of replications that must meet it (default 0.9)\n"
    "  -r, --replications N   -j, --jobs N   --policy SPEC   --report DIR   --json   -q\n"
    "                         as for 'fleetsim forecast'\n"
    "\n"
    "exit codes: 0 a plan meets the SLO, 1 no plan can (the best effort is printed),\n"
    "2 usage or bad scenario, 130 interrupted\n";

static const char compare_usage[] =
    "usage: fleetsim compare [options] SCENARIO...\n"
    "\n"
    "Forecasts each scenario (and, within one, each value of its sweep section:\n"
    "growth rates x policies) and prints them side by side, period by period.\n"
    "\n"
    "options: -r N, -j N, --report DIR (overlaid charts and CSV), --json, -q\n"
    "exit codes: 0 ok, 2 usage or bad scenario, 130 interrupted\n";

static int parse_planner_args(const char *cmd, const char *usage, int argc, char **argv, struct planner_args *a)
{
    enum { OPT_REPORT = 256, OPT_SLO, OPT_CONF, OPT_POLICY, OPT_JSON };
    static const struct option options[] = {
        {"replications", required_argument, NULL, 'r'}, {"jobs", required_argument, NULL, 'j'},
        {"report", required_argument, NULL, OPT_REPORT}, {"slo", required_argument, NULL, OPT_SLO},
        {"confidence", required_argument, NULL, OPT_CONF}, {"policy", required_argument, NULL, OPT_POLICY},
        {"json", no_argument, NULL, OPT_JSON}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->replications = -1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    a->jobs = cores > 0 ? cores : 1;
    a->confidence = -1;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":r:j:qh", options, NULL)) != -1) {
        switch (c) {
        case 'r':
            if (cli_parse_int("--replications", optarg, 1, 100000, &a->replications) != 0)
                return CLI_USAGE;
            break;
        case 'j':
            if (cli_parse_int("--jobs", optarg, 1, 1024, &a->jobs) != 0)
                return CLI_USAGE;
            break;
        case OPT_REPORT:
            a->report_dir = optarg;
            break;
        case OPT_SLO:
            a->slo = optarg;
            break;
        case OPT_CONF: {
            char *end;
            a->confidence = strtod(optarg, &end);
            if (*end || !(a->confidence > 0 && a->confidence <= 1))
                return cli_usage_error(cmd, "--confidence needs a number in (0, 1], not '%s'", optarg);
            break;
        }
        case OPT_POLICY:
            a->policy = optarg;
            break;
        case OPT_JSON:
            a->json = 1;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            exit(CLI_OK);
        case ':':
            return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    a->files = argv + optind;
    a->n_files = argc - optind;
    if (a->n_files < 1)
        return cli_usage_error(cmd, "no scenario given");
    if (strcmp(cmd, "compare") != 0 && a->n_files > 1)
        return cli_usage_error(cmd, "one scenario at a time (use 'fleetsim compare' for several)");
    return CLI_OK;
}

static int load_planner_scenario(const char *path, int quiet, struct scenario *s)
{
    struct diag_list diags;
    struct err err;
    diag_list_init(&diags, 100);
    err_clear(&err);
    scenario_init(s);
    int rc = cli_finish_load(scenario_load(path, s, &diags, &err), &diags, &err, quiet);
    if (rc != CLI_OK)
        return rc;
    if (!s->has_workload) {
        cli_error("'%s' has no workload section: a forecast needs one ('fleetsim help scenario')", path);
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The terminal's summary: one line per period. Demand is the offered load
 * (what the workload asks for, with unlimited capacity), kept apart from
 * the backlog (GPUs queued), which is the cluster's answer to it. */
static void print_forecast_table(FILE *out, const struct forecast_result *r)
{
    if (!r->completed) { /* interrupted before any finished: no numbers, not zeros */
        fprintf(out, "(0 of %u replications finished: nothing to report)\n", r->replications);
        return;
    }
    fprintf(out, "%-8s %18s %28s %18s %8s %9s %10s\n", r->period_name, "utilization", "wait p95 [p5-p95]",
            "offered mean/peak", "backlog", "capacity", "lost GPU-h");
    double too_big = 0;
    for (uint32_t p = 0; p < r->n_periods; p++) {
        struct forecast_band u = forecast_band_of(r, p, FM_UTILIZATION);
        struct forecast_band w = forecast_band_of(r, p, FM_WAIT_P95);
        struct forecast_band o = forecast_band_of(r, p, FM_OFFERED_LOAD);
        struct forecast_band op = forecast_band_of(r, p, FM_OFFERED_PEAK);
        struct forecast_band b = forecast_band_of(r, p, FM_BACKLOG);
        struct forecast_band c = forecast_band_of(r, p, FM_CAPACITY);
        struct forecast_band l = forecast_band_of(r, p, FM_LOST_GPU_HOURS);
        too_big += forecast_band_of(r, p, FM_JOBS_TOO_BIG).mean;
        char wm[24], w5[24], w95[24], util[40], wait[80], offered[40], label[16];
        forecast_digest_format_wait(wm, sizeof wm, w.mean);
        forecast_digest_format_wait(w5, sizeof w5, w.p5);
        forecast_digest_format_wait(w95, sizeof w95, w.p95);
        snprintf(util, sizeof util, "%.3f [%.3f-%.3f]", u.mean, u.p5, u.p95);
        snprintf(wait, sizeof wait, "%s [%s-%s]", wm, w5, w95);
        snprintf(offered, sizeof offered, "%.0f / %.0f", o.mean, op.mean);
        int cut = r->last_period_partial && p + 1 == r->n_periods;
        snprintf(label, sizeof label, "%u%s", p + 1, cut ? "*" : "");
        fprintf(out, "%-8s %18s %28s %18s %8.0f %9.0f %10.0f\n", label, util, wait, offered, b.mean, c.mean, l.mean);
    }
    fprintf(out, "(%u of %u replications%s; GPUs, means over replications; offered: GPU-hours submitted per hour "
                 "and its peak with unlimited capacity; backlog: most GPUs queued at once; waits of jobs submitted "
                 "in the period, unstarted ones counted to the horizon's end)\n",
            r->completed, r->replications, r->partial ? ", PARTIAL" : "");
    if (r->last_period_partial) {
        char len[32];
        forecast_digest_format_wait(len, sizeof len, (double)forecast_period_length_us(r, r->n_periods - 1) / 1e6);
        fprintf(out, "(* the horizon ends %s into %s %u: a partial %s)\n", len, r->period_name, r->n_periods,
                r->period_name);
    }
    if (too_big > 0)
        fprintf(out, "(%.0f jobs per replication ask for more GPUs than the whole cluster and never start)\n", too_big);
}

static json_t *forecast_json(const struct forecast_result *r)
{
    json_t *periods = json_array();
    for (uint32_t p = 0; p < r->n_periods; p++) {
        json_t *o = json_object();
        json_object_set_new(o, "period", json_integer(p + 1));
        json_object_set_new(o, "length_s", json_real((double)forecast_period_length_us(r, p) / 1e6));
        json_object_set_new(o, "partial", json_boolean(r->last_period_partial && p + 1 == r->n_periods));
        for (int m = 0; m < FM_COUNT; m++) {
            struct forecast_band b = forecast_band_of(r, p, (enum forecast_metric)m);
            json_object_set_new(o, forecast_metric_name((enum forecast_metric)m),
                                json_pack("{s:f, s:f, s:f, s:f, s:[f, f]}", "mean", b.mean, "p5", b.p5, "p50",
                                          b.p50, "p95", b.p95, "ci95", b.ci95_lo, b.ci95_hi));
        }
        json_t *teams = json_object();
        for (size_t t = 0; t < r->n_teams; t++)
            json_object_set_new(teams, r->team_names[t], json_real(forecast_band_team(r, p, t).mean));
        json_object_set_new(o, "team_gpu_hours_mean", teams);
        json_array_append_new(periods, o);
    }
    return json_pack("{s:{s:s, s:s}, s:s, s:I, s:I, s:b, s:s, s:o}", "meta", "tool", "fleetsim", "version",
                     FLEETSIM_VERSION_STRING, "scenario", r->scenario->path ? r->scenario->path : "",
                     "replications", (json_int_t)r->replications, "completed", (json_int_t)r->completed, "partial",
                     r->partial, "period", r->period_name, "periods", periods);
}

static int print_json(json_t *root)
{
    int rc = root ? json_dumpf(root, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10)) : -1;
    putchar('\n');
    json_decref(root);
    return rc == 0 ? CLI_OK : CLI_IO;
}

static int write_report(const char *dir, const struct forecast_result *r, const struct plan_summary *plan, int quiet)
{
    struct report_status st;
    struct err err;
    err_clear(&err);
    memset(&st, 0, sizeof st);
    if (forecast_report_write(dir, r, plan, &st, &err) != 0) {
        cli_print_err(&err);
        return CLI_IO;
    }
    if (!quiet && st.gnuplot_missing)
        cli_warning("gnuplot not found: wrote the data, scripts and an HTML report with tables but no charts "
                    "(apt-get install gnuplot-nox)");
    if (!quiet && st.charts_failed)
        cli_warning("%d charts failed to render: %s", st.charts_failed, st.first_gnuplot_error);
    if (!quiet)
        fprintf(stderr, "fleetsim: report written to %s/index.html\n", dir);
    return CLI_OK;
}

static struct forecast_run_options run_options(const struct planner_args *a, const struct scenario *s, const char *label)
{
    struct forecast_run_options o = {a->replications > 0 ? (uint32_t)a->replications : s->forecast.replications,
                                     (int)a->jobs, a->policy, label, a->quiet};
    return o;
}

int cmd_forecast(int argc, char **argv)
{
    struct planner_args a;
    int rc = parse_planner_args("forecast", forecast_usage, argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    struct scenario s;
    if ((rc = load_planner_scenario(a.files[0], a.quiet, &s)) != CLI_OK) {
        scenario_release(&s);
        return rc;
    }
    struct forecast_result r;
    struct forecast_run_options o = run_options(&a, &s, "forecast");
    int run = forecast_runner_run(&s, &o, &r);
    if (run < 0) {
        rc = CLI_INTERNAL;
    } else {
        if (a.json)
            rc = print_json(forecast_json(&r));
        else
            print_forecast_table(stdout, &r);
        if (rc == CLI_OK && a.report_dir)
            rc = write_report(a.report_dir, &r, NULL, a.quiet);
        if (rc == CLI_OK && run == 1)
            rc = CLI_INTERRUPTED;
    }
    forecast_result_release(&r);
    scenario_release(&s);
    return rc;
}

/* ---- plan ---- */

struct plan_ctx {
    const struct planner_args *a;
    uint32_t replications;
};

/* Forecasts s up to the end of period until_period, quietly. */
static int plan_evaluate(void *vctx, const struct scenario *s, uint32_t until_period, struct forecast_result *r)
{
    struct plan_ctx *ctx = vctx;
    struct scenario trimmed = *s; /* shallow: only the horizon differs */
    sim_time end = (sim_time)(until_period + 1) * s->horizon.period_us;
    if (end < trimmed.horizon.length_us)
        trimmed.horizon.length_us = end;
    struct forecast_run_options o = {ctx->replications, (int)ctx->a->jobs, ctx->a->policy, "plan", 1};
    int rc = forecast_runner_run(&trimmed, &o, r);
    r->scenario = s;
    if (rc == 1 || forecast_runner_interrupted())
        return CLI_INTERRUPTED;
    return rc < 0 ? CLI_INTERNAL : 0;
}

static void print_plan(FILE *out, const struct scenario *s, const struct plan_slo *slo, const struct plan_result *p,
                       const char *slo_text)
{
    fprintf(out, "SLO          %s in at least %.0f%% of replications, every %s\n", slo_text, 100 * slo->confidence,
            s->horizon.period == PERIOD_QUARTER ? "quarter" : s->horizon.period == PERIOD_MONTH ? "month" : "week");
    if (!p->n_orders)
        fprintf(out, "orders       none needed\n");
    for (size_t i = 0; i < p->n_orders; i++) {
        const struct planned_order *o = &p->orders[i];
        char date[32];
        if (s->start_unix_s > 0)
            units_format_date(date, sizeof date, s->start_unix_s + o->at_us / 1000000);
        else
            snprintf(date, sizeof date, "day %lld", (long long)(o->at_us / 86400000000LL));
        fprintf(out, "order        %s: %lld x %s ($%.0f), for %s %u\n", date, (long long)o->count,
                s->catalog.types[o->type].name, o->cost_usd, s->horizon.period == PERIOD_QUARTER ? "quarter" : "period",
                o->for_period + 1);
    }
    fprintf(out, "cost         $%.0f\n", p->cost_usd);
    if (!p->met) {
        fprintf(out, "out of reach");
        for (uint32_t k = 0; k < p->n_periods; k++)
            if (p->out_of_reach[k])
                fprintf(out, " %s%u", s->horizon.period == PERIOD_QUARTER ? "Q" : "#", k + 1);
        fputc('\n', out);
    }
    fprintf(out, "verdict      %s\n", p->met ? "the plan meets the SLO in every period" : p->reason);
    fprintf(out, "(%u forecasts run)\n\n", p->evaluations);
}

/* The report's view of a plan; orders points into caller storage (n entries). */
static void plan_to_summary(const struct scenario *s, const struct plan_result *p, const char *slo_text,
                            struct plan_order *orders, struct plan_summary *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < p->n_orders; i++) {
        const struct planned_order *o = &p->orders[i];
        memset(&orders[i], 0, sizeof orders[i]);
        orders[i].date_us = o->at_us;
        orders[i].ready_us = -1;
        snprintf(orders[i].node_type, sizeof orders[i].node_type, "%s", s->catalog.types[o->type].name);
        orders[i].count = o->count;
        orders[i].cost_usd = o->cost_usd;
    }
    out->orders = orders;
    out->n_orders = p->n_orders;
    out->total_cost_usd = p->cost_usd;
    out->met = p->met;
    out->reason = p->reason[0] ? p->reason : NULL;
    out->slo = slo_text;
}

int cmd_plan(int argc, char **argv)
{
    struct planner_args a;
    int rc = parse_planner_args("plan", plan_usage, argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    struct scenario s;
    if ((rc = load_planner_scenario(a.files[0], a.quiet, &s)) != CLI_OK) {
        scenario_release(&s);
        return rc;
    }
    struct plan_slo slo;
    struct err err;
    err_clear(&err);
    char slo_text[128];
    if (a.slo) {
        snprintf(slo_text, sizeof slo_text, "%s", a.slo);
        if (plan_slo_parse(a.slo, &slo, &err) != 0) {
            cli_error("%s", err.msg);
            scenario_release(&s);
            return CLI_USAGE;
        }
    } else if (s.plan.has_slo) {
        slo.metric = !strcmp(s.plan.slo_metric, "p50_wait") ? FM_WAIT_P50
                     : !strcmp(s.plan.slo_metric, "p99_wait") ? FM_WAIT_P99 : FM_WAIT_P95;
        slo.threshold_s = s.plan.slo_threshold_s;
        char d[32];
        units_format_duration(d, sizeof d, slo.threshold_s);
        snprintf(slo_text, sizeof slo_text, "%s <= %s", s.plan.slo_metric, d);
    } else {
        scenario_release(&s);
        return cli_usage_error("plan", "no SLO: give --slo 'p95_wait <= 2h' or plan.slo in the scenario");
    }
    slo.confidence = a.confidence > 0 ? a.confidence : s.plan.confidence;
    struct plan_ctx ctx = {&a, a.replications > 0 ? (uint32_t)a.replications : s.forecast.replications};
    struct plan_result p;
    if (!a.quiet)
        fprintf(stderr, "plan: searching (%u replications a forecast)...\n", ctx.replications);
    int search = plan_search(&s, &slo, plan_evaluate, &ctx, &p, &err);
    if (search != 0) {
        if (search == -1)
            cli_print_err(&err);
        plan_result_release(&p);
        scenario_release(&s);
        return search == CLI_INTERRUPTED ? CLI_INTERRUPTED : CLI_INTERNAL;
    }
    /* the forecast with the plan's orders */
    struct forecast_result r;
    struct forecast_run_options o = run_options(&a, &s, "plan: final forecast");
    int run = forecast_runner_run(&s, &o, &r);
    if (run < 0) {
        rc = CLI_INTERNAL;
    } else {
        struct plan_summary summary;
        struct plan_order *orders = calloc(p.n_orders + 1, sizeof *orders);
        if (!orders) {
            cli_error("out of memory");
            rc = CLI_INTERNAL;
            goto out;
        }
        plan_to_summary(&s, &p, slo_text, orders, &summary);
        if (a.json) {
            json_t *root = forecast_json(&r);
            json_t *jorders = json_array();
            for (size_t i = 0; i < p.n_orders; i++)
                json_array_append_new(jorders, json_pack("{s:f, s:s, s:I, s:f, s:i}", "order_day",
                                                        (double)p.orders[i].at_us / 86400e6, "node_type",
                                                        s.catalog.types[p.orders[i].type].name, "count",
                                                        (json_int_t)p.orders[i].count, "cost_usd",
                                                        p.orders[i].cost_usd, "for_period", p.orders[i].for_period + 1));
            json_object_set_new(root, "plan", json_pack("{s:s, s:f, s:o, s:f, s:b, s:s}", "slo", slo_text,
                                                        "confidence", slo.confidence, "orders", jorders, "cost_usd",
                                                        p.cost_usd, "met", p.met, "reason", p.reason));
            rc = print_json(root);
        } else {
            print_plan(stdout, &s, &slo, &p, slo_text);
            print_forecast_table(stdout, &r);
        }
        if (rc == CLI_OK && a.report_dir)
            rc = write_report(a.report_dir, &r, &summary, a.quiet);
        if (rc == CLI_OK)
            rc = run == 1 ? CLI_INTERRUPTED : p.met ? CLI_OK : CLI_GATE;
        free(orders);
    }
out:
    forecast_result_release(&r);
    plan_result_release(&p);
    scenario_release(&s);
    return rc;
}

/* ---- compare ---- */

struct variant {
    char name[160];
    struct forecast_result r;
};

static int run_variant(const struct planner_args *a, struct scenario *s, const char *name, const char *policy,
                       struct variant *v)
{
    snprintf(v->name, sizeof v->name, "%s", name);
    struct forecast_run_options o = run_options(a, s, name);
    o.policy = policy ? policy : a->policy;
    int rc = forecast_runner_run(s, &o, &v->r);
    return rc < 0 ? CLI_INTERNAL : rc == 1 ? CLI_INTERRUPTED : CLI_OK;
}

static void print_compare(FILE *out, const struct variant *v, size_t n)
{
    for (int m = 0; m < 3; m++) {
        enum forecast_metric metric = m == 0 ? FM_UTILIZATION : m == 1 ? FM_WAIT_P95 : FM_OFFERED_LOAD;
        fprintf(out, "%s (mean over replications)\n%-8s", forecast_metric_name(metric), "period");
        /* the end of a name tells the variants apart (the sweep values) */
        for (size_t i = 0; i < n; i++) {
            size_t len = strlen(v[i].name);
            fprintf(out, " %22s", len > 22 ? v[i].name + len - 22 : v[i].name);
        }
        fputc('\n', out);
        for (uint32_t p = 0; p < v[0].r.n_periods; p++) {
            fprintf(out, "%-8u", p + 1);
            for (size_t i = 0; i < n; i++) {
                double x = p < v[i].r.n_periods ? forecast_band_of(&v[i].r, p, metric).mean : 0;
                if (metric == FM_WAIT_P95) {
                    char w[24];
                    forecast_digest_format_wait(w, sizeof w, x);
                    fprintf(out, " %22s", w);
                } else {
                    fprintf(out, " %22.3f", x);
                }
            }
            fputc('\n', out);
        }
        fputc('\n', out);
    }
}

/* One report per variant (DIR/variant-K/), and DIR/compare.csv with the
 * variants' period means side by side. */
static int write_compare_reports(const struct planner_args *a, const struct variant *v, size_t n)
{
    char path[4096];
    if (mkdir(a->report_dir, 0777) != 0 && errno != EEXIST) {
        cli_error("cannot create '%s': %s", a->report_dir, strerror(errno));
        return CLI_IO;
    }
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/variant-%zu", a->report_dir, i + 1);
        int rc = write_report(path, &v[i].r, NULL, 1);
        if (rc != CLI_OK)
            return rc;
    }
    snprintf(path, sizeof path, "%s/compare.csv", a->report_dir);
    struct atomic_file f;
    struct err err;
    err_clear(&err);
    if (atomic_file_open(&f, path, &err) != 0) {
        cli_print_err(&err);
        return CLI_IO;
    }
    fputs("variant,name,period", f.fp);
    for (int m = 0; m < FM_COUNT; m++)
        fprintf(f.fp, ",%s_mean", forecast_metric_name((enum forecast_metric)m));
    fputc('\n', f.fp);
    for (size_t i = 0; i < n; i++) {
        for (uint32_t p = 0; p < v[i].r.n_periods; p++) {
            fprintf(f.fp, "%zu,\"", i + 1);
            for (const char *c = v[i].name; *c; c++)
                fputs(*c == '"' ? "\"\"" : (char[]){*c, 0}, f.fp);
            fprintf(f.fp, "\",%u", p + 1);
            for (int m = 0; m < FM_COUNT; m++)
                fprintf(f.fp, ",%.6g", forecast_band_of(&v[i].r, p, (enum forecast_metric)m).mean);
            fputc('\n', f.fp);
        }
    }
    if (atomic_file_commit(&f, &err) != 0) {
        cli_print_err(&err);
        return CLI_IO;
    }
    if (!a->quiet)
        fprintf(stderr, "fleetsim: comparison written to %s (compare.csv, variant-*/index.html)\n", a->report_dir);
    return CLI_OK;
}

int cmd_compare(int argc, char **argv)
{
    struct planner_args a;
    int rc = parse_planner_args("compare", compare_usage, argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    size_t cap = 64, n = 0;
    struct variant *v = calloc(cap, sizeof *v);
    struct scenario *scen = calloc((size_t)a.n_files, sizeof *scen);
    if (!v || !scen) {
        free(v);
        free(scen);
        cli_error("out of memory");
        return CLI_INTERNAL;
    }
    for (int f = 0; f < a.n_files && rc == CLI_OK; f++) {
        struct scenario *s = &scen[f];
        if ((rc = load_planner_scenario(a.files[f], a.quiet, s)) != CLI_OK)
            break;
        size_t ng = s->sweep.n_growth ? s->sweep.n_growth : 1, np = s->sweep.n_policies ? s->sweep.n_policies : 1;
        for (size_t g = 0; g < ng && rc == CLI_OK; g++) {
            for (size_t q = 0; q < np && rc == CLI_OK && n < cap; q++) {
                char name[160];
                const char *base = strrchr(a.files[f], '/');
                int len = snprintf(name, sizeof name, "%s", base ? base + 1 : a.files[f]);
                if (s->sweep.n_growth) {
                    for (size_t t = 0; t < s->workload.n_teams; t++)
                        s->workload.teams[t].growth_per_quarter = s->sweep.growth[g];
                    len += snprintf(name + len, sizeof name - (size_t)len, " g=%.2f", s->sweep.growth[g]);
                }
                const char *policy = s->sweep.n_policies ? s->sweep.policies[q] : NULL;
                if (policy && len > 0 && (size_t)len < sizeof name)
                    snprintf(name + len, sizeof name - (size_t)len, " %s", policy);
                rc = run_variant(&a, s, name, policy, &v[n]);
                n++;
            }
        }
    }
    if (n && (rc == CLI_OK || rc == CLI_INTERRUPTED)) {
        if (a.json) {
            json_t *arr = json_array();
            for (size_t i = 0; i < n; i++) {
                json_t *o = forecast_json(&v[i].r);
                json_object_set_new(o, "variant", json_string(v[i].name));
                json_array_append_new(arr, o);
            }
            print_json(json_pack("{s:o}", "variants", arr));
        } else {
            print_compare(stdout, v, n);
        }
        if (a.report_dir)
            rc = write_compare_reports(&a, v, n);
    }
    for (size_t i = 0; i < n; i++)
        forecast_result_release(&v[i].r);
    for (int f = 0; f < a.n_files; f++)
        scenario_release(&scen[f]);
    free(v);
    free(scen);
    return rc;
}
