/* Hand-computed schedules for every ordering x backfilling on small traces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/ordering.h"
#include "policies/registry.h"
#include "sim/pcg32.h"
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

/* The example: the extra slots at the shadow time are every slot free
 * then, not only those of the job that tipped the balance. 8 slots.
 *   J1, J2 t=0 3 slots 100 s: run [0,100), 2 slots free.
 *   J3 t=10 5 slots 100 s: head; walking by end, J1 at 100 makes 2+3 = 5:
 *     shadow 100; J2 also ends at 100: free then 8, extra 8-5 = 3.
 *   J4 t=20 2 slots 500 s: fits now (2), ends at 520 > 100 but 2 <= extra 3:
 *     starts at 20 (the old rule counted J1 only: extra 0, J4 waited to 100).
 *   J5 t=30 1 slot 50 s: nothing free now: waits (the old rule started it,
 *     ending by the shadow); at 100 J3 takes 5 of 6, J5 the last one.
 * Conservative reaches the same plan through its profile, which merges the
 * releases at one instant: J3 holds [100,200), J4 fits beside it from 20,
 * J5's earliest slot is 100. */
static const struct fixture_job tie_example[] = {
    {0, 100, 100, 3}, {0, 100, 100, 3}, {10, 100, 100, 5}, {20, 500, 500, 2}, {30, 50, 50, 1}};

static void test_easy_shadow_ties(void)
{
    check_starts(tie_example, 5, 8, "fcfs+easy", (double[]){0, 0, 100, 20, 100});
    check_starts(tie_example, 5, 8, "fcfs+conservative", (double[]){0, 0, 100, 20, 100});
    check_starts(tie_example, 5, 8, "fcfs", (double[]){0, 0, 100, 100, 100});
}

/* Three running jobs end at the shadow time and a fourth later. 10 slots.
 *   J1, J2, J3 t=0 2 slots 100 s; J4 t=0 1 slot 200 s: 3 slots free.
 *   J5 t=10 5 slots: head; 3 + J1's 2 = 5: shadow 100; J2 and J3 end then
 *     too: 9 free at 100, extra 4 (J4 still runs).
 *   J6 t=20 3 slots 1000 s: 3 <= extra 4: starts at 20 (old rule: at 100).
 *   J7 t=30 1 slot 1000 s: nothing free now; at 100 J5 takes 5 of 6: 100. */
static void test_easy_several_ties(void)
{
    static const struct fixture_job jobs[] = {{0, 100, 100, 2}, {0, 100, 100, 2}, {0, 100, 100, 2},
                                              {0, 200, 200, 1}, {10, 100, 100, 5}, {20, 1000, 1000, 3},
                                              {30, 1000, 1000, 1}};
    check_starts(jobs, 7, 10, "fcfs+easy", (double[]){0, 0, 0, 0, 100, 20, 100});
    check_starts(jobs, 7, 10, "fcfs+conservative", (double[]){0, 0, 0, 0, 100, 20, 100});
}

/* A job started earlier in the same pass ends at the shadow time too. 8 slots.
 *   J1 t=0 4 slots 100 s.
 *   At 50 J2 (2 slots, 50 s), J3 (6 slots) and J4 (2 slots, 1000 s) arrive;
 *   one pass: J2 starts (2 free left) and ends at 100; J3 is the head:
 *   2 + J1's 4 = 6 at 100: shadow 100, and J2 started in this pass frees 2
 *   more then: extra 8-6 = 2. J4 uses 2 <= 2: starts at 50 (old rule: 100). */
static void test_easy_ties_same_pass(void)
{
    static const struct fixture_job jobs[] = {{0, 100, 100, 4}, {50, 50, 50, 2}, {50, 100, 100, 6}, {50, 1000, 1000, 2}};
    check_starts(jobs, 4, 8, "fcfs+easy", (double[]){0, 50, 100, 50});
}

/* A running job past its expected end (its end event not handled yet, or a
 * host whose jobs overrun) still holds its slots: the shadow is now, never
 * earlier, and every job whose expected end is at or before now counts among
 * the slots free then. One node of 10 slots at t=100:
 *   R1 4 slots expected at 50 (overdue), R2 2 slots expected at 100 (now),
 *   R3 2 slots expected at 300; 2 slots free.
 *   Q1 6 slots: head; 2 + R1's 4 = 6: shadow max(50, now) = 100; R2 ends by
 *   then too: extra 2+4+2-6 = 2.
 *   Q2 2 slots 1000 s: 2 <= extra: starts; Q3 1 slot 10 s: nothing free. */
static void test_easy_past_expected_end(void)
{
    const int64_t s = 1000000;
    struct policy_node node = {0, POLICY_NODE_UP, 10, 2, -1, -1, -1, 0, 0, 0};
    uint32_t with_free[1] = {0};
    struct policy_alloc held[3] = {{0, 4, 0, 0}, {0, 2, 0, 0}, {0, 2, 0, 0}};
    struct policy_running running[3];
    int64_t ends[3] = {50, 100, 300};
    for (int i = 0; i < 3; i++)
        running[i] = (struct policy_running){{.id = i + 1, .estimate_us = ends[i] * s, .slots = held[i].slots,
                                              .user = -1, .team = -1, .reserved_us = -1},
                                             0, ends[i] * s, (uint32_t)i, 1};
    uint32_t by_end[3] = {0, 1, 2};
    struct policy_job queued[3] = {
        {.id = 11, .submit_us = 10 * s, .estimate_us = 100 * s, .slots = 6, .user = -1, .team = -1, .reserved_us = -1},
        {.id = 12, .submit_us = 20 * s, .estimate_us = 1000 * s, .slots = 2, .user = -1, .team = -1, .reserved_us = -1},
        {.id = 13, .submit_us = 30 * s, .estimate_us = 10 * s, .slots = 1, .user = -1, .team = -1, .reserved_us = -1}};
    struct cluster_view v = {.now_us = 100 * s, .nodes = &node, .n_nodes = 1, .nodes_with_free = with_free,
                             .n_nodes_with_free = 1, .total_slots = 10, .free_slots = 2, .queued = queued,
                             .n_queued = 3, .running = running, .running_by_end = by_end, .n_running = 3,
                             .allocs = held};
    const struct policy_ops *ops;
    void *state;
    char msg[256];
    if (!CHECK_INT(policy_registry_create("fcfs+easy", &ops, &state, msg, sizeof msg), 0))
        return;
    struct policy_decision items[8];
    struct policy_alloc allocs[8];
    struct policy_decisions out = {items, 0, 8, allocs, 0, 8};
    CHECK_INT(ops->decide(state, &v, &out), 0);
    int reserved = 0, started = 0;
    for (uint32_t k = 0; k < out.n; k++) {
        if (items[k].kind == POLICY_RESERVE && CHECK_INT(items[k].job_id, 11)) {
            CHECK_INT(items[k].at_us, 100 * s);
            reserved++;
        } else if (items[k].kind == POLICY_START) {
            CHECK_INT(items[k].job_id, 12);
            started++;
        }
    }
    CHECK_INT(reserved, 1);
    CHECK_INT(started, 1);
    ops->destroy(state);
}

/* The replay's conventions (models/simulation.h) on two small cases, 4 slots.
 * A (2 slots) ends at 100 exactly at its estimate; B (2 slots) ends at 100,
 * before its estimate of 200; W (4 slots, 10 s) waits from 10.
 * Case 1: C (2 slots, 50 s) arrives at 100.
 *   fleetsim: one pass with 4 free: W at 100, C behind it at 110.
 *   cqsim:    A ends (pass: 2 free, W waits), B ends (pass: W starts), C
 *             arrives and waits: the same as fleetsim.
 *   pyss:     A is free from 100 on; C arrives first (pass: 2 free, W's
 *             shadow is B's estimate 200; C ends at 150 <= 200: backfills);
 *             B ends (pass: 2 free, W waits): W starts at 150.
 * Case 2: X (2 slots, 50 s) also waits, from 20.
 *   fleetsim: W at 100; X and C at 110.
 *   cqsim:    A ends (pass: 2 free; W's shadow is 200; X ends by it: X at
 *             100); B ends (pass: 2 free, W's shadow now X's end 150); C
 *             arrives (pass: ends at 150 <= 150: C at 100); W at 150.
 *   pyss:     C arrives (pass: A's 2 free; X backfills, C does not fit);
 *             B ends (pass: C ends by the shadow 150: starts): the same. */
static void check_convention(const struct fixture_job *jobs, size_t n, enum sim_convention c, const double *want)
{
    struct workload w;
    fixture_workload(&w, jobs, n);
    struct sim_options opt;
    sim_options_init(&opt);
    opt.convention = c;
    double got[16];
    CHECK_INT(fixture_replay(&w, 4, 1, "fcfs+easy", got, &opt), 0);
    for (size_t i = 0; i < n; i++)
        if (!CHECK_NEAR(got[i], want[i], 0))
            printf("  convention %s, job %zu\n", simulation_convention_name(c), i + 1);
    workload_release(&w);
}

static void test_conventions(void)
{
    static const struct fixture_job case1[] = {{0, 100, 100, 2}, {0, 100, 200, 2}, {10, 10, 10, 4}, {100, 50, 50, 2}};
    check_convention(case1, 4, SIM_CONVENTION_FLEETSIM, (double[]){0, 0, 100, 110});
    check_convention(case1, 4, SIM_CONVENTION_CQSIM, (double[]){0, 0, 100, 110});
    check_convention(case1, 4, SIM_CONVENTION_PYSS, (double[]){0, 0, 150, 100});
    static const struct fixture_job case2[] = {
        {0, 100, 100, 2}, {0, 100, 200, 2}, {10, 10, 10, 4}, {20, 50, 50, 2}, {100, 50, 50, 2}};
    check_convention(case2, 5, SIM_CONVENTION_FLEETSIM, (double[]){0, 0, 100, 110, 110});
    check_convention(case2, 5, SIM_CONVENTION_CQSIM, (double[]){0, 0, 150, 100, 100});
    check_convention(case2, 5, SIM_CONVENTION_PYSS, (double[]){0, 0, 150, 100, 100});
    enum sim_convention c;
    CHECK_INT(simulation_convention_parse("cqsim", &c), 0);
    CHECK_INT(c, SIM_CONVENTION_CQSIM);
    CHECK_INT(simulation_convention_parse("slurm", &c), -1);
    CHECK_STR(simulation_convention_name(SIM_CONVENTION_PYSS), "pyss");
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

/* Conservative tells a promise only when it differs from the one the view
 * holds (the host keeps the last in reserved_us): a first pass promises
 * each waiting job; the same view with those promises kept says nothing
 * of them; the last one lost is told again, alone. A fresh instance each
 * time: the rule is a function of the view. 10 slots, 8 held until 100 s;
 * 6, 4 and 3 slots wait (none fits the 2 free now). */
static int conservative_reserves(struct cluster_view *v, struct policy_job *queued, int apply)
{
    const struct policy_ops *ops;
    void *state;
    char msg[256];
    if (!CHECK_INT(policy_registry_create("fcfs+conservative", &ops, &state, msg, sizeof msg), 0))
        return -1;
    struct policy_decision items[8];
    struct policy_alloc allocs[16];
    struct policy_decisions out = {items, 0, 8, allocs, 0, 16};
    int n = -1;
    if (CHECK_INT(ops->decide(state, v, &out), 0)) {
        n = 0;
        for (uint32_t k = 0; k < out.n; k++) {
            CHECK_INT(items[k].kind, POLICY_RESERVE);
            if (apply)
                queued[items[k].job_index].reserved_us = items[k].at_us;
            n++;
        }
    }
    ops->destroy(state);
    return n;
}

static void test_conservative_tells_changes(void)
{
    const int64_t s = 1000000;
    struct policy_node node = {0, POLICY_NODE_UP, 10, 2, -1, -1, -1, 0, 0, 0};
    uint32_t with_free[1] = {0};
    struct policy_alloc held[1] = {{0, 8, 0, 0}};
    struct policy_running running[1] = {
        {{.id = 1, .estimate_us = 100 * s, .slots = 8, .user = -1, .team = -1, .reserved_us = -1}, 0, 100 * s, 0, 1}};
    uint32_t by_end[1] = {0};
    struct policy_job queued[3] = {
        {.id = 11, .submit_us = 10 * s, .estimate_us = 50 * s, .slots = 6, .user = -1, .team = -1, .reserved_us = -1},
        {.id = 12, .submit_us = 20 * s, .estimate_us = 500 * s, .slots = 4, .user = -1, .team = -1, .reserved_us = -1},
        {.id = 13, .submit_us = 30 * s, .estimate_us = 10 * s, .slots = 3, .user = -1, .team = -1, .reserved_us = -1}};
    struct cluster_view v = {.now_us = 20 * s, .nodes = &node, .n_nodes = 1, .nodes_with_free = with_free,
                             .n_nodes_with_free = 1, .total_slots = 10, .free_slots = 2, .queued = queued,
                             .n_queued = 3, .running = running, .running_by_end = by_end, .n_running = 1,
                             .allocs = held};
    CHECK_INT(conservative_reserves(&v, queued, 1), 3);
    CHECK_INT(queued[0].reserved_us, 100 * s);
    CHECK_INT(queued[1].reserved_us, 100 * s);
    CHECK_INT(queued[2].reserved_us, 150 * s); /* 6 + 4 of 10 until 150 */
    CHECK_INT(conservative_reserves(&v, queued, 0), 0);
    queued[2].reserved_us = -1; /* the last: placed again where it was */
    CHECK_INT(conservative_reserves(&v, queued, 1), 1);
    CHECK_INT(queued[2].reserved_us, 150 * s);
}

static int key_cmp_for_qsort(const void *a, const void *b)
{
    return ordering_key_compare(a, b);
}

/* The ordering's own sort against qsort with the ordering's comparison, on
 * random keys with many ties in the first and second keys (the index
 * decides then), negative values, zeros of both signs and primaries 1e12
 * apart (every byte of their radix image differs somewhere), at sizes
 * around the merge sort's insertion runs and merge widths and around the
 * 512 keys from which the radix sort takes over (its runs of equal
 * primaries long with 5 values, short with 1,000). With a NaN no order is
 * defined: the keys must still all come out, once each. */
static void test_keys_sort_equals_qsort(void)
{
    enum { MAX = 5000 };
    static const uint32_t sizes[] = {0, 1, 2, 15, 16, 17, 31, 32, 33, 100, 255, 256, 257, 511, 512, 513, 1000, 4097, MAX};
    struct pcg32 r;
    pcg32_stream(&r, 3, RNG_TEST, 0);
    struct ordering_key *a = malloc(MAX * sizeof *a), *b = malloc(MAX * sizeof *b), *t = malloc(MAX * sizeof *t);
    int wrong = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        for (int round = 0; round < 20; round++) {
            uint32_t n = sizes[k];
            for (uint32_t i = 0; i < n; i++) {
                double p = (double)pcg32_bounded(&r, round % 2 ? 5 : 1000) - 2.0;
                if (pcg32_bounded(&r, 10) == 0)
                    p = pcg32_bounded(&r, 2) ? 0.0 : -0.0;
                else if (pcg32_bounded(&r, 8) == 0)
                    p *= 1e12;
                double q = (double)pcg32_bounded(&r, 3) * 0.5;
                a[i] = (struct ordering_key){p, q, i};
            }
            for (uint32_t i = n; round % 4 < 2 && i > 1; i--) { /* half the rounds: indices in no order */
                uint32_t j = pcg32_bounded(&r, i), x = a[i - 1].index;
                a[i - 1].index = a[j].index;
                a[j].index = x;
            }
            memcpy(b, a, n * sizeof *a);
            qsort(a, n, sizeof *a, key_cmp_for_qsort);
            ordering_keys_sort(b, n, t);
            for (uint32_t i = 0; i < n; i++)
                wrong += a[i].index != b[i].index;
        }
    CHECK_INT(wrong, 0);
    for (uint32_t i = 0; i < 3000; i++)
        b[i] = (struct ordering_key){i % 7 == 6 ? NAN : (double)pcg32_bounded(&r, 100), 0.0, i};
    ordering_keys_sort(b, 3000, t);
    memset(t, 0, 3000 * sizeof *t); /* t[i].index: how often key i came out */
    for (uint32_t i = 0; i < 3000; i++)
        t[b[i].index].index++;
    int once = 1;
    for (uint32_t i = 0; i < 3000; i++)
        once &= t[i].index == 1;
    CHECK(once);
    free(a);
    free(b);
    free(t);
}

void suite_policies(void)
{
    test_run("policies EASY vs conservative classic", test_easy_vs_conservative);
    test_run("policies EASY backfills what ends by the shadow", test_easy_ends_by_shadow);
    test_run("policies orderings x backfilling", test_orderings);
    test_run("policies sjf+easy", test_sjf_easy);
    test_run("policies kill at limit", test_killed_at_limit);
    test_run("policies EASY extra slots: the issue's tie example", test_easy_shadow_ties);
    test_run("policies EASY extra slots: several ties", test_easy_several_ties);
    test_run("policies EASY extra slots: ties with jobs started this pass", test_easy_ties_same_pass);
    test_run("policies EASY shadow: a job past its expected end", test_easy_past_expected_end);
    test_run("policies replay conventions fleetsim, pyss, cqsim", test_conventions);
    test_run("policies ordering names", test_ordering_names);
    test_run("policies conservative tells a promise only when it changes", test_conservative_tells_changes);
    test_run("policies ordering keys sorted as qsort sorts them", test_keys_sort_equals_qsort);
}
