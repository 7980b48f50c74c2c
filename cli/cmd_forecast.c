/* fleetsim forecast|plan|compare: the capacity planner's commands. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/forecast_runner.h"
#include "cli/slurm_array.h"
#include "policies/registry.h"
#include "report/forecast_data.h"
#include "report/forecast_digest.h"
#include "report/json_doc.h"
#include "report/forecast_report.h"
#include "scenarios/forecast.h"
#include "scenarios/plan.h"
#include "scenarios/policy_teams.h"
#include "scenarios/scenario.h"
#include "sim/atomic_file.h"
#include "sim/units.h"

enum { PLAN_MAX_SLOS = 16 };

struct planner_args {
    const char *report_dir;
    const char *slos[PLAN_MAX_SLOS];
    int n_slos;
    int64_t confirm;      /* plan: confirmation replications; -1: twice the search's */
    const char *policy;
    double confidence;
    int64_t replications; /* -1: the scenario's */
    int64_t jobs;
    int json, quiet;
    char **files;
    int n_files;
    int slurm;                 /* --slurm: replications as Slurm job arrays */
    const char *partition;
    struct slurm_session ss;   /* open while the command runs, when slurm */
};

static const char forecast_usage[] =
    "usage: fleetsim forecast [options] SCENARIO\n"
    "\n"
    "Runs the scenario's Monte Carlo replications over its horizon (parallel worker\n"
    "processes) and reports, per period: utilization, queue-wait p50/p95/p99, the\n"
    "offered load (GPU-hours submitted per hour, and its peak with unlimited capacity),\n"
    "the backlog (GPUs queued), capacity, GPU-hours per team and failure losses, each\n"
    "with its spread across replications (mean and\n"
    "5th-95th percentiles), then the recommendation in plain words and, when the\n"
    "load outgrows capacity or the SLO is missed, the 'fleetsim plan' command that\n"
    "sizes the orders. The scenario needs workload and horizon sections\n"
    "('fleetsim help scenario').\n"
    "\n"
    "options:\n"
    "  -r, --replications N   override forecast.replications\n"
    "  -j, --jobs N           worker processes (default: the number of cores)\n"
    "      --slurm            run the replications as a Slurm job array (and a merge\n"
    "                         job that depends on it) instead of local workers; the\n"
    "                         output is the same bytes as a local run. Needs sbatch on\n"
    "                         PATH and a current folder (or $FLEETSIM_SLURM_DIR) that\n"
    "                         the nodes share; a probe job checks that first\n"
    "      --partition P      the Slurm partition (default: the cluster's default)\n"
    "      --policy SPEC      override forecast.policy\n"
    "      --report DIR       write index.html with charts, CSV and JSON into DIR\n"
    "      --json             print the forecast as JSON on stdout (with\n"
    "                         \"recommendation\", \"action_needed\" and \"next\")\n"
    "  -q, --quiet            no progress or warnings\n"
    "  -h, --help             this help\n"
    "\n"
    "Results depend only on the scenario and its seed, never on -j. Ctrl-C stops\n"
    "cleanly: what finished is reported and marked partial (exit 130).\n"
    "exit codes: 0 ok, 2 usage or bad scenario, 3 I/O error (or --slurm cannot run:\n"
    "no sbatch, a folder the nodes do not see), 4 internal error or out of memory (or\n"
    "a replication failed), 130 interrupted\n";

static const char plan_usage[] =
    "usage: fleetsim plan [options] SCENARIO\n"
    "\n"
    "Finds the cheapest way to keep the SLOs in every period of the horizon in at\n"
    "least the requested share of the replications: purchases (node type, count,\n"
    "order date), rented capacity, and the policies in the scenario's plan section,\n"
    "compared on total cost over the horizon (price, rent, power and hosting).\n"
    "\n"
    "Periods are dealt with in order. A period that misses the goal gets the\n"
    "cheapest order that makes it meet it, dated so that it is in service by the\n"
    "period's start with the requested confidence (lead time quantile plus burn-in);\n"
    "an order that would have to be placed before the start of the horizon is never\n"
    "made, and the period is reported out of reach. Rentals are for one period; a\n"
    "purchase that replaces the rentals of every later period for less wins.\n"
    "Every candidate is forecast on the same replications (common random numbers).\n"
    "The plan chosen is then forecast again on fresh replications (twice as many by\n"
    "default): the verdict, the exit code and the report are that confirmation's.\n"
    "Progress goes to stderr; Ctrl-C prints the best plan found so far, marked\n"
    "PARTIAL (exit 130).\n"
    "\n"
    "options:\n"
    "      --slo '[TEAM:] METRIC <= DURATION'\n"
    "                         e.g. 'p95_wait <= 2h' or 'research: p95_wait <= 4h'\n"
    "                         (METRIC: p50_wait, p95_wait, p99_wait, mean_wait; a TEAM\n"
    "                         counts only its jobs); repeat for several, all of which\n"
    "                         must hold; default: the scenario's plan.slo and plan.slos\n"
    "      --confidence C     share of replications that must meet them (default 0.9)\n"
    "  -r, --replications N   replications of each forecast while searching\n"
    "                         (default: forecast.replications)\n"
    "      --confirm N        replications of the confirmation (default: twice -r)\n"
    "      --policy SPEC      the policy to plan for (default forecast.policy); the\n"
    "                         scenario's plan.policies are weighed against it\n"
    "  -j, --jobs N   --slurm   --partition P   --report DIR   --json   -q\n"
    "                         as for 'fleetsim forecast' (with --slurm, each forecast\n"
    "                         of the search is one job array)\n"
    "\n"
    "exit codes: 0 the confirmation meets the SLOs in every period, 1 it does not\n"
    "(the best plan is printed, with the first period missed and why), 2 usage or\n"
    "bad scenario, 4 internal error or out of memory, 130 interrupted\n";

static const char compare_usage[] =
    "usage: fleetsim compare [options] SCENARIO...\n"
    "\n"
    "Forecasts each scenario (and, within one, each value of its sweep section:\n"
    "growth rates x policies) and prints them side by side, period by period.\n"
    "Periods are counted from each scenario's start, so the scenarios must have\n"
    "the same horizon.period (week, month or quarter); horizons of different\n"
    "lengths are shown to the longest, with '-' where a horizon has ended.\n"
    "\n"
    "options: -r N, -j N, --slurm, --partition P (as for 'fleetsim forecast'; one job\n"
    "array per variant, all queued at once), --report DIR (overlaid charts and CSV),\n"
    "--json, -q\n"
    "exit codes: 0 ok, 2 usage or bad scenario, 130 interrupted\n";

static int parse_planner_args(const char *cmd, const char *usage, int argc, char **argv, struct planner_args *a)
{
    enum { OPT_REPORT = 256, OPT_SLO, OPT_CONF, OPT_POLICY, OPT_JSON, OPT_CONFIRM, OPT_SLURM, OPT_PARTITION };
    static const struct option options[] = {
        {"replications", required_argument, NULL, 'r'}, {"jobs", required_argument, NULL, 'j'},
        {"report", required_argument, NULL, OPT_REPORT}, {"slo", required_argument, NULL, OPT_SLO},
        {"confidence", required_argument, NULL, OPT_CONF}, {"policy", required_argument, NULL, OPT_POLICY},
        {"confirm", required_argument, NULL, OPT_CONFIRM},
        {"slurm", no_argument, NULL, OPT_SLURM}, {"partition", required_argument, NULL, OPT_PARTITION},
        {"json", no_argument, NULL, OPT_JSON}, {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->replications = -1;
    a->confirm = -1;
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
            if (a->n_slos == PLAN_MAX_SLOS)
                return cli_usage_error(cmd, "at most %d --slo options", PLAN_MAX_SLOS);
            a->slos[a->n_slos++] = optarg;
            break;
        case OPT_CONFIRM:
            if (strcmp(cmd, "plan") != 0)
                return cli_usage_error(cmd, "--confirm is for 'fleetsim plan'");
            if (cli_parse_int("--confirm", optarg, 1, 100000, &a->confirm) != 0)
                return CLI_USAGE;
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
        case OPT_SLURM:
            a->slurm = 1;
            break;
        case OPT_PARTITION:
            a->partition = optarg;
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
    if (a->partition && !a->slurm)
        return cli_usage_error(cmd, "--partition is for --slurm");
    a->files = argv + optind;
    a->n_files = argc - optind;
    if (a->n_files < 1)
        return cli_usage_error(cmd, "no scenario given");
    if (strcmp(cmd, "compare") != 0 && a->n_files > 1)
        return cli_usage_error(cmd, "one scenario at a time (use 'fleetsim compare' for several)");
    return CLI_OK;
}

/* A --policy given on the command line, with team names, checked before
 * anything runs (the scenario's own are checked when it loads). */
static int check_policy_option(const struct scenario *s, const char *spec)
{
    if (!spec)
        return CLI_OK;
    char resolved[POLICY_SPEC_MAX * 2], msg[256];
    const char *use = spec;
    if (!policy_plugin_is_path(spec)) {
        if (policy_teams_resolve(&s->workload, spec, resolved, sizeof resolved, msg, sizeof msg) != 0) {
            cli_error("--policy '%s': %s", spec, msg);
            return CLI_USAGE;
        }
        use = resolved;
    }
    struct policy_host ph;
    int rc = cli_open_policy(use, NULL, 0, &ph);
    if (rc == CLI_OK)
        policy_host_close(&ph);
    return rc;
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

/* Whether team t submitted any job in any period of any replication. */
static int team_present(const struct forecast_result *r, size_t t)
{
    for (uint32_t i = 0; i < r->completed; i++)
        for (uint32_t p = 0; p < r->n_periods; p++)
            if (r->reps[i].periods[p].team_wait && r->reps[i].periods[p].team_wait[t].jobs > 0)
                return 1;
    return 0;
}

/* Per-team p95 waits per period (mean over the replications), when there
 * is more than one team. */
static void print_team_waits(FILE *out, const struct forecast_result *r)
{
    size_t shown = 0;
    for (size_t t = 0; t < r->n_teams; t++)
        shown += (size_t)team_present(r, t);
    if (shown < 2)
        return;
    fprintf(out, "\n%-16s", "wait p95 by team");
    for (uint32_t p = 0; p < r->n_periods; p++)
        fprintf(out, " %9s %-3u", r->period_name, p + 1);
    fputc('\n', out);
    for (size_t t = 0; t < r->n_teams; t++) {
        if (!team_present(r, t))
            continue;
        fprintf(out, "%-16.16s", r->team_names[t]);
        for (uint32_t p = 0; p < r->n_periods; p++) {
            char w[24];
            forecast_digest_format_wait(w, sizeof w, forecast_band_team_wait(r, p, t, FM_WAIT_P95).mean);
            fprintf(out, " %13s", w);
        }
        fputc('\n', out);
    }
}

/* NULL when memory ran out (json_doc.h: no key left out silently). */
static json_t *forecast_json(const struct forecast_result *r)
{
    int ok = 1;
    json_t *periods = json_array();
    for (uint32_t p = 0; p < r->n_periods; p++) {
        json_t *o = json_object();
        json_put(o, "period", json_integer(p + 1), &ok);
        json_put(o, "length_s", json_real((double)forecast_period_length_us(r, p) / 1e6), &ok);
        json_put(o, "partial", json_boolean(r->last_period_partial && p + 1 == r->n_periods), &ok);
        for (int m = 0; m < FM_COUNT; m++) {
            struct forecast_band b = forecast_band_of(r, p, (enum forecast_metric)m);
            json_put(o, forecast_metric_name((enum forecast_metric)m),
                     json_pack("{s:f, s:f, s:f, s:f, s:[f, f]}", "mean", b.mean, "p5", b.p5, "p50", b.p50, "p95",
                               b.p95, "ci95", b.ci95_lo, b.ci95_hi),
                     &ok);
        }
        json_t *teams = json_object();
        for (size_t t = 0; t < r->n_teams; t++)
            json_put(teams, r->team_names[t], json_real(forecast_band_team(r, p, t).mean), &ok);
        json_put(o, "team_gpu_hours_mean", teams, &ok);
        json_t *tw = json_object();
        static const enum forecast_metric wm[] = {FM_WAIT_P50, FM_WAIT_P95, FM_WAIT_P99, FM_WAIT_MEAN};
        for (size_t t = 0; t < r->n_teams; t++) {
            json_t *one = json_object();
            for (size_t k = 0; k < sizeof wm / sizeof *wm; k++) {
                struct forecast_band b = forecast_band_team_wait(r, p, t, wm[k]);
                json_put(one, forecast_metric_name(wm[k]),
                         json_pack("{s:f, s:f, s:f, s:f}", "mean", b.mean, "p5", b.p5, "p50", b.p50, "p95", b.p95),
                         &ok);
            }
            json_put(tw, r->team_names[t], one, &ok);
        }
        json_put(o, "team_waits", tw, &ok);
        json_push(periods, o, &ok);
    }
    if (!ok) {
        json_decref(periods);
        return NULL;
    }
    return json_pack("{s:{s:s, s:s}, s:s, s:I, s:I, s:b, s:s, s:o}", "meta", "tool", "fleetsim", "version",
                     FLEETSIM_VERSION_STRING, "scenario", r->scenario->path ? r->scenario->path : "",
                     "replications", (json_int_t)r->replications, "completed", (json_int_t)r->completed, "partial",
                     r->partial, "period", r->period_name, "periods", periods);
}

/* The report's recommendation, in the terminal too (the digest's
 * sentences and next step; in --json as summary.json has them): a planner
 * who runs a forecast without --report gets its verdict. Nothing when no
 * replication finished (there is nothing to judge). */
static int print_recommendation(FILE *out, const struct forecast_result *r, json_t *root)
{
    if (r->completed == 0)
        return CLI_OK;
    struct forecast_digest d;
    struct err err;
    err_clear(&err);
    if (forecast_digest_init(&d, r, NULL, &err) != 0) {
        cli_print_err(&err);
        return CLI_INTERNAL;
    }
    int rc = CLI_OK;
    if (root) {
        if (forecast_data_recommendation(root, &d) != 0) {
            cli_error("out of memory");
            rc = CLI_INTERNAL;
        }
    } else {
        fprintf(out, "\nrecommendation%s\n", d.alarm ? " (action needed)" : "");
        for (size_t i = 0; i < d.n_lines; i++)
            fprintf(out, "- %s\n", d.lines[i]);
        if (d.next)
            fprintf(out, "next: %s\n", d.next);
    }
    forecast_digest_release(&d);
    return rc;
}

static int print_json(json_t *root)
{
    return cli_print_json(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
}
static int write_report(const char *dir, const struct forecast_result *r, const struct plan_summary *plan, int quiet)
{
    struct report_status st;
    struct err err;
    err_clear(&err);
    memset(&st, 0, sizeof st);
    if (forecast_report_write(dir, r, plan, &st, &err) != 0) {
        return cli_fail(&err, CLI_IO);
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

/* With --slurm: the session (the probe job) before the first forecast,
 * once the scenario has loaded. CLI_OK, or why Slurm cannot run it. */
static int open_slurm(struct planner_args *a)
{
    if (!a->slurm || a->ss.root[0])
        return CLI_OK;
    return slurm_session_open(&a->ss, a->partition, a->quiet);
}

static struct forecast_run_options run_options(struct planner_args *a, const struct scenario *s, const char *label)
{
    struct forecast_run_options o = {a->replications > 0 ? (uint32_t)a->replications : s->forecast.replications,
                                     (int)a->jobs, a->policy, label, a->quiet, 0, a->slurm ? &a->ss : NULL, NULL};
    return o;
}

int cmd_forecast(int argc, char **argv)
{
    struct planner_args a;
    int rc = parse_planner_args("forecast", forecast_usage, argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    struct scenario s;
    if ((rc = load_planner_scenario(a.files[0], a.quiet, &s)) != CLI_OK ||
        (rc = check_policy_option(&s, a.policy)) != CLI_OK) {
        scenario_release(&s);
        return rc;
    }
    if ((rc = open_slurm(&a)) != CLI_OK) {
        slurm_session_close(&a.ss);
        scenario_release(&s);
        return rc;
    }
    struct forecast_result r;
    struct forecast_run_options o = run_options(&a, &s, "forecast");
    int run = forecast_runner_run(&s, &o, &r);
    r.policy_override = a.policy; /* the recommendation's next step points to it */
    if (run < 0) {
        rc = CLI_INTERNAL;
    } else {
        if (a.json) {
            json_t *root = forecast_json(&r);
            rc = root ? print_recommendation(stdout, &r, root) : CLI_OK;
            if (rc == CLI_OK)
                rc = print_json(root); /* says "out of memory" for a NULL root */
            else
                json_decref(root);
        } else {
            print_forecast_table(stdout, &r);
            print_team_waits(stdout, &r);
            rc = print_recommendation(stdout, &r, NULL);
        }
        if (rc == CLI_OK && a.report_dir)
            rc = write_report(a.report_dir, &r, NULL, a.quiet);
        if (rc == CLI_OK && run == 1)
            rc = CLI_INTERRUPTED;
    }
    forecast_result_release(&r);
    slurm_session_close(&a.ss);
    scenario_release(&s);
    return rc;
}

/* ---- plan ---- */

static volatile sig_atomic_t plan_stop;

static void plan_on_sigint(int sig)
{
    (void)sig;
    plan_stop = 1;
}

struct plan_ctx {
    struct planner_args *a;
    double t0;
    uint32_t forecasts;
};

static double plan_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Forecasts s up to the end of e->until_period on replications
 * e->first_rep.., quietly. */
static int plan_evaluate(void *vctx, const struct scenario *s, const struct plan_eval *e, struct forecast_result *r)
{
    struct plan_ctx *ctx = vctx;
    if (plan_stop)
        return CLI_INTERRUPTED;
    struct scenario trimmed = *s; /* shallow: only the horizon differs */
    sim_time end = (sim_time)(e->until_period + 1) * s->horizon.period_us;
    if (end < trimmed.horizon.length_us)
        trimmed.horizon.length_us = end;
    struct forecast_run_options o = {e->n_reps, (int)ctx->a->jobs, e->policy, "plan", 1, e->first_rep,
                                     ctx->a->slurm ? &ctx->a->ss : NULL, NULL};
    int rc = forecast_runner_run(&trimmed, &o, r);
    r->scenario = s;
    ctx->forecasts++;
    if (rc == 1 || forecast_runner_interrupted() || plan_stop) {
        plan_stop = 1;
        return CLI_INTERRUPTED;
    }
    return rc < 0 ? CLI_INTERNAL : 0;
}

static void plan_progress(void *vctx, const char *line)
{
    struct plan_ctx *ctx = vctx;
    if (!ctx->a->quiet)
        fprintf(stderr, "%5.0f s %s\n", plan_now_s() - ctx->t0, line);
}

static void plan_date(char *buf, size_t len, const struct scenario *s, sim_time us)
{
    if (s->start_unix_s > 0)
        units_format_date(buf, len, s->start_unix_s + us / 1000000);
    else
        snprintf(buf, len, "day %lld", (long long)(us / 86400000000LL));
}

static const char *period_noun(const struct scenario *s)
{
    return s->horizon.period == PERIOD_QUARTER ? "quarter" : s->horizon.period == PERIOD_MONTH ? "month" : "week";
}

static const char *period_tag(const struct scenario *s)
{
    return s->horizon.period == PERIOD_QUARTER ? "Q" : s->horizon.period == PERIOD_MONTH ? "M" : "W";
}

static void print_plan(FILE *out, const struct scenario *s, const struct plan_options *po, const struct plan_result *p,
                       uint32_t evaluations)
{
    fprintf(out, "SLO          ");
    for (size_t i = 0; i < po->goal.n_slos; i++)
        fprintf(out, "%s%s", i ? " and " : "", po->goal.slos[i].text);
    fprintf(out, " in at least %.0f%% of replications, every %s\n", 100 * po->goal.confidence, period_noun(s));
    fprintf(out, "policy       %s", p->policy);
    if (p->n_alternatives > 1)
        fprintf(out, " (%s; the cheapest of %zu policies weighed)",
                strcmp(p->policy, p->alternatives[0].policy) ? "a change from the forecast's" : "the forecast's own",
                p->n_alternatives);
    fputc('\n', out);
    for (size_t i = 0; i < p->n_alternatives && p->n_alternatives > 1; i++) {
        const struct plan_alternative *alt = &p->alternatives[i];
        if (!strcmp(alt->policy, p->policy))
            continue;
        if (!alt->searched)
            fprintf(out, "instead of   %s: not searched (interrupted)\n", alt->policy);
        else if (alt->dearer)
            fprintf(out, "instead of   %s: more than $%.0f (searched until it cost more than %s)\n", alt->policy,
                    p->cost_usd, p->policy);
        else
            fprintf(out, "instead of   %s: $%.0f, %zu order%s, %u %s%s missed\n", alt->policy, alt->cost_usd,
                    alt->n_orders, alt->n_orders == 1 ? "" : "s", alt->missed, period_noun(s),
                    alt->missed == 1 ? "" : "s");
    }
    if (!p->n_orders)
        fprintf(out, "orders       none needed\n");
    for (size_t i = 0; i < p->n_orders; i++) {
        const struct planned_order *o = &p->orders[i];
        char at[32], ready[32], end[32];
        plan_date(at, sizeof at, s, o->at_us);
        plan_date(ready, sizeof ready, s, o->ready_us);
        if (o->kind == PLAN_RENT) {
            plan_date(end, sizeof end, s, o->end_us);
            fprintf(out, "rent         %s: %lld x %s, %s to %s, for %s %u: $%.0f\n", at, (long long)o->count,
                    s->catalog.types[o->type].name, ready, end, period_noun(s), o->for_period + 1, o->price_usd);
        } else {
            fprintf(out, "order        %s: %lld x %s, in service by %s, for %s %u: $%.0f", at, (long long)o->count,
                    s->catalog.types[o->type].name, ready, period_noun(s), o->for_period + 1, o->price_usd);
            if (o->running_usd > 0)
                fprintf(out, " + $%.0f running", o->running_usd);
            fputc('\n', out);
        }
    }
    fprintf(out, "cost         $%.0f", p->cost_usd);
    if (p->running_usd > 0)
        fprintf(out, " ($%.0f orders and rent, $%.0f running to the horizon's end)", p->price_usd, p->running_usd);
    fputc('\n', out);
    fprintf(out, "search       %u forecasts of %u replications, the same seeds for every candidate\n", evaluations,
            po->search_reps);
    if (!p->partial) {
        fprintf(out, "confirmed    on %u fresh replications (#%u-%u), the share meeting the SLO:", p->confirm.completed,
                p->confirm_first_rep, p->confirm_first_rep + po->confirm_reps - 1);
        for (uint32_t k = 0; k < p->n_periods; k++)
            fprintf(out, " %s%u %.0f%%", period_tag(s), k + 1, 100 * p->share[k]);
        fputc('\n', out);
    }
    int any = 0;
    for (uint32_t k = 0; k < p->n_periods; k++)
        any |= p->out_of_reach[k];
    if (any) {
        fprintf(out, "out of reach");
        for (uint32_t k = 0; k < p->n_periods; k++)
            if (p->out_of_reach[k])
                fprintf(out, " %s%u", period_tag(s), k + 1);
        fputc('\n', out);
    }
    if (p->partial)
        fprintf(out, "verdict      PARTIAL: %s\n", p->reason);
    else if (p->met)
        fprintf(out, "verdict      the plan meets the SLO in every %s (in the confirmation)\n", period_noun(s));
    else
        fprintf(out, "verdict      %s\n", p->reason);
    fputc('\n', out);
}

/* The report's view of a plan; orders points into caller storage (n entries). */
static void plan_to_summary(const struct scenario *s, const struct plan_result *p, const char *slo_text,
                            double confidence, struct plan_order *orders, struct plan_summary *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < p->n_orders; i++) {
        const struct planned_order *o = &p->orders[i];
        memset(&orders[i], 0, sizeof orders[i]);
        orders[i].date_us = o->at_us;
        orders[i].ready_us = o->ready_us;
        if (o->kind == PLAN_RENT)
            snprintf(orders[i].node_type, sizeof orders[i].node_type, "%.*s (rent)", NODE_TYPE_NAME_MAX - 8,
                     s->catalog.types[o->type].name);
        else
            snprintf(orders[i].node_type, sizeof orders[i].node_type, "%s", s->catalog.types[o->type].name);
        orders[i].count = o->count;
        orders[i].gpus = o->count * s->catalog.types[o->type].gpus;
        orders[i].cost_usd = o->price_usd + o->running_usd;
        orders[i].end_us = o->kind == PLAN_RENT ? o->end_us : -1;
    }
    out->orders = orders;
    out->n_orders = p->n_orders;
    out->total_cost_usd = p->cost_usd;
    out->met = p->met;
    out->reason = p->reason[0] ? p->reason : NULL;
    out->slo = slo_text;
    out->policy = p->policy;
    out->period_share = p->partial ? NULL : p->share;
    out->confidence = confidence;
    if (p->n_alternatives > 1 && strcmp(p->policy, p->alternatives[0].policy) != 0) {
        out->instead_of = p->alternatives[0].policy;
        out->instead_cost_usd = p->alternatives[0].cost_usd;
    }
}

static json_t *plan_json(const struct scenario *s, const struct plan_options *po, const struct plan_result *p,
                         const char *slo_text, uint32_t evaluations)
{
    int ok = 1;
    json_t *orders = json_array();
    for (size_t i = 0; i < p->n_orders; i++) {
        const struct planned_order *o = &p->orders[i];
        char at[32], ready[32];
        plan_date(at, sizeof at, s, o->at_us);
        plan_date(ready, sizeof ready, s, o->ready_us);
        json_t *jo = json_pack("{s:s, s:f, s:s, s:f, s:s, s:s, s:I, s:I, s:f, s:f, s:i}", "kind",
                               o->kind == PLAN_RENT ? "rent" : "buy", "order_day", (double)o->at_us / 86400e6,
                               "order_date", at, "ready_day", (double)o->ready_us / 86400e6, "ready_date", ready,
                               "node_type", s->catalog.types[o->type].name, "count", (json_int_t)o->count, "gpus",
                               (json_int_t)(o->count * s->catalog.types[o->type].gpus), "price_usd", o->price_usd,
                               "running_usd", o->running_usd, "for_period", (int)o->for_period + 1);
        if (o->kind == PLAN_RENT)
            json_put(jo, "end_day", json_real((double)o->end_us / 86400e6), &ok);
        json_push(orders, jo, &ok);
    }
    json_t *alts = json_array();
    for (size_t i = 0; i < p->n_alternatives; i++)
        json_push(alts,
                  json_pack("{s:s, s:f, s:I, s:i, s:b}", "policy", p->alternatives[i].policy, "cost_usd",
                            p->alternatives[i].cost_usd, "orders", (json_int_t)p->alternatives[i].n_orders,
                            "periods_missed", (int)p->alternatives[i].missed, "searched", p->alternatives[i].searched),
                  &ok);
    json_t *slos = json_array();
    for (size_t i = 0; i < po->goal.n_slos; i++)
        json_push(slos, json_string(po->goal.slos[i].text), &ok);
    json_t *share = json_array(), *reach = json_array();
    for (uint32_t k = 0; k < p->n_periods; k++) {
        json_push(share, json_real(p->share[k]), &ok);
        if (p->out_of_reach[k])
            json_push(reach, json_integer(k + 1), &ok);
    }
    if (!ok) {
        json_decref(orders);
        json_decref(alts);
        json_decref(slos);
        json_decref(share);
        json_decref(reach);
        return NULL;
    }
    return json_pack("{s:s, s:o, s:f, s:s, s:o, s:o, s:f, s:f, s:f, s:b, s:b, s:s, s:o, s:{s:i, s:I, s:I, s:o}}",
                     "slo", slo_text, "slos", slos, "confidence", po->goal.confidence, "policy", p->policy,
                     "alternatives", alts, "orders", orders, "cost_usd", p->cost_usd, "price_usd", p->price_usd,
                     "running_usd", p->running_usd, "met", p->met, "partial", p->partial, "reason", p->reason,
                     "out_of_reach", reach, "search", "forecasts", (int)evaluations, "replications",
                     (json_int_t)po->search_reps, "confirm_replications", (json_int_t)po->confirm_reps,
                     "confirm_share", share);
}

int cmd_plan(int argc, char **argv)
{
    struct planner_args a;
    int rc = parse_planner_args("plan", plan_usage, argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    struct scenario s;
    if ((rc = load_planner_scenario(a.files[0], a.quiet, &s)) != CLI_OK ||
        (rc = check_policy_option(&s, a.policy)) != CLI_OK) {
        scenario_release(&s);
        return rc;
    }
    struct err err;
    err_clear(&err);
    /* the SLOs: --slo (repeatable) replaces the scenario's */
    size_t n_slos = a.n_slos ? (size_t)a.n_slos : s.plan.n_slos;
    struct plan_slo *slos = calloc(n_slos + 1, sizeof *slos);
    const char **policies = calloc(s.plan.n_policies + 2, sizeof *policies);
    char slo_text[512] = "";
    if (!slos || !policies) {
        free(slos);
        free(policies);
        scenario_release(&s);
        cli_error("out of memory");
        return CLI_INTERNAL;
    }
    if (!n_slos) {
        free(slos);
        free(policies);
        scenario_release(&s);
        return cli_usage_error("plan", "no SLO: give --slo 'p95_wait <= 2h' or plan.slo in the scenario");
    }
    for (size_t i = 0; i < n_slos; i++) {
        const char *text = a.n_slos ? a.slos[i] : s.plan.slos[i];
        if (plan_slo_parse(text, &slos[i], &err) != 0 || plan_slo_resolve(&slos[i], &s, &err) != 0) {
            if (strncmp(err.msg, "names ", 6) == 0)
                cli_error("SLO '%s' %s", text, err.msg);
            else
                cli_error("%s", err.msg);
            free(slos);
            free(policies);
            scenario_release(&s);
            return CLI_USAGE;
        }
        size_t len = strlen(slo_text);
        snprintf(slo_text + len, sizeof slo_text - len, "%s%s", i ? " and " : "", text);
    }
    size_t n_policies = 0;
    policies[n_policies++] = a.policy ? a.policy : s.forecast.policy;
    for (size_t i = 0; i < s.plan.n_policies; i++) {
        int dup = 0;
        for (size_t j = 0; j < n_policies; j++)
            dup |= !strcmp(policies[j], s.plan.policies[i]);
        if (!dup)
            policies[n_policies++] = s.plan.policies[i];
    }
    uint32_t reps = a.replications > 0 ? (uint32_t)a.replications : s.forecast.replications;
    uint32_t confirm = a.confirm > 0 ? (uint32_t)a.confirm : 2 * reps;
    struct plan_ctx ctx = {&a, plan_now_s(), 0};
    struct plan_options po = {{slos, n_slos, a.confidence > 0 ? a.confidence : s.plan.confidence},
                              policies,
                              n_policies,
                              reps,
                              confirm,
                              3,
                              plan_evaluate,
                              plan_progress,
                              &ctx};
    struct plan_result p;
    memset(&p, 0, sizeof p);
    if ((rc = open_slurm(&a)) != CLI_OK)
        goto out;
    if (!a.quiet)
        fprintf(stderr, "plan: searching with %u replications a forecast (the same seeds for every candidate), "
                        "then confirming on %u fresh ones; Ctrl-C stops with the best plan so far\n",
                reps, confirm);
    struct sigaction sa, old_int;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = plan_on_sigint;
    sigemptyset(&sa.sa_mask);
    plan_stop = 0;
    sigaction(SIGINT, &sa, &old_int);
    int run = plan_run(&s, &po, &p, &err);
    sigaction(SIGINT, &old_int, NULL);
    if (run == -1) {
        cli_print_err(&err);
        rc = CLI_INTERNAL;
        goto out;
    }
    if (run != 0 && run != CLI_INTERRUPTED) {
        rc = run;
        goto out;
    }
    if (!a.quiet)
        fprintf(stderr, "plan: %u forecasts, %.0f s\n", ctx.forecasts, plan_now_s() - ctx.t0);
    /* the report lists the plan's orders once, as the plan's: the scenario
     * it sees has only its own */
    struct scenario base = s;
    base.procurement.n_orders = p.base_orders;
    base.procurement.n_retirements = p.base_retirements;
    p.confirm.scenario = &base;
    struct plan_summary summary;
    struct plan_order *orders = calloc(p.n_orders + 1, sizeof *orders);
    if (!orders) {
        cli_error("out of memory");
        rc = CLI_INTERNAL;
        goto out;
    }
    plan_to_summary(&s, &p, slo_text, po.goal.confidence, orders, &summary);
    rc = CLI_OK;
    if (a.json) {
        int ok = 1;
        json_t *root = p.partial ? json_object() : forecast_json(&p.confirm);
        json_put(root, "plan", plan_json(&s, &po, &p, slo_text, p.evaluations), &ok);
        rc = print_json(json_doc_whole(root, ok));
    } else {
        print_plan(stdout, &s, &po, &p, p.evaluations);
        if (!p.partial) {
            print_forecast_table(stdout, &p.confirm);
            print_team_waits(stdout, &p.confirm);
        }
    }
    if (rc == CLI_OK && a.report_dir && !p.partial)
        rc = write_report(a.report_dir, &p.confirm, &summary, a.quiet);
    if (rc == CLI_OK)
        rc = p.partial ? CLI_INTERRUPTED : p.met ? CLI_OK : CLI_GATE;
    p.confirm.scenario = &s;
    free(orders);
out:
    plan_result_release(&p);
    slurm_session_close(&a.ss);
    free(slos);
    free(policies);
    scenario_release(&s);
    return rc;
}

/* ---- compare ---- */

struct variant {
    char name[160];
    struct scenario *s;     /* borrowed: the file's scenario */
    long growth;            /* index into s->sweep.growth, or -1 */
    const char *policy;     /* the sweep's, or NULL */
    struct slurm_array job; /* with --slurm: its job array, once queued */
    struct forecast_result r;
};

/* Puts the variant's growth into its scenario (variants of one file share it). */
static void apply_variant(const struct variant *v)
{
    if (v->growth >= 0)
        for (size_t t = 0; t < v->s->workload.n_teams; t++)
            v->s->workload.teams[t].growth_per_quarter = v->s->sweep.growth[v->growth];
}

static struct forecast_run_options variant_options(struct planner_args *a, struct variant *v)
{
    struct forecast_run_options o = run_options(a, v->s, v->name);
    o.policy = v->policy ? v->policy : a->policy;
    return o;
}

/* Runs the variants in order; with --slurm every variant's job array is
 * queued first, so that they run at once, and then waited for in order.
 * Returns the exit code and, in *ran, how many have results (an
 * interrupted one included, partial). */
static int run_variants(struct planner_args *a, struct variant *v, size_t n, size_t *ran)
{
    *ran = 0;
    int rc = open_slurm(a);
    if (rc != CLI_OK)
        return rc;
    size_t queued = 0;
    for (; a->slurm && queued < n; queued++) {
        apply_variant(&v[queued]);
        struct forecast_run_options o = variant_options(a, &v[queued]);
        if (forecast_runner_submit(v[queued].s, &o, &v[queued].job) != 0) {
            rc = CLI_INTERNAL;
            break;
        }
    }
    for (size_t i = 0; i < n && rc == CLI_OK; i++) {
        apply_variant(&v[i]);
        struct forecast_run_options o = variant_options(a, &v[i]);
        o.submitted = a->slurm ? &v[i].job : NULL;
        int run = forecast_runner_run(v[i].s, &o, &v[i].r);
        rc = run < 0 ? CLI_INTERNAL : run == 1 ? CLI_INTERRUPTED : CLI_OK;
        *ran = i + 1;
    }
    for (size_t i = *ran; i < queued; i++) { /* stopped early: the rest leave the queue */
        slurm_array_cancel(&v[i].job);
        slurm_array_release(&v[i].job);
    }
    return rc;
}

/* The variants are lined up by period number, each counted from its own
 * scenario's start: that is only meaningful when every scenario counts the
 * same periods. Scenarios of different horizon.period are refused before
 * anything runs (quarter 1 of one beside week 1 of another would be a lie). */
static int check_same_periods(const struct planner_args *a, const struct scenario *scen)
{
    for (int f = 1; f < a->n_files; f++) {
        if (scen[f].horizon.period == scen[0].horizon.period)
            continue;
        cli_error("cannot compare '%s' (horizon.period: %s) with '%s' (horizon.period: %s): the variants are "
                  "compared period by period, so their periods must be alike",
                  a->files[0], period_noun(&scen[0]), a->files[f], period_noun(&scen[f]));
        return CLI_USAGE;
    }
    return CLI_OK;
}

static uint32_t most_periods(const struct variant *v, size_t n)
{
    uint32_t most = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].r.n_periods > most)
            most = v[i].r.n_periods;
    return most;
}

/* Horizons of different lengths: every period of the longest is shown, and
 * a variant whose horizon has ended shows "-" there (not 0, which would read
 * as an idle cluster). */
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
        uint32_t periods = most_periods(v, n);
        for (uint32_t p = 0; p < periods; p++) {
            fprintf(out, "%-8u", p + 1);
            for (size_t i = 0; i < n; i++) {
                if (p >= v[i].r.n_periods) {
                    fprintf(out, " %22s", "-");
                    continue;
                }
                double x = forecast_band_of(&v[i].r, p, metric).mean;
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
        return cli_fail(&err, CLI_IO);
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
        return cli_fail(&err, CLI_IO);
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
    /* every scenario is loaded and checked before any runs */
    int loaded = 0;
    for (; loaded < a.n_files && rc == CLI_OK; loaded++)
        rc = load_planner_scenario(a.files[loaded], a.quiet, &scen[loaded]);
    if (rc == CLI_OK)
        rc = check_same_periods(&a, scen);
    for (int f = 0; f < a.n_files && rc == CLI_OK; f++) {
        struct scenario *s = &scen[f];
        size_t ng = s->sweep.n_growth ? s->sweep.n_growth : 1, np = s->sweep.n_policies ? s->sweep.n_policies : 1;
        for (size_t g = 0; g < ng; g++) {
            for (size_t q = 0; q < np && n < cap; q++) {
                struct variant *one = &v[n++];
                const char *base = strrchr(a.files[f], '/');
                int len = snprintf(one->name, sizeof one->name, "%s", base ? base + 1 : a.files[f]);
                one->s = s;
                one->growth = s->sweep.n_growth ? (long)g : -1;
                if (s->sweep.n_growth)
                    len += snprintf(one->name + len, sizeof one->name - (size_t)len, " g=%.2f", s->sweep.growth[g]);
                one->policy = s->sweep.n_policies ? s->sweep.policies[q] : NULL;
                if (one->policy && len > 0 && (size_t)len < sizeof one->name)
                    snprintf(one->name + len, sizeof one->name - (size_t)len, " %s", one->policy);
            }
        }
    }
    size_t listed = n;
    n = 0;
    if (rc == CLI_OK)
        rc = run_variants(&a, v, listed, &n);
    if (n && (rc == CLI_OK || rc == CLI_INTERRUPTED)) {
        if (a.json) {
            int ok = 1;
            json_t *arr = json_array();
            for (size_t i = 0; i < n; i++) {
                json_t *o = forecast_json(&v[i].r);
                json_put(o, "variant", json_string(v[i].name), &ok);
                json_push(arr, o, &ok);
            }
            json_t *root = NULL;
            if (ok)
                root = json_pack("{s:o}", "variants", arr);
            else
                json_decref(arr);
            int printed = print_json(root);
            if (rc == CLI_OK)
                rc = printed;
        } else {
            print_compare(stdout, v, n);
        }
        if (a.report_dir)
            rc = write_compare_reports(&a, v, n);
    }
    for (size_t i = 0; i < n; i++)
        forecast_result_release(&v[i].r);
    slurm_session_close(&a.ss);
    for (int f = 0; f < loaded; f++)
        scenario_release(&scen[f]);
    free(v);
    free(scen);
    return rc;
}
