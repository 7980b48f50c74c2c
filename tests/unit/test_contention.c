/* The contention model: the max-min solver against a plain scan, and the
 * incremental update against a full recomputation, on random fabrics. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/contention.h"
#include "models/fabric.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

/* Progressive filling as the textbook states it (and as fabric_max_min did
 * before its tournament tree): each round scans every open leaf in array
 * order, closing the emptied ones, and fills the first with the lowest
 * level. fabric_max_min must give the same shares to the last bit. */
static void max_min_by_scan(struct fabric_flow *flows, size_t n_flows, const uint32_t *leaf, const double *demand,
                            const double *capacity, size_t n_leaves)
{
    double *room = malloc((n_leaves + 1) * sizeof *room), *open = calloc(n_leaves + 1, sizeof *open);
    double *x = malloc((n_flows + 1) * sizeof *x);
    uint8_t *frozen = calloc(n_flows + 1, 1);
    uint32_t *active = malloc((n_leaves + 1) * sizeof *active);
    for (size_t l = 0; l < n_leaves; l++)
        room[l] = capacity[l];
    for (size_t j = 0; j < n_flows; j++) {
        x[j] = 1.0;
        for (uint32_t k = 0; k < flows[j].count; k++)
            open[leaf[flows[j].first + k]] += demand[flows[j].first + k];
    }
    size_t n_active = 0;
    for (size_t l = 0; l < n_leaves; l++)
        if (open[l] > 1e-12 * (capacity[l] + 1))
            active[n_active++] = (uint32_t)l;
    double level = 0;
    while (n_active) {
        size_t full_at = n_active;
        double at = 1.0;
        for (size_t a = 0; a < n_active;) {
            uint32_t l = active[a];
            if (open[l] <= 1e-12 * (capacity[l] + 1)) {
                active[a] = active[--n_active];
                continue;
            }
            double t = room[l] > 0 ? room[l] / open[l] : 0;
            if (t < at) {
                at = t;
                full_at = a;
            }
            a++;
        }
        if (full_at >= n_active)
            break;
        uint32_t full = active[full_at];
        if (at > level)
            level = at;
        for (size_t j = 0; j < n_flows; j++) {
            int on = 0;
            for (uint32_t k = 0; k < flows[j].count; k++)
                on |= leaf[flows[j].first + k] == full;
            if (!on || frozen[j])
                continue;
            frozen[j] = 1;
            x[j] = level;
            for (uint32_t k = 0; k < flows[j].count; k++) {
                open[leaf[flows[j].first + k]] -= demand[flows[j].first + k];
                room[leaf[flows[j].first + k]] -= level * demand[flows[j].first + k];
            }
        }
        open[full] = 0;
        active[full_at] = active[--n_active];
    }
    for (size_t j = 0; j < n_flows; j++) {
        double total = 0;
        for (uint32_t k = 0; k < flows[j].count; k++)
            total += demand[flows[j].first + k];
        flows[j].rate_gbps = x[j] * total;
    }
    free(room);
    free(open);
    free(x);
    free(frozen);
    free(active);
}

static void test_max_min_matches_scan(void)
{
    struct pcg32 rng;
    pcg32_stream(&rng, 12, RNG_TEST, 1);
    size_t differ = 0, cases = 0;
    for (int trial = 0; trial < 400; trial++) {
        /* some with hundreds of open leaves, as a large fabric has */
        uint32_t n_leaves = 1 + pcg32_bounded(&rng, trial % 4 == 3 ? 400 : 60), n_flows = 1 + pcg32_bounded(&rng, 120);
        struct fabric_flow *flows = malloc(n_flows * sizeof *flows), *ref = malloc(n_flows * sizeof *ref);
        uint32_t *leaf = malloc(n_flows * 6 * sizeof *leaf);
        double *demand = malloc(n_flows * 6 * sizeof *demand), *cap = malloc(n_leaves * sizeof *cap);
        /* equal capacities and demands in multiples of one link make ties
         * common: the case where the order of filling matters */
        int equal = trial % 2;
        for (uint32_t l = 0; l < n_leaves; l++)
            cap[l] = equal ? 51200 : 400.0 * (1 + pcg32_bounded(&rng, 200)) / (1 + pcg32_bounded(&rng, 3));
        uint32_t np = 0;
        for (uint32_t j = 0; j < n_flows; j++) {
            flows[j] = (struct fabric_flow){.first = np};
            uint32_t want = 1 + pcg32_bounded(&rng, n_leaves < 5 ? n_leaves : 5);
            while (flows[j].count < want) {
                uint32_t l = pcg32_bounded(&rng, n_leaves), k = 0;
                while (k < flows[j].count && leaf[np - flows[j].count + k] != l)
                    k++;
                if (k < flows[j].count)
                    continue;
                leaf[np] = l;
                demand[np++] = 400.0 * (1 + pcg32_bounded(&rng, 64));
                flows[j].count++;
            }
        }
        memcpy(ref, flows, n_flows * sizeof *ref);
        CHECK_INT(fabric_max_min(flows, n_flows, leaf, demand, cap, n_leaves), 0);
        max_min_by_scan(ref, n_flows, leaf, demand, cap, n_leaves);
        for (uint32_t j = 0; j < n_flows; j++)
            differ += memcmp(&flows[j].rate_gbps, &ref[j].rate_gbps, sizeof ref[j].rate_gbps) != 0;
        cases += n_flows;
        free(flows);
        free(ref);
        free(leaf);
        free(demand);
        free(cap);
    }
    CHECK(cases > 10000);
    CHECK_INT(differ, 0);
}

/* ---- incremental against full ---- */

struct shares {
    double *of_job;
    uint64_t calls;
};

static int keep_share(void *ctx, uint32_t job, double share)
{
    struct shares *s = ctx;
    s->of_job[job] = share;
    s->calls++;
    return 0;
}

/* Every flow's share recomputed from scratch: all flows, all leaves. The
 * update re-solved only regions, each over the leaves the region could
 * fill, at different times; the max-min fair shares are unique, so in exact
 * arithmetic they are the same. In floating point two solves fill tied
 * leaves in another order and round the frozen loads differently, and the
 * update accepts a bottleneck to a relative 1e-11, so shares agree to 1e-9
 * (relative to a share of at most 1), not bit for bit. */
static double worst_gap_to_full(const struct contention *ct, const struct shares *s)
{
    uint32_t n = ct->n_flows, np = 0;
    for (uint32_t f = 0; f < n; f++)
        np += ct->flows[f].n_leaves;
    struct fabric_flow *flows = malloc((n + 1) * sizeof *flows);
    uint32_t *leaf = malloc((np + 1) * sizeof *leaf);
    double *demand = malloc((np + 1) * sizeof *demand);
    np = 0;
    for (uint32_t f = 0; f < n; f++) {
        flows[f] = (struct fabric_flow){.first = np, .count = ct->flows[f].n_leaves};
        for (uint32_t k = 0; k < ct->flows[f].n_leaves; k++) {
            leaf[np] = ct->flows[f].leaf[k];
            demand[np++] = ct->flows[f].demand[k];
        }
    }
    double worst = 0;
    if (fabric_max_min(flows, n, leaf, demand, ct->leaf_capacity, ct->n_leaves) != 0)
        worst = HUGE_VAL;
    for (uint32_t f = 0; f < n; f++) {
        double total = 0;
        for (uint32_t k = 0; k < flows[f].count; k++)
            total += demand[flows[f].first + k];
        double gap = fabs(flows[f].rate_gbps / total - s->of_job[ct->flows[f].job]);
        if (gap > worst)
            worst = gap;
    }
    free(flows);
    free(leaf);
    free(demand);
    return worst;
}

/* The definition, checked without any solver: no leaf carries more than its
 * capacity, and every flow short of its demand has a leaf that is full and
 * on which no flow has a larger share. Returns the number of flows for
 * which that fails (0 when the shares are max-min fair). */
static uint32_t unfair_flows(const struct contention *ct, const struct shares *s, uint32_t *overfull)
{
    uint32_t nl = ct->n_leaves, bad = 0;
    double *load = calloc(nl, sizeof *load), *most = calloc(nl, sizeof *most);
    for (uint32_t f = 0; f < ct->n_flows; f++)
        for (uint32_t k = 0; k < ct->flows[f].n_leaves; k++) {
            uint32_t l = ct->flows[f].leaf[k];
            double x = s->of_job[ct->flows[f].job];
            load[l] += ct->flows[f].demand[k] * x;
            if (x > most[l])
                most[l] = x;
        }
    *overfull = 0;
    for (uint32_t l = 0; l < nl; l++)
        *overfull += load[l] > ct->leaf_capacity[l] * (1 + 1e-9);
    for (uint32_t f = 0; f < ct->n_flows; f++) {
        double x = s->of_job[ct->flows[f].job];
        if (x >= 1)
            continue;
        int held = 0;
        for (uint32_t k = 0; k < ct->flows[f].n_leaves && !held; k++) {
            uint32_t l = ct->flows[f].leaf[k];
            held = load[l] >= ct->leaf_capacity[l] * (1 - 1e-9) && x >= most[l] * (1 - 1e-9);
        }
        bad += !held;
    }
    free(load);
    free(most);
    return bad;
}

static void test_incremental_matches_full(void)
{
    struct pcg32 rng;
    pcg32_stream(&rng, 21, RNG_TEST, 2);
    double worst = 0;
    uint64_t checks = 0, skipped_ok = 1, calls_ok = 1, updates = 0, regrown = 0, unfair = 0, overfull = 0, held_ok = 1;
    for (int trial = 0; trial < 40; trial++) {
        /* up to 3:1 oversubscribed, and some trials with many flows on few
         * leaves, where nearly every leaf is full and a change spreads */
        uint32_t n_leaves = 4 + pcg32_bounded(&rng, 37), per_leaf = 2 + pcg32_bounded(&rng, 7);
        uint32_t n_nodes = n_leaves * per_leaf, busy = trial % 3 == 2;
        struct cluster c;
        memset(&c, 0, sizeof c);
        c.nodes = calloc(n_nodes, sizeof *c.nodes);
        c.n_nodes = n_nodes;
        c.n_leaves = (int32_t)n_leaves;
        c.fabric = (struct fabric_spec){FABRIC_RAIL_OPTIMIZED, (int32_t)per_leaf, 4, 1.0 + pcg32_bounded(&rng, 3), 400};
        for (uint32_t n = 0; n < n_nodes; n++)
            c.nodes[n] = (struct cluster_node){0, 8, (int32_t)n, (int32_t)(n / per_leaf), 0, -1};
        enum { JOBS = 600 };
        struct contention ct;
        CHECK_INT(contention_init(&ct, &c, JOBS), 0);
        struct shares s = {calloc(JOBS, sizeof *s.of_job), 0};
        uint8_t running[JOBS] = {0};
        uint32_t next_job = 0;
        for (int step = 0; step < 80; step++) {
            /* an instant: some starts, some ends, maybe a node failure */
            uint32_t starts = pcg32_bounded(&rng, busy ? 10 : 6), ends = pcg32_bounded(&rng, 4);
            uint32_t started[10], n_started = 0;
            for (uint32_t i = 0; i < starts && next_job < JOBS; i++) {
                struct policy_alloc a[12];
                uint32_t n = 2 + pcg32_bounded(&rng, 11);
                for (uint32_t k = 0; k < n; k++)
                    a[k] = (struct policy_alloc){.node = (int32_t)pcg32_bounded(&rng, n_nodes),
                                                 .slots = 1 + (int32_t)pcg32_bounded(&rng, 8)};
                uint32_t job = next_job++;
                CHECK_INT(contention_add(&ct, job, a, n), 0);
                running[job] = 1;
                started[n_started++] = job;
            }
            for (uint32_t i = 0; i < ends && next_job; i++) {
                uint32_t job = pcg32_bounded(&rng, next_job);
                contention_remove(&ct, job); /* a job that is not a flow any more: nothing */
                running[job] = 0;
            }
            if (pcg32_bounded(&rng, 4) == 0) { /* everything on one leaf stops at once (a switch, or many failures) */
                uint32_t leaf = pcg32_bounded(&rng, n_leaves);
                for (uint32_t f = 0; f < ct.n_flows;) {
                    int hit = 0;
                    for (uint32_t k = 0; k < ct.flows[f].n_leaves; k++)
                        hit |= ct.flows[f].leaf[k] == leaf;
                    if (hit) {
                        running[ct.flows[f].job] = 0;
                        contention_remove(&ct, ct.flows[f].job);
                    } else {
                        f++;
                    }
                }
            }
            /* a job that started has no share until the update tells it
             * one; a job it does not tell keeps the share it had, and the
             * checks below read only what the update told */
            for (uint32_t i = 0; i < n_started; i++)
                s.of_job[started[i]] = NAN;
            uint64_t runs = ct.runs, calls = s.calls;
            CHECK_INT(contention_update(&ct, keep_share, &s), 0);
            updates++;
            regrown += ct.runs > runs + 1;
            for (uint32_t j = 0; j < next_job; j++)
                calls_ok &= !running[j] || !isnan(s.of_job[j]);
            /* a flow short of its demand has a bottleneck, one at its whole
             * demand none; each leaf counts the flows it holds (the check
             * skips a leaf that holds none) */
            for (uint32_t f = 0; f < ct.n_flows; f++)
                held_ok &= (ct.flows[f].share < 1) == (ct.flows[f].bottleneck != FABRIC_NO_LEAF);
            for (uint32_t l = 0; l < n_leaves; l++) {
                uint32_t held = 0;
                for (uint32_t f = 0; f < ct.n_flows; f++)
                    held += ct.flows[f].bottleneck == l;
                held_ok &= held == ct.on[l].held;
            }
            uint32_t over;
            unfair += unfair_flows(&ct, &s, &over);
            overfull += over;
            double gap = worst_gap_to_full(&ct, &s);
            if (gap > worst)
                worst = gap;
            checks += ct.n_flows;
            /* an instant where no flow started or ended solves nothing */
            runs = ct.runs;
            calls = s.calls;
            CHECK_INT(contention_update(&ct, keep_share, &s), 0);
            skipped_ok &= ct.runs == runs && s.calls == calls;
        }
        uint32_t flows = 0;
        for (uint32_t j = 0; j < JOBS; j++)
            flows += running[j];
        CHECK_INT(ct.n_flows, flows);
        contention_release(&ct);
        free(s.of_job);
        free(c.nodes);
    }
    CHECK(checks > 20000);
    CHECK(skipped_ok);
    CHECK(calls_ok);
    CHECK(held_ok);
    CHECK_INT(unfair, 0);
    CHECK_INT(overfull, 0);
    /* the region grew past its first solve in many updates */
    CHECK(regrown > updates / 10);
    CHECK(worst <= 1e-9);
}

/* A change re-solves near itself: 40 groups of 4 leaves, each group's
 * flows on its own leaves only, every leaf oversubscribed. A start in one
 * group tells no job of another, and solves no flow of another. */
static void test_update_stays_local(void)
{
    enum { GROUPS = 40, PER_GROUP = 4, LEAVES = GROUPS * PER_GROUP, NODES = LEAVES * 2, JOBS = GROUPS * 12 + 1 };
    struct cluster c;
    memset(&c, 0, sizeof c);
    c.nodes = calloc(NODES, sizeof *c.nodes);
    c.n_nodes = NODES;
    c.n_leaves = LEAVES;
    c.fabric = (struct fabric_spec){FABRIC_RAIL_OPTIMIZED, 2, 4, 3.0, 400};
    for (uint32_t n = 0; n < NODES; n++)
        c.nodes[n] = (struct cluster_node){0, 8, (int32_t)n, (int32_t)(n / 2), 0, -1};
    struct contention ct;
    CHECK_INT(contention_init(&ct, &c, JOBS), 0);
    struct shares s = {calloc(JOBS, sizeof *s.of_job), 0};
    struct pcg32 rng;
    pcg32_stream(&rng, 5, RNG_TEST, 3);
    uint32_t job = 0;
    for (uint32_t g = 0; g < GROUPS; g++)
        for (int i = 0; i < 12; i++, job++) {
            /* two or three of the group's leaves, 1-8 GPUs on a node of each */
            struct policy_alloc a[3];
            uint32_t n = 2 + pcg32_bounded(&rng, 2), first = pcg32_bounded(&rng, PER_GROUP);
            for (uint32_t k = 0; k < n; k++) {
                uint32_t leaf = g * PER_GROUP + (first + k) % PER_GROUP;
                a[k] = (struct policy_alloc){.node = (int32_t)(leaf * 2 + pcg32_bounded(&rng, 2)),
                                             .slots = 1 + (int32_t)pcg32_bounded(&rng, 8)};
            }
            CHECK_INT(contention_add(&ct, job, a, n), 0);
        }
    CHECK_INT(contention_update(&ct, keep_share, &s), 0);
    uint64_t calls = s.calls, solved = ct.flows_solved;
    CHECK_INT(calls, JOBS - 1);
    /* one more flow in group 7, on its first two leaves, 8 GPUs on each */
    struct policy_alloc a[2] = {{.node = 7 * PER_GROUP * 2, .slots = 8}, {.node = (7 * PER_GROUP + 1) * 2, .slots = 8}};
    for (uint32_t j = 0; j < JOBS - 1; j++)
        s.of_job[j] = NAN; /* so that a share the update told shows */
    CHECK_INT(contention_add(&ct, JOBS - 1, a, 2), 0);
    CHECK_INT(contention_update(&ct, keep_share, &s), 0);
    uint32_t told_elsewhere = 0;
    for (uint32_t j = 0; j < JOBS - 1; j++)
        told_elsewhere += !isnan(s.of_job[j]) && j / 12 != 7;
    CHECK_INT(told_elsewhere, 0);
    CHECK(!isnan(s.of_job[JOBS - 1]));
    CHECK(s.calls - calls <= 13);
    CHECK(ct.flows_solved - solved <= 13 * 16);
    contention_release(&ct);
    free(s.of_job);
    free(c.nodes);
}

void suite_contention(void)
{
    test_run("contention: max-min by tournament tree equals the scan, bit for bit", test_max_min_matches_scan);
    test_run("contention: the regions' shares are max-min fair and equal a full recomputation",
             test_incremental_matches_full);
    test_run("contention: a change re-solves near itself", test_update_stays_local);
}
