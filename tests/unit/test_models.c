/* The hardware and operations models against what theory or construction
 * says: Erlang C, the Llama 3 failure counts, the fabric's fair shares,
 * deliveries and retirements. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/cluster.h"
#include "models/fabric.h"
#include "models/runtime_model.h"
#include "models/simulation.h"
#include "policies/registry.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/sim_fixture.h"
#include "tests/unit/test.h"

static const double hour_us = 3.6e9;

static struct node_type h100(void)
{
    struct node_type t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "H100-SXM");
    t.gpus = 8;
    t.nvlink_domain_gpus = 8;
    t.nvlink_gbps = 7200;
    t.speed[0] = t.speed[1] = t.speed[2] = 1.0;
    return t;
}

/* ---- Erlang C: M/M/c FCFS mean wait ---- */

static double erlang_c_wait(int c, double lambda, double mu)
{
    double a = lambda / mu, rho = a / c;
    double sum = 0; /* sum_{k<c} a^k / k! */
    for (int k = 0; k < c; k++)
        sum += exp(k * log(a) - gsl_sf_lngamma(k + 1.0));
    double top = exp(c * log(a) - gsl_sf_lngamma(c + 1.0)) / (1 - rho);
    double pw = top / (sum + top);
    return pw / (c * mu - lambda);
}

static double mm_c_replication(int c, double rho, size_t n, uint64_t seed)
{
    double mu = 1.0 / hour_us, lambda = rho * c * mu;
    struct pcg32 arr, dur;
    pcg32_stream(&arr, seed, RNG_ARRIVALS, 0);
    pcg32_stream(&dur, seed, RNG_DURATIONS, 0);
    struct workload w;
    workload_init(&w);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        t += -log(pcg32_unit_open(&arr)) / lambda;
        sim_time run = llround(-log(pcg32_unit_open(&dur)) / mu);
        struct job j = {(int64_t)i + 1, llround(t), run, -1, 1, -1, -1, -1, 0, -1, 0, 0, 0, 0, 0};
        workload_push(&w, &j);
    }
    struct cluster cl;
    struct err err;
    err_clear(&err);
    cluster_init_homogeneous(&cl, c, 1, &err);
    const struct policy_ops *ops;
    void *st;
    char msg[64];
    policy_registry_create("fcfs", &ops, &st, msg, sizeof msg);
    struct sim_result r;
    fixture_run_ops(&w, &cl, ops, st, NULL, &r, &err);
    double sum = 0;
    size_t warm = n / 10, k = 0;
    for (size_t i = warm; i < n; i++, k++)
        sum += (double)(r.jobs[i].start_us - w.jobs[i].submit_us);
    sim_result_release(&r);
    ops->destroy(st);
    cluster_release(&cl);
    workload_release(&w);
    return sum / (double)k;
}

static void test_erlang_c(void)
{
    const int c = 8, reps = 10;
    const double loads[] = {0.5, 0.7, 0.9};
    for (size_t l = 0; l < 3; l++) {
        double mean = 0, m2 = 0, x[10];
        for (int r = 0; r < reps; r++) {
            x[r] = mm_c_replication(c, loads[l], 60000, 100 + (uint64_t)r);
            mean += x[r];
        }
        mean /= reps;
        for (int r = 0; r < reps; r++)
            m2 += (x[r] - mean) * (x[r] - mean);
        double half = gsl_cdf_tdist_Pinv(0.995, reps - 1) * sqrt(m2 / (reps - 1) / reps);
        double truth = erlang_c_wait(c, loads[l] * c / hour_us, 1.0 / hour_us);
        if (getenv("FLEETSIM_TEST_VERBOSE") || !CHECK(fabs(mean - truth) <= half))
            printf("  load %.1f: simulated %.1f s +- %.1f, Erlang C %.1f s\n", loads[l], mean / 1e6, half / 1e6,
                   truth / 1e6);
        CHECK(half < 0.2 * truth); /* the interval is tight enough to mean something */
    }
}

/* ---- failures: the Llama 3 preset on Llama 3's cluster ---- */

static void test_llama3_failures(void)
{
    struct node_catalog cat;
    node_catalog_init(&cat);
    struct node_type t = h100();
    node_catalog_put(&cat, &t);
    struct cluster_group g = {0, 2048, -1};
    struct fabric_spec none = {FABRIC_NONE, 0, 0, 1, 400};
    struct cluster cl;
    struct err err;
    err_clear(&err);
    CHECK_INT(cluster_init_groups(&cl, &g, 1, &cat, &none, &err), 0);
    struct failure_spec fs;
    failure_spec_init(&fs);
    CHECK_INT(failure_spec_llama3(&fs), 0);
    struct sim_models m;
    memset(&m, 0, sizeof m);
    m.failures = &fs;
    m.seed = 2024;
    struct sim_options opt;
    sim_options_init(&opt);
    opt.models = &m;
    opt.until_us = (sim_time)(54 * 24 * hour_us);
    struct workload w;
    workload_init(&w);
    const struct policy_ops *ops;
    void *st;
    char msg[64];
    policy_registry_create("fcfs+easy", &ops, &st, msg, sizeof msg);
    struct sim_result r;
    CHECK_INT(fixture_run_ops(&w, &cl, ops, st, &opt, &r, &err), 0);
    /* Poisson 99% interval around 419 */
    unsigned lo = 0, hi = 0;
    while (gsl_cdf_poisson_P(lo, 419) < 0.005)
        lo++;
    hi = lo;
    while (gsl_cdf_poisson_P(hi, 419) < 0.995)
        hi++;
    if (getenv("FLEETSIM_TEST_VERBOSE") || !CHECK(r.stats.failures >= lo && r.stats.failures <= hi))
        printf("  %llu failures, 99%% interval [%u, %u]\n", (unsigned long long)r.stats.failures, lo, hi);
    /* category shares: chi-square against the table, small ones pooled */
    static const int table[] = {148, 72, 54, 35, 32, 19, 17, 7, 7, 6, 6, 3, 3, 2, 2, 2, 2, 2};
    double chi = 0, pool_obs = 0, pool_exp = 0;
    int dof = -1;
    for (size_t i = 0; i < fs.n_categories; i++) {
        double expect = (double)r.stats.failures * table[i] / 419.0;
        double obs = (double)r.stats.failures_by_category[i];
        if (expect < 5) {
            pool_obs += obs;
            pool_exp += expect;
            continue;
        }
        chi += (obs - expect) * (obs - expect) / expect;
        dof++;
    }
    chi += (pool_obs - pool_exp) * (pool_obs - pool_exp) / pool_exp;
    dof++;
    double p = gsl_cdf_chisq_Q(chi, dof);
    if (getenv("FLEETSIM_TEST_VERBOSE") || !CHECK(p > 0.001))
        printf("  category shares: chi2 %.1f on %d dof, p = %.4f\n", chi, dof, p);
    /* availability: repairs take a small share of node time */
    double availability = r.stats.node_up_us / r.stats.node_present_us;
    CHECK(availability > 0.99 && availability < 1.0);
    sim_result_release(&r);
    ops->destroy(st);
    failure_spec_release(&fs);
    cluster_release(&cl);
    node_catalog_release(&cat);
}

/* ---- placement and contention, with a policy that places by hand ---- */

struct forced {
    int64_t id;
    int nodes[2];
};
static const struct forced *forced_table;
static size_t forced_n;

static int forced_create(const char *p, void **s, char *e, size_t n)
{
    *s = NULL;
    return 0;
}
static void forced_destroy(void *s)
{
}
static int forced_decide(void *s, const struct cluster_view *v, struct policy_decisions *out)
{
    out->n = out->n_allocs = 0;
    for (uint32_t q = 0; q < v->n_queued; q++) {
        for (size_t k = 0; k < forced_n; k++) {
            if (forced_table[k].id != v->queued[q].id)
                continue;
            int per = v->queued[q].slots / 2;
            const int *nd = forced_table[k].nodes;
            if (v->nodes[nd[0]].free_slots < per || v->nodes[nd[1]].free_slots < per)
                continue;
            uint32_t first = out->n_allocs;
            out->allocs[out->n_allocs++] = (struct policy_alloc){nd[0], per, 0, 0};
            out->allocs[out->n_allocs++] = (struct policy_alloc){nd[1], per, 0, 0};
            out->items[out->n++] = (struct policy_decision){POLICY_START, q, v->queued[q].id, v->now_us, first, 2};
        }
    }
    return 0;
}
static const struct policy_ops forced_ops = {POLICY_ABI_VERSION, "forced", "places by a table",
                                             forced_create, forced_destroy, forced_decide, NULL};

/* 4 nodes x 8 GPUs; leaves of 2 nodes (16 GPUs); uplinks 4:1 oversubscribed:
 * a leaf's uplink carries 16 x 400 / 4 = 1,600 Gbps. Jobs of 16 GPUs (the
 * tightest span is one leaf, so B_ref is the 400 Gbps link), 1,000 s on the
 * reference, communication fraction 0.5. */
static sim_time run_forced(const struct forced *table, size_t n, sim_time *end_b)
{
    struct node_catalog cat;
    node_catalog_init(&cat);
    struct node_type t = h100();
    node_catalog_put(&cat, &t);
    struct cluster_group g = {0, 4, -1};
    struct fabric_spec fab = {FABRIC_FAT_TREE, 2, 8, 4.0, 400};
    struct cluster cl;
    struct err err;
    err_clear(&err);
    cluster_init_groups(&cl, &g, 1, &cat, &fab, &err);
    struct sim_models m;
    memset(&m, 0, sizeof m);
    m.comm_fraction[JOB_CLASS_TRAINING] = 0.5;
    struct sim_options opt;
    sim_options_init(&opt);
    opt.models = &m;
    struct workload w;
    workload_init(&w);
    for (size_t i = 0; i < n; i++) {
        struct job j = {table[i].id, 0, 1000000000, -1, 16, -1, -1, -1, 0, -1, 0, 0, 0, 0, 0};
        workload_push(&w, &j);
    }
    forced_table = table;
    forced_n = n;
    struct sim_result r;
    CHECK_INT(fixture_run_ops(&w, &cl, &forced_ops, NULL, &opt, &r, &err), 0);
    sim_time end = r.jobs[0].end_us;
    if (end_b)
        *end_b = n > 1 ? r.jobs[1].end_us : -1;
    CHECK_INT(r.jobs[0].span, n ? SPAN_SPINE : SPAN_SPINE);
    sim_result_release(&r);
    workload_release(&w);
    cluster_release(&cl);
    node_catalog_release(&cat);
    return end;
}

static void test_across_leaves(void)
{
    /* Alone on nodes 0 and 2: 8 GPUs x 400 = 3,200 Gbps asked of each
     * 1,600 Gbps uplink: share 0.5, B_eff 200, slowdown 0.5 + 0.5 x 400/200
     * = 1.5: 1,500 s. */
    static const struct forced alone[] = {{1, {0, 2}}};
    CHECK_INT(run_forced(alone, 1, NULL), 1500000000);
    /* With a twin on nodes 1 and 3 the same uplinks carry 6,400 Gbps of
     * demand: each gets the fair half, share 0.25, B_eff 100, slowdown 2.5. */
    static const struct forced twins[] = {{1, {0, 2}}, {2, {1, 3}}};
    sim_time end_b;
    CHECK_INT(run_forced(twins, 2, &end_b), 2500000000);
    CHECK_INT(end_b, 2500000000);
}

static void test_fabric_max_min(void)
{
    /* Two flows on leaf 0 (capacity 10): demands 8 and 8 -> 5 each; a third
     * alone on leaf 1 (capacity 10) with demand 4 gets all of it. */
    struct fabric_flow f[3] = {{.first = 0, .count = 1}, {.first = 1, .count = 1}, {.first = 2, .count = 1}};
    uint32_t leaf[] = {0, 0, 1};
    double demand[] = {8, 8, 4}, cap[] = {10, 10};
    CHECK_INT(fabric_max_min(f, 3, leaf, demand, cap, 2), 0);
    CHECK_NEAR(f[0].rate_gbps, 5, 1e-9);
    CHECK_NEAR(f[1].rate_gbps, 5, 1e-9);
    CHECK_NEAR(f[2].rate_gbps, 4, 1e-9);
    /* a flow on two leaves is held to the tighter one: A on leaves 0 and 1
     * (demand 6 each), B on leaf 1 only (demand 6), leaf 1 capacity 6:
     * A and B rise together to 0.5 (3 + 3 on leaf 1), then leaf 1 is full. */
    struct fabric_flow g[2] = {{.first = 0, .count = 2}, {.first = 2, .count = 1}};
    uint32_t gl[] = {0, 1, 1};
    double gd[] = {6, 6, 6}, gc[] = {100, 6};
    CHECK_INT(fabric_max_min(g, 2, gl, gd, gc, 2), 0);
    CHECK_NEAR(g[0].rate_gbps, 6, 1e-9); /* 0.5 x (6 + 6) */
    CHECK_NEAR(g[1].rate_gbps, 3, 1e-9);
    /* both froze at leaf 1, at half their demand; f[2] got all it asked */
    CHECK_INT(g[0].bottleneck, 1);
    CHECK_INT(g[1].bottleneck, 1);
    CHECK_NEAR(g[0].share, 0.5, 1e-12);
    CHECK_INT(f[0].bottleneck, 0);
    CHECK(f[2].bottleneck == FABRIC_NO_LEAF);
    CHECK_NEAR(f[2].share, 1.0, 0);
    CHECK_NEAR(runtime_slowdown(0.5, 400, 100), 2.5, 1e-12);
    CHECK_INT(runtime_min_span(8, 8, 8, 16), SPAN_NVLINK);
    CHECK_INT(runtime_min_span(16, 8, 8, 16), SPAN_LEAF);
    CHECK_INT(runtime_min_span(17, 8, 8, 16), SPAN_SPINE);
    CHECK_INT(runtime_min_span(72, 72, 4, 128), SPAN_NVLINK);
}

/* ---- procurement: capacity arrives at order + lead time + burn-in ---- */

static void test_delivery(void)
{
    struct node_catalog cat;
    node_catalog_init(&cat);
    struct node_type t = h100();
    node_catalog_put(&cat, &t);
    struct procurement_spec pr;
    procurement_spec_init(&pr);
    const double day_s = 86400;
    struct purchase_order o = {(sim_time)(1 * day_s * 1e6), 0, 2, {DIST_FIXED, 3 * day_s, 0}, 1 * day_s};
    procurement_add_order(&pr, &o);
    struct cluster_group g[] = {{0, 2, -1}, {0, 2, 0}};
    struct fabric_spec none = {FABRIC_NONE, 0, 0, 1, 400};
    struct cluster cl;
    struct err err;
    err_clear(&err);
    CHECK_INT(cluster_init_groups(&cl, g, 2, &cat, &none, &err), 0);
    CHECK_INT(cl.total_slots, 32);
    struct sim_models m;
    memset(&m, 0, sizeof m);
    m.procurement = &pr;
    struct sim_options opt;
    sim_options_init(&opt);
    opt.models = &m;
    /* a 32-GPU job at t=0 waits for the delivery (day 1 + 3 + 1 = day 5);
     * a 16-GPU job at t=0 runs at once for 1 day */
    struct workload w;
    workload_init(&w);
    struct job a = {1, 0, (sim_time)(day_s * 1e6), -1, 16, -1, -1, -1, 0, -1, 0, 0, 0, 0, 0};
    struct job b = {2, 0, (sim_time)(2 * day_s * 1e6), -1, 32, -1, -1, -1, 0, -1, 0, 0, 0, 0, 0};
    workload_push(&w, &a);
    workload_push(&w, &b);
    const struct policy_ops *ops;
    void *st;
    char msg[64];
    policy_registry_create("fcfs", &ops, &st, msg, sizeof msg);
    struct sim_result r;
    CHECK_INT(fixture_run_ops(&w, &cl, ops, st, &opt, &r, &err), 0);
    CHECK_INT(r.jobs[0].start_us, 0);
    CHECK_INT(r.jobs[1].start_us, (sim_time)(5 * day_s * 1e6));
    CHECK_INT(r.jobs[1].end_us, (sim_time)(7 * day_s * 1e6));
    /* capacity present: 16 GPUs for 5 days, then 32 for 2 days */
    CHECK_NEAR(r.stats.capacity_slot_us, (16 * 5 + 32 * 2) * day_s * 1e6, 1);
    CHECK_NEAR(r.stats.busy_slot_us, (16 * 1 + 32 * 2) * day_s * 1e6, 1);
    CHECK_INT(r.stats.deliveries, 1);
    sim_result_release(&r);
    ops->destroy(st);
    workload_release(&w);
    cluster_release(&cl);
    procurement_spec_release(&pr);
    node_catalog_release(&cat);
}

void suite_models(void)
{
    test_run("models Erlang C (M/M/8 FCFS, loads 0.5 0.7 0.9)", test_erlang_c);
    test_run("models Llama 3 failures", test_llama3_failures);
    test_run("models fabric max-min and runtime model", test_fabric_max_min);
    test_run("models job across leaves, and fair shares", test_across_leaves);
    test_run("models delivery and capacity present", test_delivery);
}
