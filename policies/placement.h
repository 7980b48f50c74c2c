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
 */
#ifndef FLEETSIM_POLICIES_PLACEMENT_H
#define FLEETSIM_POLICIES_PLACEMENT_H

#include <stdint.h>

#include "policies/policy.h"

enum placement_level { PLACEMENT_DOMAIN = 0, PLACEMENT_LEAF = 1, PLACEMENT_POD = 2, PLACEMENT_ANY = 3 };

struct placement {
    int32_t *taken;     /* per node, slots taken this pass (n_nodes entries) */
    uint32_t *touched;  /* nodes with taken != 0 */
    uint32_t n_touched;
    int64_t taken_total;
    uint32_t n_nodes;
    uint32_t *bucket_start; /* counting sort by free slots */
    uint32_t *sorted;
    uint32_t cap_sorted;
    int32_t max_slots; /* largest node, for the bucket range */
    int64_t *group_free; /* per group id (< n_nodes), zero between calls */
    uint32_t *groups;
    unsigned levels;     /* bit per placement_level worth trying on this view */
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

#endif
