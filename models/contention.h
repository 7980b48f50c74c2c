/* contention: the fabric's contention model during a simulation. It owns
 * the leaves' uplink capacities and the flows of the running jobs that
 * cross leaves, and keeps their max-min fair shares (models/fabric.h has
 * the model and the max-min solver).
 *
 * The simulation host tells it when a cross-leaf job starts
 * (contention_add) and when it stops for any reason: end, limit, failure,
 * preemption (contention_remove). At the end of an instant in which any did,
 * contention_update brings the shares up to date and hands each job whose
 * share moved its new one; an instant without such a change costs nothing.
 *
 * How: the shares are kept with each flow's bottleneck (the leaf that is
 * full and on which no flow has a larger share). A share vector is the
 * max-min fair one if and only if no leaf is over capacity and every flow
 * short of its demand has such a bottleneck (Bertsekas & Gallager, Data
 * Networks, 6.5.2; here with the shares as fractions of each flow's demand),
 * and that vector is unique. So an update re-solves only a region: the
 * flows that started, with every other flow held at its share (the leaves'
 * capacities less what the others use). It then checks the condition where
 * the region changed something: a region flow whose bottleneck carries an
 * outside flow with a larger share, an outside flow whose bottleneck is a
 * leaf the region changed and is no longer full, or no longer its largest.
 * Those flows join the region, which is solved again, until nothing is
 * found. What the condition holds for is the fair allocation itself (to
 * the tolerance of the checks: 1e-11 of a share, 1e-11 of a leaf's
 * capacity), so the shares are those a solve over every flow gives,
 * without solving every flow: on the
 * 12,500-node bench fleet a change moves ~3 of ~350 shares, and the region
 * stays near that size. A region that grows past half the flows, or past
 * 16 rounds, is given up for one solve over all flows.
 */
#ifndef FLEETSIM_MODELS_CONTENTION_H
#define FLEETSIM_MODELS_CONTENTION_H

#include <stddef.h>
#include <stdint.h>

#include "models/cluster.h"
#include "models/fabric.h"
#include "policies/policy.h"

/* One cross-leaf job: the leaves it uses and its demand on each (Gbps),
 * its share and the leaf that holds it there (FABRIC_NO_LEAF with a share
 * of 1). */
struct contention_flow {
    uint32_t job;
    uint32_t n_leaves;
    uint32_t *leaf;
    double *demand;
    uint32_t *at; /* its place in each of those leaves' member lists */
    double share;
    uint32_t bottleneck;
    uint32_t region; /* its place in an update's region, or UINT32_MAX */
};

/* A flow on a leaf, with a copy of what the checks read of it, so that a
 * leaf's flows are read in one sweep (the flows' own records are scattered
 * over memory as jobs come and go). */
struct contention_member {
    uint32_t job;
    uint32_t region;
    double demand; /* on this leaf */
    double share;
    uint32_t bottleneck;
};

struct contention_leaf {
    struct contention_member *m;
    uint32_t n, cap;
    uint32_t held; /* how many of them it holds (is their bottleneck) */
};

/* A set of leaves: a mark per leaf and the marked ones in a list, so that
 * it empties in the time it filled. */
struct leaf_set {
    uint8_t *in;
    uint32_t *list, n;
};

struct contention {
    const struct cluster *c;
    uint32_t n_leaves;
    double *leaf_capacity;          /* uplink capacity (Gbps) */
    struct contention_leaf *on;     /* per leaf: the flows on it */
    struct leaf_set dirty;          /* flows started or stopped there since the last update */
    /* the flows (a removed flow's place takes the last one) */
    struct contention_flow *flows;
    uint32_t n_flows, cap_flows;
    uint32_t *flow_of_job; /* per job: position in flows, or UINT32_MAX */
    /* jobs started since the last update */
    uint32_t *started;
    uint32_t n_started, cap_started;
    /* one update's region: its jobs, their shares and bottlenecks as solved */
    uint32_t *region;
    double *region_share;
    uint32_t *region_bottleneck;
    uint32_t n_region, cap_region;
    /* scratch: the leaves a check reads, the leaves an update's solves
     * must include, and one region solve's input */
    struct leaf_set checked, forced;
    /* one region solve: the leaves its flows use (leaf_local numbers them,
     * UINT32_MAX elsewhere) and what the region asks of each; those it can
     * fill (kept) are the solver's leaves */
    uint32_t *leaf_local, *used_leaf, *used_kept, *kept_leaf;
    double *used_asked;
    struct fabric_flow *solve_flows;
    uint32_t *solve_leaf;
    double *solve_demand, *solve_capacity;
    uint32_t cap_solve_flows, cap_solve_pairs;
    /* what the updates cost: max-min solves, and flows solved in them */
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
 * each of its leaves (1: its network is not the bottleneck). Returns 0, or
 * non-zero to stop the update (it is returned). */
typedef int (*contention_share_fn)(void *ctx, uint32_t job, double share);
/* Brings the shares up to date after the starts and stops since the last
 * update, and calls `share` for each job that started since or whose share
 * moved, in the order the region took them. Returns 0 (nothing to do
 * included), -1 if memory ran out, or what `share` returned; after a
 * non-zero return the shares are not all fair and not all told, and the
 * model is only fit for contention_release (the simulation stops). */
int contention_update(struct contention *ct, contention_share_fn share, void *ctx);

#endif
