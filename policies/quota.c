#include "policies/quota.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/merge_sort.h"

enum { QUOTA_TEAMS_MAX = 64 };

const struct policy_param quota_params[] = {
    {"guarantee", "list TEAM:GPUS;...", "", "guaranteed slots (GPUs) per team index (-1 = unknown team)"},
    {"default_gpus", "integer >= 0", "0", "guarantee of a team not in 'guarantee'"},
    {"borrow", "0|1", "1", "1: a team may use idle slots beyond its guarantee"},
    {"reclaim", "0|1", "1", "1: a team within its guarantee preempts borrowers to get it back"},
};
const size_t quota_n_params = sizeof quota_params / sizeof *quota_params;

struct quota {
    int32_t team[QUOTA_TEAMS_MAX];
    double gpus[QUOTA_TEAMS_MAX];
    size_t n;
    int64_t default_gpus;
    int borrow, reclaim;
    /* per team slot (team + 1): usage during a pass */
    int64_t *used;
    uint32_t n_slots, cap_slots;
};

static int flag(const struct params *p, const char *name, int *out, char *err, size_t err_len)
{
    double v;
    if (params_number(p, name, 0, 1, &v, err, err_len) != 0)
        return -1;
    if (v != 0 && v != 1) {
        snprintf(err, err_len, "parameter '%s' of '%s' is '%s', expected 0 or 1", name, p->component,
                 params_text(p, name));
        return -1;
    }
    *out = v == 1;
    return 0;
}

struct quota *quota_new(const struct params *p, char *err, size_t err_len)
{
    struct quota *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, err_len, "out of memory");
        return NULL;
    }
    double def;
    if (params_list(p, "guarantee", 0, 1e9, q->team, q->gpus, QUOTA_TEAMS_MAX, &q->n, err, err_len) != 0 ||
        params_number(p, "default_gpus", 0, 1e9, &def, err, err_len) != 0 || flag(p, "borrow", &q->borrow, err, err_len) != 0 ||
        flag(p, "reclaim", &q->reclaim, err, err_len) != 0) {
        free(q);
        return NULL;
    }
    q->default_gpus = (int64_t)def;
    return q;
}

void quota_free(struct quota *q)
{
    if (!q)
        return;
    free(q->used);
    free(q);
}

int quota_reclaims(const struct quota *q)
{
    return q->reclaim;
}

int64_t quota_guarantee(const struct quota *q, int32_t team)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->team[i] == team)
            return (int64_t)q->gpus[i];
    return q->default_gpus;
}

static uint32_t slot_of(int32_t team)
{
    return team < -1 ? 0u : (uint32_t)(team + 1);
}

static int64_t used_of(const struct quota *q, int32_t team)
{
    uint32_t s = slot_of(team);
    return s < q->n_slots ? q->used[s] : 0;
}

static void add_used(struct quota *q, int32_t team, int64_t slots)
{
    uint32_t s = slot_of(team);
    if (s < q->n_slots)
        q->used[s] += slots;
}

/* The running jobs by start, then id, then the view's order: keys that
 * carry what the comparison needs (policies keep no globals). */
struct start_key {
    int64_t start_us;
    int64_t id;
    uint32_t index;
};

static inline int start_key_before(const struct start_key *a, const struct start_key *b)
{
    if (a->start_us != b->start_us)
        return a->start_us < b->start_us;
    if (a->id != b->id)
        return a->id < b->id;
    return a->index < b->index;
}

MERGE_SORT_DEFINE(sort_start_keys, struct start_key, start_key_before)

int quota_begin(struct quota *q, const struct cluster_view *view, double *tier_running)
{
    uint32_t n = 1;
    for (uint32_t i = 0; i < view->n_queued; i++)
        if (slot_of(view->queued[i].team) + 1 > n)
            n = slot_of(view->queued[i].team) + 1;
    for (uint32_t r = 0; r < view->n_running; r++)
        if (slot_of(view->running[r].job.team) + 1 > n)
            n = slot_of(view->running[r].job.team) + 1;
    if (n > q->cap_slots) {
        int64_t *u = realloc(q->used, n * sizeof *u);
        if (!u)
            return -1;
        q->used = u;
        q->cap_slots = n;
    }
    q->n_slots = n;
    memset(q->used, 0, n * sizeof *q->used);
    if (view->n_running == 0)
        return 0;
    struct start_key *keys = malloc(2 * (size_t)view->n_running * sizeof *keys); /* and the sort's scratch */
    if (!keys)
        return -1;
    for (uint32_t r = 0; r < view->n_running; r++)
        keys[r] = (struct start_key){view->running[r].start_us, view->running[r].job.id, r};
    sort_start_keys(keys, view->n_running, keys + view->n_running);
    for (uint32_t k = 0; k < view->n_running; k++) {
        const struct policy_job *j = &view->running[keys[k].index].job;
        int64_t before = used_of(q, j->team);
        if (tier_running)
            tier_running[keys[k].index] = before + j->slots <= quota_guarantee(q, j->team) ? 1 : 0;
        add_used(q, j->team, j->slots);
    }
    free(keys);
    return 0;
}

int quota_fits(const struct quota *q, const struct policy_job *job)
{
    return used_of(q, job->team) + job->slots <= quota_guarantee(q, job->team);
}

int quota_admit(const struct quota *q, const struct policy_job *job)
{
    return q->borrow || quota_fits(q, job);
}

int quota_over(const struct quota *q, int32_t team)
{
    return used_of(q, team) > quota_guarantee(q, team);
}

void quota_started(struct quota *q, const struct policy_job *job)
{
    add_used(q, job->team, job->slots);
}

void quota_stopped(struct quota *q, const struct policy_job *job)
{
    add_used(q, job->team, -(int64_t)job->slots);
}
