/* fleetsim fit TRACE: a scenario's workload section fitted from a trace,
 * with the goodness of fit. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "models/cluster.h"
#include "models/simulation.h"
#include "report/json_doc.h"
#include "report/summary.h"
#include "sim/atomic_file.h"
#include "sim/pcg32.h"
#include "traces/fit.h"
#include "traces/synth.h"

static const char fit_usage[] =
    "usage: fleetsim fit [options] TRACE\n"
    "\n"
    "Fits a scenario 'workload:' section to TRACE (SWF, native JSONL, Slurm sacct -P\n"
    "export): per group of jobs, the arrival rate with hour-of-day and day-of-week\n"
    "profiles and batches (job arrays), the GPU-count mix, the job classes, log-normal\n"
    "and Weibull runtimes per class (the better by KS statistic), runtimes per size\n"
    "class, and requested times. Add a cluster and it is a scenario.\n"
    "The YAML goes to stdout, or to FILE with -o; the goodness of fit (KS statistics of\n"
    "every runtime fit and of the inter-arrival times) to stderr, or as JSON with --json.\n"
    "GPU counts are kept as observed and runtimes per size class as observed (bin\n"
    "means), so the large jobs keep their share of the work. Then the round trip: the trace is\n"
    "replayed on its machine and the fitted workload, synthesized over the same\n"
    "window, is run on the same machine under the same policy; utilization and wait\n"
    "p50/p95 of both are printed, to say how far a forecast of the fit can be trusted.\n"
    "\n"
    "options:\n"
    "  -o, --output FILE  write the workload section to FILE (replaced only when complete)\n"
    "      --by G         group jobs by team (the trace's group/account), user, or none\n"
    "                     (default: team)\n"
    "      --min-jobs N   groups with fewer jobs are merged into 'other' (default: 50)\n"
    "      --gpu-values N keep only the N most frequent GPU counts, merging the others into\n"
    "                     the nearest (a warning gives the share of work merged); default:\n"
    "                     every count observed\n"
    "      --check-replications N  forecasts of the fit in the round trip (default: 5;\n"
    "                     0 skips the round trip)\n"
    "      --nodes N --slots K  the machine of the round trip (default: the trace header)\n"
    "      --policy SPEC  the policy of the round trip (default: fcfs+easy)\n"
    "      --format F     trace format (default: auto): auto, swf, jsonl, sacct,\n"
    "                     philly, helios, acme, pai, openb, itp\n"
    "      --json         print the fit and its goodness as JSON on stdout\n"
    "  -q, --quiet        do not print warnings\n"
    "  -h, --help         this help\n"
    "\n"
    "See traces/README.md for the methods and how the confidence intervals are computed.\n"
    "exit codes: 0 ok, 2 usage or bad trace, 3 I/O error, 4 internal error or out of memory\n";

struct fit_args {
    const char *trace, *output;
    enum trace_format format;
    struct fit_options opt;
    int json, quiet;
    int64_t check_reps, nodes, slots;
    const char *policy;
};

static int parse_fit_args(int argc, char **argv, struct fit_args *a)
{
    enum { OPT_BY = 256, OPT_FORMAT, OPT_JSON, OPT_MIN_JOBS, OPT_GPU_VALUES, OPT_CHECK, OPT_NODES, OPT_SLOTS,
           OPT_POLICY };
    static const struct option options[] = {
        {"output", required_argument, NULL, 'o'},   {"by", required_argument, NULL, OPT_BY},
        {"format", required_argument, NULL, OPT_FORMAT}, {"json", no_argument, NULL, OPT_JSON},
        {"min-jobs", required_argument, NULL, OPT_MIN_JOBS},
        {"gpu-values", required_argument, NULL, OPT_GPU_VALUES},
        {"check-replications", required_argument, NULL, OPT_CHECK},
        {"nodes", required_argument, NULL, OPT_NODES},      {"slots", required_argument, NULL, OPT_SLOTS},
        {"policy", required_argument, NULL, OPT_POLICY},
        {"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    fit_options_init(&a->opt);
    a->check_reps = 5;
    a->policy = "fcfs+easy";
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
        case OPT_CHECK:
            if (cli_parse_int("--check-replications", optarg, 0, 1000, &a->check_reps) != 0)
                return CLI_USAGE;
            break;
        case OPT_NODES:
            if (cli_parse_int("--nodes", optarg, 1, CLUSTER_MAX_NODES, &a->nodes) != 0)
                return CLI_USAGE;
            break;
        case OPT_SLOTS:
            if (cli_parse_int("--slots", optarg, 1, CLUSTER_MAX_NODE_SLOTS, &a->slots) != 0)
                return CLI_USAGE;
            break;
        case OPT_POLICY:
            a->policy = optarg;
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

/* ---- the round trip: replay of the trace vs forecasts of the fit ---- */

struct trip_metrics {
    double utilization, wait_p50_s, wait_p95_s;
};

struct round_trip {
    int done;
    int64_t nodes, slots;
    struct trip_metrics replay;
    struct trip_metrics *forecast; /* reps */
    uint32_t reps;
    struct trip_metrics mean, lo, hi;
};

static int trip_run(const struct workload *w, int64_t nodes, int64_t slots, const char *policy,
                    struct trip_metrics *m, struct err *err)
{
    struct cluster c;
    memset(&c, 0, sizeof c);
    struct policy_host ph;
    memset(&ph, 0, sizeof ph);
    struct sim_result res;
    memset(&res, 0, sizeof res);
    struct replay_summary s;
    int rc = -1;
    if (cluster_init_homogeneous(&c, nodes, slots, err) != 0)
        goto done;
    if (policy_host_open(&ph, policy, NULL, err) != 0)
        goto done;
    if (simulation_run(w, &c, &ph, NULL, &res, err) != 0 || summary_compute(w, &res, &s, err) != 0)
        goto done;
    *m = (struct trip_metrics){s.utilization, s.wait_p50_s, s.wait_p95_s};
    rc = 0;
done:
    sim_result_release(&res);
    policy_host_close(&ph);
    cluster_release(&c);
    return rc;
}

/* The fitted workload synthesized over the trace's window (same calendar),
 * replication r. */
static int trip_synth(const struct fit_result *r, const struct workload *trace, uint32_t rep, struct workload *w,
                      struct err *err)
{
    sim_time t0 = trace->jobs[0].submit_us, t1 = t0;
    for (size_t i = 0; i < trace->n; i++) {
        t0 = trace->jobs[i].submit_us < t0 ? trace->jobs[i].submit_us : t0;
        t1 = trace->jobs[i].submit_us > t1 ? trace->jobs[i].submit_us : t1;
    }
    struct pcg32 rng;
    pcg32_stream(&rng, UINT64_C(0xF17), RNG_REPLICATION, rep);
    uint64_t seed = ((uint64_t)pcg32_next(&rng) << 32) | pcg32_next(&rng);
    workload_init(w);
    for (size_t t = 0; t < r->spec.n_teams; t++)
        if (string_table_intern(&w->teams, r->spec.teams[t].name) < 0)
            return err_set(err, NULL, 0, 0, "out of memory");
    return synth_generate(&r->spec, t0, t1 + 1, r->unix_start_s > 0 ? r->unix_start_s : 0, seed, w, err);
}

static int round_trip_run(const struct fit_args *a, const struct workload *trace, const struct fit_result *r,
                          struct round_trip *rt)
{
    memset(rt, 0, sizeof *rt);
    if (a->check_reps <= 0 || !trace->n)
        return CLI_OK;
    if (a->nodes > 0) {
        rt->nodes = a->nodes;
        rt->slots = a->slots > 0 ? a->slots : 1;
    } else if (cluster_shape_from_meta(&trace->meta, workload_max_slots(trace), &rt->nodes, &rt->slots) !=
               CLUSTER_SHAPE_HEADER) {
        if (!a->quiet)
            cli_warning("'%s' gives no machine size: no round trip (use --nodes and --slots)", a->trace);
        return CLI_OK;
    }
    struct err err;
    err_clear(&err);
    if (trip_run(trace, rt->nodes, rt->slots, a->policy, &rt->replay, &err) != 0) {
        cli_print_err(&err);
        return CLI_INTERNAL;
    }
    rt->reps = (uint32_t)a->check_reps;
    rt->forecast = calloc(rt->reps, sizeof *rt->forecast);
    if (!rt->forecast)
        return CLI_INTERNAL;
    for (uint32_t i = 0; i < rt->reps; i++) {
        struct workload w;
        int rc = trip_synth(r, trace, i, &w, &err);
        if (rc == 0)
            rc = trip_run(&w, rt->nodes, rt->slots, a->policy, &rt->forecast[i], &err);
        workload_release(&w);
        if (rc != 0) {
            cli_print_err(&err);
            return CLI_INTERNAL;
        }
        const struct trip_metrics *f = &rt->forecast[i];
        double v[3] = {f->utilization, f->wait_p50_s, f->wait_p95_s};
        double *mean = &rt->mean.utilization, *lo = &rt->lo.utilization, *hi = &rt->hi.utilization;
        for (int k = 0; k < 3; k++) {
            mean[k] += v[k] / rt->reps;
            lo[k] = i == 0 || v[k] < lo[k] ? v[k] : lo[k];
            hi[k] = i == 0 || v[k] > hi[k] ? v[k] : hi[k];
        }
    }
    rt->done = 1;
    return CLI_OK;
}

static void fmt_wait(char *buf, size_t len, double s)
{
    if (s < 120)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.1f min", s / 60);
    else
        snprintf(buf, len, "%.2f h", s / 3600);
}

static void print_round_trip(const struct fit_args *a, const struct round_trip *rt)
{
    if (!rt->done)
        return;
    fprintf(stderr,
            "round trip on %lld nodes x %lld slots, %s: the trace replayed vs %u forecasts of the fitted "
            "workload over the same window\n",
            (long long)rt->nodes, (long long)rt->slots, a->policy, rt->reps);
    fprintf(stderr, "%-12s %12s %14s %24s\n", "", "replay", "forecast mean", "[min-max]");
    char r[32], m[32], l[32], h[32], range[72];
    snprintf(range, sizeof range, "[%.3f-%.3f]", rt->lo.utilization, rt->hi.utilization);
    fprintf(stderr, "%-12s %12.3f %14.3f %24s\n", "utilization", rt->replay.utilization, rt->mean.utilization, range);
    const double *rv = &rt->replay.wait_p50_s, *mv = &rt->mean.wait_p50_s, *lv = &rt->lo.wait_p50_s,
                 *hv = &rt->hi.wait_p50_s;
    for (int k = 0; k < 2; k++) {
        fmt_wait(r, sizeof r, rv[k]);
        fmt_wait(m, sizeof m, mv[k]);
        fmt_wait(l, sizeof l, lv[k]);
        fmt_wait(h, sizeof h, hv[k]);
        snprintf(range, sizeof range, "[%s-%s]", l, h);
        fprintf(stderr, "%-12s %12s %14s %24s\n", k ? "wait p95" : "wait p50", r, m, range);
    }
}

static json_t *trip_json(const struct trip_metrics *m)
{
    return json_pack("{s:f, s:f, s:f}", "utilization", m->utilization, "wait_p50_s", m->wait_p50_s, "wait_p95_s",
                     m->wait_p95_s);
}

static void warn_merged(const struct fit_result *r)
{
    for (size_t i = 0; i < r->spec.n_teams; i++) {
        const struct fit_group *g = &r->groups[i];
        if (g->gpu_values_merged)
            cli_warning("group '%s': %zu of %zu GPU counts merged into the nearest kept ones (%.1f%% of its jobs, "
                        "%.1f%% of its work); --gpu-values 0 keeps every count",
                        g->name, g->gpu_values_merged, g->gpu_values, 100 * g->merged_jobs_share,
                        100 * g->merged_work_share);
    }
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

static int print_json(const struct fit_args *a, const struct fit_result *r, const struct round_trip *rt)
{
    int ok = 1;
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
                json_put(o, "lognormal",
                         json_pack("{s:o, s:o, s:f}", "median_s", param_json(&f->ln_median_s), "sigma",
                                   param_json(&f->ln_sigma), "ks", f->ks_lognormal),
                         &ok);
                json_put(o, "weibull",
                         json_pack("{s:o, s:o, s:f}", "shape", param_json(&f->wb_shape), "scale_s",
                                   param_json(&f->wb_scale_s), "ks", f->ks_weibull),
                         &ok);
            }
            json_put(runtime, job_class_name((enum job_class)k), o, &ok);
        }
        for (size_t k = 0; k < t->n_gpus; k++) {
            char key[16];
            snprintf(key, sizeof key, "%d", (int)t->gpus[k]);
            json_put(gpus, key, json_real(t->gpu_weights[k]), &ok);
        }
        json_t *hourly = json_array(), *weekly = json_array();
        for (int h = 0; h < 24; h++)
            json_push(hourly, json_real(t->hourly[h]), &ok);
        for (int d = 0; d < 7; d++)
            json_push(weekly, json_real(t->weekly[d]), &ok);
        json_push(groups,
                  json_pack("{s:s, s:I, s:o, s:{s:f, s:I}, s:o, s:o, s:b, s:b, s:o, s:o, s:f, s:f, s:I, s:I}", "name",
                            g->name, "jobs", (json_int_t)g->jobs, "jobs_per_hour", param_json(&g->jobs_per_hour),
                            "interarrival", "ks", g->ks_interarrival, "n", (json_int_t)g->n_interarrival, "hourly",
                            hourly, "weekly", weekly, "hourly_fitted", g->hourly_fitted, "weekly_fitted",
                            g->weekly_fitted, "gpus", gpus, "runtime", runtime, "limit_factor", t->limit_factor,
                            "limit_round_s", t->limit_round_s, "limits", (json_int_t)g->n_limits, "gpu_values",
                            (json_int_t)g->gpu_values),
                  &ok);
        json_t *last = json_array_get(groups, json_array_size(groups) - 1);
        json_put(last, "gpu_values_merged",
                 json_pack("{s:I, s:f, s:f}", "counts", (json_int_t)g->gpu_values_merged, "jobs_share",
                           g->merged_jobs_share, "work_share", g->merged_work_share),
                 &ok);
        json_t *sizes = json_array();
        for (size_t k = 0; k < g->n_size_classes; k++) {
            const struct fit_runtime *f = &g->size_classes[k].runtime;
            json_push(sizes,
                      json_pack("{s:i, s:I, s:s, s:f, s:f}", "up_to_gpus", (int)g->size_classes[k].up_to_gpus, "n",
                                (json_int_t)f->n, "chosen", kind_name(f->chosen), "ks_lognormal", f->ks_lognormal,
                                "ks_weibull", f->ks_weibull),
                      &ok);
        }
        json_put(last, "runtime_by_gpus", sizes, &ok);
    }
    json_t *root = json_pack("{s:{s:s, s:s}, s:s, s:s, s:I, s:I, s:f, s:f, s:o}", "meta", "tool", "fleetsim", "version",
                             FLEETSIM_VERSION_STRING, "trace", a->trace, "by", by[r->by], "jobs", (json_int_t)r->jobs,
                             "runtime_zero", (json_int_t)r->runtime_zero, "window_s", r->window_s, "confidence",
                             erf(r->z / sqrt(2.0)), "groups", groups);
    if (root && rt->done) {
        json_t *fc = json_array();
        for (uint32_t i = 0; i < rt->reps; i++)
            json_push(fc, trip_json(&rt->forecast[i]), &ok);
        json_put(root, "round_trip",
                 json_pack("{s:I, s:I, s:s, s:o, s:o, s:o}", "nodes", (json_int_t)rt->nodes, "slots",
                           (json_int_t)rt->slots, "policy", a->policy, "replay", trip_json(&rt->replay),
                           "forecast_mean", trip_json(&rt->mean), "forecasts", fc),
                 &ok);
    }
    return cli_print_json(json_doc_whole(root, ok), JSON_INDENT(2) | JSON_REAL_PRECISION(10));
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
        return cli_fail(&err, CLI_IO);
    }
    if (fit_write_yaml(f.fp, r, a->trace) != 0) {
        int saved = errno;
        atomic_file_abort(&f);
        cli_error("cannot write '%s': %s", a->output, strerror(saved ? saved : EIO));
        return CLI_IO;
    }
    if (atomic_file_commit(&f, &err) != 0) {
        return cli_fail(&err, CLI_IO);
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
    if (a.output && (rc = cli_check_output(a.output, a.trace, NULL)) != CLI_OK)
        return rc;
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
        struct round_trip rt;
        memset(&rt, 0, sizeof rt);
        if (!a.quiet)
            warn_merged(&r);
        if (a.output || !a.json)
            rc = write_yaml(&a, &r);
        if (rc == CLI_OK)
            rc = round_trip_run(&a, &w, &r, &rt);
        if (rc == CLI_OK && a.json) {
            rc = print_json(&a, &r, &rt);
        } else if (rc == CLI_OK) {
            print_report(&r);
            print_round_trip(&a, &rt);
        }
        free(rt.forecast);
    }
    fit_result_release(&r);
    workload_release(&w);
    return rc;
}
