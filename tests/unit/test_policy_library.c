/* The policy library: hand-computed schedules for fair-share, quotas
 * (borrowing and reclaiming), preemption (priority tiers and its limit),
 * Tiresias and SRTF on small cases; multifactor priorities to the digit;
 * placement strategies; and pack against first-fit on a real trace. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/policy_plugin.h"
#include "policies/multifactor.h"
#include "policies/placement.h"
#include "policies/registry.h"
#include "tests/unit/sim_fixture.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"
#include "traces/trace.h"

struct team_job {
    double submit_s, runtime_s;
    int slots, team;
};

/* Replays jobs (limit = runtime) on nodes x slots under spec; fills res. */
static int run_teams(const struct team_job *jobs, size_t n, int nodes, int slots, const char *spec,
                     struct sim_result *res)
{
    struct workload w;
    workload_init(&w);
    for (size_t i = 0; i < n; i++) {
        struct job j = {.id = (int64_t)i + 1,
                        .submit_us = llround(jobs[i].submit_s * 1e6),
                        .runtime_us = llround(jobs[i].runtime_s * 1e6),
                        .limit_us = llround(jobs[i].runtime_s * 1e6),
                        .slots = jobs[i].slots,
                        .user = jobs[i].team,
                        .team = jobs[i].team,
                        .status = -1,
                        .source_line = (long)i + 1,
                        .job_class = -1};
        workload_push(&w, &j);
    }
    struct cluster c;
    struct err err;
    err_clear(&err);
    cluster_init_homogeneous(&c, nodes, slots, &err);
    const struct policy_ops *ops;
    void *st;
    char msg[256];
    int rc = policy_registry_create(spec, &ops, &st, msg, sizeof msg);
    if (rc != 0) {
        printf("  %s\n", msg);
    } else {
        rc = fixture_run_ops(&w, &c, ops, st, NULL, res, &err);
        if (rc != 0)
            printf("  %s\n", err.msg);
        ops->destroy(st);
    }
    cluster_release(&c);
    workload_release(&w);
    return rc;
}

static void check_schedule(const struct team_job *jobs, size_t n, int nodes, int slots, const char *spec,
                           const double *start, const double *end, const int *preemptions)
{
    struct sim_result res;
    if (!CHECK_INT(run_teams(jobs, n, nodes, slots, spec, &res), 0))
        return;
    for (size_t i = 0; i < n; i++) {
        int ok = CHECK_NEAR((double)res.jobs[i].start_us / 1e6, start[i], 0);
        ok &= CHECK_NEAR((double)res.jobs[i].end_us / 1e6, end[i], 0);
        if (preemptions)
            ok &= CHECK_INT(res.jobs[i].preemptions, preemptions[i]);
        if (!ok)
            printf("  policy %s, job %zu\n", spec, i + 1);
    }
    sim_result_release(&res);
}

/* Fair-share on one slot. J1 team 0 runs [0,100). J2 (team 0, t=1) and J3
 * (team 1, t=2) wait. At 100 team 0 has used 100 GPU-s, team 1 none; both
 * teams are active, shares 1/2 each: F0 = 2^(-(100/100)/0.5) = 0.25, F1 =
 * 2^0 = 1, so J3 goes first: J3 [100,200), J2 [200,300). FCFS: J2 then J3. */
static void test_fairshare_schedule(void)
{
    static const struct team_job jobs[] = {{0, 100, 1, 0}, {1, 100, 1, 0}, {2, 100, 1, 1}};
    check_schedule(jobs, 3, 1, 1, "fairshare(half_life_s=0)", (double[]){0, 200, 100}, (double[]){100, 300, 200},
                   NULL);
    check_schedule(jobs, 3, 1, 1, "fcfs", (double[]){0, 100, 200}, (double[]){100, 200, 300}, NULL);
    /* shares 9:1 for team 0: F0 = 2^(-1/0.9) = 0.463 < F1 = 1: still J3 */
    check_schedule(jobs, 3, 1, 1, "fairshare(half_life_s=0,shares=0:9;1:1)", (double[]){0, 200, 100},
                   (double[]){100, 300, 200}, NULL);
}

/* Multifactor to the digit, with decay, shares and a two-level tree.
 * half_life 100 s. Team 0 finishes 1 slot x 100 s at t=0 (usage 100);
 * team 1 finishes 2 slots x 25 s at t=100 (usage 50). At t=200 they have
 * decayed to 100 * 2^-2 = 25 and 50 * 2^-1 = 25: equal usage.
 *  shares 3:1 -> S0 0.75, S1 0.25: F0 = 2^(-0.5/0.75) = 0.629961,
 *                                  F1 = 2^(-0.5/0.25) = 0.25.
 *  groups 1:0|1;1:2 (team 2 queued too, so active): S0 = S1 = 0.5 * 0.5,
 *  S2 = 0.5: F0 = F1 = 2^(-0.5/0.25) = 0.25, F2 = 2^0 = 1. */
static double priority_of(const char *params, const struct cluster_view *v, const struct policy_event *ev,
                          size_t n_ev, uint32_t job)
{
    struct params p;
    char err[256];
    if (!CHECK_INT(params_parse(&p, "multifactor", multifactor_params, multifactor_n_params, params, strlen(params),
                                err, sizeof err),
                   0))
        return -1;
    struct multifactor *m = multifactor_new(&p, err, sizeof err);
    if (!CHECK(m != NULL))
        return -1;
    for (size_t i = 0; i < n_ev; i++)
        multifactor_observe(m, &ev[i]);
    struct ordering_key keys[8];
    CHECK_INT(multifactor_keys(m, v, keys), 0);
    double prio = multifactor_priority(m, job);
    CHECK_NEAR(-keys[job].primary, prio, 0);
    multifactor_free(m);
    return prio;
}

static void test_multifactor_priorities(void)
{
    struct policy_job done0 = {.id = 1, .slots = 1, .team = 0}, done1 = {.id = 2, .slots = 2, .team = 1};
    struct policy_event ev[] = {{POLICY_EVENT_FINISHED, 0, &done0, 100000000},
                                {POLICY_EVENT_FINISHED, 100000000, &done1, 25000000}};
    struct policy_job q[] = {{.id = 3, .submit_us = 150000000, .estimate_us = 1, .slots = 4, .team = 0},
                             {.id = 4, .submit_us = 180000000, .estimate_us = 1, .slots = 2, .team = 1, .priority = 2},
                             {.id = 5, .submit_us = 190000000, .estimate_us = 1, .slots = 1, .team = 2}};
    struct cluster_view v = {.now_us = 200000000, .total_slots = 8, .queued = q, .n_queued = 2};
    const char *fs = "w_age=0,w_size=0,w_qos=0,w_fairshare=1,half_life_s=100,";
    char params[256];
    snprintf(params, sizeof params, "%sshares=0:3;1:1", fs);
    CHECK_NEAR(priority_of(params, &v, ev, 2, 0), pow(2, -0.5 / 0.75), 1e-12);
    CHECK_NEAR(priority_of(params, &v, ev, 2, 1), 0.25, 1e-12);
    v.n_queued = 3;
    snprintf(params, sizeof params, "%sgroups=1:0|1;1:2", fs);
    CHECK_NEAR(priority_of(params, &v, ev, 2, 0), 0.25, 1e-12);
    CHECK_NEAR(priority_of(params, &v, ev, 2, 1), 0.25, 1e-12);
    CHECK_NEAR(priority_of(params, &v, ev, 2, 2), 1.0, 1e-12);
    /* all factors: age 50/100 and 20/100 (age_max 100 s), size 4/8 and 2/8,
     * QoS 0 and 2/2 = 1 (highest waiting priority 2), fair-share as above
     * with no shares (S = 1/2 each): F0 = F1 = 2^(-0.5/0.5) = 0.5.
     *   J3: 1000 * 0.5 + 100 * 0.5 + 10000 * 0.5 + 1000 * 0 = 5550
     *   J4: 1000 * 0.2 + 100 * 0.25 + 10000 * 0.5 + 1000 * 1 = 6225 */
    v.n_queued = 2;
    const char *all = "w_age=1000,w_size=100,w_fairshare=10000,w_qos=1000,age_max_s=100,half_life_s=100";
    CHECK_NEAR(priority_of(all, &v, ev, 2, 0), 5550, 1e-9);
    CHECK_NEAR(priority_of(all, &v, ev, 2, 1), 6225, 1e-9);
    /* no decay (half_life 0): usage 100 vs 50 of 150: F0 = 2^(-(2/3)/0.5), F1 = 2^(-(1/3)/0.5) */
    const char *flat = "w_age=0,w_size=0,w_qos=0,w_fairshare=1,half_life_s=0";
    CHECK_NEAR(priority_of(flat, &v, ev, 2, 0), pow(2, -4.0 / 3), 1e-12);
    CHECK_NEAR(priority_of(flat, &v, ev, 2, 1), pow(2, -2.0 / 3), 1e-12);
}

/* Quotas on one node of 8 GPUs, teams 0 and 1 guaranteed 4 each.
 *   J1 team 0, 4 GPUs, t=0, 100 s: fits its quota, [0,100).
 *   J2 team 0, 4 GPUs, t=1, 100 s: team 0 would have 8 > 4; idle slots:
 *      borrows, starts at 1.
 *   J3 team 1, 4 GPUs, t=10, 50 s: fits its quota; no free slots: reclaims
 *      by preempting the borrower J2 (team 0 at 8 > 4). J3 [10,60).
 *   J2 lost its 9 s (no checkpoint yet: training checkpoints every 30 min),
 *      waits (team 0 at its guarantee, no idle slots) until J3 ends: [60,160).
 * borrow=0: J2 is held until team 0 is back under its quota (J1 ends at
 *   100): [100,200); J3 starts at once on the idle slots.
 * reclaim=0: J3 waits for J1 to end: [100,150). */
static void test_quota_schedule(void)
{
    static const struct team_job jobs[] = {{0, 100, 4, 0}, {1, 100, 4, 0}, {10, 50, 4, 1}};
    check_schedule(jobs, 3, 1, 8, "fcfs+quota(guarantee=0:4;1:4)", (double[]){0, 1, 10}, (double[]){100, 160, 60},
                   (int[]){0, 1, 0});
    check_schedule(jobs, 3, 1, 8, "fcfs+quota(guarantee=0:4;1:4,borrow=0)", (double[]){0, 100, 10},
                   (double[]){100, 200, 60}, (int[]){0, 0, 0});
    check_schedule(jobs, 3, 1, 8, "fcfs+quota(guarantee=0:4;1:4,reclaim=0)", (double[]){0, 1, 100},
                   (double[]){100, 101, 150}, (int[]){0, 0, 0});
}

/* Priority tiers on one node of 4 slots; team 1 is tier 1, team 0 tier 0;
 * a job is preempted at most once.
 *   J1 team 0, 4 slots, t=0, 100 s: [0, ...).
 *   J2 team 1, 2 slots, t=10, 20 s: higher tier, no free slots: preempts
 *      J1 (it frees 4), runs [10,30). J1 lost its 10 s, waits for 4 slots.
 *   At 30 J1 restarts from scratch: [30,130).
 *   J3 team 1, 4 slots, t=40, 10 s: J1 was preempted once already, so it
 *      is no victim: J3 waits for it, [130,140).
 * Without the limit J3 preempts J1 again at 40: J3 [40,50), J1 [50,150). */
static void test_preemption_schedule(void)
{
    static const struct team_job jobs[] = {{0, 100, 4, 0}, {10, 20, 2, 1}, {40, 10, 4, 1}};
    check_schedule(jobs, 3, 1, 4, "fcfs+preempt(team_tier=1:1,max_preemptions=1)", (double[]){0, 10, 130},
                   (double[]){130, 30, 140}, (int[]){1, 0, 0});
    check_schedule(jobs, 3, 1, 4, "fcfs+preempt(team_tier=1:1,max_preemptions=5)", (double[]){0, 10, 40},
                   (double[]){150, 30, 50}, (int[]){2, 0, 0});
    /* min_run_s=15: at 10 J1 has run 10 s only, so J2 waits for the next
     * pass, at J3's arrival (40): J1 has run 40 s now and is preempted; J2
     * [40,60); J3 does not fit beside it and J1 (requeued) is first in
     * line at 60: J1 [60,160), which nothing may preempt for 15 s, and no
     * pass comes before its end: J3 [160,170). */
    check_schedule(jobs, 3, 1, 4, "fcfs+preempt(team_tier=1:1,min_run_s=15)", (double[]){0, 40, 160},
                   (double[]){160, 60, 170}, (int[]){1, 0, 0});
}

/* Tiresias on one slot, one threshold at 50 GPU-s. J1 (200 s) runs from 0;
 * J2 (50 s) arrives at 100, when J1 has attained 100 GPU-s (queue 1) and J2
 * none (queue 0): J2 preempts J1, [100,150); J1 restarts at 150 (its 100 s
 * lost) and ends at 350.
 * SRTF on one slot: J1 (100 s) from 0; J2 (20 s) at 10: J1 has 90 s left >
 * 1.1 x 20: preempted; J2 [10,30); J1 [30,130). */
static void test_tiresias_and_srtf(void)
{
    static const struct team_job t[] = {{0, 200, 1, 0}, {100, 50, 1, 0}};
    check_schedule(t, 2, 1, 1, "tiresias(thresholds_gpu_s=50)", (double[]){0, 100}, (double[]){350, 150},
                   (int[]){1, 0});
    static const struct team_job s[] = {{0, 100, 1, 0}, {10, 20, 1, 0}};
    check_schedule(s, 2, 1, 1, "srtf", (double[]){0, 10}, (double[]){130, 30}, (int[]){1, 0});
    /* margin 5: 90 s left is not more than 6 x 20 s: no preemption */
    check_schedule(s, 2, 1, 1, "srtf(margin=5)", (double[]){0, 100}, (double[]){100, 120}, (int[]){0, 0});
}

/* One pass of a fresh instance of spec over view v, into out (room for 4
 * decisions): 0, or -1 (the failure checked and said). */
static int decide_once(const char *spec, const struct cluster_view *v, struct policy_decisions *out)
{
    const struct policy_ops *ops;
    void *st;
    char msg[256];
    if (!CHECK_INT(policy_registry_create(spec, &ops, &st, msg, sizeof msg), 0))
        return -1;
    int rc = CHECK_INT(ops->decide(st, v, out), 0) ? 0 : -1;
    ops->destroy(st);
    return rc;
}

/* The PREEMPTs a policy decides on one view at t = 1000 s: one node of
 * one slot, held by R (started at r_start_s for r_estimate_s, no service
 * before), and Q waiting (submitted at q_submit_s, asking 100 s, with
 * q_attained_s of service from an attempt before it was requeued). A
 * waiting job's tier is taken only when a pass would preempt for it
 * (queue_policy's queued_tier), so this reads it where it is used. */
static int preempts_on_view(const char *spec, double r_start_s, double r_estimate_s, double q_submit_s,
                            double q_attained_s)
{
    struct policy_node node = {0, POLICY_NODE_UP, 1, 0, 0, 0, 0, 0, 0, 0};
    struct policy_running r = {.job = {.id = 1, .estimate_us = llround(r_estimate_s * 1e6), .slots = 1, .user = -1,
                                       .team = -1, .reserved_us = -1},
                               .start_us = llround(r_start_s * 1e6),
                               .expected_end_us = llround((r_start_s + r_estimate_s) * 1e6),
                               .alloc_count = 1};
    struct policy_alloc alloc = {0, 1, 0, 0};
    struct policy_job q = {.id = 2, .submit_us = llround(q_submit_s * 1e6), .estimate_us = 100000000, .slots = 1,
                           .user = -1, .team = -1, .reserved_us = -1, .attained_us = llround(q_attained_s * 1e6),
                           .preemptions = 1};
    uint32_t by_end = 0;
    struct cluster_view v = {.now_us = 1000000000, .nodes = &node, .n_nodes = 1, .running = &r, .n_running = 1,
                             .running_by_end = &by_end, .allocs = &alloc, .queued = &q, .n_queued = 1,
                             .total_slots = 1};
    struct policy_alloc allocs[4];
    struct policy_decision items[4];
    struct policy_decisions out = {items, 0, 4, allocs, 0, 4};
    if (decide_once(spec, &v, &out) != 0)
        return -1;
    int preempts = 0;
    for (uint32_t i = 0; i < out.n; i++)
        preempts += items[i].kind == POLICY_PREEMPT;
    return preempts;
}

/* The job SRTF starts on one free slot with two waiting: Q1 asks 100 s
 * and ran 60 before it was requeued (40 s left), Q2 asks 50 s and never
 * ran. SRTF orders them by what is left (Q1 first), where SJF would take
 * the shorter request (Q2). */
static void test_srtf_orders_by_remaining(void)
{
    struct policy_node node = {0, POLICY_NODE_UP, 1, 1, 0, 0, 0, 0, 0, 0};
    uint32_t with_free = 0;
    struct policy_job q[2] = {{.id = 2, .estimate_us = 100000000, .slots = 1, .user = -1, .team = -1,
                               .reserved_us = -1, .attained_us = 60000000, .preemptions = 1},
                              {.id = 3, .submit_us = 1, .estimate_us = 50000000, .slots = 1, .user = -1,
                               .team = -1, .reserved_us = -1}};
    struct cluster_view v = {.now_us = 1000000000, .nodes = &node, .n_nodes = 1, .nodes_with_free = &with_free,
                             .n_nodes_with_free = 1, .queued = q, .n_queued = 2, .total_slots = 1, .free_slots = 1};
    const char *specs[] = {"srtf", "sjf"};
    const int64_t want[] = {2, 3};
    for (int k = 0; k < 2; k++) {
        struct policy_alloc allocs[4];
        struct policy_decision items[4];
        struct policy_decisions out = {items, 0, 4, allocs, 0, 4};
        if (decide_once(specs[k], &v, &out) == 0 && CHECK_INT(out.n, 1))
            CHECK_INT(items[0].job_id, want[k]);
    }
}

/* SRTF reads a waiting job's remaining time net of the service it
 * attained: Q asks 100 s and ran 50 (50 s left), R has 80 s left (it ran
 * 10 of 90), more than 1.1 x 50, so Q preempts R; by its request alone
 * (100 s) it would not, nor with 20 s of service (80 s left). Tiresias
 * (one threshold, 50 GPU-s): R has attained 60 GPU-s (queue 1), and so
 * has Q, which has waited 200 s since its submit: with starve_factor 2
 * (over 2 x 60 s) it starved back to queue 0 and preempts R; with 5 (300
 * s) it has not, and does not. */
static void test_waiting_tier(void)
{
    CHECK_INT(preempts_on_view("srtf", 990, 90, 0, 50), 1);
    CHECK_INT(preempts_on_view("srtf", 990, 90, 0, 20), 0);
    CHECK_INT(preempts_on_view("srtf", 990, 90, 0, 0), 0);
    CHECK_INT(preempts_on_view("tiresias(thresholds_gpu_s=50,starve_factor=2)", 940, 1000, 800, 60), 1);
    CHECK_INT(preempts_on_view("tiresias(thresholds_gpu_s=50,starve_factor=5)", 940, 1000, 800, 60), 0);
    CHECK_INT(preempts_on_view("tiresias(thresholds_gpu_s=50)", 940, 1000, 800, 60), 0);
}

/* Placement strategies on one view: nodes 0..3 with 2, 8, 5, 3 free of 8. */
static void test_placement_strategies(void)
{
    struct policy_node nodes[4];
    int32_t free_slots[4] = {2, 8, 5, 3};
    uint32_t with_free[4] = {0, 1, 2, 3};
    for (int i = 0; i < 4; i++)
        nodes[i] = (struct policy_node){i >= 2, POLICY_NODE_UP, 8, free_slots[i], i, i / 2, 0, 0, 0, 0};
    double speed[2 * POLICY_JOB_CLASSES] = {1, 1, 1, 2, 2, 2};
    struct cluster_view v = {.nodes = nodes, .n_nodes = 4, .nodes_with_free = with_free, .n_nodes_with_free = 4,
                             .total_slots = 32, .free_slots = 18, .type_speed = speed, .n_types = 2};
    struct policy_alloc allocs[16];
    struct policy_decision items[4];
    struct policy_decisions out = {items, 0, 4, allocs, 0, 16};
    static const struct {
        const char *name;
        int32_t slots;
        int32_t want_node[4];
        int32_t want_slots[4];
    } cases[] = {
        {"first-fit", 3, {1}, {3}},
        {"best-fit", 3, {3}, {3}},
        {"spread", 3, {1}, {3}},
        {"pack", 3, {3}, {3}},
        {"gavel", 3, {3}, {3}}, /* type 1 is twice as fast: its fullest node */
        {"first-fit", 12, {0, 1, 2}, {2, 8, 2}},
        {"best-fit", 12, {0, 3, 2, 1}, {2, 3, 5, 2}},
        {"spread", 12, {1, 2}, {8, 4}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        struct placement p;
        placement_init(&p);
        CHECK_INT(placement_parse(cases[k].name, strlen(cases[k].name), &p.strategy), 0);
        CHECK_INT(placement_begin(&p, &v), 0);
        struct policy_job job = {.id = 1, .slots = cases[k].slots};
        uint32_t first, count;
        out.n_allocs = 0;
        CHECK_INT(placement_place(&p, &v, &job, &out, &first, &count), 0);
        int32_t sum = 0;
        for (uint32_t a = 0; a < count; a++) {
            sum += allocs[first + a].slots;
            if (!CHECK_INT(allocs[first + a].node, cases[k].want_node[a]) ||
                !CHECK_INT(allocs[first + a].slots, cases[k].want_slots[a]))
                printf("  %s, %d slots, allocation %u\n", cases[k].name, cases[k].slots, a);
        }
        CHECK_INT(sum, cases[k].slots);
        /* gang: more than is free places nothing */
        job.slots = 19;
        CHECK_INT(placement_place(&p, &v, &job, &out, &first, &count), 1);
        CHECK_INT(count, 0);
        placement_release(&p);
    }
}

/* Distinct NVLink domains and leaves of each multi-node start. */
struct spread_log {
    double domains, leaves;
    long jobs;
};

static void log_spread(void *ctx, const struct cluster_view *v, const struct policy_decisions *d)
{
    struct spread_log *log = ctx;
    for (uint32_t k = 0; k < d->n; k++) {
        const struct policy_decision *x = &d->items[k];
        if (x->kind != POLICY_START || x->alloc_count < 2)
            continue;
        int32_t seen_d[64], seen_l[64];
        int nd = 0, nl = 0;
        for (uint32_t a = 0; a < x->alloc_count; a++) {
            const struct policy_node *n = &v->nodes[d->allocs[x->alloc_first + a].node];
            int found = 0;
            for (int i = 0; i < nd; i++)
                found |= seen_d[i] == n->nvlink_domain;
            if (!found && nd < 64)
                seen_d[nd++] = n->nvlink_domain;
            found = 0;
            for (int i = 0; i < nl; i++)
                found |= seen_l[i] == n->leaf;
            if (!found && nl < 64)
                seen_l[nl++] = n->leaf;
        }
        log->domains += nd;
        log->leaves += nl;
        log->jobs++;
    }
}

/* On a fragmented cluster (a real trace keeps it busy), pack needs fewer
 * NVLink domains and leaves per multi-node job than first-fit. KTH SP2,
 * 100 processors as 25 nodes x 4 GPUs, NVLink domains of 2 nodes, leaves
 * of 5 nodes; the first 10,000 jobs. */
static void test_pack_beats_first_fit_on_real_trace(void)
{
    const char *path = test_shared_trace("KTH-SP2-1996-2.1-cln.swf.gz");
    if (!path) {
        test_skip("KTH-SP2-1996-2.1-cln.swf.gz not found in ../shared/traces");
        return;
    }
    struct workload w;
    struct diag_list d;
    struct err err;
    workload_init(&w);
    diag_list_init(&d, 10);
    err_clear(&err);
    if (!CHECK_INT(trace_read(path, TRACE_AUTO, SWF_REPLAY, &w, &d, &err), 0))
        return;
    if (w.n > 10000)
        w.n = 10000; /* sorted by submit: a prefix is a shorter trace */
    struct cluster c;
    cluster_init_homogeneous(&c, 25, 4, &err);
    for (uint32_t i = 0; i < c.n_nodes; i++) {
        c.nodes[i].nvlink_domain = (int32_t)(i / 2 * 2);
        c.nodes[i].leaf = (int32_t)(i / 5);
    }
    const char *specs[] = {"fcfs+easy+pack", "fcfs+easy+first-fit"};
    struct spread_log logs[2];
    for (int s = 0; s < 2; s++) {
        memset(&logs[s], 0, sizeof logs[s]);
        struct sim_options opt;
        sim_options_init(&opt);
        opt.on_pass = log_spread;
        opt.hook_ctx = &logs[s];
        const struct policy_ops *ops;
        void *st;
        char msg[128];
        policy_registry_create(specs[s], &ops, &st, msg, sizeof msg);
        struct sim_result res;
        CHECK_INT(fixture_run_ops(&w, &c, ops, st, &opt, &res, &err), 0);
        sim_result_release(&res);
        ops->destroy(st);
    }
    double pd = logs[0].domains / (double)logs[0].jobs, pl = logs[0].leaves / (double)logs[0].jobs;
    double fd = logs[1].domains / (double)logs[1].jobs, fl = logs[1].leaves / (double)logs[1].jobs;
    printf("info: KTH-SP2 10,000 jobs, multi-node starts: pack %.3f domains %.3f leaves per job (%ld jobs); "
           "first-fit %.3f domains %.3f leaves (%ld jobs)\n",
           pd, pl, logs[0].jobs, fd, fl, logs[1].jobs);
    CHECK(logs[0].jobs > 1000 && logs[1].jobs > 1000);
    CHECK(pd < fd);
    CHECK(pl < fl);
    cluster_release(&c);
    workload_release(&w);
    diag_list_release(&d);
}

static void test_spec_errors(void)
{
    const struct policy_ops *ops;
    void *st;
    char msg[512];
    CHECK_INT(policy_registry_create("fcfs+easy+quota(guarantee=0:x)", &ops, &st, msg, sizeof msg), -1);
    CHECK(strstr(msg, "parameter 'guarantee' of 'quota'") != NULL);
    CHECK_INT(policy_registry_create("fcfs+sprad", &ops, &st, msg, sizeof msg), -1);
    CHECK(strstr(msg, "did you mean 'spread'?") != NULL);
    CHECK_INT(policy_registry_create("easy+fcfs", &ops, &st, msg, sizeof msg), -1);
    CHECK(strstr(msg, "must start with an ordering") != NULL);
    CHECK_INT(policy_registry_create("fcfs(x=1)", &ops, &st, msg, sizeof msg), -1);
    CHECK(strstr(msg, "'fcfs' takes no parameters") != NULL);
    CHECK_INT(policy_registry_create("fairshare(w_age=1,w_age=2)", &ops, &st, msg, sizeof msg), -1);
    CHECK(strstr(msg, "given twice") != NULL);
    CHECK_INT(policy_registry_create("fcfs+easy+(", &ops, &st, msg, sizeof msg), -1);
    CHECK_INT(policy_plugin_is_path("./x.so"), 1);
    CHECK_INT(policy_plugin_is_path("x.so:a=1"), 1);
    CHECK_INT(policy_plugin_is_path("fairshare(groups=1:0|1)"), 0);
    CHECK_INT(policy_plugin_is_path("fcfs+easy"), 0);
}

void suite_policy_library(void)
{
    test_run("policy library fair-share schedule", test_fairshare_schedule);
    test_run("policy library multifactor priorities", test_multifactor_priorities);
    test_run("policy library quota borrow and reclaim", test_quota_schedule);
    test_run("policy library preemption tiers and limit", test_preemption_schedule);
    test_run("policy library tiresias and srtf", test_tiresias_and_srtf);
    test_run("policy library: a waiting job's tier, SRTF's net of its service, Tiresias' after starving",
             test_waiting_tier);
    test_run("policy library: SRTF orders the waiting by what is left of them, not by their requests",
             test_srtf_orders_by_remaining);
    test_run("policy library placement strategies", test_placement_strategies);
    test_run("policy library pack beats first-fit on a real trace", test_pack_beats_first_fit_on_real_trace);
    test_run("policy library spec errors", test_spec_errors);
}
