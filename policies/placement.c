#include "policies/placement.h"

#include <stdlib.h>
#include <string.h>

void placement_init(struct placement *p)
{
    memset(p, 0, sizeof *p);
}

void placement_release(struct placement *p)
{
    if (!p)
        return;
    free(p->taken);
    free(p->touched);
    free(p->bucket_start);
    free(p->sorted);
    free(p->group_free);
    free(p->groups);
    memset(p, 0, sizeof *p);
}

int placement_begin(struct placement *p, const struct cluster_view *view)
{
    for (uint32_t i = 0; i < p->n_touched; i++)
        if (p->touched[i] < p->n_nodes)
            p->taken[p->touched[i]] = 0;
    p->n_touched = 0;
    p->taken_total = 0;
    if (view->n_nodes != p->n_nodes) {
        free(p->taken);
        free(p->touched);
        p->taken = calloc(view->n_nodes ? view->n_nodes : 1, sizeof *p->taken);
        p->touched = malloc((view->n_nodes ? view->n_nodes : 1) * sizeof *p->touched);
        p->n_nodes = view->n_nodes;
        p->max_slots = 0;
        if (!p->taken || !p->touched) {
            p->n_nodes = 0;
            return -1;
        }
        free(p->group_free);
        free(p->groups);
        p->group_free = calloc(view->n_nodes ? view->n_nodes : 1, sizeof *p->group_free);
        p->groups = malloc((view->n_nodes ? view->n_nodes : 1) * sizeof *p->groups);
        if (!p->group_free || !p->groups)
            return -1;
        /* Levels worth trying: only those where a group spans several nodes.
         * The topology of a view's nodes does not change during a run. */
        p->levels = 0;
        for (uint32_t i = 0; i < view->n_nodes; i++) {
            const struct policy_node *nd = &view->nodes[i];
            if (nd->total_slots > p->max_slots)
                p->max_slots = nd->total_slots;
            if (nd->nvlink_domain >= 0 && (uint32_t)nd->nvlink_domain != i)
                p->levels |= 1u << PLACEMENT_DOMAIN;
            if (nd->leaf >= 0)
                p->levels |= 1u << PLACEMENT_LEAF;
            if (nd->pod >= 0)
                p->levels |= 1u << PLACEMENT_POD;
        }
        free(p->bucket_start);
        p->bucket_start = malloc(((size_t)p->max_slots + 2) * sizeof *p->bucket_start);
        if (!p->bucket_start)
            return -1;
    }
    if (view->n_nodes_with_free > p->cap_sorted) {
        uint32_t *sorted = realloc(p->sorted, view->n_nodes_with_free * sizeof *sorted);
        if (!sorted)
            return -1;
        p->sorted = sorted;
        p->cap_sorted = view->n_nodes_with_free;
    }
    return 0;
}

int32_t placement_free(const struct placement *p, const struct cluster_view *view, uint32_t node)
{
    const struct policy_node *nd = &view->nodes[node];
    if (nd->state != POLICY_NODE_UP)
        return 0;
    return nd->free_slots - p->taken[node];
}

static int take(struct placement *p, struct policy_decisions *out, uint32_t node, int32_t slots)
{
    if (out->n_allocs >= out->cap_allocs)
        return -1;
    out->allocs[out->n_allocs++] = (struct policy_alloc){(int32_t)node, slots};
    if (p->taken[node] == 0)
        p->touched[p->n_touched++] = node;
    p->taken[node] += slots;
    p->taken_total += slots;
    return 0;
}

static int32_t group_of(const struct policy_node *nd, uint32_t node, enum placement_level level)
{
    switch (level) {
    case PLACEMENT_DOMAIN:
        return nd->nvlink_domain >= 0 ? nd->nvlink_domain : (int32_t)node;
    case PLACEMENT_LEAF:
        return nd->leaf;
    case PLACEMENT_POD:
        return nd->pod;
    case PLACEMENT_ANY:
        break;
    }
    return 0;
}

/* The group at `level` with the fewest free slots that still holds `slots`
 * (lowest id on ties), or -1. */
static int32_t best_group(struct placement *p, const struct cluster_view *view, enum placement_level level,
                          int32_t slots)
{
    uint32_t n_groups = 0;
    for (uint32_t k = 0; k < view->n_nodes_with_free; k++) {
        uint32_t node = view->nodes_with_free[k];
        int32_t g = group_of(&view->nodes[node], node, level);
        int32_t f = placement_free(p, view, node);
        if (g < 0 || (uint32_t)g >= p->n_nodes || f <= 0)
            continue;
        if (p->group_free[g] == 0)
            p->groups[n_groups++] = (uint32_t)g;
        p->group_free[g] += f;
    }
    int32_t best = -1;
    int64_t best_free = INT64_MAX;
    for (uint32_t i = 0; i < n_groups; i++) {
        uint32_t g = p->groups[i];
        int64_t f = p->group_free[g];
        if (f >= slots && (f < best_free || (f == best_free && (int32_t)g < best))) {
            best = (int32_t)g;
            best_free = f;
        }
        p->group_free[g] = 0; /* reset for the next call */
    }
    return best;
}

/* Takes up to `need` slots from the nodes of one group (level, group), or
 * of every node (PLACEMENT_ANY), most free first (a stable counting sort on
 * the free count), so the job uses as few nodes as it can. */
static int take_from(struct placement *p, const struct cluster_view *view, enum placement_level level,
                     int32_t group, int32_t *need, struct policy_decisions *out, uint32_t *count)
{
    int32_t m = p->max_slots;
    memset(p->bucket_start, 0, ((size_t)m + 2) * sizeof *p->bucket_start);
    for (uint32_t k = 0; k < view->n_nodes_with_free; k++) {
        uint32_t node = view->nodes_with_free[k];
        int32_t f = placement_free(p, view, node);
        if (f > 0 && (level == PLACEMENT_ANY || group_of(&view->nodes[node], node, level) == group))
            p->bucket_start[m - f + 1]++;
    }
    for (int32_t b = 1; b <= m + 1; b++)
        p->bucket_start[b] += p->bucket_start[b - 1];
    uint32_t n = 0;
    for (uint32_t k = 0; k < view->n_nodes_with_free; k++) {
        uint32_t node = view->nodes_with_free[k];
        int32_t f = placement_free(p, view, node);
        if (f > 0 && (level == PLACEMENT_ANY || group_of(&view->nodes[node], node, level) == group)) {
            p->sorted[p->bucket_start[m - f]++] = node;
            n++;
        }
    }
    for (uint32_t k = 0; *need > 0 && k < n; k++) {
        uint32_t node = p->sorted[k];
        int32_t f = placement_free(p, view, node);
        int32_t use = f < *need ? f : *need;
        if (take(p, out, node, use) != 0)
            return -1;
        *need -= use;
        (*count)++;
    }
    return 0;
}

struct leaf_free {
    int64_t free;
    int32_t leaf;
};

static int leaf_free_cmp(const void *pa, const void *pb)
{
    const struct leaf_free *a = pa, *b = pb;
    if (a->free != b->free)
        return a->free > b->free ? -1 : 1;
    return a->leaf < b->leaf ? -1 : a->leaf > b->leaf;
}

/* Places `slots` within a group. A pod, or the whole cluster, is filled
 * leaf by leaf, the leaves with the most free slots first, so a job that
 * must cross leaves crosses as few as it can. */
static int spread(struct placement *p, const struct cluster_view *view, enum placement_level level, int32_t group,
                  int32_t slots, struct policy_decisions *out, uint32_t *count)
{
    int32_t need = slots;
    if ((level == PLACEMENT_POD || level == PLACEMENT_ANY) && (p->levels & (1u << PLACEMENT_LEAF))) {
        uint32_t n_leaves = 0;
        for (uint32_t k = 0; k < view->n_nodes_with_free; k++) {
            uint32_t node = view->nodes_with_free[k];
            const struct policy_node *nd = &view->nodes[node];
            int32_t f = placement_free(p, view, node);
            if (f <= 0 || nd->leaf < 0 || (uint32_t)nd->leaf >= p->n_nodes ||
                (level == PLACEMENT_POD && nd->pod != group))
                continue;
            if (p->group_free[nd->leaf] == 0)
                p->groups[n_leaves++] = (uint32_t)nd->leaf;
            p->group_free[nd->leaf] += f;
        }
        struct leaf_free *order = malloc((n_leaves + 1) * sizeof *order);
        if (!order)
            return -1;
        for (uint32_t i = 0; i < n_leaves; i++) {
            order[i] = (struct leaf_free){p->group_free[p->groups[i]], (int32_t)p->groups[i]};
            p->group_free[p->groups[i]] = 0;
        }
        qsort(order, n_leaves, sizeof *order, leaf_free_cmp);
        int rc = 0;
        for (uint32_t i = 0; need > 0 && i < n_leaves && rc == 0; i++)
            rc = take_from(p, view, PLACEMENT_LEAF, order[i].leaf, &need, out, count);
        free(order);
        if (rc != 0)
            return -1;
    }
    if (need > 0 && take_from(p, view, level, group, &need, out, count) != 0)
        return -1;
    return need > 0 ? 1 : 0;
}

int placement_pack(struct placement *p, const struct cluster_view *view, int32_t slots,
                   struct policy_decisions *out, uint32_t *first, uint32_t *count)
{
    *first = out->n_allocs;
    *count = 0;
    if (slots <= 0)
        return 1;

    if (slots <= p->max_slots) {
        /* Best fit on a single node. */
        uint32_t best = UINT32_MAX;
        int32_t best_free = INT32_MAX;
        for (uint32_t k = 0; k < view->n_nodes_with_free; k++) {
            uint32_t node = view->nodes_with_free[k];
            int32_t f = placement_free(p, view, node);
            if (f >= slots && (f < best_free || (f == best_free && node < best))) {
                best = node;
                best_free = f;
            }
        }
        if (best != UINT32_MAX) {
            if (take(p, out, best, slots) != 0)
                return -1;
            *count = 1;
            return 0;
        }
    }
    if (view->free_slots - p->taken_total < slots)
        return 1;
    if (p->max_slots == 1) {
        /* One-slot nodes (HPC logs as processors): every free node is as good. */
        int32_t need = slots;
        for (uint32_t k = 0; need > 0 && k < view->n_nodes_with_free; k++) {
            uint32_t node = view->nodes_with_free[k];
            if (placement_free(p, view, node) == 1) {
                if (take(p, out, node, 1) != 0)
                    return -1;
                need--;
                (*count)++;
            }
        }
        return 0;
    }

    /* Several nodes: the tightest group that holds the job (an NVLink domain
     * of several nodes, else a leaf, else a pod), else anywhere. */
    static const enum placement_level levels[] = {PLACEMENT_DOMAIN, PLACEMENT_LEAF, PLACEMENT_POD};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        if (!(p->levels & (1u << levels[l])))
            continue;
        int32_t g = best_group(p, view, levels[l], slots);
        if (g >= 0)
            return spread(p, view, levels[l], g, slots, out, count);
    }
    return spread(p, view, PLACEMENT_ANY, -1, slots, out, count);
}
