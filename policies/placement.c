#include "policies/placement.h"

#include <stdlib.h>
#include <string.h>

#include "policies/merge_sort.h"

static const char *const strategy_names[] = {
    [PLACEMENT_PACK] = "pack",
    [PLACEMENT_FIRST_FIT] = "first-fit",
    [PLACEMENT_BEST_FIT] = "best-fit",
    [PLACEMENT_SPREAD] = "spread",
    [PLACEMENT_GAVEL] = "gavel",
};

int placement_parse(const char *name, size_t len, enum placement_strategy *s)
{
    for (size_t k = 0; k < sizeof strategy_names / sizeof *strategy_names; k++) {
        if (strlen(strategy_names[k]) == len && strncmp(strategy_names[k], name, len) == 0) {
            *s = (enum placement_strategy)k;
            return 0;
        }
    }
    return -1;
}

const char *placement_name(enum placement_strategy s)
{
    return strategy_names[s];
}

void placement_init(struct placement *p)
{
    memset(p, 0, sizeof *p);
    p->type_filter = -1;
}

/* Candidates: the view's nodes with free slots, then the nodes released
 * this pass that the view lists as full. */
static uint32_t n_cand(const struct placement *p, const struct cluster_view *view)
{
    return view->n_nodes_with_free + p->n_extra;
}

static uint32_t cand(const struct placement *p, const struct cluster_view *view, uint32_t k)
{
    return k < view->n_nodes_with_free ? view->nodes_with_free[k] : p->extra[k - view->n_nodes_with_free];
}

static void idx_free_all(struct placement *p)
{
    free(p->idx_bits);
    free(p->idx_summary);
    free(p->idx_free);
    free(p->idx_nodes);
    free(p->idx_raw);
    free(p->idx_pos);
    p->idx_bits = p->idx_summary = NULL;
    p->idx_free = p->idx_raw = NULL;
    p->idx_nodes = p->idx_pos = NULL;
    for (int l = 0; l < 3; l++) {
        free(p->idx_gsum[l]);
        free(p->idx_mstart[l]);
        free(p->idx_members[l]);
        free(p->idx_gids[l]);
        free(p->idx_group[l]);
        p->idx_group[l] = NULL;
        p->idx_gsum[l] = NULL;
        p->idx_mstart[l] = p->idx_members[l] = p->idx_gids[l] = NULL;
        p->idx_ngids[l] = 0;
    }
    p->idx_buckets = 0;
    p->idx_n = 0;
    p->idx_view = NULL;
}

void placement_release(struct placement *p)
{
    if (!p)
        return;
    free(p->taken);
    free(p->touched);
    free(p->is_touched);
    free(p->extra);
    free(p->is_extra);
    free(p->slots_scratch);
    free(p->bucket_start);
    free(p->sorted);
    free(p->group_free);
    free(p->groups);
    free(p->shares);
    free(p->cand_bits);
    idx_free_all(p);
    memset(p, 0, sizeof *p);
    p->type_filter = -1;
}

/* The orders a strategy ranks nodes in: by index, fullest or emptiest first. */
enum slot_order { BY_INDEX, FULLEST_FIRST, EMPTIEST_FIRST };

/* ---- the index of nodes by free slots ---- */

/* Views smaller than this scan faster than they index. */
enum { INDEX_MIN_NODES = 128, INDEX_MAX_BUCKETS = 257, INDEX_AFTER_SCANS = 2 };

static void idx_clear_bit(struct placement *p, uint32_t node)
{
    int32_t b = p->idx_free[node];
    if (b < 0)
        return;
    uint32_t w = node / 64;
    uint64_t *word = &p->idx_bits[(size_t)b * p->idx_words + w];
    *word &= ~(UINT64_C(1) << (node % 64));
    if (*word == 0)
        p->idx_summary[(size_t)b * p->idx_swords + w / 64] &= ~(UINT64_C(1) << (w % 64));
    p->idx_free[node] = -1;
}

static int32_t group_of(const struct policy_node *nd, uint32_t node, enum placement_level level);

/* Adds delta free slots to node's group at each topology level (from the
 * groups filed with the topology: the pass's view may be gone by the reset). */
static inline void idx_add_to_groups(struct placement *p, uint32_t node, int64_t delta)
{
    if (!p->levels)
        return; /* no topology (a flat cluster): no group to keep */
    for (int l = 0; l < 3; l++) {
        if (!(p->levels & (1u << l)))
            continue;
        int32_t g = p->idx_group[l][node];
        if (g >= 0)
            p->idx_gsum[l][g] += delta;
    }
}

/* Files node under the slots it has free now (bucket 0: none, which no
 * choice looks at; a node stays filed, and listed once, until the reset),
 * and keeps its groups' sums. */
static void idx_update(struct placement *p, uint32_t node)
{
    const struct policy_node *nd = &p->idx_view->nodes[node];
    int32_t raw = nd->state == POLICY_NODE_UP ? nd->free_slots - p->taken[node] : 0;
    if (raw < 0)
        raw = 0;
    int32_t old_raw = p->idx_raw[node] < 0 ? 0 : p->idx_raw[node];
    if (raw != old_raw)
        idx_add_to_groups(p, node, (int64_t)raw - old_raw);
    int32_t f = raw;
    if (f >= p->idx_buckets) {
        /* more free than the largest node had when the index was sized (a
         * host's node grew): the buckets cannot order it; scan from here on */
        p->idx_overflow = 1;
        f = p->idx_buckets - 1;
    }
    if (p->idx_raw[node] < 0) {
        p->idx_nodes[p->idx_n++] = node;
    } else if (p->idx_free[node] == f) {
        p->idx_raw[node] = raw;
        return;
    } else {
        idx_clear_bit(p, node);
    }
    p->idx_raw[node] = raw;
    uint32_t w = node / 64;
    p->idx_bits[(size_t)f * p->idx_words + w] |= UINT64_C(1) << (node % 64);
    p->idx_summary[(size_t)f * p->idx_swords + w / 64] |= UINT64_C(1) << (w % 64);
    p->idx_free[node] = f;
}

/* Empties the index (only the nodes it holds) and marks it dead. */
static void idx_reset(struct placement *p)
{
    for (uint32_t i = 0; i < p->idx_n; i++) {
        uint32_t node = p->idx_nodes[i];
        idx_clear_bit(p, node);
        if (p->idx_raw[node] > 0)
            idx_add_to_groups(p, node, -(int64_t)p->idx_raw[node]);
        p->idx_raw[node] = -1;
    }
    p->idx_n = 0;
    p->idx_view = NULL;
}

/* Each level's groups: member nodes by ascending index, and the ids in
 * use, from the topology (which stays put for an instance's life). */
static int idx_topology(struct placement *p, const struct cluster_view *view)
{
    uint32_t n = p->n_nodes;
    for (int l = 0; l < 3; l++) {
        if (!(p->levels & (1u << l)))
            continue;
        p->idx_gsum[l] = calloc(n, sizeof *p->idx_gsum[l]);
        p->idx_mstart[l] = calloc((size_t)n + 2, sizeof *p->idx_mstart[l]);
        p->idx_members[l] = malloc(n * sizeof *p->idx_members[l]);
        p->idx_gids[l] = malloc(n * sizeof *p->idx_gids[l]);
        p->idx_group[l] = malloc(n * sizeof *p->idx_group[l]);
        if (!p->idx_gsum[l] || !p->idx_mstart[l] || !p->idx_members[l] || !p->idx_gids[l] || !p->idx_group[l])
            return -1;
        uint32_t *start = p->idx_mstart[l];
        for (uint32_t i = 0; i < n; i++) {
            int32_t g = group_of(&view->nodes[i], i, (enum placement_level)l);
            p->idx_group[l][i] = g >= 0 && (uint32_t)g < n ? g : -1;
            if (g >= 0 && (uint32_t)g < n)
                start[g + 2]++;
        }
        p->idx_ngids[l] = 0;
        for (uint32_t g = 0; g < n; g++)
            if (start[g + 2] > 0)
                p->idx_gids[l][p->idx_ngids[l]++] = g;
        for (uint32_t g = 2; g < n + 2; g++)
            start[g] += start[g - 1];
        for (uint32_t i = 0; i < n; i++) {
            int32_t g = group_of(&view->nodes[i], i, (enum placement_level)l);
            if (g >= 0 && (uint32_t)g < n)
                p->idx_members[l][start[g + 1]++] = i;
        }
        /* start[g] .. start[g + 1] now spans group g */
    }
    return 0;
}

static uint32_t n_cand(const struct placement *p, const struct cluster_view *view);
static uint32_t cand(const struct placement *p, const struct cluster_view *view, uint32_t k);

/* The index for this pass, built on first use; 0, or -1 when this view
 * gets none (too small, too many buckets, or memory). */
static int idx_ready(struct placement *p, const struct cluster_view *view)
{
    if (p->idx_view == view)
        return 0;
    if (view->n_nodes < INDEX_MIN_NODES || p->max_slots + 1 > INDEX_MAX_BUCKETS || p->max_slots < 1)
        return -1;
    if (p->idx_buckets != p->max_slots + 1 || !p->idx_free) {
        idx_free_all(p);
        p->idx_buckets = p->max_slots + 1;
        p->idx_words = (p->n_nodes + 63) / 64;
        p->idx_swords = (p->idx_words + 63) / 64;
        p->idx_bits = calloc((size_t)p->idx_buckets * p->idx_words, sizeof *p->idx_bits);
        p->idx_summary = calloc((size_t)p->idx_buckets * p->idx_swords, sizeof *p->idx_summary);
        p->idx_free = malloc(p->n_nodes * sizeof *p->idx_free);
        p->idx_raw = malloc(p->n_nodes * sizeof *p->idx_raw);
        p->idx_nodes = malloc(p->n_nodes * sizeof *p->idx_nodes);
        p->idx_pos = calloc(p->n_nodes, sizeof *p->idx_pos);
        p->idx_n = 0;
        if (!p->idx_bits || !p->idx_summary || !p->idx_free || !p->idx_raw || !p->idx_nodes || !p->idx_pos ||
            idx_topology(p, view) != 0) {
            idx_free_all(p);
            return -1;
        }
        for (uint32_t i = 0; i < p->n_nodes; i++)
            p->idx_free[i] = p->idx_raw[i] = -1;
    }
    p->idx_view = view;
    for (uint32_t k = 0; k < n_cand(p, view); k++) {
        uint32_t node = cand(p, view, k);
        p->idx_pos[node] = k;
        idx_update(p, node);
    }
    return 0;
}

/* Whether the index serves this choice as it stands (built for this pass,
 * no filter, no node past its buckets): for the group choices, which never
 * build it. */
static int idx_live(const struct placement *p, const struct cluster_view *view)
{
    return p->idx_view == view && !p->idx_overflow && p->type_filter < 0 && !p->job_types && !p->avoid;
}

/* Whether this choice may use the index, building it when it is worth it:
 * no filter applies (the index files every up node), and the view is one
 * the index serves. A choice that scans instead adds the nodes it looked at
 * to idx_scanned. */
static int idx_usable(struct placement *p, const struct cluster_view *view)
{
    if (p->type_filter >= 0 || p->job_types || p->avoid || p->idx_off || p->idx_overflow)
        return 0;
    /* building costs a scan and then some: worth it once the pass's scans
     * have looked at the candidates twice (two choices' full scans, or many
     * best fits that stopped early) */
    if (p->idx_view != view && p->idx_scanned < (uint64_t)INDEX_AFTER_SCANS * n_cand(p, view))
        return 0;
    return idx_ready(p, view) == 0 && !p->idx_overflow;
}

static uint32_t idx_first(const struct placement *p, int32_t b);

/* The one node a single-node job of `slots` goes to, in mode's order (the
 * fullest or emptiest that holds it, else the lowest index; lowest index on
 * ties): what a scan of the candidates finds. UINT32_MAX when none holds it. */
static uint32_t idx_choose(const struct placement *p, int32_t slots, enum slot_order mode)
{
    uint32_t best = UINT32_MAX;
    if (slots < 1 || slots >= p->idx_buckets)
        return best;
    if (mode == FULLEST_FIRST) {
        for (int32_t b = slots; b < p->idx_buckets && best == UINT32_MAX; b++)
            best = idx_first(p, b);
    } else if (mode == EMPTIEST_FIRST) {
        for (int32_t b = p->idx_buckets - 1; b >= slots && best == UINT32_MAX; b--)
            best = idx_first(p, b);
    } else {
        for (int32_t b = slots; b < p->idx_buckets; b++) {
            uint32_t n = idx_first(p, b);
            if (n < best)
                best = n;
        }
    }
    return best;
}

/* The lowest-index node in bucket b, or UINT32_MAX. */
static uint32_t idx_first(const struct placement *p, int32_t b)
{
    const uint64_t *sum = &p->idx_summary[(size_t)b * p->idx_swords];
    for (uint32_t s = 0; s < p->idx_swords; s++) {
        if (!sum[s])
            continue;
        uint32_t w = s * 64 + (uint32_t)__builtin_ctzll(sum[s]);
        return w * 64 + (uint32_t)__builtin_ctzll(p->idx_bits[(size_t)b * p->idx_words + w]);
    }
    return UINT32_MAX;
}

int placement_begin(struct placement *p, const struct cluster_view *view)
{
    if (p->idx_view)
        idx_reset(p);
    if (p->cand_view) {
        memset(p->cand_bits, 0, p->cand_words * sizeof *p->cand_bits);
        p->cand_view = NULL;
    }
    p->idx_scanned = 0;
    p->idx_overflow = 0;
    /* locals: a store through taken or is_touched could be one to p as far
     * as the compiler knows, and a pass that started jobs touched many nodes */
    const uint32_t *touched = p->touched;
    int32_t *taken = p->taken;
    uint8_t *is_touched = p->is_touched;
    for (uint32_t i = 0, n = p->n_touched, nodes = p->n_nodes; i < n; i++) {
        if (touched[i] < nodes) {
            taken[touched[i]] = 0;
            is_touched[touched[i]] = 0;
        }
    }
    for (uint32_t i = 0; i < p->n_extra; i++)
        if (p->extra[i] < p->n_nodes)
            p->is_extra[p->extra[i]] = 0;
    p->n_touched = 0;
    p->n_extra = 0;
    p->taken_total = 0;
    p->type_filter = -1;
    p->job_types = 0;
    p->n_shares = 0;
    if (view->n_nodes != p->n_nodes) {
        size_t nn = view->n_nodes ? view->n_nodes : 1;
        free(p->taken);
        free(p->touched);
        free(p->is_touched);
        free(p->extra);
        free(p->is_extra);
        free(p->slots_scratch);
        free(p->sorted);
        free(p->cand_bits);
        p->cand_words = (uint32_t)((nn + 63) / 64);
        p->cand_bits = calloc(p->cand_words, sizeof *p->cand_bits);
        p->taken = calloc(nn, sizeof *p->taken);
        p->touched = malloc(nn * sizeof *p->touched);
        p->is_touched = calloc(nn, 1);
        p->extra = malloc(nn * sizeof *p->extra);
        p->is_extra = calloc(nn, 1);
        p->slots_scratch = malloc(2 * nn * sizeof *p->slots_scratch); /* and the sort's scratch */
        p->sorted = malloc(nn * sizeof *p->sorted);
        p->cap_sorted = (uint32_t)nn;
        p->n_nodes = view->n_nodes;
        p->max_slots = 0;
        p->idx_buckets = 0; /* the index is sized by the node count: rebuilt on use */
        free(p->idx_free);
        p->idx_free = NULL;
        if (!p->taken || !p->touched || !p->is_touched || !p->extra || !p->is_extra || !p->slots_scratch ||
            !p->sorted || !p->cand_bits) {
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
    return 0;
}

/* placement_free, inlined into the scans below (it is their inner loop's
 * whole body: a call per candidate cost more than the test itself). */
static inline int32_t free_of(const struct placement *p, const struct cluster_view *view, uint32_t node)
{
    const struct policy_node *nd = &view->nodes[node];
    if (nd->state != POLICY_NODE_UP)
        return 0;
    if (p->type_filter >= 0 && nd->type != p->type_filter)
        return 0;
    if (p->job_types && !(nd->type >= 0 && nd->type < 64 && (p->job_types >> nd->type & 1u)))
        return 0;
    if (p->avoid && p->avoid[node])
        return 0;
    return nd->free_slots - p->taken[node];
}

int32_t placement_free(const struct placement *p, const struct cluster_view *view, uint32_t node)
{
    return free_of(p, view, node);
}

int64_t placement_pool(const struct placement *p, const struct cluster_view *view)
{
    return view->free_slots - p->taken_total;
}

/* The free slots the job being placed may use: the pool, or with a
 * GPU-model constraint or nodes to avoid the free slots of the nodes left. */
static int64_t job_pool(const struct placement *p, const struct cluster_view *view)
{
    if (!p->job_types && !p->avoid)
        return placement_pool(p, view);
    int64_t sum = 0;
    for (uint32_t k = 0; k < n_cand(p, view); k++) {
        int32_t f = free_of(p, view, cand(p, view, k));
        if (f > 0)
            sum += f;
    }
    return sum;
}

static void touch(struct placement *p, uint32_t node)
{
    if (!p->is_touched[node]) {
        p->is_touched[node] = 1;
        p->touched[p->n_touched++] = node;
    }
}

static inline int take(struct placement *p, struct policy_decisions *out, uint32_t node, int32_t slots)
{
    uint32_t n = out->n_allocs;
    if (n >= out->cap_allocs)
        return -1;
    /* every read before the first store: a store through a pointer could be
     * one to p or out as far as the compiler knows (a take per node placed) */
    struct policy_alloc *al = &out->allocs[n];
    int32_t *taken = &p->taken[node];
    int indexed = p->idx_view != NULL;
    *al = (struct policy_alloc){(int32_t)node, slots, 0, 0};
    out->n_allocs = n + 1;
    touch(p, node);
    *taken += slots;
    p->taken_total += slots;
    if (indexed)
        idx_update(p, node);
    return 0;
}

int placement_give_back(struct placement *p, const struct cluster_view *view, uint32_t node, int32_t slots)
{
    if (node >= p->n_nodes || slots <= 0 || view->nodes[node].state != POLICY_NODE_UP)
        return 0; /* slots on a draining or down node free nothing usable */
    touch(p, node);
    p->taken[node] -= slots;
    p->taken_total -= slots;
    if (view->nodes[node].free_slots <= 0 && !p->is_extra[node]) {
        p->is_extra[node] = 1;
        p->extra[p->n_extra++] = node;
        if (p->idx_view)
            p->idx_pos[node] = view->n_nodes_with_free + p->n_extra - 1;
        if (p->cand_view)
            p->cand_bits[node / 64] |= UINT64_C(1) << (node % 64);
    }
    /* only nodes the scan sees: filed already (candidates), or extra now */
    if (p->idx_view && (p->idx_raw[node] >= 0 || p->is_extra[node]))
        idx_update(p, node);
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

/* The group at `level` that is tightest for a job, lowest id on ties, or
 * -1. Pooled (per = 0): the group with the fewest free slots that still has
 * `need`. Shaped (per > 0): the group with the fewest nodes of per free
 * slots or more that still has `need` of them. */
static int32_t tightest_group(struct placement *p, const struct cluster_view *view, enum placement_level level,
                              int32_t per, int64_t need)
{
    if (per == 0 && idx_live(p, view) && level < PLACEMENT_ANY) {
        /* the index keeps each group's sum: look at the groups, not the nodes */
        int32_t best = -1;
        int64_t best_free = INT64_MAX;
        for (uint32_t i = 0; i < p->idx_ngids[level]; i++) {
            uint32_t g = p->idx_gids[level][i];
            int64_t f = p->idx_gsum[level][g];
            if (f >= need && f < best_free) { /* ids ascend: the first of equal sums is the lowest */
                best = (int32_t)g;
                best_free = f;
            }
        }
        return best;
    }
    uint32_t n_groups = 0;
    for (uint32_t k = 0; k < n_cand(p, view); k++) {
        uint32_t node = cand(p, view, k);
        int32_t g = group_of(&view->nodes[node], node, level);
        int32_t f = free_of(p, view, node);
        if (g < 0 || (uint32_t)g >= p->n_nodes || f <= 0 || f < per)
            continue;
        if (p->group_free[g] == 0)
            p->groups[n_groups++] = (uint32_t)g;
        p->group_free[g] += per > 0 ? 1 : f;
    }
    int32_t best = -1;
    int64_t best_free = INT64_MAX;
    for (uint32_t i = 0; i < n_groups; i++) {
        uint32_t g = p->groups[i];
        int64_t f = p->group_free[g];
        if (f >= need && (f < best_free || (f == best_free && (int32_t)g < best))) {
            best = (int32_t)g;
            best_free = f;
        }
        p->group_free[g] = 0; /* reset for the next call */
    }
    return best;
}

/* Takes up to `need` slots from nodes[0..n) (candidates, in candidate
 * order), most free first (a stable counting sort on the free count), so the
 * job uses as few nodes as it can. */
static int take_most_free(struct placement *p, const struct cluster_view *view, const uint32_t *nodes, uint32_t n,
                          int32_t *need, struct policy_decisions *out, uint32_t *count)
{
    /* The nodes' sizes are fixed for an instance's life (the hosts keep
     * them so); a node that grew anyway widens the buckets rather than
     * overrun them. */
    for (uint32_t k = 0; k < n; k++) {
        int32_t f = free_of(p, view, nodes[k]);
        if (f > p->max_slots) {
            uint32_t *b = realloc(p->bucket_start, ((size_t)f + 2) * sizeof *b);
            if (!b)
                return -1;
            p->bucket_start = b;
            p->max_slots = f;
        }
    }
    int32_t m = p->max_slots;
    memset(p->bucket_start, 0, ((size_t)m + 2) * sizeof *p->bucket_start);
    for (uint32_t k = 0; k < n; k++) {
        int32_t f = free_of(p, view, nodes[k]);
        if (f > 0)
            p->bucket_start[m - f + 1]++;
    }
    for (int32_t b = 1; b <= m + 1; b++)
        p->bucket_start[b] += p->bucket_start[b - 1];
    uint32_t n_sorted = 0;
    for (uint32_t k = 0; k < n; k++) {
        int32_t f = free_of(p, view, nodes[k]);
        if (f > 0) {
            p->sorted[p->bucket_start[m - f]++] = nodes[k];
            n_sorted++;
        }
    }
    for (uint32_t k = 0; *need > 0 && k < n_sorted; k++) {
        uint32_t node = p->sorted[k];
        int32_t f = free_of(p, view, node);
        int32_t use = f < *need ? f : *need;
        if (take(p, out, node, use) != 0)
            return -1;
        *need -= use;
        (*count)++;
    }
    return 0;
}

/* take_most_free over the candidates of one group (level, group), or of
 * every node (PLACEMENT_ANY). */
static int take_from(struct placement *p, const struct cluster_view *view, enum placement_level level,
                     int32_t group, int32_t *need, struct policy_decisions *out, uint32_t *count)
{
    uint32_t n = 0;
    if (idx_live(p, view) && level < PLACEMENT_ANY &&
        group >= 0 && (uint32_t)group < p->n_nodes) {
        /* the group's members with free slots, in candidate order (a scan's
         * order, which breaks its ties): few nodes, an insertion sort */
        const uint32_t *m = p->idx_members[level];
        for (uint32_t k = p->idx_mstart[level][group]; k < p->idx_mstart[level][group + 1]; k++) {
            uint32_t node = m[k];
            if (p->idx_raw[node] <= 0)
                continue;
            uint32_t i = n++;
            while (i > 0 && p->idx_pos[p->groups[i - 1]] > p->idx_pos[node]) {
                p->groups[i] = p->groups[i - 1];
                i--;
            }
            p->groups[i] = node;
        }
        return take_most_free(p, view, p->groups, n, need, out, count);
    }
    for (uint32_t k = 0; k < n_cand(p, view); k++) {
        uint32_t node = cand(p, view, k);
        if (free_of(p, view, node) > 0 &&
            (level == PLACEMENT_ANY || group_of(&view->nodes[node], node, level) == group))
            p->groups[n++] = node;
    }
    return take_most_free(p, view, p->groups, n, need, out, count);
}

/* The sorts below are of total orders (ties broken by a node or leaf id),
 * so merge_sort.h gives what qsort gave, without a call per comparison
 * (spread's sorts were ~4% of the year-fleet bench). */
#define KEY_BEFORE(x, y) (*(x) < *(y))
MERGE_SORT_DEFINE(sort_keys, uint64_t, KEY_BEFORE)

struct leaf_free {
    int64_t free;
    int32_t leaf;
};

/* most free first, lowest leaf on ties */
#define LEAF_BEFORE(a, b) ((a)->free > (b)->free || ((a)->free == (b)->free && (a)->leaf < (b)->leaf))
MERGE_SORT_DEFINE(sort_leaves, struct leaf_free, LEAF_BEFORE)

/* Places `slots` within a group. A pod, or the whole cluster, is filled
 * leaf by leaf, the leaves with the most free slots first, so a job that
 * must cross leaves crosses as few as it can. */
static int spread(struct placement *p, const struct cluster_view *view, enum placement_level level, int32_t group,
                  int32_t slots, struct policy_decisions *out, uint32_t *count)
{
    int32_t need = slots;
    int indexed = idx_live(p, view);
    if (level == PLACEMENT_ANY && indexed && (p->levels & (1u << PLACEMENT_LEAF))) {
        /* The index keeps every leaf's sum: order the leaves from it, then
         * take each leaf's members (in candidate order) only while the job
         * still needs slots. What the scan below does, leaf for leaf. */
        uint32_t n_leaves = 0;
        struct leaf_free *order = malloc(2 * ((size_t)p->idx_ngids[PLACEMENT_LEAF] + 1) * sizeof *order);
        uint64_t *keys = malloc(2 * ((size_t)p->n_nodes + 1) * sizeof *keys);
        if (!order || !keys) {
            free(order);
            free(keys);
            return -1;
        }
        for (uint32_t i = 0; i < p->idx_ngids[PLACEMENT_LEAF]; i++) {
            uint32_t leaf = p->idx_gids[PLACEMENT_LEAF][i];
            if (p->idx_gsum[PLACEMENT_LEAF][leaf] > 0)
                order[n_leaves++] = (struct leaf_free){p->idx_gsum[PLACEMENT_LEAF][leaf], (int32_t)leaf};
        }
        sort_leaves(order, n_leaves, order + n_leaves);
        int rc = 0;
        const uint32_t *m = p->idx_members[PLACEMENT_LEAF];
        for (uint32_t i = 0; need > 0 && i < n_leaves && rc == 0; i++) {
            uint32_t n = 0, leaf = (uint32_t)order[i].leaf;
            for (uint32_t k = p->idx_mstart[PLACEMENT_LEAF][leaf]; k < p->idx_mstart[PLACEMENT_LEAF][leaf + 1]; k++)
                if (p->idx_raw[m[k]] > 0)
                    keys[n++] = (uint64_t)p->idx_pos[m[k]] << 32 | m[k];
            sort_keys(keys, n, keys + n);
            for (uint32_t k = 0; k < n; k++)
                p->groups[k] = (uint32_t)keys[k];
            rc = take_most_free(p, view, p->groups, n, &need, out, count);
        }
        free(order);
        free(keys);
        if (rc != 0)
            return -1;
    } else if ((level == PLACEMENT_POD || level == PLACEMENT_ANY) && (p->levels & (1u << PLACEMENT_LEAF))) {
        /* the candidates to look at, in candidate order: with the index, a
         * pod's own members with free slots (a few hundred, not every node) */
        uint32_t *list = NULL, n_list = 0;
        if (level == PLACEMENT_POD && indexed && group >= 0 && (uint32_t)group < p->n_nodes) {
            const uint32_t *m = p->idx_members[PLACEMENT_POD];
            uint32_t from = p->idx_mstart[PLACEMENT_POD][group], to = p->idx_mstart[PLACEMENT_POD][group + 1];
            uint64_t *keys = malloc(2 * ((size_t)(to - from) + 1) * sizeof *keys);
            list = malloc(((size_t)(to - from) + 1) * sizeof *list);
            if (!keys || !list) {
                free(keys);
                free(list);
                return -1;
            }
            for (uint32_t k = from; k < to; k++)
                if (p->idx_raw[m[k]] > 0)
                    keys[n_list++] = (uint64_t)p->idx_pos[m[k]] << 32 | m[k];
            sort_keys(keys, n_list, keys + n_list);
            for (uint32_t k = 0; k < n_list; k++)
                list[k] = (uint32_t)keys[k];
            free(keys);
        }
        uint32_t n_look = list ? n_list : n_cand(p, view);
        if (!list && !(list = malloc(((size_t)n_look + 1) * sizeof *list)))
            return -1;
        /* one sweep over the candidates: their leaves' sums, and the
         * candidates that count (free, in a leaf, in the pod), in order, in
         * list: on a busy fleet a few of 12,500, which the sweeps below read */
        uint32_t n_leaves = 0, n_free = 0;
        for (uint32_t k = 0; k < n_look; k++) {
            uint32_t node = k < n_list ? list[k] : cand(p, view, k);
            const struct policy_node *nd = &view->nodes[node];
            int32_t f = free_of(p, view, node);
            if (f <= 0 || nd->leaf < 0 || (uint32_t)nd->leaf >= p->n_nodes ||
                (level == PLACEMENT_POD && nd->pod != group))
                continue;
            list[n_free++] = node; /* n_free <= k: what list still holds is read after */
            if (p->group_free[nd->leaf] == 0)
                p->groups[n_leaves++] = (uint32_t)nd->leaf;
            p->group_free[nd->leaf] += f;
        }
        n_look = n_free;
        struct leaf_free *order = malloc(2 * ((size_t)n_leaves + 1) * sizeof *order);
        if (!order) {
            free(list);
            return -1;
        }
        for (uint32_t i = 0; i < n_leaves; i++) {
            order[i] = (struct leaf_free){p->group_free[p->groups[i]], (int32_t)p->groups[i]};
            p->group_free[p->groups[i]] = 0;
        }
        sort_leaves(order, n_leaves, order + n_leaves);
        /* The candidates of each leaf, in candidate order, grouped by the
         * leaf's rank (a counting sort: one sweep over the candidates, not
         * one per leaf). group_free holds rank + 1 meanwhile. */
        uint32_t *end = calloc(n_leaves + 1, sizeof *end);
        if (!end) {
            free(order);
            free(list);
            return -1;
        }
        for (uint32_t i = 0; i < n_leaves; i++)
            p->group_free[order[i].leaf] = (int64_t)i + 1;
        for (uint32_t k = 0; k < n_look; k++)
            end[p->group_free[view->nodes[list[k]].leaf]]++;
        for (uint32_t i = 1; i <= n_leaves; i++)
            end[i] += end[i - 1];
        for (uint32_t k = 0; k < n_look; k++)
            p->groups[end[p->group_free[view->nodes[list[k]].leaf] - 1]++] = list[k];
        for (uint32_t i = 0; i < n_leaves; i++)
            p->group_free[order[i].leaf] = 0;
        /* end[i] is now where leaf i's run ends, end[i - 1] where it starts */
        int rc = 0;
        for (uint32_t i = 0; need > 0 && i < n_leaves && rc == 0; i++) {
            uint32_t from = i ? end[i - 1] : 0;
            rc = take_most_free(p, view, &p->groups[from], end[i] - from, &need, out, count);
        }
        free(end);
        free(order);
        free(list);
        if (rc != 0)
            return -1;
    }
    if (need > 0 && take_from(p, view, level, group, &need, out, count) != 0)
        return -1;
    return need > 0 ? 1 : 0;
}

/* Takes from nodes[0..n) in turn what each has free until *need is met. */
static int take_in_order(struct placement *p, const struct cluster_view *view, const uint32_t *nodes, uint32_t n,
                         int32_t *need, struct policy_decisions *out, uint32_t *count)
{
    /* without a filter only the node's state counts (free_of's tests, once) */
    int filtered = p->type_filter >= 0 || p->job_types || p->avoid;
    for (uint32_t k = 0; *need > 0 && k < n; k++) {
        uint32_t node = nodes[k];
        const struct policy_node *nd = &view->nodes[node];
        int32_t f = filtered                     ? free_of(p, view, node)
                    : nd->state == POLICY_NODE_UP ? nd->free_slots - p->taken[node]
                                                  : 0;
        if (f > 0) {
            int32_t use = f < *need ? f : *need; /* 1, unless a node grew */
            if (take(p, out, node, use) != 0)
                return -1;
            *need -= use;
            (*count)++;
        }
    }
    return 0;
}

/* The pass's candidates as bits, set on first use. */
static void cand_ready(struct placement *p, const struct cluster_view *view)
{
    if (p->cand_view == view)
        return;
    uint64_t *bits = p->cand_bits;
    const uint32_t *list = view->nodes_with_free;
    for (uint32_t k = 0, n = view->n_nodes_with_free; k < n; k++)
        bits[list[k] / 64] |= UINT64_C(1) << (list[k] % 64);
    for (uint32_t k = 0, n = p->n_extra; k < n; k++)
        bits[p->extra[k] / 64] |= UINT64_C(1) << (p->extra[k] % 64);
    p->cand_view = view;
}

/* The fullest candidate that holds `slots`, lowest index on ties, or
 * UINT32_MAX: free_of's choice when no filter applies (so only the node's
 * state counts). The candidates go by ascending index, so the first that
 * has exactly `slots` free is the answer: none after it can be fuller or
 * lower. */
static uint32_t fullest_fit(struct placement *p, const struct cluster_view *view, int32_t slots)
{
    if (p->cand_view != view) {
        /* The lowest-index candidate, when it has exactly `slots` free, is
         * the answer too, found by reading the lists alone: the first such
         * choice of a pass on nodes of one slot, most often. */
        const uint32_t *list = view->nodes_with_free;
        uint32_t n = view->n_nodes_with_free, low = UINT32_MAX, low2 = UINT32_MAX, k = 0;
        for (; k + 1 < n; k += 2) { /* two minima: half the loop's turns */
            low = list[k] < low ? list[k] : low;
            low2 = list[k + 1] < low2 ? list[k + 1] : low2;
        }
        if (k < n)
            low = list[k] < low ? list[k] : low;
        low = low2 < low ? low2 : low;
        for (k = 0; k < p->n_extra; k++)
            low = p->extra[k] < low ? p->extra[k] : low;
        if (low != UINT32_MAX && view->nodes[low].state == POLICY_NODE_UP &&
            view->nodes[low].free_slots - p->taken[low] == slots) {
            p->idx_scanned += 1;
            return low;
        }
    }
    cand_ready(p, view);
    /* (free, node) as one key, the least wins: a compare per node, not a
     * chain of branches (slots >= 1, so a key's free part is positive) */
    uint64_t key = UINT64_MAX;
    const struct policy_node *all = view->nodes;
    const int32_t *taken = p->taken;
    const uint64_t *bits = p->cand_bits;
    uint32_t looked = 0;
    for (uint32_t w = 0, words = p->cand_words; w < words; w++) {
        for (uint64_t word = bits[w]; word; word &= word - 1) {
            uint32_t node = w * 64 + (uint32_t)__builtin_ctzll(word);
            const struct policy_node *nd = &all[node];
            int32_t f = nd->state == POLICY_NODE_UP ? nd->free_slots - taken[node] : 0;
            uint64_t kk = (uint64_t)(uint32_t)f << 32 | node;
            looked++;
            if (f >= slots && kk < key) {
                key = kk;
                if (f == slots)
                    goto done;
            }
        }
    }
done:
    p->idx_scanned += looked;
    return key == UINT64_MAX ? UINT32_MAX : (uint32_t)key;
}

int placement_pack(struct placement *p, const struct cluster_view *view, int32_t slots,
                   struct policy_decisions *out, uint32_t *first, uint32_t *count)
{
    *first = out->n_allocs;
    *count = 0;
    if (slots <= 0)
        return 1;

    /* the group choices below use the index too, once it lives; on nodes of
     * one slot a job of several takes candidates in order, which no index
     * serves, so it does not build one */
    int indexed = (slots <= p->max_slots || p->max_slots > 1) && idx_usable(p, view);
    if (slots <= p->max_slots) {
        /* Best fit on a single node. */
        uint32_t best = UINT32_MAX;
        int32_t best_free = INT32_MAX;
        if (indexed) {
            best = idx_choose(p, slots, FULLEST_FIRST);
        } else if (p->type_filter < 0 && !p->job_types && !p->avoid) {
            /* no filter: the candidates in index order (a pass that places
             * a job or two, most passes) */
            best = fullest_fit(p, view, slots);
        } else {
            p->idx_scanned += n_cand(p, view);
            for (uint32_t k = 0; k < n_cand(p, view); k++) {
                uint32_t node = cand(p, view, k);
                int32_t f = free_of(p, view, node);
                if (f >= slots && (f < best_free || (f == best_free && node < best))) {
                    best = node;
                    best_free = f;
                }
            }
        }
        if (best != UINT32_MAX) {
            if (take(p, out, best, slots) != 0)
                return -1;
            *count = 1;
            return 0;
        }
    }
    if (job_pool(p, view) < slots)
        return 1;
    if (p->max_slots == 1) {
        /* One-slot nodes (HPC logs as processors): every free node is as
         * good, the candidates in order (the view's list, then the extras) */
        int32_t need = slots;
        if (take_in_order(p, view, view->nodes_with_free, view->n_nodes_with_free, &need, out, count) != 0 ||
            take_in_order(p, view, p->extra, p->n_extra, &need, out, count) != 0)
            return -1;
        return 0;
    }

    /* Several nodes: the tightest group that holds the job (an NVLink domain
     * of several nodes, else a leaf, else a pod), else anywhere. */
    if (!indexed)
        p->idx_scanned += n_cand(p, view);
    static const enum placement_level levels[] = {PLACEMENT_DOMAIN, PLACEMENT_LEAF, PLACEMENT_POD};
    for (size_t l = 0; l < sizeof levels / sizeof *levels; l++) {
        if (!(p->levels & (1u << levels[l])))
            continue;
        int32_t g = tightest_group(p, view, levels[l], 0, slots);
        if (g >= 0)
            return spread(p, view, levels[l], g, slots, out, count);
    }
    return spread(p, view, PLACEMENT_ANY, -1, slots, out, count);
}

/* ---- the other strategies: blind to topology, by a sort of the candidates ---- */

static enum slot_order sort_mode_of(enum placement_strategy s)
{
    return s == PLACEMENT_FIRST_FIT ? BY_INDEX : s == PLACEMENT_BEST_FIT ? FULLEST_FIRST : EMPTIEST_FIRST;
}

/* the candidates in a strategy's order, lowest index on ties (a total
 * order); scratch: the n entries after them */
#define BY_INDEX_BEFORE(a, b) ((a)->node < (b)->node)
#define FULLEST_BEFORE(a, b) ((a)->free < (b)->free || ((a)->free == (b)->free && (a)->node < (b)->node))
#define EMPTIEST_BEFORE(a, b) ((a)->free > (b)->free || ((a)->free == (b)->free && (a)->node < (b)->node))
MERGE_SORT_DEFINE(sort_by_index, struct placement_slot, BY_INDEX_BEFORE)
MERGE_SORT_DEFINE(sort_fullest_first, struct placement_slot, FULLEST_BEFORE)
MERGE_SORT_DEFINE(sort_emptiest_first, struct placement_slot, EMPTIEST_BEFORE)

static void sort_slots(struct placement *p, uint32_t n, enum slot_order mode)
{
    struct placement_slot *a = p->slots_scratch, *scratch = p->slots_scratch + n;
    if (mode == BY_INDEX)
        sort_by_index(a, n, scratch);
    else if (mode == FULLEST_FIRST)
        sort_fullest_first(a, n, scratch);
    else
        sort_emptiest_first(a, n, scratch);
}

static int place_sorted(struct placement *p, const struct cluster_view *view, int32_t slots,
                        struct policy_decisions *out, uint32_t *count)
{
    enum slot_order mode = sort_mode_of(p->strategy);
    if (idx_usable(p, view)) {
        uint32_t node = idx_choose(p, slots, mode);
        if (node != UINT32_MAX) {
            if (take(p, out, node, slots) != 0)
                return -1;
            *count = 1;
            return 0;
        }
        if (mode != BY_INDEX) {
            /* Several nodes, fullest or emptiest first, lowest index within
             * equal free: the buckets in order, each by ascending index, is
             * the scan's sorted order. Collect, then take (a take refiles). */
            uint32_t n = 0;
            int64_t got = 0;
            for (int32_t i = 1; i < p->idx_buckets && got < slots; i++) {
                int32_t b = mode == FULLEST_FIRST ? i : p->idx_buckets - i;
                const uint64_t *bits = &p->idx_bits[(size_t)b * p->idx_words];
                for (uint32_t w = 0; w < p->idx_words && got < slots; w++)
                    for (uint64_t word = bits[w]; word && got < slots; word &= word - 1) {
                        uint32_t nd = w * 64 + (uint32_t)__builtin_ctzll(word);
                        p->groups[n++] = nd;
                        got += p->idx_raw[nd];
                    }
            }
            int32_t need = slots;
            for (uint32_t k = 0; k < n && need > 0; k++) {
                int32_t f = p->idx_raw[p->groups[k]];
                int32_t use = f < need ? f : need;
                if (take(p, out, p->groups[k], use) != 0)
                    return -1;
                need -= use;
                (*count)++;
            }
            return 0;
        }
    }
    /* one node if one holds the job: the first by index, the fullest or
     * the emptiest, lowest index on ties */
    uint32_t best = UINT32_MAX;
    int32_t best_free = 0;
    uint32_t n = 0;
    p->idx_scanned += n_cand(p, view);
    for (uint32_t k = 0; k < n_cand(p, view); k++) {
        uint32_t node = cand(p, view, k);
        int32_t f = free_of(p, view, node);
        if (f <= 0)
            continue;
        p->slots_scratch[n++] = (struct placement_slot){f, node};
        if (f < slots)
            continue;
        int better = best == UINT32_MAX ||
                     (mode == BY_INDEX && node < best) ||
                     (mode == FULLEST_FIRST && (f < best_free || (f == best_free && node < best))) ||
                     (mode == EMPTIEST_FIRST && (f > best_free || (f == best_free && node < best)));
        if (better) {
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
    sort_slots(p, n, mode);
    int32_t need = slots;
    for (uint32_t k = 0; need > 0 && k < n; k++) {
        int32_t use = p->slots_scratch[k].free < need ? p->slots_scratch[k].free : need;
        if (take(p, out, p->slots_scratch[k].node, use) != 0)
            return -1;
        need -= use;
        (*count)++;
    }
    return 0;
}

/* Gavel: node types by the job's speed on them, fastest first (lowest type
 * index on ties); the first with enough free slots gets the job. */
static int place_gavel(struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                       struct policy_decisions *out, uint32_t *first, uint32_t *count)
{
    uint32_t nt = view->n_types;
    if (!view->type_speed || nt < 2 || nt > 64)
        return placement_pack(p, view, job->slots, out, first, count);
    int32_t cls = job->job_class >= 0 && job->job_class < POLICY_JOB_CLASSES ? job->job_class : 0;
    int64_t pool[64] = {0};
    for (uint32_t k = 0; k < n_cand(p, view); k++) {
        uint32_t node = cand(p, view, k);
        int32_t t = view->nodes[node].type;
        int32_t f = free_of(p, view, node);
        if (t >= 0 && (uint32_t)t < nt && f > 0)
            pool[t] += f;
    }
    uint8_t tried[64] = {0};
    for (uint32_t round = 0; round < nt; round++) {
        int32_t best = -1;
        for (uint32_t t = 0; t < nt; t++) {
            if (tried[t])
                continue;
            if (best < 0 || view->type_speed[t * POLICY_JOB_CLASSES + (uint32_t)cls] >
                                view->type_speed[(uint32_t)best * POLICY_JOB_CLASSES + (uint32_t)cls])
                best = (int32_t)t;
        }
        tried[best] = 1;
        if (pool[best] >= job->slots) {
            p->type_filter = best;
            int rc = placement_pack(p, view, job->slots, out, first, count);
            p->type_filter = -1;
            return rc;
        }
    }
    return placement_pack(p, view, job->slots, out, first, count);
}

/* The strategy's placement of `slots` whole slots for job. */
static int place_whole(struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                       int32_t slots, struct policy_decisions *out, uint32_t *first, uint32_t *count)
{
    switch (p->strategy) {
    case PLACEMENT_PACK:
        return placement_pack(p, view, slots, out, first, count);
    case PLACEMENT_GAVEL:
        return place_gavel(p, view, job, out, first, count);
    case PLACEMENT_FIRST_FIT:
    case PLACEMENT_BEST_FIT:
    case PLACEMENT_SPREAD:
        break;
    }
    *first = out->n_allocs;
    *count = 0;
    if (slots <= 0 || job_pool(p, view) < slots)
        return 1;
    return place_sorted(p, view, slots, out, count);
}

/* ---- shaped jobs: n nodes x slots / n (policy.h ABI 3) ---- */

/* n distinct nodes with `per` free slots each, chosen as the strategy
 * orders nodes: first-fit by index, spread the emptiest, the others the
 * fullest (pack and gavel within the tightest NVLink domain, leaf or pod
 * that has n such nodes; gavel on the fastest node type that has them).
 * One node is the strategy's single-node choice. Gang-safe: all n or none. */
static int place_shaped(struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                        struct policy_decisions *out, uint32_t *first, uint32_t *count)
{
    *first = out->n_allocs;
    *count = 0;
    int32_t n = job->nodes, per = job->slots / job->nodes;
    if (per <= 0 || per * n != job->slots)
        return 1; /* hosts pass only shapes that divide; anything else never fits */
    enum placement_strategy strategy = p->strategy;
    if (strategy == PLACEMENT_GAVEL && view->type_speed && view->n_types >= 2 && view->n_types <= 64) {
        /* the fastest type for the job's class that has n nodes with room */
        int32_t cls = job->job_class >= 0 && job->job_class < POLICY_JOB_CLASSES ? job->job_class : 0;
        int32_t holding[64] = {0};
        for (uint32_t k = 0; k < n_cand(p, view); k++) {
            uint32_t node = cand(p, view, k);
            int32_t t = view->nodes[node].type;
            if (t >= 0 && (uint32_t)t < view->n_types && free_of(p, view, node) >= per)
                holding[t]++;
        }
        int32_t best = -1;
        for (uint32_t t = 0; t < view->n_types; t++)
            if (holding[t] >= n && (best < 0 || view->type_speed[t * POLICY_JOB_CLASSES + (uint32_t)cls] >
                                                    view->type_speed[(uint32_t)best * POLICY_JOB_CLASSES + (uint32_t)cls]))
                best = (int32_t)t;
        p->type_filter = best;
    }
    enum slot_order mode = strategy == PLACEMENT_FIRST_FIT ? BY_INDEX
                           : strategy == PLACEMENT_SPREAD  ? EMPTIEST_FIRST
                                                           : FULLEST_FIRST;
    enum placement_level level = PLACEMENT_ANY;
    int32_t group = -1;
    if (n > 1 && (strategy == PLACEMENT_PACK || strategy == PLACEMENT_GAVEL)) {
        static const enum placement_level levels[] = {PLACEMENT_DOMAIN, PLACEMENT_LEAF, PLACEMENT_POD};
        for (size_t l = 0; l < sizeof levels / sizeof *levels && group < 0; l++)
            if (p->levels & (1u << levels[l]) && (group = tightest_group(p, view, levels[l], per, n)) >= 0)
                level = levels[l];
    }
    uint32_t m = 0;
    for (uint32_t k = 0; k < n_cand(p, view); k++) {
        uint32_t node = cand(p, view, k);
        int32_t f = free_of(p, view, node);
        if (f >= per && (level == PLACEMENT_ANY || group_of(&view->nodes[node], node, level) == group))
            p->slots_scratch[m++] = (struct placement_slot){f, node};
    }
    int rc = 1;
    if (m >= (uint32_t)n) {
        if (n == 1) {
            /* the strategy's one node, without a sort */
            uint32_t best = 0;
            for (uint32_t k = 1; k < m; k++) {
                const struct placement_slot *a = &p->slots_scratch[k], *b = &p->slots_scratch[best];
                int better = mode == BY_INDEX         ? a->node < b->node
                             : mode == FULLEST_FIRST ? a->free < b->free || (a->free == b->free && a->node < b->node)
                                                     : a->free > b->free || (a->free == b->free && a->node < b->node);
                if (better)
                    best = k;
            }
            p->slots_scratch[0] = p->slots_scratch[best];
        } else {
            sort_slots(p, m, mode);
        }
        rc = 0;
        for (int32_t k = 0; k < n && rc == 0; k++)
            rc = take(p, out, p->slots_scratch[k].node, per);
        *count = (uint32_t)n;
    }
    p->type_filter = -1;
    return rc;
}

/* ---- shared GPUs ---- */

/* The pass's record of GPU gpu of node, from the view's share (or 0) on
 * first use; NULL when memory ran out. */
static struct placement_share *share_at(struct placement *p, const struct cluster_view *view, int32_t node,
                                        int32_t gpu)
{
    for (uint32_t i = 0; i < p->n_shares; i++)
        if (p->shares[i].node == node && p->shares[i].gpu == gpu)
            return &p->shares[i];
    if (p->n_shares == p->cap_shares) {
        uint32_t cap = p->cap_shares ? p->cap_shares * 2 : 16;
        struct placement_share *s = realloc(p->shares, cap * sizeof *s);
        if (!s)
            return NULL;
        p->shares = s;
        p->cap_shares = cap;
    }
    int32_t used = 0;
    const struct policy_node *nd = &view->nodes[node];
    for (uint32_t k = 0; view->shared && k < nd->n_shared; k++)
        if (view->shared[nd->shared_first + k].gpu == gpu)
            used = view->shared[nd->shared_first + k].used_milli;
    p->shares[p->n_shares] = (struct placement_share){node, gpu, used};
    return &p->shares[p->n_shares++];
}

/* The share in use on a GPU the view lists, as this pass left it. */
static int32_t share_used(const struct placement *p, const struct policy_shared_gpu *g)
{
    for (uint32_t i = 0; i < p->n_shares; i++)
        if (p->shares[i].node == g->node && p->shares[i].gpu == g->gpu)
            return p->shares[i].used_milli;
    return g->used_milli;
}

static int share_node_ok(const struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                         int32_t node)
{
    return node >= 0 && (uint32_t)node < view->n_nodes && view->nodes[node].state == POLICY_NODE_UP &&
           policy_job_may_use(job, view->nodes[node].type) && !(p->avoid && p->avoid[node]);
}

/* The lowest GPU index that node does not share as this pass left it (a
 * GPU whose last share was preempted this pass is free again). */
static int32_t unshared_gpu(const struct placement *p, const struct cluster_view *view, uint32_t node)
{
    const struct policy_node *nd = &view->nodes[node];
    for (int32_t g = 0; g < nd->total_slots; g++) {
        int taken = 0, seen = 0;
        for (uint32_t i = 0; i < p->n_shares && !seen; i++)
            if (p->shares[i].node == (int32_t)node && p->shares[i].gpu == g) {
                seen = 1;
                taken = p->shares[i].used_milli > 0;
            }
        for (uint32_t k = 0; !seen && view->shared && k < nd->n_shared && !taken; k++)
            taken = view->shared[nd->shared_first + k].gpu == g;
        if (!taken)
            return g;
    }
    return -1;
}

/* The shared GPU that fractional job fills best, as this pass left them:
 * 1 and its node and GPU, or 0 when none has room. */
static int find_share(const struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                      int32_t *node, int32_t *gpu)
{
    int32_t best_node = -1, best_gpu = -1, best_left = POLICY_MILLI_PER_GPU;
    /* the view's shared GPUs, then those this pass opened */
    for (uint32_t k = 0; view->shared && k < view->n_shared; k++) {
        const struct policy_shared_gpu *g = &view->shared[k];
        int32_t used = share_used(p, g);
        int32_t left = POLICY_MILLI_PER_GPU - used - job->milli;
        if (used > 0 && left >= 0 && left < best_left && share_node_ok(p, view, job, g->node)) {
            best_node = g->node;
            best_gpu = g->gpu;
            best_left = left;
        }
    }
    for (uint32_t i = 0; i < p->n_shares; i++) {
        const struct placement_share *s = &p->shares[i];
        int32_t left = POLICY_MILLI_PER_GPU - s->used_milli - job->milli;
        int better = left < best_left || (left == best_left && (s->node < best_node ||
                                                                (s->node == best_node && s->gpu < best_gpu)));
        if (s->used_milli > 0 && left >= 0 && better && share_node_ok(p, view, job, s->node)) {
            best_node = s->node;
            best_gpu = s->gpu;
            best_left = left;
        }
    }
    *node = best_node;
    *gpu = best_gpu;
    return best_node >= 0;
}

int placement_can_join(const struct placement *p, const struct cluster_view *view, const struct policy_job *job)
{
    int32_t node, gpu;
    return job->milli > 0 && find_share(p, view, job, &node, &gpu);
}

int64_t placement_pool_for(struct placement *p, const struct cluster_view *view, const struct policy_job *job)
{
    p->job_types = job->type_mask;
    int64_t pool = job_pool(p, view);
    p->job_types = 0;
    return pool;
}

static int place_share(struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                       struct policy_decisions *out, uint32_t *first, uint32_t *count)
{
    *first = out->n_allocs;
    *count = 0;
    int32_t best_node, best_gpu;
    if (!find_share(p, view, job, &best_node, &best_gpu)) {
        /* open a free GPU where the strategy puts one slot */
        int rc = place_whole(p, view, job, 1, out, first, count);
        if (rc != 0)
            return rc;
        best_node = out->allocs[*first].node;
        best_gpu = unshared_gpu(p, view, (uint32_t)best_node);
        if (best_gpu < 0)
            return -1; /* a node with a free slot shares every GPU: the view is inconsistent */
    } else {
        if (out->n_allocs >= out->cap_allocs)
            return -1;
        out->allocs[out->n_allocs++] = (struct policy_alloc){best_node, 1, 0, 0};
        *count = 1;
    }
    struct placement_share *s = share_at(p, view, best_node, best_gpu);
    if (!s)
        return -1;
    s->used_milli += job->milli;
    out->allocs[*first].milli = job->milli;
    out->allocs[*first].gpu = best_gpu;
    return 0;
}

int placement_give_back_alloc(struct placement *p, const struct cluster_view *view, const struct policy_alloc *al)
{
    if (al->milli <= 0)
        return placement_give_back(p, view, (uint32_t)al->node, al->slots);
    if (al->node < 0 || (uint32_t)al->node >= view->n_nodes || view->nodes[al->node].state != POLICY_NODE_UP)
        return 0;
    struct placement_share *s = share_at(p, view, al->node, al->gpu);
    if (!s)
        return -1;
    s->used_milli -= al->milli;
    /* the GPU's last share: a free slot again, as the host makes it */
    return s->used_milli <= 0 ? placement_give_back(p, view, (uint32_t)al->node, 1) : 0;
}

int placement_place(struct placement *p, const struct cluster_view *view, const struct policy_job *job,
                    struct policy_decisions *out, uint32_t *first, uint32_t *count)
{
    p->job_types = job->type_mask;
    int rc = job->milli > 0  ? place_share(p, view, job, out, first, count)
             : job->nodes > 0 ? place_shaped(p, view, job, out, first, count)
                              : place_whole(p, view, job, job->slots, out, first, count);
    p->job_types = 0;
    return rc;
}
