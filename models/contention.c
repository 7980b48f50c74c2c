#include "models/contention.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"

#define NONE UINT32_MAX

/* Shares are fractions of a flow's demand, in [0, 1], compared with
 * absolute margins. A share solved again within SAME_SHARE of the one a
 * flow has is the same share reached in another order (a region meets
 * its leaves and flows in another order than the solve that set the share,
 * and rounds differently), and is kept: the flow's leaves need no check
 * and its job no new end. The checks accept a share or a leaf's load as
 * equal within TOLERANCE: above what SAME_SHARE lets a kept share differ
 * from a solved one, far below any change a start or stop makes (one GPU
 * of a 256-GPU leaf is 0.4%). */
#define SAME_SHARE 1e-12
#define TOLERANCE 1e-11

/* Past these the region is given up for one solve over every flow. */
#define MAX_ROUNDS 16

static int leaf_set_init(struct leaf_set *set, size_t n_leaves)
{
    set->in = calloc(n_leaves, 1);
    set->list = malloc(n_leaves * sizeof *set->list);
    set->n = 0;
    return !set->in || !set->list;
}

static void leaf_set_release(struct leaf_set *set)
{
    free(set->in);
    free(set->list);
}

static void leaf_set_add(struct leaf_set *set, uint32_t l)
{
    if (!set->in[l]) {
        set->in[l] = 1;
        set->list[set->n++] = l;
    }
}

static void leaf_set_clear(struct leaf_set *set)
{
    for (uint32_t i = 0; i < set->n; i++)
        set->in[set->list[i]] = 0;
    set->n = 0;
}

int contention_init(struct contention *ct, const struct cluster *c, size_t n_jobs)
{
    memset(ct, 0, sizeof *ct);
    ct->c = c;
    ct->n_leaves = c->n_leaves > 0 ? (uint32_t)c->n_leaves : 0;
    size_t nl = ct->n_leaves ? ct->n_leaves : 1, nj = n_jobs ? n_jobs : 1;
    ct->leaf_capacity = calloc(nl, sizeof *ct->leaf_capacity);
    ct->on = calloc(nl, sizeof *ct->on);
    int sets = leaf_set_init(&ct->dirty, nl) | leaf_set_init(&ct->checked, nl) | leaf_set_init(&ct->forced, nl);
    ct->leaf_local = malloc(nl * sizeof *ct->leaf_local);
    ct->used_leaf = malloc(nl * sizeof *ct->used_leaf);
    ct->used_kept = malloc(nl * sizeof *ct->used_kept);
    ct->kept_leaf = malloc(nl * sizeof *ct->kept_leaf);
    ct->used_asked = malloc(nl * sizeof *ct->used_asked);
    ct->flow_of_job = malloc(nj * sizeof *ct->flow_of_job);
    if (sets || !ct->leaf_capacity || !ct->on || !ct->leaf_local || !ct->used_leaf || !ct->used_kept ||
        !ct->kept_leaf || !ct->used_asked || !ct->flow_of_job)
        return -1;
    for (uint32_t l = 0; l < ct->n_leaves; l++)
        ct->leaf_local[l] = NONE;
    for (size_t j = 0; j < n_jobs; j++)
        ct->flow_of_job[j] = NONE;
    double over = c->fabric.oversubscription > 0 ? c->fabric.oversubscription : 1;
    for (uint32_t n = 0; n < c->n_nodes; n++)
        ct->leaf_capacity[c->nodes[n].leaf] += (double)c->nodes[n].slots * c->fabric.link_gbps / over;
    return 0;
}

static void flow_free(struct contention_flow *f)
{
    free(f->leaf);
    free(f->demand);
    free(f->at);
}

void contention_release(struct contention *ct)
{
    for (uint32_t f = 0; f < ct->n_flows; f++)
        flow_free(&ct->flows[f]);
    for (uint32_t l = 0; ct->on && l < ct->n_leaves; l++)
        free(ct->on[l].m);
    free(ct->on);
    free(ct->flows);
    free(ct->flow_of_job);
    free(ct->leaf_capacity);
    leaf_set_release(&ct->dirty);
    leaf_set_release(&ct->checked);
    leaf_set_release(&ct->forced);
    free(ct->leaf_local);
    free(ct->used_leaf);
    free(ct->used_kept);
    free(ct->kept_leaf);
    free(ct->used_asked);
    free(ct->started);
    free(ct->region);
    free(ct->region_share);
    free(ct->region_bottleneck);
    free(ct->solve_flows);
    free(ct->solve_leaf);
    free(ct->solve_demand);
    free(ct->solve_capacity);
    memset(ct, 0, sizeof *ct);
}

int contention_add(struct contention *ct, uint32_t job, const struct policy_alloc *allocs, uint32_t n)
{
    if (buffers_grow((void **)&ct->flows, &ct->cap_flows, ct->n_flows + 1, sizeof *ct->flows) != 0 ||
        buffers_grow((void **)&ct->started, &ct->cap_started, ct->n_started + 1, sizeof *ct->started) != 0)
        return -1;
    /* no share yet (-1): the update hands it one */
    struct contention_flow f = {job,  0,   malloc(n * sizeof *f.leaf), malloc(n * sizeof *f.demand),
                                malloc(n * sizeof *f.at), -1, NONE, NONE};
    if (!f.leaf || !f.demand || !f.at) {
        flow_free(&f);
        return -1;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t l = (uint32_t)ct->c->nodes[allocs[k].node].leaf, q = 0;
        while (q < f.n_leaves && f.leaf[q] != l)
            q++;
        if (q == f.n_leaves) {
            f.leaf[q] = l;
            f.demand[q] = 0;
            f.n_leaves++;
        }
        f.demand[q] += (double)allocs[k].slots * ct->c->fabric.link_gbps;
    }
    for (uint32_t k = 0; k < f.n_leaves; k++) {
        struct contention_leaf *on = &ct->on[f.leaf[k]];
        if (buffers_grow((void **)&on->m, &on->cap, on->n + 1, sizeof *on->m) != 0) {
            while (k-- > 0)
                ct->on[f.leaf[k]].n--; /* the lists end with this flow's entries */
            flow_free(&f);
            return -1;
        }
        f.at[k] = on->n;
        on->m[on->n++] = (struct contention_member){job, NONE, f.demand[k], f.share, f.bottleneck};
        leaf_set_add(&ct->dirty, f.leaf[k]);
    }
    ct->flows[ct->n_flows] = f;
    ct->flow_of_job[job] = ct->n_flows++;
    ct->started[ct->n_started++] = job;
    return 0;
}

void contention_remove(struct contention *ct, uint32_t job)
{
    uint32_t pos = ct->flow_of_job[job];
    if (pos == NONE)
        return;
    struct contention_flow *f = &ct->flows[pos];
    if (f->bottleneck != NONE)
        ct->on[f->bottleneck].held--;
    for (uint32_t k = 0; k < f->n_leaves; k++) {
        /* the leaf's last member takes this one's place */
        uint32_t l = f->leaf[k];
        struct contention_leaf *on = &ct->on[l];
        struct contention_member last = on->m[--on->n];
        if (f->at[k] < on->n) {
            on->m[f->at[k]] = last;
            const struct contention_flow *moved = &ct->flows[ct->flow_of_job[last.job]];
            uint32_t q = 0;
            while (moved->leaf[q] != l)
                q++;
            moved->at[q] = f->at[k];
        }
        leaf_set_add(&ct->dirty, l);
    }
    flow_free(f);
    *f = ct->flows[--ct->n_flows];
    ct->flow_of_job[f->job] = pos;
    ct->flow_of_job[job] = NONE;
}

/* ---- the region ---- */

static struct contention_flow *flow_of(const struct contention *ct, uint32_t job)
{
    return &ct->flows[ct->flow_of_job[job]];
}

static struct contention_member *member(const struct contention *ct, const struct contention_flow *f, uint32_t k)
{
    return &ct->on[f->leaf[k]].m[f->at[k]];
}

static void set_region(const struct contention *ct, struct contention_flow *f, uint32_t r)
{
    f->region = r;
    for (uint32_t k = 0; k < f->n_leaves; k++)
        member(ct, f, k)->region = r;
}

static void set_bottleneck(struct contention *ct, struct contention_flow *f, uint32_t l)
{
    if (f->bottleneck != NONE)
        ct->on[f->bottleneck].held--;
    if (l != NONE)
        ct->on[l].held++;
    f->bottleneck = l;
    for (uint32_t k = 0; k < f->n_leaves; k++)
        member(ct, f, k)->bottleneck = l;
}

static void set_share(const struct contention *ct, struct contention_flow *f, double x)
{
    f->share = x;
    for (uint32_t k = 0; k < f->n_leaves; k++)
        member(ct, f, k)->share = x;
}

static int region_add(struct contention *ct, uint32_t job)
{
    struct contention_flow *f = flow_of(ct, job);
    if (f->region != NONE)
        return 0;
    uint32_t cap = ct->cap_region;
    if (buffers_grow((void **)&ct->region, &cap, ct->n_region + 1, sizeof *ct->region) != 0)
        return -1;
    cap = ct->cap_region;
    if (buffers_grow((void **)&ct->region_share, &cap, ct->n_region + 1, sizeof *ct->region_share) != 0)
        return -1;
    cap = ct->cap_region;
    if (buffers_grow((void **)&ct->region_bottleneck, &cap, ct->n_region + 1, sizeof *ct->region_bottleneck) != 0)
        return -1;
    ct->cap_region = cap;
    set_region(ct, f, ct->n_region);
    ct->region[ct->n_region] = job;
    ct->region_share[ct->n_region] = f->share;
    ct->region_bottleneck[ct->n_region++] = f->bottleneck;
    return 0;
}

/* A flow's share as the region's solve stands: solved if in it, else kept. */
static double share_now(const struct contention *ct, const struct contention_member *m)
{
    return m->region == NONE ? m->share : ct->region_share[m->region];
}

static int solve_room(struct contention *ct, uint32_t pairs)
{
    if (buffers_grow((void **)&ct->solve_flows, &ct->cap_solve_flows, ct->n_region + 1, sizeof *ct->solve_flows) !=
        0)
        return -1;
    uint32_t cap = ct->cap_solve_pairs;
    if (buffers_grow((void **)&ct->solve_leaf, &cap, pairs + 1, sizeof *ct->solve_leaf) != 0)
        return -1;
    cap = ct->cap_solve_pairs;
    if (buffers_grow((void **)&ct->solve_demand, &cap, pairs + 1, sizeof *ct->solve_demand) != 0)
        return -1;
    cap = ct->cap_solve_pairs;
    if (buffers_grow((void **)&ct->solve_capacity, &cap, pairs + 1, sizeof *ct->solve_capacity) != 0)
        return -1;
    ct->cap_solve_pairs = cap;
    return 0;
}

/* Leaf l as the region's solve stands: what its flows use, and the
 * largest share among them. */
struct leaf_state {
    double load, most;
};

static struct leaf_state leaf_state(const struct contention *ct, uint32_t l)
{
    const struct contention_leaf *on = &ct->on[l];
    struct leaf_state st = {0, 0};
    for (uint32_t m = 0; m < on->n; m++) {
        double s = share_now(ct, &on->m[m]);
        st.load += on->m[m].demand * s;
        if (s > st.most)
            st.most = s;
    }
    return st;
}

/* Max-min over the region's flows, every other flow held at its share: a
 * leaf offers what the others leave of its capacity.
 *
 * Over which leaves: a region flow is limited where it is held (its
 * bottleneck: as the last round solved it, at first the one it had), and
 * a flow that just started anywhere; a leaf where some region flow is
 * held, every leaf of a new flow, and the leaves forced in earlier rounds
 * are solved, each with every region flow on it. The other
 * leaves of the region's flows are left out (a region flow uses ~14 leaves
 * on the bench fleet, and reading all of them was most of an update). That
 * answer is the region's fair one if no leaf left out ends over its
 * capacity: one can only where a region flow's share rose, and such a leaf
 * is forced and the region solved again. Of the solved leaves, only those
 * where the region asks for more than the others leave can fill; the
 * others go to the solver as no constraint.
 *
 * What the others leave is summed over them afresh each time, in the
 * leaf's order: a flow solved again with the same others gets the same
 * bits, so a share that did not move shows as not moved. (Kept as a running
 * load less the region's part, the cancellation moved ~6 shares an update
 * by 1e-12 to 1e-9 on the bench fleet, each a rescheduled end and a
 * check.)
 *
 * Returns the number of leaves it forced (0: the answer stands), or -1 if
 * memory ran out. */
static int64_t solve_region(struct contention *ct, int every_leaf)
{
    uint32_t pairs = 0, n_used = 0, n_kept = 0;
    for (uint32_t i = 0; i < ct->n_region; i++)
        pairs += flow_of(ct, ct->region[i])->n_leaves;
    if (solve_room(ct, pairs) != 0)
        return -1;
    /* the leaves solved, numbered in order of first use */
    for (uint32_t i = 0; i < ct->n_region; i++) {
        const struct contention_flow *f = flow_of(ct, ct->region[i]);
        for (uint32_t k = 0; k < f->n_leaves; k++) {
            uint32_t l = f->leaf[k];
            if (ct->leaf_local[l] != NONE ||
                !(every_leaf || f->share < 0 || ct->forced.in[l] || l == ct->region_bottleneck[i]))
                continue;
            ct->leaf_local[l] = n_used;
            ct->used_leaf[n_used] = l;
            ct->used_asked[n_used++] = 0;
        }
    }
    for (uint32_t i = 0; i < ct->n_region; i++) {
        const struct contention_flow *f = flow_of(ct, ct->region[i]);
        for (uint32_t k = 0; k < f->n_leaves; k++)
            if (ct->leaf_local[f->leaf[k]] != NONE)
                ct->used_asked[ct->leaf_local[f->leaf[k]]] += f->demand[k];
    }
    double *capacity = ct->solve_capacity;
    for (uint32_t a = 0; a < n_used; a++) {
        uint32_t l = ct->used_leaf[a];
        double left = ct->leaf_capacity[l];
        const struct contention_leaf *on = &ct->on[l];
        for (uint32_t m = 0; m < on->n; m++)
            if (on->m[m].region == NONE)
                left -= on->m[m].demand * on->m[m].share;
        ct->used_kept[a] = NONE;
        if (ct->used_asked[a] > left) {
            ct->used_kept[a] = n_kept;
            capacity[n_kept] = left;
            ct->kept_leaf[n_kept++] = l;
        }
    }
    struct fabric_flow *flows = ct->solve_flows;
    uint32_t np = 0;
    for (uint32_t i = 0; i < ct->n_region; i++) {
        const struct contention_flow *f = flow_of(ct, ct->region[i]);
        flows[i] = (struct fabric_flow){.first = np};
        for (uint32_t k = 0; k < f->n_leaves; k++) {
            uint32_t a = ct->leaf_local[f->leaf[k]];
            if (a == NONE || ct->used_kept[a] == NONE)
                continue;
            ct->solve_leaf[np] = ct->used_kept[a];
            ct->solve_demand[np++] = f->demand[k];
            flows[i].count++;
        }
    }
    int64_t forced = 0;
    if (fabric_max_min(flows, ct->n_region, ct->solve_leaf, ct->solve_demand, capacity, n_kept) != 0)
        forced = -1;
    for (uint32_t i = 0; i < ct->n_region && forced >= 0; i++) {
        double was = flow_of(ct, ct->region[i])->share, x = flows[i].share;
        /* a share of 1 is only ever the solver's own (a flow short of its
         * demand keeps a bottleneck, one at its whole demand has none) */
        int same = was >= 0 && was < 1 && x < 1 && fabs(x - was) <= SAME_SHARE;
        ct->region_share[i] = same ? was : x;
        ct->region_bottleneck[i] = flows[i].bottleneck == FABRIC_NO_LEAF ? NONE : ct->kept_leaf[flows[i].bottleneck];
    }
    /* a leaf left out may now be over capacity only where a share rose */
    for (uint32_t i = 0; i < ct->n_region && forced >= 0; i++) {
        const struct contention_flow *f = flow_of(ct, ct->region[i]);
        if (f->share < 0 || ct->region_share[i] <= f->share)
            continue;
        for (uint32_t k = 0; k < f->n_leaves; k++) {
            uint32_t l = f->leaf[k];
            if (ct->leaf_local[l] != NONE || ct->forced.in[l])
                continue;
            if (leaf_state(ct, l).load > ct->leaf_capacity[l] * (1 + TOLERANCE)) {
                leaf_set_add(&ct->forced, l);
                forced++;
            }
        }
    }
    for (uint32_t a = 0; a < n_used; a++)
        ct->leaf_local[ct->used_leaf[a]] = NONE;
    ct->runs++;
    ct->flows_solved += ct->n_region;
    return forced;
}

/* ---- the check ---- */

/* The level leaf l would fill at if the region flows it holds rose
 * together and every other flow on it kept its share or came down to that
 * level: the water level over the others' shares. A region flow's
 * bottleneck carrying outside flows with a larger share is full; those
 * above this level are the ones that must come down for the region's
 * flows, those below it keep their share on this leaf's account (taking
 * every flow above the region's share made regions of ~16 flows, where ~3
 * shares move). */
static double leaf_level(const struct contention *ct, uint32_t l)
{
    const struct contention_leaf *on = &ct->on[l];
    double open = 0, fixed = 0;
    /* the others' shares, lowest first (a leaf carries ~10 flows) */
    double cap[64], d[64];
    uint32_t n = 0;
    for (uint32_t m = 0; m < on->n; m++) {
        const struct contention_member *e = &on->m[m];
        if (e->region != NONE && ct->region_bottleneck[e->region] == l) {
            open += e->demand;
            continue;
        }
        if (n == 64) /* a crowded leaf: no level, every flow above joins */
            return 0;
        double s = share_now(ct, e);
        uint32_t at = n++;
        while (at > 0 && cap[at - 1] > s) {
            cap[at] = cap[at - 1];
            d[at] = d[at - 1];
            at--;
        }
        cap[at] = s;
        d[at] = e->demand;
    }
    /* the others from the top down come down to the level until it is
     * above the next one's share: others [0, k) keep theirs */
    for (uint32_t k = 0; k < n; k++)
        fixed += d[k] * cap[k];
    for (uint32_t k = n;; k--) {
        double level = open > 0 ? (ct->leaf_capacity[l] - fixed) / open : 1;
        if (k == 0 || level >= cap[k - 1])
            return level;
        fixed -= d[k - 1] * cap[k - 1];
        open += d[k - 1];
    }
}

/* Leaf l can hold a flow at share x: it is full, and no flow on it has more. */
static int holds(const struct contention *ct, uint32_t l, struct leaf_state st, double x)
{
    return st.load >= ct->leaf_capacity[l] * (1 - TOLERANCE) && x >= st.most - TOLERANCE;
}

/* Adds to the region every flow the fair-share condition fails for, as
 * the region's solve stands. Returns how many, or -1 if memory ran out. */
static int64_t find_violations(struct contention *ct)
{
    uint32_t before = ct->n_region;
    /* a region flow's bottleneck must carry no outside flow with more: of
     * those, the ones above the leaf's new level join */
    for (uint32_t i = 0; i < before; i++) {
        uint32_t l = ct->region_bottleneck[i];
        if (l == NONE)
            continue;
        double x = ct->region_share[i] + TOLERANCE, level = leaf_level(ct, l);
        const struct contention_leaf *on = &ct->on[l];
        int above_level = 0;
        for (uint32_t m = 0; m < on->n; m++)
            above_level |= on->m[m].region == NONE && on->m[m].share > level + TOLERANCE;
        if (above_level)
            x = level + TOLERANCE;
        for (uint32_t m = 0; m < on->n; m++)
            if (on->m[m].region == NONE && on->m[m].share > x && region_add(ct, on->m[m].job) != 0)
                return -1;
    }
    /* the leaves whose flows or shares changed: an outside flow held
     * there must still be */
    for (uint32_t i = 0; i < ct->dirty.n; i++)
        leaf_set_add(&ct->checked, ct->dirty.list[i]);
    for (uint32_t i = 0; i < before; i++) {
        const struct contention_flow *f = flow_of(ct, ct->region[i]);
        if (ct->region_share[i] == f->share)
            continue;
        for (uint32_t k = 0; k < f->n_leaves; k++)
            leaf_set_add(&ct->checked, f->leaf[k]);
    }
    for (uint32_t c = 0; c < ct->checked.n; c++) {
        uint32_t l = ct->checked.list[c];
        const struct contention_leaf *on = &ct->on[l];
        if (!on->held)
            continue; /* no flow held here to check */
        int known = 0;
        struct leaf_state st = {0, 0};
        for (uint32_t m = 0; m < on->n; m++) {
            if (on->m[m].region != NONE || on->m[m].bottleneck != l)
                continue;
            uint32_t job = on->m[m].job;
            double x = on->m[m].share;
            if (!known) {
                st = leaf_state(ct, l);
                known = 1;
            }
            if (holds(ct, l, st, x))
                continue;
            /* another of its leaves may hold it (a tie) */
            struct contention_flow *f = flow_of(ct, job);
            uint32_t k = 0;
            while (k < f->n_leaves && (f->leaf[k] == l || !holds(ct, f->leaf[k], leaf_state(ct, f->leaf[k]), x)))
                k++;
            if (k < f->n_leaves)
                set_bottleneck(ct, f, f->leaf[k]);
            else if (region_add(ct, job) != 0)
                return -1;
        }
    }
    leaf_set_clear(&ct->checked);
    return (int64_t)(ct->n_region - before);
}

/* Solves the region until the condition holds everywhere, or over every
 * flow once the region has grown too far. */
static int settle(struct contention *ct)
{
    for (int round = 0;; round++) {
        int everyone = round >= MAX_ROUNDS || ct->n_region * 2 > ct->n_flows;
        for (uint32_t f = 0; everyone && f < ct->n_flows; f++)
            if (region_add(ct, ct->flows[f].job) != 0)
                return -1;
        int64_t forced = solve_region(ct, everyone);
        if (forced < 0)
            return -1;
        if (everyone)
            return 0;
        if (forced > 0)
            continue; /* the same region again, over the forced leaves too */
        int64_t more = find_violations(ct);
        if (more <= 0)
            return (int)more;
    }
}

int contention_update(struct contention *ct, contention_share_fn share_fn, void *ctx)
{
    if (!ct->dirty.n)
        return 0; /* no flow started or stopped (every flow has a leaf) */
    int rc = 0;
    for (uint32_t i = 0; i < ct->n_started && !rc; i++)
        if (ct->flow_of_job[ct->started[i]] != NONE) /* not stopped in the same instant */
            rc = region_add(ct, ct->started[i]);
    ct->n_started = 0;
    if (!rc)
        rc = settle(ct);
    leaf_set_clear(&ct->dirty);
    leaf_set_clear(&ct->forced);
    for (uint32_t i = 0; i < ct->n_region; i++) {
        struct contention_flow *f = flow_of(ct, ct->region[i]);
        set_region(ct, f, NONE);
        if (rc)
            continue;
        if (ct->region_bottleneck[i] != f->bottleneck)
            set_bottleneck(ct, f, ct->region_bottleneck[i]);
        if (ct->region_share[i] != f->share) {
            set_share(ct, f, ct->region_share[i]);
            rc = share_fn(ctx, f->job, f->share);
        }
    }
    ct->n_region = 0;
    return rc;
}
