/* contention: the fabric's contention model during a simulation. It owns
 * the leaves' uplink capacities and the flows of the running jobs that
 * cross leaves, and turns them into fair shares (models/fabric.h has the
 * model and the max-min solver).
 *
 * The simulation host tells it when a cross-leaf job starts
 * (contention_add) and when it stops for any reason: end, limit, failure,
 * preemption (contention_remove). At the end of an instant in which any did,
 * contention_update recomputes the shares of the jobs whose share may have
 * changed, and hands each its new share; an instant without such a change
 * costs nothing.
 *
 * Which jobs may have changed: a leaf asked for no more than its uplinks
 * carry never limits anyone, so only "hot" leaves couple jobs. A job's share
 * can change only if it uses a leaf whose flows changed, or shares a hot
 * leaf with such a job, transitively: the connected component of the
 * changed leaves through hot leaves. Only that component is solved, and
 * only over its hot leaves.
 */
#ifndef FLEETSIM_MODELS_CONTENTION_H
#define FLEETSIM_MODELS_CONTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "models/cluster.h"
#include "models/fabric.h"
#include "policies/policy.h"

/* One cross-leaf job: the leaves it uses and its demand on each (Gbps). */
struct contention_flow {
    uint32_t job;
    uint32_t n_leaves;
    uint32_t *leaf;
    double *demand;
};

struct contention {
    const struct cluster *c;
    uint32_t n_leaves;
    double *leaf_capacity; /* uplink capacity (Gbps) */
    double *leaf_demand;   /* what the flows ask of each leaf */
    uint8_t *leaf_dirty;   /* flows changed since the last update */
    uint8_t *leaf_is_hot;  /* asked for more than its uplinks carry */
    uint32_t *leaf_local;  /* scratch: a leaf's number in one max-min, or UINT32_MAX */
    int dirty;             /* some leaf is */
    uint32_t n_hot;        /* leaves asked for more than they carry */
    /* the flows, in the order the solver sees them (a removed flow's place
     * takes the last one) */
    struct contention_flow *flows;
    uint32_t n_flows, cap_flows;
    uint32_t *flow_of_job; /* per job: position in flows, or UINT32_MAX */
    size_t n_jobs;
    uint32_t *dirty_leaves; /* the leaves marked in leaf_dirty */
    uint32_t n_dirty;
    /* scratch of an update, kept between updates */
    uint8_t *in;            /* per flow position: in the component */
    uint32_t cap_in;
    uint32_t *member;
    uint32_t cap_member;
    struct fabric_flow *solve_flows;
    uint32_t *solve_leaf;
    double *solve_demand, *solve_capacity;
    uint32_t cap_solve_flows, cap_solve_pairs;
    /* what the updates cost: max-min runs, and flows solved in them */
    uint64_t runs, flows_solved;
};

/* For cluster c (its fabric and leaves; borrowed) and jobs numbered
 * 0..n_jobs-1. Returns 0, or -1 if memory ran out. */
int contention_init(struct contention *ct, const struct cluster *c, size_t n_jobs);
void contention_release(struct contention *ct);
/* Job `job` started across leaves on allocs[0..n) (nodes of the cluster).
 * Returns 0, or -1 if memory ran out. */
int contention_add(struct contention *ct, uint32_t job, const struct policy_alloc *allocs, uint32_t n);
/* Job `job` stopped; nothing if it was not a flow. */
void contention_remove(struct contention *ct, uint32_t job);

/* Receives a job's new share: the fraction (0, 1] of its demand it gets on
 * each of its hot leaves (1: its network is not the bottleneck). Returns 0,
 * or non-zero to stop the update (it is returned). */
typedef int (*contention_share_fn)(void *ctx, uint32_t job, double share);
/* Solves the component of the leaves changed since the last update and
 * calls `share` for each of its jobs, in flow order. Returns 0 (nothing to
 * do included), -1 if memory ran out, or what `share` returned. */
int contention_update(struct contention *ct, contention_share_fn share, void *ctx);

#endif
