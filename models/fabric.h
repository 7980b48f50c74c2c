/* fabric: where nodes sit in the network, and what bandwidth a job's
 * placement gets.
 *
 * Topology. Nodes are numbered in order; NVLink domains group the GPUs of one
 * node (HGX: 8 GPUs), or of a rack of nodes (GB200 NVL72: 18 nodes x 4 GPUs).
 * Leaves group `nodes_per_leaf` nodes (a scalable unit: in a rail-optimized
 * fabric the rail switches of that group, in a fat tree one leaf switch);
 * pods group `leaves_per_pod` leaves under one spine block.
 *
 * Span. A job on one NVLink domain talks over NVLink; on one leaf, over its
 * NICs at the link rate; across leaves, through the leaf uplinks, which are
 * oversubscribed by `oversubscription` and shared by every job crossing them.
 *
 * Contention is flow-level: each cross-leaf job asks, on each leaf it uses,
 * for (its GPUs there) x (link rate); a leaf's uplink capacity is
 * (GPUs under the leaf) x (link rate) / oversubscription; rates are the
 * max-min fair allocation (progressive filling) over all leaves, recomputed
 * whenever a cross-leaf job starts or ends. A job's per-GPU network rate is
 * what it got divided by its GPUs, capped at the link rate.
 */
#ifndef FLEETSIM_MODELS_FABRIC_H
#define FLEETSIM_MODELS_FABRIC_H

#include <stddef.h>
#include <stdint.h>

enum fabric_kind { FABRIC_NONE, FABRIC_FAT_TREE, FABRIC_RAIL_OPTIMIZED };

struct fabric_spec {
    enum fabric_kind kind;
    int32_t nodes_per_leaf;
    int32_t leaves_per_pod;
    double oversubscription; /* >= 1 */
    double link_gbps;        /* per GPU (one NIC per GPU) */
};

enum span_level { SPAN_NVLINK = 0, SPAN_LEAF = 1, SPAN_SPINE = 2 };

const char *fabric_kind_name(enum fabric_kind k);
int fabric_kind_parse(const char *name, enum fabric_kind *k);
const char *span_level_name(enum span_level s);

/* One cross-leaf job's demand on the leaves it uses. */
struct fabric_flow {
    uint32_t first; /* into the leaf-share arrays below */
    uint32_t count;
    double rate_gbps; /* result: the job's total allocated rate */
    double share;     /* result: that rate over the job's demand, in [0, 1] */
    /* result: the leaf whose filling froze the flow (it is full there, and
     * no flow on it got a larger share), or FABRIC_NO_LEAF if the flow got
     * its whole demand */
    uint32_t bottleneck;
};

#define FABRIC_NO_LEAF UINT32_MAX

/* Max-min fair shares. flows[i] uses leaves leaf[first..first+count) with
 * demands demand[first..] (Gbps); capacity[l] is leaf l's uplink capacity.
 * Fills flows[i].rate_gbps: the largest rate vector such that no leaf is
 * over capacity and no flow gets more than its demand, where a flow's
 * allocation on each of its leaves is the same fraction of its demand there
 * (a job's traffic is spread over its GPUs evenly); also each flow's share
 * and bottleneck. Returns 0, or -1 if memory ran out. */
int fabric_max_min(struct fabric_flow *flows, size_t n_flows, const uint32_t *leaf, const double *demand,
                   const double *capacity, size_t n_leaves);

#endif
