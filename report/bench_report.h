/* bench_report: what `fleetsim bench` measures in one cell of its policies x
 * workloads matrix, and the writers and the regression gate over cells.
 *
 * Metrics of a cell (over the jobs that ran; definitions as report/summary.h):
 *   wait_p50_s, wait_p95_s   queue wait percentiles           lower is better
 *   bsld                     mean bounded slowdown (10 s)      lower is better
 *   utilization              busy slot time / capacity        higher is better
 *   fairness                 Jain's index over teams of each team's mean
 *                            1 / bounded slowdown: 1 when every team is
 *                            slowed alike, 1/n when one team gets all the
 *                            service; 1 with fewer than two teams
 *                                                             higher is better
 *   preemptions              attempts stopped by the policy   lower is better
 *
 * The gate: a cell regressed when a metric is worse than the baseline's by
 * more than the relative tolerance AND by more than the metric's noise floor
 * (1 s of wait, 0.01 of slowdown, 0.001 of utilization or fairness, one
 * preemption), so a zero in the baseline does not turn every blip into a
 * failure. Cells are matched by (policy name, workload name); cells missing
 * on either side are reported, never a regression.
 *
 * Every writer is deterministic: same cells, same bytes (JSON keys sorted,
 * numbers at fixed precision, no timings).
 */
#ifndef FLEETSIM_REPORT_BENCH_REPORT_H
#define FLEETSIM_REPORT_BENCH_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/simulation.h"
#include "models/workload.h"
#include "sim/err.h"

enum { BENCH_NAME_MAX = 128, BENCH_TEXT_MAX = 512 };

enum bench_cell_status { BENCH_CELL_OK = 0, BENCH_CELL_SKIPPED = 1, BENCH_CELL_FAILED = 2 };

struct bench_cell {
    char policy[BENCH_NAME_MAX];
    char workload[BENCH_NAME_MAX];
    int32_t status; /* enum bench_cell_status */
    char note[BENCH_TEXT_MAX]; /* why skipped or failed */
    uint64_t jobs;
    double wait_p50_s, wait_p95_s, bsld, utilization, fairness;
    double preemptions;
};

struct bench_metric {
    const char *key;   /* JSON key */
    const char *title; /* table header */
    int higher_is_better;
    double floor; /* absolute noise floor of the gate */
};

extern const struct bench_metric bench_metrics[];
extern const size_t bench_n_metrics;
double bench_cell_metric(const struct bench_cell *c, size_t metric);

/* Fills the metrics of c from a finished replay. Returns 0 or -1 (memory). */
int bench_cell_measure(struct bench_cell *c, const struct workload *w, const struct sim_result *r, struct err *err);
/* Jain's fairness index over teams (see above); NaN when memory ran out. */
double bench_jain_over_teams(const struct workload *w, const struct sim_result *r);

/* Markdown table, one row per cell in the given order. */
void bench_write_markdown(FILE *out, const struct bench_cell *cells, size_t n);
int bench_write_json(FILE *out, const char *suite, const struct bench_cell *cells, size_t n, struct err *err);

struct bench_regression {
    size_t cell;   /* index into the current cells */
    size_t metric; /* index into bench_metrics */
    double baseline, current;
};

/* Reads cells from a JSON file `bench_write_json` wrote; *cells is malloc'd. */
int bench_read_json(const char *path, struct bench_cell **cells, size_t *n, struct err *err);
/* Compares; *regs is malloc'd (NULL when none). *missing counts current
 * cells the baseline lacks. */
int bench_compare(const struct bench_cell *base, size_t n_base, const struct bench_cell *cur, size_t n_cur,
                  double tolerance, struct bench_regression **regs, size_t *n_regs, size_t *missing);
/* JUnit XML: one testcase per cell (classname the workload, name the
 * policy), failed with every regression of the cell, or skipped. Written
 * atomically. */
int bench_write_junit(const char *path, const char *suite, const struct bench_cell *cells, size_t n,
                      const struct bench_regression *regs, size_t n_regs, struct err *err);

#endif
