/* placement: choosing the nodes and slot counts for a job the policy starts.
 *
 * A pass may start several jobs, each taking slots the next one must not see.
 * `struct placement` keeps what this pass has taken as a per-node delta
 * against the view, touching only the nodes it used, so a pass costs what it
 * places, not the size of the cluster.
 *
 * placement_pack(): if one node can hold the whole job, the fullest such node
 * (best fit, lowest index on ties). Otherwise the tightest group that can
 * hold it, best fit again: one NVLink domain of several nodes (GB200 NVL72),
 * else one leaf, else one pod; within the group (or the whole cluster when
 * none holds it) the nodes with the most free slots first, in the view's
 * nodes_with_free order within equal counts. So a job lands in the fewest
 * NVLink domains, leaves and nodes the free slots allow. Slots are pooled: a
 * job larger than a node spans several.
 *
 * placement_place() applies the instance's strategy (placement_parse names):
 *   pack       placement_pack(), the default.
 *   first-fit  the lowest-index node that holds the job, else the
 *              lowest-index nodes in turn; blind to topology.
 *   best-fit   the fullest node that holds the job, else the fullest nodes
 *              first: fills fragments, blind to topology.
 *   spread     the emptiest node that holds the job, else the emptiest nodes
 *              first: spreads load and heat, leaves fewer whole nodes.
 *   gavel      heterogeneity-aware (Gavel's idea, Narayanan et al., OSDI'20):
 *              the node type with the best speed for the job's class
 *              (view.type_speed) among those with enough free slots, packed
 *              within it; else pack anywhere. Without node types, pack.
 * Every strategy is gang-safe: it places all of a job's slots or none (it
 * checks the pooled free slots first and never leaves a partial placement).
 *
 * GPU-model constraints and fractions (policy.h ABI 2): a job with a
 * type_mask sees only the nodes of its types, under every strategy (gavel
 * picks among them). A fractional job (milli > 0) first joins the shared
 * GPU that it fills best (the least left after it; lowest node, then GPU, on
 * ties), on an up node of its types, counting what this pass has taken;
 * else it opens a free GPU: the node is the strategy's choice for one slot,
 * the GPU the lowest index that the node does not share yet.
 *
 * Node shapes (policy.h ABI 3): a job with nodes = n > 0 gets n distinct
 * nodes with slots / n on each, chosen among the nodes that have that many
 * free in the strategy's order: first-fit by index, spread the emptiest,
 * pack, best-fit and gavel the fullest (pack and gavel within the tightest
 * NVLink domain, leaf or pod that has n such nodes; gavel on the fastest
 * node type that has them). A one-node job never spans nodes.
 *
 * The index (below) caches the topology, as `levels` does: it is rebuilt
 * when the node count changes, and assumes a host keeps each node's NVLink
 * domain, leaf and pod for the life of an instance.
 *
 * Preemption frees slots within a pass: placement_give_back() returns a
 * running job's slots (up nodes only), including on nodes the view lists as
 * full, so the STARTs after a PREEMPT in the same pass can use them.
 */
#ifndef FLEETSIM_POLICIES_PLACEMENT_H
#define FLEETSIM_POLICIES_PLACEMENT_H

#include <stdint.h>

#include "policies/policy.h"

enum placement_level { PLACEMENT_DOMAIN = 0, PLACEMENT_LEAF = 1, PLACEMENT_POD = 2, PLACEMENT_ANY = 3 };

enum placement_strategy {
    PLACEMENT_PACK = 0,
    PLACEMENT_FIRST_FIT,
    PLACEMENT_BEST_FIT,
    PLACEMENT_SPREAD,
    PLACEMENT_GAVEL
};

struct placement_slot {
    int32_t free;
    uint32_t node;
};

struct placement {
    int32_t *taken;     /* per node, slots taken this pass (n_nodes entries); < 0 when released */
    uint32_t *touched;  /* nodes whose taken changed this pass */
    uint8_t *is_touched;
    uint32_t n_touched;
    /* nodes released this pass that the view lists as full (not in
     * nodes_with_free): candidates after the view's list */
    uint32_t *extra;
    uint8_t *is_extra;
    uint32_t n_extra;
    enum placement_strategy strategy;
    int32_t type_filter; /* gavel: only nodes of this type count as free; -1 = all */
    struct placement_slot *slots_scratch; /* 2 x n_nodes entries: candidates to sort, the sort's scratch */
    int64_t taken_total;
    uint32_t n_nodes;
    uint32_t *bucket_start; /* counting sort by free slots */
    uint32_t *sorted;
    uint32_t cap_sorted;
    int32_t max_slots; /* largest node, for the bucket range */
    int64_t *group_free; /* per group id (< n_nodes), zero between calls */
    uint32_t *groups;
    unsigned levels;     /* bit per placement_level worth trying on this view */
    uint64_t job_types;  /* the type_mask of the job being placed; 0 = any node */
    /* per node, 1 = off limits to the next placements (EASY keeps a shaped
     * head's nodes from jobs that would outlast its shadow); NULL = none.
     * The caller sets and clears it. */
    const uint8_t *avoid;
    /* Nodes by free slots, so that a single-node choice costs a few
     * bitmap words rather than a scan of every candidate (a preemptive
     * pass over a deep queue starts a thousand jobs): bit i of bucket f
     * says node i has f slots free this pass. Built at a pass's first
     * single-node choice on a view of many nodes, kept up by every take
     * and give-back, used only when no filter (types, avoid) applies. */
    uint64_t *idx_bits;    /* idx_buckets x idx_words */
    uint64_t *idx_summary; /* idx_buckets x idx_swords: bit w = word w of the bucket is not zero */
    int32_t *idx_free;     /* per node, its bucket while indexed, else -1 */
    uint32_t *idx_nodes;   /* the nodes indexed this pass, to clear */
    uint32_t idx_n, idx_words, idx_swords;
    int32_t idx_buckets;   /* max_slots + 1; 0 = no index for this view */
    int idx_off;           /* 1: always scan (tests compare the two) */
    uint64_t idx_scanned;  /* nodes this pass's scans looked at before the index: a pass that places a job or two scans */
    /* With the index, per topology level (NVLink domain, leaf, pod): each
     * group's free slots (idx_gsum, by group id), its member nodes by index
     * (idx_members[idx_mstart[g] .. idx_mstart[g + 1])) and the group ids in
     * use (idx_gids), so that choosing a group and taking from it cost the
     * groups and the group's nodes rather than every candidate; and each
     * indexed node's free slots and place in the candidate order (ties among
     * nodes go by it, as a scan's do). */
    int64_t *idx_gsum[3];
    uint32_t *idx_mstart[3], *idx_members[3], *idx_gids[3];
    uint32_t idx_ngids[3];
    int32_t *idx_group[3]; /* per node, its group at each level (-1: none), so a reset needs no view */
    int idx_overflow;      /* a node has more free than the buckets hold: scan for the rest of the pass */
    int32_t *idx_raw;      /* per node: free slots while indexed, else -1 */
    uint32_t *idx_pos;     /* per indexed node: its place among the candidates */
    const struct cluster_view *idx_view; /* the pass's view while the index lives, else NULL */
    /* The pass's candidates as a bitmap by node index (bit i: node i is in
     * the view's list or an extra), set at its first single-node choice
     * without the index: a best fit read in index order stops at the first
     * node that fits exactly, where a scan of the list must see them all
     * (on nodes of one slot, any free node). cand_words words; cand_view is
     * the pass's view while the bits are set, else NULL. */
    uint64_t *cand_bits;
    uint32_t cand_words;
    const struct cluster_view *cand_view;
    /* shared GPUs this pass touched (joined, opened, given back): their
     * share in use as the pass left it */
    struct placement_share {
        int32_t node, gpu, used_milli;
    } *shares;
    uint32_t n_shares, cap_shares;
};

void placement_init(struct placement *p);
void placement_release(struct placement *p);
/* Prepares for a pass over view (resets the deltas). Returns 0 or -1 (memory). */
int placement_begin(struct placement *p, const struct cluster_view *view);
int32_t placement_free(const struct placement *p, const struct cluster_view *view, uint32_t node);
/* Appends allocations for `slots` to out->allocs and records them as taken.
 * Returns 0, 1 if the free slots do not suffice, -1 if out is full or memory
 * ran out. *first / *count describe the appended allocations. */
int placement_pack(struct placement *p, const struct cluster_view *view, int32_t slots,
                   struct policy_decisions *out, uint32_t *first, uint32_t *count);
/* Places job with the instance's strategy; returns as placement_pack(). */
int placement_place(struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                    struct policy_decisions *out, uint32_t *first, uint32_t *count);
/* Gives back `slots` on node (a running job preempted this pass). Returns 0
 * or -1 (memory). */
int placement_give_back(struct placement *p, const struct cluster_view *view, uint32_t node, int32_t slots);
/* Gives back one allocation of a running job preempted this pass: its
 * slots, or a fractional job's share of its GPU (the GPU's last share gives
 * the GPU back as a free slot, as the hosts do). Returns 0 or -1 (memory). */
int placement_give_back_alloc(struct placement *p, const struct cluster_view *view, const struct policy_alloc *al);
/* Whether fractional job can join a shared GPU now (taking no free slot). */
int placement_can_join(const struct placement *p, const struct cluster_view *view, const struct policy_job *job);
/* The free slots this pass on the nodes job may use (its GPU-model types). */
int64_t placement_pool_for(struct placement *p, const struct cluster_view *view, const struct policy_job *job);
/* Free slots this pass (view's free, minus taken, plus released), up nodes only. */
int64_t placement_pool(const struct placement *p, const struct cluster_view *view);

int placement_parse(const char *name, size_t len, enum placement_strategy *s);
const char *placement_name(enum placement_strategy s);

#endif
