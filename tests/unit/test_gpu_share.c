/* GPU-model constraints and GPU fractions (policy ABI 2), end to end: a
 * native trace with gpu_model / gpu_milli, a cluster from an openb node list
 * (its node types are the GPU models), the simulator's shared-GPU
 * bookkeeping, the checker, and every placement strategy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/gpu_share.h"
#include "models/policy_host.h"
#include "policies/registry.h"
#include "sim/pcg32.h"
#include "tests/unit/sim_fixture.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"
#include "traces/jsonl.h"
#include "traces/machines.h"

#define S(x) ((sim_time)(x) * 1000000)

static int read_nodes(struct cluster *c, const char *text)
{
    struct machine_list m;
    struct diag_list d;
    struct err e;
    machines_init(&m);
    diag_list_init(&d, 100);
    err_clear(&e);
    int rc = machines_read_buffer("nodes.csv", text, strlen(text), &m, &d, &e);
    if (rc == 0)
        rc = machines_build_cluster(&m, c, &e);
    machines_release(&m);
    diag_list_release(&d);
    return rc;
}

/* Replays w on c under spec into res (the caller releases it). */
static int replay(const struct workload *w, const struct cluster *c, const char *spec, struct sim_result *res)
{
    const struct policy_ops *ops;
    void *state;
    char msg[256];
    if (policy_registry_create(spec, &ops, &state, msg, sizeof msg) != 0) {
        printf("replay: %s\n", msg);
        return -1;
    }
    struct err err;
    err_clear(&err);
    int rc = fixture_run_ops(w, c, ops, state, NULL, res, &err);
    if (rc != 0)
        printf("replay %s: %s\n", spec, err.msg);
    ops->destroy(state);
    return rc;
}

/* In arrival order, without preemption: the timings below follow. */
static const char *const specs[] = {"fcfs+easy",          "fcfs+easy+first-fit", "fcfs+easy+spread",
                                    "fcfs+easy+best-fit", "fcfs+conservative",   "fcfs+greedy+gavel",
                                    "fcfs"};
#define N_SPECS (sizeof specs / sizeof *specs)
/* And every kind of policy, for the properties that hold whatever the order. */
static const char *const all_specs[] = {"fcfs+easy", "fcfs+conservative+spread", "sjf+greedy+gavel", "tiresias",
                                        "srtf",      "fairshare+easy",           "wfp3+easy+first-fit"};
#define N_ALL_SPECS (sizeof all_specs / sizeof *all_specs)

typedef void (*replay_check)(const char *spec, const struct sim_result *r);

/* Replays w on c under each FCFS spec and runs check on its result. */
static void each_spec(const struct workload *w, const struct cluster *c, replay_check check)
{
    for (size_t k = 0; k < N_SPECS; k++) {
        struct sim_result r;
        if (replay(w, c, specs[k], &r) != 0) {
            CHECK(0);
            continue;
        }
        check(specs[k], &r);
        sim_result_release(&r);
    }
}

static const char nodes_v100_t4[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                                    "n0,64000,262144,2,V100M16\n"
                                    "n1,64000,262144,2,T4\n";

static void check_constraint(const char *spec, const struct sim_result *r)
{
    CHECK_INT(r->jobs[0].start_us, 0);
    if (strstr(spec, "conservative")) {
        /* its reservations count slots, blind to models (policies/README.md):
         * the model is honoured, the timing not promised */
        CHECK(r->jobs[1].start_us >= S(100));
        CHECK_INT(r->jobs[2].outcome, SIM_JOB_COMPLETED);
    } else {
        CHECK_INT(r->jobs[1].start_us, S(100)); /* the T4 GPUs were free all along */
        /* EASY's shadow counts the V100 slots only: job 3 fits before it */
        CHECK_INT(r->jobs[2].start_us, strcmp(spec, "fcfs") == 0 ? S(100) : S(2));
    }
    CHECK_INT(r->jobs[3].outcome, SIM_JOB_SKIPPED_TOO_BIG);
    CHECK_INT(r->stats.skipped_too_big, 1);
}

/* Job 2 may use only V100M16: it waits while the T4 node stands idle, and
 * starts when job 1 frees the V100 node. Job 3, without a constraint,
 * starts at once on the T4 node. Job 4 names a model the cluster lacks:
 * too big for it. */
static void test_constraint_waits_for_its_model(void)
{
    struct cluster c;
    struct workload w;
    CHECK_INT(read_nodes(&c, nodes_v100_t4), 0);
    CHECK_INT(fixture_read_jsonl(&w, "{\"id\":1,\"submit_s\":0,\"runtime_s\":100,\"gpus\":2,\"gpu_model\":\"V100M16\"}\n"
                            "{\"id\":2,\"submit_s\":1,\"runtime_s\":50,\"gpus\":1,\"gpu_model\":\"v100m16|A100\"}\n"
                            "{\"id\":3,\"submit_s\":2,\"runtime_s\":10,\"gpus\":2}\n"
                            "{\"id\":4,\"submit_s\":3,\"runtime_s\":10,\"gpus\":1,\"gpu_model\":\"H100\"}\n"),
              0);
    each_spec(&w, &c, check_constraint);
    workload_release(&w);
    cluster_release(&c);
}

static void check_fractions(const char *spec, const struct sim_result *r)
{
    CHECK_INT(r->jobs[0].start_us, 0);
    CHECK_INT(r->jobs[1].start_us, 0); /* the same GPU, 500 + 500 milli */
    CHECK(r->jobs[2].start_us >= S(100)); /* a whole GPU: only when both left */
    CHECK(r->jobs[3].start_us >= S(100)); /* gpu_milli 1000 is a whole GPU */
    CHECK(r->jobs[2].start_us != r->jobs[3].start_us);
    /* busy GPU time counts the shares: 0.5 x 100 + 0.5 x 60 + 10 + 10 */
    CHECK(r->stats.busy_slot_us == 100e6);
}

/* One node of one GPU: two 500-milli jobs share it at once, and the
 * whole-GPU job submitted with them waits until both are done. */
static void test_fractions_share_a_gpu(void)
{
    struct cluster c;
    struct workload w;
    CHECK_INT(cluster_init_homogeneous(&c, 1, 1, &(struct err){0}), 0);
    CHECK_INT(fixture_read_jsonl(&w, "{\"id\":1,\"submit_s\":0,\"runtime_s\":100,\"gpus\":1,\"gpu_milli\":500}\n"
                            "{\"id\":2,\"submit_s\":0,\"runtime_s\":60,\"gpus\":1,\"gpu_milli\":500}\n"
                            "{\"id\":3,\"submit_s\":0,\"runtime_s\":10,\"gpus\":1}\n"
                            "{\"id\":4,\"submit_s\":1,\"runtime_s\":10,\"gpus\":1,\"gpu_milli\":1000}\n"),
              0);
    each_spec(&w, &c, check_fractions);
    workload_release(&w);
    cluster_release(&c);
}

static void check_never_exceeds(const char *spec, const struct sim_result *r)
{
    for (int i = 0; i < 4; i++)
        CHECK_INT(r->jobs[i].start_us, 0);
    CHECK(r->jobs[4].start_us >= S(100));
    CHECK(r->jobs[5].start_us >= S(100));
}

/* 400-milli jobs: two share a GPU, the third would take it to 1200 and
 * opens the second GPU; a fourth joins that one; the fifth (a whole GPU)
 * and the sixth (700 milli) wait, though 200 + 200 milli are left. */
static void test_share_never_exceeds_a_gpu(void)
{
    struct cluster c;
    struct workload w;
    CHECK_INT(cluster_init_homogeneous(&c, 1, 2, &(struct err){0}), 0);
    CHECK_INT(fixture_read_jsonl(&w, "{\"id\":1,\"submit_s\":0,\"runtime_s\":100,\"gpus\":1,\"gpu_milli\":400}\n"
                            "{\"id\":2,\"submit_s\":0,\"runtime_s\":100,\"gpus\":1,\"gpu_milli\":400}\n"
                            "{\"id\":3,\"submit_s\":0,\"runtime_s\":100,\"gpus\":1,\"gpu_milli\":400}\n"
                            "{\"id\":4,\"submit_s\":0,\"runtime_s\":100,\"gpus\":1,\"gpu_milli\":400}\n"
                            "{\"id\":5,\"submit_s\":1,\"runtime_s\":10,\"gpus\":1}\n"
                            "{\"id\":6,\"submit_s\":2,\"runtime_s\":10,\"gpus\":1,\"gpu_milli\":700}\n"),
              0);
    each_spec(&w, &c, check_never_exceeds);
    workload_release(&w);
    cluster_release(&c);
}

/* A random heterogeneous workload (constraints, fractions, whole jobs) under
 * every spec: the checker refuses any pass that over-fills a GPU or a node
 * or uses a wrong model, so a completed run is the property; every job
 * that fits its models finishes, and the run is deterministic. */
static void test_random_shared_workload(void)
{
    struct cluster c;
    CHECK_INT(read_nodes(&c, "sn,cpu_milli,memory_mib,gpu,model\n"
                             "a,1,1,8,G2\nb,1,1,8,G2\nc,1,1,4,T4\nd,1,1,2,P100\ne,1,1,1,T4\n"),
              0);
    static const char *const models[] = {NULL, NULL, "G2", "T4", "P100|T4"};
    char *text = malloc(300 * 160);
    size_t len = 0;
    struct pcg32 rng;
    pcg32_seed(&rng, 7, 1);
    for (int i = 0; i < 300; i++) {
        int gpus = (int)pcg32_bounded(&rng, 3) == 0 ? 1 << pcg32_bounded(&rng, 4) : 1;
        int milli = gpus == 1 && pcg32_bounded(&rng, 2) ? 100 * (1 + (int)pcg32_bounded(&rng, 9)) : 0;
        const char *m = models[pcg32_bounded(&rng, 5)];
        len += (size_t)snprintf(text + len, 300 * 160 - len, "{\"id\":%d,\"submit_s\":%u,\"runtime_s\":%u,\"gpus\":%d",
                                i + 1, pcg32_bounded(&rng, 5000), 1 + pcg32_bounded(&rng, 900), gpus);
        if (milli)
            len += (size_t)snprintf(text + len, 300 * 160 - len, ",\"gpu_milli\":%d", milli);
        if (m)
            len += (size_t)snprintf(text + len, 300 * 160 - len, ",\"gpu_model\":\"%s\"", m);
        len += (size_t)snprintf(text + len, 300 * 160 - len, "}\n");
    }
    struct workload w;
    CHECK_INT(fixture_read_jsonl(&w, text), 0);
    free(text);
    for (size_t k = 0; k < N_ALL_SPECS; k++) {
        struct sim_result a, b;
        if (replay(&w, &c, all_specs[k], &a) != 0 || replay(&w, &c, all_specs[k], &b) != 0) {
            CHECK(0);
            continue;
        }
        size_t finished = 0, too_big = 0;
        int same = 1;
        for (size_t i = 0; i < w.n; i++) {
            finished += a.jobs[i].outcome == SIM_JOB_COMPLETED;
            too_big += a.jobs[i].outcome == SIM_JOB_SKIPPED_TOO_BIG;
            same &= a.jobs[i].start_us == b.jobs[i].start_us && a.jobs[i].end_us == b.jobs[i].end_us;
        }
        CHECK_INT(finished + too_big, w.n);
        CHECK(same);
        sim_result_release(&a);
        sim_result_release(&b);
    }
    workload_release(&w);
    cluster_release(&c);
}

/* The store itself: sorted by (node, gpu), opened and closed as shares come
 * and go, indexed into the nodes. */
static void test_gpu_share_store(void)
{
    struct gpu_share s;
    gpu_share_init(&s);
    struct policy_node nodes[3];
    memset(nodes, 0, sizeof nodes);
    int opened;
    CHECK_INT(gpu_share_take(&s, 2, 1, 300, &opened), 0);
    CHECK_INT(opened, 1);
    CHECK_INT(gpu_share_take(&s, 0, 3, 500, &opened), 0);
    CHECK_INT(gpu_share_take(&s, 2, 0, 200, &opened), 0);
    CHECK_INT(gpu_share_take(&s, 2, 1, 700, &opened), 0);
    CHECK_INT(opened, 0);
    gpu_share_index(&s, nodes, 3);
    CHECK_INT(s.n, 3);
    CHECK_INT(nodes[0].n_shared, 1);
    CHECK_INT(nodes[1].n_shared, 0);
    CHECK_INT(nodes[2].shared_first, 1);
    CHECK_INT(nodes[2].n_shared, 2);
    CHECK_INT(s.gpus[1].gpu, 0);
    CHECK_INT(s.gpus[2].used_milli, 1000);
    CHECK_INT(gpu_share_give(&s, 2, 1, 300), 0);
    CHECK_INT(gpu_share_give(&s, 2, 1, 700), 1); /* its last share: a free GPU again */
    CHECK_INT(gpu_share_give(&s, 1, 0, 100), 0); /* not shared: nothing */
    gpu_share_index(&s, nodes, 3);
    CHECK_INT(nodes[2].n_shared, 1);
    gpu_share_release(&s);
}


/* The one checker on hand-made passes: the rules ABI 2 adds. Node 0 is a
 * V100 (type 0) with GPU 1 shared at 600 milli, node 1 a T4 (type 1). */
static void test_checker_rules(void)
{
    struct policy_node nodes[2] = {{0, POLICY_NODE_UP, 2, 1, 0, -1, -1, 0, 0, 1},
                                   {1, POLICY_NODE_UP, 2, 2, 1, -1, -1, 0, 0, 0}};
    struct policy_shared_gpu shared[1] = {{0, 1, 600, 0}};
    uint32_t with_free[2] = {0, 1};
    struct policy_job queued[3] = {
        {.id = 1, .slots = 1, .user = -1, .team = -1, .reserved_us = -1, .milli = 400},
        {.id = 2, .slots = 1, .user = -1, .team = -1, .reserved_us = -1, .milli = 500},
        {.id = 3, .slots = 1, .user = -1, .team = -1, .reserved_us = -1, .type_mask = 1u}};
    struct cluster_view v = {.nodes = nodes, .n_nodes = 2, .nodes_with_free = with_free, .n_nodes_with_free = 2,
                             .total_slots = 4, .free_slots = 3, .queued = queued, .n_queued = 3,
                             .shared = shared, .n_shared = 1};
    struct policy_decision items[3];
    struct policy_alloc allocs[3];
    struct policy_decisions d = {items, 0, 3, allocs, 0, 3};
    struct policy_host h;
    memset(&h, 0, sizeof h);
    static const struct {
        struct policy_alloc a[3];
        uint32_t jobs[3], n;
        const char *rule;
    } cases[] = {
        /* 600 + 400 on GPU 1: full, allowed; then 500 opens GPU 0 */
        {{{0, 1, 400, 1}, {0, 1, 500, 0}}, {0, 1}, 2, NULL},
        /* 600 + 400 + 500 on GPU 1 */
        {{{0, 1, 400, 1}, {0, 1, 500, 1}}, {0, 1}, 2, "over-allocated a shared GPU"},
        /* 400 opens GPU 0 of the T4, 500 joins it */
        {{{1, 1, 400, 0}, {1, 1, 500, 0}}, {0, 1}, 2, NULL},
        /* 400 opens the V100's free GPU: nothing is left for a whole GPU */
        {{{0, 1, 400, 0}, {0, 1, 0, 0}}, {0, 2}, 2, "over-allocated a node"},
        {{{0, 1, 400, 0}}, {1}, 1, "a fractional job's allocation is not one GPU at its share"},
        {{{1, 1, 0, 0}}, {2}, 1, "placed on a node of a GPU model the job may not use"},
        {{{0, 1, 500, 0}}, {2}, 1, "gave a whole-GPU job a share of a GPU"},
        {{{0, 1, 400, 7}}, {0}, 1, "a fractional job names no GPU of its node"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        d.n = d.n_allocs = 0;
        for (uint32_t k = 0; k < cases[c].n; k++) {
            allocs[d.n_allocs] = cases[c].a[k];
            items[d.n++] = (struct policy_decision){POLICY_START, cases[c].jobs[k], queued[cases[c].jobs[k]].id, 0,
                                                    d.n_allocs++, 1};
        }
        uint32_t bad;
        const char *rule = policy_host_check(&h, &v, &d, &bad);
        if (!cases[c].rule)
            CHECK(rule == NULL);
        else
            CHECK(rule && strcmp(rule, cases[c].rule) == 0);
    }
    /* preempting the GPU's only share frees the GPU within the pass, as the
     * host does: with it, a 2-GPU job fits the V100 node; without, it does not */
    struct policy_running run = {.job = {.id = 9, .slots = 1, .user = -1, .team = -1, .reserved_us = -1, .milli = 600},
                                 .alloc_count = 1};
    struct policy_alloc held = {0, 1, 600, 1};
    uint32_t by_end = 0;
    struct policy_job big = {.id = 4, .slots = 2, .user = -1, .team = -1, .reserved_us = -1};
    v.running = &run;
    v.running_by_end = &by_end;
    v.n_running = 1;
    v.allocs = &held;
    v.queued = &big;
    v.n_queued = 1;
    h.kinds = POLICY_KINDS_ALL;
    for (int preempt = 1; preempt >= 0; preempt--) {
        d.n = d.n_allocs = 0;
        if (preempt)
            items[d.n++] = (struct policy_decision){POLICY_PREEMPT, 0, 9, 0, 0, 0};
        allocs[d.n_allocs] = (struct policy_alloc){0, 2, 0, 0};
        items[d.n++] = (struct policy_decision){POLICY_START, 0, 4, 0, d.n_allocs++, 1};
        uint32_t bad;
        const char *rule = policy_host_check(&h, &v, &d, &bad);
        if (preempt)
            CHECK(rule == NULL);
        else
            CHECK(rule && strcmp(rule, "over-allocated a node") == 0);
    }
    policy_host_close(&h);
}

/* The native format carries both fields through a write and a read. */
static void test_jsonl_round_trip(void)
{
    struct workload w, back;
    CHECK_INT(fixture_read_jsonl(&w, "{\"id\":1,\"submit_s\":0,\"runtime_s\":10,\"gpus\":1,\"gpu_milli\":250,"
                            "\"gpu_model\":\"V100M16|V100M32\"}\n"
                            "{\"id\":2,\"submit_s\":1,\"runtime_s\":10,\"gpus\":1,\"gpu_milli\":1000}\n"
                            "{\"id\":3,\"submit_s\":2,\"runtime_s\":10,\"gpus\":4,\"gpu_model\":\"T4\"}\n"),
              0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct err e;
    err_clear(&e);
    CHECK_INT(jsonl_write(NULL, f, &w, &e), 0);
    fclose(f);
    CHECK(strstr(buf, "{\"id\":1,\"submit_s\":0,\"runtime_s\":10,\"gpus\":1,\"gpu_milli\":250,"
                      "\"gpu_model\":\"V100M16|V100M32\"}\n") != NULL);
    CHECK(strstr(buf, "{\"id\":2,\"submit_s\":1,\"runtime_s\":10,\"gpus\":1}\n") != NULL); /* 1000: a whole GPU */
    CHECK_INT(fixture_read_jsonl(&back, buf), 0);
    CHECK_INT(back.n, 3);
    for (size_t i = 0; i < back.n && i < w.n; i++) {
        CHECK_INT(back.jobs[i].gpu_milli, w.jobs[i].gpu_milli);
        const char *a = workload_job_models(&w, &w.jobs[i]), *b = workload_job_models(&back, &back.jobs[i]);
        CHECK((a == NULL) == (b == NULL) && (!a || strcmp(a, b) == 0));
    }
    free(buf);
    workload_release(&w);
    workload_release(&back);
}

void suite_gpu_share(void)
{
    test_run("gpu share store", test_gpu_share_store);
    test_run("gpu share jsonl round trip", test_jsonl_round_trip);
    test_run("gpu share checker rules", test_checker_rules);
    test_run("gpu model constraint waits for its model", test_constraint_waits_for_its_model);
    test_run("gpu fractions share a gpu", test_fractions_share_a_gpu);
    test_run("gpu share never exceeds a gpu", test_share_never_exceeds_a_gpu);
    test_run("gpu shares and constraints, random, every spec", test_random_shared_workload);
}
