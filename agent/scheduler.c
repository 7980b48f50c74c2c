#include "agent/scheduler.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policies/registry.h"
#include "sim/buffers.h"

static int load_plugin(struct scheduler *s, const char *spec, struct err *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s", spec);
    const char *params = "";
    char *so = strstr(path, ".so");
    if (so && so[3] == ':') {
        so[3] = '\0';
        params = spec + (so - path) + 4;
    }
    s->plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!s->plugin)
        return err_set(err, NULL, 0, 0, "cannot load policy plugin '%s': %s", path, dlerror());
    void *sym = dlsym(s->plugin, POLICY_ENTRY_SYMBOL);
    policy_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    if (!sym)
        return err_set(err, NULL, 0, 0, "policy plugin '%s' does not export '%s'", path, POLICY_ENTRY_SYMBOL);
    const struct policy_ops *ops = entry();
    if (!ops || !ops->name || !ops->create || !ops->destroy || !ops->decide)
        return err_set(err, NULL, 0, 0, "policy plugin '%s' returned an incomplete policy_ops table", path);
    if (ops->abi_version != POLICY_ABI_VERSION)
        return err_set(err, NULL, 0, 0, "policy plugin '%s' has ABI version %u; this agent needs %u: rebuild it "
                                        "against this policies/policy.h",
                       path, ops->abi_version, POLICY_ABI_VERSION);
    char msg[256] = "";
    if (ops->create(params, &s->policy, msg, sizeof msg) != 0)
        return err_set(err, NULL, 0, 0, "policy plugin '%s': %s", path, msg[0] ? msg : "create failed");
    s->ops = ops;
    return 0;
}

int scheduler_init(struct scheduler *s, const char *spec, struct err *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->spec, sizeof s->spec, "%s", spec);
    if (strchr(spec, '/')) {
        if (load_plugin(s, spec, err) != 0) {
            scheduler_release(s);
            return -1;
        }
        return 0;
    }
    char msg[256];
    if (policy_registry_create(spec, &s->ops, &s->policy, msg, sizeof msg) != 0) {
        s->ops = NULL;
        return err_set(err, NULL, 0, 0, "%s", msg);
    }
    return 0;
}

void scheduler_release(struct scheduler *s)
{
    if (!s)
        return;
    if (s->ops && s->policy)
        s->ops->destroy(s->policy);
    if (s->plugin)
        dlclose(s->plugin);
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
    memset(r, 0, sizeof *r);
}

static void fill_policy_job(struct policy_job *p, const struct agent_job *j)
{
    *p = (struct policy_job){.id = j->id,
                             .submit_us = j->submit_us,
                             .estimate_us = j->limit_us,
                             .slots = j->gpus,
                             .user = j->user_index,
                             .team = j->team_index,
                             .priority = j->priority,
                             .reserved_us = j->reserved_us};
}

void scheduler_observe(struct scheduler *s, int32_t kind, int64_t now_us, const struct agent_job *j, int64_t ran_us)
{
    if (!s->ops || !s->ops->observe)
        return;
    struct policy_job pj;
    fill_policy_job(&pj, j);
    struct policy_event ev = {kind, now_us, &pj, ran_us};
    s->ops->observe(s->policy, &ev);
}

static const struct policy_running *by_end_running;

static int by_end_cmp(const void *a, const void *b)
{
    const struct policy_running *x = &by_end_running[*(const uint32_t *)a];
    const struct policy_running *y = &by_end_running[*(const uint32_t *)b];
    if (x->expected_end_us != y->expected_end_us)
        return x->expected_end_us < y->expected_end_us ? -1 : 1;
    return (x->job.id > y->job.id) - (x->job.id < y->job.id);
}

static int contract_error(struct scheduler *s, struct err *err, int64_t now, const char *what,
                          const struct policy_decision *d)
{
    s->contract_errors++;
    return err_set(err, NULL, 0, 0, "policy '%s' broke the contract at t=%lld us: %s (job '%lld'): pass refused",
                   s->ops->name, (long long)now, what, (long long)d->job_id);
}

int scheduler_pass(struct scheduler *s, int64_t now_us, const struct inventory *inv, struct agent_job *const *queued,
                   uint32_t n_queued, struct agent_job *const *running, uint32_t n_running, struct sched_result *res,
                   struct err *err)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    res->n_starts = res->n_pool = res->n_reserved = res->left_out = 0;
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
        return err_set(err, NULL, 0, 0, "out of memory");
    uint32_t alloc_need = 1;
    for (uint32_t r = 0; r < n_running; r++) {
        for (int32_t k = 0; k < running[r]->n_gpu_idx; k++)
            if (running[r]->gpu_idx[k] >= 0 && (uint32_t)running[r]->gpu_idx[k] < ng)
                s->busy[running[r]->gpu_idx[k]] = 1;
        alloc_need += (uint32_t)running[r]->n_gpu_idx;
    }
    int64_t total = 0, free_total = 0;
    uint32_t n_with_free = 0;
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
        s->nodes[i] = (struct policy_node){0, state, usable, idle, nd->nvlink_domain, -1, -1, 0};
        if (state == POLICY_NODE_UP) {
            total += usable;
            free_total += idle;
            if (idle > 0)
                s->with_free[n_with_free++] = i;
        }
    }
    if (buffers_grow((void **)&s->queued, &s->cap_queued, n_queued + 1, sizeof *s->queued) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    void *qj = realloc(s->queued_jobs, s->cap_queued * sizeof *s->queued_jobs);
    void *st = qj ? realloc(s->started, s->cap_queued) : NULL;
    if (qj)
        s->queued_jobs = qj;
    if (!st)
        return err_set(err, NULL, 0, 0, "out of memory");
    s->started = st;
    uint32_t nq = 0;
    for (uint32_t i = 0; i < n_queued; i++) {
        if (queued[i]->gpus > total) {
            res->left_out++;
            continue;
        }
        fill_policy_job(&s->queued[nq], queued[i]);
        s->queued_jobs[nq++] = queued[i];
    }
    if (nq == 0)
        return 0;
    if (buffers_grow((void **)&s->running, &s->cap_running, n_running + 1, sizeof *s->running) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    void *be = realloc(s->by_end, s->cap_running * sizeof *s->by_end);
    if (!be)
        return err_set(err, NULL, 0, 0, "out of memory");
    s->by_end = be;
    if (buffers_grow((void **)&s->allocs, &s->cap_allocs, alloc_need, sizeof *s->allocs) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    uint32_t na = 0;
    for (uint32_t r = 0; r < n_running; r++) {
        const struct agent_job *j = running[r];
        struct policy_running *pr = &s->running[r];
        fill_policy_job(&pr->job, j);
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
                s->allocs[na++] = (struct policy_alloc){node, 0};
            s->allocs[a].slots++;
        }
        pr->alloc_count = na - pr->alloc_first;
        s->by_end[r] = r;
    }
    by_end_running = s->running;
    if (n_running > 1)
        qsort(s->by_end, n_running, sizeof *s->by_end, by_end_cmp);

    uint32_t need = nq + n_running + 1;
    if (buffers_grow((void **)&s->out.items, &s->out.cap, need, sizeof *s->out.items) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    uint32_t alloc_cap = (uint32_t)free_total + nq + 1;
    if (buffers_grow((void **)&s->out.allocs, &s->out.cap_allocs, alloc_cap, sizeof *s->out.allocs) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    s->out.n = s->out.n_allocs = 0;
    struct cluster_view view = {
        .now_us = now_us,
        .nodes = s->nodes,
        .n_nodes = nn,
        .nodes_with_free = s->with_free,
        .n_nodes_with_free = n_with_free,
        .total_slots = total,
        .free_slots = free_total,
        .queued = s->queued,
        .n_queued = nq,
        .running = s->running,
        .running_by_end = s->by_end,
        .n_running = n_running,
        .allocs = s->allocs,
    };
    s->passes++;
    if (s->ops->decide(s->policy, &view, &s->out) != 0)
        return err_set(err, NULL, 0, 0, "policy '%s' failed to decide at t=%lld us", s->ops->name, (long long)now_us);
    if (s->out.n > s->out.cap || s->out.n_allocs > s->out.cap_allocs) {
        s->contract_errors++;
        return err_set(err, NULL, 0, 0, "policy '%s' wrote past its decision buffer", s->ops->name);
    }

    /* check everything first: a wrong decision refuses the whole pass */
    memset(s->started, 0, nq);
    for (uint32_t i = 0; i < nn; i++)
        s->free_left[i] = s->nodes[i].free_slots;
    uint32_t n_starts = 0;
    for (uint32_t k = 0; k < s->out.n; k++) {
        const struct policy_decision *d = &s->out.items[k];
        if (d->kind == POLICY_RESERVE) {
            if (d->job_index >= nq || s->queued[d->job_index].id != d->job_id)
                return contract_error(s, err, now_us, "reserved a job that is not waiting", d);
            continue;
        }
        if (d->kind != POLICY_START)
            return contract_error(s, err, now_us, "decision kind not supported by the agent", d);
        if (d->job_index >= nq || s->started[d->job_index])
            return contract_error(s, err, now_us, "started a job that is not waiting", d);
        if (s->queued[d->job_index].id != d->job_id)
            return contract_error(s, err, now_us, "decision names a job id that does not match its queue index", d);
        if (d->alloc_count == 0 || d->alloc_first > s->out.n_allocs ||
            d->alloc_count > s->out.n_allocs - d->alloc_first)
            return contract_error(s, err, now_us, "allocation out of the decision buffer", d);
        int64_t sum = 0;
        for (uint32_t a = 0; a < d->alloc_count; a++) {
            const struct policy_alloc *al = &s->out.allocs[d->alloc_first + a];
            if (al->node < 0 || (uint32_t)al->node >= nn || al->slots <= 0)
                return contract_error(s, err, now_us, "allocation names no valid node or slot count", d);
            if (s->nodes[al->node].state != POLICY_NODE_UP)
                return contract_error(s, err, now_us, "allocation on a node that is not up", d);
            if (s->free_left[al->node] < al->slots)
                return contract_error(s, err, now_us, "allocation over a node's free slots", d);
            s->free_left[al->node] -= al->slots;
            sum += al->slots;
        }
        if (sum != s->queued[d->job_index].slots)
            return contract_error(s, err, now_us, "allocation does not add up to the job's request", d);
        s->started[d->job_index] = 1;
        n_starts++;
    }

    /* apply: reservations, then GPUs for each start */
    if (buffers_grow((void **)&res->starts, &res->cap_starts, n_starts + 1, sizeof *res->starts) != 0 ||
        buffers_grow((void **)&res->reserved, &res->cap_reserved, s->out.n + 1, sizeof *res->reserved) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    uint32_t pool_need = 1;
    for (uint32_t k = 0; k < s->out.n; k++)
        if (s->out.items[k].kind == POLICY_START)
            pool_need += (uint32_t)s->queued[s->out.items[k].job_index].slots;
    if (buffers_grow((void **)&res->gpu_pool, &res->cap_pool, pool_need, sizeof *res->gpu_pool) != 0)
        return err_set(err, NULL, 0, 0, "out of memory");
    for (uint32_t k = 0; k < s->out.n; k++) {
        const struct policy_decision *d = &s->out.items[k];
        struct agent_job *j = s->queued_jobs[d->job_index];
        if (d->kind == POLICY_RESERVE) {
            s->reserves++;
            if (j->reserved_us != d->at_us && !s->started[d->job_index]) {
                j->reserved_us = d->at_us;
                res->reserved[res->n_reserved++] = j;
            }
            continue;
        }
        struct sched_start *ss = &res->starts[res->n_starts++];
        ss->job = j;
        ss->gpus = NULL;
        for (uint32_t a = 0; a < d->alloc_count; a++) {
            const struct policy_alloc *al = &s->out.allocs[d->alloc_first + a];
            if (inventory_pick_gpus(inv, (uint32_t)al->node, al->slots, s->busy, &res->gpu_pool[res->n_pool]) != 0)
                return err_set(err, NULL, 0, 0, "internal: node '%s' lost its free GPUs during the pass",
                               inv->nodes[al->node].name);
            for (int32_t g = 0; g < al->slots; g++)
                s->busy[res->gpu_pool[res->n_pool + (uint32_t)g]] = 1;
            res->n_pool += (uint32_t)al->slots;
        }
        s->starts++;
    }
    /* pointers into the pool only now that it no longer moves */
    uint32_t off = 0;
    for (uint32_t k = 0; k < res->n_starts; k++) {
        res->starts[k].gpus = &res->gpu_pool[off];
        off += (uint32_t)res->starts[k].job->gpus;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s->pass_ns_total += (int64_t)(t1.tv_sec - t0.tv_sec) * 1000000000 + (t1.tv_nsec - t0.tv_nsec);
    return 0;
}
