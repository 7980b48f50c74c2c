#include "agent/metrics.h"

#include <stdio.h>
#include <string.h>

const double metrics_wait_bounds_s[METRICS_WAIT_BUCKETS - 1] = {1,    5,    10,    30,    60,    300,  900,
                                                                 1800, 3600, 7200, 14400, 43200, 86400};

void metrics_init(struct metrics *m)
{
    memset(m, 0, sizeof *m);
}

void metrics_observe_wait(struct metrics *m, int64_t wait_us)
{
    double s = wait_us > 0 ? (double)wait_us / 1e6 : 0;
    size_t b = 0;
    while (b < METRICS_WAIT_BUCKETS - 1 && s > metrics_wait_bounds_s[b])
        b++;
    m->wait_bucket[b]++;
    m->wait_count++;
    m->wait_sum_s += s;
}

static void family(struct buf *o, const char *name, const char *type, const char *help)
{
    buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* label value escaping: \\ \" \n */
static void label_value(struct buf *o, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            buf_printf(o, "\\%c", *s);
        else if (*s == '\n')
            buf_puts(o, "\\n");
        else
            buf_append(o, s, 1);
    }
}

static void gpu_labels(struct buf *o, const struct metrics_view *v, uint32_t gi)
{
    const struct inv_gpu *g = &v->inv->gpus[gi];
    buf_printf(o, "{gpu=\"%d\",UUID=\"", g->local_index);
    label_value(o, g->uuid);
    buf_puts(o, "\",pci_bus_id=\"");
    label_value(o, g->pci_bus_id);
    if (g->minor >= 0)
        buf_printf(o, "\",device=\"nvidia%d", g->minor);
    else
        buf_puts(o, "\",device=\"");
    buf_puts(o, "\",model_name=\"");
    label_value(o, g->model);
    buf_puts(o, "\",Hostname=\"");
    label_value(o, v->inv->nodes[g->node].name);
    /* dcgm-exporter's convention (its hpc-job mapping): the job using the GPU */
    if (v->gpu_job[gi])
        buf_printf(o, "\",hpc_job=\"%lld", (long long)v->gpu_job[gi]);
    buf_puts(o, "\"}");
}

struct dcgm_field {
    const char *name, *type, *help;
};

static void render_dcgm(struct buf *o, const struct metrics_view *v)
{
    static const struct dcgm_field fields[] = {
        {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz)."},
        {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz)."},
        {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."},
        {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
        {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
        {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %)."},
        {"DCGM_FI_DEV_FB_FREE", "gauge", "Frame buffer memory free (in MiB)."},
        {"DCGM_FI_DEV_FB_USED", "gauge", "Frame buffer memory used (in MiB)."},
        {"DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."},
    };
    uint32_t n = v->inv->n_gpus;
    struct gpu_sample samples[INV_MAX_NODE_GPUS];
    if (n > INV_MAX_NODE_GPUS)
        n = INV_MAX_NODE_GPUS;
    for (uint32_t i = 0; i < n; i++) {
        if (v->nvml) {
            nvml_sample(v->nvml, i, &samples[i]);
        } else {
            /* a fake inventory: its memory size, the rest 0 (no device to ask) */
            const struct inv_gpu *g = &v->inv->gpus[i];
            samples[i] = (struct gpu_sample){0, (int64_t)(g->memory_bytes >> 20), 0, 0, 0.0, 0, 0, 0};
        }
    }
    for (size_t f = 0; f < sizeof fields / sizeof *fields; f++) {
        int any = 0;
        for (uint32_t i = 0; i < n; i++) {
            const struct gpu_sample *s = &samples[i];
            double val;
            switch (f) {
            case 0: val = (double)s->sm_clock_mhz; break;
            case 1: val = (double)s->mem_clock_mhz; break;
            case 2: val = (double)s->gpu_temp_c; break;
            case 3: val = s->power_w; break;
            case 4: val = (double)s->gpu_util_pct; break;
            case 5: val = (double)s->mem_copy_util_pct; break;
            case 6: val = (double)s->fb_free_mib; break;
            case 7: val = (double)s->fb_used_mib; break;
            default: val = v->inv->gpus[i].last_xid; break;
            }
            if (val < 0)
                continue;
            if (!any)
                family(o, fields[f].name, fields[f].type, fields[f].help);
            any = 1;
            buf_puts(o, fields[f].name);
            gpu_labels(o, v, i);
            buf_printf(o, " %.17g\n", val);
        }
    }
}

int metrics_render(struct buf *o, const struct metrics *m, const struct metrics_view *v)
{
    render_dcgm(o, v);

    family(o, "fleetsim_build_info", "gauge", "The agent's version and policy; always 1.");
    buf_puts(o, "fleetsim_build_info{version=\"");
    label_value(o, v->version);
    buf_puts(o, "\",policy=\"");
    label_value(o, v->sched->ph.spec);
    buf_puts(o, "\"} 1\n");
    family(o, "fleetsim_agent_start_time_seconds", "gauge", "When the agent started, in Unix seconds.");
    buf_printf(o, "fleetsim_agent_start_time_seconds %.6f\n", v->start_time_s);

    family(o, "fleetsim_queued_jobs", "gauge", "Jobs waiting to start.");
    buf_printf(o, "fleetsim_queued_jobs %u\n", v->queued);
    family(o, "fleetsim_queued_gpus", "gauge", "GPUs requested by the waiting jobs.");
    buf_printf(o, "fleetsim_queued_gpus %lld\n", (long long)v->queued_gpus);
    family(o, "fleetsim_running_jobs", "gauge", "Jobs running.");
    buf_printf(o, "fleetsim_running_jobs %u\n", v->running);

    int64_t n_free = 0, n_alloc = 0, n_drained = 0;
    for (uint32_t i = 0; i < v->inv->n_gpus; i++) {
        if (v->gpu_job[i])
            n_alloc++;
        else if (v->inv->gpus[i].drained || v->inv->nodes[v->inv->gpus[i].node].drained)
            n_drained++;
        else
            n_free++;
    }
    family(o, "fleetsim_gpus", "gauge", "GPUs by state: free, allocated to a job, drained (idle and unusable).");
    buf_printf(o, "fleetsim_gpus{state=\"free\"} %lld\nfleetsim_gpus{state=\"allocated\"} %lld\n"
                  "fleetsim_gpus{state=\"drained\"} %lld\n",
               (long long)n_free, (long long)n_alloc, (long long)n_drained);
    /* the drain's reason is free text: it is in `nodes`, never in a label */
    family(o, "fleetsim_gpu_drained", "gauge", "1 if the GPU is drained (by an admin or a health rule).");
    for (uint32_t i = 0; i < v->inv->n_gpus; i++) {
        const struct inv_gpu *g = &v->inv->gpus[i];
        buf_puts(o, "fleetsim_gpu_drained{node=\"");
        label_value(o, v->inv->nodes[g->node].name);
        buf_printf(o, "\",gpu=\"%d\",UUID=\"", g->local_index);
        label_value(o, g->uuid);
        buf_printf(o, "\"} %d\n", g->drained);
    }
    family(o, "fleetsim_gpu_drained_by_health", "gauge", "1 if a health rule (XID, ECC) drained the GPU.");
    for (uint32_t i = 0; i < v->inv->n_gpus; i++) {
        const struct inv_gpu *g = &v->inv->gpus[i];
        buf_puts(o, "fleetsim_gpu_drained_by_health{node=\"");
        label_value(o, v->inv->nodes[g->node].name);
        buf_printf(o, "\",gpu=\"%d\",UUID=\"", g->local_index);
        label_value(o, g->uuid);
        buf_printf(o, "\"} %d\n", g->drained && g->auto_drained);
    }
    family(o, "fleetsim_gpu_job", "gauge", "The id of the job running on the GPU, 0 if none.");
    for (uint32_t i = 0; i < v->inv->n_gpus; i++) {
        const struct inv_gpu *g = &v->inv->gpus[i];
        buf_puts(o, "fleetsim_gpu_job{node=\"");
        label_value(o, v->inv->nodes[g->node].name);
        buf_printf(o, "\",gpu=\"%d\",UUID=\"", g->local_index);
        label_value(o, g->uuid);
        buf_printf(o, "\"} %lld\n", (long long)v->gpu_job[i]);
    }
    if (v->cg && v->cg->usable && v->n_running_jobs) {
        family(o, "fleetsim_job_cpu_seconds_total", "counter", "CPU time of a running job's cgroup (cpu.stat).");
        for (uint32_t k = 0; k < v->n_running_jobs; k++) {
            char cgp[CGROUP_PATH_MAX + 32];
            int64_t cpu_us, mem;
            cgroup_job_path(v->cg, v->running_jobs[k]->id, cgp, sizeof cgp);
            if (cgroup_read_stats(cgp, &cpu_us, &mem) == 0 && cpu_us >= 0)
                buf_printf(o, "fleetsim_job_cpu_seconds_total{hpc_job=\"%lld\"} %.6f\n",
                           (long long)v->running_jobs[k]->id, (double)cpu_us / 1e6);
        }
        int any = 0;
        for (uint32_t k = 0; k < v->n_running_jobs; k++) {
            char cgp[CGROUP_PATH_MAX + 32];
            int64_t cpu_us, mem;
            cgroup_job_path(v->cg, v->running_jobs[k]->id, cgp, sizeof cgp);
            if (cgroup_read_stats(cgp, &cpu_us, &mem) != 0 || mem < 0)
                continue;
            if (!any++)
                family(o, "fleetsim_job_memory_peak_bytes", "gauge",
                       "Peak memory of a running job's cgroup (memory.peak, where the memory controller is on).");
            buf_printf(o, "fleetsim_job_memory_peak_bytes{hpc_job=\"%lld\"} %lld\n", (long long)v->running_jobs[k]->id,
                       (long long)mem);
        }
    }
    family(o, "fleetsim_gpu_last_xid", "gauge", "The last XID the GPU reported, 0 if none.");
    for (uint32_t i = 0; i < v->inv->n_gpus; i++) {
        const struct inv_gpu *g = &v->inv->gpus[i];
        buf_puts(o, "fleetsim_gpu_last_xid{node=\"");
        label_value(o, v->inv->nodes[g->node].name);
        buf_printf(o, "\",gpu=\"%d\",UUID=\"", g->local_index);
        label_value(o, g->uuid);
        buf_printf(o, "\"} %d\n", g->last_xid);
    }

    family(o, "fleetsim_jobs_submitted_total", "counter", "Submissions accepted since the agent started.");
    buf_printf(o, "fleetsim_jobs_submitted_total %llu\n", (unsigned long long)m->submitted);
    family(o, "fleetsim_jobs_rejected_total", "counter", "Submissions refused (invalid, not permitted, queue full).");
    buf_printf(o, "fleetsim_jobs_rejected_total %llu\n", (unsigned long long)m->rejected);
    family(o, "fleetsim_jobs_finished_total", "counter", "Jobs that ended, by final state.");
    for (int s = JOB_COMPLETED; s < JOB_STATE_COUNT; s++)
        buf_printf(o, "fleetsim_jobs_finished_total{state=\"%s\"} %llu\n", job_state_name(s),
                   (unsigned long long)m->finished[s]);
    family(o, "fleetsim_job_failures_total", "counter",
           "Failures by kind: start (could not start), lost (supervisor died), exit (non-zero exit or signal).");
    buf_printf(o, "fleetsim_job_failures_total{kind=\"start\"} %llu\n", (unsigned long long)m->start_failures);
    buf_printf(o, "fleetsim_job_failures_total{kind=\"lost\"} %llu\n", (unsigned long long)m->lost);
    buf_printf(o, "fleetsim_job_failures_total{kind=\"exit\"} %llu\n",
               (unsigned long long)m->finished[JOB_FAILED]);
    family(o, "fleetsim_jobs_requeued_total", "counter", "Jobs put back in the queue after a restart.");
    buf_printf(o, "fleetsim_jobs_requeued_total %llu\n", (unsigned long long)m->requeued);
    family(o, "fleetsim_jobs_adopted_total", "counter", "Running jobs re-adopted after a restart.");
    buf_printf(o, "fleetsim_jobs_adopted_total %llu\n", (unsigned long long)m->adopted);

    family(o, "fleetsim_job_wait_seconds", "histogram", "Time from submission to start of started jobs.");
    uint64_t cum = 0;
    for (size_t b = 0; b < METRICS_WAIT_BUCKETS - 1; b++) {
        cum += m->wait_bucket[b];
        buf_printf(o, "fleetsim_job_wait_seconds_bucket{le=\"%g\"} %llu\n", metrics_wait_bounds_s[b],
                   (unsigned long long)cum);
    }
    cum += m->wait_bucket[METRICS_WAIT_BUCKETS - 1];
    buf_printf(o, "fleetsim_job_wait_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    buf_printf(o, "fleetsim_job_wait_seconds_sum %.6f\n", m->wait_sum_s);
    buf_printf(o, "fleetsim_job_wait_seconds_count %llu\n", (unsigned long long)m->wait_count);

    family(o, "fleetsim_scheduling_passes_total", "counter", "Times the policy was asked to decide.");
    buf_printf(o, "fleetsim_scheduling_passes_total %llu\n", (unsigned long long)v->sched->passes);
    family(o, "fleetsim_scheduling_seconds_total", "counter", "Time spent in scheduling passes.");
    buf_printf(o, "fleetsim_scheduling_seconds_total %.9f\n", (double)v->sched->pass_ns_total / 1e9);
    family(o, "fleetsim_policy_decisions_total", "counter", "Decisions the policy made, by kind.");
    buf_printf(o, "fleetsim_policy_decisions_total{kind=\"start\"} %llu\n", (unsigned long long)v->sched->starts);
    buf_printf(o, "fleetsim_policy_decisions_total{kind=\"reserve\"} %llu\n",
               (unsigned long long)v->sched->reserves);
    buf_printf(o, "fleetsim_policy_decisions_total{kind=\"preempt\"} %llu\n",
               (unsigned long long)v->sched->preempts);
    family(o, "fleetsim_jobs_preempted_total", "counter", "Job attempts the policy stopped and requeued.");
    buf_printf(o, "fleetsim_jobs_preempted_total %llu\n", (unsigned long long)m->preempted);
    family(o, "fleetsim_policy_failed", "gauge",
           "1 when the policy crashed or did not return: running jobs go on, none starts (see status and the log).");
    buf_printf(o, "fleetsim_policy_failed %d\n", v->sched->failed ? 1 : 0);
    family(o, "fleetsim_policy_contract_violations_total", "counter", "Passes refused because a decision was wrong.");
    buf_printf(o, "fleetsim_policy_contract_violations_total %llu\n", (unsigned long long)v->sched->contract_errors);
    family(o, "fleetsim_gpu_auto_drains_total", "counter", "GPUs drained by a health rule (XID, ECC).");
    buf_printf(o, "fleetsim_gpu_auto_drains_total %llu\n", (unsigned long long)m->auto_drains);
    family(o, "fleetsim_api_requests_total", "counter", "API requests answered, by result.");
    buf_printf(o, "fleetsim_api_requests_total{result=\"ok\"} %llu\n", (unsigned long long)m->api_ok);
    buf_printf(o, "fleetsim_api_requests_total{result=\"error\"} %llu\n", (unsigned long long)m->api_error);
    buf_printf(o, "fleetsim_api_requests_total{result=\"unauthorized\"} %llu\n",
               (unsigned long long)m->http_unauthorized);
    buf_printf(o, "fleetsim_api_requests_total{result=\"rate_limited\"} %llu\n", (unsigned long long)m->rate_limited);
    family(o, "fleetsim_connections_refused_total", "counter",
           "Connections closed at once: per-uid or total limits, or too many HTTP requests pending.");
    buf_printf(o, "fleetsim_connections_refused_total %llu\n", (unsigned long long)m->conn_refused);
    family(o, "fleetsim_starts_spanning_nodes_total", "counter",
           "Starts the policy spread over several nodes, not carried out (a local job runs on one node).");
    buf_printf(o, "fleetsim_starts_spanning_nodes_total %llu\n", (unsigned long long)v->sched->spanning_refused);
    return o->oom ? -1 : 0;
}
