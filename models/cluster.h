/* cluster: the machine a simulation runs on: nodes, each with a number of
 * slots (GPUs, or processors for HPC logs), a type and a place in the fabric.
 *
 * The foundation builds homogeneous clusters (N nodes x K slots); node types,
 * NVLink domains and fabric positions are fields already so that richer models
 * fill them in without changing the policy seam. The cluster owns its nodes.
 */
#ifndef FLEETSIM_MODELS_CLUSTER_H
#define FLEETSIM_MODELS_CLUSTER_H

#include <stdint.h>

#include "sim/err.h"

struct cluster_node {
    int32_t type;
    int32_t slots;
    int32_t nvlink_domain; /* -1 = none */
    int32_t leaf;          /* -1 = not modelled */
    int32_t pod;           /* -1 = not modelled */
};

struct cluster {
    struct cluster_node *nodes;
    uint32_t n_nodes;
    int64_t total_slots;
    int32_t max_node_slots;
};

/* Limits that keep slot arithmetic far from overflow. */
enum { CLUSTER_MAX_NODES = 10000000, CLUSTER_MAX_NODE_SLOTS = 4096 };

int cluster_init_homogeneous(struct cluster *c, int64_t n_nodes, int64_t slots_per_node, struct err *err);
void cluster_release(struct cluster *c);

#endif
