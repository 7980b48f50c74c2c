#include "scenarios/plan.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"

int plan_slo_parse(const char *text, struct plan_slo *slo, struct err *err)
{
    char metric[32], op[4], amount[64];
    if (sscanf(text, " %31[a-z0-9_] %3[<=>] %63s", metric, op, amount) != 3)
        return err_set(err, NULL, 0, 0, "SLO '%s' is not 'METRIC <= DURATION', e.g. 'p95_wait <= 2h'", text);
    if (strcmp(op, "<=") != 0)
        return err_set(err, NULL, 0, 0, "SLO '%s': only '<=' is supported", text);
    if (!strcmp(metric, "p50_wait"))
        slo->metric = FM_WAIT_P50;
    else if (!strcmp(metric, "p95_wait"))
        slo->metric = FM_WAIT_P95;
    else if (!strcmp(metric, "p99_wait"))
        slo->metric = FM_WAIT_P99;
    else
        return err_set(err, NULL, 0, 0, "SLO metric '%s' unknown (p50_wait, p95_wait, p99_wait)", metric);
    if (units_parse_duration(amount, &slo->threshold_s) != 0)
        return err_set(err, NULL, 0, 0, "SLO '%s': '%s' is not a duration such as 2h or 30m", text, amount);
    return 0;
}

double plan_period_share(const struct forecast_result *r, uint32_t p, const struct plan_slo *slo)
{
    if (!r->completed)
        return 0;
    uint32_t ok = 0;
    for (uint32_t i = 0; i < r->completed; i++)
        ok += forecast_period_metric(&r->reps[i].periods[p], slo->metric) <= slo->threshold_s;
    return (double)ok / (double)r->completed;
}

/* The lead time that is not exceeded with probability q. */
static double lead_quantile(const struct distribution *d, double q)
{
    switch (d->kind) {
    case DIST_FIXED:
        return d->a;
    case DIST_UNIFORM:
        return d->a + (d->b - d->a) * q;
    case DIST_EXPONENTIAL:
        return -d->a * log(1 - q);
    case DIST_WEIBULL:
        return d->b * pow(-log(1 - q), 1 / d->a);
    case DIST_LOGNORMAL:
        return d->a * exp(d->b * gsl_cdf_ugaussian_Pinv(q));
    }
    return d->a;
}

struct search {
    struct scenario *s;
    const struct plan_slo *slo;
    plan_evaluate_fn evaluate;
    void *ctx;
    struct plan_result *out;
    struct err *err;
};

/* Does period p meet the SLO with `count` nodes of `type` ordered at `at`?
 * The order is added, evaluated, and taken back. */
static int meets_with(struct search *x, uint32_t p, sim_time at, int32_t type, int64_t count, int *meets)
{
    struct purchase_order o = {at, type, count, x->s->plan.lead_time_s, x->s->plan.burn_in_s};
    if (procurement_add_order(&x->s->procurement, &o) != 0)
        return err_set(x->err, x->s->path, 0, 0, "out of memory");
    struct forecast_result r;
    memset(&r, 0, sizeof r);
    int rc = x->evaluate(x->ctx, x->s, p, &r);
    x->out->evaluations++;
    x->s->procurement.n_orders--;
    if (rc == 0)
        *meets = plan_period_share(&r, p, x->slo) >= x->slo->confidence;
    forecast_result_release(&r);
    return rc;
}

/* The fewest nodes of `type`, in steps, that make period p meet the SLO,
 * or -1 when max_nodes does not. */
static int fewest_nodes(struct search *x, uint32_t p, sim_time at, int32_t type, int64_t *count)
{
    const struct plan_spec *ps = &x->s->plan;
    int64_t step = ps->step_nodes > 0 ? ps->step_nodes : 1;
    int64_t hi = ps->max_nodes / step, lo = 1;
    int meets = 0;
    int rc = meets_with(x, p, at, type, hi * step, &meets);
    if (rc != 0)
        return rc;
    if (!meets) {
        *count = -1;
        return 0;
    }
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((rc = meets_with(x, p, at, type, mid * step, &meets)) != 0)
            return rc;
        if (meets)
            hi = mid;
        else
            lo = mid + 1;
    }
    *count = lo * step;
    return 0;
}

static int add_result_order(struct plan_result *out, const struct planned_order *o)
{
    struct planned_order *orders = realloc(out->orders, (out->n_orders + 1) * sizeof *orders);
    if (!orders)
        return -1;
    out->orders = orders;
    out->orders[out->n_orders++] = *o;
    out->cost_usd += o->cost_usd;
    return 0;
}

int plan_search(struct scenario *s, const struct plan_slo *slo, plan_evaluate_fn evaluate, void *ctx,
                struct plan_result *out, struct err *err)
{
    memset(out, 0, sizeof *out);
    struct forecast_result shape;
    if (forecast_result_init(&shape, s, 0, err) != 0) {
        forecast_result_release(&shape);
        return -1;
    }
    out->n_periods = shape.n_periods;
    sim_time period_us = shape.period_us;
    forecast_result_release(&shape);
    out->out_of_reach = calloc(out->n_periods + 1, 1);
    if (!out->out_of_reach)
        return err_set(err, s->path, 0, 0, "out of memory");
    struct search x = {s, slo, evaluate, ctx, out, err};
    const struct plan_spec *ps = &s->plan;
    double lead_s = lead_quantile(&ps->lead_time_s, slo->confidence) + ps->burn_in_s;
    for (uint32_t round = 0; round < 4 * out->n_periods + 4; round++) {
        struct forecast_result r;
        memset(&r, 0, sizeof r);
        int rc = evaluate(ctx, s, out->n_periods - 1, &r);
        out->evaluations++;
        if (rc != 0) {
            forecast_result_release(&r);
            return rc;
        }
        uint32_t p = out->n_periods;
        for (uint32_t k = 0; k < out->n_periods; k++) {
            if (!out->out_of_reach[k] && plan_period_share(&r, k, slo) < slo->confidence) {
                p = k;
                break;
            }
        }
        forecast_result_release(&r);
        if (p == out->n_periods)
            break; /* every period in reach meets the SLO */
        sim_time start = (sim_time)p * period_us;
        sim_time at = start - (sim_time)llround(lead_s * 1e6);
        if (at < 0)
            at = 0;
        int32_t best_type = -1;
        int64_t best_count = 0;
        double best_cost = 0;
        for (size_t c = 0; c < ps->n_candidates; c++) {
            int32_t type = ps->candidate_types[c];
            int64_t count;
            if ((rc = fewest_nodes(&x, p, at, type, &count)) != 0)
                return rc;
            if (count < 0)
                continue;
            double cost = (double)count * s->catalog.types[type].price_usd;
            if (best_type < 0 || cost < best_cost || (cost == best_cost && count < best_count)) {
                best_type = type;
                best_count = count;
                best_cost = cost;
            }
        }
        if (best_type < 0) {
            out->out_of_reach[p] = 1;
            if (!out->reason[0]) {
                double days_left = (double)start / 86400e6, lead_days = lead_s / 86400;
                if (lead_days > days_left)
                    snprintf(out->reason, sizeof out->reason,
                             "%s %u cannot meet the SLO: an order placed now arrives after %.0f days (lead time "
                             "at %.0f%% confidence plus burn-in), the period starts in %.0f",
                             s->horizon.period == PERIOD_QUARTER ? "quarter" : s->horizon.period == PERIOD_MONTH ? "month" : "week",
                             p + 1, lead_days, 100 * slo->confidence, days_left);
                else
                    snprintf(out->reason, sizeof out->reason,
                             "period %u cannot meet the SLO even with %lld more nodes of any candidate type", p + 1,
                             (long long)ps->max_nodes);
            }
            continue;
        }
        struct purchase_order o = {at, best_type, best_count, ps->lead_time_s, ps->burn_in_s};
        struct planned_order po = {at, best_type, best_count, best_cost, p};
        if (procurement_add_order(&s->procurement, &o) != 0 || add_result_order(out, &po) != 0)
            return err_set(err, s->path, 0, 0, "out of memory");
    }
    out->met = 1;
    for (uint32_t k = 0; k < out->n_periods; k++)
        out->met &= !out->out_of_reach[k];
    return 0;
}

void plan_result_release(struct plan_result *p)
{
    if (!p)
        return;
    free(p->orders);
    free(p->out_of_reach);
    memset(p, 0, sizeof *p);
}
