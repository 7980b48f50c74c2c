#include "models/contention.h"

#include <stdlib.h>
#include <string.h>

#include "models/fabric.h"
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
    ct->leaf_local = malloc(nl * sizeof *ct->leaf_local);
    ct->flow_of_job = malloc((n_jobs ? n_jobs : 1) * sizeof *ct->flow_of_job);
    if (!ct->leaf_capacity || !ct->leaf_demand || !ct->leaf_dirty || !ct->leaf_local || !ct->flow_of_job)
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
    free(ct->flows);
    free(ct->flow_of_job);
    free(ct->leaf_capacity);
    free(ct->leaf_demand);
    free(ct->leaf_dirty);
    free(ct->leaf_local);
    memset(ct, 0, sizeof *ct);
}

/* A leaf asked for no more than its uplinks carry never limits anyone: only
 * "hot" leaves couple jobs' shares. */
static int leaf_hot(const struct contention *ct, uint32_t l)
{
    return ct->leaf_demand[l] > ct->leaf_capacity[l] * (1 + 1e-12);
}

/* Adds (sign 1) or removes (sign -1) a flow's demand, marking its leaves. */
static void leaves_change(struct contention *ct, const struct contention_flow *f, double sign)
{
    for (uint32_t k = 0; k < f->n_leaves; k++) {
        ct->leaf_dirty[f->leaf[k]] = 1;
        ct->leaf_demand[f->leaf[k]] += sign * f->demand[k];
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

int contention_update(struct contention *ct, contention_share_fn share_fn, void *ctx)
{
    if (!ct->dirty)
        return 0;
    ct->dirty = 0;
    int rc = 0;
    uint32_t *member = malloc((ct->n_flows + 1) * sizeof *member);
    uint8_t *in = calloc(ct->n_flows + 1, 1);
    if (!member || !in) {
        rc = -1;
        goto done;
    }
    /* seeds: flows on a dirty leaf; then grow through hot leaves */
    uint32_t n_members = 0, pairs = 0;
    for (int grew = 1; grew;) {
        grew = 0;
        for (uint32_t f = 0; f < ct->n_flows; f++) {
            if (in[f])
                continue;
            const struct contention_flow *p = &ct->flows[f];
            int touches = 0;
            for (uint32_t k = 0; k < p->n_leaves && !touches; k++)
                touches = ct->leaf_dirty[p->leaf[k]];
            if (!touches)
                continue;
            in[f] = 1;
            member[n_members++] = f;
            for (uint32_t k = 0; k < p->n_leaves; k++) {
                if (!leaf_hot(ct, p->leaf[k]))
                    continue;
                pairs++;
                if (!ct->leaf_dirty[p->leaf[k]]) {
                    ct->leaf_dirty[p->leaf[k]] = 1;
                    grew = 1;
                }
            }
        }
    }
    memset(ct->leaf_dirty, 0, ct->n_leaves);
    if (!n_members)
        goto done;
    ct->runs++;
    ct->flows_solved += n_members;
    /* number the hot leaves the members use 0..m-1 */
    struct fabric_flow *flows = malloc(n_members * sizeof *flows);
    uint32_t *leaf = malloc((pairs + 1) * sizeof *leaf);
    double *demand = malloc((pairs + 1) * sizeof *demand);
    double *capacity = malloc((pairs + 1) * sizeof *capacity);
    if (!flows || !leaf || !demand || !capacity) {
        rc = -1;
    } else {
        uint32_t np = 0, n_local = 0;
        for (uint32_t i = 0; i < n_members; i++) {
            const struct contention_flow *p = &ct->flows[member[i]];
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
            const struct contention_flow *p = &ct->flows[member[i]];
            for (uint32_t k = 0; k < p->n_leaves; k++)
                ct->leaf_local[p->leaf[k]] = UINT32_MAX;
        }
        if (fabric_max_min(flows, n_members, leaf, demand, capacity, n_local) != 0)
            rc = -1;
        for (uint32_t i = 0; i < n_members && !rc; i++) {
            /* x of the demand on its hot leaves, the same x everywhere */
            double hot = 0;
            for (uint32_t k = 0; k < flows[i].count; k++)
                hot += demand[flows[i].first + k];
            double share = hot > 0 ? flows[i].rate_gbps / hot : 1.0;
            rc = share_fn(ctx, ct->flows[member[i]].job, share > 1 ? 1 : share);
        }
    }
    free(flows);
    free(leaf);
    free(demand);
    free(capacity);
done:
    free(member);
    free(in);
    return rc;
}
