#include "report/summary.h"

#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_doc.h"
#include "sim/atomic_file.h"
#include "sim/buffers.h"
#include "sim/units.h"

static const sim_time bsld_bound_us = 10 * SIM_US_PER_S;

/* Puts the k-th smallest of a[from..n) at a[k], the smaller ones before it
 * and the others after (Hoare's selection, median-of-three pivot). */
static void select_at(double *a, ptrdiff_t from, ptrdiff_t n, ptrdiff_t k)
{
    ptrdiff_t lo = from, hi = n - 1;
    while (lo < hi) {
        double x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
        double pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
        ptrdiff_t i = lo, j = hi;
        do {
            while (a[i] < pivot)
                i++;
            while (pivot < a[j])
                j--;
            if (i <= j) {
                double t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < k)
            lo = i;
        if (k < i)
            hi = j;
    }
}

/* Fractions f[0..m), ascending: each quantile as gsl_stats_quantile_from_sorted_data
 * gives it on the sorted data, without sorting. That reads the order
 * statistics at floor(f (n - 1)) and the one after, so those are put in
 * place (in ascending order, each selection within what lies above the
 * last) and the GSL function reads them where a sort would have left them:
 * a run's figures are the same whether the waits were sorted or not. */
static void quantiles_unsorted(double *a, size_t n, const double *f, size_t m, double *out)
{
    ptrdiff_t placed = 0; /* a[0..placed) hold the smallest, in sorted order where asked */
    for (size_t q = 0; q < m; q++) {
        ptrdiff_t lhs = (ptrdiff_t)(int)(f[q] * (double)(n - 1));
        for (ptrdiff_t k = lhs; k <= lhs + 1 && k < (ptrdiff_t)n; k++)
            if (k >= placed) {
                select_at(a, placed, (ptrdiff_t)n, k);
                placed = k + 1;
            }
        out[q] = gsl_stats_quantile_from_sorted_data(a, 1, n, f[q]);
    }
}

int summary_compute(const struct workload *w, const struct sim_result *r, struct replay_summary *s,
                    struct err *err)
{
    memset(s, 0, sizeof *s);
    const struct sim_stats *st = &r->stats;
    s->jobs_in_trace = w->n + w->meta.skipped_at_read;
    s->completed = st->completed;
    s->killed_at_limit = st->killed_at_limit;
    s->jobs_run = st->completed + st->killed_at_limit;
    s->skipped_too_big = st->skipped_too_big;
    s->skipped = w->meta.skipped_at_read + st->skipped_too_big + st->skipped_invalid;
    s->unfinished = st->unfinished;
    s->total_slots = st->total_slots;
    s->max_queue_len = st->max_queue_len;
    s->events = st->events;
    s->passes = st->passes;
    s->makespan_s = (double)(st->last_end_us - st->first_submit_us) / 1e6;
    if (st->deliveries || st->retirements) {
        if (st->capacity_slot_us > 0)
            s->utilization = st->busy_slot_us / st->capacity_slot_us;
    } else if (st->last_end_us > st->first_submit_us && st->total_slots > 0) {
        s->utilization = st->busy_slot_us / ((double)st->total_slots * (double)(st->last_end_us - st->first_submit_us));
    }
    s->deliveries = st->deliveries;
    s->retirements = st->retirements;
    s->has_failures = st->n_categories > 0;
    s->failures = st->failures;
    s->interruptions = st->interruptions;
    s->lost_gpu_hours = st->lost_slot_us / 3.6e9;
    s->goodput = st->busy_slot_us > 0 ? 1.0 - st->lost_slot_us / st->busy_slot_us : 1.0;
    s->availability = st->node_present_us > 0 ? st->node_up_us / st->node_present_us : 1.0;

    size_t n = 0;
    double *waits = buffers_alloc_large((w->n ? w->n : 1) * sizeof *waits);
    if (!waits)
        return err_set(err, NULL, 0, 0, "out of memory");
    double bsld_sum = 0;
    for (size_t i = 0; i < w->n; i++) {
        const struct sim_job_result *jr = &r->jobs[i];
        if (jr->start_us < 0 || jr->end_us < 0)
            continue;
        sim_time wait = jr->start_us - w->jobs[i].submit_us;
        waits[n++] = (double)wait / 1e6;
        bsld_sum += job_bounded_slowdown(wait, jr->end_us - jr->start_us, bsld_bound_us);
    }
    if (n) {
        s->wait_mean_s = gsl_stats_mean(waits, 1, n);
        static const double fractions[] = {0.50, 0.95, 0.99};
        double q[3];
        quantiles_unsorted(waits, n, fractions, 3, q);
        s->wait_p50_s = q[0];
        s->wait_p95_s = q[1];
        s->wait_p99_s = q[2];
        s->bsld_mean = bsld_sum / (double)n;
    }
    free(waits);
    return 0;
}

static void format_duration(char *buf, size_t len, double seconds)
{
    if (seconds < 120)
        snprintf(buf, len, "%.1f s", seconds);
    else if (seconds < 7200)
        snprintf(buf, len, "%.1f min", seconds / 60);
    else if (seconds < 3 * 86400)
        snprintf(buf, len, "%.2f h", seconds / 3600);
    else
        snprintf(buf, len, "%.2f d", seconds / 86400);
}

void summary_write_text(FILE *out, const struct replay_summary *s, const char *trace, const char *policy,
                        const char *convention, const char *cluster)
{
    char mk[32], mean[32], p50[32], p95[32], p99[32];
    format_duration(mk, sizeof mk, s->makespan_s);
    format_duration(mean, sizeof mean, s->wait_mean_s);
    format_duration(p50, sizeof p50, s->wait_p50_s);
    format_duration(p95, sizeof p95, s->wait_p95_s);
    format_duration(p99, sizeof p99, s->wait_p99_s);
    fprintf(out, "trace        %s\n", trace);
    fprintf(out, "policy       %s\n", policy);
    if (convention)
        fprintf(out, "convention   %s\n", convention);
    fprintf(out, "cluster      %s\n", cluster);
    fprintf(out, "jobs         %zu run (%zu killed at their time limit), %zu skipped, %zu unfinished\n",
            s->jobs_run, s->killed_at_limit, s->skipped, s->unfinished);
    fprintf(out, "makespan     %s (%.0f s)\n", mk, s->makespan_s);
    fprintf(out, "utilization  %.4f\n", s->utilization);
    fprintf(out, "wait         mean %s, p50 %s, p95 %s, p99 %s\n", mean, p50, p95, p99);
    fprintf(out, "bsld         %.2f mean bounded slowdown (10 s bound)\n", s->bsld_mean);
    fprintf(out, "queue        %u jobs at most\n", s->max_queue_len);
    if (s->has_failures)
        fprintf(out, "failures     %llu, %llu job attempts interrupted, %.1f GPU-hours lost, goodput %.4f, "
                     "node availability %.4f\n",
                (unsigned long long)s->failures, (unsigned long long)s->interruptions, s->lost_gpu_hours,
                s->goodput, s->availability);
    if (s->deliveries || s->retirements)
        fprintf(out, "capacity     %llu deliveries, %llu retirements\n", (unsigned long long)s->deliveries,
                (unsigned long long)s->retirements);
}

int summary_write_json(FILE *out, const struct replay_summary *s, const char *trace, const char *policy,
                       const char *convention, uint32_t nodes, int32_t slots_per_node, struct err *err)
{
    /* jansson refuses NaN and infinities: say which, not "out of memory" */
    const double figures[] = {s->makespan_s, s->utilization, s->wait_mean_s, s->wait_p50_s, s->wait_p95_s,
                              s->wait_p99_s, s->bsld_mean, s->lost_gpu_hours, s->goodput, s->availability};
    for (size_t k = 0; k < sizeof figures / sizeof *figures; k++)
        if (!isfinite(figures[k]))
            return err_set(err, NULL, 0, 0, "internal error: figure %zu of the JSON summary is not finite", k);
    json_t *root = json_pack(
        "{s:{s:s, s:s}, s:s, s:s, s:s, s:{s:I, s:I, s:I},"
        " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
        " s:f, s:f, s:{s:f, s:f, s:f, s:f}, s:f, s:I, s:{s:I, s:I}}",
        "meta", "tool", "fleetsim", "version", FLEETSIM_VERSION_STRING,
        "trace", trace, "policy", policy, "convention", convention,
        "cluster", "nodes", (json_int_t)nodes, "slots_per_node", (json_int_t)slots_per_node, "slots",
        (json_int_t)s->total_slots,
        "jobs", "in_trace", (json_int_t)s->jobs_in_trace, "run", (json_int_t)s->jobs_run, "completed",
        (json_int_t)s->completed, "killed_at_limit", (json_int_t)s->killed_at_limit, "skipped",
        (json_int_t)s->skipped, "skipped_too_big", (json_int_t)s->skipped_too_big, "unfinished",
        (json_int_t)s->unfinished,
        "makespan_s", s->makespan_s, "utilization", s->utilization,
        "wait_s", "mean", s->wait_mean_s, "p50", s->wait_p50_s, "p95", s->wait_p95_s, "p99", s->wait_p99_s,
        "bsld_mean", s->bsld_mean, "max_queue_len", (json_int_t)s->max_queue_len,
        "engine", "events", (json_int_t)s->events, "passes", (json_int_t)s->passes);
    if (!root)
        return err_set(err, NULL, 0, 0, "out of memory");
    int ok = 1;
    if (s->has_failures)
        json_put(root, "failures",
                 json_pack("{s:I, s:I, s:f, s:f, s:f}", "count", (json_int_t)s->failures, "interruptions",
                           (json_int_t)s->interruptions, "lost_gpu_hours", s->lost_gpu_hours, "goodput", s->goodput,
                           "node_availability", s->availability),
                 &ok);
    if (s->deliveries || s->retirements)
        json_put(root, "capacity",
                 json_pack("{s:I, s:I}", "deliveries", (json_int_t)s->deliveries, "retirements",
                           (json_int_t)s->retirements),
                 &ok);
    int rc = json_doc_write(out, ok ? root : NULL, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10),
                            "the JSON summary", err);
    json_decref(root);
    return rc;
}

const char *summary_outcome_name(int32_t outcome)
{
    switch (outcome) {
    case SIM_JOB_COMPLETED:
        return "completed";
    case SIM_JOB_KILLED_AT_LIMIT:
        return "killed_at_limit";
    case SIM_JOB_SKIPPED_TOO_BIG:
        return "skipped_too_big";
    case SIM_JOB_SKIPPED_INVALID:
        return "skipped_invalid";
    default:
        return "unfinished";
    }
}

int summary_write_jobs_csv(const char *path, const struct workload *w, const struct sim_result *r,
                           struct err *err)
{
    struct atomic_file f;
    if (atomic_file_open(&f, path, err) != 0)
        return -1;
    fputs("id,submit_s,start_s,end_s,wait_s,runtime_s,slots,nodes,outcome\n", f.fp);
    for (size_t i = 0; i < w->n; i++) {
        const struct job *j = &w->jobs[i];
        const struct sim_job_result *jr = &r->jobs[i];
        char submit[32], start[32], end[32], wait[32], run[32];
        units_format_seconds(submit, sizeof submit, j->submit_us);
        units_format_seconds(start, sizeof start, jr->start_us);
        units_format_seconds(end, sizeof end, jr->end_us);
        units_format_seconds(wait, sizeof wait, jr->start_us >= 0 ? jr->start_us - j->submit_us : -1);
        units_format_seconds(run, sizeof run, jr->end_us >= 0 ? jr->end_us - jr->start_us : -1);
        fprintf(f.fp, "%lld,%s,%s,%s,%s,%s,%d,%d,%s\n", (long long)j->id, submit, start, end, wait, run,
                j->slots, jr->n_nodes, summary_outcome_name(jr->outcome));
    }
    return atomic_file_commit(&f, err);
}
