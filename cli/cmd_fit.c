/* fleetsim fit TRACE: a scenario's workload section fitted from a trace,
 * with the goodness of fit. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/atomic_file.h"
#include "traces/fit.h"

static const char fit_usage[] =
    "usage: fleetsim fit [options] TRACE\n"
    "\n"
    "Fits a scenario 'workload:' section to TRACE (SWF, native JSONL, Slurm sacct -P\n"
    "export): per group of jobs, the arrival rate with hour-of-day and day-of-week\n"
    "profiles, the GPU-count mix, the job classes, log-normal and Weibull runtimes (the\n"
    "better by KS statistic), and the limit factor. Add a cluster and it is a scenario.\n"
    "The YAML goes to stdout, or to FILE with -o; the goodness of fit (KS statistics of\n"
    "every runtime fit and of the inter-arrival times) to stderr, or as JSON with --json.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  write the workload section to FILE (replaced only when complete)\n"
    "      --by G         group jobs by team (the trace's group/account), user, or none\n"
    "                     (default: team)\n"
    "      --min-jobs N   groups with fewer jobs are merged into 'other' (default: 50)\n"
    "      --gpu-values N keep the N most frequent GPU counts (default: 8)\n"
    "      --format F     trace format: auto, swf, jsonl, sacct (default: auto)\n"
    "      --json         print the fit and its goodness as JSON on stdout\n"
    "  -q, --quiet        do not print warnings\n"
    "  -h, --help         this help\n"
    "\n"
    "See traces/README.md for the methods and how the confidence intervals are computed.\n"
    "exit codes: 0 ok, 2 usage or bad trace, 3 I/O error, 4 internal error\n";

struct fit_args {
    const char *trace, *output;
    enum trace_format format;
    struct fit_options opt;
    int json, quiet;
};

static int parse_fit_args(int argc, char **argv, struct fit_args *a)
{
    enum { OPT_BY = 256, OPT_FORMAT, OPT_JSON, OPT_MIN_JOBS, OPT_GPU_VALUES };
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},   {"by", required_argument, NULL, OPT_BY},
        {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
        {"min-jobs", required_argument, NULL, OPT_MIN_JOBS},
        {"gpu-values", required_argument, NULL, OPT_GPU_VALUES},
        {"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    fit_options_init(&a->opt);
    optind = 0;
    opterr = 0;
    int c;
    int64_t v;
    while ((c = getopt_long(argc, argv, ":o:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o':
            a->output = optarg;
            break;
        case OPT_BY:
            if (!strcmp(optarg, "team"))
                a->opt.by = FIT_BY_TEAM;
            else if (!strcmp(optarg, "user"))
                a->opt.by = FIT_BY_USER;
            else if (!strcmp(optarg, "none"))
                a->opt.by = FIT_BY_NONE;
            else
                return cli_usage_error("fit", "option '--by' is '%s', expected team, user or none", optarg);
            break;
        case OPT_FORMAT:
            if (cli_parse_format("fit", optarg, &a->format) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_JSON:
            a->json = 1;
            break;
        case OPT_MIN_JOBS:
            if (cli_parse_int("--min-jobs", optarg, 1, 100000000, &v) != 0)
                return CLI_USAGE;
            a->opt.min_jobs = (size_t)v;
            break;
        case OPT_GPU_VALUES:
            if (cli_parse_int("--gpu-values", optarg, 1, 1000, &v) != 0)
                return CLI_USAGE;
            a->opt.max_gpu_values = (size_t)v;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'h':
            fputs(fit_usage, stdout);
            exit(CLI_OK);
        case ':':
            return cli_usage_error("fit", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("fit", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1)
        return cli_usage_error("fit", argc - optind ? "one trace at a time" : "missing TRACE");
    a->trace = argv[optind];
    return CLI_OK;
}

static const char *kind_name(enum distribution_kind k)
{
    return k == DIST_WEIBULL ? "weibull" : "lognormal";
}

static void print_report(const struct fit_result *r)
{
    fprintf(stderr, "fleetsim: fitted %zu groups from %zu jobs over %.1f days (%zu with runtime 0 left out of the "
                    "runtime fits)\n",
            r->spec.n_teams, r->jobs, r->window_s / 86400, r->runtime_zero);
    fprintf(stderr, "%-20s %8s %12s %8s  %-10s %7s %9s %9s  %s\n", "group", "jobs", "jobs/h", "KS gaps", "class", "n",
            "KS lognorm", "KS weibull", "chosen");
    for (size_t i = 0; i < r->spec.n_teams; i++) {
        const struct fit_group *g = &r->groups[i];
        int first = 1;
        for (int k = 0; k < JOB_CLASS_COUNT; k++) {
            const struct fit_runtime *f = &g->runtime[k];
            if (!f->n && r->spec.teams[i].class_weights[k] <= 0)
                continue;
            if (first)
                fprintf(stderr, "%-20.20s %8zu %12.4g %8.4f  ", g->name, g->jobs, g->jobs_per_hour.value,
                        g->ks_interarrival);
            else
                fprintf(stderr, "%-20s %8s %12s %8s  ", "", "", "", "");
            first = 0;
            if (f->parametric)
                fprintf(stderr, "%-10s %7zu %9.4f %9.4f  %s\n", job_class_name((enum job_class)k), f->n, f->ks_lognormal,
                        f->ks_weibull, kind_name(f->chosen));
            else
                fprintf(stderr, "%-10s %7zu %9s %9s  %s\n", job_class_name((enum job_class)k), f->n, "-", "-",
                        f->n ? "empirical" : "fixed 1s");
        }
    }
}

static json_t *param_json(const struct fit_param *p)
{
    return json_pack("{s:f, s:f, s:f}", "value", p->value, "lo", p->lo, "hi", p->hi);
}

static int print_json(const struct fit_args *a, const struct fit_result *r)
{
    static const char *const by[] = {"team", "user", "none"};
    json_t *groups = json_array();
    for (size_t i = 0; groups && i < r->spec.n_teams; i++) {
        const struct fit_group *g = &r->groups[i];
        const struct team_spec *t = &r->spec.teams[i];
        json_t *runtime = json_object(), *gpus = json_object();
        for (int k = 0; k < JOB_CLASS_COUNT; k++) {
            const struct fit_runtime *f = &g->runtime[k];
            if (!f->n)
                continue;
            json_t *o = json_pack("{s:I, s:b, s:s, s:f}", "n", (json_int_t)f->n, "parametric", f->parametric, "chosen",
                                  f->parametric ? kind_name(f->chosen) : "empirical", "weight", t->class_weights[k]);
            if (f->parametric) {
                json_object_set_new(o, "lognormal",
                                    json_pack("{s:o, s:o, s:f}", "median_s", param_json(&f->ln_median_s), "sigma",
                                              param_json(&f->ln_sigma), "ks", f->ks_lognormal));
                json_object_set_new(o, "weibull",
                                    json_pack("{s:o, s:o, s:f}", "shape", param_json(&f->wb_shape), "scale_s",
                                              param_json(&f->wb_scale_s), "ks", f->ks_weibull));
            }
            json_object_set_new(runtime, job_class_name((enum job_class)k), o);
        }
        for (size_t k = 0; k < t->n_gpus; k++) {
            char key[16];
            snprintf(key, sizeof key, "%d", (int)t->gpus[k]);
            json_object_set_new(gpus, key, json_real(t->gpu_weights[k]));
        }
        json_t *hourly = json_array(), *weekly = json_array();
        for (int h = 0; h < 24; h++)
            json_array_append_new(hourly, json_real(t->hourly[h]));
        for (int d = 0; d < 7; d++)
            json_array_append_new(weekly, json_real(t->weekly[d]));
        json_array_append_new(
            groups, json_pack("{s:s, s:I, s:o, s:{s:f, s:I}, s:o, s:o, s:b, s:b, s:o, s:o, s:f, s:f, s:I, s:I}", "name",
                              g->name, "jobs", (json_int_t)g->jobs, "jobs_per_hour", param_json(&g->jobs_per_hour),
                              "interarrival", "ks", g->ks_interarrival, "n", (json_int_t)g->n_interarrival, "hourly",
                              hourly, "weekly", weekly, "hourly_fitted", g->hourly_fitted, "weekly_fitted",
                              g->weekly_fitted, "gpus", gpus, "runtime", runtime, "limit_factor", t->limit_factor,
                              "limit_round_s", t->limit_round_s, "limits", (json_int_t)g->n_limits, "gpu_values",
                              (json_int_t)g->gpu_values));
    }
    json_t *root = json_pack("{s:{s:s, s:s}, s:s, s:s, s:I, s:I, s:f, s:f, s:o}", "meta", "tool", "fleetsim", "version",
                             FLEETSIM_VERSION_STRING, "trace", a->trace, "by", by[r->by], "jobs", (json_int_t)r->jobs,
                             "runtime_zero", (json_int_t)r->runtime_zero, "window_s", r->window_s, "confidence",
                             erf(r->z / sqrt(2.0)), "groups", groups);
    int rc = root ? json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : -1;
    json_decref(root);
    putchar('\n');
    return rc == 0 ? CLI_OK : CLI_IO;
}

static int write_yaml(const struct fit_args *a, const struct fit_result *r)
{
    struct err err;
    err_clear(&err);
    if (!a->output || !strcmp(a->output, "-")) {
        if (fit_write_yaml(stdout, r, a->trace) != 0) {
            cli_error("cannot write the workload: %s", strerror(errno));
            return CLI_IO;
        }
        return CLI_OK;
    }
    struct atomic_file f;
    if (atomic_file_open(&f, a->output, &err) != 0) {
        cli_print_err(&err);
        return CLI_IO;
    }
    if (fit_write_yaml(f.fp, r, a->trace) != 0) {
        int saved = errno;
        atomic_file_abort(&f);
        cli_error("cannot write '%s': %s", a->output, strerror(saved ? saved : EIO));
        return CLI_IO;
    }
    if (atomic_file_commit(&f, &err) != 0) {
        cli_print_err(&err);
        return CLI_IO;
    }
    if (!a->quiet)
        fprintf(stderr, "fleetsim: wrote the workload of %zu groups to %s\n", r->spec.n_teams, a->output);
    return CLI_OK;
}

int cmd_fit(int argc, char **argv)
{
    struct fit_args a;
    int rc = parse_fit_args(argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    if (a.output && strcmp(a.output, "-") != 0 && cli_check_output(a.output, a.trace) != CLI_OK)
        return CLI_USAGE;
    struct workload w;
    rc = cli_read_trace(a.trace, a.format, SWF_REPLAY, a.quiet, &w);
    if (rc != CLI_OK) {
        workload_release(&w);
        return rc;
    }
    struct fit_result r;
    struct err err;
    err_clear(&err);
    if (fit_workload(&w, &a.opt, &r, &err) != 0) {
        cli_print_err(&err);
        rc = CLI_INTERNAL;
    } else {
        if (a.output || !a.json)
            rc = write_yaml(&a, &r);
        if (rc == CLI_OK && a.json)
            rc = print_json(&a, &r);
        else if (rc == CLI_OK)
            print_report(&r);
    }
    fit_result_release(&r);
    workload_release(&w);
    return rc;
}
