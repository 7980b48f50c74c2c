/* fleetsim bench: a policies x workloads matrix from a suite file, run in
 * parallel worker processes, reported as a markdown table, JSON and JUnit
 * XML, and gated against a baseline. Results are byte-identical whatever
 * -j is: each cell is a deterministic replay, computed in its own process
 * and put back in matrix order. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/slurm_array.h"
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
    "      --slurm            run the cells as a Slurm job array (and a merge job that\n"
    "                         depends on it) instead of local workers; the output is\n"
    "                         the same bytes. Needs sbatch on PATH and a current folder\n"
    "                         (or $FLEETSIM_SLURM_DIR) that the nodes share; checked\n"
    "                         by a probe job first\n"
    "      --partition P      the Slurm partition (default: the cluster's default)\n"
    "      --decide-timeout S a cell fails when one decide() call takes longer than S\n"
    "                         seconds of wall-clock time (default 10)\n"
    "  -q, --quiet            no progress or skip messages\n"
    "  -h, --help             this help\n"
    "\n"
    "exit codes: 0 ok, 1 a metric regressed, 2 usage or bad suite, 3 I/O error (or\n"
    "--slurm cannot run: no sbatch, a folder the nodes do not see),\n"
    "4 a policy failed (broke its contract, crashed or did not return; the other\n"
    "cells are still run and printed; with --slurm also a task that failed),\n"
    "130 interrupted (--slurm: the jobs are cancelled)\n"
    "example: fleetsim bench tests/bench/ci.yaml --baseline tests/bench/ci-baseline.json\n";

struct bench_args {
    const char *suite, *junit, *baseline;
    const char *partition;
    int slurm;
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
    enum { OPT_JSON = 256, OPT_JUNIT, OPT_BASELINE, OPT_TOLERANCE, OPT_DECIDE_TIMEOUT, OPT_SLURM, OPT_PARTITION };
    static const struct option options[] = {
        {"json", no_argument, NULL, OPT_JSON},           {"junit", required_argument, NULL, OPT_JUNIT},
        {"baseline", required_argument, NULL, OPT_BASELINE}, {"tolerance", required_argument, NULL, OPT_TOLERANCE},
        {"decide-timeout", required_argument, NULL, OPT_DECIDE_TIMEOUT},
        {"slurm", no_argument, NULL, OPT_SLURM},         {"partition", required_argument, NULL, OPT_PARTITION},
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
        case OPT_SLURM:
            a->slurm = 1;
            break;
        case OPT_PARTITION:
            a->partition = optarg;
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
    if (a->partition && !a->slurm)
        return cli_usage_error("bench", "--partition is for --slurm");
    if (a->tolerance_given && !a->baseline)
        return cli_usage_error("bench", "--tolerance needs --baseline");
    int rc = CLI_OK;
    if (a->junit && (rc = cli_check_output(a->junit, a->suite, a->baseline)) != CLI_OK)
        return rc;
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

/* Frees ld (n entries, NULL: nothing) and what it holds. */
static void release_loaded(struct loaded *ld, size_t n)
{
    for (size_t i = 0; ld && i < n; i++) {
        workload_release(&ld[i].w);
        if (ld[i].ready)
            cluster_release(&ld[i].c);
        if (ld[i].scenario) {
            scenario_release(ld[i].scenario);
            free(ld[i].scenario);
        }
    }
    free(ld);
}

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
        return cli_fail(&err, CLI_USAGE);
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
        return cli_fail(&err, CLI_USAGE);
    }
    return CLI_OK;
}

/* Loads every workload, or only workload `only` (< n_workloads: a Slurm
 * task needs one). */
static int load_workloads(const struct bench_args *a, const struct bench_suite *s, struct loaded *ld, size_t only)
{
    for (size_t i = 0; i < s->n_workloads; i++) {
        const struct bench_workload *bw = &s->workloads[i];
        struct loaded *l = &ld[i];
        workload_init(&l->w);
        if (only < s->n_workloads && i != only)
            continue;
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

/* A cell's message, whoever carries it (a worker's pipe, or a --slurm part
 * file): 'D' and the cell. */
static int send_cell(int fd, const struct bench_cell *cell)
{
    return buffers_write_all(fd, "D", 1) == 0 && buffers_write_all(fd, cell, sizeof *cell) == 0 ? 0 : -1;
}

/* Puts a cell's message into *cell; -1 when it is not one (the caller
 * marks the cell failed). The one way a result comes back. */
static int collect_cell(struct bench_cell *cell, const char *msg, size_t len)
{
    if (len != 1 + sizeof *cell || msg[0] != 'D')
        return -1;
    memcpy(cell, msg + 1, sizeof *cell);
    return 0;
}

static void fail_cell(struct bench_cell *cell, const char *why)
{
    cell->status = BENCH_CELL_FAILED;
    snprintf(cell->note, sizeof cell->note, "%s", why);
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
    char msg[1 + sizeof(struct bench_cell)];
    int rc = read_full(w->fd, msg, sizeof msg);
    close(w->fd);
    int status;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || collect_cell(&cells[w->cell], msg, sizeof msg)) {
        char why[64];
        if (WIFSIGNALED(status))
            snprintf(why, sizeof why, "worker process killed by signal %d", WTERMSIG(status));
        else
            snprintf(why, sizeof why, "worker process died");
        fail_cell(&cells[w->cell], why);
    }
    return 0;
}

static volatile sig_atomic_t bench_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    bench_interrupted = 1;
}

/* The cells as a Slurm job array: task k runs the k-th cell to run. Ctrl-C
 * cancels the jobs (CLI_INTERRUPTED: nothing is printed). */
static int run_cells_slurm(const struct bench_args *a, struct slurm_session *ss, struct bench_cell *cells, size_t n)
{
    char *spec = NULL;
    size_t spec_len = 0;
    FILE *mem = open_memstream(&spec, &spec_len);
    if (!mem)
        return CLI_INTERNAL;
    fprintf(mem, "kind bench\nsuite %s\ndecide_timeout %a\n", a->suite, a->decide_timeout_s);
    uint32_t tasks = 0;
    for (size_t i = 0; i < n; i++)
        if (cells[i].status == BENCH_CELL_OK) {
            fprintf(mem, "cell %zu\n", i);
            tasks++;
        }
    fclose(mem);
    if (strchr(a->suite, '\n')) {
        free(spec);
        cli_error("--slurm: the suite's path holds a line break; cannot describe it to a task");
        return CLI_USAGE;
    }
    if (!tasks) {
        free(spec);
        return CLI_OK;
    }
    struct sigaction sa, old_int;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    bench_interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    struct slurm_array arr;
    int rc = slurm_array_run(ss, &arr, spec, tasks, "bench", "cells", a->quiet, &bench_interrupted);
    sigaction(SIGINT, &old_int, NULL);
    free(spec);
    if (rc == 1) {
        slurm_array_release(&arr);
        if (!a->quiet)
            fprintf(stderr, "\nfleetsim: bench: interrupted; the Slurm jobs are cancelled\n");
        return CLI_INTERRUPTED;
    }
    uint32_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (cells[i].status != BENCH_CELL_OK)
            continue;
        char *msg;
        size_t len;
        char why[96];
        snprintf(why, sizeof why, "Slurm task %lu_%u left no result", arr.job_id, k);
        if (slurm_array_part(&arr, k++, &msg, &len) != 0) {
            fail_cell(&cells[i], why);
            continue;
        }
        if (collect_cell(&cells[i], msg, len) != 0)
            fail_cell(&cells[i], why);
        free(msg);
    }
    if (rc != 0)
        ss->keep = 1;
    slurm_array_release(&arr);
    return CLI_OK;
}

static int run_cells(const struct bench_args *a, const struct bench_suite *s, const struct loaded *ld,
                     struct bench_cell *cells, size_t n, struct slurm_session *ss)
{
    size_t nw = s->n_workloads;
    if (ss)
        return run_cells_slurm(a, ss, cells, n);
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
            _exit(send_cell(fds[1], &cells[i]) == 0 ? 0 : 1);
        }
        close(fds[1]);
        ws[tail++ % (size_t)a->jobs] = (struct worker){pid, fds[0], i};
    }
    while (head < tail)
        reap(&ws[head++ % (size_t)a->jobs], cells);
    free(ws);
    return CLI_OK;
}

int cmd_bench_task(const char *spec, uint32_t index, int fd)
{
    struct bench_args a;
    memset(&a, 0, sizeof a);
    a.quiet = 1;
    char suite[BENCH_PATH_MAX], value[64];
    if (slurm_spec_get(spec, "suite", suite, sizeof suite) != 0 ||
        slurm_spec_get(spec, "decide_timeout", value, sizeof value) != 0) {
        dprintf(fd, "Ethe task description names no suite");
        return CLI_USAGE;
    }
    a.suite = suite;
    a.decide_timeout_s = strtod(value, NULL);
    /* the index-th "cell N" line */
    size_t cell = SIZE_MAX;
    uint32_t k = 0;
    for (const char *line = strstr(spec, "\ncell "); line; line = strstr(line + 1, "\ncell "))
        if (k++ == index)
            cell = (size_t)strtoull(line + 6, NULL, 10);
    struct bench_suite s;
    struct diag_list diags;
    struct err err;
    diag_list_init(&diags, 100);
    err_clear(&err);
    if (cli_finish_load(bench_suite_load(a.suite, &s, &diags, &err), &diags, &err, 0) != CLI_OK) {
        dprintf(fd, "Ethe suite '%s' did not load on this node (its messages are in the task's log)", a.suite);
        return CLI_USAGE;
    }
    int status = CLI_USAGE;
    size_t nw = s.n_workloads;
    struct loaded *ld = calloc(nw ? nw : 1, sizeof *ld);
    if (cell >= s.n_policies * nw || !ld) {
        dprintf(fd, "Etask %u names no cell of the suite '%s'", index, a.suite);
    } else if (load_workloads(&a, &s, ld, cell % nw) != CLI_OK || !ld[cell % nw].ready) {
        dprintf(fd, "Eworkload '%s' did not load on this node (its messages are in the task's log)",
                s.workloads[cell % nw].name);
    } else {
        struct bench_cell c;
        memset(&c, 0, sizeof c);
        snprintf(c.policy, sizeof c.policy, "%s", s.policies[cell / nw].name);
        snprintf(c.workload, sizeof c.workload, "%s", s.workloads[cell % nw].name);
        run_cell(&s.policies[cell / nw], &ld[cell % nw], a.decide_timeout_s, &c);
        status = send_cell(fd, &c) == 0 ? CLI_OK : CLI_IO;
    }
    release_loaded(ld, nw);
    bench_suite_release(&s);
    return status;
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
        return cli_fail(&err, strstr(err.msg, "cannot read") ? CLI_IO : CLI_USAGE);
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
    struct slurm_session ss;
    memset(&ss, 0, sizeof ss);
    if (!ld || !cells) {
        rc = CLI_INTERNAL;
        goto done;
    }
    if ((rc = check_policies(&s)) != CLI_OK || (rc = load_workloads(&a, &s, ld, SIZE_MAX)) != CLI_OK)
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
    if (a.slurm && (rc = slurm_session_open(&ss, a.partition, a.quiet)) != CLI_OK)
        goto done;
    if ((rc = run_cells(&a, &s, ld, cells, n, a.slurm ? &ss : NULL)) != CLI_OK)
        goto done;
    if (!a.quiet && a.slurm)
        fprintf(stderr, "fleetsim: bench: %zu cells (%zu policies x %zu workloads) in %.2f s on Slurm\n", n,
                s.n_policies, s.n_workloads, now_s() - t0);
    else if (!a.quiet)
        fprintf(stderr, "fleetsim: bench: %zu cells (%zu policies x %zu workloads) in %.2f s with %lld workers\n", n,
                s.n_policies, s.n_workloads, now_s() - t0, (long long)a.jobs);
    if (a.json) {
        if (bench_write_json(stdout, a.suite, cells, n, &err) != 0) {
            rc = cli_fail(&err, CLI_IO);
            goto done;
        }
    } else {
        bench_write_markdown(stdout, cells, n);
    }
    fflush(stdout);
    if (a.baseline)
        rc = gate(&a, cells, n, &regs, &n_regs);
    if (a.junit && bench_write_junit(a.junit, a.suite, cells, n, regs, n_regs, &err) != 0) {
        rc = cli_fail(&err, CLI_IO);
    }
    for (size_t i = 0; i < n && (rc == CLI_OK || rc == CLI_GATE); i++) {
        if (cells[i].status == BENCH_CELL_FAILED) {
            cli_error("policy '%s' failed on workload '%s': %s", cells[i].policy, cells[i].workload, cells[i].note);
            rc = CLI_INTERNAL;
        }
    }
done:
    release_loaded(ld, s.n_workloads);
    if (a.slurm)
        slurm_session_close(&ss);
    free(cells);
    free(regs);
    bench_suite_release(&s);
    return rc;
}
