#include "models/contention.h"

#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"

#define NO_FLOW UINT32_MAX

int contention_init(struct contention *ct, const struct cluster *c, size_t n_jobs)
{
    memset(ct, 0, sizeof *ct);
    ct->c = c;
    ct->n_jobs = n_jobs;
    ct->n_leaves = c->n_leaves > 0 ? (uint32_t)c->n_leaves : 0;
    size_t nl = ct->n_leaves ? ct->n_leaves : 1;
    ct->leaf_capacity = calloc(nl, sizeof *ct->leaf_capacity);
    ct->leaf_demand = calloc(nl, sizeof *ct->leaf_demand);
    ct->leaf_dirty = calloc(nl, 1);
    ct->leaf_is_hot = calloc(nl, 1);
    ct->leaf_local = malloc(nl * sizeof *ct->leaf_local);
    ct->dirty_leaves = malloc(nl * sizeof *ct->dirty_leaves);
    ct->flow_of_job = malloc((n_jobs ? n_jobs : 1) * sizeof *ct->flow_of_job);
    if (!ct->leaf_capacity || !ct->leaf_demand || !ct->leaf_dirty || !ct->leaf_is_hot || !ct->leaf_local ||
        !ct->dirty_leaves || !ct->flow_of_job)
        return -1;
    for (uint32_t l = 0; l < ct->n_leaves; l++)
        ct->leaf_local[l] = UINT32_MAX;
    for (size_t j = 0; j < n_jobs; j++)
        ct->flow_of_job[j] = NO_FLOW;
    double over = c->fabric.oversubscription > 0 ? c->fabric.oversubscription : 1;
    for (uint32_t n = 0; n < c->n_nodes; n++)
        ct->leaf_capacity[c->nodes[n].leaf] += (double)c->nodes[n].slots * c->fabric.link_gbps / over;
    return 0;
}

void contention_release(struct contention *ct)
{
    for (uint32_t f = 0; f < ct->n_flows; f++) {
        free(ct->flows[f].leaf);
        free(ct->flows[f].demand);
    }
    free(ct->dirty_leaves);
    free(ct->flows);
    free(ct->flow_of_job);
    free(ct->leaf_capacity);
    free(ct->leaf_demand);
    free(ct->leaf_dirty);
    free(ct->leaf_is_hot);
    free(ct->leaf_local);
    free(ct->in);
    free(ct->member);
    free(ct->solve_flows);
    free(ct->solve_leaf);
    free(ct->solve_demand);
    free(ct->solve_capacity);
    memset(ct, 0, sizeof *ct);
}

/* A leaf asked for no more than its uplinks carry never limits anyone: only
 * "hot" leaves couple jobs' shares. Kept per leaf as demands change
 * (leaf_is_hot), since the update asks it of every pair it reads. */
static int leaf_hot_now(const struct contention *ct, uint32_t l)
{
    return ct->leaf_demand[l] > ct->leaf_capacity[l] * (1 + 1e-12);
}

static int leaf_hot(const struct contention *ct, uint32_t l)
{
    return ct->leaf_is_hot[l];
}

static void mark_dirty(struct contention *ct, uint32_t l)
{
    if (!ct->leaf_dirty[l]) {
        ct->leaf_dirty[l] = 1;
        ct->dirty_leaves[ct->n_dirty++] = l;
    }
}

/* Adds (sign 1) or removes (sign -1) a flow's demand, marking its leaves
 * and keeping the count of hot ones. */
static void leaves_change(struct contention *ct, const struct contention_flow *f, double sign)
{
    for (uint32_t k = 0; k < f->n_leaves; k++) {
        uint32_t l = f->leaf[k];
        mark_dirty(ct, l);
        ct->leaf_demand[l] += sign * f->demand[k];
        uint8_t hot = (uint8_t)leaf_hot_now(ct, l);
        ct->n_hot += (uint32_t)hot - (uint32_t)ct->leaf_is_hot[l];
        ct->leaf_is_hot[l] = hot;
    }
    ct->dirty = 1;
}

int contention_add(struct contention *ct, uint32_t job, const struct policy_alloc *allocs, uint32_t n)
{
    if (buffers_grow((void **)&ct->flows, &ct->cap_flows, ct->n_flows + 1, sizeof *ct->flows) != 0)
        return -1;
    struct contention_flow *f = &ct->flows[ct->n_flows];
    f->job = job;
    f->n_leaves = 0;
    f->leaf = malloc(n * sizeof *f->leaf);
    f->demand = malloc(n * sizeof *f->demand);
    if (!f->leaf || !f->demand) {
        free(f->leaf);
        free(f->demand);
        return -1;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = (uint32_t)ct->c->nodes[allocs[k].node].leaf, q = 0;
        while (q < f->n_leaves && f->leaf[q] != l)
            q++;
        if (q == f->n_leaves) {
            f->leaf[q] = l;
            f->demand[q] = 0;
            f->n_leaves++;
        }
        f->demand[q] += (double)allocs[k].slots * ct->c->fabric.link_gbps;
    }
    ct->flow_of_job[job] = ct->n_flows++;
    leaves_change(ct, f, 1);
    return 0;
}

void contention_remove(struct contention *ct, uint32_t job)
{
    uint32_t pos = ct->flow_of_job[job];
    if (pos == NO_FLOW)
        return;
    struct contention_flow *f = &ct->flows[pos];
    leaves_change(ct, f, -1);
    free(f->leaf);
    free(f->demand);
    *f = ct->flows[--ct->n_flows];
    ct->flow_of_job[f->job] = pos;
    ct->flow_of_job[job] = NO_FLOW;
}

/* ---- the component to solve ---- */

/* Fills member[0..) with the flows of the component of the marked leaves
 * through hot leaves; *pairs counts their (flow, hot leaf) pairs. The order
 * is that of repeated sweeps over the flows by position, each taking every
 * flow that touches a marked leaf and marking the hot leaves of those it
 * takes, until a sweep takes none: it decides the solver's input order, and
 * so how ties break and in which order ends move. A sweep stops looking at
 * a flow at its first marked leaf, so the sweeps cost less than walking
 * each marked leaf's flows would (measured on the 12,500-node bench: its
 * flows use ~8 leaves each). */
static int find_component(struct contention *ct, uint32_t *n_members, uint32_t *pairs)
{
    *n_members = *pairs = 0;
    if (buffers_grow((void **)&ct->in, &ct->cap_in, ct->n_flows + 1, 1) != 0 ||
        buffers_grow((void **)&ct->member, &ct->cap_member, ct->n_flows + 1, sizeof *ct->member) != 0)
        return -1;
    memset(ct->in, 0, ct->n_flows + 1);
    for (int grew = 1; grew;) {
        grew = 0;
        for (uint32_t f = 0; f < ct->n_flows; f++) {
            if (ct->in[f])
                continue;
            const struct contention_flow *p = &ct->flows[f];
            int touches = 0;
            for (uint32_t k = 0; k < p->n_leaves && !touches; k++)
                touches = ct->leaf_dirty[p->leaf[k]];
            if (!touches)
                continue;
            ct->in[f] = 1;
            ct->member[(*n_members)++] = f;
            for (uint32_t k = 0; k < p->n_leaves; k++) {
                if (!leaf_hot(ct, p->leaf[k]))
                    continue;
                (*pairs)++;
                if (!ct->leaf_dirty[p->leaf[k]]) {
                    mark_dirty(ct, p->leaf[k]);
                    grew = 1;
                }
            }
        }
    }
    return 0;
}

static int solve_room(struct contention *ct, uint32_t n_members, uint32_t pairs)
{
    if (buffers_grow((void **)&ct->solve_flows, &ct->cap_solve_flows, n_members + 1, sizeof *ct->solve_flows) != 0)
        return -1;
    uint32_t cap = ct->cap_solve_pairs;
    if (buffers_grow((void **)&ct->solve_leaf, &cap, pairs + 1, sizeof *ct->solve_leaf) != 0)
        return -1;
    cap = ct->cap_solve_pairs;
    if (buffers_grow((void **)&ct->solve_demand, &cap, pairs + 1, sizeof *ct->solve_demand) != 0)
        return -1;
    cap = ct->cap_solve_pairs;
    if (buffers_grow((void **)&ct->solve_capacity, &cap, pairs + 1, sizeof *ct->solve_capacity) != 0)
        return -1;
    ct->cap_solve_pairs = cap;
    return 0;
}

int contention_update(struct contention *ct, contention_share_fn share_fn, void *ctx)
{
    if (!ct->dirty)
        return 0;
    ct->dirty = 0;
    uint32_t n_members, pairs;
    int rc = find_component(ct, &n_members, &pairs);
    for (uint32_t i = 0; i < ct->n_dirty; i++)
        ct->leaf_dirty[ct->dirty_leaves[i]] = 0;
    ct->n_dirty = 0;
    if (rc != 0 || !n_members)
        return rc;
    ct->runs++;
    ct->flows_solved += n_members;
    if (ct->n_hot == 0) {
        /* no leaf limits anyone: every member gets all it asks, as the
         * solver would say over no hot leaf (fabrics without
         * oversubscription are always here) */
        for (uint32_t i = 0; i < n_members && !rc; i++)
            rc = share_fn(ctx, ct->flows[ct->member[i]].job, 1.0);
        return rc;
    }
    if (solve_room(ct, n_members, pairs) != 0)
        return -1;
    struct fabric_flow *flows = ct->solve_flows;
    uint32_t *leaf = ct->solve_leaf;
    double *demand = ct->solve_demand, *capacity = ct->solve_capacity;
    /* number the hot leaves the members use 0..m-1 */
    uint32_t np = 0, n_local = 0;
    for (uint32_t i = 0; i < n_members; i++) {
        const struct contention_flow *p = &ct->flows[ct->member[i]];
        flows[i] = (struct fabric_flow){np, 0, 0};
        for (uint32_t k = 0; k < p->n_leaves; k++) {
            uint32_t g = p->leaf[k];
            if (!leaf_hot(ct, g))
                continue;
            if (ct->leaf_local[g] == UINT32_MAX) {
                ct->leaf_local[g] = n_local;
                capacity[n_local++] = ct->leaf_capacity[g];
            }
            leaf[np] = ct->leaf_local[g];
            demand[np++] = p->demand[k];
            flows[i].count++;
        }
    }
    for (uint32_t i = 0; i < n_members; i++) {
        const struct contention_flow *p = &ct->flows[ct->member[i]];
        for (uint32_t k = 0; k < p->n_leaves; k++)
            ct->leaf_local[p->leaf[k]] = UINT32_MAX;
    }
    if (fabric_max_min(flows, n_members, leaf, demand, capacity, n_local) != 0)
        return -1;
    for (uint32_t i = 0; i < n_members && !rc; i++) {
        /* x of the demand on its hot leaves, the same x everywhere */
        double hot = 0;
        for (uint32_t k = 0; k < flows[i].count; k++)
            hot += demand[flows[i].first + k];
        double share = hot > 0 ? flows[i].rate_gbps / hot : 1.0;
        rc = share_fn(ctx, ct->flows[ct->member[i]].job, share > 1 ? 1 : share);
    }
    return rc;
}
