/* The order an SJF, F1, SRTF or Tiresias pass (its starvation rule too)
 * keeps from the last (policies/kept_order) against a fresh sort of the
 * same view (SJF's and F1's by ordering_sort), view after view of a queue
 * changed as the simulation host changes its own (tests/unit/model_queue:
 * arrivals, starts anywhere with the gap closed toward the nearer end,
 * requeues near the head, moves of the whole queue), with a quarter of the
 * passes writing no order (the record then covers several); and records
 * that do not hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/kept_order.h"
#include "policies/ordering.h"
#include "policies/srtf.h"
#include "policies/tiresias.h"
#include "sim/pcg32.h"
#include "tests/unit/model_queue.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

/* An order under test: its key (for SJF and F1 classic_key, whose ctx
 * names the ordering: the test compares with its ordering_sort; the
 * others' keys sorted by ordering_keys_sort, as the policy sorted them
 * every pass). */
struct tested {
    const char *name;
    kept_order_key_fn key;
    kept_order_changes_fn changes;
    const void *ctx;
};

static struct ordering_key classic_key(const void *ctx, const struct policy_job *job, int64_t now_us,
                                       uint32_t index)
{
    return ordering_key_of(*(const enum ordering_kind *)ctx, job, now_us, 0, index);
}

static struct ordering_key srtf_order_key(const void *ctx, const struct policy_job *job, int64_t now_us,
                                          uint32_t index)
{
    (void)ctx;
    (void)now_us;
    return srtf_key(job, index);
}

static struct ordering_key tiresias_order_key(const void *ctx, const struct policy_job *job, int64_t now_us,
                                              uint32_t index)
{
    return tiresias_key(ctx, job, now_us, index);
}

static int64_t tiresias_order_changes(const void *ctx, const struct policy_job *job, int64_t now_us)
{
    return tiresias_key_changes(ctx, job, now_us);
}

static const enum ordering_kind sjf = ORDERING_SJF, f1 = ORDERING_F1;
/* thresholds the model queue's attained service crosses (up to 400 us a
 * slot); starving, a job that attained 50 to 400 us a slot goes back to
 * queue 0 once now passes its submit time by 5 to 40 s. The model's
 * submit times run ahead of its views (a second apart), so many of its
 * jobs never wait that long, but hundreds do while they wait (below) */
static const struct tiresias three_queues = {{100, 2000}, 2, 0};
static const struct tiresias starving_queues = {{100, 2000}, 2, 1e5};
static const struct tested tested_sjf = {"SJF", classic_key, NULL, &sjf};
static const struct tested tested_f1 = {"F1", classic_key, NULL, &f1};
static const struct tested tested_srtf = {"SRTF", srtf_order_key, NULL, NULL};
static const struct tested tested_tiresias = {"Tiresias", tiresias_order_key, NULL, &three_queues};
static const struct tested tested_starving = {"Tiresias, starving", tiresias_order_key, tiresias_order_changes,
                                              &starving_queues};

static uint32_t want[MODEL_QUEUE_CAP], got[MODEL_QUEUE_CAP];
static struct ordering_key keys[MODEL_QUEUE_CAP], scratch[MODEL_QUEUE_CAP];
static struct ordering_key kept_keys[MODEL_QUEUE_CAP], kept_scratch[MODEL_QUEUE_CAP];

/* A fresh sort of the view into want[]. */
static void sort_fresh(const struct tested *t, const struct cluster_view *v)
{
    if (t->key == classic_key) {
        ordering_sort(*(const enum ordering_kind *)t->ctx, v, 0, keys, scratch, want);
        return;
    }
    for (uint32_t i = 0; i < v->n_queued; i++)
        keys[i] = t->key(t->ctx, &v->queued[i], v->now_us, i);
    ordering_keys_sort(keys, v->n_queued, scratch);
    for (uint32_t i = 0; i < v->n_queued; i++)
        want[i] = keys[i].index;
}

/* Whether the kept order's write gives a fresh sort's order; says where
 * it does not. */
static int write_equals_sort(const struct tested *t, struct kept_order *k, const struct cluster_view *v, int step)
{
    kept_order_write(k, v, kept_keys, kept_scratch, got);
    sort_fresh(t, v);
    for (uint32_t i = 0; i < v->n_queued; i++)
        if (!CHECK_INT(got[i], want[i])) {
            printf("  %s, step %d: place %u of %u (origin %llu)\n", t->name, step, i, v->n_queued,
                   (unsigned long long)v->queue_origin);
            return 0;
        }
    return 1;
}

/* One pass of the host: the record read, the order written and compared,
 * and how it was made: sorted afresh or merged (1 or 0), and the jobs
 * keyed for the merge (-1: not checked). */
static void pass(struct kept_order *k, const struct cluster_view *v, int step, int sorted_all, int keyed)
{
    kept_order_note(k, v);
    if (!CHECK(write_equals_sort(&tested_sjf, k, v, step)) || !CHECK_INT(k->sorted_all, sorted_all) ||
        (keyed >= 0 && !CHECK_INT(k->keyed, keyed)))
        printf("  step %d\n", step);
}

static void kept_equals_sorted(const struct tested *t, uint64_t seed, int least_ties)
{
    static struct model_queue m;
    memset(&m, 0, sizeof m);
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 43);
    struct kept_order k;
    kept_order_init(&k, t->key, t->changes, t->ctx);
    int writes = 0, afresh = 0, skipped = 0, ties = 0, longest = 0;
    uint64_t keyed = 0, waiting = 0, keyed_due = 0; /* over the writes that merged */
    for (int step = 0; step < 6000; step++) {
        for (uint32_t c = pcg32_bounded(&r, 3); c < 3; c++) /* one to three changes a view */
            model_queue_change(&m, &r);
        struct cluster_view v = {.now_us = step * 1000000LL, .total_slots = 100};
        model_queue_view(&m, &v);
        kept_order_note(&k, &v);
        if (pcg32_bounded(&r, 4) == 0) {
            skipped++; /* a pass that wrote no order (a full machine): the record covers more next time */
            model_queue_passed(&m);
            continue;
        }
        if (!write_equals_sort(t, &k, &v, step))
            break;
        writes++;
        afresh += k.sorted_all;
        if (!k.sorted_all) {
            keyed += k.keyed + k.keyed_due;
            keyed_due += k.keyed_due;
            waiting += v.n_queued;
        }
        longest = (int)v.n_queued > longest ? (int)v.n_queued : longest;
        for (uint32_t i = 1; i < v.n_queued; i++) {
            struct ordering_key a = t->key(t->ctx, &v.queued[want[i - 1]], v.now_us, 0);
            struct ordering_key b = t->key(t->ctx, &v.queued[want[i]], v.now_us, 0);
            ties += a.primary == b.primary && a.secondary == b.secondary;
        }
        model_queue_passed(&m);
    }
    /* most writes merged what the record named; some sorted afresh
     * (a queue moved in memory, or too much changed); equal keys were
     * ordered by place in the queue many times over */
    CHECK(writes > 4000);
    CHECK(afresh > 50);
    CHECK(writes - afresh > 3000);
    CHECK(ties > least_ties);
    CHECK(skipped > 1000);
    CHECK(longest > 1000);
    /* the merges keyed what the record named, not the whole queue (one
     * run: 54% of it, the model's starts moving many jobs, up to three
     * changes a view) */
    CHECK(keyed * 4 < waiting * 3);
    /* keys that change with time: many came due between the record's
     * changes (this build: 751 jobs keyed again as their time came) */
    if (t->changes && !CHECK(keyed_due > 500))
        printf("  %s: %llu keyed as their time came\n", t->name, (unsigned long long)keyed_due);
    kept_order_release(&k);
}

static void test_kept_equals_sorted(void)
{
    /* (this build: 40,738 and 31,358 ties under SJF, 2,144 under F1,
     * 73,707 under SRTF, 4,539,064 under Tiresias, whose three queues
     * hold jobs submitted three to a second) */
    kept_equals_sorted(&tested_sjf, 1, 10000);
    kept_equals_sorted(&tested_sjf, 2, 10000);
    kept_equals_sorted(&tested_f1, 3, 1000);
    kept_equals_sorted(&tested_srtf, 4, 1000);
    kept_equals_sorted(&tested_tiresias, 5, 1000);
    kept_equals_sorted(&tested_starving, 6, 1000);
}

/* tiresias_key_changes against tiresias_key itself, on random jobs whose
 * starvation limits (starve_factor x attained / slots) are mostly not
 * whole microseconds: the key is the same a microsecond before the time
 * given (never late) and queue 0 at it (exact, below 2^53 us); a job
 * given no time keeps its key for good. */
static void test_starving_times(void)
{
    struct pcg32 r;
    pcg32_stream(&r, 7, RNG_TEST, 44);
    struct tiresias t = {{1e6, 1e9}, 2, 0};
    uint32_t timed = 0, fractional = 0, past = 0;
    for (int c = 0; c < 200000; c++) {
        /* limits up to 1e15 us; one in a hundred with a factor of 1e6 to
         * 1e9, most past 2^53 (9.0e15), where the time given may be early */
        t.starve_factor = pcg32_bounded(&r, 100) ? (1 + pcg32_bounded(&r, 1000)) / (double)(1 + pcg32_bounded(&r, 1000))
                                                 : (1 + pcg32_bounded(&r, 1000)) * 1e6;
        struct policy_job job = {.id = c + 1, .slots = 1 + (int32_t)pcg32_bounded(&r, 512)};
        job.attained_us = pcg32_bounded(&r, 4) == 0 ? 0 : (int64_t)pcg32_bounded(&r, 1u << 30) * 1000;
        job.submit_us = (int64_t)pcg32_bounded(&r, 1u << 30) * 1000;
        int64_t now = job.submit_us + ((int64_t)pcg32_bounded(&r, 1u << 30) - (1 << 28)) * 100;
        double limit = t.starve_factor * (double)job.attained_us / job.slots;
        fractional += limit != (double)(int64_t)limit;
        double was = tiresias_key(&t, &job, now, 0).primary;
        int64_t at = tiresias_key_changes(&t, &job, now);
        int ok, early = 0;
        if (at == INT64_MAX) {
            ok = tiresias_key(&t, &job, INT64_MAX / 2, 0).primary == was;
        } else {
            timed++;
            early = limit >= 9007199254740992.0;
            ok = at > now && tiresias_key(&t, &job, at - 1, 0).primary == was && was != 0 &&
                 (early || tiresias_key(&t, &job, at, 0).primary == 0);
        }
        past += early;
        if (!CHECK(ok)) {
            printf("  case %d: factor %.17g, attained %lld, slots %d, submit %lld, now %lld: time %lld\n", c,
                   t.starve_factor, (long long)job.attained_us, job.slots, (long long)job.submit_us, (long long)now,
                   (long long)at);
            break;
        }
    }
    /* (this build: 50,433 timed, 1,476 of them past 2^53; 147,827 limits not whole) */
    if (!CHECK(timed > 40000) || !CHECK(past > 100) || !CHECK(fractional > 100000))
        printf("  %u timed, %u past 2^53, %u limits not whole\n", timed, past, fractional);
}

/* A job keyed again leaves its old time in the heap until it comes:
 * where the record names every job at every pass, with times far ahead,
 * the heap outgrows its bound (4 a job, and 1,024), and a write then
 * sorts afresh, which keeps only each job's one time. */
static void test_due_times_bounded(void)
{
    enum { N = 300 };
    static struct policy_job q[N];
    for (uint32_t i = 0; i < N; i++)
        q[i] = (struct policy_job){.id = i + 1, .submit_us = i, .slots = 1 + (int32_t)(i % 3),
                                   .attained_us = 500 * (1 + (int64_t)(i % 7))};
    static const struct tiresias starving = {{100, 2000}, 2, 1e6};
    struct kept_order k;
    kept_order_init(&k, tiresias_order_key, tiresias_order_changes, &starving);
    uint64_t all[2] = {0, N};
    struct cluster_view v = {.queued = q, .n_queued = N, .queue_tracked = 1, .queue_dirty = all, .n_queue_dirty = 1};
    int afresh = 0, merged = 0;
    uint32_t most = 0;
    for (int step = 0; step < 40; step++) {
        v.now_us = step;
        kept_order_note(&k, &v);
        if (!write_equals_sort(&tested_starving, &k, &v, step))
            break;
        afresh += k.sorted_all;
        merged += !k.sorted_all && k.keyed == N;
        most = k.n_due > most ? k.n_due : most;
    }
    /* the first write, then one each time the bound is passed (every
     * seventh: each merge notes N times more) */
    CHECK(afresh >= 4);
    CHECK(merged >= 30);
    CHECK(most <= 5 * N + 1024);
    kept_order_release(&k);
}

/* A record that does not hold, where the count shows it: a job put at the
 * end unrecorded. The write notices and sorts afresh. (A change the
 * record does not name and the count does not show, such as a start
 * inside the queue with the jobs after it moved, cannot be seen: the
 * contract is the host's, policy.h.) Untracked views, one after another,
 * and more changes than the ranges it keeps sort afresh too; what is
 * sorted afresh is kept. And the record's places before the origin. */
static void test_records_that_do_not_hold(void)
{
    enum { N = 200 };
    static struct policy_job q[N + 1];
    for (uint32_t i = 0; i <= N; i++)
        q[i] = (struct policy_job){.id = i + 1, .slots = 1, .estimate_us = 1000000 * (int64_t)((i * 37) % 11),
                                   .submit_us = i};
    struct kept_order k;
    kept_order_init(&k, tested_sjf.key, NULL, tested_sjf.ctx);
    struct cluster_view v = {.queued = q, .n_queued = N, .queue_origin = 50, .queue_tracked = 0};
    for (int step = 0; step < 2; step++) /* a host that records nothing */
        pass(&k, &v, step, 1, -1);
    v.queue_tracked = 1;
    pass(&k, &v, 2, 0, 0); /* nothing changed: merged, nothing keyed */
    v.n_queued = N + 1;    /* an arrival, unrecorded */
    pass(&k, &v, 3, 1, -1);
    pass(&k, &v, 4, 0, 0);
    /* the head starts: the record names a place before the new origin,
     * and nothing is keyed */
    uint64_t head[2] = {v.queue_origin, v.queue_origin + 1};
    v.queued = &q[1];
    v.queue_origin++;
    v.n_queued--;
    v.queue_dirty = head;
    v.n_queue_dirty = 1;
    pass(&k, &v, 5, 0, 0);
    v.queued = q; /* and is requeued: in its place again */
    v.queue_origin--;
    v.n_queued++;
    pass(&k, &v, 6, 0, 1);
    /* a start inside, recorded as the host does: the jobs after it moved */
    uint64_t dirt[2] = {v.queue_origin + 100, v.queue_origin + N + 1};
    memmove(&q[100], &q[101], (N - 100) * sizeof q[0]);
    v.n_queued = N;
    v.queue_dirty = dirt;
    pass(&k, &v, 7, 0, N - 100);
    /* more separate changes than the ranges kept: 100 jobs given new
     * estimates, each recorded alone; the write still sees them all */
    static uint64_t many[200];
    for (uint32_t c = 0; c < 100; c++) {
        q[2 * c].estimate_us = 1000000 * (int64_t)((c * 13) % 7);
        many[2 * c] = v.queue_origin + 2 * c;
        many[2 * c + 1] = v.queue_origin + 2 * c + 1;
    }
    v.queue_dirty = many;
    v.n_queue_dirty = 100;
    pass(&k, &v, 8, 1, -1);
    v.n_queue_dirty = 0;
    pass(&k, &v, 9, 0, 0);
    /* an empty queue, then jobs again */
    v.n_queued = 0;
    pass(&k, &v, 10, 0, 0);
    uint64_t all[2] = {v.queue_origin, v.queue_origin + N};
    v.n_queued = N;
    v.queue_dirty = all;
    v.n_queue_dirty = 1;
    pass(&k, &v, 11, 0, N);
    kept_order_release(&k);
}

void suite_kept_order(void)
{
    test_run("kept order: SJF, F1, SRTF and Tiresias orders (starving too) kept through the host's record equal "
             "a fresh sort, over 36,000 views",
             test_kept_equals_sorted);
    test_run("kept order: Tiresias' starvation times equal its key's change, on 200,000 random jobs",
             test_starving_times);
    test_run("kept order: times of jobs keyed again stay bounded, by sorting afresh", test_due_times_bounded);
    test_run("kept order: untracked views, a record the count belies, more changes than it keeps: sorted afresh",
             test_records_that_do_not_hold);
}
