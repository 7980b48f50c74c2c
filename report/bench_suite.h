/* bench_suite: a `fleetsim bench` suite file, the policies x workloads matrix.
 *
 *   policies:                      # each a spec string, or a mapping
 *     - fcfs+easy
 *     - name: fair-1h              # the cell's name (default: the spec)
 *       ordering: {name: fairshare, half_life_s: 3600}
 *       backfill: easy             # a name, or {name: ...}
 *       placement: pack
 *       preempt: {max_preemptions: 2}    # a mapping of parameters, or true
 *       quota: {guarantee: "0:64;1:32"}
 *     - {name: mine, spec: ./build/mypolicy.so, params: "k=v"}   # a plugin
 *   workloads:
 *     - name: demo
 *       trace: traces/examples/demo-gpu-cluster.swf
 *       jobs: 1000                 # optional: only the first N jobs
 *       nodes: 16                  # optional cluster override (with slots)
 *       slots: 8
 *       machines: nodes.csv        # or the cluster from a machine list
 *                                  # (traces/machines.h); without either, a
 *                                  # list beside the trace (openb's node
 *                                  # list, X.swf.machines), else the trace
 *                                  # header; never a guess
 *       convention: pyss           # optional: fleetsim (default), pyss, cqsim
 *     - name: quarter
 *       scenario: scenarios/examples/tiny.yaml   # the jobs a scenario generates,
 *       replication: 0             # on its cluster with its models (seed of
 *                                  # that forecast replication; default 0)
 *
 * A mapping policy becomes the spec "ORDERING(k=v,..)+BACKFILL+PLACEMENT
 * +preempt(..)+quota(..)", the same string a user can pass to --policy, so
 * the YAML block and the string say the same thing. Paths are relative to
 * the current directory; a trace that does not exist is a skipped workload,
 * not an error (the shared traces are not everywhere). Unknown keys, wrong
 * types and duplicate names are errors with file:line:col, every one found.
 */
#ifndef FLEETSIM_REPORT_BENCH_SUITE_H
#define FLEETSIM_REPORT_BENCH_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "models/simulation.h"
#include "sim/err.h"

enum { BENCH_SPEC_MAX = 1024, BENCH_PATH_MAX = 1024 };

struct bench_policy {
    char name[128];
    char spec[BENCH_SPEC_MAX];
    char params[BENCH_SPEC_MAX]; /* --policy-params equivalent, or "" */
};

struct bench_workload {
    char name[128];
    char trace[BENCH_PATH_MAX];     /* the trace, or the scenario file when is_scenario */
    int is_scenario;
    int64_t replication;            /* a scenario's replication (its seed), default 0 */
    int64_t jobs;  /* -1: all */
    int64_t nodes; /* -1: from the trace header */
    int64_t slots;
    char machines[BENCH_PATH_MAX];  /* a machine list for the cluster, or "" */
    enum sim_convention convention; /* the replay's order at one instant */
};

struct bench_suite {
    struct bench_policy *policies;
    size_t n_policies;
    struct bench_workload *workloads;
    size_t n_workloads;
};

/* Loads path; every problem goes into diags. Returns 0, or -1 (bad suite:
 * diags hold errors; or unreadable: err set, diags empty). */
int bench_suite_load(const char *path, struct bench_suite *s, struct diag_list *diags, struct err *err);
/* The same from memory (path names the suite in messages and resolves the
 * relative paths in it); err is set only when memory runs out. */
int bench_suite_load_buffer(const char *path, const char *data, size_t len, struct bench_suite *s,
                            struct diag_list *diags, struct err *err);
void bench_suite_release(struct bench_suite *s);

#endif
