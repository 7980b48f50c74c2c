/* The queue index (policies/queue_index) against a plain scan of the
 * queue, kept up to date from a change record like the simulation host's
 * over thousands of random appends, starts (gaps closed toward either end),
 * requeues near the head and moves of the whole queue; and whole replays
 * with and without the record, start for start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfill.h"
#include "policies/placement.h"
#include "policies/queue_index.h"
#include "sim/pcg32.h"
#include "tests/unit/model_queue.h"
#include "tests/unit/sim_fixture.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

/* The walk's own test, job by job. */
static uint32_t scan_next(const struct model_queue *m, uint32_t from, int64_t room, int64_t extra, int64_t window)
{
    for (uint32_t k = from; k < m->n; k++) {
        const struct policy_job *j = &m->buf[m->off + k];
        int64_t s = j->milli > 0 ? 0 : j->slots;
        if (s <= room && (queue_job_duration(j) <= window || s <= extra))
            return k;
    }
    return m->n;
}

/* With size classes (forced: a queue this short keeps one class unless
 * the walk wastes) or without; with the tree from the first job
 * (scan_below 0), or reading a short queue job by job until it is long
 * (the default: the model's queue grows past it). */
static void next_equals_scan(int classes, uint32_t scan_below)
{
    static struct model_queue m;
    struct pcg32 r;
    pcg32_stream(&r, 5, RNG_TEST, 41);
    struct queue_index x;
    queue_index_init(&x);
    x.want_classes = classes;
    x.scan_below = scan_below;
    int scanned = 0, built = 0, with_classes = 0;
    memset(&m, 0, sizeof m);
    int wrong = 0, found = 0, incremental = 0;
    for (int step = 0; step < 4000 && !wrong; step++) {
        model_queue_change(&m, &r);
        struct cluster_view v = {.queued = &m.buf[m.off], .n_queued = m.n, .queue_origin = m.off,
                                 .queue_dirty = m.dirt, .n_queue_dirty = m.n_dirt, .queue_tracked = m.tracked,
                                 .total_slots = 100};
        incremental += m.tracked;
        if (!CHECK_INT(queue_index_update(&x, &v), 0))
            break;
        scanned += x.scanning;
        built += !x.scanning;
        /* classes up to the largest job waiting at a rebuild (64 slots
         * at most, 100 in the cluster) */
        with_classes += !x.scanning && x.classes > 1;
        if (!x.scanning && !CHECK(classes ? x.classes <= 7 : x.classes == 1))
            break;
        model_queue_passed(&m);
        for (int q = 0; q < 20; q++) {
            uint32_t from = pcg32_bounded(&r, m.n + 2);
            int64_t room = (int64_t)pcg32_bounded(&r, 70) - 2, extra = (int64_t)pcg32_bounded(&r, 70) - 10;
            int64_t window = pcg32_bounded(&r, 8) == 0 ? INT64_MAX : (int64_t)pcg32_bounded(&r, 1100) - 50;
            uint32_t want = scan_next(&m, from < m.n ? from : m.n, room, extra, window);
            uint32_t got = queue_index_next(&x, &v, from, room, extra, window);
            found += want < m.n;
            if (!CHECK_INT(got, want)) {
                printf("  step %d: from %u room %lld extra %lld window %lld, queue of %u at %u\n", step, from,
                       (long long)room, (long long)extra, (long long)window, m.n, m.off);
                wrong = 1;
                break;
            }
        }
    }
    CHECK(found > 10000);     /* the queries do find jobs */
    CHECK(incremental > 3000); /* most steps update from the record */
    CHECK(built > 1000);
    CHECK(classes ? with_classes > 1000 : with_classes == 0);
    CHECK(scan_below == 0 ? scanned == 0 : scanned > 50);
    queue_index_release(&x);
}

/* Classes wanted on a queue of one-slot jobs size to one class, once:
 * later tracked passes do not rebuild the tree. Seen through a change the
 * host did not record: a rebuild would read it, an update does not. */
static void test_classes_sized_once(void)
{
    enum { N = 6000 };
    static struct policy_job jobs[N];
    for (uint32_t k = 0; k < N; k++)
        jobs[k] = (struct policy_job){.id = k + 1, .slots = 1, .estimate_us = 1000};
    struct queue_index x;
    queue_index_init(&x);
    x.want_classes = 1;
    struct cluster_view v = {.queued = jobs, .n_queued = N, .queue_tracked = 1, .total_slots = 100};
    CHECK_INT(queue_index_update(&x, &v), 0);
    CHECK_INT(x.classes, 1);
    /* nothing fits a window of 10 us; then job 4,000 gets one, unrecorded */
    CHECK_INT(queue_index_next(&x, &v, 0, 1, 0, 10), N);
    jobs[4000].estimate_us = 5;
    CHECK_INT(queue_index_update(&x, &v), 0);
    CHECK_INT(queue_index_next(&x, &v, 0, 1, 0, 10), N); /* not rebuilt */
    v.queue_tracked = 0; /* a host that records nothing gets a rebuild */
    CHECK_INT(queue_index_update(&x, &v), 0);
    CHECK_INT(queue_index_next(&x, &v, 0, 1, 0, 10), 4000);
    queue_index_release(&x);
}

static void test_next_equals_scan(void)
{
    next_equals_scan(0, 0);
    next_equals_scan(1, 0);
    next_equals_scan(0, QUEUE_INDEX_SCAN_BELOW);
}

/* What a replay's passes saw and did: the most gaps (policy_job.gap) a
 * view held, and the jobs preempted (each requeued, a change the host
 * records). */
struct replay_seen {
    uint32_t gaps, preempted;
};

static void note_pass(void *ctx, const struct cluster_view *v, const struct policy_decisions *d)
{
    struct replay_seen *seen = ctx;
    seen->gaps = v->n_queue_gaps > seen->gaps ? v->n_queue_gaps : seen->gaps;
    for (uint32_t i = 0; i < d->n; i++)
        seen->preempted += d->items[i].kind == POLICY_PREEMPT;
}

/* Whole replays under the policies the index serves, and the others that
 * read gaps: with the host's record, with the record withheld, and with
 * every gap closed at once (the queue as a policy that reads no gaps sees
 * it): the same start for every job, and the first run did leave gaps
 * open (conservative's promises read the record and the gaps too). Also
 * the orderings that keep their order through the record (SJF, F1,
 * SRTF, Tiresias). */
static void test_replay_with_and_without_record(void)
{
    /* Those that read no gaps and keep their order through the record
     * (policies/kept_order) sort every pass afresh when it is withheld.
     * The preempting ones requeue the jobs they stop: SRTF, Tiresias, and
     * FCFS, SJF and F1 with team tiers, which keep their order through
     * the record too. Tiresias with its starvation rule (waiting 3 times
     * what a job ran) keeps it with the times its keys change, and
     * without them fails here. WFP3 and UNICEP have keys that change as
     * jobs wait, and sort afresh every pass either way (keeping their
     * order fails here) */
    static const struct {
        const char *spec;
        int gaps;     /* 1: it reads gaps, and the first run leaves some; 0: shown none; -1: either */
        int preempts; /* the runs preempt (each job is given one of three teams for team tiers) */
    } runs[] = {
        {"fcfs+easy", 1, 0},
        {"fcfs+easy+spread", 1, 0},
        {"fcfs+easy+pack", 1, 0},
        {"fcfs", -1, 0}, /* reads gaps; starting from the head only, it may leave none */
        {"fcfs+conservative", 1, 0},
        {"sjf+easy", 0, 0},
        {"f1+conservative", 0, 0},
        {"sjf", 0, 0},
        {"srtf", 0, 1},
        {"tiresias(thresholds_gpu_s=100;400)", 0, 1},
        {"tiresias(thresholds_gpu_s=100;400,starve_factor=3)", 0, 1},
        {"fcfs+easy+preempt(team_tier=0:1;1:2;2:3)", 0, 1},
        {"sjf+easy+preempt(team_tier=0:1;1:2;2:3)", 0, 1},
        {"f1+preempt(team_tier=0:1;1:2;2:3)", 0, 1},
        {"wfp3+easy+preempt(team_tier=0:1;1:2;2:3)", 0, 1},
        {"unicep+preempt(team_tier=0:1;1:2;2:3)", 0, 1},
    };
    for (int s = 0; s < (int)(sizeof runs / sizeof *runs); s++)
        for (uint64_t seed = 1; seed <= 3; seed++) {
            const char *spec = runs[s].spec;
            struct workload w;
            fixture_random_workload(&w, 3000, 16, 100 * seed + (uint64_t)s);
            if (strstr(spec, "team_tier"))
                for (size_t i = 0; i < w.n; i++)
                    w.jobs[i].team = (int32_t)(i % 3);
            double *a = malloc(w.n * sizeof *a), *b = malloc(w.n * sizeof *b), *c = malloc(w.n * sizeof *c);
            struct sim_options opt;
            sim_options_init(&opt);
            struct replay_seen seen = {0, 0};
            opt.on_pass = note_pass;
            opt.hook_ctx = &seen;
            CHECK_INT(fixture_replay(&w, 4, 4, spec, a, &opt), 0);
            opt.on_pass = NULL;
            opt.untracked_queue = 1;
            CHECK_INT(fixture_replay(&w, 4, 4, spec, b, &opt), 0);
            opt.untracked_queue = 0;
            opt.compact_queue = 1;
            CHECK_INT(fixture_replay(&w, 4, 4, spec, c, &opt), 0);
            if (!CHECK(memcmp(a, b, w.n * sizeof *a) == 0) || !CHECK(memcmp(a, c, w.n * sizeof *a) == 0) ||
                !CHECK(runs[s].gaps == 1 ? seen.gaps > 0 : runs[s].gaps == -1 || seen.gaps == 0) ||
                !CHECK(runs[s].preempts ? seen.preempted > 0 : seen.preempted == 0))
                printf("  %s, seed %llu (at most %u gaps, %u preempted)\n", spec, (unsigned long long)seed,
                       seen.gaps, seen.preempted);
            free(a);
            free(b);
            free(c);
            workload_release(&w);
        }
}

/* EASY's pass itself, with the index and reading every job, on random
 * views of a busy cluster with deep queues of whole, fractional and shaped
 * jobs: the same decisions and allocations, byte for byte. This is the
 * claim the index is held to; the replay test below only compares the
 * index kept from the record with the index rebuilt. */
enum { V_NODES = 48, V_SLOTS = 8, V_QUEUED = 600 };

static void fill_view(struct pcg32 *r, struct cluster_view *v, struct policy_node *nodes, uint32_t *with_free,
                      struct policy_running *running, uint32_t *by_end, struct policy_alloc *allocs,
                      struct policy_job *queued)
{
    int64_t now = 1000000000;
    uint32_t n_run = 0;
    *v = (struct cluster_view){.now_us = now, .nodes = nodes, .n_nodes = V_NODES, .nodes_with_free = with_free,
                               .running = running, .running_by_end = by_end, .allocs = allocs, .queued = queued};
    for (uint32_t i = 0; i < V_NODES; i++) {
        nodes[i] = (struct policy_node){0, POLICY_NODE_UP, V_SLOTS, V_SLOTS, (int32_t)(i / 4), (int32_t)(i / 8),
                                        (int32_t)(i / 16), 0, 0, 0};
        while (nodes[i].free_slots > 0 && pcg32_bounded(r, 100) < 85) {
            int32_t g = 1 + (int32_t)pcg32_bounded(r, (uint32_t)nodes[i].free_slots);
            nodes[i].free_slots -= g;
            int64_t start = now - (int64_t)pcg32_bounded(r, 3600) * 1000000;
            int64_t est = (60 + (int64_t)pcg32_bounded(r, 7200)) * 1000000;
            running[n_run] = (struct policy_running){{(int64_t)n_run + 1, start, est, g, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0, 0},
                                                     start, start + est, n_run, 1};
            allocs[n_run] = (struct policy_alloc){(int32_t)i, g, 0, 0};
            n_run++;
        }
        v->total_slots += V_SLOTS;
        v->free_slots += nodes[i].free_slots;
        if (nodes[i].free_slots > 0)
            with_free[v->n_nodes_with_free++] = i;
    }
    for (uint32_t i = 0; i < n_run; i++) { /* by expected end, ties by index */
        uint32_t k = i;
        while (k > 0 && running[by_end[k - 1]].expected_end_us > running[i].expected_end_us) {
            by_end[k] = by_end[k - 1];
            k--;
        }
        by_end[k] = i;
    }
    v->n_running = n_run;
    v->n_queued = 1 + pcg32_bounded(r, V_QUEUED);
    for (uint32_t k = 0; k < v->n_queued; k++) {
        int32_t slots = 1 + (int32_t)pcg32_bounded(r, pcg32_bounded(r, 3) == 0 ? 32 : 4), nodes_of = 0, milli = 0;
        if (pcg32_bounded(r, 8) == 0 && slots % 2 == 0)
            nodes_of = 2; /* two nodes, half on each */
        if (pcg32_bounded(r, 10) == 0) {
            slots = 1;
            milli = 100 + (int32_t)pcg32_bounded(r, 800);
        }
        queued[k] = (struct policy_job){(int64_t)(1000 + k), now - 1000000, (1 + (int64_t)pcg32_bounded(r, 9000)) * 1000000,
                                        slots, 0, 0, 0, 0, -1, 0, 0, 0, 0, milli, nodes_of};
    }
}

static int easy_pass(const struct cluster_view *v, const struct queue_index *x, struct policy_decisions *out)
{
    static uint32_t order[V_QUEUED];
    for (uint32_t k = 0; k < v->n_queued; k++)
        order[k] = k;
    struct placement pl;
    struct profile pr;
    placement_init(&pl);
    profile_init(&pr);
    struct backfill_pass pass = {.view = v, .order = order, .out = out, .placement = &pl, .profile = &pr, .index = x};
    out->n = out->n_allocs = 0;
    int rc = backfill_run(BACKFILL_EASY, &pass);
    backfill_pass_release(&pass);
    placement_release(&pl);
    profile_release(&pr);
    return rc;
}

static void test_pass_equals_full_walk(void)
{
    static struct policy_node nodes[V_NODES];
    static uint32_t with_free[V_NODES], by_end[V_NODES * V_SLOTS];
    static struct policy_running running[V_NODES * V_SLOTS];
    static struct policy_alloc allocs[V_NODES * V_SLOTS], a_allocs[V_QUEUED * 4], b_allocs[V_QUEUED * 4];
    static struct policy_job queued[V_QUEUED];
    static struct policy_decision a_items[V_QUEUED + 8], b_items[V_QUEUED + 8];
    struct pcg32 r;
    pcg32_stream(&r, 9, RNG_TEST, 43);
    int differ = 0, started = 0, skipped_by_index = 0;
    for (int view = 0; view < 300 && !differ; view++) {
        struct cluster_view v;
        fill_view(&r, &v, nodes, with_free, running, by_end, allocs, queued);
        struct queue_index x;
        queue_index_init(&x);
        x.scan_below = 0; /* the tree, however short the view's queue */
        if (!CHECK_INT(queue_index_update(&x, &v), 0))
            break;
        struct policy_decisions a = {.items = a_items, .cap = V_QUEUED + 8, .allocs = a_allocs, .cap_allocs = V_QUEUED * 4};
        struct policy_decisions b = {.items = b_items, .cap = V_QUEUED + 8, .allocs = b_allocs, .cap_allocs = V_QUEUED * 4};
        CHECK_INT(easy_pass(&v, NULL, &a), 0);
        CHECK_INT(easy_pass(&v, &x, &b), 0);
        if (!CHECK_INT(b.n, a.n) || memcmp(a.items, b.items, a.n * sizeof *a.items) != 0 ||
            !CHECK_INT(b.n_allocs, a.n_allocs) || memcmp(a.allocs, b.allocs, a.n_allocs * sizeof *a.allocs) != 0) {
            printf("  view %d: %u decisions read in full, %u with the index\n", view, a.n, b.n);
            differ = 1;
        }
        for (uint32_t k = 0; k < a.n; k++)
            started += a.items[k].kind == POLICY_START;
        skipped_by_index += queue_index_next(&x, &v, 0, 0, -1, 0) == v.n_queued;
        queue_index_release(&x);
    }
    CHECK_INT(differ, 0);
    CHECK(started > 300); /* the walks do start jobs */
    CHECK(skipped_by_index > 0);
}

void suite_queue_index(void)
{
    test_run("queue index: classes wanted on one-slot jobs are sized once, not rebuilt every pass",
             test_classes_sized_once);
    test_run("queue index: the next job that might start equals a scan, over 4,000 random changes",
             test_next_equals_scan);
    test_run("queue index: EASY's pass decides alike with the index and reading every job, on 300 views",
             test_pass_equals_full_walk);
    test_run("queue index: replays with and without the host's record, and with gaps closed at once, start every job alike",
             test_replay_with_and_without_record);
}
