/* plan: the cheapest set of levers (purchases, rentals, a policy change)
 * that keeps a scenario's SLOs, checked before it is believed.
 *
 * The goal: every SLO (a wait statistic of the jobs submitted in a period,
 * all jobs or one team's, under a threshold) holds in a period in at least
 * `confidence` of the replications, in every period of the horizon.
 *
 * The search, for each policy it may use (the scenario's first): periods in
 * order; a period that misses the goal with the orders so far gets the
 * cheapest order that makes it meet it: for each candidate node type the
 * fewest nodes (multiples of step_nodes, at most max_nodes and what the
 * quarter's budget still allows; binary search) bought on the latest date
 * from which they are delivered and burnt in by the period's start with
 * probability `confidence` (order date = start - lead time quantile -
 * burn-in), and, when the scenario offers rented capacity, the fewest rented
 * nodes ordered rent_lead_time before the start and kept for the period (or
 * the minimum term). An order whose date would be before the start of the
 * horizon cannot serve the period and is never placed: a period no lever
 * reaches in time is out of reach, with the reason, and planning goes on for
 * the later ones. Options compare on total cost over the horizon: price,
 * rent, and the running cost (power x PUE at $/kWh, hosting) of bought nodes
 * from arrival to the horizon's end. The search ends when every period has
 * been dealt with, never after a fixed number of rounds. Rentals are
 * chosen a period at a time, but a purchase serves every later period: so
 * afterwards, from the first period that has a rental and that a purchase
 * can reach, every rental from there on is replaced by one purchase when
 * the fewest nodes that keep the goal to the end cost less.
 *
 * Every candidate is evaluated on the same replications (seeds 0..R-1:
 * common random numbers), so candidates differ by what they change, not by
 * the luck of their draws. The policies' plans compare on (periods missed,
 * total cost); the best is confirmed by a forecast with fresh seeds and
 * more replications, and the verdict is that forecast's. When it misses a
 * period the search thought met, the search resumes from that period on the
 * confirmation's replications and a new fresh confirmation follows (at most
 * max_confirmations); the verdict stays the last confirmation's.
 *
 * Forecasts are the caller's (they run in worker processes): the search
 * calls `evaluate`. A non-zero return (interrupted) stops it; the orders
 * found so far are kept as the result, marked partial and unconfirmed.
 * The chosen plan's orders (and rentals' returns) are left appended to
 * s->procurement after its own base_orders / base_retirements.
 */
#ifndef FLEETSIM_SCENARIOS_PLAN_H
#define FLEETSIM_SCENARIOS_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "scenarios/forecast.h"
#include "scenarios/scenario.h"
#include "sim/err.h"

enum { PLAN_TEAM_MAX = 48, PLAN_REASON_MAX = 320 };

struct plan_slo {
    int team;                    /* index into the forecast's teams; -1: all jobs */
    char team_name[PLAN_TEAM_MAX];
    enum forecast_metric metric; /* FM_WAIT_P50, FM_WAIT_P95, FM_WAIT_P99 or FM_WAIT_MEAN */
    double threshold_s;
    char text[PLAN_SLO_TEXT_MAX]; /* as written */
};

/* "[TEAM:] p95_wait <= 2h" -> slo (team unresolved: -1 with team_name set).
 * Returns 0, or -1 with a message in err. */
int plan_slo_parse(const char *text, struct plan_slo *slo, struct err *err);
/* Resolves slo->team_name against s's teams. Returns 0, or -1 naming the
 * nearest team. */
int plan_slo_resolve(struct plan_slo *slo, const struct scenario *s, struct err *err);
/* slo's statistic in one period of one replication. */
double plan_slo_value(const struct forecast_period *p, const struct plan_slo *slo);

struct plan_goal {
    const struct plan_slo *slos;
    size_t n_slos;
    double confidence;
};

/* The share of r's replications in which every SLO holds in period p. */
double plan_period_share(const struct forecast_result *r, uint32_t p, const struct plan_goal *g);

enum plan_order_kind { PLAN_BUY, PLAN_RENT };

struct planned_order {
    enum plan_order_kind kind;
    sim_time at_us;      /* order date (from the scenario start) */
    sim_time ready_us;   /* in service by then with the goal's confidence */
    sim_time end_us;     /* rentals: returned then; purchases: -1 */
    int32_t type;
    int64_t count;
    double price_usd;    /* purchase price, or the whole rent */
    double running_usd;  /* purchases: power and hosting to the horizon's end */
    uint32_t for_period; /* the first period it serves (0-based) */
};

/* One policy's best plan, as the search found it (before confirmation). */
struct plan_alternative {
    char policy[POLICY_SPEC_MAX];
    double cost_usd;
    size_t n_orders;
    uint32_t missed; /* periods the search could not make meet the goal */
    int searched;    /* 0: interrupted before this policy was searched */
    int dearer;      /* search stopped: it would cost more than another policy's plan that meets the goal */
};

struct plan_eval {
    const char *policy;
    uint32_t until_period; /* forecast up to the end of this period */
    uint32_t first_rep, n_reps;
};

typedef int (*plan_evaluate_fn)(void *ctx, const struct scenario *s, const struct plan_eval *e,
                                struct forecast_result *r);
typedef void (*plan_progress_fn)(void *ctx, const char *line);

struct plan_options {
    struct plan_goal goal;
    const char *const *policies; /* policies[0]: the forecast's own */
    size_t n_policies;
    uint32_t search_reps;
    uint32_t confirm_reps;
    uint32_t max_confirmations;  /* at least 1 */
    plan_evaluate_fn evaluate;
    plan_progress_fn progress;   /* may be NULL */
    void *ctx;
};

struct plan_result {
    char policy[POLICY_SPEC_MAX];  /* the one chosen */
    struct planned_order *orders;  /* merged per kind, type and date, by date */
    size_t n_orders;
    double price_usd, running_usd, cost_usd; /* purchases and rents; running; total */
    struct plan_alternative *alternatives;   /* one per policy, in the options' order */
    size_t n_alternatives;
    uint32_t n_periods;
    uint8_t *out_of_reach;                   /* per period: no lever can serve it (reason in why) */
    char (*why)[PLAN_REASON_MAX];            /* per period, when the search gave up on it */
    size_t base_orders, base_retirements;    /* the scenario's own, before the plan's */
    /* the confirmation: the verdict comes from here */
    struct forecast_result confirm;          /* empty when partial */
    double *share;                           /* per period, in the confirmation */
    int met;                                 /* every period meets the goal in the confirmation */
    int partial;                             /* interrupted: not confirmed */
    uint32_t evaluations;                    /* forecasts run while searching */
    uint32_t confirmations;
    uint32_t confirm_first_rep;              /* seeds of the last confirmation */
    char reason[512];                        /* when !met: the first period that misses, and why */
};

/* Runs the search and its confirmation. Returns 0 (see out->met), the
 * evaluator's non-zero value when it stopped (out holds the best plan so
 * far, partial), or -1 with err set. */
int plan_run(struct scenario *s, const struct plan_options *o, struct plan_result *out, struct err *err);
void plan_result_release(struct plan_result *p);

/* Merges orders of the same kind, type and date (and, for rentals, end),
 * summing counts and costs; sorts by date. Returns the new count. */
size_t plan_merge_orders(struct planned_order *orders, size_t n);
/* The lead time not exceeded with probability q. */
double plan_lead_quantile(const struct distribution *d, double q);

#endif
