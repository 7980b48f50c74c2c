/* fleetsim trace convert|stats|generate: traces in, native JSONL or a
 * description out; or the jobs a scenario generates, written as a trace. */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "scenarios/build.h"
#include "scenarios/forecast.h"
#include "traces/jsonl.h"
#include "traces/stats.h"
#include "traces/trace.h"

static const char trace_usage[] =
    "usage: fleetsim trace convert [options] IN OUT\n"
    "       fleetsim trace stats [options] IN\n"
    "       fleetsim trace generate [--replication R] SCENARIO OUT\n"
    "\n"
    "convert  reads IN (SWF, .swf.gz, native .jsonl) and writes OUT in fleetsim's native\n"
    "         JSON Lines format (OUT '-' = stdout). OUT is replaced only when the whole\n"
    "         trace was read and written.\n"
    "stats    describes IN: jobs, time span, sizes, runtimes, estimates, users, teams.\n"
    "generate writes the jobs that SCENARIO's workload section generates over its\n"
    "         horizon, with the seed of forecast replication R (default 0), to OUT as\n"
    "         native JSONL: the very jobs `fleetsim forecast` replays, for any tool.\n"
    "\n"
    "options:\n"
    "      --format F   input format: auto, swf, jsonl, sacct (default: auto)\n"
    "      --json       (stats) print JSON on stdout\n"
    "      --replication R  (generate) which replication's seed (default 0)\n"
    "  -q, --quiet      do not print warnings\n"
    "  -h, --help       this help\n"
    "\n"
    "exit codes: 0 ok, 2 usage or bad trace, 3 I/O error\n";

struct trace_args {
    enum trace_format format;
    int json, quiet;
    int64_t replication;
};

static int parse_trace_args(int argc, char **argv, struct trace_args *a)
{
    enum { OPT_FORMAT = 256, OPT_JSON, OPT_REPLICATION };
    static const struct option options[] = {
        {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
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
    if (cli_check_output(out, in) != CLI_OK)
        return CLI_USAGE;
    struct workload w;
    int rc = cli_read_trace(in, a->format, SWF_REPLAY, a->quiet, &w);
    if (rc == CLI_OK) {
        struct err err;
        err_clear(&err);
        if (jsonl_write(out, stdout, &w, &err) != 0) {
            cli_print_err(&err);
            rc = CLI_IO;
        } else if (!a->quiet && strcmp(out, "-") != 0) {
            fprintf(stderr, "fleetsim: wrote %zu jobs to %s\n", w.n, out);
        }
    }
    workload_release(&w);
    return rc;
}

static int trace_generate(const char *path, const char *out, const struct trace_args *a)
{
    if (cli_check_output(out, path) != CLI_OK)
        return CLI_USAGE;
    struct scenario s;
    scenario_init(&s);
    struct workload w;
    workload_init(&w);
    int rc = cli_load_scenario(path, &s, a->quiet);
    if (rc == CLI_OK && s.workload.base_trace)
        rc = cli_check_output(out, s.workload.base_trace);
    if (rc == CLI_OK && !s.has_workload) {
        cli_error("scenario '%s' has no workload section to generate jobs from", path);
        rc = CLI_USAGE;
    }
    struct err err;
    err_clear(&err);
    if (rc == CLI_OK) {
        workload_release(&w);
        if (scenario_build_workload(&s, forecast_seed(&s, (uint32_t)a->replication), &w, &err) != 0) {
            cli_print_err(&err);
            rc = CLI_USAGE;
        } else if (jsonl_write(out, stdout, &w, &err) != 0) {
            cli_print_err(&err);
            rc = CLI_IO;
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

static int print_stats_json(const char *path, const struct trace_stats *s)
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
    int rc = root ? json_dumpf(root, stdout, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10)) : -1;
    json_decref(root);
    putchar('\n');
    return rc == 0 ? CLI_OK : CLI_IO;
}

static int trace_stats_cmd(const char *in, const struct trace_args *a)
{
    struct workload w;
    int rc = cli_read_trace(in, a->format, SWF_REPLAY, a->quiet, &w);
    if (rc == CLI_OK) {
        struct trace_stats s;
        struct err err;
        err_clear(&err);
        if (trace_stats_compute(&w, &s, &err) != 0) {
            cli_print_err(&err);
            rc = CLI_INTERNAL;
        } else if (a->json) {
            rc = print_stats_json(in, &s);
        } else {
            print_stats_text(in, &s);
        }
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
