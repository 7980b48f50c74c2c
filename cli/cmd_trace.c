/* fleetsim trace convert|stats|generate: traces in, native JSONL or a
 * description out; or the jobs a scenario generates, written as a trace. */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/json_doc.h"
#include "scenarios/build.h"
#include "scenarios/forecast.h"
#include "traces/gpustats.h"
#include "traces/jsonl.h"
#include "traces/machines.h"
#include "traces/stats.h"
#include "traces/trace.h"

static const char trace_usage[] =
    "usage: fleetsim trace convert [options] IN OUT\n"
    "       fleetsim trace stats [options] IN\n"
    "       fleetsim trace generate [--replication R] SCENARIO OUT\n"
    "\n"
    "convert  reads IN (SWF, sacct, the GPU traces: Philly, Helios/Acme, PAI, openb,\n"
    "         ITP; or native .jsonl) and writes OUT in fleetsim's native\n"
    "         JSON Lines format (OUT '-' = stdout). OUT is replaced only when the whole\n"
    "         trace was read and written.\n"
    "stats    describes IN: jobs, time span, sizes, runtimes, estimates, users, teams\n"
    "         (or, for a machine list, its nodes and GPUs);\n"
    "         for GPU traces (and with --by-team) also, overall and per team (VC): jobs,\n"
    "         GPU-hours, run and queue time mean/p50/p95, GPUs per job, outcomes.\n"
    "generate writes the jobs that SCENARIO's workload section generates over its\n"
    "         horizon, with the seed of forecast replication R (default 0), to OUT as\n"
    "         native JSONL: the very jobs `fleetsim forecast` replays, for any tool.\n"
    "\n"
    "options:\n"
    "      --format F   input format (default: auto): auto, swf, jsonl, sacct,\n"
    "                   philly, helios, acme, pai, openb, itp\n"
    "      --json       (stats) print JSON on stdout\n"
    "      --by-team    (stats) the per-team (VC) table for any trace\n"
    "      --replication R  (generate) which replication's seed (default 0)\n"
    "  -q, --quiet      do not print warnings\n"
    "  -h, --help       this help\n"
    "\n"
    "exit codes: 0 ok, 2 usage or bad trace, 3 I/O error, 4 out of memory\n";

struct trace_args {
    enum trace_format format;
    int json, quiet, by_team;
    int64_t replication;
};

static int parse_trace_args(int argc, char **argv, struct trace_args *a)
{
    enum { OPT_FORMAT = 256, OPT_JSON, OPT_REPLICATION, OPT_BY_TEAM };
    static const struct option options[] = {
        {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
        {"by-team", no_argument, NULL, OPT_BY_TEAM},
        {"replication", required_argument, NULL, OPT_REPLICATION},
        {"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":qh", options, NULL)) != -1) {
        switch (c) {
        case OPT_FORMAT:
            if (cli_parse_format("trace", optarg, &a->format) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_JSON:
            a->json = 1;
            break;
        case OPT_BY_TEAM:
            a->by_team = 1;
            break;
        case OPT_REPLICATION:
            if (cli_parse_int("--replication", optarg, 0, 1000000, &a->replication) != 0)
                return CLI_USAGE;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'h':
            fputs(trace_usage, stdout);
            exit(CLI_OK);
        case ':':
            return cli_usage_error("trace", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("trace", "unknown option '%s'", argv[optind - 1]);
        }
    }
    return CLI_OK;
}

static int trace_convert(const char *in, const char *out, const struct trace_args *a)
{
    int rc = cli_check_output(out, in, NULL);
    if (rc != CLI_OK)
        return rc;
    struct workload w;
    rc = cli_read_trace(in, a->format, SWF_REPLAY, a->quiet, &w);
    if (rc == CLI_OK) {
        struct err err;
        err_clear(&err);
        if (jsonl_write(out, stdout, &w, &err) != 0) {
            rc = cli_fail(&err, CLI_IO);
        } else if (!a->quiet && strcmp(out, "-") != 0) {
            fprintf(stderr, "fleetsim: wrote %zu jobs to %s\n", w.n, out);
        }
    }
    workload_release(&w);
    return rc;
}

static int trace_generate(const char *path, const char *out, const struct trace_args *a)
{
    int rc = cli_check_output(out, path, NULL);
    if (rc != CLI_OK)
        return rc;
    struct scenario s;
    scenario_init(&s);
    struct workload w;
    workload_init(&w);
    rc = cli_load_scenario(path, &s, a->quiet);
    if (rc == CLI_OK && s.workload.base_trace)
        rc = cli_check_output(out, s.workload.base_trace, NULL);
    if (rc == CLI_OK && !s.has_workload) {
        cli_error("scenario '%s' has no workload section to generate jobs from", path);
        rc = CLI_USAGE;
    }
    struct err err;
    err_clear(&err);
    if (rc == CLI_OK) {
        workload_release(&w);
        if (scenario_build_workload(&s, forecast_seed(&s, (uint32_t)a->replication), &w, &err) != 0) {
            rc = cli_fail(&err, CLI_USAGE);
        } else if (jsonl_write(out, stdout, &w, &err) != 0) {
            rc = cli_fail(&err, CLI_IO);
        } else if (!a->quiet && strcmp(out, "-") != 0) {
            fprintf(stderr, "fleetsim: wrote %zu jobs of replication %lld to %s\n", w.n, (long long)a->replication,
                    out);
        }
    }
    workload_release(&w);
    scenario_release(&s);
    return rc;
}

static void print_stats_text(const char *path, const struct trace_stats *s)
{
    printf("trace        %s\n", path);
    printf("jobs         %zu\n", s->jobs);
    printf("span         %.0f s (%.1f days) of submissions\n",
           (double)(s->last_submit_us - s->first_submit_us) / 1e6,
           (double)(s->last_submit_us - s->first_submit_us) / 86400e6);
    printf("size         %d to %d slots, mean %.2f\n", s->min_slots, s->max_slots, s->mean_slots);
    printf("runtime      mean %.0f s, p50 %.0f s, p95 %.0f s\n", s->runtime_mean_s, s->runtime_p50_s,
           s->runtime_p95_s);
    printf("estimates    %.1f%% of jobs give one; runtime/estimate %.3f on average\n",
           100 * s->limit_known_fraction, s->mean_limit_accuracy);
    printf("users        %zu, teams %zu\n", s->users, s->teams);
    printf("work         %.0f slot-hours\n", s->offered_slot_hours);
}

static json_t *gpu_group_json(const struct gpustats_group *g)
{
    int ok = 1;
    json_t *gpus = json_object();
    for (int b = 0; b < GPUSTATS_BUCKETS; b++)
        json_put(gpus, gpustats_bucket_names[b], json_integer((json_int_t)g->gpus[b]), &ok);
    double n = g->jobs ? (double)g->jobs : 1;
    json_t *queue = g->queue_n ? json_pack("{s:I, s:f, s:f, s:f}", "jobs", (json_int_t)g->queue_n, "mean",
                                           g->queue_mean_s, "p50", g->queue_p50_s, "p95", g->queue_p95_s)
                               : json_null();
    json_t *doc =
        json_pack("{s:s, s:I, s:I, s:f, s:{s:f, s:f, s:f}, s:o, s:o, s:{s:f, s:f, s:f, s:f}}", "name", g->name, "jobs",
                  (json_int_t)g->jobs, "multi_gpu_jobs", (json_int_t)g->multi_gpu_jobs, "gpu_hours", g->gpu_hours,
                  "runtime_s", "mean", g->runtime_mean_s, "p50", g->runtime_p50_s, "p95", g->runtime_p95_s, "queue_s",
                  queue, "gpus", gpus, "outcome", "completed", (double)g->completed / n, "killed",
                  (double)g->killed / n, "failed", (double)g->failed / n, "unknown", (double)g->unknown / n);
    return json_doc_whole(doc, ok);
}

static json_t *gpu_stats_json(const struct gpustats *g, enum trace_format used)
{
    int ok = 1;
    json_t *teams = json_array();
    for (size_t t = 0; t < g->n_teams; t++)
        json_push(teams, gpu_group_json(&g->teams[t]), &ok);
    json_t *doc = json_pack("{s:s, s:I, s:I, s:o, s:o}", "format", trace_format_name(used), "jobs_in_file",
                            (json_int_t)g->jobs_in_file, "skipped_at_read", (json_int_t)g->skipped_at_read, "overall",
                            gpu_group_json(&g->all), "by_team", teams);
    return json_doc_whole(doc, ok);
}

static void print_gpu_row(const struct gpustats_group *g)
{
    double n = g->jobs ? (double)g->jobs : 1;
    printf("%-14.14s %7zu %6.1f%% %11.0f %9.0f %8.0f %8.0f", g->name, g->jobs, 100 * (double)g->multi_gpu_jobs / n,
           g->gpu_hours, g->runtime_mean_s, g->runtime_p50_s, g->runtime_p95_s);
    if (g->queue_n)
        printf(" %10.0f %8.0f %8.0f", g->queue_mean_s, g->queue_p50_s, g->queue_p95_s);
    else
        printf(" %10s %8s %8s", "-", "-", "-");
    printf(" %5.1f%% %5.1f%% %5.1f%% %5.1f%%\n", 100 * (double)g->completed / n, 100 * (double)g->killed / n,
           100 * (double)g->failed / n, 100 * (double)g->unknown / n);
}

static void print_gpu_text(const struct gpustats *g, enum trace_format used)
{
    printf("\nformat       %s\n", trace_format_name(used));
    printf("GPU jobs     %zu read, of %zu in the file (%zu skipped at read: CPU-only, never started, "
           "still running, repeated)\n",
           g->all.jobs, g->jobs_in_file, g->skipped_at_read);
    printf("GPUs/job    ");
    double n = g->all.jobs ? (double)g->all.jobs : 1;
    for (int b = 0; b < GPUSTATS_BUCKETS; b++)
        printf(" %s: %.1f%%", gpustats_bucket_names[b], 100 * (double)g->all.gpus[b] / n);
    printf("\n\n%-14s %7s %7s %11s %9s %8s %8s %10s %8s %8s %6s %6s %6s %6s\n", "team", "jobs", "multi", "GPU-hours",
           "run mean", "p50", "p95", "queue mean", "p50", "p95", "done", "killed", "failed", "unkn");
    print_gpu_row(&g->all);
    for (size_t t = 0; t < g->n_teams; t++)
        print_gpu_row(&g->teams[t]);
    printf("(times in seconds; multi: jobs on more than one GPU; queue: where the trace recorded it)\n");
}

static int print_stats_json(const char *path, const struct trace_stats *s, const struct gpustats *g,
                            enum trace_format used)
{
    json_t *root = json_pack(
        "{s:{s:s, s:s}, s:s, s:I, s:f, s:f, s:{s:i, s:i, s:f}, s:{s:f, s:f, s:f}, s:{s:f, s:f}, s:I, s:I, s:f}",
        "meta", "tool", "fleetsim", "version", FLEETSIM_VERSION_STRING, "trace", path, "jobs",
        (json_int_t)s->jobs, "first_submit_s", (double)s->first_submit_us / 1e6, "last_submit_s",
        (double)s->last_submit_us / 1e6, "slots", "min", s->min_slots, "max", s->max_slots, "mean",
        s->mean_slots, "runtime_s", "mean", s->runtime_mean_s, "p50", s->runtime_p50_s, "p95",
        s->runtime_p95_s, "estimates", "known_fraction", s->limit_known_fraction, "mean_accuracy",
        s->mean_limit_accuracy, "users", (json_int_t)s->users, "teams", (json_int_t)s->teams,
        "offered_slot_hours", s->offered_slot_hours);
    int ok = 1;
    if (root && g)
        json_put(root, "gpu", gpu_stats_json(g, used), &ok);
    return cli_print_json(json_doc_whole(root, ok), JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
}

/* A machine or node list given to stats: what cluster it describes. */
static int machine_stats(const char *in, const struct trace_args *a)
{
    struct machine_list m;
    int rc = cli_read_machines(in, a->quiet, &m);
    if (rc == CLI_OK) {
        char groups[400];
        machines_describe(&m, groups, sizeof groups);
        if (a->json) {
            json_t *root = json_pack("{s:s, s:I, s:I, s:I, s:s}", "machines", in, "nodes", (json_int_t)m.n, "gpus",
                                     (json_int_t)m.total_gpus, "cpu_only", (json_int_t)m.cpu_only, "groups", groups);
            rc = cli_print_json(root, JSON_INDENT(2) | JSON_SORT_KEYS);
        } else {
            printf("machines     %s (a machine list: replay it with --machines)\n", in);
            const char *unit = m.cpu_slots ? "slots" : "GPUs";
            printf("nodes        %zu with %s, %zu without\n", m.n, unit, m.cpu_only);
            printf("%-12s %lld: %s\n", unit, (long long)m.total_gpus, groups);
        }
    }
    machines_release(&m);
    return rc;
}

static int trace_stats_cmd(const char *in, const struct trace_args *a)
{
    struct workload w;
    struct diag_list diags;
    struct err err;
    diag_list_init(&diags, 1000);
    err_clear(&err);
    workload_init(&w);
    enum trace_format used = TRACE_AUTO;
    int rc = trace_read_format(in, a->format, SWF_REPLAY, &w, &diags, &err, &used);
    if (rc != 0 && used == TRACE_AUTO && strstr(err.msg, "is a machine list")) {
        diag_list_release(&diags);
        workload_release(&w);
        return machine_stats(in, a);
    }
    rc = cli_finish_load(rc, &diags, &err, a->quiet);
    if (rc == CLI_OK) {
        struct trace_stats s;
        struct gpustats g = {0};
        int gpu = trace_format_is_gpu(used) || a->by_team;
        err_clear(&err);
        if (trace_stats_compute(&w, &s, &err) != 0 || (gpu && gpustats_compute(&w, &g, &err) != 0)) {
            cli_print_err(&err);
            rc = CLI_INTERNAL;
        } else if (a->json) {
            rc = print_stats_json(in, &s, gpu ? &g : NULL, used);
        } else {
            print_stats_text(in, &s);
            if (gpu)
                print_gpu_text(&g, used);
        }
        gpustats_release(&g);
    }
    workload_release(&w);
    return rc;
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 2)
        return cli_usage_error("trace", "missing subcommand (convert, stats, generate)");
    const char *sub = argv[1];
    if (!strcmp(sub, "--help") || !strcmp(sub, "-h")) {
        fputs(trace_usage, stdout);
        return CLI_OK;
    }
    struct trace_args a;
    int rc = parse_trace_args(argc - 1, argv + 1, &a);
    if (rc != CLI_OK)
        return rc;
    int nargs = argc - 1 - optind;
    char **args = argv + 1 + optind;
    if (!strcmp(sub, "convert")) {
        if (nargs != 2)
            return cli_usage_error("trace", "convert needs IN and OUT");
        return trace_convert(args[0], args[1], &a);
    }
    if (!strcmp(sub, "stats")) {
        if (nargs != 1)
            return cli_usage_error("trace", "stats needs one trace");
        return trace_stats_cmd(args[0], &a);
    }
    if (!strcmp(sub, "generate")) {
        if (nargs != 2)
            return cli_usage_error("trace", "generate needs SCENARIO and OUT");
        return trace_generate(args[0], args[1], &a);
    }
    return cli_usage_error("trace", "unknown subcommand '%s' (convert, stats, generate)", sub);
}
