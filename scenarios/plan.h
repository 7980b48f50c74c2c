/* plan: the cheapest purchase orders that keep a scenario's SLO.
 *
 * Greedy by period: forecast the scenario; take the first period whose SLO
 * (a wait percentile of the jobs submitted in it) is met in fewer than
 * `confidence` of the replications; date an order so that, with probability
 * `confidence`, it is delivered and burnt in by that period's start (order
 * date = period start - the lead time's confidence quantile - burn-in, or
 * now if that is already past); find, for each candidate node type, the
 * fewest nodes (a multiple of step_nodes, at most max_nodes) that make the
 * period meet the SLO (binary search, evaluating up to that period's end);
 * keep the cheapest; repeat. A period that even an order placed now cannot
 * save is reported as out of reach, with the reason, and planning goes on
 * for the later ones.
 *
 * Forecasts are the caller's (they run in worker processes): plan_search
 * calls `evaluate` with the scenario as amended so far.
 */
#ifndef FLEETSIM_SCENARIOS_PLAN_H
#define FLEETSIM_SCENARIOS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "scenarios/forecast.h"
#include "scenarios/scenario.h"
#include "sim/err.h"

struct plan_slo {
    enum forecast_metric metric; /* FM_WAIT_P50, FM_WAIT_P95 or FM_WAIT_P99 */
    double threshold_s;
    double confidence;
};

/* "p95_wait <= 2h" -> slo (confidence untouched). Returns 0, or -1 with a
 * message in err. */
int plan_slo_parse(const char *text, struct plan_slo *slo, struct err *err);

struct planned_order {
    sim_time at_us;
    int32_t type;
    int64_t count;
    double cost_usd;
    uint32_t for_period; /* the period it was bought for (0-based) */
};

struct plan_result {
    struct planned_order *orders;
    size_t n_orders;
    double cost_usd;
    int met;                 /* every period meets the SLO */
    uint8_t *out_of_reach;   /* per period */
    uint32_t n_periods;
    char reason[512];        /* when !met: why */
    uint32_t evaluations;    /* forecasts run */
};

/* Runs the forecast of s up to the end of period `until_period` (inclusive)
 * into r. Returns 0, or non-zero to stop the search (interrupted, error). */
typedef int (*plan_evaluate_fn)(void *ctx, const struct scenario *s, uint32_t until_period,
                                struct forecast_result *r);

/* The share of r's replications in which period p meets the SLO. */
double plan_period_share(const struct forecast_result *r, uint32_t p, const struct plan_slo *slo);
/* Searches; the orders it settles on are left appended to s->procurement.
 * Returns 0, or the evaluator's non-zero value, or -1 with err set. */
int plan_search(struct scenario *s, const struct plan_slo *slo, plan_evaluate_fn evaluate, void *ctx,
                struct plan_result *out, struct err *err);
void plan_result_release(struct plan_result *p);

#endif
