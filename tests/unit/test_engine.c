#include <stdio.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

static void test_order_time_class_sequence(void)
{
    struct engine e;
    engine_init(&e, 0);
    /* scheduled out of order on purpose */
    CHECK(engine_schedule(&e, 20, EVENT_CLASS_ARRIVAL, 1, 0, 0));
    CHECK(engine_schedule(&e, 10, EVENT_CLASS_ARRIVAL, 2, 0, 0));
    CHECK(engine_schedule(&e, 10, EVENT_CLASS_COMPLETION, 3, 0, 0));
    CHECK(engine_schedule(&e, 10, EVENT_CLASS_ARRIVAL, 4, 0, 0));
    CHECK(engine_schedule(&e, 10, EVENT_CLASS_FAILURE, 5, 0, 0));
    int want[] = {5, 3, 2, 4, 1};
    struct event ev;
    for (int i = 0; i < 5; i++) {
        CHECK(engine_pop(&e, &ev));
        CHECK_INT(ev.kind, want[i]);
    }
    CHECK(!engine_pop(&e, &ev));
    CHECK_INT(engine_now(&e), 20);
    engine_release(&e);
}

static void test_refuses_past(void)
{
    struct engine e;
    engine_init(&e, 100);
    CHECK_INT(engine_schedule(&e, 99, EVENT_CLASS_TIMER, 1, 0, 0), 0);
    CHECK(engine_schedule(&e, 100, EVENT_CLASS_TIMER, 1, 0, 0) != 0);
    engine_release(&e);
}

static void test_cancel(void)
{
    struct engine e;
    engine_init(&e, 0);
    uint64_t h[100];
    for (int i = 0; i < 100; i++)
        h[i] = engine_schedule(&e, i, EVENT_CLASS_TIMER, i, 0, 0);
    for (int i = 0; i < 100; i += 3)
        CHECK_INT(engine_cancel(&e, h[i]), 0);
    CHECK_INT(engine_cancel(&e, h[0]), -1); /* twice, while it is still held */
    CHECK_INT(engine_pending(&e), 66);
    struct event ev;
    int n = 0, bad = 0;
    while (engine_pop(&e, &ev)) {
        bad += ev.kind % 3 == 0;
        n++;
    }
    CHECK_INT(n, 66);
    CHECK_INT(bad, 0);
    engine_release(&e);
}

struct instants {
    int events, instants;
    sim_time last;
    int order_ok;
};

static int count_event(void *ctx, const struct event *ev)
{
    struct instants *c = ctx;
    c->order_ok &= ev->time_us >= c->last;
    c->last = ev->time_us;
    c->events++;
    return 0;
}

static int count_instant(void *ctx, sim_time now)
{
    struct instants *c = ctx;
    c->instants++;
    return 0;
}

static void test_run_until_instants(void)
{
    struct engine e;
    engine_init(&e, 0);
    for (int i = 0; i < 10; i++)
        engine_schedule(&e, (i / 3) * 5, EVENT_CLASS_ARRIVAL, i, 0, 0); /* times 0,0,0,5,5,5,10,10,10,15 */
    struct instants c = {0, 0, 0, 1};
    struct engine_handlers h = {count_event, count_instant, &c};
    CHECK_INT(engine_run_until(&e, 10, &h), 0);
    CHECK_INT(c.events, 9);
    CHECK_INT(c.instants, 3);
    CHECK(c.order_ok);
    CHECK_INT(engine_pending(&e), 1);
    engine_release(&e);
}

static void test_many_random(void)
{
    /* heap property under load: pops come out sorted by (time, class, seq) */
    struct engine e;
    engine_init(&e, 0);
    uint64_t x = 12345;
    for (int i = 0; i < 20000; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        engine_schedule(&e, (sim_time)(x >> 44), (enum event_class)((x >> 20) % EVENT_CLASS_COUNT), i, 0, 0);
    }
    struct event prev = {0}, ev;
    int ok = 1, n = 0;
    while (engine_pop(&e, &ev)) {
        if (n && (ev.time_us < prev.time_us || (ev.time_us == prev.time_us && ev.order < prev.order)))
            ok = 0;
        prev = ev;
        n++;
    }
    CHECK(ok);
    CHECK_INT(n, 20000);
    engine_release(&e);
}

/* The reference the queue is checked against: every pending event in an
 * array, the next one found by a linear scan for the least (time, class,
 * sequence); simple enough to be right by inspection. */
struct ref_event {
    sim_time time_us;
    int cls;
    uint64_t seq;
    int32_t kind;
};

struct ref_queue {
    struct ref_event *ev;
    size_t n;
};

static int ref_before(const struct ref_event *a, const struct ref_event *b)
{
    if (a->time_us != b->time_us)
        return a->time_us < b->time_us;
    if (a->cls != b->cls)
        return a->cls < b->cls;
    return a->seq < b->seq;
}

static struct ref_event ref_pop(struct ref_queue *q)
{
    size_t best = 0;
    for (size_t i = 1; i < q->n; i++)
        if (ref_before(&q->ev[i], &q->ev[best]))
            best = i;
    struct ref_event out = q->ev[best];
    q->ev[best] = q->ev[--q->n];
    return out;
}

static int ref_cmp(const void *a, const void *b)
{
    const struct ref_event *x = a, *y = b;
    return ref_before(x, y) ? -1 : ref_before(y, x);
}

/* Schedules n events at times drawn from [start, start + range) with random
 * classes, pops them all, and says whether they came out exactly in the
 * order of the sorted reference. */
static int random_schedule_pops_sorted(uint64_t seed, int n, sim_time start, uint32_t range)
{
    struct engine e;
    engine_init(&e, 0);
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 21);
    struct ref_event *want = malloc((size_t)n * sizeof *want);
    for (int i = 0; i < n; i++) {
        sim_time at = start + (sim_time)pcg32_bounded(&r, range);
        int cls = (int)pcg32_bounded(&r, EVENT_CLASS_COUNT);
        want[i] = (struct ref_event){at, cls, engine_schedule(&e, at, (enum event_class)cls, i, 0, 0), i};
    }
    qsort(want, (size_t)n, sizeof *want, ref_cmp);
    struct event ev;
    int same = 1, popped = 0;
    while (engine_pop(&e, &ev)) {
        same &= popped < n && ev.kind == want[popped].kind && ev.time_us == want[popped].time_us;
        popped++;
    }
    free(want);
    engine_release(&e);
    return same && popped == n;
}

static void test_one_instant(void)
{
    /* 5,000 events at one instant, classes mixed: by class, and within a
     * class in the order they were scheduled */
    CHECK(random_schedule_pops_sorted(1, 5000, 100, 1));
}

static void test_equal_classes_fifo(void)
{
    /* one time, one class: first scheduled, first out, also when pops and
     * schedules alternate (a pop leaves its slot to the next schedule) */
    struct engine e;
    engine_init(&e, 0);
    for (int i = 0; i < 1000; i++)
        CHECK(engine_schedule(&e, 7, EVENT_CLASS_COMPLETION, i, 0, 0));
    struct event ev;
    int next_in = 1000, next_out = 0, fifo = 1;
    while (engine_pop(&e, &ev)) {
        fifo &= ev.kind == next_out++;
        if (next_in < 3000)
            engine_schedule(&e, 7, EVENT_CLASS_COMPLETION, next_in++, 0, 0);
    }
    CHECK(fifo);
    CHECK_INT(next_out, 3000);
    engine_release(&e);
}

/* Random interleavings of schedules (at the present instant, in bursts at
 * one future instant, spread out), pops, peeks and cancellations, every pop
 * checked against the reference. */
static int interleaved_matches(uint64_t seed, int ops, int max_pending)
{
    struct engine e;
    engine_init(&e, 0);
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 22);
    struct ref_queue q = {malloc((size_t)ops * sizeof *q.ev), 0};
    int ok = 1, kind = 0;
    for (int k = 0; k < ops && ok; k++) {
        uint32_t what = pcg32_bounded(&r, 100);
        sim_time now = engine_now(&e);
        if (what < 50 && q.n < (size_t)max_pending) {
            sim_time at = now;
            uint32_t when = pcg32_bounded(&r, 4);
            if (when == 1)
                at = now + 1000; /* many land on the same future instant */
            else if (when == 2)
                at = now + (sim_time)pcg32_bounded(&r, 50);
            else /* from microseconds to decades: every level of the radix heap */
                at = now + ((sim_time)pcg32_bounded(&r, 1u << 30) >> pcg32_bounded(&r, 31)) *
                               ((sim_time)1 << pcg32_bounded(&r, 18));
            int cls = (int)pcg32_bounded(&r, EVENT_CLASS_COUNT);
            uint64_t seq = engine_schedule(&e, at, (enum event_class)cls, kind, 0, 0);
            ok &= seq != 0;
            q.ev[q.n++] = (struct ref_event){at, cls, seq, kind++};
        } else if (what < 55 && q.n) {
            size_t victim = pcg32_bounded(&r, (uint32_t)q.n);
            ok &= engine_cancel(&e, q.ev[victim].seq) == 0;
            q.ev[victim] = q.ev[--q.n];
        } else if (what < 60) {
            sim_time t = engine_next_time(&e);
            if (q.n) {
                struct ref_event head = ref_pop(&q);
                q.ev[q.n++] = head; /* peek only: put it back */
                ok &= t == head.time_us;
            } else {
                ok &= t == SIM_TIME_NEVER;
            }
        } else {
            struct event ev;
            int got = engine_pop(&e, &ev);
            ok &= got == (q.n > 0);
            if (got && q.n) {
                struct ref_event want = ref_pop(&q);
                ok &= ev.kind == want.kind && ev.time_us == want.time_us && engine_now(&e) == want.time_us;
            }
        }
        ok &= engine_pending(&e) == q.n;
    }
    struct event ev; /* drain */
    while (ok && q.n) {
        struct ref_event want = ref_pop(&q);
        ok &= engine_pop(&e, &ev) && ev.kind == want.kind;
    }
    ok &= !engine_pop(&e, &ev);
    free(q.ev);
    engine_release(&e);
    return ok;
}

static void test_interleaved_against_reference(void)
{
    for (uint64_t seed = 1; seed <= 20; seed++)
        CHECK(interleaved_matches(seed, 20000, seed % 2 ? 8 : 600));
}

/* A handler that pops for itself (a host draining ahead) moves the clock:
 * the run loop then ends the instant it was in and starts the next one
 * afresh, as it did when it compared times at every event. */
struct popping {
    struct engine *e;
    char log[64];
    size_t len;
};

static int popping_event(void *ctx, const struct event *ev)
{
    struct popping *p = ctx;
    p->len += (size_t)snprintf(p->log + p->len, sizeof p->log - p->len, "e%d ", ev->kind);
    struct event taken;
    if (ev->kind == 1 && engine_pop(p->e, &taken))
        p->len += (size_t)snprintf(p->log + p->len, sizeof p->log - p->len, "took%d ", taken.kind);
    return 0;
}

static int popping_instant(void *ctx, sim_time now)
{
    struct popping *p = ctx;
    p->len += (size_t)snprintf(p->log + p->len, sizeof p->log - p->len, "end%lld ", (long long)now);
    return 0;
}

static void test_handler_pops(void)
{
    struct engine e;
    engine_init(&e, 0);
    struct popping p = {&e, "", 0};
    CHECK(engine_schedule(&e, 1, EVENT_CLASS_ARRIVAL, 1, 0, 0));
    CHECK(engine_schedule(&e, 5, EVENT_CLASS_ARRIVAL, 2, 0, 0));
    CHECK(engine_schedule(&e, 5, EVENT_CLASS_ARRIVAL, 3, 0, 0));
    struct engine_handlers h = {popping_event, popping_instant, &p};
    CHECK_INT(engine_run_until(&e, SIM_TIME_NEVER, &h), 0);
    CHECK_STR(p.log, "e1 took2 end1 e3 end5 ");
    engine_release(&e);
}

/* A peek answers without committing the queue to its answer: a schedule
 * after it may come earlier (the pass after an instant starts jobs that end
 * before the next pending event), and a cancel may take the event peeked. */
static void test_peek_then_earlier(void)
{
    struct engine e;
    engine_init(&e, -5000000000000LL); /* a start before zero: keys are signed */
    CHECK(engine_schedule(&e, 1000000000000LL, EVENT_CLASS_ARRIVAL, 1, 0, 0));
    uint64_t second = engine_schedule(&e, 3, EVENT_CLASS_ARRIVAL, 2, 0, 0);
    CHECK(second);
    CHECK_INT(engine_next_time(&e), 3);
    CHECK(engine_schedule(&e, -7, EVENT_CLASS_TIMER, 3, 0, 0));
    CHECK_INT(engine_next_time(&e), -7);
    CHECK(engine_schedule(&e, -7, EVENT_CLASS_FAILURE, 4, 0, 0));
    struct event ev;
    CHECK(engine_pop(&e, &ev));
    CHECK_INT(ev.kind, 4);
    CHECK_INT(engine_next_time(&e), -7);
    CHECK(engine_pop(&e, &ev));
    CHECK_INT(ev.kind, 3);
    CHECK_INT(engine_next_time(&e), 3);
    CHECK_INT(engine_cancel(&e, second), 0); /* the event the peek named */
    CHECK_INT(engine_next_time(&e), 1000000000000LL);
    CHECK(engine_schedule(&e, 10, EVENT_CLASS_ARRIVAL, 5, 0, 0));
    CHECK(engine_pop(&e, &ev));
    CHECK_INT(ev.kind, 5);
    CHECK(engine_pop(&e, &ev));
    CHECK_INT(ev.kind, 1);
    CHECK(!engine_pop(&e, &ev));
    CHECK_INT(engine_pending(&e), 0);
    engine_release(&e);
}

/* Times over the whole range of sim_time, negative ones included, many
 * equal: the sorted reference, event by event. */
static void test_wide_times_sorted(void)
{
    enum { N = 50000 };
    struct engine e;
    engine_init(&e, INT64_MIN + 1);
    struct pcg32 r;
    pcg32_stream(&r, 5, RNG_TEST, 23);
    struct ref_event *want = malloc(N * sizeof *want);
    for (int i = 0; i < N; i++) {
        uint64_t bits = ((uint64_t)pcg32_next(&r) << 32 | pcg32_next(&r)) >> pcg32_bounded(&r, 64);
        sim_time at = pcg32_bounded(&r, 4) == 0 ? 42 : (sim_time)(bits ^ (pcg32_bounded(&r, 2) ? UINT64_C(1) << 63 : 0));
        if (at == INT64_MIN || at == SIM_TIME_NEVER)
            at = 0;
        int cls = (int)pcg32_bounded(&r, EVENT_CLASS_COUNT);
        want[i] = (struct ref_event){at, cls, engine_schedule(&e, at, (enum event_class)cls, i, 0, 0), i};
    }
    qsort(want, N, sizeof *want, ref_cmp);
    struct event ev;
    int same = 1, popped = 0;
    while (engine_pop(&e, &ev)) {
        same &= popped < N && ev.kind == want[popped].kind && ev.time_us == want[popped].time_us;
        popped++;
        /* now and then a schedule at the present: it comes after the
         * events left at this instant (earlier in class or sequence) */
        if (popped % 97 == 0) {
            CHECK(engine_schedule(&e, ev.time_us, EVENT_CLASS_TIMER, -1, 0, 0));
            struct event now = {0};
            while (engine_pop(&e, &now) && now.kind != -1) {
                same &= popped < N && now.kind == want[popped].kind && now.time_us == ev.time_us;
                popped++;
            }
            same &= now.kind == -1 && now.time_us == ev.time_us;
        }
    }
    free(want);
    engine_release(&e);
    CHECK(same);
    CHECK_INT(popped, N);
}

static void test_large_random_sorted(void)
{
    /* 200,000 events with times drawn from a small range (many ties): exactly
     * the sorted reference, event by event */
    CHECK(random_schedule_pops_sorted(3, 200000, 0, 20000));
}

void suite_engine(void)
{
    test_run("engine orders by time, class, sequence", test_order_time_class_sequence);
    test_run("engine refuses the past", test_refuses_past);
    test_run("engine cancel", test_cancel);
    test_run("engine run_until and instants", test_run_until_instants);
    test_run("engine many random", test_many_random);
    test_run("engine one instant, mixed classes", test_one_instant);
    test_run("engine equal classes are first in, first out", test_equal_classes_fifo);
    test_run("engine interleaved against a reference", test_interleaved_against_reference);
    test_run("engine large random against a sorted reference", test_large_random_sorted);
    test_run("engine peek, then an earlier schedule or a cancel", test_peek_then_earlier);
    test_run("engine a handler that pops ends its instant", test_handler_pops);
    test_run("engine times over the whole range, negative ones too", test_wide_times_sorted);
}
