/* Unit tests: agent/scheduler (the agent's policy host: view, checks,
 * reservations, GPU choice) and agent/store (durable state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/scheduler.h"
#include "agent/store.h"
#include "models/simulation.h"
#include "tests/unit/test.h"

void suite_agent_scheduler(void);
void suite_agent_store(void);

static const char inv_text[] = "{\"nodes\":[{\"name\":\"a\",\"gpus\":8,\"nvlink_domains\":[[0,1,2,3],[4,5,6,7]]},"
                               "{\"name\":\"b\",\"gpus\":8}]}";

static struct agent_job *mk(int64_t id, int32_t gpus, int64_t submit_s, int64_t limit_s)
{
    struct agent_job *j = job_new();
    j->id = id;
    j->gpus = gpus;
    j->submit_us = submit_s * 1000000;
    j->limit_us = limit_s * 1000000;
    j->state = JOB_QUEUED;
    return j;
}

struct fixture {
    struct inventory inv;
    struct scheduler s;
    struct agent_job *running;
    struct agent_job *q[3];
    struct sched_result res;
};

static void setup(struct fixture *f, const char *policy)
{
    inventory_init(&f->inv);
    struct err e;
    err_clear(&e);
    CHECK_INT(inventory_parse_fake(&f->inv, "i", inv_text, strlen(inv_text), &e), 0);
    CHECK_INT(scheduler_init(&f->s, policy, 0, &e), 0);
    /* running: all 8 GPUs of node a and GPUs 12-15 of b until t=100 s */
    f->running = mk(1, 12, 0, 100);
    f->running->state = JOB_RUNNING;
    f->running->start_us = 0;
    f->running->gpu_idx = malloc(12 * sizeof *f->running->gpu_idx);
    for (int i = 0; i < 12; i++)
        f->running->gpu_idx[i] = i < 8 ? i : i + 4;
    f->running->n_gpu_idx = 12;
    /* waiting: 8 GPUs (a whole node: must wait for the running job), 4 GPUs
     * for 50 s (ends before the reservation), 4 GPUs for 500 s (would delay it) */
    f->q[0] = mk(2, 8, 1, 100);
    f->q[1] = mk(3, 4, 2, 50);
    f->q[2] = mk(4, 4, 3, 500);
    sched_result_init(&f->res);
}

static void teardown(struct fixture *f)
{
    sched_result_release(&f->res);
    scheduler_release(&f->s);
    inventory_release(&f->inv);
    job_free(f->running);
    for (int i = 0; i < 3; i++)
        job_free(f->q[i]);
}

/* A Slurm job of 2 nodes x 6 GPUs where node b has only 5 usable GPUs
 * (3 drained): 13 GPUs are usable, enough pooled, but not in its shape. It
 * is left out, as the simulator skips it as too big; else it would head
 * EASY's queue for ever, and no job that outlasts its shadow could
 * backfill. With b's GPUs back it is queued. */
static void test_left_out_shape(void)
{
    struct fixture f;
    setup(&f, "fcfs+easy");
    f.s.multi_node = 1;
    struct err e;
    err_clear(&e);
    f.q[0]->gpus = 12;
    f.q[0]->nodes = 2;
    for (int g = 8; g < 11; g++)
        f.inv.gpus[g].drained = 1;
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.left_out, 1);
    for (int g = 8; g < 11; g++)
        f.inv.gpus[g].drained = 0;
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.left_out, 0);
    teardown(&f);
}

static void test_easy_backfill_live(void)
{
    struct fixture f;
    setup(&f, "fcfs+easy");
    struct err e;
    err_clear(&e);
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.n_starts, 1);
    if (f.res.n_starts == 1) {
        CHECK_INT(f.res.starts[0].job->id, 3);
        for (int k = 0; k < 4; k++)
            CHECK_INT(f.res.starts[0].gpus[k], 8 + k); /* node b, lowest GPUs */
    }
    CHECK_INT(f.q[0]->reserved_us, 100000000); /* the head's reservation, kept in the job */
    CHECK_INT(f.res.n_reserved, 1);
    CHECK_INT(f.s.passes, 1);
    teardown(&f);
}

static void test_left_out_and_drained(void)
{
    struct fixture f;
    setup(&f, "fcfs");
    struct err e;
    err_clear(&e);
    f.q[0]->gpus = 16; /* larger than any node: left out (one node per job) */
    f.inv.nodes[1].drained = 1; /* only node a (busy) is up */
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.n_starts, 0);
    CHECK_INT(f.res.left_out, 1);
    f.inv.nodes[1].drained = 0;
    f.inv.gpus[8].drained = 1; /* b has 7 usable GPUs: 4 fit */
    f.running->n_gpu_idx = 0;  /* and a is free now: 15 GPUs, but 16 fit on no node */
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.left_out, 1);
    for (uint32_t k = 0; k < f.res.n_starts; k++)
        for (int32_t g = 0; g < f.res.starts[k].job->gpus; g++)
            CHECK(f.res.starts[k].gpus[g] != 8);
    teardown(&f);
}

/* A policy that starts the first job on a node that does not exist. */
static int bad_create(const char *p, void **st, char *e, size_t n)
{
    (void)p;
    (void)e;
    (void)n;
    *st = NULL;
    return 0;
}
static void bad_destroy(void *st)
{
    (void)st;
}
static int bad_decide(void *st, const struct cluster_view *v, struct policy_decisions *out)
{
    (void)st;
    out->items[0] = (struct policy_decision){POLICY_START, 0, v->queued[0].id, 0, 0, 1};
    out->allocs[0] = (struct policy_alloc){99, v->queued[0].slots, 0, 0};
    out->n = 1;
    out->n_allocs = 1;
    return 0;
}
static const struct policy_ops bad_ops = {POLICY_ABI_VERSION, "bad", "breaks the contract", bad_create,
                                          bad_destroy, bad_decide, NULL};

/* Starts the head of the queue on two nodes, half on each. */
static int span_decide(void *st, const struct cluster_view *v, struct policy_decisions *out)
{
    (void)st;
    int32_t half = v->queued[0].slots / 2;
    out->items[0] = (struct policy_decision){POLICY_START, 0, v->queued[0].id, 0, 0, 2};
    out->allocs[0] = (struct policy_alloc){0, half, 0, 0};
    out->allocs[1] = (struct policy_alloc){1, v->queued[0].slots - half, 0, 0};
    out->n = 1;
    out->n_allocs = 2;
    return 0;
}
static const struct policy_ops span_ops = {POLICY_ABI_VERSION, "span", "spreads a job over two nodes", bad_create,
                                           bad_destroy, span_decide, NULL};

/* The agent's pass with the fixture's policy replaced by ops. */
static void use_policy(struct fixture *f, const struct policy_ops *ops)
{
    policy_host_close(&f->s.ph);
    policy_host_adopt(&f->s.ph, ops, NULL, ops->name);
}

static void use_policy(struct fixture *f, const struct policy_ops *ops);

static void test_spanning_start_not_carried_out(void)
{
    struct fixture f;
    setup(&f, "fcfs");
    use_policy(&f, &span_ops);
    f.running->n_gpu_idx = 0; /* both nodes free */
    struct agent_job *q[1] = {f.q[1]}; /* 4 GPUs: 2 on a, 2 on b */
    struct err e;
    err_clear(&e);
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, q, 1, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.n_starts, 0);
    CHECK_INT(f.res.spanning, 1);
    CHECK_INT(f.s.spanning_refused, 1);
    teardown(&f);
}

static void test_contract_violation_refuses_pass(void)
{
    struct fixture f;
    setup(&f, "fcfs");
    use_policy(&f, &bad_ops);
    struct err e;
    err_clear(&e);
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), -1);
    CHECK_STR(e.msg, "policy 'bad' broke the contract at t=10000000 us: allocation names no valid node or slot "
                     "count (job '2')");
    CHECK_INT(f.res.n_starts, 0);
    CHECK_INT(f.s.contract_errors, 1);
    teardown(&f);
}

/* Starts the head of the queue twice. */
static int twice_decide(void *st, const struct cluster_view *v, struct policy_decisions *out)
{
    (void)st;
    out->allocs[0] = (struct policy_alloc){(int32_t)v->nodes_with_free[0], v->queued[0].slots, 0, 0};
    out->items[0] = (struct policy_decision){POLICY_START, 0, v->queued[0].id, 0, 0, 1};
    out->items[1] = out->items[0];
    out->n = 2;
    out->n_allocs = 1;
    return 0;
}
static const struct policy_ops twice_ops = {POLICY_ABI_VERSION, "twice", "starts a job twice", bad_create,
                                            bad_destroy, twice_decide, NULL};

/* The same broken decisions, fed to the simulator and to the agent, give the
 * same message word for word: both hosts use models/policy_host's checker. */
static void test_same_checker_in_both_hosts(void)
{
    static const struct policy_ops *const broken[] = {&bad_ops, &twice_ops};
    for (size_t b = 0; b < 2; b++) {
        /* the simulator: job 2, 4 GPUs, submitted at 10 s on two empty 8-GPU nodes */
        struct workload w;
        workload_init(&w);
        struct job j = {.id = 2, .submit_us = 10000000, .runtime_us = 5000000, .limit_us = 50000000, .slots = 4,
                        .user = -1, .team = -1, .status = -1, .job_class = -1};
        workload_push(&w, &j);
        struct cluster c;
        struct err se, ae;
        err_clear(&se);
        err_clear(&ae);
        cluster_init_homogeneous(&c, 2, 8, &se);
        struct policy_host ph;
        policy_host_adopt(&ph, broken[b], NULL, broken[b]->name);
        struct sim_result r;
        CHECK_INT(simulation_run(&w, &c, &ph, NULL, &r, &se), -1);
        sim_result_release(&r);
        policy_host_close(&ph);
        cluster_release(&c);
        workload_release(&w);
        /* the agent: the same job waiting at 10 s on the same two nodes, idle */
        struct fixture f;
        setup(&f, "fcfs");
        use_policy(&f, broken[b]);
        f.running->n_gpu_idx = 0;
        struct agent_job *q = mk(2, 4, 10, 50);
        CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, &q, 1, NULL, 0, &f.res, &ae), -1);
        CHECK(se.msg[0] != '\0');
        CHECK_STR(ae.msg, se.msg);
        job_free(q);
        teardown(&f);
    }
}

/* A preemptive policy on the live view: srtf stops the long job for a short
 * one; the start that needs its GPUs waits until it has stopped. */
static void test_preemption_live(void)
{
    struct fixture f;
    setup(&f, "srtf");
    struct err e;
    err_clear(&e);
    /* node a runs job 1 (8 GPUs, 100 s limit, started at 0); node b is drained:
     * an 8-GPU job of 5 s arrives at 10 s */
    f.inv.nodes[1].drained = 1;
    f.running->job_class = 0;
    f.running->gpus = 8; /* only node a's GPUs */
    f.running->n_gpu_idx = 8;
    struct agent_job *q = mk(9, 8, 10, 5);
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, &q, 1, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.n_preempts, 1);
    if (f.res.n_preempts == 1)
        CHECK_INT(f.res.preempts[0]->id, 1);
    CHECK_INT(f.res.n_starts, 0); /* job 1 still holds the GPUs */
    CHECK_INT(f.res.deferred, 1);
    CHECK_INT(f.s.preempts, 1);
    /* the view carried its attained service: 8 GPUs x 10 s */
    CHECK_INT(f.s.running[0].job.attained_us, 80000000);
    job_free(q);
    teardown(&f);
}

/* Node types from the GPU model, for the view's speeds. */
static void test_node_types(void)
{
    struct fixture f;
    setup(&f, "fcfs");
    const struct node_catalog *c = &f.s.catalog;
    int h100 = scheduler_node_type(c, "NVIDIA H100 80GB HBM3");
    CHECK(h100 >= 0 && strcmp(c->types[h100].name, "H100-SXM") == 0);
    int gb200 = scheduler_node_type(c, "NVIDIA GB200");
    CHECK(gb200 >= 0 && strncmp(c->types[gb200].name, "GB200", 5) == 0);
    CHECK_INT(scheduler_node_type(c, "Fake GPU"), -1);
    teardown(&f);
}

static void test_plugin_errors(void)
{
    struct scheduler s;
    struct err e;
    err_clear(&e);
    CHECK_INT(scheduler_init(&s, "/nonexistent/policy.so:x=1", 0, &e), -1);
    CHECK(strstr(e.msg, "cannot load policy plugin '/nonexistent/policy.so'") != NULL);
    err_clear(&e);
    CHECK_INT(scheduler_init(&s, "fifo", 0, &e), -1);
    CHECK(strstr(e.msg, "fifo") != NULL);
}

void suite_agent_scheduler(void)
{
    test_run("scheduler: EASY backfilling on the live view", test_easy_backfill_live);
    test_run("scheduler: drained nodes and GPUs, jobs left out", test_left_out_and_drained);
    test_run("scheduler: a shape no up nodes can hold is left out", test_left_out_shape);
    test_run("scheduler: a start spread over two nodes is not carried out", test_spanning_start_not_carried_out);
    test_run("scheduler: a broken decision refuses the pass", test_contract_violation_refuses_pass);
    test_run("scheduler: simulator and agent word a broken pass alike", test_same_checker_in_both_hosts);
    test_run("scheduler: srtf preempts on the live view", test_preemption_live);
    test_run("scheduler: node types from GPU models", test_node_types);
    test_run("scheduler: policy plugin and spec errors", test_plugin_errors);
}

/* ---- store ---- */

struct seen {
    int n;
    int64_t ids[8];
    int states[8];
    size_t n_uuids[8];
};

static int seen_cb(void *ctx, struct agent_job *j, char **uuids, size_t n)
{
    struct seen *s = ctx;
    (void)uuids;
    if (s->n < 8) {
        s->ids[s->n] = j->id;
        s->states[s->n] = j->state;
        s->n_uuids[s->n] = n;
        s->n++;
    }
    job_free(j);
    return 0;
}

static void test_store_roundtrip(void)
{
    char dir[] = "/tmp/fleetsim-store-XXXXXX";
    if (!mkdtemp(dir)) {
        test_skip("no temporary folder");
        return;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/state.db", dir);
    struct store *st;
    struct err e;
    err_clear(&e);
    CHECK_INT(store_open(&st, path, &e), 0);
    struct agent_job *a = mk(0, 2, 5, 60), *b = mk(0, 1, 6, 60);
    a->argv_json = strdup("[\"true\"]");
    b->argv_json = strdup("[\"false\"]");
    a->env_json = strdup("[]");
    b->env_json = strdup("[]");
    a->cwd = strdup("/");
    b->cwd = strdup("/");
    a->out_path = strdup("");
    b->out_path = strdup("");
    a->err_path = strdup("");
    b->err_path = strdup("");
    snprintf(a->user, sizeof a->user, "u");
    snprintf(b->user, sizeof b->user, "u");
    CHECK_INT(store_insert_job(st, a, &e), 0);
    CHECK_INT(store_insert_job(st, b, &e), 0);
    CHECK_INT(a->id, 1);
    CHECK_INT(b->id, 2);
    /* a runs on two GPUs */
    a->attempts = 1;
    a->start_us = 7000000;
    a->shim_pid = 4242;
    a->shim_start = 99;
    int32_t idx[2] = {0, 1};
    a->gpu_idx = idx;
    a->n_gpu_idx = 2;
    const char *uuids[] = {"GPU-1", "GPU-2"}, *nodes[] = {"n", "n"};
    CHECK_INT(store_begin(st, &e), 0);
    CHECK_INT(store_mark_running(st, a, uuids, nodes, &e), 0);
    CHECK_INT(store_commit(st, &e), 0);
    CHECK_INT(store_mark_running(st, a, uuids, nodes, &e), -1); /* not queued any more */
    a->gpu_idx = NULL;
    a->n_gpu_idx = 0;
    struct seen s = {0};
    CHECK_INT(store_load_active(st, seen_cb, &s, &e), 0);
    CHECK_INT(s.n, 2);
    CHECK(s.ids[0] == 1 && s.states[0] == JOB_RUNNING && s.n_uuids[0] == 2);
    CHECK(s.ids[1] == 2 && s.states[1] == JOB_QUEUED);
    /* a ends; the store holds it for history and the trace */
    a->state = JOB_COMPLETED;
    a->end_us = 9000000;
    a->exit_code = 0;
    CHECK_INT(store_mark_finished(st, a, &e), 0);
    memset(&s, 0, sizeof s);
    CHECK_INT(store_load_untraced(st, seen_cb, &s, &e), 0);
    CHECK(s.n == 1 && s.ids[0] == 1);
    CHECK_INT(store_mark_traced(st, 1, &e), 0);
    memset(&s, 0, sizeof s);
    CHECK_INT(store_load_untraced(st, seen_cb, &s, &e), 0);
    CHECK_INT(s.n, 0);
    memset(&s, 0, sizeof s);
    CHECK_INT(store_get_job(st, 1, seen_cb, &s, &e), 1);
    CHECK(s.n == 1 && s.states[0] == JOB_COMPLETED && s.n_uuids[0] == 2);
    memset(&s, 0, sizeof s);
    CHECK_INT(store_get_job(st, 77, seen_cb, &s, &e), 0);
    int64_t v = 0;
    CHECK_INT(store_meta_set(st, "x", 5, &e), 0);
    CHECK_INT(store_meta_get(st, "x", &v, &e), 1);
    CHECK_INT(v, 5);
    store_close(st);
    /* reopened, the state is all there */
    CHECK_INT(store_open(&st, path, &e), 0);
    memset(&s, 0, sizeof s);
    CHECK_INT(store_load_active(st, seen_cb, &s, &e), 0);
    CHECK(s.n == 1 && s.ids[0] == 2);
    store_close(st);
    job_free(a);
    job_free(b);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK_INT(system(cmd), 0);
}

void suite_agent_store(void)
{
    test_run("store: jobs, allocations, trace marks survive a reopen", test_store_roundtrip);
}
