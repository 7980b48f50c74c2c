/* Node shapes (policy ABI 3: policy_job.nodes), end to end: every placement
 * strategy on a hand-made view, EASY keeping a shaped head's nodes from
 * jobs that would outlast its shadow, the checker's rule, the native
 * trace's `nodes` key, and replays under every kind of policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/policy_host.h"
#include "policies/placement.h"
#include "policies/registry.h"
#include "tests/unit/sim_fixture.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"
#include "traces/jsonl.h"

#define S(x) ((sim_time)(x) * 1000000)

/* Four up nodes of 8 slots with 2, 6, 8 and 8 free. */
static struct policy_node four_nodes[4] = {{0, POLICY_NODE_UP, 8, 2, -1, -1, -1, 0, 0, 0},
                                           {0, POLICY_NODE_UP, 8, 6, -1, -1, -1, 0, 0, 0},
                                           {0, POLICY_NODE_UP, 8, 8, -1, -1, -1, 0, 0, 0},
                                           {0, POLICY_NODE_UP, 8, 8, -1, -1, -1, 0, 0, 0}};

/* Places one job (slots, nodes) on the four nodes under strategy; writes
 * the chosen nodes and their slots as "node:slots,..." ("none" if it does
 * not fit). */
static void place_one(enum placement_strategy strategy, int32_t slots, int32_t nodes, char *got, size_t len)
{
    uint32_t with_free[4] = {0, 1, 2, 3};
    struct cluster_view v = {.nodes = four_nodes, .n_nodes = 4, .nodes_with_free = with_free,
                             .n_nodes_with_free = 4, .total_slots = 32, .free_slots = 24};
    struct policy_job job = {.id = 1, .slots = slots, .user = -1, .team = -1, .reserved_us = -1, .nodes = nodes};
    struct policy_decision items[1];
    struct policy_alloc allocs[40];
    struct policy_decisions out = {items, 0, 1, allocs, 0, 40};
    struct placement p;
    placement_init(&p);
    p.strategy = strategy;
    uint32_t first, count;
    size_t o = 0;
    got[0] = '\0';
    if (placement_begin(&p, &v) != 0 || placement_place(&p, &v, &job, &out, &first, &count) != 0) {
        snprintf(got, len, "none");
    } else {
        for (uint32_t k = 0; k < count && o < len; k++)
            o += (size_t)snprintf(got + o, len - o, "%s%d:%d", k ? "," : "", allocs[first + k].node,
                                  allocs[first + k].slots);
    }
    placement_release(&p);
}

static void test_shape_placement(void)
{
    static const struct {
        enum placement_strategy strategy;
        int32_t slots, nodes;
        const char *want;
    } cases[] = {
        /* one node: the strategy's single-node choice */
        {PLACEMENT_PACK, 4, 1, "1:4"},
        {PLACEMENT_BEST_FIT, 4, 1, "1:4"},
        {PLACEMENT_FIRST_FIT, 4, 1, "1:4"},
        {PLACEMENT_SPREAD, 4, 1, "2:4"},
        {PLACEMENT_GAVEL, 4, 1, "1:4"},
        /* no node has 9: a shaped job of one node never spans */
        {PLACEMENT_PACK, 9, 1, "none"},
        {PLACEMENT_FIRST_FIT, 9, 1, "none"},
        /* pooled, the same 9 spans nodes */
        {PLACEMENT_PACK, 9, 0, "2:8,3:1"},
        /* two nodes of 4: fullest first, by index, emptiest first */
        {PLACEMENT_PACK, 8, 2, "1:4,2:4"},
        {PLACEMENT_BEST_FIT, 8, 2, "1:4,2:4"},
        {PLACEMENT_FIRST_FIT, 8, 2, "1:4,2:4"},
        {PLACEMENT_SPREAD, 8, 2, "2:4,3:4"},
        /* three nodes of 2: node 0's last two count */
        {PLACEMENT_PACK, 6, 3, "0:2,1:2,2:2"},
        {PLACEMENT_SPREAD, 6, 3, "2:2,3:2,1:2"},
        /* two whole nodes: only nodes 2 and 3 */
        {PLACEMENT_PACK, 16, 2, "2:8,3:8"},
        {PLACEMENT_FIRST_FIT, 16, 2, "2:8,3:8"},
        /* three whole nodes: 24 slots are free, but not in that shape */
        {PLACEMENT_PACK, 24, 3, "none"},
        {PLACEMENT_SPREAD, 24, 3, "none"},
        /* pooled, the same 24 fit */
        {PLACEMENT_PACK, 24, 0, "2:8,3:8,1:6,0:2"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char got[128];
        place_one(cases[c].strategy, cases[c].slots, cases[c].nodes, got, sizeof got);
        if (strcmp(got, cases[c].want) != 0)
            printf("  %s %d GPUs on %d nodes: got %s, want %s\n", placement_name(cases[c].strategy), cases[c].slots,
                   cases[c].nodes, got, cases[c].want);
        CHECK_STR(got, cases[c].want);
    }
}

/* Two nodes of 8. Node 0 runs a 6-GPU job until t=100, node 1 one until
 * t=200. The head asks for 8 GPUs on one node: its shadow is t=100, on
 * node 0. A 2-GPU job running past t=100 must stay off node 0 when the head
 * is shaped; pooled, the textbook extra-slots rule lets it onto node 0
 * (there are 10 slots at the shadow for the head's 8). */
static const char *easy_backfill_node(int32_t head_nodes, int32_t *node)
{
    struct policy_node nodes[2] = {{0, POLICY_NODE_UP, 8, 2, -1, -1, -1, 0, 0, 0},
                                   {0, POLICY_NODE_UP, 8, 2, -1, -1, -1, 0, 0, 0}};
    uint32_t with_free[2] = {0, 1};
    struct policy_running running[2] = {
        {.job = {.id = 10, .slots = 6, .user = -1, .team = -1, .reserved_us = -1}, .start_us = 0,
         .expected_end_us = S(100), .alloc_first = 0, .alloc_count = 1},
        {.job = {.id = 11, .slots = 6, .user = -1, .team = -1, .reserved_us = -1}, .start_us = 0,
         .expected_end_us = S(200), .alloc_first = 1, .alloc_count = 1}};
    struct policy_alloc held[2] = {{0, 6, 0, 0}, {1, 6, 0, 0}};
    uint32_t by_end[2] = {0, 1};
    struct policy_job queued[2] = {
        {.id = 1, .submit_us = 0, .estimate_us = S(100), .slots = 8, .user = -1, .team = -1, .reserved_us = -1,
         .nodes = head_nodes},
        {.id = 2, .submit_us = 1, .estimate_us = S(1000), .slots = 2, .user = -1, .team = -1, .reserved_us = -1}};
    struct cluster_view v = {.now_us = S(10), .nodes = nodes, .n_nodes = 2, .nodes_with_free = with_free,
                             .n_nodes_with_free = 2, .total_slots = 16, .free_slots = 4, .queued = queued,
                             .n_queued = 2, .running = running, .running_by_end = by_end, .n_running = 2,
                             .allocs = held};
    const struct policy_ops *ops;
    void *state;
    char msg[256];
    if (policy_registry_create("fcfs+easy", &ops, &state, msg, sizeof msg) != 0)
        return "cannot create fcfs+easy";
    struct policy_decision items[8];
    struct policy_alloc allocs[24];
    struct policy_decisions out = {items, 0, 8, allocs, 0, 24};
    const char *bad = ops->decide(state, &v, &out) != 0 ? "decide failed" : NULL;
    *node = -1;
    for (uint32_t k = 0; !bad && k < out.n; k++)
        if (items[k].kind == POLICY_START && items[k].job_id == 2 && items[k].alloc_count == 1)
            *node = allocs[items[k].alloc_first].node;
        else if (items[k].kind == POLICY_RESERVE && items[k].job_id == 1 && items[k].at_us != S(100))
            bad = "the head's shadow is not t=100";
    ops->destroy(state);
    return bad;
}

static void test_shape_easy_keeps_nodes(void)
{
    int32_t node;
    const char *bad = easy_backfill_node(1, &node);
    if (bad)
        printf("  shaped head: %s\n", bad);
    CHECK(bad == NULL);
    CHECK_INT(node, 1); /* off the node kept for the head */
    bad = easy_backfill_node(0, &node);
    if (bad)
        printf("  pooled head: %s\n", bad);
    CHECK(bad == NULL);
    CHECK_INT(node, 0); /* pooled: the extra slots allow it, best fit ties go to node 0 */
}

/* The one checker: a shaped job gets exactly its nodes, each slots / n. */
static void test_shape_checker_rule(void)
{
    struct policy_node nodes[3] = {{0, POLICY_NODE_UP, 8, 8, -1, -1, -1, 0, 0, 0},
                                   {0, POLICY_NODE_UP, 8, 8, -1, -1, -1, 0, 0, 0},
                                   {0, POLICY_NODE_UP, 8, 8, -1, -1, -1, 0, 0, 0}};
    uint32_t with_free[3] = {0, 1, 2};
    struct policy_job queued[1] = {{.id = 1, .slots = 8, .user = -1, .team = -1, .reserved_us = -1, .nodes = 2}};
    struct cluster_view v = {.nodes = nodes, .n_nodes = 3, .nodes_with_free = with_free, .n_nodes_with_free = 3,
                             .total_slots = 24, .free_slots = 24, .queued = queued, .n_queued = 1};
    struct policy_decision items[1];
    struct policy_alloc allocs[4];
    struct policy_decisions d = {items, 0, 1, allocs, 0, 4};
    struct policy_host h;
    memset(&h, 0, sizeof h);
    static const struct {
        struct policy_alloc a[4];
        uint32_t n;
        const char *rule;
    } cases[] = {
        {{{0, 4, 0, 0}, {2, 4, 0, 0}}, 2, NULL},
        {{{0, 8, 0, 0}}, 1, "a job of n nodes did not get n nodes"},
        {{{0, 2, 0, 0}, {1, 2, 0, 0}, {2, 4, 0, 0}}, 3, "a job of n nodes did not get n nodes"},
        {{{0, 5, 0, 0}, {1, 3, 0, 0}}, 2, "a job of n nodes did not get slots / n on each"},
        {{{1, 4, 0, 0}, {1, 4, 0, 0}}, 2, "a job of n nodes did not get n nodes"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        d.n = 0;
        d.n_allocs = cases[c].n;
        memcpy(allocs, cases[c].a, sizeof cases[c].a);
        items[d.n++] = (struct policy_decision){POLICY_START, 0, 1, 0, 0, cases[c].n};
        uint32_t bad;
        const char *rule = policy_host_check(&h, &v, &d, &bad);
        if (!cases[c].rule)
            CHECK(rule == NULL);
        else
            CHECK(rule && strcmp(rule, cases[c].rule) == 0);
    }
    policy_host_close(&h);
}

/* On 4 nodes x 8: four 6-GPU jobs leave 2 free on each node. Job 5 (4
 * GPUs on one node) must wait for t=100 although 8 GPUs are free; pooled,
 * job 6 (the same 4 GPUs) starts at once across two nodes. Job 7 (three
 * whole nodes) waits for t=100 too; job 8 (5 nodes) can never run here. */
static const char shaped_trace[] = "{\"id\":1,\"submit_s\":0,\"runtime_s\":100,\"limit_s\":100,\"gpus\":6,\"nodes\":1}\n"
                                   "{\"id\":2,\"submit_s\":0,\"runtime_s\":100,\"limit_s\":100,\"gpus\":6,\"nodes\":1}\n"
                                   "{\"id\":3,\"submit_s\":0,\"runtime_s\":100,\"limit_s\":100,\"gpus\":6,\"nodes\":1}\n"
                                   "{\"id\":4,\"submit_s\":0,\"runtime_s\":100,\"limit_s\":100,\"gpus\":6,\"nodes\":1}\n"
                                   "{\"id\":5,\"submit_s\":1,\"runtime_s\":50,\"limit_s\":50,\"gpus\":4,\"nodes\":1}\n"
                                   "{\"id\":6,\"submit_s\":2,\"runtime_s\":50,\"limit_s\":50,\"gpus\":4}\n"
                                   "{\"id\":7,\"submit_s\":3,\"runtime_s\":50,\"limit_s\":50,\"gpus\":24,\"nodes\":3}\n"
                                   "{\"id\":8,\"submit_s\":4,\"runtime_s\":50,\"limit_s\":50,\"gpus\":10,\"nodes\":5}\n";

static void test_shape_replay(void)
{
    struct workload w;
    if (fixture_read_jsonl(&w, shaped_trace) != 0) {
        CHECK(0);
        return;
    }
    CHECK_INT(w.jobs[0].nodes, 1);
    CHECK_INT(w.jobs[5].nodes, 0);
    CHECK_INT(w.jobs[6].nodes, 3);
    struct cluster c;
    struct err e;
    err_clear(&e);
    if (cluster_init_homogeneous(&c, 4, 8, &e) != 0) {
        workload_release(&w);
        CHECK(0);
        return;
    }
    static const char *const specs[] = {"fcfs+easy", "fcfs+easy+spread", "fcfs+greedy+first-fit", "fcfs+conservative",
                                        "sjf+easy+gavel", "tiresias", "srtf", "fairshare+easy+best-fit"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        const struct policy_ops *ops;
        void *state;
        char msg[256];
        if (policy_registry_create(specs[k], &ops, &state, msg, sizeof msg) != 0) {
            CHECK(0);
            continue;
        }
        struct sim_result r;
        struct err err;
        err_clear(&err);
        int rc = fixture_run_ops(&w, &c, ops, state, NULL, &r, &err);
        ops->destroy(state);
        if (rc != 0) {
            printf("  %s: %s\n", specs[k], err.msg);
            CHECK(0);
            continue;
        }
        /* every policy: the impossible shape is too big, the rest run in theirs */
        CHECK_INT(r.jobs[7].outcome, SIM_JOB_SKIPPED_TOO_BIG);
        for (int j = 0; j < 7; j++)
            CHECK_INT(r.jobs[j].outcome, SIM_JOB_COMPLETED);
        CHECK_INT(r.jobs[4].n_nodes, 1);
        CHECK_INT(r.jobs[6].n_nodes, 3);
        if (strcmp(specs[k], "fcfs+easy") == 0 || strcmp(specs[k], "fcfs+greedy+first-fit") == 0) {
            CHECK_INT(r.jobs[4].start_us, S(100)); /* 8 GPUs free at t=1, but 2 per node */
            CHECK_INT(r.jobs[5].start_us, S(2));   /* pooled: across two nodes at once */
            CHECK_INT(r.jobs[5].n_nodes, 2);
            CHECK_INT(r.jobs[6].start_us, S(100));
        }
        sim_result_release(&r);
    }
    cluster_release(&c);
    workload_release(&w);
}


/* A fractional job placed while EASY keeps node 0 for a shaped head must
 * not join node 0's shared GPU either: it opens a GPU on node 1. */
static void test_shape_share_avoids_kept_nodes(void)
{
    struct policy_node nodes[2] = {{0, POLICY_NODE_UP, 8, 7, -1, -1, -1, 0, 0, 1},
                                   {0, POLICY_NODE_UP, 8, 8, -1, -1, -1, 0, 1, 0}};
    struct policy_shared_gpu shared[1] = {{0, 0, 500, 0}};
    uint32_t with_free[2] = {0, 1};
    struct cluster_view v = {.nodes = nodes, .n_nodes = 2, .nodes_with_free = with_free, .n_nodes_with_free = 2,
                             .total_slots = 16, .free_slots = 15, .shared = shared, .n_shared = 1};
    struct policy_job job = {.id = 1, .slots = 1, .user = -1, .team = -1, .reserved_us = -1, .milli = 300};
    struct policy_decision items[1];
    struct policy_alloc allocs[4];
    struct policy_decisions out = {items, 0, 1, allocs, 0, 4};
    uint8_t kept[2] = {1, 0};
    for (int avoid = 0; avoid <= 1; avoid++) {
        struct placement p;
        placement_init(&p);
        uint32_t first, count;
        out.n_allocs = 0;
        CHECK_INT(placement_begin(&p, &v), 0);
        p.avoid = avoid ? kept : NULL;
        CHECK_INT(placement_place(&p, &v, &job, &out, &first, &count), 0);
        CHECK_INT(allocs[first].node, avoid ? 1 : 0); /* without the mask it joins node 0's GPU */
        placement_release(&p);
    }
}

/* srtf and a short job that needs 8 GPUs on one node, on 2 nodes of 8 that
 * each run a preemptible 4-GPU job and a 4-GPU job preempted too often to
 * be preempted again. Preempting the two preemptible ones frees 8 GPUs, but
 * 4 + 4: a shaped job could not start, so nothing is preempted for it; a
 * pooled one takes the 8 over two nodes. */
static void shaped_preemption(int32_t head_nodes, uint32_t *preempts, uint32_t *starts)
{
    struct policy_node nodes[2] = {{0, POLICY_NODE_UP, 8, 0, -1, -1, -1, 0, 0, 0},
                                   {0, POLICY_NODE_UP, 8, 0, -1, -1, -1, 0, 0, 0}};
    uint32_t with_free[1] = {0};
    struct policy_running running[4];
    struct policy_alloc held[4];
    uint32_t by_end[4] = {0, 1, 2, 3};
    for (int k = 0; k < 4; k++) {
        running[k] = (struct policy_running){.job = {.id = 10 + k, .submit_us = 0, .estimate_us = S(100000), .slots = 4,
                                                     .user = -1, .team = -1, .reserved_us = -1,
                                                     .preemptions = k < 2 ? 0 : 99},
                                             .start_us = S(1), .expected_end_us = S(100001), .alloc_first = (uint32_t)k,
                                             .alloc_count = 1};
        held[k] = (struct policy_alloc){k % 2, 4, 0, 0};
    }
    struct policy_job queued[1] = {{.id = 1, .submit_us = S(5), .estimate_us = S(100), .slots = 8, .user = -1,
                                    .team = -1, .reserved_us = -1, .nodes = head_nodes}};
    struct cluster_view v = {.now_us = S(10), .nodes = nodes, .n_nodes = 2, .nodes_with_free = with_free,
                             .n_nodes_with_free = 0, .total_slots = 16, .free_slots = 0, .queued = queued,
                             .n_queued = 1, .running = running, .running_by_end = by_end, .n_running = 4,
                             .allocs = held};
    const struct policy_ops *ops;
    void *state;
    char msg[256];
    *preempts = *starts = 99;
    if (policy_registry_create("srtf", &ops, &state, msg, sizeof msg) != 0)
        return;
    struct policy_decision items[8];
    struct policy_alloc allocs[24];
    struct policy_decisions out = {items, 0, 8, allocs, 0, 24};
    if (ops->decide(state, &v, &out) == 0) {
        *preempts = *starts = 0;
        for (uint32_t k = 0; k < out.n; k++) {
            *preempts += items[k].kind == POLICY_PREEMPT;
            *starts += items[k].kind == POLICY_START;
        }
    }
    ops->destroy(state);
}

static void test_shape_preempts_only_for_its_shape(void)
{
    uint32_t preempts, starts;
    shaped_preemption(1, &preempts, &starts);
    CHECK_INT(preempts, 0);
    CHECK_INT(starts, 0);
    shaped_preemption(0, &preempts, &starts);
    CHECK_INT(preempts, 2);
    CHECK_INT(starts, 1);
}

void suite_shape(void)
{
    test_run("shape placement, every strategy", test_shape_placement);
    test_run("shape easy keeps the head's nodes", test_shape_easy_keeps_nodes);
    test_run("shape checker rule", test_shape_checker_rule);
    test_run("shape replay, every kind of policy", test_shape_replay);
    test_run("shape: a share keeps off the head's kept nodes", test_shape_share_avoids_kept_nodes);
    test_run("shape: preemption only for a job's shape", test_shape_preempts_only_for_its_shape);
}
