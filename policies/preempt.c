#include "policies/preempt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/merge_sort.h"

const struct policy_param preempt_params[] = {
    {"max_preemptions", "integer >= 0", "3", "a job preempted this many times is never preempted again"},
    {"min_run_s", "number >= 0", "0", "a job running for less than this is never preempted"},
    {"team_tier", "list TEAM:TIER;...", "", "tier per team index; default: the job's priority input"},
};
const size_t preempt_n_params = sizeof preempt_params / sizeof *preempt_params;

int preempt_init(struct preempt *pr, const struct params *p, char *err, size_t err_len)
{
    memset(pr, 0, sizeof *pr);
    pr->max_preemptions = 3;
    if (!p)
        return 0;
    double maxp, min_run;
    if (params_number(p, "max_preemptions", 0, 1e9, &maxp, err, err_len) != 0 ||
        params_number(p, "min_run_s", 0, 1e12, &min_run, err, err_len) != 0 ||
        params_list(p, "team_tier", -1e9, 1e9, pr->team, pr->team_tier, PREEMPT_TEAM_TIERS_MAX, &pr->n_team_tiers,
                    err, err_len) != 0)
        return -1;
    if (maxp != floor(maxp)) {
        snprintf(err, err_len, "parameter 'max_preemptions' of 'preempt' is '%s', expected an integer",
                 params_text(p, "max_preemptions"));
        return -1;
    }
    pr->max_preemptions = (int64_t)maxp;
    pr->min_run_us = (int64_t)llround(min_run * 1e6);
    return 0;
}

void preempt_release(struct preempt *pr)
{
    if (!pr)
        return;
    free(pr->victims);
    free(pr->victims_scratch);
    free(pr->chosen);
    free(pr->taken);
    pr->chosen = NULL;
    pr->victims = pr->victims_scratch = NULL;
    pr->taken = NULL;
    pr->cap_victims = pr->cap_taken = 0;
}

double preempt_tier_of(const struct preempt *pr, const struct policy_job *job)
{
    for (size_t i = 0; i < pr->n_team_tiers; i++)
        if (pr->team[i] == job->team)
            return pr->team_tier[i];
    return (double)job->priority;
}

/* Victims in the order they are taken: lowest tier first, then the latest
 * started (the least work lost), then the highest id, then the view's
 * order (a total order). */
static inline int victim_before(const struct preempt_victim *a, const struct preempt_victim *b)
{
    if (a->tier != b->tier)
        return a->tier < b->tier;
    if (a->start_us != b->start_us)
        return a->start_us > b->start_us;
    if (a->id != b->id)
        return a->id > b->id;
    return a->running < b->running;
}

MERGE_SORT_DEFINE(sort_victims, struct preempt_victim, victim_before)

int preempt_begin(struct preempt *pr, const struct cluster_view *view, const double *tier_running)
{
    uint32_t n = view->n_running;
    pr->n_victims = 0;
    pr->first_open = 0;
    pr->fail_tier = -HUGE_VAL;
    pr->fail_slots = INT32_MAX;
    if (n > pr->cap_victims) {
        struct preempt_victim *v = realloc(pr->victims, n * sizeof *v);
        if (!v)
            return -1;
        pr->victims = v;
        v = realloc(pr->victims_scratch, n * sizeof *v);
        if (!v)
            return -1;
        pr->victims_scratch = v;
        uint32_t *c = realloc(pr->chosen, n * sizeof *c);
        if (!c)
            return -1;
        pr->chosen = c;
        pr->cap_victims = n;
    }
    if (n > pr->cap_taken || !pr->taken) {
        uint8_t *t = realloc(pr->taken, n ? n : 1);
        if (!t)
            return -1;
        pr->taken = t;
        pr->cap_taken = n ? n : 1;
    }
    memset(pr->taken, 0, n);
    for (uint32_t r = 0; r < n; r++) {
        const struct policy_running *run = &view->running[r];
        if (run->job.preemptions >= pr->max_preemptions || view->now_us - run->start_us < pr->min_run_us)
            continue;
        pr->victims[pr->n_victims++] = (struct preempt_victim){tier_running[r], run->start_us, run->job.id, r, 0};
    }
    /* Their slots on up nodes read, and sorted, only when a job's tier
     * passes the lowest: most asks stop there (Tiresias' tiers are its few
     * queues; team tiers may be one for all), and sorting every pass's
     * running jobs was two fifths of a Tiresias replay of HPC2N. The
     * lowest is the sort's first: victim_before orders them totally. */
    pr->ready = 0;
    pr->lowest = 0;
    for (uint32_t k = 1; k < pr->n_victims; k++)
        if (victim_before(&pr->victims[k], &pr->victims[pr->lowest]))
            pr->lowest = k;
    return 0;
}

/* Whether a shaped job (n nodes x slots / n) would have its nodes once the
 * chosen victims' slots are free: pooled room is not enough for it. */
static int shape_after(const struct preempt *pr, const struct backfill_pass *pass, const struct policy_job *job,
                       uint32_t n_chosen)
{
    const struct cluster_view *v = pass->view;
    int32_t per = job->slots / job->nodes, holding = 0;
    int32_t *freed = calloc(v->n_nodes + 1, sizeof *freed);
    if (!freed)
        return 0;
    for (uint32_t c = 0; c < n_chosen; c++) {
        const struct policy_running *run = &v->running[pr->victims[pr->chosen[c]].running];
        for (uint32_t a = 0; a < run->alloc_count; a++) {
            const struct policy_alloc *al = &v->allocs[run->alloc_first + a];
            if (al->node >= 0 && (uint32_t)al->node < v->n_nodes && al->milli == 0)
                freed[al->node] += al->slots; /* a share frees its GPU only with the last one: not counted */
        }
    }
    pass->placement->job_types = job->type_mask;
    for (uint32_t i = 0; i < v->n_nodes && holding < job->nodes; i++)
        if (v->nodes[i].state == POLICY_NODE_UP && policy_job_may_use(job, v->nodes[i].type) &&
            placement_free(pass->placement, v, i) + freed[i] >= per)
            holding++;
    pass->placement->job_types = 0;
    free(freed);
    return holding >= job->nodes;
}

/* The victims' slots on up nodes, and the victims in the order they are taken. */
static void make_ready(struct preempt *pr, const struct cluster_view *view)
{
    for (uint32_t k = 0; k < pr->n_victims; k++) {
        const struct policy_running *run = &view->running[pr->victims[k].running];
        int32_t up = 0;
        for (uint32_t a = 0; a < run->alloc_count; a++) {
            const struct policy_alloc *al = &view->allocs[run->alloc_first + a];
            if (al->node >= 0 && (uint32_t)al->node < view->n_nodes && view->nodes[al->node].state == POLICY_NODE_UP)
                up += al->slots;
        }
        pr->victims[k].up_slots = up;
    }
    if (pr->n_victims > 1)
        sort_victims(pr->victims, pr->n_victims, pr->victims_scratch);
    pr->ready = 1;
    pr->lowest = 0;
}

int preempt_make_room(struct preempt *pr, struct backfill_pass *pass, uint32_t qi, double job_tier,
                      int64_t *free_now, int (*may_take)(void *ctx, const struct policy_job *job),
                      void (*account)(void *ctx, const struct policy_job *job, int sign), void *ctx)
{
    const struct cluster_view *v = pass->view;
    const struct policy_job *job = &v->queued[qi];
    struct policy_decisions *out = pass->out;
    if (pr->n_victims == 0 || pr->victims[pr->lowest].tier + pr->margin >= job_tier)
        return 1;
    if (job_tier <= pr->fail_tier && job->slots >= pr->fail_slots)
        return 1;
    if (!pr->ready)
        make_ready(pr, v);
    /* The host sizes the buffers for starts from free slots; keep room for
     * this job's allocations (at most one per node) and the PREEMPTs. */
    uint32_t worst_allocs = (uint32_t)job->slots < v->n_nodes ? (uint32_t)job->slots : v->n_nodes;
    if (out->cap_allocs - out->n_allocs < worst_allocs)
        return 1;
    /* Victims taken this pass, or with nothing on up nodes, stay useless
     * for the rest of it: start after the run of them at the front (their
     * tiers are the lowest, so a tier too high for this job among them
     * would be too high after them too). */
    while (pr->first_open < pr->n_victims &&
           (pr->taken[pr->victims[pr->first_open].running] || pr->victims[pr->first_open].up_slots <= 0))
        pr->first_open++;
    int64_t room = *free_now;
    uint32_t n_chosen = 0;
    for (uint32_t k = pr->first_open; k < pr->n_victims && room < job->slots; k++) {
        const struct preempt_victim *vi = &pr->victims[k];
        if (vi->tier + pr->margin >= job_tier)
            break;
        const struct policy_job *vj = &v->running[vi->running].job;
        if (pr->taken[vi->running] || vi->up_slots <= 0 || (may_take && !may_take(ctx, vj)))
            continue;
        room += vi->up_slots;
        pr->chosen[n_chosen++] = k;
        if (account)
            account(ctx, vj, -1);
    }
    int misshaped = room >= job->slots && job->nodes > 0 && job->milli == 0 && !shape_after(pr, pass, job, n_chosen);
    if (room < job->slots || misshaped || out->cap - out->n < n_chosen + 1) {
        for (uint32_t c = 0; account && c < n_chosen; c++)
            account(ctx, &v->running[pr->victims[pr->chosen[c]].running].job, +1);
        /* too few slots is monotone (a bigger job at no higher tier fails
         * too); a shape that does not come out is not */
        if (!misshaped && (job_tier > pr->fail_tier || job->slots < pr->fail_slots)) {
            pr->fail_tier = job_tier;
            pr->fail_slots = job->slots;
        }
        return 1;
    }
    for (uint32_t c = 0; c < n_chosen; c++) {
        const struct preempt_victim *vi = &pr->victims[pr->chosen[c]];
        const struct policy_running *run = &v->running[vi->running];
        out->items[out->n++] = (struct policy_decision){POLICY_PREEMPT, vi->running, run->job.id, v->now_us, 0, 0};
        pr->taken[vi->running] = 1;
        for (uint32_t a = 0; a < run->alloc_count; a++) {
            const struct policy_alloc *al = &v->allocs[run->alloc_first + a];
            if (placement_give_back_alloc(pass->placement, v, al) != 0)
                return -1;
        }
    }
    *free_now = room;
    return 0;
}
