/* Hand-computed schedules for every ordering x backfilling on small traces. */
#include <stdio.h>

#include "policies/ordering.h"
#include "tests/unit/sim_fixture.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

#define N_OF(a) (sizeof(a) / sizeof *(a))

static void check_starts(const struct fixture_job *jobs, size_t n, int nodes, const char *spec,
                         const double *want)
{
    struct workload w;
    fixture_workload(&w, jobs, n);
    double got[16];
    CHECK_INT(fixture_replay(&w, nodes, 1, spec, got, NULL), 0);
    for (size_t i = 0; i < n; i++)
        if (!CHECK_NEAR(got[i], want[i], 0))
            printf("  policy %s, job %zu\n", spec, i + 1);
    workload_release(&w);
}

/* The classic case where EASY and conservative differ. 4 slots; estimates
 * are exact.
 *   J1 t=0 3 slots 10 s: runs [0,10)
 *   J2 t=1 2 slots 10 s: head; shadow 10 (1 free + 3), extra 4-2 = 2
 *   J3 t=2 4 slots 10 s: waits
 *   J4 t=3 1 slot  30 s: fits now (1 free).
 * EASY: J4 ends at 33 > shadow 10 but uses 1 <= extra 2 slots: starts at 3.
 *   At 10 J2 starts; J3 needs all 4 and waits for J4 (33).
 * Conservative: J3 holds [20,30) after J2's [10,20); J4 (1 slot, 30 s) would
 *   overlap J3's reservation, so it gets [30,60).
 * None: J2 at 10, J3 at 20 (after J2), J4 at 30 behind J3. */
static const struct fixture_job classic[] = {
    {0, 10, 10, 3}, {1, 10, 10, 2}, {2, 10, 10, 4}, {3, 30, 30, 1}};

static void test_easy_vs_conservative(void)
{
    check_starts(classic, 4, 4, "fcfs+easy", (double[]){0, 10, 33, 3});
    check_starts(classic, 4, 4, "fcfs+conservative", (double[]){0, 10, 20, 30});
    check_starts(classic, 4, 4, "fcfs", (double[]){0, 10, 20, 30});
    check_starts(classic, 4, 4, "fcfs+none", (double[]){0, 10, 20, 30});
}

/* EASY backfills a short job that ends by the shadow time, without extra
 * slots: 4 slots.
 *   J1 t=0 2 slots 10 s; J2 t=1 4 slots 10 s (head, shadow 10, extra 0);
 *   J3 t=2 2 slots 8 s: ends at 10 <= shadow: starts at 2;
 *   J4 t=3 1 slot 20 s: free 0 after J3: waits, starts after J2 at 20. */
static void test_easy_ends_by_shadow(void)
{
    static const struct fixture_job jobs[] = {{0, 10, 10, 2}, {1, 10, 10, 4}, {2, 8, 8, 2}, {3, 20, 20, 1}};
    check_starts(jobs, 4, 4, "fcfs+easy", (double[]){0, 10, 2, 20});
    check_starts(jobs, 4, 4, "fcfs+conservative", (double[]){0, 10, 2, 20});
    check_starts(jobs, 4, 4, "fcfs", (double[]){0, 10, 20, 20});
}

/* Orderings on one slot. J1 (t=0, 100 s) runs; J2, J3, J4 wait until 100.
 *   J2 s=1001 r=50, J3 s=1002 r=10, J4 s=1003 r=30 (J1 submits at 1000).
 * fcfs:   J2 100, J3 150, J4 160
 * sjf:    by r: J3 (10) 100, J4 (30) 110, J2 (50) 140
 * f1:     log10(r) + 870 log10(s): J2 1.699 + 2610.378 = 2612.077,
 *         J3 1.000 + 2610.755 = 2611.755, J4 1.477 + 2611.132 = 2612.609:
 *         J3 100, J2 110, J4 160
 * wfp3:   at 1100, -(w/r)^3: J2 (99/50)^3 = 7.8, J3 (98/10)^3 = 941,
 *         J4 (97/30)^3 = 33.8 -> J3 first; at 1110 J2 (109/50)^3 = 10.4,
 *         J4 (107/30)^3 = 45.4 -> J4; then J2: J3 100, J4 110, J2 140
 * unicep: n = 1 for all, so w/r decides as in wfp3: J3, J4, J2. */
static const struct fixture_job order_jobs[] = {
    {1000, 100, 100, 1}, {1001, 50, 50, 1}, {1002, 10, 10, 1}, {1003, 30, 30, 1}};

static void test_orderings(void)
{
    const char *backfills[] = {"", "+easy", "+conservative"};
    for (int b = 0; b < 3; b++) {
        char spec[64];
        snprintf(spec, sizeof spec, "fcfs%s", backfills[b]);
        check_starts(order_jobs, 4, 1, spec, (double[]){1000, 1100, 1150, 1160});
        snprintf(spec, sizeof spec, "sjf%s", backfills[b]);
        check_starts(order_jobs, 4, 1, spec, (double[]){1000, 1140, 1100, 1110});
        snprintf(spec, sizeof spec, "f1%s", backfills[b]);
        check_starts(order_jobs, 4, 1, spec, (double[]){1000, 1110, 1100, 1160});
        snprintf(spec, sizeof spec, "wfp3%s", backfills[b]);
        check_starts(order_jobs, 4, 1, spec, (double[]){1000, 1140, 1100, 1110});
        snprintf(spec, sizeof spec, "unicep%s", backfills[b]);
        check_starts(order_jobs, 4, 1, spec, (double[]){1000, 1140, 1100, 1110});
    }
}

/* SJF with EASY: the shortest job is the head; a long small job may use
 * the extra slots. 3 slots.
 *   J1 t=0 2 slots 10 s runs [0,10).
 *   J2 t=1 3 slots 50 s; J3 t=2 3 slots 20 s. SJF head is J3 (20 < 50):
 *   shadow 10, extra 0. J4 t=3 1 slot 5 s: ends at 8 <= 10: starts at 3.
 *   At 10: J3 starts (head), runs to 30; J2 starts at 30. */
static void test_sjf_easy(void)
{
    static const struct fixture_job jobs[] = {{0, 10, 10, 2}, {1, 50, 50, 3}, {2, 20, 20, 3}, {3, 5, 5, 1}};
    check_starts(jobs, 4, 3, "sjf+easy", (double[]){0, 30, 10, 3});
    check_starts(jobs, 4, 3, "fcfs+easy", (double[]){0, 10, 60, 3});
}

/* Jobs killed at their limit free their slots at the limit; estimates are
 * the limits. 2 slots: J1 t=0 2 slots runs 100 s but asks 10: killed at 10;
 * J2 t=1 2 slots 5 s starts at 10. */
static void test_killed_at_limit(void)
{
    static const struct fixture_job jobs[] = {{0, 100, 10, 2}, {1, 5, 5, 2}};
    check_starts(jobs, 2, 2, "fcfs+easy", (double[]){0, 10});
}

static void test_ordering_names(void)
{
    enum ordering_kind k;
    CHECK_INT(ordering_parse("sjf", 3, &k), 0);
    CHECK_INT(k, ORDERING_SJF);
    CHECK_INT(ordering_parse("sjfx", 4, &k), -1);
    CHECK_STR(ordering_name(ORDERING_UNICEP), "unicep");
    /* compat wait: w = -1 - s regardless of now */
    struct policy_job j = {.id = 1, .submit_us = 10000000, .estimate_us = 5000000, .slots = 2, .user = -1, .team = -1, .reserved_us = -1};
    struct ordering_key a = ordering_key_of(ORDERING_WFP3, &j, 99000000, 1, 0);
    /* w = -11: -(w/r)^3 n = (11/5)^3 * 2, so the reference ranks by ((1+s)/r)^3 n */
    CHECK_NEAR(a.primary, (11.0 / 5.0) * (11.0 / 5.0) * (11.0 / 5.0) * 2, 1e-12);
    struct ordering_key b = ordering_key_of(ORDERING_WFP3, &j, 99000000, 0, 0);
    CHECK_NEAR(b.primary, -(89.0 / 5.0) * (89.0 / 5.0) * (89.0 / 5.0) * 2, 1e-9);
}

void suite_policies(void)
{
    test_run("policies EASY vs conservative classic", test_easy_vs_conservative);
    test_run("policies EASY backfills what ends by the shadow", test_easy_ends_by_shadow);
    test_run("policies orderings x backfilling", test_orderings);
    test_run("policies sjf+easy", test_sjf_easy);
    test_run("policies kill at limit", test_killed_at_limit);
    test_run("policies ordering names", test_ordering_names);
}
