/* The planner's logic against a fake evaluator whose answer is known: the
 * waits of a period are 0 when the GPUs in service at its start reach a
 * need that grows period by period, and a day otherwise. No simulation
 * runs, so what is checked is the search itself: orders only where they
 * arrive in time, one per period that needs one (however many periods),
 * the same replications for every candidate, a confirmation on fresh ones
 * that decides the verdict, and merging. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/plan.h"
#include "scenarios/scenario.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

static const char plan_yaml[] = "seed: 1\n"
                                "cluster:\n"
                                "  partitions:\n"
                                "    - {name: all, node_type: H100-SXM, nodes: 1}\n"
                                "workload:\n"
                                "  teams:\n"
                                "    - name: a\n"
                                "      jobs_per_hour: 1\n"
                                "      runtime: {training: {distribution: fixed, value: 1h}}\n"
                                "horizon: {length: %s, period: week}\n"
                                "forecast: {replications: 4}\n"
                                "plan: {slo: 'p95_wait <= 1h', candidates: [H100-SXM], max_nodes: 64, "
                                "lead_time: %s, burn_in: 0s}\n";

struct fake {
    int64_t need_base_gpus, need_step_gpus; /* need of period p: base + step * p */
    int64_t confirm_extra_gpus;             /* fresh replications need this much more */
    uint32_t search_reps;
    uint32_t evaluations, bad_search_seeds, confirmations;
    uint32_t min_confirm_first;
};

static int64_t gpus_at(const struct scenario *s, sim_time t)
{
    int64_t g = scenario_initial_gpus(s);
    for (size_t i = 0; i < s->procurement.n_orders; i++) {
        const struct purchase_order *o = &s->procurement.orders[i];
        sim_time ready = o->order_us + (sim_time)llround((o->lead_time_s.a + o->burn_in_s) * 1e6);
        if (ready <= t)
            g += o->count * s->catalog.types[o->type].gpus;
    }
    return g;
}

static int fake_evaluate(void *vctx, const struct scenario *s, const struct plan_eval *e, struct forecast_result *r)
{
    struct fake *f = vctx;
    struct err err;
    err_clear(&err);
    if (forecast_result_init(r, s, e->n_reps, &err) != 0)
        return -1;
    int fresh = e->first_rep >= f->search_reps;
    if (e->until_period + 1 < r->n_periods && fresh)
        f->bad_search_seeds++; /* a confirmation always covers the whole horizon */
    if (!fresh) {
        f->evaluations++;
        f->bad_search_seeds += e->first_rep != 0 || e->n_reps != f->search_reps;
    } else {
        f->confirmations++;
        if (e->first_rep < f->min_confirm_first || !f->min_confirm_first)
            f->min_confirm_first = e->first_rep;
    }
    for (uint32_t i = 0; i < e->n_reps; i++) {
        r->reps[i].periods = calloc(r->n_periods, sizeof *r->reps[i].periods);
        for (uint32_t p = 0; p < r->n_periods; p++) {
            int64_t need = f->need_base_gpus + f->need_step_gpus * p + (fresh ? f->confirm_extra_gpus : 0);
            double w = gpus_at(s, (sim_time)p * s->horizon.period_us) >= need ? 0 : 86400;
            r->reps[i].periods[p].wait_p95_s = w;
        }
    }
    r->completed = e->n_reps;
    return 0;
}

static int load(struct scenario *s, const char *length, const char *lead)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, plan_yaml, length, lead);
    struct diag_list d;
    struct err err;
    scenario_init(s);
    diag_list_init(&d, 10);
    err_clear(&err);
    int rc = scenario_load_buffer("plan.yaml", yaml, strlen(yaml), s, &d, &err);
    if (rc != 0)
        printf("  %s\n", err.msg);
    diag_list_release(&d);
    return rc;
}

static void run(struct scenario *s, struct fake *f, struct plan_result *p)
{
    struct plan_slo slo;
    struct err err;
    err_clear(&err);
    plan_slo_parse("p95_wait <= 1h", &slo, &err);
    const char *policies[] = {"fcfs+easy"};
    struct plan_options o = {{&slo, 1, 0.9}, policies, 1, f->search_reps, 8, 3, fake_evaluate, NULL, f};
    CHECK_INT(plan_run(s, &o, p, &err), 0);
}

/* 20 weekly periods whose need grows by 8 GPUs each: 19 orders, one a
 * period, each dated its period's start minus the lead time; no round limit
 * stops the search, and the confirmation agrees. */
static void test_many_periods(void)
{
    struct scenario s;
    if (!CHECK_INT(load(&s, "20w", "0s"), 0))
        return;
    struct fake f = {8, 8, 0, 4, 0, 0, 0, 0};
    struct plan_result p;
    run(&s, &f, &p);
    CHECK_INT(p.n_orders, 19);
    CHECK(p.met);
    CHECK_INT(f.bad_search_seeds, 0);
    CHECK_INT(f.min_confirm_first, 4);
    CHECK_INT(p.confirmations, 1);
    for (size_t i = 0; i < p.n_orders; i++) {
        CHECK_INT(p.orders[i].count, 1);
        CHECK_INT(p.orders[i].at_us, (sim_time)(i + 1) * s.horizon.period_us);
    }
    plan_result_release(&p);
    scenario_release(&s);
}

/* A 3-week lead time: weeks 2 and 3 cannot be served (nothing ordered for
 * them, out of reach), week 4 on can; the verdict is "not met". */
static void test_out_of_reach(void)
{
    struct scenario s;
    if (!CHECK_INT(load(&s, "6w", "3w"), 0))
        return;
    struct fake f = {8, 8, 0, 4, 0, 0, 0, 0};
    struct plan_result p;
    run(&s, &f, &p);
    CHECK(!p.met);
    CHECK(!p.out_of_reach[0]);
    CHECK(p.out_of_reach[1] && p.out_of_reach[2]);
    CHECK(!p.out_of_reach[3] && !p.out_of_reach[4] && !p.out_of_reach[5]);
    for (size_t i = 0; i < p.n_orders; i++) {
        CHECK(p.orders[i].at_us >= 0);
        CHECK(p.orders[i].for_period >= 3);
    }
    /* week 4 needs 32 GPUs: 3 nodes, ordered at day 0 to arrive on day 21 */
    CHECK(p.n_orders >= 1);
    CHECK_INT(p.orders[0].at_us, 0);
    CHECK_INT(p.orders[0].count, 3);
    CHECK(strstr(p.reason, "week 2 cannot meet the SLO") != NULL);
    plan_result_release(&p);
    scenario_release(&s);
}

/* The fresh replications need one node more than the search's: the first
 * confirmation fails, the search resumes on its replications, the second
 * (on other fresh seeds) passes; the verdict is the last confirmation's. */
static void test_confirmation_decides(void)
{
    struct scenario s;
    if (!CHECK_INT(load(&s, "2w", "0s"), 0))
        return;
    struct fake f = {16, 0, 8, 4, 0, 0, 0, 0};
    struct plan_result p;
    run(&s, &f, &p);
    CHECK(p.met);
    CHECK_INT(p.confirmations, 2);
    CHECK_INT(p.confirm_first_rep, 12);
    CHECK_INT(p.n_orders, 1); /* merged: 1 node, then 1 more on the same day */
    CHECK_INT(p.orders[0].count, 2);
    plan_result_release(&p);
    scenario_release(&s);
    /* a need that grows with every confirmation is never met: the verdict says so */
    if (!CHECK_INT(load(&s, "2w", "0s"), 0))
        return;
    struct fake g = {16, 0, 1000, 4, 0, 0, 0, 0};
    run(&s, &g, &p);
    CHECK(!p.met);
    CHECK(strstr(p.reason, "week 1 cannot meet the SLO even with") != NULL);
    plan_result_release(&p);
    scenario_release(&s);
}

static void test_merge(void)
{
    struct planned_order o[] = {
        {PLAN_BUY, 100, 200, -1, 1, 2, 10, 1, 3},
        {PLAN_BUY, 50, 150, -1, 1, 1, 5, 0, 2},
        {PLAN_BUY, 100, 200, -1, 1, 3, 15, 2, 1},
        {PLAN_RENT, 100, 150, 300, 1, 4, 8, 0, 1},
        {PLAN_BUY, 100, 200, -1, 2, 1, 7, 0, 1},
    };
    size_t n = plan_merge_orders(o, 5);
    CHECK_INT(n, 4);
    CHECK_INT(o[0].at_us, 50);
    CHECK_INT(o[1].kind, PLAN_BUY);
    CHECK_INT(o[1].type, 1);
    CHECK_INT(o[1].count, 5);
    CHECK_NEAR(o[1].price_usd, 25, 0);
    CHECK_NEAR(o[1].running_usd, 3, 0);
    CHECK_INT(o[1].for_period, 1);
    CHECK_INT(o[2].type, 2);
    CHECK_INT(o[3].kind, PLAN_RENT);
}

static void test_slo_parse(void)
{
    struct plan_slo slo;
    struct err err;
    err_clear(&err);
    CHECK_INT(plan_slo_parse("research: p95_wait <= 4h", &slo, &err), 0);
    CHECK_STR(slo.team_name, "research");
    CHECK_INT(slo.metric, FM_WAIT_P95);
    CHECK_NEAR(slo.threshold_s, 4 * 3600, 0);
    CHECK_INT(plan_slo_parse("mean_wait<=30m", &slo, &err), 0);
    CHECK_INT(slo.metric, FM_WAIT_MEAN);
    CHECK_STR(slo.team_name, "");
    CHECK_INT(plan_slo_parse("p95_wait >= 4h", &slo, &err), -1);
    CHECK_INT(plan_slo_parse("p90_wait <= 4h", &slo, &err), -1);
    CHECK_INT(plan_slo_parse(": p95_wait <= 4h", &slo, &err), -1);
    CHECK_INT(plan_slo_parse("p95_wait <= 4h extra", &slo, &err), -1);
}

void suite_plan(void)
{
    test_run("plan: one order per period that needs one, however many", test_many_periods);
    test_run("plan: no order for a period it cannot reach", test_out_of_reach);
    test_run("plan: the confirmation decides the verdict", test_confirmation_decides);
    test_run("plan: orders merged per kind, type and date", test_merge);
    test_run("plan: SLO grammar", test_slo_parse);
}
