/* metrics: the agent's Prometheus text exposition (format 0.0.4).
 *
 * GPU series use the DCGM exporter's metric names and labels (gpu, UUID,
 * pci_bus_id, device, Hostname; its camelCase modelName is model_name, since
 * promtool's lint refuses camelCase labels) so existing dashboards work; they
 * appear only when NVML is present. The agent's own series are under
 * fleetsim_: queue and running jobs, GPUs by state, a wait-time histogram,
 * scheduling passes and decisions, job outcomes and failures, API requests.
 * Every family has HELP and TYPE, counters end in _total, and the text ends
 * with a newline, so `promtool check metrics` passes.
 */
#ifndef FLEETSIM_AGENT_METRICS_H
#define FLEETSIM_AGENT_METRICS_H

#include <stdint.h>

#include "agent/buf.h"
#include "agent/cgroup.h"
#include "agent/inventory.h"
#include "agent/job.h"
#include "agent/nvml.h"
#include "agent/scheduler.h"

enum { METRICS_WAIT_BUCKETS = 14 };

struct metrics {
    uint64_t submitted;
    uint64_t rejected;
    uint64_t finished[JOB_STATE_COUNT];
    uint64_t start_failures;
    uint64_t lost; /* supervisor gone without a status */
    uint64_t requeued;
    uint64_t preempted; /* attempts stopped by the policy */
    uint64_t adopted;
    uint64_t api_ok, api_error, http_unauthorized;
    uint64_t conn_refused, rate_limited; /* connections refused (limits), requests refused (rate) */
    uint64_t auto_drains;
    uint64_t wait_bucket[METRICS_WAIT_BUCKETS]; /* non-cumulative counts per bucket, last = +Inf */
    uint64_t wait_count;
    double wait_sum_s;
};

/* What the daemon knows right now, for one rendering. */
struct metrics_view {
    const struct inventory *inv;
    const int64_t *gpu_job; /* job id per GPU, 0 = free */
    struct nvml *nvml;      /* NULL without NVML: no DCGM series */
    const struct scheduler *sched;
    uint32_t queued, running;
    int64_t queued_gpus;
    double start_time_s;
    const char *hostname;
    const char *version;
    /* per-job cgroup figures (running jobs); n_running_jobs 0 = none */
    struct agent_job *const *running_jobs;
    uint32_t n_running_jobs;
    const struct cgroup_host *cg; /* NULL or not usable: no per-job figures */
};

void metrics_init(struct metrics *m);
void metrics_observe_wait(struct metrics *m, int64_t wait_us);
/* Appends the exposition to out. Returns 0 or -1 (memory). */
int metrics_render(struct buf *out, const struct metrics *m, const struct metrics_view *v);
/* The wait histogram's upper bounds in seconds (METRICS_WAIT_BUCKETS - 1 of them). */
extern const double metrics_wait_bounds_s[METRICS_WAIT_BUCKETS - 1];

#endif
