/* trace_stats: what a workload looks like, in the numbers a capacity planner
 * asks for first (`fleetsim trace stats`). Computed from a workload that any
 * reader produced; the workload is borrowed and left unchanged.
 *
 * Definitions:
 *  - first/last_submit_us: the earliest and latest submit time (whatever the
 *    order of the jobs, as the RLScheduler convention sorts by id).
 *  - runtime percentiles: nearest rank on the sorted run times, the value at
 *    1-based rank ceil(p/100 * n), so p50 and p95 are always times that some
 *    job actually ran (no interpolation).
 *  - limit_known_fraction: jobs with a requested time (limit_us > 0) over all
 *    jobs; mean_limit_accuracy: the mean of runtime/limit over those jobs
 *    (above 1 where jobs ran past their request); 0 when no job has a limit.
 *  - users, teams: distinct values that jobs refer to.
 *  - offered_slot_hours: sum of slots x runtime, in slot-hours.
 * An empty workload gives all zeros.
 */
#ifndef FLEETSIM_TRACES_STATS_H
#define FLEETSIM_TRACES_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "models/workload.h"
#include "sim/err.h"

struct trace_stats {
    size_t jobs;
    sim_time first_submit_us, last_submit_us;
    int32_t min_slots, max_slots;
    double mean_slots;
    double runtime_mean_s, runtime_p50_s, runtime_p95_s;
    double limit_known_fraction;
    double mean_limit_accuracy;
    size_t users, teams;
    double offered_slot_hours;
};

/* Returns 0, or -1 with err set (out of memory). */
int trace_stats_compute(const struct workload *w, struct trace_stats *s, struct err *err);

#endif
