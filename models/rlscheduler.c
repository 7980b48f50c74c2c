#include "models/rlscheduler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const size_t rlscheduler_window_starts[RLSCHEDULER_WINDOWS] = {1981, 2756, 4299, 8850, 3316,
                                                               2714, 5228, 7762, 4022, 7085};

/* Times stay in whole seconds here, as in the reference. */
struct rls_job {
    int64_t id, submit, run, request, procs, nodes;
    int64_t scheduled; /* -1 while waiting */
};

struct sort_item {
    double k1, k2;
    uint32_t pos; /* current list position: makes qsort stable */
    uint32_t job;
};

struct rls {
    const struct rlscheduler_options *opt;
    struct rls_job *jobs; /* the window */
    uint32_t n, next;     /* next arrival */
    uint32_t *queue, n_queue;
    uint32_t *running, n_running;
    uint32_t *snapshot;
    struct sort_item *scratch;
    int64_t now, free_nodes;
    double procs_per_node;
    double bsld_sum, util_num;
    struct err *err;
};

static int item_cmp(const void *pa, const void *pb)
{
    const struct sort_item *a = pa, *b = pb;
    if (a->k1 != b->k1)
        return a->k1 < b->k1 ? -1 : 1;
    if (a->k2 != b->k2)
        return a->k2 < b->k2 ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Python's list.sort() is stable: equal keys keep their current order. The
 * caller fills s->scratch with keys and positions. */
static void stable_sort(struct rls *s, uint32_t *list, uint32_t n)
{
    qsort(s->scratch, n, sizeof *s->scratch, item_cmp);
    for (uint32_t i = 0; i < n; i++)
        list[i] = s->scratch[i].job;
}

static void sort_queue(struct rls *s, enum ordering_kind kind)
{
    for (uint32_t i = 0; i < s->n_queue; i++) {
        const struct rls_job *j = &s->jobs[s->queue[i]];
        struct policy_job pj = {.id = j->id, .submit_us = j->submit * 1000000, .estimate_us = j->request * 1000000,
                                 .slots = (int32_t)j->procs, .user = -1, .team = -1, .reserved_us = -1};
        struct ordering_key key = ordering_key_of(kind, &pj, s->now * 1000000, s->opt->compat_wait, i);
        s->scratch[i] = (struct sort_item){key.primary, key.secondary, i, s->queue[i]};
    }
    stable_sort(s, s->queue, s->n_queue);
}

/* Sorts running jobs by (scheduled + run) or (scheduled + request). */
static void sort_running(struct rls *s, int by_request)
{
    for (uint32_t i = 0; i < s->n_running; i++) {
        const struct rls_job *j = &s->jobs[s->running[i]];
        double end = (double)(j->scheduled + (by_request ? j->request : j->run));
        s->scratch[i] = (struct sort_item){end, 0, i, s->running[i]};
    }
    stable_sort(s, s->running, s->n_running);
}

static int can_allocate(const struct rls *s, const struct rls_job *j)
{
    return j->nodes <= s->free_nodes;
}

static void remove_at(uint32_t *list, uint32_t *n, uint32_t pos)
{
    memmove(&list[pos], &list[pos + 1], (*n - pos - 1) * sizeof *list);
    (*n)--;
}

static void remove_job(uint32_t *list, uint32_t *n, uint32_t job)
{
    for (uint32_t i = 0; i < *n; i++) {
        if (list[i] == job) {
            remove_at(list, n, i);
            return;
        }
    }
}

static void start_job(struct rls *s, uint32_t ji)
{
    struct rls_job *j = &s->jobs[ji];
    j->scheduled = s->now;
    s->free_nodes -= j->nodes;
    s->running[s->n_running++] = ji;
    double wait_run = (double)(j->scheduled - j->submit + j->run);
    double bsld = wait_run / (double)(j->run > 10 ? j->run : 10);
    s->bsld_sum += (bsld > 1.0 ? bsld : 1.0) / (double)s->n;
    s->util_num += (double)(j->run * j->procs);
}

/* One event: the next arrival if it is not later than the next completion,
 * else that completion. */
static int step(struct rls *s)
{
    if (s->n_running == 0 && s->next >= s->n)
        return err_set(s->err, NULL, 0, 0, "rlscheduler protocol: nothing left to wait for");
    int64_t release = INT64_MAX;
    if (s->n_running) {
        sort_running(s, 0);
        const struct rls_job *r = &s->jobs[s->running[0]];
        release = r->scheduled + r->run;
    }
    if (s->next < s->n && s->jobs[s->next].submit <= release) {
        if (s->jobs[s->next].submit > s->now)
            s->now = s->jobs[s->next].submit;
        s->queue[s->n_queue++] = s->next++;
    } else {
        if (release > s->now)
            s->now = release;
        s->free_nodes += s->jobs[s->running[0]].nodes;
        remove_at(s->running, &s->n_running, 0);
    }
    return 0;
}

static int wait_without_backfill(struct rls *s, const struct rls_job *head)
{
    while (!can_allocate(s, head))
        if (step(s) != 0)
            return -1;
    return 0;
}

/* The reference code's backfilling, kept as it is (its published tables
 * depend on it): the reservation is the expected end of the running job
 * that makes the head fit, and a job backfills only if it ends before it;
 * there are no extra slots at all, so textbook EASY's count of them
 * (policies/backfill.c) does not apply here. */
static int wait_with_backfill(struct rls *s, const struct rls_job *head)
{
    int64_t reservation = s->now;
    sort_running(s, 1);
    double free_procs = (double)s->free_nodes * s->procs_per_node;
    for (uint32_t i = 0; i < s->n_running; i++) {
        const struct rls_job *r = &s->jobs[s->running[i]];
        free_procs += (double)r->nodes * s->procs_per_node;
        reservation = r->scheduled + r->request;
        if (free_procs >= (double)head->procs)
            break;
    }
    while (!can_allocate(s, head)) {
        sort_queue(s, ORDERING_FCFS);
        /* iterate over a snapshot, as the reference does */
        uint32_t n = s->n_queue;
        uint32_t *snapshot = s->snapshot;
        memcpy(snapshot, s->queue, n * sizeof *snapshot);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t ji = snapshot[k];
            const struct rls_job *j = &s->jobs[ji];
            if (s->now + j->request < reservation && can_allocate(s, j)) {
                start_job(s, ji);
                remove_job(s->queue, &s->n_queue, ji);
            }
        }
        if (step(s) != 0)
            return -1;
    }
    return 0;
}

/* After a start: if the queue is empty, advance until a job arrives.
 * Returns 1 if there is a job to consider, 0 when the window is done. */
static int next_job(struct rls *s)
{
    if (s->n_queue)
        return 1;
    if (s->next >= s->n)
        return 0;
    while (!s->n_queue)
        if (step(s) != 0)
            return -1;
    return 1;
}

static int run_window(struct rls *s, struct rlscheduler_window *out)
{
    const struct rlscheduler_options *opt = s->opt;
    s->now = s->jobs[0].submit;
    s->queue[0] = 0;
    s->n_queue = 1;
    s->next = 1;
    for (;;) {
        sort_queue(s, opt->ordering);
        uint32_t hi = s->queue[0];
        const struct rls_job *head = &s->jobs[hi];
        if (!can_allocate(s, head)) {
            int rc = opt->backfill ? wait_with_backfill(s, head) : wait_without_backfill(s, head);
            if (rc != 0)
                return -1;
        }
        start_job(s, hi);
        remove_job(s->queue, &s->n_queue, hi);
        int more = next_job(s);
        if (more < 0)
            return -1;
        if (!more)
            break;
    }
    out->bsld = s->bsld_sum;
    double span = (double)(s->now - s->jobs[0].submit) * (double)opt->procs;
    out->utilization = s->util_num / span;
    return 0;
}

int rlscheduler_run(const struct workload *w, const struct rlscheduler_options *opt, const size_t *starts,
                    size_t n, struct rlscheduler_window *out, struct err *err)
{
    size_t len = opt->window_len ? opt->window_len : RLSCHEDULER_WINDOW_LEN;
    if (opt->nodes < 1 || opt->procs < opt->nodes)
        return err_set(err, NULL, 0, 0, "rlscheduler protocol: machine of %lld nodes and %lld processors is not valid",
                       (long long)opt->nodes, (long long)opt->procs);
    struct rls s;
    memset(&s, 0, sizeof s);
    s.opt = opt;
    s.err = err;
    s.procs_per_node = (double)opt->procs / (double)opt->nodes;
    s.jobs = malloc(len * sizeof *s.jobs);
    s.queue = malloc(len * sizeof *s.queue);
    s.running = malloc(len * sizeof *s.running);
    s.scratch = malloc(len * sizeof *s.scratch);
    s.snapshot = malloc(len * sizeof *s.snapshot);
    int rc = -1;
    if (!s.jobs || !s.queue || !s.running || !s.scratch || !s.snapshot) {
        err_set(err, NULL, 0, 0, "out of memory");
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        if (starts[k] + len > w->n) {
            err_set(err, NULL, 0, 0,
                    "rlscheduler protocol: window at position %zu needs %zu jobs, the trace has %zu",
                    starts[k], starts[k] + len, w->n);
            goto done;
        }
        s.n = (uint32_t)len;
        for (size_t i = 0; i < len; i++) {
            const struct job *j = &w->jobs[starts[k] + i];
            struct rls_job *r = &s.jobs[i];
            r->id = j->id;
            r->submit = j->submit_us / 1000000;
            r->run = j->runtime_us / 1000000;
            r->request = j->limit_us < 0 ? -1 : j->limit_us / 1000000;
            r->procs = j->slots;
            r->nodes = (int64_t)ceil((double)j->slots / s.procs_per_node);
            r->scheduled = -1;
            if (r->nodes > opt->nodes) {
                err_set(err, NULL, 0, 0, "rlscheduler protocol: job '%lld' needs %lld nodes, the machine has %lld",
                        (long long)r->id, (long long)r->nodes, (long long)opt->nodes);
                goto done;
            }
        }
        s.free_nodes = opt->nodes;
        s.n_running = 0;
        s.bsld_sum = 0;
        s.util_num = 0;
        out[k].start = starts[k];
        out[k].first_id = s.jobs[0].id;
        if (run_window(&s, &out[k]) != 0)
            goto done;
    }
    rc = 0;
done:
    free(s.jobs);
    free(s.queue);
    free(s.running);
    free(s.scratch);
    free(s.snapshot);
    return rc;
}
