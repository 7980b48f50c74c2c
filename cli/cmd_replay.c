/* fleetsim replay: a trace, a policy, a cluster -> a summary (and per-job CSV). */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "models/cluster.h"
#include "models/policy_plugin.h"
#include "models/rlscheduler.h"
#include "models/simulation.h"
#include "policies/registry.h"
#include "report/json_doc.h"
#include "report/summary.h"
#include "scenarios/build.h"
#include "scenarios/scenario.h"
#include "traces/machines.h"
#include "traces/swf.h"
#include "traces/trace.h"

static const char replay_usage[] =
    "usage: fleetsim replay [options] TRACE\n"
    "\n"
    "Replays the jobs of TRACE (SWF, sacct, native .jsonl, or a GPU trace: Philly,\n"
    "Helios/Acme, PAI, openb, ITP; any of them gzipped) on a cluster under\n"
    "a scheduling policy and prints a summary: jobs run and skipped, makespan,\n"
    "utilization, mean/p50/p95/p99 wait, mean bounded slowdown (10 s bound) and\n"
    "the longest queue. Jobs are killed at their requested time.\n"
    "\n"
    "options:\n"
    "  -p, --policy SPEC     ORDERING[+BACKFILL][+PLACEMENT][+preempt][+quota], each with\n"
    "                        optional (name=value,...) parameters, e.g. sjf+easy or\n"
    "                        fairshare(half_life_s=3600)+easy+pack (default: fcfs+easy;\n"
    "                        'fleetsim policy list' shows every component); or a plugin,\n"
    "                        ./mypolicy.so[:PARAMS], built against policies/policy.h\n"
    "      --policy-params P the policy's parameters: a plugin's params string, or the\n"
    "                        ordering's name=value,... list of a built-in\n"
    "      --decide-timeout S  stop with an error when one decide() call takes longer\n"
    "                        than S seconds of wall-clock time (default 10)\n"
    "      --scenario FILE   the cluster, fabric, failures and procurement of a scenario\n"
    "                        (see 'fleetsim help scenario'); the trace's runtimes are taken\n"
    "                        as runtimes on the reference hardware (H100 SXM)\n"
    "      --nodes N         cluster nodes (default: from the trace header)\n"
    "      --slots K         slots (GPUs, processors) per node (default: from the header)\n"
    "      --machines FILE   the cluster from a machine or node list: one node per GPU\n"
    "                        machine (openb node list, Philly machine list, PAI machine\n"
    "                        spec, Helios cluster_gpu_number, Alea .machines). An\n"
    "                        openb pod list finds its node list by itself, and an SWF\n"
    "                        log without a header its X.swf.machines\n"
    "      --format F        trace format (default: auto): auto, swf, jsonl, sacct,\n"
    "                        philly, helios, acme, pai, openb, itp\n"
    "      --jobs-csv FILE   write one row per job (start, end, wait, outcome); a FILE that\n"
    "                        cannot be written is refused before the trace is read\n"
    "      --convention NAME what happens first at one instant: fleetsim (every event\n"
    "                        of the instant, then one pass; the default), pyss or cqsim\n"
    "                        (a pass per event, ends and arrivals ordered as those\n"
    "                        simulators order them; see README, \"Tie rules\")\n"
    "      --json            print the summary as JSON on stdout (it names the convention)\n"
    "  -q, --quiet           do not print warnings\n"
    "      --protocol rlscheduler\n"
    "                        the RLScheduler (SC'20) evaluation protocol: ten windows of\n"
    "                        1024 jobs, each on an empty machine; prints each window's\n"
    "                        bsld and utilization and their means. SPEC is then\n"
    "                        ORDERING[+backfill] (the protocol's own backfilling)\n"
    "      --compat-wait     with --protocol: evaluate wfp3/unicep with the reference\n"
    "                        code's wait (-1 - submit), as its published tables do\n"
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 ok, 1 the policy started none of the jobs it could run, 2 usage or bad\n"
    "trace, 3 I/O error, 4 internal error, out of memory, or a policy that broke its\n"
    "contract, crashed or did not return (the message names it)\n"
    "example: fleetsim replay --policy sjf+easy ../shared/traces/HPC2N-2002-2.2-cln.swf.gz\n";

struct replay_args {
    const char *scenario;
    const char *trace;
    const char *policy;
    const char *policy_params;
    const char *jobs_csv;
    const char *protocol;
    const char *machines;
    enum trace_format format;
    enum sim_convention convention;
    int convention_set;
    int64_t nodes, slots;
    int json, quiet, compat_wait;
    double decide_timeout_s;
};

static int parse_args(int argc, char **argv, struct replay_args *a)
{
    enum { OPT_NODES = 256, OPT_SLOTS, OPT_FORMAT, OPT_JOBS_CSV, OPT_JSON, OPT_PROTOCOL, OPT_COMPAT, OPT_SCENARIO,
           OPT_POLICY_PARAMS, OPT_DECIDE_TIMEOUT, OPT_CONVENTION, OPT_MACHINES };
    static const struct option options[] = {
        {"policy", required_argument, NULL, 'p'},    {"nodes", required_argument, NULL, OPT_NODES},
        {"slots", required_argument, NULL, OPT_SLOTS}, {"format", required_argument, NULL, OPT_FORMAT},
        {"jobs-csv", required_argument, NULL, OPT_JOBS_CSV}, {"json", no_argument, NULL, OPT_JSON},
        {"protocol", required_argument, NULL, OPT_PROTOCOL}, {"compat-wait", no_argument, NULL, OPT_COMPAT},
        {"quiet", no_argument, NULL, 'q'},          {"help", no_argument, NULL, 'h'},
        {"scenario", required_argument, NULL, OPT_SCENARIO},
        {"policy-params", required_argument, NULL, OPT_POLICY_PARAMS},
        {"decide-timeout", required_argument, NULL, OPT_DECIDE_TIMEOUT},
        {"convention", required_argument, NULL, OPT_CONVENTION},
        {"machines", required_argument, NULL, OPT_MACHINES},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->policy = "fcfs+easy";
    a->nodes = a->slots = -1;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":p:qh", options, NULL)) != -1) {
        switch (c) {
        case 'p':
            a->policy = optarg;
            break;
        case OPT_NODES:
            if (cli_parse_int("--nodes", optarg, 1, CLUSTER_MAX_NODES, &a->nodes) != 0)
                return CLI_USAGE;
            break;
        case OPT_SLOTS:
            if (cli_parse_int("--slots", optarg, 1, CLUSTER_MAX_NODE_SLOTS, &a->slots) != 0)
                return CLI_USAGE;
            break;
        case OPT_FORMAT:
            if (cli_parse_format("replay", optarg, &a->format) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_JOBS_CSV:
            if (strcmp(optarg, "-") == 0)
                return cli_usage_error("replay", "--jobs-csv needs a file: standard output carries the summary "
                                                 "(/dev/stdout puts the rows there too, before it)");
            a->jobs_csv = optarg;
            break;
        case OPT_JSON:
            a->json = 1;
            break;
        case OPT_PROTOCOL:
            if (strcmp(optarg, "rlscheduler") != 0)
                return cli_usage_error("replay", "unknown protocol '%s' (rlscheduler)", optarg);
            a->protocol = optarg;
            break;
        case OPT_COMPAT:
            a->compat_wait = 1;
            break;
        case OPT_SCENARIO:
            a->scenario = optarg;
            break;
        case OPT_POLICY_PARAMS:
            a->policy_params = optarg;
            break;
        case OPT_MACHINES:
            a->machines = optarg;
            break;
        case OPT_DECIDE_TIMEOUT:
            if (cli_parse_seconds("--decide-timeout", optarg, &a->decide_timeout_s) != 0)
                return CLI_USAGE;
            break;
        case OPT_CONVENTION:
            if (simulation_convention_parse(optarg, &a->convention) != 0)
                return cli_usage_error("replay", "unknown convention '%s' (" SIM_CONVENTION_NAMES ")", optarg);
            a->convention_set = 1;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'h':
            fputs(replay_usage, stdout);
            exit(CLI_OK);
        case ':':
            return cli_usage_error("replay", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("replay", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("replay", optind >= argc ? "no trace given" : "more than one trace given");
    a->trace = argv[optind];
    if (a->policy_params && a->protocol)
        return cli_usage_error("replay", "--policy-params does not apply to --protocol rlscheduler");
    if (a->compat_wait && !a->protocol)
        return cli_usage_error("replay", "--compat-wait only applies with --protocol rlscheduler");
    if (a->scenario && (a->nodes > 0 || a->slots > 0))
        return cli_usage_error("replay", "--scenario sets the cluster: drop --nodes and --slots");
    if (a->scenario && a->protocol)
        return cli_usage_error("replay", "--scenario does not apply to --protocol rlscheduler");
    if (a->convention_set && a->protocol)
        return cli_usage_error("replay", "--convention does not apply to --protocol rlscheduler (it has its own)");
    if (a->slots > 0 && a->nodes < 0)
        return cli_usage_error("replay", "--slots needs --nodes");
    if (a->machines && (a->scenario || a->nodes > 0 || a->protocol))
        return cli_usage_error("replay", "--machines sets the cluster: drop --scenario, --nodes, --slots and --protocol");
    return CLI_OK;
}

/* The machine --nodes/--slots or the trace's header gives: 1 when one of
 * them does (the jobs are not needed then, so a replay may start before
 * they are read: replay_fed). */
static int shape_given(const struct replay_args *a, const struct workload_meta *meta, int64_t *nodes,
                       int64_t *slots)
{
    if (a->nodes > 0) {
        *nodes = a->nodes;
        *slots = a->slots > 0 ? a->slots : 1;
        return 1;
    }
    return cluster_shape_from_meta(meta, 0, nodes, slots) == CLUSTER_SHAPE_HEADER;
}

/* Nodes and slots per node from the options, else the trace header, else
 * guessed from the largest job. */
static int resolve_shape(const struct replay_args *a, const struct workload *w, int64_t *nodes, int64_t *slots)
{
    if (shape_given(a, &w->meta, nodes, slots))
        return CLI_OK;
    enum cluster_shape_source src = cluster_shape_from_meta(&w->meta, workload_max_slots(w), nodes, slots);
    if (src == CLUSTER_SHAPE_NONE) {
        cli_error("'%s' gives no machine size and has no jobs to guess it from: use --nodes and --slots",
                  a->trace);
        return CLI_USAGE;
    }
    if (src == CLUSTER_SHAPE_LARGEST_JOB && !a->quiet)
        cli_warning("'%s' has no MaxNodes/MaxProcs header: assuming %lld slots, the largest job; "
                    "use --nodes and --slots to set the machine",
                    a->trace, (long long)*nodes);
    return CLI_OK;
}

/* What a GPU trace without a machine list needs, by format. */
static const char *gpu_cluster_hint(enum trace_format f)
{
    switch (f) {
    case TRACE_PHILLY:
        return "--machines with Philly's cluster_machine_list or revised_machine_list (the latter counts the GPUs "
               "that reported), or --nodes and --slots";
    case TRACE_OPENB:
        return "--machines with the openb node list (openb_node_list_gpu_node.csv, found by itself beside "
               "openb_pod_list_*.csv), or --nodes and --slots";
    case TRACE_PAI:
        return "--machines with pai_machine_spec.csv, or --nodes and --slots";
    case TRACE_ITP:
        return "--nodes and --slots: the ITP release gives no cluster sizes (ElasticFlow's simulator uses shapes "
               "such as 16 nodes x 8 GPUs; traces/README.md sizes each cluster by one rule)";
    default:
        return "--machines with the cluster's cluster_gpu_number.csv (Helios: its largest daily total in 8-GPU "
               "nodes), or --nodes and --slots (Helios and Acme nodes have 8 GPUs)";
    }
}

static void describe_cluster(const struct cluster *c, const char *scenario, char *buf, size_t len)
{
    if (!scenario) {
        snprintf(buf, len, "%u nodes x %d slots = %lld slots", c->n_nodes, c->max_node_slots,
                 (long long)c->total_slots);
        return;
    }
    uint32_t now = 0, later = 0;
    int64_t gpus = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        if (c->nodes[i].order < 0) {
            now++;
            gpus += c->nodes[i].slots;
        } else {
            later++;
        }
    }
    int n = snprintf(buf, len, "%u nodes, %lld GPUs", now, (long long)gpus);
    if (later && n > 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ", and %u nodes on order", later);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, " (%s)", scenario);
}

static void report_skipped(const struct replay_args *a, const struct workload *w, const struct sim_result *r,
                           int64_t total_slots)
{
    size_t shown = 0, hidden = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (r->jobs[i].outcome != SIM_JOB_SKIPPED_TOO_BIG)
            continue;
        if (a->quiet || shown >= 20) {
            hidden++;
            continue;
        }
        shown++;
        fprintf(stderr, "%s:%ld: warning: job '%lld' needs %d slots, more than the cluster's %lld: skipped\n",
                a->trace, w->jobs[i].source_line, (long long)w->jobs[i].id, w->jobs[i].slots,
                (long long)total_slots);
    }
    if (hidden && !a->quiet)
        fprintf(stderr, "fleetsim: %zu more jobs larger than the cluster skipped\n", hidden);
}

/* What a replay run while its trace was read leaves (replay_fed). */
struct replay_fed {
    struct cluster cluster;
    struct policy_host policy;
    struct sim_result result;
    int64_t slots;
    int stands; /* 1: the replay is done, on the workload as read whole */
};

/* A gzip'd SWF log (one member) under a built-in policy, on the machine its
 * header or --nodes gives, with no scenario or machine list: the replay runs
 * while a thread reads the log (swf_feed_start), so that it waits only for
 * the first lines rather than for the whole load (HPC2N's 30 ms). Returns
 * 1 when it does not apply (nothing read), else the read's status as
 * trace_read_format's, w read whole. Anything else (no header, a machine
 * or policy that cannot be made, a feed that broke, an error in the
 * replay) leaves the replay to the caller, which runs it again on w, with
 * the usual messages in the usual order. */
static int replay_fed(const struct replay_args *a, struct workload *w, struct diag_list *diags, struct err *rerr,
                      struct replay_fed *f)
{
    memset(f, 0, sizeof *f);
    if (a->scenario || a->machines || policy_plugin_is_path(a->policy) ||
        (a->format != TRACE_AUTO && a->format != TRACE_SWF) ||
        (a->format == TRACE_AUTO && trace_format_from_name(a->trace) != TRACE_SWF))
        return 1;
    struct workload_feed feed;
    struct swf_feed *sf = swf_feed_start(a->trace, w, diags, rerr, &feed);
    if (!sf)
        return 1;
    struct workload_meta head;
    int64_t nodes = 0, slots = 0;
    struct err err;
    err_clear(&err);
    int go = swf_feed_header(sf, &head) == 0 && shape_given(a, &head, &nodes, &slots) &&
             cluster_init_homogeneous(&f->cluster, nodes, slots, &err) == 0;
    int opened = go && cli_policy_open(a->policy, a->policy_params, a->decide_timeout_s, &f->policy, &err) == 0;
    struct sim_options opt;
    sim_options_init(&opt);
    opt.convention = a->convention;
    opt.feed = &feed;
    int ran = opened ? simulation_run(w, &f->cluster, &f->policy, &opt, &f->result, &err) : SIM_FEED_BROKEN;
    int kept;
    int rc = swf_feed_finish(sf, &kept);
    f->stands = ran == 0 && kept && rc == 0;
    f->slots = slots;
    if (!f->stands) {
        sim_result_release(&f->result);
        if (opened)
            policy_host_close(&f->policy);
        cluster_release(&f->cluster);
        memset(f, 0, sizeof *f);
    }
    return rc;
}

static int replay_normal(const struct replay_args *a)
{
    struct workload w;
    struct diag_list diags;
    struct err rerr;
    diag_list_init(&diags, 1000);
    err_clear(&rerr);
    workload_init(&w);
    enum trace_format used = TRACE_SWF;
    struct replay_fed fed;
    int rc = replay_fed(a, &w, &diags, &rerr, &fed);
    if (rc == 1)
        rc = trace_read_format(a->trace, a->format, SWF_REPLAY, &w, &diags, &rerr, &used);
    if ((rc = cli_finish_load(rc, &diags, &rerr, a->quiet)) != CLI_OK) {
        workload_release(&w);
        return rc;
    }
    int64_t nodes, slots = fed.slots;
    char machines_desc[400] = "";
    char sibling[4096];
    const char *machines = a->machines;
    /* a machine list beside the trace: openb's node list; Alea's .machines
     * beside an SWF log that has no header to size the machine */
    int headerless_swf = used == TRACE_SWF && w.meta.max_nodes < 0 && w.meta.max_procs < 0;
    if (!machines && !a->scenario && a->nodes < 0 && (used == TRACE_OPENB || headerless_swf) &&
        machines_sibling(a->trace, sibling, sizeof sibling) == 0)
        machines = sibling;
    struct cluster cluster = fed.cluster;
    struct policy_host plugin = fed.policy;
    struct sim_result result = fed.result;
    struct err err;
    err_clear(&err);
    struct scenario scen;
    struct sim_models models;
    struct sim_options opt;
    scenario_init(&scen);
    sim_options_init(&opt);
    opt.convention = a->convention;
    if (fed.stands) {
        /* the replay ran as the trace was read */
    } else if (a->scenario) {
        if ((rc = cli_load_scenario(a->scenario, &scen, a->quiet)) != CLI_OK)
            goto done;
        if (scenario_build_cluster(&scen, &cluster, &err) != 0) {
            rc = cli_fail(&err, CLI_USAGE);
            goto done;
        }
        scenario_build_models(&scen, &models);
        opt.models = &models;
        nodes = cluster.n_nodes;
        slots = cluster.max_node_slots;
    } else if (machines) {
        if ((rc = cli_cluster_from_machines(machines, a->quiet, &cluster, machines_desc, sizeof machines_desc)) != CLI_OK)
            goto done;
        nodes = cluster.n_nodes;
        slots = cluster.max_node_slots;
    } else if (trace_format_is_gpu(used) && a->nodes < 0) {
        cli_error("'%s' (%s) gives no machine size: give %s; or --scenario FILE", a->trace, trace_format_name(used),
                  gpu_cluster_hint(used));
        rc = CLI_USAGE;
        goto done;
    } else {
        if ((rc = resolve_shape(a, &w, &nodes, &slots)) != CLI_OK)
            goto done;
        if (cluster_init_homogeneous(&cluster, nodes, slots, &err) != 0) {
            rc = cli_fail(&err, CLI_USAGE);
            goto done;
        }
    }
    if (!fed.stands) {
        if ((rc = cli_open_policy(a->policy, a->policy_params, a->decide_timeout_s, &plugin)) != CLI_OK)
            goto done;
        if (simulation_run(&w, &cluster, &plugin, &opt, &result, &err) != 0) {
            cli_print_err(&err);
            rc = CLI_INTERNAL;
            goto done;
        }
    }
    report_skipped(a, &w, &result, cluster.total_slots);
    struct replay_summary s;
    if (summary_compute(&w, &result, &s, &err) != 0) {
        cli_print_err(&err);
        rc = CLI_INTERNAL;
        goto done;
    }
    if (a->jobs_csv && summary_write_jobs_csv(a->jobs_csv, &w, &result, &err) != 0) {
        rc = cli_fail(&err, CLI_IO);
        goto done;
    }
    if (a->json) {
        if (summary_write_json(stdout, &s, a->trace, a->policy, simulation_convention_name(a->convention),
                               cluster.n_nodes, (int32_t)slots, &err) != 0)
            rc = cli_fail(&err, CLI_IO);
    } else {
        char desc[400];
        if (machines_desc[0])
            snprintf(desc, sizeof desc, "%s", machines_desc);
        else
            describe_cluster(&cluster, a->scenario, desc, sizeof desc);
        summary_write_text(stdout, &s, a->trace, a->policy,
                           a->convention == SIM_CONVENTION_FLEETSIM ? NULL : simulation_convention_name(a->convention),
                           desc);
    }
    /* Waits of jobs that never started would read as a perfect policy. */
    size_t runnable = w.n - result.stats.skipped_too_big - result.stats.skipped_invalid;
    if (rc == CLI_OK && runnable > 0 && result.stats.starts == 0) {
        cli_error("policy '%s' started none of the %zu jobs it could run: its figures mean nothing", a->policy,
                  runnable);
        rc = CLI_GATE;
    }
done:
    sim_result_release(&result);
    policy_host_close(&plugin);
    cluster_release(&cluster);
    scenario_release(&scen);
    workload_release(&w);
    return rc;
}

static int parse_protocol_policy(const char *spec, struct rlscheduler_options *o)
{
    const char *plus = strchr(spec, '+');
    size_t len = plus ? (size_t)(plus - spec) : strlen(spec);
    if (ordering_parse(spec, len, &o->ordering) != 0)
        return cli_usage_error("replay", "unknown ordering '%.*s' (fcfs, sjf, f1, wfp3, unicep)", (int)len, spec);
    o->backfill = 0;
    if (plus) {
        if (strcmp(plus + 1, "backfill") != 0)
            return cli_usage_error("replay",
                                   "the rlscheduler protocol has one backfilling, '+backfill', not '%s'", plus + 1);
        o->backfill = 1;
    }
    return CLI_OK;
}

static int replay_protocol(const struct replay_args *a)
{
    struct rlscheduler_options o = {0};
    int rc = parse_protocol_policy(a->policy, &o);
    if (rc != CLI_OK)
        return rc;
    struct workload w;
    if ((rc = cli_read_trace(a->trace, a->format, SWF_RLSCHEDULER, a->quiet, &w)) != CLI_OK) {
        workload_release(&w);
        return rc;
    }
    o.compat_wait = a->compat_wait;
    o.window_len = RLSCHEDULER_WINDOW_LEN;
    if (a->nodes > 0) {
        o.nodes = a->nodes;
        o.procs = a->nodes * (a->slots > 0 ? a->slots : 1);
    } else {
        o.nodes = w.meta.max_nodes;
        o.procs = w.meta.max_procs > 0 ? w.meta.max_procs : w.meta.max_nodes;
    }
    if (o.nodes < 1) {
        cli_error("'%s' has no MaxNodes header: give --nodes (and --slots)", a->trace);
        workload_release(&w);
        return CLI_USAGE;
    }
    struct rlscheduler_window win[RLSCHEDULER_WINDOWS];
    struct err err;
    err_clear(&err);
    if (rlscheduler_run(&w, &o, rlscheduler_window_starts, RLSCHEDULER_WINDOWS, win, &err) != 0) {
        cli_print_err(&err);
        workload_release(&w);
        return CLI_USAGE;
    }
    double bsld = 0, util = 0;
    for (size_t k = 0; k < RLSCHEDULER_WINDOWS; k++) {
        bsld += win[k].bsld;
        util += win[k].utilization;
    }
    bsld /= RLSCHEDULER_WINDOWS;
    util /= RLSCHEDULER_WINDOWS;
    if (a->json) {
        int ok = 1;
        json_t *windows = json_array();
        for (size_t k = 0; k < RLSCHEDULER_WINDOWS; k++)
            json_push(windows,
                      json_pack("{s:I, s:I, s:f, s:f}", "start", (json_int_t)win[k].start, "first_id",
                                (json_int_t)win[k].first_id, "bsld", win[k].bsld, "utilization", win[k].utilization),
                      &ok);
        json_t *root = json_pack("{s:{s:s, s:s}, s:s, s:s, s:s, s:b, s:o, s:f, s:f}", "meta", "tool", "fleetsim",
                                 "version", FLEETSIM_VERSION_STRING, "protocol", "rlscheduler", "trace", a->trace,
                                 "policy", a->policy, "compat_wait", a->compat_wait, "windows", windows, "bsld_mean",
                                 bsld, "utilization_mean", util);
        rc = cli_print_json(json_doc_whole(root, ok), JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
    } else {
        printf("protocol     rlscheduler (SC'20), %s%s\n", a->policy, a->compat_wait ? ", compat wait" : "");
        printf("trace        %s (%zu jobs; machine %lld nodes, %lld processors)\n", a->trace, w.n,
               (long long)o.nodes, (long long)o.procs);
        printf("%-8s %8s %10s %12s %12s\n", "window", "start", "first_id", "bsld", "utilization");
        for (size_t k = 0; k < RLSCHEDULER_WINDOWS; k++)
            printf("%-8zu %8zu %10lld %12.2f %12.3f\n", k + 1, win[k].start, (long long)win[k].first_id,
                   win[k].bsld, win[k].utilization);
        printf("%-8s %8s %10s %12.2f %12.3f\n", "mean", "", "", bsld, util);
    }
    workload_release(&w);
    return rc;
}

int cmd_replay(int argc, char **argv)
{
    struct replay_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    if (a.jobs_csv && (rc = cli_check_output(a.jobs_csv, a.trace, a.scenario)) != CLI_OK)
        return rc;
    return a.protocol ? replay_protocol(&a) : replay_normal(&a);
}
