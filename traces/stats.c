#include "traces/stats.h"

#include <stdlib.h>
#include <string.h>

static int stats_time_cmp(const void *pa, const void *pb)
{
    sim_time a = *(const sim_time *)pa, b = *(const sim_time *)pb;
    return a < b ? -1 : a > b;
}

/* Nearest rank: the value at 1-based rank ceil(p * n / 100). Integer
 * arithmetic, so p95 of 20 jobs is exactly the 19th. */
static sim_time stats_percentile(const sim_time *sorted, size_t n, unsigned p)
{
    size_t rank = (n * p + 99) / 100;
    if (rank < 1)
        rank = 1;
    return sorted[rank - 1];
}

static int stats_runtimes(const struct workload *w, struct trace_stats *s, struct err *err)
{
    sim_time *rt = malloc(w->n * sizeof *rt);
    if (!rt)
        return err_set(err, NULL, 0, 0, "out of memory computing trace statistics");
    double sum_s = 0;
    for (size_t i = 0; i < w->n; i++) {
        rt[i] = w->jobs[i].runtime_us;
        sum_s += (double)rt[i] / 1e6;
    }
    qsort(rt, w->n, sizeof *rt, stats_time_cmp);
    s->runtime_mean_s = sum_s / (double)w->n;
    s->runtime_p50_s = (double)stats_percentile(rt, w->n, 50) / 1e6;
    s->runtime_p95_s = (double)stats_percentile(rt, w->n, 95) / 1e6;
    free(rt);
    return 0;
}

/* Distinct indices in [0, table_n) that jobs use, via a byte map. */
static int stats_distinct(const struct workload *w, size_t table_n, int team, size_t *out,
                          struct err *err)
{
    *out = 0;
    if (table_n == 0)
        return 0;
    unsigned char *seen = calloc(table_n, 1);
    if (!seen)
        return err_set(err, NULL, 0, 0, "out of memory computing trace statistics");
    for (size_t i = 0; i < w->n; i++) {
        int32_t k = team ? w->jobs[i].team : w->jobs[i].user;
        if (k >= 0 && (size_t)k < table_n && !seen[k]) {
            seen[k] = 1;
            (*out)++;
        }
    }
    free(seen);
    return 0;
}

static void stats_scan(const struct workload *w, struct trace_stats *s)
{
    double slots_sum = 0, slot_s = 0, accuracy_sum = 0;
    size_t with_limit = 0;
    s->first_submit_us = s->last_submit_us = w->jobs[0].submit_us;
    s->min_slots = s->max_slots = w->jobs[0].slots;
    for (size_t i = 0; i < w->n; i++) {
        const struct job *j = &w->jobs[i];
        if (j->submit_us < s->first_submit_us)
            s->first_submit_us = j->submit_us;
        if (j->submit_us > s->last_submit_us)
            s->last_submit_us = j->submit_us;
        if (j->slots < s->min_slots)
            s->min_slots = j->slots;
        if (j->slots > s->max_slots)
            s->max_slots = j->slots;
        slots_sum += j->slots;
        slot_s += (double)j->slots * ((double)j->runtime_us / 1e6);
        if (j->limit_us > 0) {
            with_limit++;
            accuracy_sum += (double)j->runtime_us / (double)j->limit_us;
        }
    }
    s->mean_slots = slots_sum / (double)w->n;
    s->offered_slot_hours = slot_s / 3600.0;
    s->limit_known_fraction = (double)with_limit / (double)w->n;
    s->mean_limit_accuracy = with_limit ? accuracy_sum / (double)with_limit : 0;
}

int trace_stats_compute(const struct workload *w, struct trace_stats *s, struct err *err)
{
    memset(s, 0, sizeof *s);
    s->jobs = w->n;
    if (w->n == 0)
        return 0;
    stats_scan(w, s);
    if (stats_runtimes(w, s, err) != 0 || stats_distinct(w, w->users.n, 0, &s->users, err) != 0 ||
        stats_distinct(w, w->teams.n, 1, &s->teams, err) != 0)
        return -1;
    return 0;
}
