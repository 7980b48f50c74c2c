#include "models/simulation.h"

#include <stdlib.h>
#include <string.h>

enum sim_event_kind { SIM_EV_ARRIVAL = 1, SIM_EV_COMPLETION = 2 };

#define NO_SLOT UINT32_MAX

struct host {
    const struct workload *w;
    const struct policy_ops *ops;
    void *policy;
    const struct sim_options *opt;
    struct sim_result *res;
    struct err *err;
    struct engine eng;
    size_t next_arrival;

    struct policy_node *nodes;
    uint32_t n_nodes;
    uint32_t *with_free;     /* nodes that are up with a free slot */
    uint32_t *with_free_pos; /* position in with_free, NO_SLOT if absent */
    uint32_t n_with_free;
    int64_t total_slots, free_slots;

    struct policy_job *queued;
    uint32_t *queued_w; /* workload index of each queued job */
    uint32_t n_queued, cap_queued;
    uint8_t *started_now; /* per queued position, during a pass */

    struct policy_running *running;
    uint32_t *running_w;
    uint32_t *by_end;
    uint32_t n_running, cap_running;
    uint32_t *slot_of_w; /* running slot of a workload job */

    struct policy_alloc *allocs;
    uint32_t n_allocs, cap_allocs, dead_allocs;

    struct policy_decisions out;
    int changed; /* state changed since the last pass */
};

void sim_options_init(struct sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->until_us = SIM_TIME_NEVER;
}

sim_time simulation_estimate(const struct job *j)
{
    return j->limit_us >= 0 ? j->limit_us : j->runtime_us;
}

sim_time simulation_effective_runtime(const struct job *j)
{
    return j->limit_us >= 0 && j->runtime_us > j->limit_us ? j->limit_us : j->runtime_us;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

static void free_list_update(struct host *h, uint32_t node)
{
    int has = h->nodes[node].state == POLICY_NODE_UP && h->nodes[node].free_slots > 0;
    uint32_t pos = h->with_free_pos[node];
    if (has && pos == NO_SLOT) {
        h->with_free_pos[node] = h->n_with_free;
        h->with_free[h->n_with_free++] = node;
    } else if (!has && pos != NO_SLOT) {
        uint32_t last = h->with_free[--h->n_with_free];
        h->with_free[pos] = last;
        h->with_free_pos[last] = pos;
        h->with_free_pos[node] = NO_SLOT;
    }
}

/* Order of running jobs by (expected end, arrival index). */
static int end_before(const struct host *h, uint32_t a, uint32_t b)
{
    int64_t ea = h->running[a].expected_end_us, eb = h->running[b].expected_end_us;
    return ea < eb || (ea == eb && h->running_w[a] < h->running_w[b]);
}

/* First position in by_end whose job does not come before running slot s. */
static uint32_t by_end_lower_bound(const struct host *h, uint32_t s, uint32_t n)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (end_before(h, h->by_end[mid], s))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int host_init(struct host *h, const struct cluster *c)
{
    h->n_nodes = c->n_nodes;
    h->nodes = calloc(c->n_nodes, sizeof *h->nodes);
    h->with_free = malloc(c->n_nodes * sizeof *h->with_free);
    h->with_free_pos = malloc(c->n_nodes * sizeof *h->with_free_pos);
    h->slot_of_w = malloc((h->w->n ? h->w->n : 1) * sizeof *h->slot_of_w);
    if (!h->nodes || !h->with_free || !h->with_free_pos || !h->slot_of_w)
        return -1;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const struct cluster_node *cn = &c->nodes[i];
        h->nodes[i] = (struct policy_node){cn->type, POLICY_NODE_UP, cn->slots, cn->slots,
                                           cn->nvlink_domain, cn->leaf, cn->pod, 0};
        h->with_free_pos[i] = NO_SLOT;
        free_list_update(h, i);
    }
    h->total_slots = h->free_slots = c->total_slots;
    return 0;
}

static void host_release(struct host *h)
{
    engine_release(&h->eng);
    free(h->nodes);
    free(h->with_free);
    free(h->with_free_pos);
    free(h->queued);
    free(h->queued_w);
    free(h->started_now);
    free(h->running);
    free(h->running_w);
    free(h->by_end);
    free(h->slot_of_w);
    free(h->allocs);
    free(h->out.items);
    free(h->out.allocs);
}

static int schedule_next_arrival(struct host *h)
{
    if (h->next_arrival >= h->w->n)
        return 0;
    size_t i = h->next_arrival++;
    if (!engine_schedule(&h->eng, h->w->jobs[i].submit_us, EVENT_CLASS_ARRIVAL, SIM_EV_ARRIVAL,
                         (int64_t)i, 0))
        return err_set(h->err, NULL, 0, 0, "job '%lld' arrives before the previous one: sort the workload",
                       (long long)h->w->jobs[i].id);
    return 0;
}

static void notify(struct host *h, int32_t kind, const struct policy_job *job, int64_t ran_us)
{
    if (!h->ops->observe)
        return;
    struct policy_event ev = {kind, engine_now(&h->eng), job, ran_us};
    h->ops->observe(h->policy, &ev);
}

static int on_arrival(struct host *h, uint32_t wi)
{
    const struct job *j = &h->w->jobs[wi];
    struct sim_job_result *r = &h->res->jobs[wi];
    if (j->slots < 1) {
        r->outcome = SIM_JOB_SKIPPED_INVALID;
        h->res->stats.skipped_invalid++;
    } else if (j->slots > h->total_slots) {
        r->outcome = SIM_JOB_SKIPPED_TOO_BIG;
        h->res->stats.skipped_too_big++;
    } else {
        uint32_t old_cap = h->cap_queued;
        if (grow((void **)&h->queued, &h->cap_queued, h->n_queued + 1, sizeof *h->queued) != 0)
            return err_set(h->err, NULL, 0, 0, "out of memory");
        if (h->cap_queued != old_cap) {
            void *qw = realloc(h->queued_w, h->cap_queued * sizeof *h->queued_w);
            if (qw)
                h->queued_w = qw;
            void *sn = qw ? realloc(h->started_now, h->cap_queued * sizeof *h->started_now) : NULL;
            if (!sn)
                return err_set(h->err, NULL, 0, 0, "out of memory");
            h->started_now = sn;
        }
        h->queued[h->n_queued] = (struct policy_job){j->id, j->submit_us, simulation_estimate(j),
                                                    j->slots, j->user, j->team, 0, 0, -1};
        h->queued_w[h->n_queued] = wi;
        h->n_queued++;
        h->changed = 1;
    }
    return schedule_next_arrival(h);
}

static void compact_allocs(struct host *h)
{
    uint32_t n = 0;
    /* Live ranges are moved down in running-slot order; each running job's
     * allocations stay contiguous. A scratch copy avoids overlap problems. */
    struct policy_alloc *fresh = malloc((h->n_allocs - h->dead_allocs + 1) * sizeof *fresh);
    if (!fresh)
        return; /* keep the garbage; correctness does not depend on compaction */
    for (uint32_t s = 0; s < h->n_running; s++) {
        struct policy_running *r = &h->running[s];
        memcpy(&fresh[n], &h->allocs[r->alloc_first], r->alloc_count * sizeof *fresh);
        r->alloc_first = n;
        n += r->alloc_count;
    }
    memcpy(h->allocs, fresh, n * sizeof *fresh);
    free(fresh);
    h->n_allocs = n;
    h->dead_allocs = 0;
}

static int on_completion(struct host *h, uint32_t wi)
{
    uint32_t s = h->slot_of_w[wi];
    struct policy_running *r = &h->running[s];
    for (uint32_t k = 0; k < r->alloc_count; k++) {
        const struct policy_alloc *a = &h->allocs[r->alloc_first + k];
        h->nodes[a->node].free_slots += a->slots;
        free_list_update(h, (uint32_t)a->node);
    }
    h->free_slots += r->job.slots;
    h->dead_allocs += r->alloc_count;

    const struct job *j = &h->w->jobs[wi];
    struct sim_job_result *res = &h->res->jobs[wi];
    sim_time now = engine_now(&h->eng);
    res->end_us = now;
    int killed = j->limit_us >= 0 && j->runtime_us > j->limit_us;
    res->outcome = killed ? SIM_JOB_KILLED_AT_LIMIT : SIM_JOB_COMPLETED;
    if (killed)
        h->res->stats.killed_at_limit++;
    else
        h->res->stats.completed++;
    h->res->stats.busy_slot_us += (double)(now - res->start_us) * (double)j->slots;
    if (now > h->res->stats.last_end_us)
        h->res->stats.last_end_us = now;
    notify(h, POLICY_EVENT_FINISHED, &r->job, now - res->start_us);

    /* Remove s from by_end, then move the last running job into slot s. */
    uint32_t n = h->n_running;
    uint32_t pos = by_end_lower_bound(h, s, n);
    memmove(&h->by_end[pos], &h->by_end[pos + 1], (n - pos - 1) * sizeof *h->by_end);
    n--;
    uint32_t last = h->n_running - 1;
    if (s != last) {
        uint32_t lpos = by_end_lower_bound(h, last, n);
        h->running[s] = h->running[last];
        h->running_w[s] = h->running_w[last];
        h->slot_of_w[h->running_w[s]] = s;
        h->by_end[lpos] = s;
    }
    h->n_running = n;
    h->slot_of_w[wi] = NO_SLOT;
    if (h->dead_allocs > 4096 && h->dead_allocs > h->n_allocs / 2)
        compact_allocs(h);
    h->changed = 1;
    return 0;
}

static int contract_error(struct host *h, const char *what, const struct policy_decision *d)
{
    return err_set(h->err, NULL, 0, 0, "policy '%s' broke the contract at t=%lld us: %s (job '%lld')",
                   h->ops->name, (long long)engine_now(&h->eng), what, (long long)d->job_id);
}

/* Checks one START against the view and applies it. */
static int apply_start(struct host *h, const struct policy_decision *d)
{
    if (d->job_index >= h->n_queued || h->started_now[d->job_index])
        return contract_error(h, "started a job that is not waiting", d);
    struct policy_job *q = &h->queued[d->job_index];
    if (q->id != d->job_id)
        return contract_error(h, "decision names a job id that does not match its queue index", d);
    if (d->alloc_count == 0 || d->alloc_first > h->out.n_allocs ||
        d->alloc_count > h->out.n_allocs - d->alloc_first)
        return contract_error(h, "allocation out of the decision buffer", d);
    int64_t sum = 0;
    for (uint32_t k = 0; k < d->alloc_count; k++) {
        const struct policy_alloc *a = &h->out.allocs[d->alloc_first + k];
        if (a->node < 0 || (uint32_t)a->node >= h->n_nodes || a->slots <= 0)
            return contract_error(h, "allocation names no valid node or slot count", d);
        if (h->nodes[a->node].state != POLICY_NODE_UP)
            return contract_error(h, "allocation on a node that is not up", d);
        if (h->nodes[a->node].free_slots < a->slots)
            return contract_error(h, "allocation over a node's free slots", d);
        sum += a->slots;
        h->nodes[a->node].free_slots -= a->slots; /* undone below on error */
    }
    if (sum != q->slots) {
        for (uint32_t k = 0; k < d->alloc_count; k++) {
            const struct policy_alloc *a = &h->out.allocs[d->alloc_first + k];
            h->nodes[a->node].free_slots += a->slots;
        }
        return contract_error(h, "allocation does not add up to the job's request", d);
    }
    for (uint32_t k = 0; k < d->alloc_count; k++)
        free_list_update(h, (uint32_t)h->out.allocs[d->alloc_first + k].node);
    h->free_slots -= sum;

    /* running job */
    uint32_t old_cap = h->cap_running;
    if (grow((void **)&h->running, &h->cap_running, h->n_running + 1, sizeof *h->running) != 0)
        return err_set(h->err, NULL, 0, 0, "out of memory");
    if (h->cap_running != old_cap) {
        void *rw = realloc(h->running_w, h->cap_running * sizeof *h->running_w);
        if (rw)
            h->running_w = rw;
        void *be = rw ? realloc(h->by_end, h->cap_running * sizeof *h->by_end) : NULL;
        if (!be)
            return err_set(h->err, NULL, 0, 0, "out of memory");
        h->by_end = be;
    }
    if (grow((void **)&h->allocs, &h->cap_allocs, h->n_allocs + d->alloc_count, sizeof *h->allocs) != 0)
        return err_set(h->err, NULL, 0, 0, "out of memory");

    uint32_t wi = h->queued_w[d->job_index];
    const struct job *j = &h->w->jobs[wi];
    sim_time now = engine_now(&h->eng);
    uint32_t s = h->n_running;
    struct policy_running *r = &h->running[s];
    r->job = *q;
    r->start_us = now;
    r->expected_end_us = now + q->estimate_us;
    r->alloc_first = h->n_allocs;
    r->alloc_count = d->alloc_count;
    memcpy(&h->allocs[h->n_allocs], &h->out.allocs[d->alloc_first], d->alloc_count * sizeof *h->allocs);
    h->n_allocs += d->alloc_count;
    h->running_w[s] = wi;
    h->slot_of_w[wi] = s;
    uint32_t pos = by_end_lower_bound(h, s, h->n_running);
    memmove(&h->by_end[pos + 1], &h->by_end[pos], (h->n_running - pos) * sizeof *h->by_end);
    h->by_end[pos] = s;
    h->n_running++;

    h->started_now[d->job_index] = 1;
    struct sim_job_result *res = &h->res->jobs[wi];
    res->start_us = now;
    res->n_nodes = (int32_t)d->alloc_count;
    h->res->stats.starts++;
    if (!engine_schedule(&h->eng, now + simulation_effective_runtime(j), EVENT_CLASS_COMPLETION,
                         SIM_EV_COMPLETION, (int64_t)wi, 0))
        return err_set(h->err, NULL, 0, 0, "out of memory");
    notify(h, POLICY_EVENT_STARTED, q, 0);
    return 0;
}

static int run_pass(struct host *h)
{
    uint32_t need = h->n_queued + h->n_running + 1;
    if (grow((void **)&h->out.items, &h->out.cap, need, sizeof *h->out.items) != 0)
        return err_set(h->err, NULL, 0, 0, "out of memory");
    int64_t alloc_need = h->free_slots + h->n_queued + 1;
    if (alloc_need > UINT32_MAX / 2)
        alloc_need = UINT32_MAX / 2;
    if (grow((void **)&h->out.allocs, &h->out.cap_allocs, (uint32_t)alloc_need, sizeof *h->out.allocs) != 0)
        return err_set(h->err, NULL, 0, 0, "out of memory");
    h->out.n = 0;
    h->out.n_allocs = 0;

    struct cluster_view view = {
        .now_us = engine_now(&h->eng),
        .nodes = h->nodes,
        .n_nodes = h->n_nodes,
        .nodes_with_free = h->with_free,
        .n_nodes_with_free = h->n_with_free,
        .total_slots = h->total_slots,
        .free_slots = h->free_slots,
        .queued = h->queued,
        .n_queued = h->n_queued,
        .running = h->running,
        .running_by_end = h->by_end,
        .n_running = h->n_running,
        .allocs = h->allocs,
    };
    h->res->stats.passes++;
    if (h->ops->decide(h->policy, &view, &h->out) != 0)
        return err_set(h->err, NULL, 0, 0, "policy '%s' failed to decide at t=%lld us", h->ops->name,
                       (long long)view.now_us);
    if (h->out.n > h->out.cap || h->out.n_allocs > h->out.cap_allocs)
        return err_set(h->err, NULL, 0, 0, "policy '%s' wrote past its decision buffer", h->ops->name);
    if (h->opt->on_pass)
        h->opt->on_pass(h->opt->hook_ctx, &view, &h->out);

    memset(h->started_now, 0, h->n_queued);
    uint32_t started = 0;
    for (uint32_t k = 0; k < h->out.n; k++) {
        const struct policy_decision *d = &h->out.items[k];
        if (d->kind == POLICY_RESERVE) {
            if (d->job_index >= h->n_queued || h->queued[d->job_index].id != d->job_id)
                return contract_error(h, "reserved a job that is not waiting", d);
            h->queued[d->job_index].reserved_us = d->at_us;
            continue;
        }
        if (d->kind != POLICY_START)
            return contract_error(h, "decision kind not supported by the simulator yet", d);
        if (apply_start(h, d) != 0)
            return -1;
        started++;
    }
    if (started) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < h->n_queued; i++) {
            if (h->started_now[i])
                continue;
            h->queued[n] = h->queued[i];
            h->queued_w[n] = h->queued_w[i];
            n++;
        }
        h->n_queued = n;
    }
    if (h->n_queued > h->res->stats.max_queue_len)
        h->res->stats.max_queue_len = h->n_queued;
    return 0;
}

static int handle_event(void *ctx, const struct event *ev)
{
    struct host *h = ctx;
    h->res->stats.events++;
    if (ev->kind == SIM_EV_ARRIVAL)
        return on_arrival(h, (uint32_t)ev->arg) ? -1 : 0;
    return on_completion(h, (uint32_t)ev->arg) ? -1 : 0;
}

static int handle_instant_end(void *ctx, sim_time now)
{
    struct host *h = ctx;
    (void)now;
    if (!h->changed || h->n_queued == 0)
        return 0;
    h->changed = 0;
    return run_pass(h) ? -1 : 0;
}

int simulation_run(const struct workload *w, const struct cluster *c, const struct policy_ops *ops,
                   void *policy, const struct sim_options *opt, struct sim_result *res, struct err *err)
{
    struct sim_options defaults;
    if (!opt) {
        sim_options_init(&defaults);
        opt = &defaults;
    }
    memset(res, 0, sizeof *res);
    if (w->n > UINT32_MAX - 1)
        return err_set(err, NULL, 0, 0, "too many jobs (%zu)", w->n);
    res->jobs = malloc((w->n ? w->n : 1) * sizeof *res->jobs);
    if (!res->jobs)
        return err_set(err, NULL, 0, 0, "out of memory for %zu job results", w->n);
    res->n = w->n;
    for (size_t i = 0; i < w->n; i++)
        res->jobs[i] = (struct sim_job_result){-1, -1, SIM_JOB_UNFINISHED, 0};

    struct host h;
    memset(&h, 0, sizeof h);
    h.w = w;
    h.ops = ops;
    h.policy = policy;
    h.opt = opt;
    h.res = res;
    h.err = err;
    sim_time start = w->n ? w->jobs[0].submit_us : 0;
    engine_init(&h.eng, start);
    res->stats.first_submit_us = start;
    res->stats.last_end_us = start;
    int rc = -1;
    if (host_init(&h, c) != 0) {
        err_set(err, NULL, 0, 0, "out of memory for %u nodes", c->n_nodes);
        goto done;
    }
    res->stats.total_slots = h.total_slots;
    if (schedule_next_arrival(&h) != 0)
        goto done;
    struct engine_handlers handlers = {handle_event, handle_instant_end, &h};
    if (engine_run_until(&h.eng, opt->until_us, &handlers) != 0) {
        if (!err->set)
            err_set(err, NULL, 0, 0, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < w->n; i++)
        if (res->jobs[i].outcome == SIM_JOB_UNFINISHED)
            res->stats.unfinished++;
    rc = 0;
done:
    host_release(&h);
    return rc;
}

void sim_result_release(struct sim_result *res)
{
    if (!res)
        return;
    free(res->jobs);
    memset(res, 0, sizeof *res);
}
