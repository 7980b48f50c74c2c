/* Properties of the simulation host on random traces, and its contract
 * checks against a deliberately broken policy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/waiting_queue.h"
#include "sim/pcg32.h"
#include "policies/registry.h"
#include "tests/unit/sim_fixture.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

enum { RANDOM_JOBS = 400, NODES = 4, SLOTS = 4 };

struct reservation_log {
    sim_time first[RANDOM_JOBS + 1]; /* first reservation seen, by job id */
    sim_time last[RANDOM_JOBS + 1];
    int moved_later;
    int over_allocated;
};

static void log_pass(void *ctx, const struct cluster_view *v, const struct policy_decisions *d)
{
    struct reservation_log *log = ctx;
    int64_t used = 0;
    for (uint32_t k = 0; k < d->n; k++) {
        const struct policy_decision *x = &d->items[k];
        if (x->kind == POLICY_START)
            used += v->queued[x->job_index].slots;
        if (x->kind != POLICY_RESERVE)
            continue;
        int64_t id = x->job_id;
        if (log->first[id] < 0)
            log->first[id] = x->at_us;
        else if (x->at_us > log->last[id])
            log->moved_later++;
        log->last[id] = x->at_us;
    }
    if (used > v->free_slots || v->free_slots < 0 || v->free_slots > v->total_slots)
        log->over_allocated++;
}

/* Max slots in use at once, from the schedule itself. */
static int64_t peak_slots(const struct workload *w, const double *starts)
{
    int64_t peak = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (starts[i] < 0)
            continue;
        int64_t in_use = 0;
        double t = starts[i];
        for (size_t k = 0; k < w->n; k++) {
            double s = starts[k];
            double run = (double)simulation_effective_runtime(&w->jobs[k]) / 1e6;
            if (s >= 0 && s <= t && t < s + run)
                in_use += w->jobs[k].slots;
        }
        if (in_use > peak)
            peak = in_use;
    }
    return peak;
}

static void check_reservations_hold(const char *spec)
{
    for (uint64_t seed = 1; seed <= 5; seed++) {
        struct workload w;
        fixture_random_workload(&w, RANDOM_JOBS, NODES * SLOTS, seed);
        struct reservation_log *log = malloc(sizeof *log);
        for (int i = 0; i <= RANDOM_JOBS; i++)
            log->first[i] = log->last[i] = -1;
        log->moved_later = log->over_allocated = 0;
        struct sim_options opt;
        sim_options_init(&opt);
        opt.on_pass = log_pass;
        opt.hook_ctx = log;
        double starts[RANDOM_JOBS];
        CHECK_INT(fixture_replay(&w, NODES, SLOTS, spec, starts, &opt), 0);
        CHECK_INT(log->moved_later, 0);
        CHECK_INT(log->over_allocated, 0);
        int late = 0, reserved = 0, never = 0;
        for (size_t i = 0; i < w.n; i++) {
            int64_t id = w.jobs[i].id;
            never += starts[i] < 0;
            if (log->first[id] < 0)
                continue;
            reserved++;
            late += starts[i] * 1e6 > (double)log->first[id];
        }
        CHECK_INT(never, 0);
        CHECK_INT(late, 0);
        CHECK(reserved > 20); /* the workload really contends */
        CHECK(peak_slots(&w, starts) <= NODES * SLOTS);
        free(log);
        workload_release(&w);
    }
}

/* EASY: the head's reservation never moves later and it starts by it. */
static void test_easy_never_delays_head(void)
{
    check_reservations_hold("fcfs+easy");
}

/* Conservative: no reservation ever moves later; every job starts by the
 * first reservation it was given. */
static void test_conservative_never_delays(void)
{
    check_reservations_hold("fcfs+conservative");
}

static void test_all_policies_fit_and_finish(void)
{
    const char *orders[] = {"fcfs", "sjf", "f1", "wfp3", "unicep"};
    const char *fills[] = {"", "+easy", "+conservative"};
    struct workload w;
    fixture_random_workload(&w, RANDOM_JOBS, NODES * SLOTS, 42);
    for (int o = 0; o < 5; o++) {
        for (int f = 0; f < 3; f++) {
            char spec[64];
            snprintf(spec, sizeof spec, "%s%s", orders[o], fills[f]);
            double a[RANDOM_JOBS], b[RANDOM_JOBS];
            CHECK_INT(fixture_replay(&w, NODES, SLOTS, spec, a, NULL), 0);
            CHECK_INT(fixture_replay(&w, NODES, SLOTS, spec, b, NULL), 0);
            CHECK(memcmp(a, b, sizeof a) == 0); /* deterministic */
            int never = 0, early = 0;
            for (size_t i = 0; i < w.n; i++) {
                never += a[i] < 0;
                early += a[i] * 1e6 < (double)w.jobs[i].submit_us;
            }
            CHECK_INT(never, 0);
            CHECK_INT(early, 0);
            CHECK(peak_slots(&w, a) <= NODES * SLOTS);
        }
    }
    workload_release(&w);
}

/* A feed told in steps (sim_options.feed, models/workload.h): each wait
 * tells `step` more jobs (at least those wanted), as a reader ahead or
 * behind the replay would, and breaks once it would tell `break_at`. */
struct step_feed {
    size_t n, step, told, break_at;
    int waits;
};

static size_t step_feed_wait(void *ctx, size_t want, enum workload_feed_state *state)
{
    struct step_feed *f = ctx;
    f->waits++;
    size_t next = f->told + f->step > want ? f->told + f->step : want;
    if (f->break_at && next >= f->break_at) {
        *state = WORKLOAD_FEED_BROKEN;
        return f->told;
    }
    f->told = next < f->n ? next : f->n;
    *state = f->told == f->n ? WORKLOAD_FEED_ENDED : WORKLOAD_FEED_MORE;
    return f->told;
}

static int run_spec(const struct workload *w, const char *spec, const struct sim_options *opt,
                    struct sim_result *res)
{
    struct cluster c;
    struct err err;
    err_clear(&err);
    const struct policy_ops *ops;
    void *state;
    char msg[256];
    if (cluster_init_homogeneous(&c, NODES, SLOTS, &err) != 0 ||
        policy_registry_create(spec, &ops, &state, msg, sizeof msg) != 0)
        return -1;
    int rc = fixture_run_ops(w, &c, ops, state, opt, res, &err);
    ops->destroy(state);
    cluster_release(&c);
    return rc;
}

/* A replay on a feed is the replay on the whole workload, however the jobs
 * are told (one at a time, a few, all at once), under policies that
 * backfill, keep reservations and preempt, on a busy cluster and on one
 * that empties between arrivals (where a run that took the jobs told for
 * all of them would end early); it reads no job past those told and not
 * the workload's count (the reader's until it is done: 0 here); and a feed
 * that breaks ends the run with SIM_FEED_BROKEN. */
static void replay_on_a_feed(const struct workload *w)
{
    const char *specs[] = {"fcfs", "fcfs+easy", "sjf+conservative", "srtf"};
    const size_t steps[] = {1, 7, RANDOM_JOBS};
    struct workload reading = *w; /* as a reader's caller holds it: the array, no count */
    reading.n = 0;
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        struct sim_result whole, fed;
        if (!CHECK_INT(run_spec(w, specs[k], NULL, &whole), 0))
            continue;
        for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
            struct step_feed sf = {w->n, steps[s], 0, 0, 0};
            struct workload_feed feed = {step_feed_wait, &sf};
            struct sim_options opt;
            sim_options_init(&opt);
            opt.feed = &feed;
            if (!CHECK_INT(run_spec(&reading, specs[k], &opt, &fed), 0))
                continue;
            int same = fed.n == whole.n && fed.stats.passes == whole.stats.passes &&
                       fed.stats.events == whole.stats.events && fed.stats.completed == whole.stats.completed &&
                       fed.stats.last_end_us == whole.stats.last_end_us;
            for (size_t i = 0; same && i < whole.n; i++)
                same = fed.jobs[i].start_us == whole.jobs[i].start_us && fed.jobs[i].end_us == whole.jobs[i].end_us &&
                       fed.jobs[i].outcome == whole.jobs[i].outcome &&
                       fed.jobs[i].preemptions == whole.jobs[i].preemptions;
            if (!CHECK(same))
                printf("  %s, %zu jobs a wait\n", specs[k], steps[s]);
            CHECK(sf.waits >= (int)((w->n + steps[s] - 1) / steps[s])); /* it did wait on the feed */
            sim_result_release(&fed);
        }
        sim_result_release(&whole);
        struct step_feed sf = {w->n, 5, 0, w->n / 2, 0};
        struct workload_feed feed = {step_feed_wait, &sf};
        struct sim_options opt;
        sim_options_init(&opt);
        opt.feed = &feed;
        struct sim_result broken;
        CHECK_INT(run_spec(&reading, specs[k], &opt, &broken), SIM_FEED_BROKEN);
        sim_result_release(&broken);
    }
}

static void test_replay_on_a_feed(void)
{
    struct workload w;
    fixture_random_workload(&w, RANDOM_JOBS, NODES * SLOTS, 7);
    replay_on_a_feed(&w); /* busy: about as much work as the cluster does */
    int idle = 0;
    for (size_t i = 0; i < w.n; i++) /* a tenth of the load: the cluster empties */
        w.jobs[i].submit_us *= 10;
    struct sim_result res;
    if (CHECK_INT(run_spec(&w, "fcfs", NULL, &res), 0)) {
        for (size_t i = 1; i < w.n; i++) { /* job i arrives after every job before it ended */
            int after_all = 1;
            for (size_t j = 0; after_all && j < i; j++)
                after_all = res.jobs[j].end_us <= w.jobs[i].submit_us;
            idle += after_all;
        }
        sim_result_release(&res);
    }
    CHECK(idle > 10);
    replay_on_a_feed(&w);
    workload_release(&w);
}

/* A policy that starts the first queued job whether or not it fits. */
static int greedy_create(const char *p, void **s, char *e, size_t n)
{
    *s = NULL;
    return 0;
}
static void greedy_destroy(void *s)
{
}
static int greedy_decide(void *s, const struct cluster_view *v, struct policy_decisions *out)
{
    out->n = out->n_allocs = 0;
    out->allocs[0] = (struct policy_alloc){0, v->queued[0].slots, 0, 0};
    out->n_allocs = 1;
    out->items[0] = (struct policy_decision){POLICY_START, 0, v->queued[0].id, v->now_us, 0, 1};
    out->n = 1;
    return 0;
}
static const struct policy_ops greedy_ops = {POLICY_ABI_VERSION, "greedy", "broken on purpose",
                                             greedy_create, greedy_destroy, greedy_decide, NULL};

static void test_contract_violation_caught(void)
{
    static const struct fixture_job jobs[] = {{0, 10, 10, 2}, {1, 10, 10, 2}};
    struct workload w;
    fixture_workload(&w, jobs, 2);
    struct cluster c;
    struct err err;
    err_clear(&err);
    cluster_init_homogeneous(&c, 1, 2, &err);
    struct sim_result res;
    CHECK_INT(fixture_run_ops(&w, &c, &greedy_ops, NULL, NULL, &res, &err), -1);
    CHECK(strstr(err.msg, "policy 'greedy' broke the contract") != NULL);
    CHECK(strstr(err.msg, "over-allocated a node") != NULL);
    sim_result_release(&res);
    cluster_release(&c);
    workload_release(&w);
}

static void test_too_big_and_invalid_skipped(void)
{
    static const struct fixture_job jobs[] = {{0, 10, 10, 9}, {1, 10, 10, 0}, {2, 10, 10, 8}};
    struct workload w;
    fixture_workload(&w, jobs, 3);
    struct cluster c;
    struct err err;
    err_clear(&err);
    cluster_init_homogeneous(&c, 2, 4, &err);
    const struct policy_ops *ops;
    void *st;
    char msg[128];
    CHECK_INT(policy_registry_create("fcfs+easy", &ops, &st, msg, sizeof msg), 0);
    struct sim_result res;
    CHECK_INT(fixture_run_ops(&w, &c, ops, st, NULL, &res, &err), 0);
    CHECK_INT(res.jobs[0].outcome, SIM_JOB_SKIPPED_TOO_BIG);
    CHECK_INT(res.jobs[1].outcome, SIM_JOB_SKIPPED_INVALID);
    CHECK_INT(res.jobs[2].outcome, SIM_JOB_COMPLETED);
    CHECK_INT(res.jobs[2].start_us, 2000000);
    CHECK_INT(res.jobs[2].n_nodes, 2);
    CHECK_INT(res.stats.skipped_too_big, 1);
    ops->destroy(st);
    sim_result_release(&res);
    cluster_release(&c);
    workload_release(&w);
}

static void test_unknown_policy(void)
{
    const struct policy_ops *ops;
    void *st;
    char msg[256];
    CHECK_INT(policy_registry_create("fifo+easy", &ops, &st, msg, sizeof msg), -1);
    CHECK(strstr(msg, "unknown ordering 'fifo'") != NULL);
    CHECK_INT(policy_registry_create("fcfs+backfill", &ops, &st, msg, sizeof msg), -1);
    CHECK(strstr(msg, "did you mean 'easy'?") != NULL);
}

/* A host that cannot preempt refuses a preemptive policy when it is
 * created, naming what it cannot do; the kinds come from the composition. */
static void test_host_kinds_refused_at_creation(void)
{
    struct policy_host h;
    struct err err;
    err_clear(&err);
    struct policy_host_options no_preempt = {.host_kinds = POLICY_KINDS_START | POLICY_KINDS_RESERVE,
                                             .host_name = "the test host"};
    CHECK_INT(policy_host_open(&h, "srtf", &no_preempt, &err), -1);
    CHECK_STR(err.msg, "policy 'srtf' may preempt running jobs, which the test host does not carry out; choose a "
                       "policy without preempt");
    err_clear(&err);
    CHECK_INT(policy_host_open(&h, "fcfs+easy+preempt", &no_preempt, &err), -1);
    err_clear(&err);
    CHECK_INT(policy_host_open(&h, "fcfs+easy", &no_preempt, &err), 0);
    CHECK_INT(h.kinds, POLICY_KINDS_START | POLICY_KINDS_RESERVE);
    policy_host_close(&h);
    struct policy_host_options starts_only = {.host_kinds = POLICY_KINDS_START, .host_name = "the test host"};
    CHECK_INT(policy_host_open(&h, "sjf+easy", &starts_only, &err), -1);
    CHECK(strstr(err.msg, "may reserve") != NULL);
    err_clear(&err);
    CHECK_INT(policy_host_open(&h, "sjf", &starts_only, &err), 0);
    policy_host_close(&h);
}

/* One tie rule for running_by_end: expected end, then submit, then id. */
static void test_running_by_end_ties(void)
{
    struct policy_running r[4];
    memset(r, 0, sizeof r);
    r[0].expected_end_us = 100, r[0].job.submit_us = 5, r[0].job.id = 9;
    r[1].expected_end_us = 100, r[1].job.submit_us = 5, r[1].job.id = 3;
    r[2].expected_end_us = 50, r[2].job.submit_us = 7, r[2].job.id = 1;
    r[3].expected_end_us = 100, r[3].job.submit_us = 2, r[3].job.id = 20;
    uint32_t by_end[4];
    policy_host_order_by_end(r, 4, by_end);
    CHECK_INT(by_end[0], 2);
    CHECK_INT(by_end[1], 3);
    CHECK_INT(by_end[2], 1);
    CHECK_INT(by_end[3], 0);
}

/* What the policy sees of the queue, pass after pass: every job that has
 * arrived and is not running or done, once, in arrival order (a preempted
 * job back where it arrived), and a job that left it for good never comes
 * back; and where the host says the queue is tracked, a coordinate outside
 * the ranges it says changed holds the job it held in the last view. The
 * host keeps the queue at an offset in its buffers and closes each gap
 * toward the nearer end; long random runs with starts near the head
 * (FCFS), deep in the queue (backfilling) and preemptions requeued near
 * the head take every path. For a policy that reads gaps (fcfs+easy,
 * fcfs, fcfs+conservative) a start deep in the queue may leave a gap:
 * entries with gap set
 * keep arrival order, never lie at either end, are counted in the view's
 * n_queue_gaps, are at most an eighth of the queue after a pass's close,
 * and are no job (the job they held is running). */
enum { QUEUE_JOBS = 3000 };

struct queue_log {
    const struct workload *w;
    uint8_t gone[QUEUE_JOBS + 1]; /* arrived, then neither queued nor running */
    uint8_t where[QUEUE_JOBS + 1]; /* this pass: 1 queued, 2 running */
    int disorder, twice, back, passes;
    uint32_t deepest;
    /* the last view's queue, by coordinate */
    int64_t last_id[QUEUE_JOBS];
    uint64_t last_origin;
    uint32_t last_n;
    int moved_kept; /* jobs outside the changed ranges that were not where the record says */
    int gaps_miscounted, gaps_at_ends, gaps_too_many;
    uint64_t gaps_seen; /* over all views */
    int both_ends; /* tracked views with changes at both ends and jobs kept between them */
};

static int coordinate_changed(const struct cluster_view *v, uint64_t c)
{
    for (uint32_t k = 0; k < v->n_queue_dirty; k++)
        if (c >= v->queue_dirty[2 * k] && c < v->queue_dirty[2 * k + 1])
            return 1;
    return 0;
}

/* The record's promise: what it does not name kept its coordinate. */
static void check_queue_record(struct queue_log *log, const struct cluster_view *v)
{
    if (v->queue_tracked) {
        uint32_t kept = 0, changed_before = 0, changed_after = 0;
        for (uint32_t i = 0; i < v->n_queued; i++) {
            uint64_t c = v->queue_origin + i;
            if (coordinate_changed(v, c)) {
                changed_before += kept == 0;
                changed_after += kept > 0;
                continue;
            }
            if (c < log->last_origin || c >= log->last_origin + log->last_n ||
                log->last_id[c - log->last_origin] != (v->queued[i].gap ? -v->queued[i].id : v->queued[i].id))
                log->moved_kept++;
            kept++;
        }
        log->both_ends += kept > 0 && changed_before > 0 && changed_after > 0;
    }
    log->last_origin = v->queue_origin;
    log->last_n = v->n_queued;
    for (uint32_t i = 0; i < v->n_queued && i < QUEUE_JOBS; i++)
        log->last_id[i] = v->queued[i].gap ? -v->queued[i].id : v->queued[i].id; /* a gap is another entry */
}

static void check_queue(void *ctx, const struct cluster_view *v, const struct policy_decisions *d)
{
    (void)d;
    struct queue_log *log = ctx;
    check_queue_record(log, v);
    log->passes++;
    if (v->n_queued > log->deepest)
        log->deepest = v->n_queued;
    memset(log->where, 0, sizeof log->where);
    uint32_t gaps = 0;
    for (uint32_t i = 0; i < v->n_queued; i++) {
        int64_t id = v->queued[i].id;
        if (i > 0 && id <= v->queued[i - 1].id)
            log->disorder++;
        if (v->queued[i].gap) {
            gaps++;
            continue;
        }
        log->twice += log->where[id] != 0;
        log->where[id] = 1;
    }
    log->gaps_miscounted += gaps != v->n_queue_gaps;
    log->gaps_at_ends += v->n_queued > 0 && (v->queued[0].gap || v->queued[v->n_queued - 1].gap);
    /* a pass's close leaves at most an eighth; arrivals since only add jobs */
    log->gaps_too_many += gaps > (v->n_queued - gaps) / 7 + 1;
    log->gaps_seen += gaps;
    for (uint32_t i = 0; i < v->n_running; i++) {
        int64_t id = v->running[i].job.id;
        log->twice += log->where[id] != 0;
        log->where[id] = 2;
    }
    for (size_t k = 0; k < log->w->n && log->w->jobs[k].submit_us <= v->now_us; k++) {
        int64_t id = log->w->jobs[k].id;
        if (log->where[id] && log->gone[id])
            log->back++;
        if (!log->where[id])
            log->gone[id] = 1;
    }
}

static void test_queue_view_in_order(void)
{
    const char *specs[] = {"fcfs+easy", "fcfs", "fcfs+conservative", "sjf+conservative", "srtf", "tiresias"};
    for (int s = 0; s < 6; s++) {
        struct workload w;
        fixture_random_workload(&w, QUEUE_JOBS, NODES * SLOTS, 7 + (uint64_t)s);
        struct queue_log *log = calloc(1, sizeof *log);
        log->w = &w;
        struct sim_options opt;
        sim_options_init(&opt);
        opt.on_pass = check_queue;
        opt.hook_ctx = log;
        double *starts = malloc(QUEUE_JOBS * sizeof *starts);
        CHECK_INT(fixture_replay(&w, NODES, SLOTS, specs[s], starts, &opt), 0);
        int never = 0;
        for (size_t i = 0; i < w.n; i++)
            never += starts[i] < 0;
        if (!CHECK_INT(log->disorder, 0) || !CHECK_INT(log->twice, 0) || !CHECK_INT(log->back, 0) ||
            !CHECK_INT(never, 0) || !CHECK_INT(log->moved_kept, 0) || !CHECK_INT(log->gaps_miscounted, 0) ||
            !CHECK_INT(log->gaps_at_ends, 0) || !CHECK_INT(log->gaps_too_many, 0))
            printf("  policy %s\n", specs[s]);
        if (s == 0) /* EASY starts the head and a backfilled job deep down in one pass */
            CHECK(log->both_ends > 0);
        if (s == 0 || s == 2) /* EASY and conservative leave gaps open deep in the queue */
            CHECK(log->gaps_seen > 0);
        if (s >= 3) /* policies that read no gaps are shown none */
            CHECK_INT(log->gaps_seen, 0);
        CHECK(log->passes > QUEUE_JOBS);
        CHECK(log->deepest > 100); /* deep enough to grow the buffers and slide */
        free(starts);
        free(log);
        workload_release(&w);
    }
}

/* Job `id` (its workload index too) into the queue where it arrived. */
static void queue_push(struct waiting_queue *q, uint32_t id)
{
    uint32_t pos;
    CHECK_INT(waiting_queue_insert(q, id, &pos), 0);
    q->jobs[pos] = (struct policy_job){.id = id};
}

/* A queue of jobs 0..n-1, seen by a policy. */
static void queue_fill(struct waiting_queue *q, uint32_t n, int keep_gaps)
{
    waiting_queue_init(q);
    q->keep_gaps = keep_gaps;
    for (uint32_t i = 0; i < n; i++)
        queue_push(q, i);
    waiting_queue_seen(q);
}

/* Gaps near both ends of a deep queue close toward their own ends: only
 * the jobs between each gap and its end move (one direction for all moved
 * the whole queue), every other job keeps its coordinate, and the queue
 * holds the rest in order. */
static void test_waiting_queue_gaps_close_toward_nearer_end(void)
{
    enum { N = 1000 };
    struct waiting_queue q;
    queue_fill(&q, N, 0);
    uint64_t origin = q.off;
    static const uint32_t leaving[] = {1, 2, 500, 997, 998};
    for (size_t k = 0; k < sizeof leaving / sizeof *leaving; k++)
        waiting_queue_mark(&q, leaving[k]);
    waiting_queue_close_gaps(&q);
    CHECK_INT(q.n, N - 5);
    uint64_t covered = 0;
    for (uint32_t k = 0; k < q.n_dirty; k++)
        covered += q.dirty[2 * k + 1] - q.dirty[2 * k];
    CHECK(covered <= 505); /* the head's 3, and the 501 from gap 500 to the end */
    uint32_t at = 0, bad = 0;
    for (uint32_t i = 0; i < N; i++) {
        int gone = i == 1 || i == 2 || i == 500 || i == 997 || i == 998;
        if (gone)
            continue;
        bad += q.jobs[at].id != i || q.w[at] != i;
        at++;
    }
    CHECK_INT(bad, 0);
    /* job 3 .. 499 kept their coordinates: origin + i */
    CHECK_INT((int64_t)(q.off + 1), (int64_t)(origin + 3));
    CHECK_INT(q.jobs[1].id, 3);
    waiting_queue_release(&q);
}

/* For a policy that reads gaps: a start deep in a long queue leaves a gap
 * (marked, counted, its coordinate in the record); starts near either end
 * close at once; once the gaps are an eighth of the queue they all close.
 * Then random passes of starts, arrivals and requeues against a list of the jobs
 * that must be waiting: the entries that are no gap are exactly those, in
 * order; no gap at either end; the count right. */
static void test_waiting_queue_keeps_costly_gaps(void)
{
    enum { N = 2000 };
    struct waiting_queue q;
    queue_fill(&q, N, 1);
    uint64_t origin = q.off;
    waiting_queue_mark(&q, 0);
    waiting_queue_mark(&q, 1000);
    waiting_queue_mark(&q, N - 1);
    waiting_queue_close_gaps(&q);
    CHECK_INT(q.n, N - 2); /* the head and the last closed, 1000 is a gap */
    CHECK_INT(q.n_gaps, 1);
    CHECK_INT(waiting_queue_waiting(&q), N - 3);
    CHECK_INT(q.off, origin + 1);
    CHECK_INT(q.jobs[999].id, 1000);
    CHECK_INT(q.jobs[999].gap, 1);
    CHECK_INT(q.jobs[998].gap + q.jobs[1000].gap, 0);
    struct cluster_view v;
    memset(&v, 0, sizeof v);
    waiting_queue_view(&q, &v, 1);
    CHECK_INT(v.n_queue_gaps, 1);
    int named = 0;
    for (uint32_t k = 0; k < v.n_queue_dirty; k++)
        named |= v.queue_dirty[2 * k] <= origin + 1000 && origin + 1000 < v.queue_dirty[2 * k + 1];
    CHECK(named); /* the gap's coordinate is in the record */
    uint64_t covered = 0;
    for (uint32_t k = 0; k < v.n_queue_dirty; k++)
        covered += v.queue_dirty[2 * k + 1] - v.queue_dirty[2 * k];
    CHECK(covered <= 4); /* no job moved */
    waiting_queue_seen(&q);
    /* deep starts, one a pass, until the gaps would pass an eighth */
    uint32_t passes = 0;
    while (q.n_gaps > 0 && passes < 400) {
        uint32_t p = q.n / 2;
        while (q.jobs[p].gap)
            p++;
        waiting_queue_mark(&q, p);
        waiting_queue_close_gaps(&q);
        passes++;
    }
    CHECK(passes > 200 && passes < 400); /* about n / 8 of them, then all closed at once */
    CHECK_INT(q.n, waiting_queue_waiting(&q));
    uint32_t disorder = 0;
    for (uint32_t i = 0; i < q.n; i++)
        disorder += q.jobs[i].gap || (i > 0 && q.jobs[i].id <= q.jobs[i - 1].id) || q.w[i] != (uint32_t)q.jobs[i].id;
    CHECK_INT(disorder, 0);

    /* random passes against the list of jobs that must be waiting */
    struct pcg32 r;
    pcg32_stream(&r, 5, RNG_TEST, 0);
    uint8_t *waiting = calloc(40000, 1);
    for (uint32_t i = 0; i < q.n; i++)
        waiting[q.jobs[i].id] = 1;
    uint32_t next_id = N, wrong = 0, ends = 0, miscount = 0, most = 0, requeued = 0;
    for (int pass = 0; pass < 3000 && next_id < 40000; pass++) {
        uint32_t starts = pcg32_bounded(&r, 4);
        for (uint32_t s = 0; s < starts && q.n; s++) {
            uint32_t p = pcg32_bounded(&r, 8) == 0 ? 0 : pcg32_bounded(&r, q.n);
            if (q.jobs[p].gap)
                continue;
            waiting_queue_mark(&q, p);
            waiting[q.jobs[p].id] = 0;
        }
        waiting_queue_close_gaps(&q);
        uint32_t arrivals = pcg32_bounded(&r, 5);
        for (uint32_t a = 0; a < arrivals && next_id < 40000; a++, next_id++) {
            queue_push(&q, next_id);
            waiting[next_id] = 1;
        }
        if (pcg32_bounded(&r, 4) == 0) {
            /* a job that started comes back (preempted, or its node
             * failed): where it arrived, maybe beside its own open gap */
            uint32_t id = pcg32_bounded(&r, next_id);
            if (!waiting[id]) {
                queue_push(&q, id);
                waiting[id] = 1;
                requeued++;
            }
        }
        uint32_t gaps = 0, at = 0;
        for (uint32_t i = 0; i < q.n; i++) {
            if (q.jobs[i].gap) {
                gaps++;
                continue;
            }
            while (at < next_id && !waiting[at])
                at++;
            wrong += q.jobs[i].id != at || q.w[i] != at;
            at++;
        }
        while (at < next_id && !waiting[at])
            at++;
        wrong += at != next_id; /* a waiting job missing */
        miscount += gaps != q.n_gaps;
        ends += q.n > 0 && (q.jobs[0].gap || q.jobs[q.n - 1].gap);
        most = gaps > most ? gaps : most;
    }
    CHECK_INT(wrong, 0);
    CHECK_INT(miscount, 0);
    CHECK_INT(ends, 0);
    CHECK(most > 10); /* gaps did stay open */
    CHECK(requeued > 100);
    free(waiting);
    waiting_queue_release(&q);
}

void suite_simulation(void)
{
    test_run("waiting queue: gaps close toward the nearer end", test_waiting_queue_gaps_close_toward_nearer_end);
    test_run("waiting queue: costly gaps stay open, for a policy that reads them", test_waiting_queue_keeps_costly_gaps);
    test_run("policy host refuses kinds it cannot carry out", test_host_kinds_refused_at_creation);
    test_run("policy host orders running jobs by end with one tie rule", test_running_by_end_ties);
    test_run("simulation EASY never delays the head", test_easy_never_delays_head);
    test_run("simulation conservative never delays a reservation", test_conservative_never_delays);
    test_run("simulation all policies fit, finish, deterministic", test_all_policies_fit_and_finish);
    test_run("simulation catches a contract violation", test_contract_violation_caught);
    test_run("simulation on a feed: as on the whole workload", test_replay_on_a_feed);
    test_run("simulation skips jobs too big or empty", test_too_big_and_invalid_skipped);
    test_run("simulation unknown policy", test_unknown_policy);
    test_run("simulation queue view: every waiting job once, in arrival order", test_queue_view_in_order);
}
