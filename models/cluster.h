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

#include "models/fabric.h"
#include "models/node_types.h"
#include "models/workload.h"
#include "sim/err.h"

struct cluster_node {
    int32_t type;
    int32_t slots;
    int32_t nvlink_domain; /* first node of the domain; the node itself when it is its own */
    int32_t leaf;          /* -1 = not modelled */
    int32_t pod;           /* -1 = not modelled */
    int32_t order;         /* purchase order that brings it, -1 = there from the start */
};

struct cluster {
    struct cluster_node *nodes;
    uint32_t n_nodes;
    int64_t total_slots;   /* over every node, ordered ones included */
    int32_t max_node_slots;
    int32_t n_leaves;      /* 0 without a fabric */
    struct fabric_spec fabric;
    const struct node_catalog *catalog; /* borrowed; NULL on a plain cluster */
    /* Node type names without a catalog (a machine list's GPU models, by
     * type index); owned. Empty on catalog and homogeneous clusters. */
    struct string_table type_names;
};

/* A group of identical nodes to lay out: the initial partitions, then the
 * purchase orders, in that order. */
struct cluster_group {
    int32_t type;  /* index into the catalog */
    int64_t nodes;
    int32_t order; /* -1 for the initial inventory */
};

/* Limits that keep slot arithmetic far from overflow. */
enum { CLUSTER_MAX_NODES = 10000000, CLUSTER_MAX_NODE_SLOTS = 4096 };

/* Where a trace's machine size came from. */
enum cluster_shape_source { CLUSTER_SHAPE_HEADER, CLUSTER_SHAPE_LARGEST_JOB, CLUSTER_SHAPE_NONE };

/* The machine a trace ran on, from its header: MaxNodes nodes of
 * MaxProcs / MaxNodes slots when that divides evenly, else MaxProcs nodes of
 * one slot (slots are pooled, so the two schedule alike); MaxNodes alone
 * means one slot each. Without a header, the largest job's size (the caller
 * warns). */
enum cluster_shape_source cluster_shape_from_meta(const struct workload_meta *meta, int32_t largest_job,
                                                  int64_t *nodes, int64_t *slots_per_node);

int cluster_init_homogeneous(struct cluster *c, int64_t n_nodes, int64_t slots_per_node, struct err *err);
/* Lays out groups of catalog types in order: nodes are numbered
 * consecutively; NVLink domains follow the type (a node, or a rack of
 * domain_gpus / gpus nodes); leaves take nodes_per_leaf consecutive nodes and
 * pods leaves_per_pod leaves (when the fabric is not FABRIC_NONE). */
int cluster_init_groups(struct cluster *c, const struct cluster_group *groups, size_t n_groups,
                        const struct node_catalog *catalog, const struct fabric_spec *fabric, struct err *err);
void cluster_release(struct cluster *c);
/* The name of node type t (the catalog's, else type_names'), or NULL. */
const char *cluster_type_name(const struct cluster *c, int32_t t);
/* The node types a GPU-model constraint allows: a '|'-separated list of
 * names ("V100M16|V100M32"), each matched against cluster_type_name without
 * regard to case. Bit t of *mask for type t; 0 when no type matches.
 * Returns 0, or -1 with err set when the cluster has more than 64 types. */
int cluster_types_matching(const struct cluster *c, const char *models, uint64_t *mask, struct err *err);
/* Slots on the nodes of the types in mask (0 = every node). */
int64_t cluster_slots_of_types(const struct cluster *c, uint64_t mask);

#endif
