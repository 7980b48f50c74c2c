#include "traces/gpustats.h"

#include <stdlib.h>
#include <string.h>

const char *const gpustats_bucket_names[GPUSTATS_BUCKETS] = {"1", "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+"};

static int gpustats_bucket(int32_t gpus)
{
    int b = 0;
    for (int32_t top = 1; b < GPUSTATS_BUCKETS - 1 && gpus > top; top *= 2)
        b++;
    return b;
}

static int gpustats_cmp(const void *pa, const void *pb)
{
    sim_time a = *(const sim_time *)pa, b = *(const sim_time *)pb;
    return a < b ? -1 : a > b;
}

/* Nearest rank on sorted values, as traces/stats.c. */
static double gpustats_pct(const sim_time *v, size_t n, unsigned p)
{
    size_t rank = (n * p + 99) / 100;
    return (double)v[(rank < 1 ? 1 : rank) - 1] / 1e6;
}

/* team: a team index, -1 for jobs without one, -2 for all jobs. */
static void gpustats_group(const struct workload *w, int32_t team, struct gpustats_group *g, sim_time *rt,
                           sim_time *wait)
{
    double rt_sum = 0, wait_sum = 0;
    for (size_t i = 0; i < w->n; i++) {
        const struct job *j = &w->jobs[i];
        if (team != -2 && j->team != team)
            continue;
        rt[g->jobs++] = j->runtime_us;
        rt_sum += (double)j->runtime_us / 1e6;
        g->multi_gpu_jobs += j->slots > 1;
        g->gpu_hours += job_gpu_share(j) * ((double)j->runtime_us / 3600e6); /* a share of a GPU counts as such */
        g->gpus[gpustats_bucket(j->slots)]++;
        if (j->wait_known) {
            wait[g->queue_n++] = j->wait_us;
            wait_sum += (double)j->wait_us / 1e6;
        }
        if (j->status == 1)
            g->completed++;
        else if (j->status == 5)
            g->killed++;
        else if (j->status == 0)
            g->failed++;
        else
            g->unknown++;
    }
    if (g->jobs) {
        qsort(rt, g->jobs, sizeof *rt, gpustats_cmp);
        g->runtime_mean_s = rt_sum / (double)g->jobs;
        g->runtime_p50_s = gpustats_pct(rt, g->jobs, 50);
        g->runtime_p95_s = gpustats_pct(rt, g->jobs, 95);
    }
    if (g->queue_n) {
        qsort(wait, g->queue_n, sizeof *wait, gpustats_cmp);
        g->queue_mean_s = wait_sum / (double)g->queue_n;
        g->queue_p50_s = gpustats_pct(wait, g->queue_n, 50);
        g->queue_p95_s = gpustats_pct(wait, g->queue_n, 95);
    }
}

int gpustats_compute(const struct workload *w, struct gpustats *s, struct err *err)
{
    memset(s, 0, sizeof *s);
    s->skipped_at_read = w->meta.skipped_at_read;
    s->jobs_in_file = w->n + s->skipped_at_read;
    size_t n = w->n ? w->n : 1;
    sim_time *rt = malloc(n * sizeof *rt), *wait = malloc(n * sizeof *wait);
    int none = 0;
    for (size_t i = 0; i < w->n; i++)
        none |= w->jobs[i].team < 0;
    s->n_teams = w->teams.n + (size_t)(none && w->teams.n);
    s->teams = s->n_teams ? calloc(s->n_teams, sizeof *s->teams) : NULL;
    if (!rt || !wait || (s->n_teams && !s->teams)) {
        free(rt);
        free(wait);
        gpustats_release(s);
        return err_set(err, NULL, 0, 0, "out of memory computing GPU trace statistics");
    }
    s->all.name = "all";
    gpustats_group(w, -2, &s->all, rt, wait);
    for (size_t t = 0; t < w->teams.n; t++) {
        s->teams[t].name = string_table_get(&w->teams, (int32_t)t);
        gpustats_group(w, (int32_t)t, &s->teams[t], rt, wait);
    }
    if (none && w->teams.n) {
        s->teams[w->teams.n].name = "(none)";
        gpustats_group(w, -1, &s->teams[w->teams.n], rt, wait);
    }
    free(rt);
    free(wait);
    return 0;
}

void gpustats_release(struct gpustats *s)
{
    if (!s)
        return;
    free(s->teams);
    s->teams = NULL;
    s->n_teams = 0;
}
