#include "models/cluster.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
        c->nodes[i] = (struct cluster_node){0, (int32_t)slots_per_node, (int32_t)i, -1, -1, -1};
    c->n_nodes = (uint32_t)n_nodes;
    c->total_slots = n_nodes * slots_per_node;
    c->max_node_slots = (int32_t)slots_per_node;
    return 0;
}

int cluster_init_groups(struct cluster *c, const struct cluster_group *groups, size_t n_groups,
                        const struct node_catalog *catalog, const struct fabric_spec *fabric, struct err *err)
{
    memset(c, 0, sizeof *c);
    int64_t total_nodes = 0;
    for (size_t g = 0; g < n_groups; g++) {
        if (groups[g].type < 0 || (size_t)groups[g].type >= catalog->n)
            return err_set(err, NULL, 0, 0, "node type %d not in the catalog", groups[g].type);
        if (groups[g].nodes < 0 || groups[g].nodes > CLUSTER_MAX_NODES)
            return err_set(err, NULL, 0, 0, "node count %lld out of range", (long long)groups[g].nodes);
        total_nodes += groups[g].nodes;
    }
    if (total_nodes < 1 || total_nodes > CLUSTER_MAX_NODES)
        return err_set(err, NULL, 0, 0, "cluster of %lld nodes out of range (1 to %d)", (long long)total_nodes,
                       CLUSTER_MAX_NODES);
    c->nodes = malloc((size_t)total_nodes * sizeof *c->nodes);
    if (!c->nodes)
        return err_set(err, NULL, 0, 0, "out of memory for %lld nodes", (long long)total_nodes);
    c->fabric = *fabric;
    c->catalog = catalog;
    int with_fabric = fabric->kind != FABRIC_NONE && fabric->nodes_per_leaf > 0;
    uint32_t n = 0;
    for (size_t g = 0; g < n_groups; g++) {
        const struct node_type *t = &catalog->types[groups[g].type];
        if (t->gpus < 1 || t->gpus > CLUSTER_MAX_NODE_SLOTS)
            return err_set(err, NULL, 0, 0, "node type '%s' has %d GPUs", t->name, t->gpus);
        int32_t per_domain = t->nvlink_domain_gpus > t->gpus ? t->nvlink_domain_gpus / t->gpus : 1;
        uint32_t group_first = n;
        for (int64_t i = 0; i < groups[g].nodes; i++, n++) {
            struct cluster_node *nd = &c->nodes[n];
            nd->type = groups[g].type;
            nd->slots = t->gpus;
            nd->nvlink_domain = (int32_t)(group_first + (uint32_t)(i / per_domain * per_domain));
            nd->leaf = with_fabric ? (int32_t)(n / (uint32_t)fabric->nodes_per_leaf) : -1;
            nd->pod = with_fabric && fabric->leaves_per_pod > 0 ? nd->leaf / fabric->leaves_per_pod : -1;
            nd->order = groups[g].order;
            c->total_slots += t->gpus;
            if (t->gpus > c->max_node_slots)
                c->max_node_slots = t->gpus;
        }
    }
    c->n_nodes = n;
    c->n_leaves = with_fabric ? (int32_t)((n + (uint32_t)fabric->nodes_per_leaf - 1) / (uint32_t)fabric->nodes_per_leaf) : 0;
    return 0;
}

void cluster_release(struct cluster *c)
{
    if (!c)
        return;
    free(c->nodes);
    string_table_release(&c->type_names);
    memset(c, 0, sizeof *c);
}

const char *cluster_type_name(const struct cluster *c, int32_t t)
{
    if (c->catalog)
        return t >= 0 && (size_t)t < c->catalog->n ? c->catalog->types[t].name : NULL;
    return string_table_get(&c->type_names, t);
}

int cluster_types_matching(const struct cluster *c, const char *models, uint64_t *mask, struct err *err)
{
    int32_t n_types = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].type >= n_types)
            n_types = c->nodes[i].type + 1;
    *mask = 0;
    for (int32_t t = 0; t < n_types; t++) {
        const char *name = cluster_type_name(c, t);
        if (!name || !*name)
            continue;
        size_t len = strlen(name);
        for (const char *p = models; *p;) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            if (n == len && strncasecmp(p, name, n) == 0) {
                if (t >= 64)
                    return err_set(err, NULL, 0, 0,
                                   "GPU-model constraint '%s' names node type '%s', but constraints reach only the "
                                   "first 64 node types",
                                   models, name);
                *mask |= UINT64_C(1) << t;
            }
            p += n + (bar != NULL);
        }
    }
    return 0;
}

int64_t cluster_slots_of_types(const struct cluster *c, uint64_t mask)
{
    if (mask == 0)
        return c->total_slots;
    int64_t sum = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        int32_t t = c->nodes[i].type;
        if (t >= 0 && t < 64 && (mask >> t & 1u))
            sum += c->nodes[i].slots;
    }
    return sum;
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
