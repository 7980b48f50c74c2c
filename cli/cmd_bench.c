/* fleetsim bench: a policies x workloads matrix from a suite file, run in
 * parallel worker processes, reported as a markdown table, JSON and JUnit
 * XML, and gated against a baseline. Results are byte-identical whatever
 * -j is: each cell is a deterministic replay, computed in its own process
 * and put back in matrix order. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "models/cluster.h"
#include "models/simulation.h"
#include "report/bench_report.h"
#include "report/bench_suite.h"
#include "scenarios/build.h"
#include "scenarios/forecast.h"
#include "traces/trace.h"
#include "sim/buffers.h"

static const char bench_usage[] =
    "usage: fleetsim bench [options] SUITE.yaml\n"
    "\n"
    "Replays every workload of SUITE under every policy of it (see fleetsim-bench(1)\n"
    "for the file) and prints a markdown table: jobs, wait p50/p95, mean bounded\n"
    "slowdown, utilization, Jain's fairness index over teams, preemptions. A\n"
    "workload whose trace is missing is skipped with a message.\n"
    "\n"
    "options:\n"
    "      --json             print the results as JSON on stdout instead\n"
    "      --junit FILE       also write JUnit XML (one test case per cell)\n"
    "      --baseline FILE    compare with an earlier --json output: exit 1 naming\n"
    "                         each metric, policy and workload that got worse\n"
    "      --tolerance T      relative slack of the gate, '2%' or '0.02' (default 2%)\n"
    "  -j, --jobs N           worker processes (default: the number of CPUs)\n"
    "      --decide-timeout S a cell fails when one decide() call takes longer than S\n"
    "                         seconds of wall-clock time (default 10)\n"
    "  -q, --quiet            no progress or skip messages\n"
    "  -h, --help             this help\n"
    "\n"
    "exit codes: 0 ok, 1 a metric regressed, 2 usage or bad suite, 3 I/O error,\n"
    "4 a policy failed (broke its contract, crashed or did not return; the other\n"
    "cells are still run and printed)\n"
    "example: fleetsim bench tests/bench/ci.yaml --baseline tests/bench/ci-baseline.json\n";

struct bench_args {
    const char *suite, *junit, *baseline;
    double tolerance;
    int64_t jobs;
    int json, quiet, tolerance_given;
    double decide_timeout_s;
};

static int parse_tolerance(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || errno)
        return -1;
    if (*end == '%') {
        v /= 100;
        end++;
    }
    if (*end || v < 0 || v > 1e6)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, struct bench_args *a)
{
    enum { OPT_JSON = 256, OPT_JUNIT, OPT_BASELINE, OPT_TOLERANCE, OPT_DECIDE_TIMEOUT };
    static const struct option options[] = {
        {"json", no_argument, NULL, OPT_JSON},           {"junit", required_argument, NULL, OPT_JUNIT},
        {"baseline", required_argument, NULL, OPT_BASELINE}, {"tolerance", required_argument, NULL, OPT_TOLERANCE},
        {"decide-timeout", required_argument, NULL, OPT_DECIDE_TIMEOUT},
        {"jobs", required_argument, NULL, 'j'},          {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},                {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->tolerance = 0.02;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    a->jobs = cpus > 0 ? cpus : 1;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":j:qh", options, NULL)) != -1) {
        switch (c) {
        case OPT_DECIDE_TIMEOUT:
            if (cli_parse_seconds("--decide-timeout", optarg, &a->decide_timeout_s) != 0)
                return CLI_USAGE;
            break;
        case OPT_JSON:
            a->json = 1;
            break;
        case OPT_JUNIT:
            a->junit = optarg;
            break;
        case OPT_BASELINE:
            a->baseline = optarg;
            break;
        case OPT_TOLERANCE:
            if (parse_tolerance(optarg, &a->tolerance) != 0)
                return cli_usage_error("bench", "option '--tolerance' is '%s', expected e.g. '2%%' or '0.02'",
                                       optarg);
            a->tolerance_given = 1;
            break;
        case 'j':
            if (cli_parse_int("--jobs", optarg, 1, 1024, &a->jobs) != 0)
                return CLI_USAGE;
            break;
        case 'q':
            a->quiet = 1;
            break;
        case 'h':
            fputs(bench_usage, stdout);
            exit(CLI_OK);
        case ':':
            return cli_usage_error("bench", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("bench", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("bench", optind >= argc ? "no suite given" : "more than one suite given");
    a->suite = argv[optind];
    if (a->tolerance_given && !a->baseline)
        return cli_usage_error("bench", "--tolerance needs --baseline");
    if (a->junit && (cli_check_output(a->junit, a->suite) != CLI_OK || cli_check_output(a->junit, a->baseline) != CLI_OK))
        return CLI_USAGE;
    return CLI_OK;
}

/* A workload ready to replay, shared by every cell (workers inherit it). */
struct loaded {
    struct workload w;
    struct cluster c;
    enum sim_convention convention;
    /* a scenario workload: the scenario (the cluster and models borrow it),
     * its models and horizon */
    struct scenario *scenario;
    struct sim_models models;
    int ready;
    char note[BENCH_TEXT_MAX];
};

/* A scenario's generated jobs, as one forecast replication of it runs them. */
static int load_scenario_workload(const struct bench_args *a, const struct bench_workload *bw, struct loaded *l)
{
    l->scenario = malloc(sizeof *l->scenario);
    if (!l->scenario)
        return CLI_INTERNAL;
    scenario_init(l->scenario);
    int rc = cli_load_scenario(bw->trace, l->scenario, a->quiet);
    if (rc != CLI_OK)
        return rc;
    if (!l->scenario->has_workload) {
        cli_error("workload '%s': scenario '%s' has no workload section to generate jobs from", bw->name, bw->trace);
        return CLI_USAGE;
    }
    struct err err;
    err_clear(&err);
    uint64_t seed = forecast_seed(l->scenario, (uint32_t)bw->replication);
    workload_release(&l->w);
    if (scenario_build_workload(l->scenario, seed, &l->w, &err) != 0 ||
        scenario_build_cluster(l->scenario, &l->c, &err) != 0) {
        cli_print_err(&err);
        return CLI_USAGE;
    }
    if (bw->jobs > 0 && (size_t)bw->jobs < l->w.n)
        l->w.n = (size_t)bw->jobs;
    scenario_build_models(l->scenario, &l->models);
    l->models.seed = seed;
    l->convention = bw->convention;
    l->ready = 1;
    return CLI_OK;
}

/* The cluster a trace workload runs on, never guessed: the suite's nodes
 * and slots, else its machine list, else one beside the trace (openb's
 * node list, an SWF log's X.swf.machines) when the header gives no size,
 * else the header's MaxNodes/MaxProcs. */
static int bench_cluster(const struct bench_args *a, const struct bench_workload *bw, struct loaded *l)
{
    struct err err;
    err_clear(&err);
    int64_t nodes = bw->nodes, slots = bw->slots;
    char sibling[4096], desc[400];
    const char *machines = bw->machines[0] ? bw->machines : NULL;
    int sized = l->w.meta.max_nodes > 0 || l->w.meta.max_procs > 0;
    if (!machines && nodes < 0 && !sized && machines_sibling(bw->trace, sibling, sizeof sibling) == 0)
        machines = sibling;
    if (machines)
        return cli_cluster_from_machines(machines, a->quiet, &l->c, desc, sizeof desc);
    if (nodes < 0 && (!sized || cluster_shape_from_meta(&l->w.meta, workload_max_slots(&l->w), &nodes, &slots) !=
                                    CLUSTER_SHAPE_HEADER)) {
        cli_error("workload '%s': '%s' gives no machine size (no MaxNodes/MaxProcs header, no machine list beside "
                  "it): set 'nodes' and 'slots', or 'machines'",
                  bw->name, bw->trace);
        return CLI_USAGE;
    }
    if (cluster_init_homogeneous(&l->c, nodes, slots, &err) != 0) {
        cli_print_err(&err);
        return CLI_USAGE;
    }
    return CLI_OK;
}

static int load_workloads(const struct bench_args *a, const struct bench_suite *s, struct loaded *ld)
{
    for (size_t i = 0; i < s->n_workloads; i++) {
        const struct bench_workload *bw = &s->workloads[i];
        struct loaded *l = &ld[i];
        workload_init(&l->w);
        if (bw->is_scenario) {
            int rc = load_scenario_workload(a, bw, l);
            if (rc != CLI_OK)
                return rc;
            continue;
        }
        if (access(bw->trace, R_OK) != 0) {
            snprintf(l->note, sizeof l->note, "trace '%.400s' not found", bw->trace);
            if (!a->quiet)
                cli_warning("skipping workload '%s': trace '%s' not found", bw->name, bw->trace);
            continue;
        }
        workload_release(&l->w);
        int rc = cli_read_trace(bw->trace, TRACE_AUTO, SWF_REPLAY, 1, &l->w);
        if (rc != CLI_OK)
            return rc;
        if (bw->jobs > 0 && (size_t)bw->jobs < l->w.n)
            l->w.n = (size_t)bw->jobs; /* sorted by submit: a prefix is the trace's start */
        if ((rc = bench_cluster(a, bw, l)) != CLI_OK)
            return rc;
        l->convention = bw->convention;
        l->ready = 1;
    }
    return CLI_OK;
}

static void run_cell(const struct bench_policy *p, const struct loaded *l, double decide_timeout_s,
                     struct bench_cell *cell)
{
    struct policy_host pl;
    struct err err;
    err_clear(&err);
    struct policy_host_options po = {.extra_params = p->params, .host_name = "the simulator",
                                     .decide_timeout_s = decide_timeout_s};
    if (policy_host_open(&pl, p->spec, &po, &err) != 0) {
        cell->status = BENCH_CELL_FAILED;
        snprintf(cell->note, sizeof cell->note, "%s", err.msg);
        return;
    }
    struct sim_result res;
    struct sim_options opt;
    sim_options_init(&opt);
    opt.convention = l->convention;
    if (l->scenario) {
        opt.models = &l->models;
        opt.until_us = l->scenario->horizon.length_us;
    }
    if (simulation_run(&l->w, &l->c, &pl, &opt, &res, &err) != 0 ||
        bench_cell_measure(cell, &l->w, &res, &err) != 0) {
        cell->status = BENCH_CELL_FAILED;
        snprintf(cell->note, sizeof cell->note, "%s", err.msg);
    }
    sim_result_release(&res);
    policy_host_close(&pl);
}

struct worker {
    pid_t pid;
    int fd;
    size_t cell;
};

static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t got = read(fd, p, len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        p += got;
        len -= (size_t)got;
    }
    return 0;
}

/* Collects the oldest worker (so results come back in a fixed order). */
static int reap(struct worker *w, struct bench_cell *cells)
{
    struct bench_cell got;
    int rc = read_full(w->fd, &got, sizeof got);
    close(w->fd);
    int status;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cells[w->cell].status = BENCH_CELL_FAILED;
        if (WIFSIGNALED(status))
            snprintf(cells[w->cell].note, sizeof cells[w->cell].note, "worker process killed by signal %d",
                     WTERMSIG(status));
        else
            snprintf(cells[w->cell].note, sizeof cells[w->cell].note, "worker process died");
        return 0;
    }
    cells[w->cell] = got;
    return 0;
}

static int run_cells(const struct bench_args *a, const struct bench_suite *s, const struct loaded *ld,
                     struct bench_cell *cells, size_t n)
{
    size_t nw = s->n_workloads;
    if (a->jobs <= 1) {
        for (size_t i = 0; i < n; i++)
            if (cells[i].status == BENCH_CELL_OK)
                run_cell(&s->policies[i / nw], &ld[i % nw], a->decide_timeout_s, &cells[i]);
        return CLI_OK;
    }
    struct worker *ws = calloc((size_t)a->jobs, sizeof *ws);
    if (!ws)
        return CLI_INTERNAL;
    size_t head = 0, tail = 0; /* ring of running workers, oldest first */
    fflush(NULL);
    for (size_t i = 0; i < n; i++) {
        if (cells[i].status != BENCH_CELL_OK)
            continue;
        if (tail - head == (size_t)a->jobs)
            reap(&ws[head++ % (size_t)a->jobs], cells);
        int fds[2];
        if (pipe(fds) != 0) {
            cli_error("cannot create a pipe: %s", strerror(errno));
            free(ws);
            return CLI_INTERNAL;
        }
        pid_t pid = fork();
        if (pid < 0) {
            cli_error("cannot start a worker: %s", strerror(errno));
            free(ws);
            return CLI_INTERNAL;
        }
        if (pid == 0) {
            close(fds[0]);
            run_cell(&s->policies[i / nw], &ld[i % nw], a->decide_timeout_s, &cells[i]);
            _exit(buffers_write_all(fds[1], &cells[i], sizeof cells[i]) == 0 ? 0 : 1);
        }
        close(fds[1]);
        ws[tail++ % (size_t)a->jobs] = (struct worker){pid, fds[0], i};
    }
    while (head < tail)
        reap(&ws[head++ % (size_t)a->jobs], cells);
    free(ws);
    return CLI_OK;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A spec that does not parse is the suite's fault: say so before running. */
static int check_policies(const struct bench_suite *s)
{
    for (size_t i = 0; i < s->n_policies; i++) {
        struct policy_host pl;
        struct err err;
        err_clear(&err);
        struct policy_host_options po = {.extra_params = s->policies[i].params, .host_name = "the simulator"};
        if (policy_host_open(&pl, s->policies[i].spec, &po, &err) != 0) {
            cli_error("policy '%s': %s", s->policies[i].name, err.msg);
            return strstr(err.msg, "cannot load policy plugin") ? CLI_IO : CLI_USAGE;
        }
        policy_host_close(&pl);
    }
    return CLI_OK;
}

static int gate(const struct bench_args *a, const struct bench_cell *cells, size_t n, struct bench_regression **regs,
                size_t *n_regs)
{
    struct bench_cell *base;
    size_t n_base, missing;
    struct err err;
    err_clear(&err);
    if (bench_read_json(a->baseline, &base, &n_base, &err) != 0) {
        cli_print_err(&err);
        return strstr(err.msg, "cannot read") ? CLI_IO : CLI_USAGE;
    }
    if (bench_compare(base, n_base, cells, n, a->tolerance, regs, n_regs, &missing) != 0) {
        free(base);
        return CLI_INTERNAL;
    }
    free(base);
    for (size_t r = 0; r < *n_regs; r++) {
        const struct bench_regression *g = &(*regs)[r];
        const struct bench_metric *m = &bench_metrics[g->metric];
        double rel = g->baseline != 0 ? (g->current - g->baseline) / g->baseline * 100 : 0;
        fprintf(stderr,
                "fleetsim: regression: %s of policy '%s' on workload '%s': %.6g -> %.6g (%+.1f%%, %s is better, "
                "tolerance %g%%)\n",
                m->key, cells[g->cell].policy, cells[g->cell].workload, g->baseline, g->current, rel,
                m->higher_is_better ? "higher" : "lower", a->tolerance * 100);
    }
    if (missing && !a->quiet)
        cli_warning("%zu cells have no baseline to compare with", missing);
    return *n_regs ? CLI_GATE : CLI_OK;
}

int cmd_bench(int argc, char **argv)
{
    struct bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK)
        return rc;
    struct bench_suite s;
    struct diag_list diags;
    struct err err;
    diag_list_init(&diags, 100);
    err_clear(&err);
    rc = cli_finish_load(bench_suite_load(a.suite, &s, &diags, &err), &diags, &err, a.quiet);
    if (rc != CLI_OK)
        return rc;
    size_t n = s.n_policies * s.n_workloads;
    struct loaded *ld = calloc(s.n_workloads, sizeof *ld);
    struct bench_cell *cells = calloc(n ? n : 1, sizeof *cells);
    struct bench_regression *regs = NULL;
    size_t n_regs = 0;
    if (!ld || !cells) {
        rc = CLI_INTERNAL;
        goto done;
    }
    if ((rc = check_policies(&s)) != CLI_OK || (rc = load_workloads(&a, &s, ld)) != CLI_OK)
        goto done;
    for (size_t i = 0; i < n; i++) {
        struct bench_cell *c = &cells[i];
        snprintf(c->policy, sizeof c->policy, "%s", s.policies[i / s.n_workloads].name);
        snprintf(c->workload, sizeof c->workload, "%s", s.workloads[i % s.n_workloads].name);
        if (!ld[i % s.n_workloads].ready) {
            c->status = BENCH_CELL_SKIPPED;
            snprintf(c->note, sizeof c->note, "%s", ld[i % s.n_workloads].note);
        }
    }
    double t0 = now_s();
    if ((rc = run_cells(&a, &s, ld, cells, n)) != CLI_OK)
        goto done;
    if (!a.quiet)
        fprintf(stderr, "fleetsim: bench: %zu cells (%zu policies x %zu workloads) in %.2f s with %lld workers\n", n,
                s.n_policies, s.n_workloads, now_s() - t0, (long long)a.jobs);
    if (a.json) {
        if (bench_write_json(stdout, a.suite, cells, n, &err) != 0) {
            cli_print_err(&err);
            rc = CLI_IO;
            goto done;
        }
    } else {
        bench_write_markdown(stdout, cells, n);
    }
    fflush(stdout);
    if (a.baseline)
        rc = gate(&a, cells, n, &regs, &n_regs);
    if (a.junit && bench_write_junit(a.junit, a.suite, cells, n, regs, n_regs, &err) != 0) {
        cli_print_err(&err);
        rc = CLI_IO;
    }
    for (size_t i = 0; i < n && (rc == CLI_OK || rc == CLI_GATE); i++) {
        if (cells[i].status == BENCH_CELL_FAILED) {
            cli_error("policy '%s' failed on workload '%s': %s", cells[i].policy, cells[i].workload, cells[i].note);
            rc = CLI_INTERNAL;
        }
    }
done:
    for (size_t i = 0; ld && i < s.n_workloads; i++) {
        workload_release(&ld[i].w);
        if (ld[i].ready)
            cluster_release(&ld[i].c);
        if (ld[i].scenario) {
            scenario_release(ld[i].scenario);
            free(ld[i].scenario);
        }
    }
    free(ld);
    free(cells);
    free(regs);
    bench_suite_release(&s);
    return rc;
}
