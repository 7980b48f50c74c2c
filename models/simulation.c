#include "models/simulation.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "models/gpu_share.h"
#include "models/contention.h"
#include "models/periods.h"
#include "models/policy_host.h"
#include "models/runtime_model.h"
#include "models/waiting_queue.h"
#include "sim/pcg32.h"
#include "sim/buffers.h"

enum sim_event_kind {
    SIM_EV_SAMPLE = 7,
    SIM_EV_ARRIVAL = 1,
    SIM_EV_COMPLETION = 2,
    SIM_EV_FAILURE = 3,
    SIM_EV_REPAIR = 4,
    SIM_EV_DELIVERY = 5,
    SIM_EV_RETIREMENT = 6,
    SIM_EV_PASS = 8 /* pyss: the pass a completion settled earlier in the instant asks for */
};

/* An event's aux: whether a convention with a pass per event runs one after it. */
enum { AUX_NONE = 0, AUX_PASS_AFTER = 1 };

#define NO_SLOT UINT32_MAX

/* What the host keeps of a workload job across its attempts: one array of
 * these (not four) is one huge page per 87,000 jobs, and a job's arrival
 * reads its fields from one cache line. */
struct job_life {
    double done_us;     /* checkpointed reference work */
    double attained_us; /* GPU time of finished attempts */
    uint32_t slot;      /* its running slot, NO_SLOT while it does not run */
    int32_t preempted;  /* times preempted */
};

/* What the host knows of a node beyond the policy's view of it. */
struct node_life {
    uint8_t present;  /* delivered and not yet retired */
    uint8_t up;       /* not down for repair */
    uint8_t retiring; /* drains, then leaves */
    uint8_t takes;    /* present && up && !retiring, kept by node_set: read per slot taken or freed */
    double failure_rate_per_us;
    struct pcg32 rng; /* RNG_FAILURES, node index */
};

/* How a running job progresses (reference work per wall-clock microsecond). */
struct progress {
    double rate;
    double work_left_us; /* reference microseconds still to do at last_us */
    sim_time last_us;
    sim_time attempt_start_us;
    uint64_t completion; /* engine handle of its completion event */
    double speed, ckpt_eff, comm, ref_gbps, nvlink_gbps;
    int32_t span;        /* enum span_level; SPAN_SPINE: a flow of the contention model */
    int32_t job_class;
};

struct host {
    const struct workload *w;
    const struct cluster *c;
    struct policy_host *policy;
    int policy_failed; /* observe() crashed: the run stops at the end of the event */
    const struct sim_options *opt;
    const struct sim_models *models; /* NULL: the foundation's replay */
    const struct failure_spec *failures; /* NULL unless enabled */
    struct sim_result *res;
    struct err *err;
    struct engine eng;
    size_t next_arrival; /* next job to schedule an arrival for */
    size_t arrived;      /* arrivals handled */
    size_t told;         /* jobs final: all of the workload's, or those a feed told */
    size_t known;        /* of those, the ones set up (job_known) */
    enum workload_feed_state feed_state;

    struct policy_node *nodes;
    struct node_life *life;
    uint32_t n_nodes;
    uint32_t *with_free;     /* nodes that take jobs and have a free slot */
    uint32_t *with_free_pos; /* position in with_free, NO_SLOT if absent */
    uint32_t n_with_free;
    int64_t total_slots, free_slots; /* over nodes that take jobs */

    struct waiting_queue queue; /* in arrival order, as the view shows it */

    struct policy_running *running;
    struct progress *prog;
    uint32_t *running_w;
    uint32_t *by_end;
    uint32_t n_running, cap_running;
    struct job_life *life_of_w; /* per workload job */
    const struct checkpoint_policy *checkpoint; /* per class */
    struct checkpoint_policy checkpoint_defaults[JOB_CLASS_COUNT]; /* without models */
    double *type_speed;  /* the view's speed table, or NULL */
    uint32_t n_types;
    uint32_t *preempt_w; /* during a pass: workload jobs preempted, to requeue */
    uint32_t n_preempt, cap_preempt;

    struct policy_alloc *allocs;
    uint32_t n_allocs, cap_allocs, dead_allocs;

    /* GPU sharing and GPU-model constraints (ABI 2): the shared GPUs, and per
     * constraint of the workload (job.gpu_models - 1) the node types it
     * allows and their slots; NULL without constraints. */
    struct gpu_share share;
    uint64_t *constraint_mask;
    int64_t *constraint_slots;

    /* the running jobs that cross leaves, as flows keyed by workload index
     * (with models and a fabric; models/contention.h) */
    struct contention contention;
    struct periods periods; /* the result's, when asked for */

    /* integrals for utilization and availability */
    sim_time acc_last_us;
    int64_t in_use_slots, queued_slots; /* for demand */
    int64_t present_slots;
    uint32_t present_nodes, up_nodes;

    struct policy_decisions out;
    int changed; /* state changed since the last pass */
};

void sim_options_init(struct sim_options *o)
{
    memset(o, 0, sizeof *o);
    o->until_us = SIM_TIME_NEVER;
}

static const char *const convention_names[] = {
    [SIM_CONVENTION_FLEETSIM] = "fleetsim",
    [SIM_CONVENTION_PYSS] = "pyss",
    [SIM_CONVENTION_CQSIM] = "cqsim",
};

int simulation_convention_parse(const char *name, enum sim_convention *out)
{
    for (size_t k = 0; k < sizeof convention_names / sizeof *convention_names; k++) {
        if (strcmp(name, convention_names[k]) == 0) {
            *out = (enum sim_convention)k;
            return 0;
        }
    }
    return -1;
}

const char *simulation_convention_name(enum sim_convention c)
{
    return (size_t)c < sizeof convention_names / sizeof *convention_names ? convention_names[c] : "?";
}

sim_time simulation_estimate(const struct job *j)
{
    return j->limit_us >= 0 ? j->limit_us : j->runtime_us;
}

sim_time simulation_effective_runtime(const struct job *j)
{
    return j->limit_us >= 0 && j->runtime_us > j->limit_us ? j->limit_us : j->runtime_us;
}

static int oom(struct host *h)
{
    return err_set(h->err, NULL, 0, 0, "out of memory");
}

/* ---- nodes ---- */

static inline int node_takes_jobs(const struct host *h, uint32_t node)
{
    return h->life[node].takes;
}

/* The list of nodes that take jobs and have a free slot, as a loop over a
 * job's nodes keeps it: its arrays and length in locals, the length stored
 * back once (a store through any pointer could be one to h as far as the
 * compiler knows, and a start or an end updates the list for each node). */
struct free_list {
    uint32_t *list, *pos_of, n;
};

static inline struct free_list free_list_open(const struct host *h)
{
    return (struct free_list){h->with_free, h->with_free_pos, h->n_with_free};
}

static inline void free_list_close(struct host *h, const struct free_list *fl)
{
    h->n_with_free = fl->n;
}

/* Puts node on the list or takes it off (the last one takes its place). */
static inline void free_list_set(struct free_list *fl, uint32_t node, int has)
{
    uint32_t pos = fl->pos_of[node];
    if (has && pos == NO_SLOT) {
        fl->pos_of[node] = fl->n;
        fl->list[fl->n++] = node;
    } else if (!has && pos != NO_SLOT) {
        uint32_t last = fl->list[--fl->n];
        fl->list[pos] = last;
        fl->pos_of[last] = pos;
        fl->pos_of[node] = NO_SLOT;
    }
}

static inline void free_list_update(struct host *h, uint32_t node)
{
    struct free_list fl = free_list_open(h);
    free_list_set(&fl, node, node_takes_jobs(h, node) && h->nodes[node].free_slots > 0);
    free_list_close(h, &fl);
}

/* Brings the capacity and availability integrals up to now. */
static void accumulate(struct host *h)
{
    sim_time now = engine_now(&h->eng);
    sim_time from = h->acc_last_us > h->res->stats.first_submit_us ? h->acc_last_us : h->res->stats.first_submit_us;
    if (now > from) {
        double dt = (double)(now - from);
        h->res->stats.capacity_slot_us += dt * (double)h->present_slots;
        h->res->stats.node_up_us += dt * (double)h->up_nodes;
        h->res->stats.node_present_us += dt * (double)h->present_nodes;
    }
    if (now > h->acc_last_us)
        periods_add_capacity(&h->periods, (double)h->present_slots, h->acc_last_us, now);
    h->acc_last_us = now;
}

/* Changes a node's life flags, keeping every count and list in step. */
static void node_set(struct host *h, uint32_t node, int present, int up, int retiring)
{
    accumulate(h);
    struct node_life *l = &h->life[node];
    struct policy_node *nd = &h->nodes[node];
    int took = node_takes_jobs(h, node);
    h->present_slots += (present - l->present) * (int64_t)nd->total_slots;
    h->present_nodes += (uint32_t)(present - l->present);
    h->up_nodes += (uint32_t)((present && up) - (l->present && l->up));
    l->present = (uint8_t)present;
    l->up = (uint8_t)up;
    l->retiring = (uint8_t)retiring;
    l->takes = (uint8_t)(present && up && !retiring);
    int takes = node_takes_jobs(h, node);
    if (took != takes) {
        int64_t sign = takes ? 1 : -1;
        h->total_slots += sign * nd->total_slots;
        h->free_slots += sign * nd->free_slots;
    }
    nd->state = !present || !up ? POLICY_NODE_DOWN : retiring ? POLICY_NODE_DRAINING : POLICY_NODE_UP;
    free_list_update(h, node);
    h->changed = 1;
}

/* ---- running jobs, ordered by expected end ---- */

/* The first place in by_end[0..n) whose job does not end before running
 * slot s (a search per start and two per end: the expected ends compare
 * first, in locals, and the rule's other keys only break their ties). */
static uint32_t by_end_lower_bound(const struct host *h, uint32_t s, uint32_t n)
{
    const struct policy_running *running = h->running, *key = &running[s];
    const uint32_t *by_end = h->by_end;
    sim_time end = key->expected_end_us;
    uint32_t lo = 0, len = n;
    while (len > 0) {
        uint32_t half = len / 2;
        const struct policy_running *r = &running[by_end[lo + half]];
        int before = r->expected_end_us != end ? r->expected_end_us < end : policy_running_end_before(r, key);
        if (before) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo;
}

/* Running jobs up to which by_end_place scans rather than searches. */
enum { BY_END_SCAN_MAX = 256 };

/* The place in by_end[0..n) of running slot s, which it holds: a scan
 * while few jobs run (its branch goes one way until the end, where the
 * search's halvings each go either way: HPC2N's EASY replay, up to 240
 * running, spent 7% in the search), else by_end_lower_bound. */
static uint32_t by_end_place(const struct host *h, uint32_t s, uint32_t n)
{
    if (n > BY_END_SCAN_MAX)
        return by_end_lower_bound(h, s, n);
    const uint32_t *by_end = h->by_end;
    uint32_t i = 0;
    while (i + 1 < n && by_end[i] != s)
        i++;
    return i;
}

static void compact_allocs(struct host *h)
{
    struct policy_alloc *fresh = malloc((h->n_allocs - h->dead_allocs + 1) * sizeof *fresh);
    if (!fresh)
        return; /* keep the garbage; correctness does not depend on compaction */
    uint32_t n = 0;
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

/* Takes running slot s out: frees its slots, keeps by_end and the dense
 * running array in step (the last job moves into slot s). */
static void running_remove(struct host *h, uint32_t s)
{
    struct policy_running *r = &h->running[s];
    const struct policy_alloc *allocs = &h->allocs[r->alloc_first];
    uint32_t count = r->alloc_count;
    struct free_list fl = free_list_open(h);
    int64_t freed = 0, freed_taking = 0; /* added to the host's counts after the loop */
    for (uint32_t k = 0; k < count; k++) {
        const struct policy_alloc *a = &allocs[k];
        uint32_t node = (uint32_t)a->node;
        struct policy_node *nd = &h->nodes[node];
        const struct node_life *l = &h->life[node];
        /* a share frees its slot only when it was the GPU's last */
        int32_t whole = a->milli > 0 ? gpu_share_give(&h->share, node, a->gpu, a->milli) : a->slots;
        nd->free_slots += whole;
        freed += whole;
        freed_taking += l->takes ? whole : 0;
        free_list_set(&fl, node, l->takes && nd->free_slots > 0);
        if (l->retiring && nd->free_slots == nd->total_slots) {
            free_list_close(h, &fl);
            node_set(h, node, 0, l->up, 0); /* drained: it leaves */
            fl = free_list_open(h);
        }
    }
    free_list_close(h, &fl);
    h->free_slots += freed_taking;
    h->in_use_slots -= freed;
    h->dead_allocs += count;
    uint32_t wi = h->running_w[s];
    if (h->prog[s].span == SPAN_SPINE)
        contention_remove(&h->contention, wi);

    uint32_t n = h->n_running;
    uint32_t pos = by_end_place(h, s, n);
    memmove(&h->by_end[pos], &h->by_end[pos + 1], (n - pos - 1) * sizeof *h->by_end);
    n--;
    uint32_t last = h->n_running - 1;
    if (s != last) {
        uint32_t lpos = by_end_place(h, last, n);
        h->running[s] = h->running[last];
        h->prog[s] = h->prog[last];
        h->running_w[s] = h->running_w[last];
        h->life_of_w[h->running_w[s]].slot = s;
        h->by_end[lpos] = s;
    }
    h->n_running = n;
    h->life_of_w[wi].slot = NO_SLOT;
    if (h->dead_allocs > 4096 && h->dead_allocs > h->n_allocs / 2)
        compact_allocs(h);
    h->changed = 1;
}

/* ---- progress ---- */

static void progress_catch_up(struct progress *p, sim_time now)
{
    if (now > p->last_us) {
        p->work_left_us -= (double)(now - p->last_us) * p->rate;
        if (p->work_left_us < 0)
            p->work_left_us = 0;
        p->last_us = now;
    }
}

/* When the attempt ends: its work done, or its limit reached. */
static sim_time progress_end(const struct host *h, uint32_t wi, const struct progress *p, int *at_limit)
{
    const struct job *j = &h->w->jobs[wi];
    sim_time work_end;
    if (p->rate == 1.0)
        work_end = p->last_us + (sim_time)p->work_left_us;
    else if (p->rate <= 0)
        work_end = SIM_TIME_NEVER;
    else
        work_end = p->last_us + (sim_time)ceil(p->work_left_us / p->rate);
    sim_time limit_end = j->limit_us >= 0 ? p->attempt_start_us + j->limit_us : SIM_TIME_NEVER;
    *at_limit = work_end > limit_end;
    return *at_limit ? limit_end : work_end;
}

static int schedule_completion(struct host *h, uint32_t s)
{
    struct progress *p = &h->prog[s];
    int at_limit;
    sim_time end = progress_end(h, h->running_w[s], p, &at_limit);
    /* a completion not cancelled would still end the job (memory: the
     * engine's cancelled set grows) */
    if (p->completion && engine_cancel(&h->eng, p->completion) != 0)
        return oom(h);
    p->completion = 0;
    if (end == SIM_TIME_NEVER)
        return 0;
    enum event_class cls = EVENT_CLASS_COMPLETION;
    int32_t aux = h->opt->convention == SIM_CONVENTION_CQSIM ? AUX_PASS_AFTER : AUX_NONE;
    if (h->opt->convention == SIM_CONVENTION_PYSS) {
        /* pyss: a job ending at its expected end is free from the start of
         * the instant (its profile says so), though the pass its end event
         * triggers comes after the arrivals, in start order with the other
         * ends; a job ending early holds its slots until its end event,
         * after the arrivals. */
        if (end != h->running[s].expected_end_us) {
            cls = EVENT_CLASS_LATE_COMPLETION;
            aux = AUX_PASS_AFTER;
        } else if (!engine_schedule(&h->eng, end, EVENT_CLASS_LATE_COMPLETION, SIM_EV_PASS, 0, AUX_PASS_AFTER)) {
            return oom(h);
        }
    }
    p->completion = engine_schedule(&h->eng, end, cls, SIM_EV_COMPLETION, (int64_t)h->running_w[s], aux);
    return p->completion ? 0 : oom(h);
}

/* ---- contention ---- */

/* A cross-leaf job's new fair share (contention_update): its rate, and its
 * end if the rate moved. */
static int apply_share(void *ctx, uint32_t wi, double share)
{
    struct host *h = ctx;
    uint32_t s = h->life_of_w[wi].slot;
    struct progress *p = &h->prog[s];
    double eff = runtime_level_gbps(SPAN_SPINE, p->nvlink_gbps, h->c->fabric.link_gbps, share);
    double rate = p->speed * p->ckpt_eff / runtime_slowdown(p->comm, p->ref_gbps, eff);
    if (rate != p->rate || !p->completion) {
        progress_catch_up(p, engine_now(&h->eng));
        p->rate = rate;
        return schedule_completion(h, s);
    }
    return 0;
}

static int contention_settle(struct host *h)
{
    if (contention_update(&h->contention, apply_share, h) != 0)
        return h->err->set ? -1 : oom(h);
    return 0;
}

/* ---- arrivals and the queue ---- */

/* A job's class: its own, else the scenario's default. */
static int32_t job_class_of(const struct host *h, const struct job *j)
{
    if (j->job_class >= 0 && j->job_class < JOB_CLASS_COUNT)
        return j->job_class;
    return h->models ? (int32_t)h->models->default_class : JOB_CLASS_TRAINING;
}

/* The jobs there may be: on a feed, the array's room (it never moves, and
 * w->n is the reader's until it is done), else the workload's. */
static size_t jobs_room(const struct workload *w, const struct sim_options *opt)
{
    if (opt->feed)
        return w->cap;
    return w->n;
}

static void job_start_clean(struct host *h, size_t i)
{
    h->res->jobs[i] = (struct sim_job_result){-1, -1, SIM_JOB_UNFINISHED, 0, 0, 0, SPAN_NVLINK};
    h->life_of_w[i] = (struct job_life){0, 0, NO_SLOT, 0};
}

/* Whether job i is final, waiting for it on a feed; each job is set up
 * (its result, its life) when first known. */
static int job_known(struct host *h, size_t i)
{
    if (i < h->known)
        return 1;
    if (i >= h->told && h->feed_state == WORKLOAD_FEED_MORE)
        h->told = h->opt->feed->wait(h->opt->feed->ctx, i + 1, &h->feed_state);
    if (h->feed_state == WORKLOAD_FEED_BROKEN)
        return 0;
    for (; h->known < h->told; h->known++)
        job_start_clean(h, h->known);
    return i < h->known;
}

static int schedule_next_arrival(struct host *h)
{
    if (!job_known(h, h->next_arrival))
        return h->feed_state == WORKLOAD_FEED_BROKEN ? -1 : 0;
    size_t i = h->next_arrival++;
    int32_t aux = h->opt->convention != SIM_CONVENTION_FLEETSIM ? AUX_PASS_AFTER : AUX_NONE;
    sim_time at = h->w->jobs[i].submit_us;
    if (at < engine_now(&h->eng))
        return err_set(h->err, NULL, 0, 0, "job '%lld' arrives before the previous one: sort the workload",
                       (long long)h->w->jobs[i].id);
    return engine_schedule(&h->eng, at, EVENT_CLASS_ARRIVAL, SIM_EV_ARRIVAL, (int64_t)i, aux) ? 0 : oom(h);
}

static void notify(struct host *h, int32_t kind, const struct policy_job *job, int64_t ran_us)
{
    struct policy_event ev = {kind, engine_now(&h->eng), job, ran_us};
    if (!h->policy_failed && policy_host_observe(h->policy, &ev, h->err) != POLICY_HOST_OK)
        h->policy_failed = 1;
}

/* Queues workload job wi at its place in arrival order (a requeued job goes
 * back where it arrived). */
static int enqueue(struct host *h, uint32_t wi)
{
    uint32_t pos;
    if (waiting_queue_insert(&h->queue, wi, &pos) != 0)
        return oom(h);
    const struct job *j = &h->w->jobs[wi];
    const struct job_life *life = &h->life_of_w[wi];
    sim_time estimate = simulation_estimate(j);
    if (j->limit_us < 0 && life->done_us > 0)
        estimate = j->runtime_us - (sim_time)life->done_us;
    /* its GPU-model constraint as node types, and its share of one GPU */
    uint64_t types = j->gpu_models > 0 && h->constraint_mask ? h->constraint_mask[j->gpu_models - 1] : 0;
    int32_t milli = j->slots == 1 && j->gpu_milli < POLICY_MILLI_PER_GPU ? j->gpu_milli : 0;
    h->queue.jobs[pos] = (struct policy_job){j->id, j->submit_us, estimate, j->slots, j->user, j->team, 0, 0, -1,
                                             (int64_t)life->attained_us, life->preempted, job_class_of(h, j),
                                             types, milli, milli ? 0 : j->nodes};
    h->queued_slots += j->slots;
    h->changed = 1;
    return 0;
}

/* Whether the cluster has (or will have, counting ordered nodes) the n
 * nodes of its types, each of slots / n or more, that a shaped job needs.
 * Pooled jobs always pass; they are checked by slot totals. */
static int shape_fits(const struct host *h, const struct job *j)
{
    if (j->nodes <= 0 || (j->slots == 1 && j->gpu_milli > 0 && j->gpu_milli < POLICY_MILLI_PER_GPU))
        return 1;
    uint64_t types = j->gpu_models > 0 && h->constraint_mask ? h->constraint_mask[j->gpu_models - 1] : 0;
    int32_t per = j->slots / j->nodes, holding = 0;
    for (uint32_t i = 0; i < h->c->n_nodes && holding < j->nodes; i++) {
        const struct cluster_node *nd = &h->c->nodes[i];
        if (nd->slots >= per && (!types || (nd->type >= 0 && nd->type < 64 && (types >> nd->type & 1u))))
            holding++;
    }
    return holding >= j->nodes;
}

static int on_arrival(struct host *h, uint32_t wi)
{
    const struct job *j = &h->w->jobs[wi];
    struct sim_job_result *r = &h->res->jobs[wi];
    h->arrived++;
    if (j->slots < 1) {
        r->outcome = SIM_JOB_SKIPPED_INVALID;
        h->res->stats.skipped_invalid++;
    } else if (j->slots > h->c->total_slots ||
               (j->gpu_models > 0 && h->constraint_slots && j->slots > h->constraint_slots[j->gpu_models - 1]) ||
               !shape_fits(h, j)) {
        /* too big for the cluster, for the nodes of its GPU models, or in
         * its shape (n nodes that each hold slots / n) */
        r->outcome = SIM_JOB_SKIPPED_TOO_BIG;
        h->res->stats.skipped_too_big++;
        struct sim_period_stats *ps = periods_at(&h->periods, engine_now(&h->eng));
        if (ps)
            ps->jobs_too_big++;
    } else if (enqueue(h, wi) != 0) {
        return -1;
    }
    return schedule_next_arrival(h);
}

/* ---- completions and interruptions ---- */

static int on_completion(struct host *h, uint32_t wi)
{
    uint32_t s = h->life_of_w[wi].slot;
    if (s == NO_SLOT)
        return 0; /* a stale event of an attempt that was interrupted */
    struct progress *p = &h->prog[s];
    int at_limit;
    sim_time now = engine_now(&h->eng);
    sim_time end = progress_end(h, wi, p, &at_limit);
    if (end != now)
        return 0; /* superseded by a rescheduled completion */
    const struct job *j = &h->w->jobs[wi];
    struct sim_job_result *res = &h->res->jobs[wi];
    res->end_us = now;
    res->outcome = at_limit ? SIM_JOB_KILLED_AT_LIMIT : SIM_JOB_COMPLETED;
    if (at_limit)
        h->res->stats.killed_at_limit++;
    else
        h->res->stats.completed++;
    h->res->stats.busy_slot_us += (double)(now - p->attempt_start_us) * job_gpu_share(j);
    h->life_of_w[wi].attained_us += (double)(now - p->attempt_start_us) * job_gpu_share(j);
    periods_add_busy(&h->periods, j->team, job_gpu_share(j), p->attempt_start_us, now);
    if (now > h->res->stats.last_end_us)
        h->res->stats.last_end_us = now;
    notify(h, POLICY_EVENT_FINISHED, &h->running[s].job, now - p->attempt_start_us);
    running_remove(h, s);
    return 0;
}

/* Stops running slot s (a failure or a preemption): rolls its work back to
 * the last checkpoint, frees its slots, and returns the job's index for
 * the caller to requeue; UINT32_MAX, with nothing changed, when its
 * completion cannot be cancelled (memory), which would end the job as it
 * waits again. */
static uint32_t stop_attempt(struct host *h, uint32_t s, int32_t event_kind)
{
    sim_time now = engine_now(&h->eng);
    uint32_t wi = h->running_w[s];
    const struct job *j = &h->w->jobs[wi];
    struct progress *p = &h->prog[s];
    if (p->completion && engine_cancel(&h->eng, p->completion) != 0) {
        oom(h);
        return UINT32_MAX;
    }
    progress_catch_up(p, now);
    double total = (double)j->runtime_us;
    double done_now = total - p->work_left_us;
    double kept = checkpoint_kept_us(&h->checkpoint[p->job_class], h->life_of_w[wi].done_us, done_now);
    double lost_work = done_now - kept;
    double lost_wall = p->rate > 0 ? lost_work / p->rate : 0;
    double ran = (double)(now - p->attempt_start_us) * job_gpu_share(j);
    h->life_of_w[wi].done_us = kept;
    h->life_of_w[wi].attained_us += ran;
    h->res->stats.lost_slot_us += lost_wall * job_gpu_share(j);
    h->res->stats.busy_slot_us += ran;
    periods_add_busy(&h->periods, j->team, job_gpu_share(j), p->attempt_start_us, now);
    struct sim_period_stats *ps = periods_at(&h->periods, now);
    if (ps)
        ps->lost_slot_us += lost_wall * job_gpu_share(j);
    notify(h, event_kind, &h->running[s].job, now - p->attempt_start_us);
    running_remove(h, s);
    return wi;
}

/* A failure killed running slot s: back to the queue. */
static int interrupt(struct host *h, uint32_t s)
{
    uint32_t wi = stop_attempt(h, s, POLICY_EVENT_FAILED);
    if (wi == UINT32_MAX)
        return -1;
    h->res->stats.interruptions++;
    h->res->jobs[wi].interruptions++;
    return enqueue(h, wi);
}

static int is_service(const struct host *h, const struct job *j)
{
    const struct sim_models *m = h->models;
    return m && m->service_restart_us && j->team >= 0 && (size_t)j->team < m->n_service_teams &&
           m->service_restart_us[j->team] > 0;
}

/* A failure hit a service replica at running slot s: it restarts in place,
 * keeping its GPUs and its place, out of service for its restart time (or
 * what is left of its lifetime). Nothing rolls back and nothing queues
 * again: a failure costs a service minutes of one replica, not days of
 * work and a trip through the queue. */
static void restart_in_place(struct host *h, uint32_t s)
{
    sim_time now = engine_now(&h->eng);
    uint32_t wi = h->running_w[s];
    const struct job *j = &h->w->jobs[wi];
    struct progress *p = &h->prog[s];
    progress_catch_up(p, now);
    double left_us = p->rate > 0 ? p->work_left_us / p->rate : 0;
    double restart_us = (double)h->models->service_restart_us[j->team];
    double out_us = restart_us < left_us ? restart_us : left_us;
    h->res->stats.lost_slot_us += out_us * job_gpu_share(j);
    struct sim_period_stats *ps = periods_at(&h->periods, now);
    if (ps)
        ps->lost_slot_us += out_us * job_gpu_share(j);
    h->res->stats.interruptions++;
    h->res->jobs[wi].interruptions++;
}

/* ---- failures, repairs, deliveries, retirements ---- */

static int schedule_failure(struct host *h, uint32_t node)
{
    struct node_life *l = &h->life[node];
    if (!h->failures || l->failure_rate_per_us <= 0)
        return 0;
    double gap_us = failure_next_gap_us(h->failures, l->failure_rate_per_us, &l->rng);
    /* a rare enough failure falls past the end of time: it never comes
     * (converting it would overflow, and read as "out of memory") */
    if (!(gap_us < (double)(SIM_TIME_NEVER - engine_now(&h->eng))))
        return 0;
    sim_time at = engine_now(&h->eng) + (sim_time)gap_us;
    return engine_schedule(&h->eng, at, EVENT_CLASS_FAILURE, SIM_EV_FAILURE, node, 0) ? 0 : oom(h);
}

static int on_failure(struct host *h, uint32_t node)
{
    struct node_life *l = &h->life[node];
    if (!l->present || !l->up)
        return 0; /* left or already down: this clock stopped */
    const struct failure_spec *fs = h->failures;
    size_t cat = failure_pick_category(fs, h->nodes[node].total_slots, l->failure_rate_per_us, &l->rng);
    h->res->stats.failures++;
    h->res->stats.failures_by_category[cat]++;
    struct sim_period_stats *ps = periods_at(&h->periods, engine_now(&h->eng));
    if (ps)
        ps->failures++;
    double repair_s = failure_repair_s(fs, cat, &l->rng);
    node_set(h, node, 1, 0, l->retiring);
    for (uint32_t s = 0; s < h->n_running;) {
        const struct policy_running *r = &h->running[s];
        int hit = 0;
        for (uint32_t k = 0; k < r->alloc_count && !hit; k++)
            hit = h->allocs[r->alloc_first + k].node == (int32_t)node;
        if (!hit) {
            s++;
            continue;
        }
        if (is_service(h, &h->w->jobs[h->running_w[s]])) {
            restart_in_place(h, s);
            s++;
            continue;
        }
        /* slot s now holds another job (or none): look at it again */
        if (interrupt(h, s) != 0)
            return -1;
    }
    sim_time back = engine_now(&h->eng) + (sim_time)ceil((repair_s > 0 ? repair_s : 0) * 1e6);
    if (!engine_schedule(&h->eng, back, EVENT_CLASS_CAPACITY, SIM_EV_REPAIR, node, 0))
        return oom(h);
    return 0;
}

static int on_repair(struct host *h, uint32_t node)
{
    struct node_life *l = &h->life[node];
    if (!l->present)
        return 0;
    int empty = h->nodes[node].free_slots == h->nodes[node].total_slots;
    if (l->retiring && empty) {
        node_set(h, node, 0, 1, 0);
        return 0;
    }
    node_set(h, node, 1, 1, l->retiring);
    return schedule_failure(h, node);
}

static int on_delivery(struct host *h, int32_t order)
{
    h->res->stats.deliveries++;
    for (uint32_t n = 0; n < h->n_nodes; n++) {
        if (h->c->nodes[n].order != order)
            continue;
        node_set(h, n, 1, 1, 0);
        if (schedule_failure(h, n) != 0)
            return -1;
    }
    return 0;
}

/* Drains `count` present nodes of the type, highest numbers first. */
static int on_retirement(struct host *h, size_t index)
{
    const struct retirement *r = &h->models->procurement->retirements[index];
    int64_t left = r->count;
    h->res->stats.retirements++;
    for (uint32_t n = h->n_nodes; n-- > 0 && left > 0;) {
        struct node_life *l = &h->life[n];
        if (h->c->nodes[n].type != r->type || !l->present || l->retiring)
            continue;
        left--;
        if (h->nodes[n].free_slots == h->nodes[n].total_slots)
            node_set(h, n, 0, l->up, 0);
        else
            node_set(h, n, 1, l->up, 1);
    }
    return 0;
}

/* A point of the time series; the next one is scheduled from here, so the
 * event list holds one sample at a time. */
static int on_sample(struct host *h, uint32_t k)
{
    h->res->samples[k] = (struct sim_sample){(double)h->present_slots, (double)h->in_use_slots,
                                             (double)h->queued_slots, (double)waiting_queue_waiting(&h->queue)};
    if (k + 1 < h->opt->n_samples &&
        !engine_schedule(&h->eng, h->opt->period_start_us + (sim_time)(k + 1) * h->opt->sample_us, EVENT_CLASS_TIMER,
                         SIM_EV_SAMPLE, k + 1, 0))
        return oom(h);
    return 0;
}

/* ---- starting jobs ---- */

/* The runtime model's inputs for a job placed on allocs[first..+count). */
static void progress_init(struct host *h, struct progress *p, const struct policy_job *job, uint32_t first,
                          uint32_t count)
{
    const struct cluster *c = h->c;
    p->speed = 1;
    p->ckpt_eff = 1;
    p->comm = 0;
    p->span = SPAN_NVLINK;
    p->job_class = job->job_class;
    if (!h->models)
        return;
    const struct policy_alloc *a = &h->allocs[first];
    int same_domain = 1, same_leaf = 1;
    double nvlink = 0;
    int32_t domain_gpus = 0, node_gpus = 0;
    for (uint32_t k = 0; k < count; k++) {
        const struct cluster_node *cn = &c->nodes[a[k].node];
        same_domain &= cn->nvlink_domain == c->nodes[a[0].node].nvlink_domain;
        same_leaf &= cn->leaf == c->nodes[a[0].node].leaf;
        if (c->catalog) {
            const struct node_type *t = &c->catalog->types[cn->type];
            double sp = t->speed[p->job_class];
            if (k == 0 || sp < p->speed)
                p->speed = sp;
            if (k == 0 || t->nvlink_gbps < nvlink)
                nvlink = t->nvlink_gbps;
            domain_gpus = t->nvlink_domain_gpus;
            node_gpus = t->gpus;
        }
    }
    if (h->failures) {
        const struct checkpoint_policy *cp = &h->checkpoint[p->job_class];
        p->ckpt_eff = runtime_checkpoint_efficiency(cp->interval_s, cp->overhead_s);
    }
    if (c->fabric.kind == FABRIC_NONE || !c->catalog)
        return; /* no network model: placement does not change runtimes */
    p->comm = h->models->comm_fraction[p->job_class];
    p->nvlink_gbps = nvlink;
    p->span = same_domain ? SPAN_NVLINK : same_leaf ? SPAN_LEAF : SPAN_SPINE;
    int64_t leaf_gpus = (int64_t)c->fabric.nodes_per_leaf * node_gpus;
    enum span_level min_span = runtime_min_span(job->slots, domain_gpus, node_gpus, leaf_gpus);
    p->ref_gbps = runtime_level_gbps(min_span, nvlink, c->fabric.link_gbps, 1);
}

static double progress_rate(const struct host *h, const struct progress *p)
{
    if (!h->models)
        return 1.0;
    double slowdown = 1.0;
    if (p->comm > 0 && p->span != SPAN_SPINE)
        slowdown = runtime_slowdown(p->comm, p->ref_gbps,
                                    runtime_level_gbps((enum span_level)p->span, p->nvlink_gbps,
                                                       h->c->fabric.link_gbps, 1));
    /* SPINE: contention_update() sets the rate from the fair share */
    return p->speed * p->ckpt_eff / slowdown;
}

/* Applies one START (policy_host_decide checked it). */
static int apply_start(struct host *h, const struct policy_decision *d)
{
    struct policy_job *q = &h->queue.jobs[d->job_index];
    int64_t sum = 0;
    const struct policy_alloc *allocs = &h->out.allocs[d->alloc_first];
    struct policy_node *nodes = h->nodes;
    const struct node_life *life = h->life;
    struct free_list fl = free_list_open(h);
    for (uint32_t k = 0, count = d->alloc_count; k < count; k++) {
        const struct policy_alloc *a = &allocs[k];
        uint32_t node = (uint32_t)a->node;
        int32_t whole = a->slots;
        if (a->milli > 0) {
            /* a share takes a free slot only when it opens the GPU */
            int opened = 1;
            if (gpu_share_take(&h->share, node, a->gpu, a->milli, &opened) != 0) {
                free_list_close(h, &fl);
                return oom(h);
            }
            whole = opened;
        }
        nodes[node].free_slots -= whole;
        free_list_set(&fl, node, life[node].takes && nodes[node].free_slots > 0);
        sum += whole;
    }
    free_list_close(h, &fl);
    h->free_slots -= sum;
    h->in_use_slots += sum;

    uint32_t old_cap = h->cap_running;
    if (buffers_grow((void **)&h->running, &h->cap_running, h->n_running + 1, sizeof *h->running) != 0)
        return oom(h);
    if (h->cap_running != old_cap) {
        void *rw = realloc(h->running_w, h->cap_running * sizeof *h->running_w);
        if (rw)
            h->running_w = rw;
        void *be = rw ? realloc(h->by_end, h->cap_running * sizeof *h->by_end) : NULL;
        if (be)
            h->by_end = be;
        void *pr = be ? realloc(h->prog, h->cap_running * sizeof *h->prog) : NULL;
        if (!pr)
            return oom(h);
        h->prog = pr;
    }
    if (buffers_grow((void **)&h->allocs, &h->cap_allocs, h->n_allocs + d->alloc_count, sizeof *h->allocs) != 0)
        return oom(h);

    uint32_t wi = h->queue.w[d->job_index];
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
    h->life_of_w[wi].slot = s;
    h->queued_slots -= q->slots;

    struct progress *p = &h->prog[s];
    memset(p, 0, sizeof *p);
    progress_init(h, p, q, r->alloc_first, r->alloc_count);
    p->rate = progress_rate(h, p);
    p->work_left_us = (double)j->runtime_us - h->life_of_w[wi].done_us;
    p->last_us = now;
    p->attempt_start_us = now;

    uint32_t pos = by_end_lower_bound(h, s, h->n_running);
    memmove(&h->by_end[pos + 1], &h->by_end[pos], (h->n_running - pos) * sizeof *h->by_end);
    h->by_end[pos] = s;
    h->n_running++;

    waiting_queue_mark(&h->queue, d->job_index);
    struct sim_job_result *res = &h->res->jobs[wi];
    if (res->start_us < 0)
        res->start_us = now;
    res->n_nodes = (int32_t)d->alloc_count;
    res->span = p->span;
    h->res->stats.starts++;
    notify(h, POLICY_EVENT_STARTED, q, 0);
    if (p->span == SPAN_SPINE) /* its rate and end come at the end of the instant */
        return contention_add(&h->contention, wi, &h->allocs[r->alloc_first], r->alloc_count) ? oom(h) : 0;
    return schedule_completion(h, s);
}

/* Stops the running jobs the policy preempts, before its STARTs take their
 * slots. Decisions name running jobs by their index in the view, which
 * stopping changes, so they are resolved to workload jobs first. */
static int apply_preemptions(struct host *h)
{
    h->n_preempt = 0;
    for (uint32_t k = 0; k < h->out.n; k++) {
        const struct policy_decision *d = &h->out.items[k];
        if (d->kind != POLICY_PREEMPT)
            continue;
        uint32_t wi = h->running_w[d->job_index];
        if (buffers_grow((void **)&h->preempt_w, &h->cap_preempt, h->n_preempt + 1, sizeof *h->preempt_w) != 0)
            return oom(h);
        h->preempt_w[h->n_preempt++] = wi;
    }
    for (uint32_t i = 0; i < h->n_preempt; i++) {
        uint32_t wi = h->preempt_w[i];
        if (stop_attempt(h, h->life_of_w[wi].slot, POLICY_EVENT_PREEMPTED) == UINT32_MAX)
            return -1;
        h->life_of_w[wi].preempted++;
        h->res->jobs[wi].preemptions++;
        h->res->stats.preemptions++;
    }
    return 0;
}

static int run_pass(struct host *h)
{
    gpu_share_index(&h->share, h->nodes, h->n_nodes);
    struct cluster_view view = {
        .now_us = engine_now(&h->eng),
        .nodes = h->nodes,
        .n_nodes = h->n_nodes,
        .nodes_with_free = h->with_free,
        .n_nodes_with_free = h->n_with_free,
        .total_slots = h->total_slots,
        .free_slots = h->free_slots,
        .running = h->running,
        .running_by_end = h->by_end,
        .n_running = h->n_running,
        .allocs = h->allocs,
        .type_speed = h->type_speed,
        .n_types = h->n_types,
        .shared = h->share.gpus,
        .n_shared = h->share.n,
    };
    waiting_queue_view(&h->queue, &view, !h->opt->untracked_queue);
    if (policy_host_size_decisions(&h->out, &view) != 0)
        return oom(h);
    h->res->stats.passes++;
    if (policy_host_decide(h->policy, &view, &h->out, h->err) != POLICY_HOST_OK)
        return -1;
    if (h->opt->on_pass)
        h->opt->on_pass(h->opt->hook_ctx, &view, &h->out);
    waiting_queue_seen(&h->queue); /* what follows changes it */

    if (apply_preemptions(h) != 0)
        return -1;
    for (uint32_t k = 0; k < h->out.n; k++) {
        const struct policy_decision *d = &h->out.items[k];
        if (d->kind == POLICY_PREEMPT)
            continue;
        if (d->kind == POLICY_RESERVE) {
            h->queue.jobs[d->job_index].reserved_us = d->at_us;
            continue;
        }
        if (apply_start(h, d) != 0)
            return -1;
    }
    waiting_queue_close_gaps(&h->queue);
    /* the preempted go back to the queue only now: the STARTs above named
     * queue positions of the view the policy saw */
    for (uint32_t i = 0; i < h->n_preempt; i++)
        if (enqueue(h, h->preempt_w[i]) != 0)
            return -1;
    if (waiting_queue_waiting(&h->queue) > h->res->stats.max_queue_len)
        h->res->stats.max_queue_len = waiting_queue_waiting(&h->queue);
    return 0;
}

/* A pass, when something changed since the last one and a job waits (a
 * pass over an unchanged state would decide nothing new). */
static int pass_if_changed(struct host *h)
{
    if (!h->changed || waiting_queue_waiting(&h->queue) == 0)
        return 0;
    h->changed = 0;
    return run_pass(h);
}

/* ---- the run ---- */

enum { SIM_DONE = 1 }; /* handler code: every job is finished */

static int handle_event(void *ctx, const struct event *ev)
{
    struct host *h = ctx;
    h->res->stats.events++;
    int rc = 0;
    switch (ev->kind) {
    case SIM_EV_ARRIVAL:
        rc = on_arrival(h, (uint32_t)ev->arg);
        break;
    case SIM_EV_COMPLETION:
        rc = on_completion(h, (uint32_t)ev->arg);
        break;
    case SIM_EV_FAILURE:
        rc = on_failure(h, (uint32_t)ev->arg);
        break;
    case SIM_EV_REPAIR:
        rc = on_repair(h, (uint32_t)ev->arg);
        break;
    case SIM_EV_DELIVERY:
        rc = on_delivery(h, (int32_t)ev->arg);
        break;
    case SIM_EV_RETIREMENT:
        rc = on_retirement(h, (size_t)ev->arg);
        break;
    case SIM_EV_SAMPLE:
        rc = on_sample(h, (uint32_t)ev->arg);
        break;
    case SIM_EV_PASS:
        break;
    }
    if (rc == 0 && ev->aux == AUX_PASS_AFTER)
        rc = pass_if_changed(h);
    return rc || h->policy_failed ? -1 : 0;
}

static int handle_instant_end(void *ctx, sim_time now)
{
    struct host *h = ctx;
    (void)now;
    if (pass_if_changed(h) != 0 || h->policy_failed)
        return -1;
    if (contention_settle(h) != 0)
        return -1;
    struct sim_period_stats *ps = periods_at(&h->periods, now);
    if (ps && (double)h->queued_slots > ps->peak_queued_slots)
        ps->peak_queued_slots = (double)h->queued_slots;
    /* With failures the event list never empties: without a horizon, stop
     * when the work is done. */
    if (h->opt->until_us == SIM_TIME_NEVER && h->feed_state == WORKLOAD_FEED_ENDED && h->arrived >= h->known &&
        waiting_queue_waiting(&h->queue) == 0 &&
        h->n_running == 0)
        return SIM_DONE;
    return 0;
}

static int host_init_models(struct host *h)
{
    const struct sim_models *m = h->models;
    const struct cluster *c = h->c;
    if (m->failures && m->failures->enabled && m->failures->n_categories) {
        h->failures = m->failures;
        h->res->stats.n_categories = m->failures->n_categories;
        h->res->stats.failures_by_category = calloc(m->failures->n_categories, sizeof *h->res->stats.failures_by_category);
        if (!h->res->stats.failures_by_category)
            return oom(h);
    }
    if (c->n_leaves > 0 && contention_init(&h->contention, c, jobs_room(h->w, h->opt)) != 0)
        return oom(h);
    for (uint32_t n = 0; n < c->n_nodes; n++) {
        struct node_life *l = &h->life[n];
        pcg32_stream(&l->rng, m->seed, RNG_FAILURES, n);
        if (h->failures)
            l->failure_rate_per_us = failure_node_rate_per_hour(h->failures, c->nodes[n].slots) / 3.6e9;
        if (c->nodes[n].order < 0 && schedule_failure(h, n) != 0)
            return -1;
    }
    const struct procurement_spec *pr = m->procurement;
    for (size_t i = 0; pr && i < pr->n_orders; i++) {
        sim_time at = procurement_ready_time(pr, i, m->seed);
        if (!engine_schedule(&h->eng, at < 0 ? 0 : at, EVENT_CLASS_CAPACITY, SIM_EV_DELIVERY, (int64_t)i, 0))
            return oom(h);
    }
    for (size_t i = 0; pr && i < pr->n_retirements; i++)
        if (!engine_schedule(&h->eng, pr->retirements[i].at_us < 0 ? 0 : pr->retirements[i].at_us,
                             EVENT_CLASS_CAPACITY, SIM_EV_RETIREMENT, (int64_t)i, 0))
            return oom(h);
    return 0;
}

/* Each GPU-model constraint of the workload, resolved against the node
 * types once: the types it allows and their slots (0 when none matches:
 * its jobs are too big for this cluster). */
static int host_init_constraints(struct host *h)
{
    size_t n = h->w->gpu_models.n;
    if (n == 0)
        return 0;
    h->constraint_mask = malloc(n * sizeof *h->constraint_mask);
    h->constraint_slots = malloc(n * sizeof *h->constraint_slots);
    if (!h->constraint_mask || !h->constraint_slots)
        return oom(h);
    for (size_t i = 0; i < n; i++) {
        if (cluster_types_matching(h->c, h->w->gpu_models.items[i], &h->constraint_mask[i], h->err) != 0)
            return -1;
        h->constraint_slots[i] =
            h->constraint_mask[i] ? cluster_slots_of_types(h->c, h->constraint_mask[i]) : 0;
    }
    return 0;
}

static int host_init(struct host *h)
{
    const struct cluster *c = h->c;
    h->n_nodes = c->n_nodes;
    h->nodes = calloc(c->n_nodes, sizeof *h->nodes);
    h->life = calloc(c->n_nodes, sizeof *h->life);
    h->with_free = malloc(c->n_nodes * sizeof *h->with_free);
    h->with_free_pos = malloc(c->n_nodes * sizeof *h->with_free_pos);
    if (!h->nodes || !h->life || !h->with_free || !h->with_free_pos)
        return err_set(h->err, NULL, 0, 0, "out of memory for %u nodes", c->n_nodes);
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const struct cluster_node *cn = &c->nodes[i];
        h->nodes[i] = (struct policy_node){cn->type, POLICY_NODE_DOWN, cn->slots, cn->slots,
                                           cn->nvlink_domain, cn->leaf, cn->pod, 0, 0, 0};
        h->with_free_pos[i] = NO_SLOT;
        h->life[i].up = 1;
    }
    for (uint32_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].order < 0)
            node_set(h, i, 1, 1, 0);
    h->changed = 0;
    size_t n = jobs_room(h->w, h->opt);
    h->life_of_w = buffers_alloc_large((n ? n : 1) * sizeof *h->life_of_w);
    if (!h->life_of_w)
        return oom(h);
    checkpoint_defaults(h->checkpoint_defaults);
    h->checkpoint = h->models ? h->models->checkpoint : h->checkpoint_defaults;
    if (c->catalog && c->catalog->n) {
        h->n_types = (uint32_t)c->catalog->n;
        h->type_speed = malloc(c->catalog->n * POLICY_JOB_CLASSES * sizeof *h->type_speed);
        if (!h->type_speed)
            return oom(h);
        for (size_t t = 0; t < c->catalog->n; t++)
            for (int k = 0; k < POLICY_JOB_CLASSES; k++)
                h->type_speed[t * POLICY_JOB_CLASSES + (size_t)k] = c->catalog->types[t].speed[k];
    }
    if (h->models && host_init_models(h) != 0)
        return -1;
    return host_init_constraints(h);
}

static void host_release(struct host *h)
{
    contention_release(&h->contention);
    engine_release(&h->eng);
    free(h->nodes);
    free(h->life);
    free(h->with_free);
    free(h->with_free_pos);
    waiting_queue_release(&h->queue);
    free(h->running);
    free(h->prog);
    free(h->running_w);
    free(h->by_end);
    free(h->life_of_w);
    free(h->type_speed);
    free(h->preempt_w);
    free(h->allocs);
    free(h->out.items);
    free(h->out.allocs);
    gpu_share_release(&h->share);
    free(h->constraint_mask);
    free(h->constraint_slots);
}

int simulation_run(const struct workload *w, const struct cluster *c, struct policy_host *policy,
                   const struct sim_options *opt, struct sim_result *res, struct err *err)
{
    struct sim_options defaults;
    if (!opt) {
        sim_options_init(&defaults);
        opt = &defaults;
    }
    memset(res, 0, sizeof *res);
    size_t most = jobs_room(w, opt);
    if (most > UINT32_MAX - 1)
        return err_set(err, NULL, 0, 0, "too many jobs (%zu)", most);
    res->jobs = buffers_alloc_large((most ? most : 1) * sizeof *res->jobs);
    if (!res->jobs)
        return err_set(err, NULL, 0, 0, "out of memory for %zu job results", most);

    struct host h;
    memset(&h, 0, sizeof h);
    h.w = w;
    h.c = c;
    h.policy = policy;
    h.opt = opt;
    h.models = opt->models;
    h.res = res;
    h.err = err;
    h.feed_state = opt->feed ? WORKLOAD_FEED_MORE : WORKLOAD_FEED_ENDED;
    if (opt->feed)
        h.told = opt->feed->wait(opt->feed->ctx, 1, &h.feed_state);
    else
        h.told = w->n;
    sim_time first = h.told ? w->jobs[0].submit_us : 0;
    /* With models, time 0 is the scenario's start (orders count from it). */
    sim_time start = h.models && first > 0 ? 0 : first;
    engine_init(&h.eng, start);
    res->stats.first_submit_us = first;
    res->stats.last_end_us = first;
    h.acc_last_us = start;
    int rc = -1;
    if (host_init(&h) != 0)
        goto done;
    if (!job_known(&h, 0) && h.feed_state == WORKLOAD_FEED_BROKEN) {
        rc = SIM_FEED_BROKEN;
        goto done;
    }
    h.queue.keep_gaps = policy->reads_gaps && !opt->compact_queue;
    res->stats.total_slots = c->total_slots;
    if (opt->n_periods && opt->period_us > 0) {
        res->n_teams = w->teams.n + 1;
        res->periods = calloc(opt->n_periods, sizeof *res->periods);
        res->team_busy_slot_us = calloc((size_t)opt->n_periods * res->n_teams, sizeof *res->team_busy_slot_us);
        if (!res->periods || !res->team_busy_slot_us) {
            oom(&h);
            goto done;
        }
        h.periods = (struct periods){res->periods, res->team_busy_slot_us, res->n_teams, opt->period_start_us,
                                     opt->period_us, opt->n_periods};
    }
    if (opt->n_samples && opt->sample_us > 0) {
        res->samples = calloc(opt->n_samples, sizeof *res->samples);
        if (!res->samples || !engine_schedule(&h.eng, opt->period_start_us < start ? start : opt->period_start_us,
                                              EVENT_CLASS_TIMER, SIM_EV_SAMPLE, 0, 0)) {
            oom(&h);
            goto done;
        }
    }
    struct engine_handlers handlers = {handle_event, handle_instant_end, &h};
    int run = schedule_next_arrival(&h) != 0 ? -1 : engine_run_until(&h.eng, opt->until_us, &handlers);
    res->stats.contention_updates = h.contention.runs;
    res->stats.contention_flows = h.contention.flows_solved;
    if (h.feed_state == WORKLOAD_FEED_BROKEN) {
        rc = SIM_FEED_BROKEN;
        goto done;
    }
    if (run < 0) {
        if (!err->set)
            oom(&h);
        goto done;
    }
    res->n = h.known;
    /* close the integrals at the last end (or where the run stopped) */
    sim_time stop = res->stats.last_end_us;
    if (engine_now(&h.eng) > stop && run != SIM_DONE)
        stop = engine_now(&h.eng);
    if (stop > h.acc_last_us) {
        h.eng.now_us = stop;
        accumulate(&h);
    } else if (stop < h.acc_last_us) {
        /* events after the last end (failures) were integrated: take them back */
        double dt = (double)(h.acc_last_us - (stop > first ? stop : first));
        res->stats.capacity_slot_us -= dt * (double)h.present_slots;
        res->stats.node_up_us -= dt * (double)h.up_nodes;
        res->stats.node_present_us -= dt * (double)h.present_nodes;
    }
    /* attempts still running where the run stopped (a horizon) were busy
     * up to there: periods count them, or a horizon full of long jobs
     * would read as idle */
    for (uint32_t s = 0; res->periods && s < h.n_running; s++)
        periods_add_busy(&h.periods, w->jobs[h.running_w[s]].team, job_gpu_share(&w->jobs[h.running_w[s]]),
                         h.prog[s].attempt_start_us, stop);
    for (size_t i = 0; i < res->n; i++)
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
    free(res->stats.failures_by_category);
    free(res->periods);
    free(res->team_busy_slot_us);
    free(res->samples);
    memset(res, 0, sizeof *res);
}
