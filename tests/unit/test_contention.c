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
            flows[j] = (struct fabric_flow){np, 0, 0};
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
 * incremental update solved only components, each over its hot leaves, at
 * different times; in exact arithmetic the shares are the same (a leaf asked
 * for no more than it carries never fills below full demand, and
 * components share no hot leaf). In floating point two solves may fill
 * tied leaves in another order and round the frozen loads differently, so
 * shares agree to 1e-9 (relative to a share of at most 1), not bit for bit. */
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
        flows[f] = (struct fabric_flow){np, ct->flows[f].n_leaves, 0};
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

static void test_incremental_matches_full(void)
{
    struct pcg32 rng;
    pcg32_stream(&rng, 21, RNG_TEST, 2);
    double worst = 0;
    uint64_t checks = 0, skipped_ok = 1, hot_ok = 1, any_cold = 0;
    for (int trial = 0; trial < 30; trial++) {
        uint32_t n_leaves = 4 + pcg32_bounded(&rng, 37), per_leaf = 2 + pcg32_bounded(&rng, 7);
        uint32_t n_nodes = n_leaves * per_leaf;
        struct cluster c;
        memset(&c, 0, sizeof c);
        c.nodes = calloc(n_nodes, sizeof *c.nodes);
        c.n_nodes = n_nodes;
        c.n_leaves = (int32_t)n_leaves;
        c.fabric = (struct fabric_spec){FABRIC_RAIL_OPTIMIZED, (int32_t)per_leaf, 4, 1.0 + pcg32_bounded(&rng, 3), 400};
        for (uint32_t n = 0; n < n_nodes; n++)
            c.nodes[n] = (struct cluster_node){0, 8, (int32_t)n, (int32_t)(n / per_leaf), 0, -1};
        enum { JOBS = 400 };
        struct contention ct;
        CHECK_INT(contention_init(&ct, &c, JOBS), 0);
        struct shares s = {calloc(JOBS, sizeof *s.of_job), 0};
        uint8_t running[JOBS] = {0};
        uint32_t next_job = 0;
        for (int step = 0; step < 60; step++) {
            /* an instant: some starts, some ends, maybe a node failure */
            uint32_t starts = pcg32_bounded(&rng, 6), ends = pcg32_bounded(&rng, 4);
            for (uint32_t i = 0; i < starts && next_job < JOBS; i++) {
                struct policy_alloc a[12];
                uint32_t n = 2 + pcg32_bounded(&rng, 11);
                for (uint32_t k = 0; k < n; k++)
                    a[k] = (struct policy_alloc){.node = (int32_t)pcg32_bounded(&rng, n_nodes), .slots = 1 + (int32_t)pcg32_bounded(&rng, 8)};
                uint32_t job = next_job++;
                CHECK_INT(contention_add(&ct, job, a, n), 0);
                running[job] = 1;
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
            CHECK_INT(contention_update(&ct, keep_share, &s), 0);
            uint32_t hot = 0; /* the count the update's fast path trusts */
            for (uint32_t l = 0; l < n_leaves; l++)
                hot += ct.leaf_demand[l] > ct.leaf_capacity[l] * (1 + 1e-12);
            hot_ok &= hot == ct.n_hot;
            any_cold |= hot == 0 && ct.n_flows > 0;
            double gap = worst_gap_to_full(&ct, &s);
            if (gap > worst)
                worst = gap;
            checks += ct.n_flows;
            /* an instant where no flow started or ended solves nothing */
            uint64_t runs = ct.runs, calls = s.calls;
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
    CHECK(checks > 10000);
    CHECK(skipped_ok);
    CHECK(hot_ok);
    CHECK(any_cold); /* the fast path without a hot leaf was taken */
    CHECK(worst <= 1e-9);
}

void suite_contention(void)
{
    test_run("contention: max-min by tournament tree equals the scan, bit for bit", test_max_min_matches_scan);
    test_run("contention: incremental shares equal a full recomputation", test_incremental_matches_full);
}
