/* Unit tests: agent/scheduler (the agent's policy host: view, checks,
 * reservations, GPU choice) and agent/store (durable state). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/scheduler.h"
#include "agent/store.h"
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
    CHECK_INT(scheduler_init(&f->s, policy, &e), 0);
    /* running: all 8 GPUs of node a until t=100 s */
    f->running = mk(1, 8, 0, 100);
    f->running->state = JOB_RUNNING;
    f->running->start_us = 0;
    f->running->gpu_idx = malloc(8 * sizeof *f->running->gpu_idx);
    for (int i = 0; i < 8; i++)
        f->running->gpu_idx[i] = i;
    f->running->n_gpu_idx = 8;
    /* waiting: 16 GPUs (must wait for a), 4 GPUs for 50 s (ends before
     * the reservation), 4 GPUs for 500 s (would delay it) */
    f->q[0] = mk(2, 16, 1, 100);
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
    f.inv.nodes[1].drained = 1; /* only node a (busy) is up: the 16-GPU job cannot fit at all */
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), 0);
    CHECK_INT(f.res.n_starts, 0);
    CHECK_INT(f.res.left_out, 1);
    f.inv.nodes[1].drained = 0;
    f.inv.gpus[8].drained = 1; /* b has 7 usable GPUs: 4 fit */
    f.running->n_gpu_idx = 0;  /* and a is free now */
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
    out->allocs[0] = (struct policy_alloc){99, v->queued[0].slots};
    out->n = 1;
    out->n_allocs = 1;
    return 0;
}
static const struct policy_ops bad_ops = {POLICY_ABI_VERSION, "bad", "breaks the contract", bad_create,
                                          bad_destroy, bad_decide, NULL};

static void test_contract_violation_refuses_pass(void)
{
    struct fixture f;
    setup(&f, "fcfs");
    f.s.ops->destroy(f.s.policy);
    f.s.ops = &bad_ops;
    f.s.policy = NULL;
    struct err e;
    err_clear(&e);
    CHECK_INT(scheduler_pass(&f.s, 10000000, &f.inv, f.q, 3, &f.running, 1, &f.res, &e), -1);
    CHECK(strstr(e.msg, "allocation names no valid node") != NULL);
    CHECK_INT(f.res.n_starts, 0);
    CHECK_INT(f.s.contract_errors, 1);
    teardown(&f);
}

static void test_plugin_errors(void)
{
    struct scheduler s;
    struct err e;
    err_clear(&e);
    CHECK_INT(scheduler_init(&s, "/nonexistent/policy.so:x=1", &e), -1);
    CHECK(strstr(e.msg, "cannot load policy plugin '/nonexistent/policy.so'") != NULL);
    err_clear(&e);
    CHECK_INT(scheduler_init(&s, "fifo", &e), -1);
    CHECK(strstr(e.msg, "fifo") != NULL);
}

void suite_agent_scheduler(void)
{
    test_run("scheduler: EASY backfilling on the live view", test_easy_backfill_live);
    test_run("scheduler: drained nodes and GPUs, jobs left out", test_left_out_and_drained);
    test_run("scheduler: a broken decision refuses the pass", test_contract_violation_refuses_pass);
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
