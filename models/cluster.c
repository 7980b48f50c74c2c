#include "models/cluster.h"

#include <stdlib.h>
#include <string.h>

int cluster_init_homogeneous(struct cluster *c, int64_t n_nodes, int64_t slots_per_node, struct err *err)
{
    memset(c, 0, sizeof *c);
    if (n_nodes < 1 || n_nodes > CLUSTER_MAX_NODES)
        return err_set(err, NULL, 0, 0, "node count %lld out of range (1 to %d)", (long long)n_nodes,
                       CLUSTER_MAX_NODES);
    if (slots_per_node < 1 || slots_per_node > CLUSTER_MAX_NODE_SLOTS)
        return err_set(err, NULL, 0, 0, "slots per node %lld out of range (1 to %d)",
                       (long long)slots_per_node, CLUSTER_MAX_NODE_SLOTS);
    c->nodes = malloc((size_t)n_nodes * sizeof *c->nodes);
    if (!c->nodes)
        return err_set(err, NULL, 0, 0, "out of memory for %lld nodes", (long long)n_nodes);
    for (int64_t i = 0; i < n_nodes; i++)
        c->nodes[i] = (struct cluster_node){0, (int32_t)slots_per_node, -1, -1, -1};
    c->n_nodes = (uint32_t)n_nodes;
    c->total_slots = n_nodes * slots_per_node;
    c->max_node_slots = (int32_t)slots_per_node;
    return 0;
}

void cluster_release(struct cluster *c)
{
    if (!c)
        return;
    free(c->nodes);
    memset(c, 0, sizeof *c);
}

enum cluster_shape_source cluster_shape_from_meta(const struct workload_meta *meta, int32_t largest_job,
                                                  int64_t *nodes, int64_t *slots_per_node)
{
    int64_t mn = meta->max_nodes, mp = meta->max_procs;
    if (mn > 0 && mp > 0) {
        if (mp % mn == 0) {
            *nodes = mn;
            *slots_per_node = mp / mn;
        } else {
            *nodes = mp;
            *slots_per_node = 1;
        }
        return CLUSTER_SHAPE_HEADER;
    }
    if (mp > 0 || mn > 0) {
        *nodes = mp > 0 ? mp : mn;
        *slots_per_node = 1;
        return CLUSTER_SHAPE_HEADER;
    }
    if (largest_job > 0) {
        *nodes = largest_job;
        *slots_per_node = 1;
        return CLUSTER_SHAPE_LARGEST_JOB;
    }
    return CLUSTER_SHAPE_NONE;
}
