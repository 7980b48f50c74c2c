/* gpustats: what the GPU-cluster trace papers print about a workload
 * (Philly ATC '19, Helios SC '21, Acme NSDI '24), overall and per team (a
 * VC): jobs, multi-GPU jobs, GPU-hours, run time and (where the trace
 * recorded it) queue time as mean, p50 and p95, the GPU-count distribution
 * and the shares of completed, killed and failed jobs. `fleetsim trace
 * stats` prints it for GPU traces and with --by-team.
 *
 * Percentiles are nearest rank, as in traces/stats.h. Outcomes are SWF's
 * codes as the readers map them: 1 completed, 5 killed or cancelled,
 * 0 failed, anything else unknown. Queue times come from job.wait_us where
 * wait_known. The workload is borrowed; the result owns its groups.
 */
#ifndef FLEETSIM_TRACES_GPUSTATS_H
#define FLEETSIM_TRACES_GPUSTATS_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

/* GPU counts 1, 2, 3-4, 5-8, 9-16, 17-32, 33-64, 65 and more. */
enum { GPUSTATS_BUCKETS = 8 };
extern const char *const gpustats_bucket_names[GPUSTATS_BUCKETS];

struct gpustats_group {
    const char *name; /* the team's name (borrowed from the workload), "all" or "(none)" */
    size_t jobs, multi_gpu_jobs;
    double gpu_hours;
    double runtime_mean_s, runtime_p50_s, runtime_p95_s;
    size_t queue_n; /* jobs with a recorded queue time */
    double queue_mean_s, queue_p50_s, queue_p95_s;
    size_t gpus[GPUSTATS_BUCKETS];
    size_t completed, killed, failed, unknown;
};

struct gpustats {
    size_t jobs_in_file; /* read + skipped at read */
    size_t skipped_at_read;
    struct gpustats_group all;
    struct gpustats_group *teams; /* by team index order; jobs without one last, as "(none)" */
    size_t n_teams;
};

int gpustats_compute(const struct workload *w, struct gpustats *s, struct err *err);
void gpustats_release(struct gpustats *s);

#endif
