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
        for (uint32_t i = 0; i < view->n_nodes; i++)
            if (view->nodes[i].total_slots > p->max_slots)
                p->max_slots = view->nodes[i].total_slots;
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

    /* Spread: most free first (counting sort on the free count, stable). */
    int32_t m = p->max_slots;
    memset(p->bucket_start, 0, ((size_t)m + 2) * sizeof *p->bucket_start);
    for (uint32_t k = 0; k < view->n_nodes_with_free; k++) {
        int32_t f = placement_free(p, view, view->nodes_with_free[k]);
        if (f > 0)
            p->bucket_start[m - f + 1]++;
    }
    for (int32_t b = 1; b <= m + 1; b++)
        p->bucket_start[b] += p->bucket_start[b - 1];
    for (uint32_t k = 0; k < view->n_nodes_with_free; k++) {
        uint32_t node = view->nodes_with_free[k];
        int32_t f = placement_free(p, view, node);
        if (f > 0)
            p->sorted[p->bucket_start[m - f]++] = node;
    }
    int32_t need = slots;
    for (uint32_t k = 0; need > 0; k++) {
        uint32_t node = p->sorted[k];
        int32_t f = placement_free(p, view, node);
        int32_t use = f < need ? f : need;
        if (take(p, out, node, use) != 0)
            return -1;
        need -= use;
        (*count)++;
    }
    return 0;
}
