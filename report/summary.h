/* summary: what a replay produced, in the figures people compare policies by,
 * and the writers for them: a short text table, JSON (stable keys, with
 * meta.version) and the per-job CSV.
 *
 * Definitions (all over the jobs that started):
 *   wait      start - submit; mean and percentiles p50/p95/p99 (linear
 *             interpolation between order statistics, as GSL and numpy do)
 *   bsld      bounded slowdown max(1, (wait + run) / max(run, 10 s)), mean
 *   makespan  last end - first submit
 *   utilization  sum(run x slots) / (cluster slots x makespan), or, when
 *             capacity changes during the run (deliveries, retirements), over
 *             the integral of the capacity present
 *   goodput   1 - lost GPU time / busy GPU time (failures roll jobs back to
 *             their last checkpoint; the work since is lost)
 *   availability  node up time / node time present
 *   max queue    the most jobs left waiting after a scheduling pass
 */
#ifndef FLEETSIM_REPORT_SUMMARY_H
#define FLEETSIM_REPORT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "models/simulation.h"
#include "models/workload.h"
#include "sim/err.h"

struct replay_summary {
    size_t jobs_in_trace; /* jobs the reader produced, plus those it skipped */
    size_t jobs_run;      /* started (completed or killed at their limit) */
    size_t completed, killed_at_limit;
    size_t skipped;       /* at read time + too big + invalid */
    size_t skipped_too_big, unfinished;
    int64_t total_slots;
    double makespan_s;
    double utilization;
    double wait_mean_s, wait_p50_s, wait_p95_s, wait_p99_s;
    double bsld_mean;
    uint32_t max_queue_len;
    uint64_t events, passes;
    /* with a failure model (has_failures) */
    int has_failures;
    uint64_t failures, interruptions;
    double lost_gpu_hours; /* work since the last checkpoint, times GPUs */
    double goodput;        /* share of busy GPU time that was not lost */
    double availability;   /* node up time / node time present */
    uint64_t deliveries, retirements;
};

int summary_compute(const struct workload *w, const struct sim_result *r, struct replay_summary *s,
                    struct err *err);
/* cluster: how to describe the cluster on its line, e.g. "16 nodes x 8 slots".
 * convention: the tie convention's name, on a line of its own; NULL for the
 * default one (whose summaries have no such line). */
void summary_write_text(FILE *out, const struct replay_summary *s, const char *trace, const char *policy,
                        const char *convention, const char *cluster);
/* convention: always named, so that a result says how it was reached. */
int summary_write_json(FILE *out, const struct replay_summary *s, const char *trace, const char *policy,
                       const char *convention, uint32_t nodes, int32_t slots_per_node, struct err *err);
/* One row per job in trace order: id,submit_s,start_s,end_s,wait_s,runtime_s,
 * slots,nodes,outcome. Written atomically (temporary file, then rename). */
int summary_write_jobs_csv(const char *path, const struct workload *w, const struct sim_result *r,
                           struct err *err);
const char *summary_outcome_name(int32_t outcome);

#endif
