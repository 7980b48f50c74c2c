#include "agent/scheduler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenarios/catalog.h"
#include "sim/buffers.h"

int scheduler_node_type(const struct node_catalog *c, const char *gpu_model)
{
    for (size_t t = 0; t < c->n; t++) {
        const char *name = c->types[t].name;
        size_t len = strcspn(name, "-");
        for (const char *p = gpu_model; *p; p++) {
            if (strncmp(p, name, len) != 0)
                continue;
            int starts_word = p == gpu_model || p[-1] == ' ' || p[-1] == '-';
            int ends_word = p[len] == '\0' || p[len] == ' ' || p[len] == '-';
            if (starts_word && ends_word)
                return (int)t;
        }
    }
    return -1;
}

int scheduler_init(struct scheduler *s, const char *spec, double decide_timeout_s, struct err *err)
{
    memset(s, 0, sizeof *s);
    struct policy_host_options opt = {.host_name = "the agent", .decide_timeout_s = decide_timeout_s};
    if (policy_host_open(&s->ph, spec, &opt, err) != 0)
        return -1;
    struct diag_list diags;
    diag_list_init(&diags, 16);
    int rc = catalog_load_builtin(&s->catalog, &diags, err);
    diag_list_release(&diags);
    size_t rows = s->catalog.n + 1;
    s->type_speed = rc == 0 ? malloc(rows * POLICY_JOB_CLASSES * sizeof *s->type_speed) : NULL;
    if (!s->type_speed) {
        if (rc == 0)
            err_set(err, NULL, 0, 0, "out of memory");
        scheduler_release(s);
        return -1;
    }
    for (size_t t = 0; t < rows; t++)
        for (int c = 0; c < POLICY_JOB_CLASSES; c++)
            s->type_speed[t * POLICY_JOB_CLASSES + (size_t)c] = t < s->catalog.n ? s->catalog.types[t].speed[c] : 1.0;
    return 0;
}

void scheduler_release(struct scheduler *s)
{
    if (!s)
        return;
    policy_host_close(&s->ph);
    node_catalog_release(&s->catalog);
    free(s->type_speed);
    free(s->nodes);
    free(s->with_free);
    free(s->queued);
    free(s->queued_jobs);
    free(s->running);
    free(s->by_end);
    free(s->allocs);
    free(s->out.items);
    free(s->out.allocs);
    free(s->busy);
    free(s->free_left);
    free(s->started);
    free(s->deferred);
    free(s->deferred_allocs);
    memset(s, 0, sizeof *s);
}

void sched_result_init(struct sched_result *r)
{
    memset(r, 0, sizeof *r);
}

void sched_result_release(struct sched_result *r)
{
    free(r->starts);
    free(r->gpu_pool);
    free(r->reserved);
    free(r->preempts);
    memset(r, 0, sizeof *r);
}

/* Whether up nodes can ever hold a shaped job: `nodes` of them with gpus /
 * nodes each. One that cannot would head EASY's queue for ever (it is left
 * out, as the simulator skips it as too big). */
static int shape_fits(const struct policy_node *nodes, uint32_t nn, const struct agent_job *j)
{
    if (j->nodes <= 0)
        return 1;
    int32_t per = j->gpus / j->nodes, holding = 0;
    for (uint32_t i = 0; i < nn && holding < j->nodes; i++)
        holding += nodes[i].state == POLICY_NODE_UP && nodes[i].total_slots >= per;
    return holding >= j->nodes;
}

static void fill_policy_job(struct policy_job *p, const struct agent_job *j, int64_t now_us)
{
    int64_t attained = j->attained_us;
    if (j->state == JOB_RUNNING && j->start_us >= 0 && now_us > j->start_us)
        attained += (int64_t)j->gpus * (now_us - j->start_us);
    *p = (struct policy_job){.id = j->id,
                             .submit_us = j->submit_us,
                             .estimate_us = j->limit_us,
                             .slots = j->gpus,
                             .nodes = j->nodes,
                             .user = j->user_index,
                             .team = j->team_index,
                             .priority = j->priority,
                             .reserved_us = j->reserved_us,
                             .attained_us = attained,
                             .preemptions = j->preemptions,
                             .job_class = j->job_class};
}

void scheduler_observe(struct scheduler *s, int32_t kind, int64_t now_us, const struct agent_job *j, int64_t ran_us)
{
    if (s->failed)
        return;
    struct policy_job pj;
    fill_policy_job(&pj, j, now_us);
    struct policy_event ev = {kind, now_us, &pj, ran_us};
    struct err err;
    err_clear(&err);
    if (policy_host_observe(&s->ph, &ev, &err) != POLICY_HOST_OK) {
        s->failed = 1;
        snprintf(s->failure, sizeof s->failure, "%s", err.msg);
    }
}

static int oom(struct err *err)
{
    return err_set(err, NULL, 0, 0, "out of memory");
}

/* Adds a start of j on allocs (node, GPUs), picking the node's GPUs. The
 * result's pool must have room (the caller sized it). */
static int add_start(struct scheduler *s, const struct inventory *inv, struct agent_job *j,
                     const struct policy_alloc *allocs, uint32_t n, struct sched_result *res, struct err *err)
{
    struct sched_start *ss = &res->starts[res->n_starts++];
    ss->job = j;
    ss->gpus = NULL;
    for (uint32_t a = 0; a < n; a++) {
        const struct policy_alloc *al = &allocs[a];
        if (inventory_pick_gpus(inv, (uint32_t)al->node, al->slots, s->busy, &res->gpu_pool[res->n_pool]) != 0)
            return err_set(err, NULL, 0, 0, "internal: node '%s' lost its free GPUs during the pass",
                           inv->nodes[al->node].name);
        for (int32_t g = 0; g < al->slots; g++)
            s->busy[res->gpu_pool[res->n_pool + (uint32_t)g]] = 1;
        res->n_pool += (uint32_t)al->slots;
    }
    s->starts++;
    return 0;
}

/* Pointers into the pool only once it no longer moves. */
static void finish_starts(struct sched_result *res)
{
    uint32_t off = 0;
    for (uint32_t k = 0; k < res->n_starts; k++) {
        res->starts[k].gpus = &res->gpu_pool[off];
        off += (uint32_t)res->starts[k].job->gpus;
    }
}

static int defer_start(struct scheduler *s, int64_t job_id, const struct policy_alloc *allocs, uint32_t n)
{
    if (buffers_grow((void **)&s->deferred, &s->cap_deferred, s->n_deferred + 1, sizeof *s->deferred) != 0 ||
        buffers_grow((void **)&s->deferred_allocs, &s->cap_deferred_allocs, s->n_deferred_allocs + n,
                     sizeof *s->deferred_allocs) != 0)
        return -1;
    s->deferred[s->n_deferred++] = (struct deferred_start){job_id, s->n_deferred_allocs, n};
    memcpy(&s->deferred_allocs[s->n_deferred_allocs], allocs, n * sizeof *allocs);
    s->n_deferred_allocs += n;
    return 0;
}

/* The victims have stopped: the starts they made room for go first, where
 * the policy put them (a job cancelled meanwhile, or a node that lost GPUs,
 * is left to the next pass). s->nodes holds the current free GPUs. */
static int resume_deferred(struct scheduler *s, const struct inventory *inv, struct agent_job *const *queued,
                           uint32_t n_queued, struct sched_result *res, struct err *err)
{
    uint32_t pool_need = 1;
    for (uint32_t k = 0; k < s->n_deferred; k++)
        for (uint32_t a = 0; a < s->deferred[k].count; a++)
            pool_need += (uint32_t)s->deferred_allocs[s->deferred[k].first + a].slots;
    if (buffers_grow((void **)&res->starts, &res->cap_starts, s->n_deferred + 1, sizeof *res->starts) != 0 ||
        buffers_grow((void **)&res->gpu_pool, &res->cap_pool, pool_need, sizeof *res->gpu_pool) != 0)
        return oom(err);
    for (uint32_t i = 0; i < inv->n_nodes; i++)
        s->free_left[i] = s->nodes[i].state == POLICY_NODE_UP ? s->nodes[i].free_slots : 0;
    for (uint32_t k = 0; k < s->n_deferred; k++) {
        const struct deferred_start *ds = &s->deferred[k];
        struct agent_job *j = NULL;
        for (uint32_t i = 0; i < n_queued && !j; i++)
            if (queued[i]->id == ds->job_id)
                j = queued[i];
        const struct policy_alloc *al = &s->deferred_allocs[ds->first];
        int fits = j != NULL;
        for (uint32_t a = 0; a < ds->count && fits; a++)
            fits = (uint32_t)al[a].node < inv->n_nodes && s->free_left[al[a].node] >= al[a].slots;
        if (!fits)
            continue;
        for (uint32_t a = 0; a < ds->count; a++)
            s->free_left[al[a].node] -= al[a].slots;
        if (add_start(s, inv, j, al, ds->count, res, err) != 0)
            return -1;
    }
    s->n_deferred = s->n_deferred_allocs = 0;
    res->resumed = 1;
    finish_starts(res);
    return 0;
}

int scheduler_pass(struct scheduler *s, int64_t now_us, const struct inventory *inv, struct agent_job *const *queued,
                   uint32_t n_queued, struct agent_job *const *running, uint32_t n_running, struct sched_result *res,
                   struct err *err)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    res->n_starts = res->n_pool = res->n_reserved = res->n_preempts = res->left_out = res->deferred = 0;
    res->spanning = 0;
    res->resumed = 0;
    if (s->failed)
        return err_set(err, NULL, 0, 0, "%s", s->failure);
    for (uint32_t r = 0; r < n_running; r++)
        if (running[r]->preempting)
            return 0; /* its end makes the next pass */
    uint32_t nn = inv->n_nodes, ng = inv->n_gpus;
    /* per-node and per-GPU scratch, sized to the inventory on every pass (cheap) */
    free(s->nodes);
    free(s->with_free);
    free(s->busy);
    free(s->free_left);
    s->nodes = calloc(nn ? nn : 1, sizeof *s->nodes);
    s->with_free = calloc(nn ? nn : 1, sizeof *s->with_free);
    s->free_left = calloc(nn ? nn : 1, sizeof *s->free_left);
    s->busy = calloc(ng ? ng : 1, 1);
    if (!s->nodes || !s->with_free || !s->busy || !s->free_left)
        return oom(err);
    uint32_t alloc_need = 1;
    for (uint32_t r = 0; r < n_running; r++) {
        for (int32_t k = 0; k < running[r]->n_gpu_idx; k++)
            if (running[r]->gpu_idx[k] >= 0 && (uint32_t)running[r]->gpu_idx[k] < ng)
                s->busy[running[r]->gpu_idx[k]] = 1;
        alloc_need += (uint32_t)running[r]->n_gpu_idx;
    }
    int32_t unknown_type = (int32_t)s->catalog.n;
    for (uint32_t i = 0; i < nn; i++) {
        const struct inv_node *nd = &inv->nodes[i];
        int32_t usable = 0, idle = 0;
        for (int32_t k = 0; k < nd->n_gpus; k++) {
            uint32_t g = (uint32_t)(nd->first_gpu + k);
            if (inv->gpus[g].drained)
                continue;
            usable++;
            idle += !s->busy[g];
        }
        int32_t state = nd->drained ? POLICY_NODE_DRAINING : usable == 0 ? POLICY_NODE_DOWN : POLICY_NODE_UP;
        int type = nd->n_gpus > 0 ? scheduler_node_type(&s->catalog, inv->gpus[nd->first_gpu].model) : -1;
        s->nodes[i] = (struct policy_node){type < 0 ? unknown_type : type, state, usable, idle, nd->nvlink_domain,
                                           nd->leaf, nd->pod, 0, 0, 0};
    }
    struct cluster_view view = {.now_us = now_us, .nodes = s->nodes, .n_nodes = nn};
    policy_host_tally_nodes(&view, s->with_free);
    if (s->n_deferred)
        return resume_deferred(s, inv, queued, n_queued, res, err);

    if (buffers_grow((void **)&s->queued, &s->cap_queued, n_queued + 1, sizeof *s->queued) != 0)
        return oom(err);
    void *qj = realloc(s->queued_jobs, s->cap_queued * sizeof *s->queued_jobs);
    void *st = qj ? realloc(s->started, s->cap_queued) : NULL;
    if (qj)
        s->queued_jobs = qj;
    if (!st)
        return oom(err);
    s->started = st;
    uint32_t nq = 0;
    int32_t largest = 0; /* usable GPUs of the largest node: a job must fit on one */
    for (uint32_t i = 0; i < nn; i++)
        if (s->nodes[i].state == POLICY_NODE_UP && s->nodes[i].total_slots > largest)
            largest = s->nodes[i].total_slots;
    for (uint32_t i = 0; i < n_queued; i++) {
        if (queued[i]->gpus > view.total_slots || (!s->multi_node && queued[i]->gpus > largest) ||
            !shape_fits(s->nodes, nn, queued[i])) {
            res->left_out++;
            continue;
        }
        fill_policy_job(&s->queued[nq], queued[i], now_us);
        s->queued_jobs[nq++] = queued[i];
    }
    if (nq == 0)
        return 0;
    if (buffers_grow((void **)&s->running, &s->cap_running, n_running + 1, sizeof *s->running) != 0)
        return oom(err);
    void *be = realloc(s->by_end, s->cap_running * sizeof *s->by_end);
    if (!be)
        return oom(err);
    s->by_end = be;
    if (buffers_grow((void **)&s->allocs, &s->cap_allocs, alloc_need, sizeof *s->allocs) != 0)
        return oom(err);
    uint32_t na = 0;
    for (uint32_t r = 0; r < n_running; r++) {
        const struct agent_job *j = running[r];
        struct policy_running *pr = &s->running[r];
        fill_policy_job(&pr->job, j, now_us);
        pr->start_us = j->start_us;
        pr->expected_end_us = j->start_us + j->limit_us;
        pr->alloc_first = na;
        /* one allocation per node, GPUs counted */
        for (int32_t k = 0; k < j->n_gpu_idx; k++) {
            int32_t g = j->gpu_idx[k];
            if (g < 0 || (uint32_t)g >= ng)
                continue;
            int32_t node = inv->gpus[g].node;
            uint32_t a = pr->alloc_first;
            while (a < na && s->allocs[a].node != node)
                a++;
            if (a == na)
                s->allocs[na++] = (struct policy_alloc){node, 0, 0, 0};
            s->allocs[a].slots++;
        }
        pr->alloc_count = na - pr->alloc_first;
    }
    policy_host_order_by_end(s->running, n_running, s->by_end);
    view.queued = s->queued;
    view.n_queued = nq;
    view.running = s->running;
    view.running_by_end = s->by_end;
    view.n_running = n_running;
    view.allocs = s->allocs;
    view.type_speed = s->type_speed;
    view.n_types = (uint32_t)s->catalog.n + 1;
    if (policy_host_size_decisions(&s->out, &view) != 0)
        return oom(err);

    s->passes++;
    switch (policy_host_decide(&s->ph, &view, &s->out, err)) {
    case POLICY_HOST_OK:
        break;
    case POLICY_HOST_BROKE:
        s->contract_errors++;
        return -1;
    case POLICY_HOST_NO_MEMORY: /* refused like a breach, and tried again; no breach counted */
        return -1;
    case POLICY_HOST_FAILED:
        if (s->ph.failed) {
            s->failed = 1;
            snprintf(s->failure, sizeof s->failure, "%s", err->msg);
        }
        return -1;
    }

    /* apply: preemptions, reservations, then GPUs for each start that the
     * GPUs free now can hold (a preempted job keeps its GPUs until it stops) */
    uint32_t n_starts = 0, n_preempts = 0;
    for (uint32_t k = 0; k < s->out.n; k++) {
        n_starts += s->out.items[k].kind == POLICY_START;
        n_preempts += s->out.items[k].kind == POLICY_PREEMPT;
    }
    if (buffers_grow((void **)&res->starts, &res->cap_starts, n_starts + 1, sizeof *res->starts) != 0 ||
        buffers_grow((void **)&res->reserved, &res->cap_reserved, s->out.n + 1, sizeof *res->reserved) != 0 ||
        buffers_grow((void **)&res->preempts, &res->cap_preempts, n_preempts + 1, sizeof *res->preempts) != 0)
        return oom(err);
    uint32_t pool_need = 1;
    for (uint32_t k = 0; k < s->out.n; k++)
        if (s->out.items[k].kind == POLICY_START)
            pool_need += (uint32_t)s->queued[s->out.items[k].job_index].slots;
    if (buffers_grow((void **)&res->gpu_pool, &res->cap_pool, pool_need, sizeof *res->gpu_pool) != 0)
        return oom(err);
    memset(s->started, 0, nq);
    for (uint32_t i = 0; i < nn; i++)
        s->free_left[i] = s->nodes[i].free_slots;
    s->n_deferred = s->n_deferred_allocs = 0;
    for (uint32_t k = 0; k < s->out.n; k++) {
        const struct policy_decision *d = &s->out.items[k];
        if (d->kind == POLICY_PREEMPT) {
            struct agent_job *victim = running[d->job_index];
            s->preempts++;
            if (!victim->preempting)
                res->preempts[res->n_preempts++] = victim;
            continue;
        }
        if (d->kind != POLICY_START)
            continue;
        /* local mode runs a job as one process tree on one node: a start
         * spread over nodes is not carried out (multi-node jobs belong to a
         * Slurm backend); the job waits for a later pass */
        int spans = 0;
        for (uint32_t a = 1; a < d->alloc_count && !s->multi_node; a++)
            spans |= s->out.allocs[d->alloc_first + a].node != s->out.allocs[d->alloc_first].node &&
                     s->out.allocs[d->alloc_first + a].slots > 0;
        if (spans) {
            res->spanning++;
            s->spanning_refused++;
            continue;
        }
        int fits = 1;
        for (uint32_t a = 0; a < d->alloc_count; a++) {
            const struct policy_alloc *al = &s->out.allocs[d->alloc_first + a];
            fits &= s->free_left[al->node] >= al->slots;
        }
        if (!fits) {
            res->deferred++;
            if (defer_start(s, s->queued_jobs[d->job_index]->id, &s->out.allocs[d->alloc_first], d->alloc_count) != 0)
                return oom(err);
            continue;
        }
        for (uint32_t a = 0; a < d->alloc_count; a++)
            s->free_left[s->out.allocs[d->alloc_first + a].node] -= s->out.allocs[d->alloc_first + a].slots;
        s->started[d->job_index] = 1;
        if (add_start(s, inv, s->queued_jobs[d->job_index], &s->out.allocs[d->alloc_first], d->alloc_count, res, err) !=
            0)
            return -1;
    }
    for (uint32_t k = 0; k < s->out.n; k++) {
        const struct policy_decision *d = &s->out.items[k];
        if (d->kind != POLICY_RESERVE)
            continue;
        struct agent_job *j = s->queued_jobs[d->job_index];
        s->reserves++;
        if (j->reserved_us != d->at_us && !s->started[d->job_index]) {
            j->reserved_us = d->at_us;
            res->reserved[res->n_reserved++] = j;
        }
    }
    if (res->n_preempts == 0)
        s->n_deferred = s->n_deferred_allocs = 0; /* only victims stopping hold a start back */
    finish_starts(res);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s->pass_ns_total += (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
    return 0;
}
