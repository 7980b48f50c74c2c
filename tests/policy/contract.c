/* policy_contract: the contract suite every policy must pass, built-in or
 * plugin. Usage: policy_contract [PLUGIN.so ...]
 *
 * For every spec in the registry's composition list and every plugin given:
 *  1. views: 300 random views (nodes up, draining and down; node types,
 *     NVLink domains, leaves; running jobs; queued jobs of several teams,
 *     priorities, attained service, preemption counts, reservations). On
 *     each, decide() must
 *       - start only queued jobs (index in range, id matching, once each),
 *       - place only on up nodes, within their free slots plus what its own
 *         PREEMPTs in the same pass give back (never over-allocate),
 *       - give every started job exactly its slots (gang: whole or not at all),
 *       - preempt only running jobs, each once; stay within the buffers,
 *       - decide the same on the same view (called twice, compared byte by
 *         byte, with fresh buffers).
 *  2. replay: a random workload with teams on a cluster with topology, run
 *     by the simulator (which checks every decision too): every job
 *     finishes, and a second run gives the same schedule.
 *  3. fairness, for the policies the registry marks fair: the standard
 *     contention workload (one team floods the cluster at t=0, two others
 *     submit steadily): no team's longest wait exceeds 1.5x the time the
 *     whole workload needs, and the light teams' mean wait stays under 10%
 *     of the flood's length.
 * Then deliberately broken policies (defined here, tests only) must each be
 * caught by the check meant for them. Prints "policy: N passed, N failed,
 * N skipped" (a policy passes when all its checks do).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cluster.h"
#include "models/policy_host.h"
#include "models/simulation.h"
#include "models/workload.h"
#include "policies/registry.h"
#include "sim/pcg32.h"

/* Shapes 0-9 have up to SMALL_NODES nodes; the last two have 190 and 195,
 * past the 128 from which placement builds its index (policies/placement.h),
 * so the checker sees indexed passes too. */
enum { N_VIEWS = 360, N_SHAPES = 12, N_SMALL_SHAPES = 10, SMALL_NODES = 48, MAX_NODES = 200, MAX_RUNNING = 64,
       MAX_QUEUED = 80, MAX_ALLOCS = 1024 };

static int passed, failed, skipped;
static int verbose_failures = 1;

/* ---- random views ---- */

struct view_store {
    struct policy_node nodes[MAX_NODES];
    uint32_t with_free[MAX_NODES];
    struct policy_running running[MAX_RUNNING];
    uint32_t by_end[MAX_RUNNING];
    struct policy_alloc allocs[MAX_ALLOCS];
    struct policy_job queued[MAX_QUEUED];
    struct policy_shared_gpu shared[MAX_NODES];
    double type_speed[2 * POLICY_JOB_CLASSES];
    struct cluster_view view;
};

/* A view of a cluster of n nodes x per_node slots: hosts keep a cluster's
 * nodes (count, sizes, topology) for the life of a policy instance, so the
 * suite varies everything else from view to view. */
static void random_view(struct view_store *s, struct pcg32 *r, uint32_t n, int32_t per_node)
{
    memset(s, 0, sizeof *s);
    struct cluster_view *v = &s->view;
    int64_t now = 1000000000 + (int64_t)pcg32_bounded(r, 1000000) * 1000;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t st = pcg32_bounded(r, 10);
        s->nodes[i] = (struct policy_node){(int32_t)(i % 2), st < 8 ? POLICY_NODE_UP : st == 8 ? POLICY_NODE_DRAINING
                                                                                                 : POLICY_NODE_DOWN,
                                           per_node, per_node, (int32_t)(i / 4 * 4), (int32_t)(i / 8),
                                           (int32_t)(i / 16), 0, 0, 0};
    }
    /* running jobs: on up or draining nodes */
    uint32_t nr = pcg32_bounded(r, MAX_RUNNING / 2);
    uint32_t na = 0;
    int64_t next_id = 1;
    for (uint32_t k = 0; k < nr && na + 8 < MAX_ALLOCS; k++) {
        int32_t want = 1 + (int32_t)pcg32_bounded(r, pcg32_bounded(r, 3) == 0 ? 24 : 8);
        uint32_t first = na;
        int32_t got = 0;
        for (uint32_t tries = 0; got < want && tries < 3 * n; tries++) {
            uint32_t i = pcg32_bounded(r, n);
            struct policy_node *nd = &s->nodes[i];
            if (nd->state == POLICY_NODE_DOWN || nd->free_slots == 0)
                continue;
            int32_t use = nd->free_slots < want - got ? nd->free_slots : want - got;
            nd->free_slots -= use;
            s->allocs[na++] = (struct policy_alloc){(int32_t)i, use, 0, 0};
            got += use;
        }
        if (got == 0)
            continue;
        struct policy_running *run = &s->running[v->n_running];
        int64_t est = (1 + (int64_t)pcg32_bounded(r, 7200)) * 1000000;
        int64_t start = now - (int64_t)pcg32_bounded(r, 7200) * 1000000;
        run->job = (struct policy_job){next_id++, start - 1000000, est, got, (int32_t)pcg32_bounded(r, 5) - 1,
                                       (int32_t)pcg32_bounded(r, 4) - 1, (int32_t)pcg32_bounded(r, 3), 0, -1,
                                       (int64_t)pcg32_bounded(r, 20000) * 1000000, (int32_t)pcg32_bounded(r, 5),
                                       (int32_t)pcg32_bounded(r, 3), 0, 0, 0};
        run->start_us = start;
        run->expected_end_us = start + est;
        run->alloc_first = first;
        run->alloc_count = na - first;
        s->by_end[v->n_running] = v->n_running;
        v->n_running++;
    }
    /* GPU sharing (ABI 2), from a stream of its own so that the draws
     * above stay what they were: a node in four shares its last GPU among
     * one or two running fractional jobs */
    struct pcg32 r2;
    pcg32_seed(&r2, (uint64_t)now, 77);
    for (uint32_t i = 0; i < n && v->n_running + 2 <= MAX_RUNNING && na + 2 <= MAX_ALLOCS; i++) {
        struct policy_node *nd = &s->nodes[i];
        if (nd->state == POLICY_NODE_DOWN || nd->free_slots == 0 || pcg32_bounded(&r2, 4) != 0)
            continue;
        int32_t used = 100 * (1 + (int32_t)pcg32_bounded(&r2, 10));
        int32_t parts = used >= 200 && pcg32_bounded(&r2, 2) ? 2 : 1;
        nd->free_slots--;
        nd->shared_first = v->n_shared;
        nd->n_shared = 1;
        s->shared[v->n_shared++] = (struct policy_shared_gpu){(int32_t)i, per_node - 1, used, 0};
        for (int32_t part = 0; part < parts; part++) {
            int32_t milli = parts == 1 ? used : part == 0 ? used / 2 : used - used / 2;
            struct policy_running *run = &s->running[v->n_running];
            int64_t est = (1 + (int64_t)pcg32_bounded(&r2, 7200)) * 1000000;
            int64_t start = now - (int64_t)pcg32_bounded(&r2, 7200) * 1000000;
            run->job = (struct policy_job){next_id++, start - 1000000, est, 1, -1, -1, 0, 0, -1,
                                           (int64_t)pcg32_bounded(&r2, 20000) * 1000000, 0, 0, 0, milli, 0};
            run->start_us = start;
            run->expected_end_us = start + est;
            run->alloc_first = na;
            run->alloc_count = 1;
            s->allocs[na++] = (struct policy_alloc){(int32_t)i, 1, milli, per_node - 1};
            s->by_end[v->n_running] = v->n_running;
            v->n_running++;
        }
    }
    v->shared = v->n_shared ? s->shared : NULL;
    policy_host_order_by_end(s->running, v->n_running, s->by_end);
    v->nodes = s->nodes;
    v->n_nodes = n;
    policy_host_tally_nodes(v, s->with_free);
    /* an unspecified order: reverse it sometimes */
    if (pcg32_bounded(r, 2))
        for (uint32_t a = 0, b = v->n_nodes_with_free ? v->n_nodes_with_free - 1 : 0; a < b; a++, b--) {
            uint32_t t = s->with_free[a];
            s->with_free[a] = s->with_free[b];
            s->with_free[b] = t;
        }
    uint32_t nq = pcg32_bounded(r, MAX_QUEUED);
    int64_t submit = now - 86400000000LL;
    for (uint32_t k = 0; k < nq; k++) {
        submit += (int64_t)pcg32_bounded(r, 1000) * 1000000;
        if (submit > now)
            submit = now;
        int32_t slots = 1 + (int32_t)pcg32_bounded(r, pcg32_bounded(r, 4) == 0 ? 32 : 8);
        int64_t reserved = pcg32_bounded(r, 4) == 0 ? now + (int64_t)pcg32_bounded(r, 3600) * 1000000 : -1;
        s->queued[k] = (struct policy_job){next_id++, submit, (1 + (int64_t)pcg32_bounded(r, 36000)) * 1000000, slots,
                                           (int32_t)pcg32_bounded(r, 5) - 1, (int32_t)pcg32_bounded(r, 4) - 1,
                                           (int32_t)pcg32_bounded(r, 3), 0, reserved,
                                           pcg32_bounded(r, 3) == 0 ? (int64_t)pcg32_bounded(r, 40000) * 1000000 : 0,
                                           (int32_t)pcg32_bounded(r, 4), (int32_t)pcg32_bounded(r, 3), 0, 0, 0};
    }
    /* queued jobs asking for a share of one GPU, or held to a node type */
    for (uint32_t k = 0; k < nq; k++) {
        if (s->queued[k].slots == 1 && pcg32_bounded(&r2, 4) == 0)
            s->queued[k].milli = 100 * (1 + (int32_t)pcg32_bounded(&r2, 9));
        if (pcg32_bounded(&r2, 5) == 0)
            s->queued[k].type_mask = UINT64_C(1) << pcg32_bounded(&r2, 2);
    }
    /* node shapes (ABI 3), from a third stream: a whole-GPU job in three
     * asks for exactly n nodes (one node, whole nodes, or two halves) */
    struct pcg32 r3;
    pcg32_seed(&r3, (uint64_t)now, 78);
    for (uint32_t k = 0; k < nq; k++) {
        struct policy_job *j = &s->queued[k];
        if (j->milli > 0 || pcg32_bounded(&r3, 3) != 0)
            continue;
        uint32_t pick = pcg32_bounded(&r3, 3);
        if (pick == 0 && j->slots <= per_node)
            j->nodes = 1;
        else if (pick == 1 && j->slots % per_node == 0)
            j->nodes = j->slots / per_node;
        else if (j->slots % 2 == 0 && j->slots / 2 <= per_node)
            j->nodes = 2;
    }
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < POLICY_JOB_CLASSES; c++)
            s->type_speed[t * POLICY_JOB_CLASSES + c] = t == 0 ? 1.0 : 1.0 + 0.5 * c;
    v->now_us = now;
    v->nodes = s->nodes;
    v->n_nodes = n;
    v->nodes_with_free = s->with_free;
    v->queued = s->queued;
    v->n_queued = nq;
    v->running = s->running;
    v->running_by_end = s->by_end;
    v->allocs = s->allocs;
    if (pcg32_bounded(r, 2)) {
        v->type_speed = s->type_speed;
        v->n_types = 2;
    }
}

/* ---- checking one pass ---- */

struct buffers {
    struct policy_decision items[MAX_QUEUED + MAX_RUNNING + 4];
    struct policy_alloc allocs[MAX_NODES * 8 + MAX_QUEUED + 4];
    struct policy_decisions out;
};

static void buffers_init(struct buffers *b, const struct cluster_view *v)
{
    memset(b, 0, sizeof *b);
    b->out.items = b->items;
    b->out.allocs = b->allocs;
    /* what policy.h promises, no more */
    b->out.cap = v->n_queued + v->n_running;
    b->out.cap_allocs = (uint32_t)v->free_slots + v->n_queued;
}

static int same_decisions(const struct policy_decisions *a, const struct policy_decisions *b)
{
    return a->n == b->n && a->n_allocs == b->n_allocs &&
           memcmp(a->items, b->items, a->n * sizeof *a->items) == 0 &&
           memcmp(a->allocs, b->allocs, a->n_allocs * sizeof *a->allocs) == 0;
}

/* ---- the checks, per policy ---- */

struct subject {
    const char *label;
    const char *spec;              /* for built-ins and plugins */
    const struct policy_ops *ops;  /* for the broken ones, else NULL */
    int fair;
};

static double decide_timeout_s; /* --decide-timeout; 0: the host's default */

static int create(const struct subject *s, struct policy_host *ph, char *why, size_t len)
{
    struct err err;
    err_clear(&err);
    if (s->ops) {
        void *state = NULL;
        char msg[256] = "";
        if (s->ops->create("", &state, msg, sizeof msg) != 0) {
            snprintf(why, len, "create failed: %s", msg);
            return -1;
        }
        policy_host_adopt(ph, s->ops, state, s->label);
        return 0;
    }
    struct policy_host_options opt = {.host_name = "the contract suite", .decide_timeout_s = decide_timeout_s};
    if (policy_host_open(ph, s->spec, &opt, &err) != 0) {
        snprintf(why, len, "%s", err.msg);
        return -1;
    }
    return 0;
}

static void destroy(const struct subject *s, struct policy_host *ph)
{
    if (s->ops)
        s->ops->destroy(ph->pl.state);
    policy_host_close(ph);
}

/* Returns NULL or the first broken rule. One instance per cluster shape,
 * N_VIEWS / N_SHAPES views each. */
static const char *check_views(const struct subject *s, char *why, size_t len)
{
    struct policy_host pl;
    struct view_store *vs = malloc(sizeof *vs);
    struct buffers *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    const char *bad = NULL;
    struct pcg32 r;
    pcg32_stream(&r, 2024, RNG_TEST, 77);
    for (int k = 0; k < N_VIEWS && !bad; k++) {
        if (k % (N_VIEWS / N_SHAPES) == 0) {
            if (k > 0)
                destroy(s, &pl);
            if (create(s, &pl, why, len) != 0) {
                free(vs);
                free(a);
                free(b);
                return why;
            }
        }
        uint32_t shape = (uint32_t)(k / (N_VIEWS / N_SHAPES));
        uint32_t n_nodes = shape < N_SMALL_SHAPES ? 1 + (shape * 7919u) % SMALL_NODES : 140 + 5 * shape;
        random_view(vs, &r, n_nodes, shape % 3 == 0 ? 4 : 8);
        buffers_init(a, &vs->view);
        buffers_init(b, &vs->view);
        const char *broke = NULL;
        struct err err;
        err_clear(&err);
        enum policy_host_status st = policy_host_decide(&pl, &vs->view, &a->out, &err);
        if (st == POLICY_HOST_FAILED && strstr(err.msg, "failed to decide"))
            broke = "decide() failed with the buffers policy.h promises";
        else if (st != POLICY_HOST_OK)
            broke = err.msg;
        if (!broke && (policy_host_decide(&pl, &vs->view, &b->out, &err) != POLICY_HOST_OK ||
                       !same_decisions(&a->out, &b->out)))
            broke = err.set ? err.msg : "decided differently on the same view";
        if (broke) {
            char copy[400];
            snprintf(copy, sizeof copy, "%.399s", broke);
            snprintf(why, len, "%.400s (view %d: %u nodes, %u queued, %u running)", copy, k, vs->view.n_nodes,
                     vs->view.n_queued, vs->view.n_running);
            bad = why;
        }
    }
    free(vs);
    free(a);
    free(b);
    destroy(s, &pl);
    return bad;
}

static void topo_cluster(struct cluster *c, int nodes, int slots)
{
    struct err err;
    err_clear(&err);
    cluster_init_homogeneous(c, nodes, slots, &err);
    for (int i = 0; i < nodes; i++) {
        c->nodes[i].nvlink_domain = i / 4 * 4;
        c->nodes[i].leaf = i / 8;
        c->nodes[i].pod = i / 16;
    }
}

static void team_workload(struct workload *w, size_t n, uint64_t seed)
{
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 3);
    workload_init(w);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        t += floor(-log(pcg32_unit_open(&r)) * 60.0);
        double run = 1 + floor(-log(pcg32_unit_open(&r)) * 900.0);
        double limit = floor(run * (1.0 + pcg32_unit(&r)));
        int slots = 1 + (int)pcg32_bounded(&r, pcg32_bounded(&r, 4) == 0 ? 32 : 8);
        struct job j = {.id = (int64_t)i + 1,
                        .submit_us = llround(t * 1e6),
                        .runtime_us = llround(run * 1e6),
                        .limit_us = llround((limit < 1 ? 1 : limit) * 1e6),
                        .slots = slots,
                        .user = (int32_t)pcg32_bounded(&r, 6),
                        .team = (int32_t)pcg32_bounded(&r, 3),
                        .status = -1,
                        .source_line = (long)i + 1,
                        .job_class = -1};
        workload_push(w, &j);
    }
}

static int replay(const struct subject *s, const struct workload *w, const struct cluster *c, struct sim_result *res,
                  char *why, size_t len)
{
    struct policy_host pl;
    if (create(s, &pl, why, len) != 0)
        return -1;
    struct err err;
    err_clear(&err);
    int rc = simulation_run(w, c, &pl, NULL, res, &err);
    if (rc != 0)
        snprintf(why, len, "%s", err.msg);
    destroy(s, &pl);
    return rc;
}

static const char *check_replay(const struct subject *s, char *why, size_t len)
{
    struct workload w;
    team_workload(&w, 600, 11);
    struct cluster c;
    topo_cluster(&c, 8, 8);
    struct sim_result a, b;
    const char *bad = NULL;
    if (replay(s, &w, &c, &a, why, len) != 0) {
        bad = why;
    } else {
        if (a.stats.unfinished != 0) {
            snprintf(why, len, "%zu jobs never finished", a.stats.unfinished);
            bad = why;
        } else if (replay(s, &w, &c, &b, why, len) != 0) {
            bad = why;
        } else {
            for (size_t i = 0; i < w.n && !bad; i++) {
                if (a.jobs[i].start_us != b.jobs[i].start_us || a.jobs[i].end_us != b.jobs[i].end_us) {
                    snprintf(why, len, "two runs scheduled job %lld differently", (long long)w.jobs[i].id);
                    bad = why;
                }
            }
            sim_result_release(&b);
        }
        sim_result_release(&a);
    }
    cluster_release(&c);
    workload_release(&w);
    return bad;
}

/* The standard contention workload on 6 nodes x 8 slots: team 0 floods
 * with 60 jobs of 8 slots x 1 h at t=0 (10 h of the whole cluster); teams 1
 * and 2 each submit a 4-slot, 30-min job every 20 min from t=10 min to 10 h. */
static void contention_workload(struct workload *w)
{
    workload_init(w);
    int64_t id = 1;
    for (int k = 0; k < 60; k++) {
        struct job j = {.id = id++, .runtime_us = 3600000000LL, .limit_us = 3600000000LL, .slots = 8, .status = -1,
                        .job_class = -1};
        workload_push(w, &j);
    }
    for (int k = 0; k < 30; k++) {
        for (int team = 1; team <= 2; team++) {
            sim_time at = (600 + 1200LL * k) * 1000000LL;
            struct job j = {.id = id++, .submit_us = at, .runtime_us = 1800000000LL, .limit_us = 1800000000LL,
                            .slots = 4, .user = team, .team = team, .status = -1, .job_class = -1};
            workload_push(w, &j);
        }
    }
    workload_sort_by_submit(w);
}

static const char *check_fair(const struct subject *s, char *why, size_t len)
{
    struct workload w;
    contention_workload(&w);
    struct cluster c;
    topo_cluster(&c, 6, 8);
    struct sim_result res;
    const char *bad = NULL;
    if (replay(s, &w, &c, &res, why, len) != 0) {
        bad = why;
    } else {
        double work_s = 0;
        for (size_t i = 0; i < w.n; i++)
            work_s += (double)w.jobs[i].runtime_us / 1e6 * w.jobs[i].slots;
        double need_s = work_s / 48.0, flood_s = 60 * 8 * 3600.0 / 48.0;
        double max_wait[3] = {0}, sum_wait[3] = {0};
        int n[3] = {0};
        for (size_t i = 0; i < w.n; i++) {
            int t = w.jobs[i].team;
            double wait = res.jobs[i].start_us < 0 ? 1e18 : (double)(res.jobs[i].start_us - w.jobs[i].submit_us) / 1e6;
            if (wait > max_wait[t])
                max_wait[t] = wait;
            sum_wait[t] += wait;
            n[t]++;
        }
        for (int t = 0; t < 3 && !bad; t++) {
            if (max_wait[t] > 1.5 * need_s) {
                snprintf(why, len, "team %d waited %.0f s, more than 1.5x the %.0f s the workload needs", t,
                         max_wait[t], need_s);
                bad = why;
            } else if (t > 0 && sum_wait[t] / n[t] > 0.1 * flood_s) {
                snprintf(why, len, "light team %d waited %.0f s on average behind the flood (bound %.0f s)", t,
                         sum_wait[t] / n[t], 0.1 * flood_s);
                bad = why;
            }
        }
        sim_result_release(&res);
    }
    cluster_release(&c);
    workload_release(&w);
    return bad;
}

/* ---- deliberately broken policies (tests only) ---- */

enum broken_kind { BROKEN_OVERALLOC, BROKEN_DRAINING, BROKEN_NOT_QUEUED, BROKEN_NONDETERMINISTIC, BROKEN_PARTIAL_GANG,
                   BROKEN_UNFAIR, BROKEN_MODEL, BROKEN_SHARE, BROKEN_SHAPE };

struct broken {
    enum broken_kind kind;
    uint64_t calls; /* BROKEN_NONDETERMINISTIC changes its mind with it */
};

static int broken_create_kind(void **state, enum broken_kind kind)
{
    struct broken *b = calloc(1, sizeof *b);
    b->kind = kind;
    *state = b;
    return b ? 0 : -1;
}

static void broken_destroy(void *state)
{
    free(state);
}

/* A plausible greedy policy that breaks exactly one rule. It leaves jobs
 * with a share, a GPU-model constraint or a node shape alone, except
 * BROKEN_MODEL (places constrained jobs anywhere), BROKEN_SHARE (piles
 * shares on the first shared GPU, room or not) and BROKEN_SHAPE (pools a
 * shaped job's slots over the first nodes with room). */
static int broken_decide(void *state, const struct cluster_view *v, struct policy_decisions *out)
{
    struct broken *b = state;
    out->n = out->n_allocs = 0;
    b->calls++;
    int32_t left[4096];
    uint32_t nn = v->n_nodes < 4096 ? v->n_nodes : 4096;
    for (uint32_t i = 0; i < nn; i++) {
        int usable = v->nodes[i].state == POLICY_NODE_UP ||
                     (b->kind == BROKEN_DRAINING && v->nodes[i].state == POLICY_NODE_DRAINING);
        left[i] = usable ? v->nodes[i].free_slots : 0;
        if (b->kind == BROKEN_OVERALLOC && usable)
            left[i] += 1;
    }
    for (uint32_t k = 0; k < v->n_queued && out->n < out->cap; k++) {
        /* unfair: team 0 always first, everyone else in reverse arrival */
        uint32_t q = k;
        if (b->kind == BROKEN_UNFAIR) {
            uint32_t zeros = 0;
            for (uint32_t i = 0; i < v->n_queued; i++)
                zeros += v->queued[i].team == 0;
            if (k < zeros) {
                uint32_t seen = 0;
                for (q = 0; q < v->n_queued; q++)
                    if (v->queued[q].team == 0 && seen++ == k)
                        break;
            } else {
                uint32_t seen = 0, want = k - zeros;
                for (q = v->n_queued; q-- > 0;)
                    if (v->queued[q].team != 0 && seen++ == want)
                        break;
            }
        }
        if (b->kind == BROKEN_NONDETERMINISTIC && (b->calls & 1) && k == 0)
            continue;
        const struct policy_job *job = &v->queued[q];
        if ((job->type_mask && b->kind != BROKEN_MODEL) || (job->milli && b->kind != BROKEN_SHARE) ||
            (job->nodes && b->kind != BROKEN_SHAPE))
            continue;
        if (job->milli) {
            if (!v->n_shared || out->n_allocs >= out->cap_allocs)
                continue;
            const struct policy_shared_gpu *g = &v->shared[0];
            out->allocs[out->n_allocs] = (struct policy_alloc){g->node, 1, job->milli, g->gpu};
            out->items[out->n++] = (struct policy_decision){POLICY_START, q, job->id, v->now_us, out->n_allocs++, 1};
            continue;
        }
        int32_t need = v->queued[q].slots;
        if (b->kind == BROKEN_PARTIAL_GANG && need > 1)
            need -= 1;
        int64_t avail = 0;
        for (uint32_t i = 0; i < nn; i++)
            avail += left[i];
        if (avail < need)
            continue;
        uint32_t first = out->n_allocs;
        for (uint32_t i = 0; i < nn && need > 0; i++) {
            if (left[i] <= 0)
                continue;
            int32_t use = left[i] < need ? left[i] : need;
            if (out->n_allocs >= out->cap_allocs)
                return -1;
            out->allocs[out->n_allocs++] = (struct policy_alloc){(int32_t)i, use, 0, 0};
            left[i] -= use;
            need -= use;
        }
        int64_t id = v->queued[q].id;
        if (b->kind == BROKEN_NOT_QUEUED && v->n_running > 0)
            id = v->running[0].job.id;
        out->items[out->n++] =
            (struct policy_decision){POLICY_START, q, id, v->now_us, first, out->n_allocs - first};
    }
    return 0;
}

#define BROKEN_OPS(kind, label)                                                                                     \
    static int broken_create_##kind(const char *p, void **s, char *e, size_t n)                                   \
    {                                                                                                              \
        return broken_create_kind(s, kind);                                                                        \
    }                                                                                                              \
    static const struct policy_ops ops_##kind = {POLICY_ABI_VERSION, label, "broken on purpose",                 \
                                                 broken_create_##kind, broken_destroy, broken_decide, NULL}

BROKEN_OPS(BROKEN_OVERALLOC, "broken-overalloc");
BROKEN_OPS(BROKEN_DRAINING, "broken-draining");
BROKEN_OPS(BROKEN_NOT_QUEUED, "broken-not-queued");
BROKEN_OPS(BROKEN_NONDETERMINISTIC, "broken-nondeterministic");
BROKEN_OPS(BROKEN_PARTIAL_GANG, "broken-partial-gang");
BROKEN_OPS(BROKEN_UNFAIR, "broken-unfair");
BROKEN_OPS(BROKEN_MODEL, "broken-model");
BROKEN_OPS(BROKEN_SHARE, "broken-share");
BROKEN_OPS(BROKEN_SHAPE, "broken-shape");

/* ---- running it ---- */

static int run_subject(const struct subject *s)
{
    char why[512];
    const char *bad = check_views(s, why, sizeof why);
    const char *stage = "views";
    if (!bad) {
        stage = "replay";
        bad = check_replay(s, why, sizeof why);
    }
    if (!bad && s->fair) {
        stage = "fairness";
        bad = check_fair(s, why, sizeof why);
    }
    if (bad) {
        if (verbose_failures)
            printf("FAIL policy %s: %s: %s\n", s->label, stage, bad);
        return -1;
    }
    printf("ok   %-52s views, replay%s\n", s->label, s->fair ? ", fairness" : "");
    return 0;
}

/* The broken one must be caught, by the stage and rule meant for it. */
static void expect_caught(const struct policy_ops *ops, int fair, const char *rule)
{
    struct subject s = {ops->name, NULL, ops, fair};
    char why[512];
    const char *bad = check_views(&s, why, sizeof why);
    if (!bad)
        bad = check_replay(&s, why, sizeof why);
    if (!bad && fair)
        bad = check_fair(&s, why, sizeof why);
    if (bad && strstr(bad, rule)) {
        printf("ok   %-52s caught: %s\n", ops->name, bad);
        passed++;
    } else {
        printf("FAIL policy %s: not caught by '%s' (%s)\n", ops->name, rule, bad ? bad : "passed every check");
        failed++;
    }
}

/* Every registered component, composed into specs that exercise it; fair:
 * the fairness stage runs too (the fair orderings and work-conserving
 * quotas, with the parameters a site would set for three teams; not with
 * conservative backfilling, whose promises to the flood it keeps). */
static const struct {
    const char *spec;
    int fair;
} specs[] = {
    {"fcfs", 0}, {"fcfs+none", 0}, {"fcfs+easy", 0}, {"fcfs+conservative", 0}, {"fcfs+greedy", 0},
    {"sjf+easy", 0}, {"f1+conservative", 0}, {"wfp3+easy", 0}, {"unicep", 0},
    {"multifactor+easy", 1}, {"multifactor(w_qos=5000,favor_small=1)+conservative", 0},
    {"fairshare+easy+pack", 1}, {"fairshare(groups=2:0|1;1:2,half_life_s=3600)+greedy", 1},
    {"tiresias", 0}, {"tiresias+spread", 0}, {"tiresias(thresholds_gpu_s=600;6000,starve_factor=4)+easy", 0},
    {"srtf", 0}, {"srtf(margin=0)+easy+best-fit", 0},
    {"fcfs+easy+first-fit", 0}, {"fcfs+easy+best-fit", 0}, {"fcfs+easy+spread", 0}, {"fcfs+easy+gavel", 0},
    {"sjf+greedy+gavel", 0}, {"fcfs+easy+preempt", 0},
    {"multifactor+easy+preempt(max_preemptions=1,min_run_s=60,team_tier=1:2;2:1)", 1},
    {"fcfs+easy+quota(guarantee=0:16;1:16;2:16)", 1},
    {"fairshare+easy+quota(guarantee=0:32;1:32;2:32,borrow=0)", 0},
    {"fcfs+greedy+quota(default_gpus=8,reclaim=0)+spread", 0},
};

/* Does a spec name the component (as a whole component, not a prefix)? */
static int spec_names(const char *spec, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = spec; (p = strstr(p, name)) != NULL; p += len)
        if ((p == spec || p[-1] == '+') && (p[len] == '\0' || p[len] == '+' || p[len] == '('))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* the list above must name every component, and check every fair one */
    for (size_t i = 0; i < policy_registry_component_count(); i++) {
        const struct policy_component *c = policy_registry_component_at(i);
        int found = 0, fair = 0;
        for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
            if (spec_names(specs[k].spec, c->name)) {
                found = 1;
                fair |= specs[k].fair;
            }
        }
        if (found && (fair || !c->fair)) {
            passed++;
        } else {
            printf("FAIL policy registry: component '%s' is in no spec of the contract suite%s\n", c->name,
                   found ? " that checks fairness" : "");
            failed++;
        }
    }
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        struct subject s = {specs[k].spec, specs[k].spec, NULL, specs[k].fair};
        if (run_subject(&s) == 0)
            passed++;
        else
            failed++;
    }
    int first_plugin = 1;
    if (argc > 2 && strcmp(argv[1], "--decide-timeout") == 0) {
        decide_timeout_s = atof(argv[2]);
        first_plugin = 3;
    }
    for (int i = first_plugin; i < argc; i++) {
        struct subject s = {argv[i], argv[i], NULL, 0};
        if (run_subject(&s) == 0)
            passed++;
        else
            failed++;
    }
    expect_caught(&ops_BROKEN_OVERALLOC, 0, "over-allocated");
    expect_caught(&ops_BROKEN_DRAINING, 0, "draining node");
    expect_caught(&ops_BROKEN_NOT_QUEUED, 0, "not waiting");
    expect_caught(&ops_BROKEN_NONDETERMINISTIC, 0, "differently on the same view");
    expect_caught(&ops_BROKEN_PARTIAL_GANG, 0, "part of its slots");
    expect_caught(&ops_BROKEN_UNFAIR, 1, "waited");
    expect_caught(&ops_BROKEN_MODEL, 0, "GPU model the job may not use");
    expect_caught(&ops_BROKEN_SHARE, 0, "over-allocated a shared GPU");
    expect_caught(&ops_BROKEN_SHAPE, 0, "a job of n nodes did not get");
    printf("policy: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
