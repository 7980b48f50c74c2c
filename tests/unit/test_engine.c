#include "sim/engine.h"
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
    CHECK_INT(engine_cancel(&e, h[0]), -1); /* twice */
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

void suite_engine(void)
{
    test_run("engine orders by time, class, sequence", test_order_time_class_sequence);
    test_run("engine refuses the past", test_refuses_past);
    test_run("engine cancel", test_cancel);
    test_run("engine run_until and instants", test_run_until_instants);
    test_run("engine many random", test_many_random);
}
