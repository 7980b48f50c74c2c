#include "scenarios/plan.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/schema.h"
#include "sim/units.h"

static const struct {
    const char *name;
    enum forecast_metric metric;
} slo_metrics[] = {
    {"p50_wait", FM_WAIT_P50}, {"p95_wait", FM_WAIT_P95}, {"p99_wait", FM_WAIT_P99}, {"mean_wait", FM_WAIT_MEAN}};

int plan_slo_parse(const char *text, struct plan_slo *slo, struct err *err)
{
    memset(slo, 0, sizeof *slo);
    slo->team = -1;
    snprintf(slo->text, sizeof slo->text, "%s", text);
    const char *rest = text;
    const char *colon = strchr(text, ':');
    if (colon) {
        const char *a = text, *b = colon;
        while (*a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        if (b == a || (size_t)(b - a) >= sizeof slo->team_name)
            return err_set(err, NULL, 0, 0, "SLO '%s': the team before ':' is empty or too long", text);
        memcpy(slo->team_name, a, (size_t)(b - a));
        rest = colon + 1;
    }
    char metric[32], op[4], amount[64], extra[2];
    if (sscanf(rest, " %31[a-z0-9_] %3[<=>] %63s %1s", metric, op, amount, extra) != 3)
        return err_set(err, NULL, 0, 0,
                       "SLO '%s' is not '[TEAM:] METRIC <= DURATION', e.g. 'p95_wait <= 2h' or "
                       "'research: p95_wait <= 4h'",
                       text);
    if (strcmp(op, "<=") != 0)
        return err_set(err, NULL, 0, 0, "SLO '%s': only '<=' is supported", text);
    size_t k = 0, n = sizeof slo_metrics / sizeof *slo_metrics;
    while (k < n && strcmp(metric, slo_metrics[k].name) != 0)
        k++;
    if (k == n) {
        const char *names[] = {slo_metrics[0].name, slo_metrics[1].name, slo_metrics[2].name, slo_metrics[3].name};
        const char *near = schema_nearest(metric, names, n);
        return err_set(err, NULL, 0, 0, "names metric '%s', expected p50_wait, p95_wait, p99_wait or mean_wait%s%s%s",
                       metric, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    }
    slo->metric = slo_metrics[k].metric;
    if (units_parse_duration(amount, &slo->threshold_s) != 0)
        return err_set(err, NULL, 0, 0, "SLO '%s': '%s' is not a duration such as 2h or 30m", text, amount);
    return 0;
}

int plan_slo_resolve(struct plan_slo *slo, const struct scenario *s, struct err *err)
{
    slo->team = -1;
    if (!slo->team_name[0])
        return 0;
    const char *names[256];
    size_t n = 0;
    for (size_t t = 0; t < s->workload.n_teams; t++) {
        if (strcmp(s->workload.teams[t].name, slo->team_name) == 0) {
            slo->team = (int)t;
            return 0;
        }
        if (n < 256)
            names[n++] = s->workload.teams[t].name;
    }
    const char *near = schema_nearest(slo->team_name, names, n);
    return err_set(err, s->path, 0, 0, "SLO '%s' names team '%s', which the workload does not have%s%s%s", slo->text,
                   slo->team_name, near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}

double plan_slo_value(const struct forecast_period *p, const struct plan_slo *slo)
{
    if (slo->team >= 0)
        return forecast_team_wait_metric(p, (size_t)slo->team, slo->metric);
    return forecast_period_metric(p, slo->metric);
}

double plan_period_share(const struct forecast_result *r, uint32_t p, const struct plan_goal *g)
{
    if (!r->completed || p >= r->n_periods)
        return 0;
    uint32_t ok = 0;
    for (uint32_t i = 0; i < r->completed; i++) {
        int met = 1;
        for (size_t k = 0; k < g->n_slos && met; k++)
            met = plan_slo_value(&r->reps[i].periods[p], &g->slos[k]) <= g->slos[k].threshold_s;
        ok += (uint32_t)met;
    }
    return (double)ok / (double)r->completed;
}

double plan_lead_quantile(const struct distribution *d, double q)
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

static int order_cmp(const void *pa, const void *pb)
{
    const struct planned_order *a = pa, *b = pb;
    if (a->at_us != b->at_us)
        return a->at_us < b->at_us ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->type != b->type)
        return a->type < b->type ? -1 : 1;
    if (a->end_us != b->end_us)
        return a->end_us < b->end_us ? -1 : 1;
    return 0;
}

size_t plan_merge_orders(struct planned_order *o, size_t n)
{
    if (!n)
        return 0;
    /* stable enough: equal keys are merged, so their order does not matter */
    qsort(o, n, sizeof *o, order_cmp);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (order_cmp(&o[k], &o[i]) == 0) {
            o[k].count += o[i].count;
            o[k].price_usd += o[i].price_usd;
            o[k].running_usd += o[i].running_usd;
            if (o[i].for_period < o[k].for_period)
                o[k].for_period = o[i].for_period;
            if (o[i].ready_us > o[k].ready_us)
                o[k].ready_us = o[i].ready_us;
        } else {
            o[++k] = o[i];
        }
    }
    return k + 1;
}

/* ---- one policy's search ---- */

struct policy_plan {
    int dearer;           /* abandoned: it costs more than another policy's plan */
    struct planned_order *orders;
    size_t n_orders, cap;
    double *spent;        /* per quarter of the horizon */
    uint8_t *missed;      /* per period */
    uint8_t *out_of_reach;
    char (*why)[PLAN_REASON_MAX];
};

struct search {
    struct scenario *s;
    const struct plan_options *o;
    struct plan_result *out;
    struct err *err;
    const char *policy;
    uint32_t first_rep, n_reps;
    sim_time period_us, horizon_us, quarter_us;
    uint32_t n_quarters;
    double buy_lead_s; /* lead time quantile + burn-in */
    struct policy_plan *pp;
    double cost_cap;   /* the cheapest plan that meets the goal everywhere so far (HUGE_VAL: none) */
    int check_to_end;  /* a candidate must meet the goal from its period to the horizon's end */
};

static const char *period_word(const struct scenario *s)
{
    return s->horizon.period == PERIOD_QUARTER ? "quarter" : s->horizon.period == PERIOD_MONTH ? "month" : "week";
}

static void progress(struct search *x, const char *fmt, ...)
{
    if (!x->o->progress)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "plan [%s]: ", x->policy);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    x->o->progress(x->o->ctx, line);
}

static int add_planned(struct policy_plan *pp, const struct planned_order *o)
{
    if (pp->n_orders == pp->cap) {
        size_t cap = pp->cap ? 2 * pp->cap : 8;
        struct planned_order *v = realloc(pp->orders, cap * sizeof *v);
        if (!v)
            return -1;
        pp->orders = v;
        pp->cap = cap;
    }
    pp->orders[pp->n_orders++] = *o;
    return 0;
}

/* Puts o into the scenario's procurement (a rental also gets its return). */
static int apply_order(struct scenario *s, const struct planned_order *o)
{
    struct purchase_order po = {o->at_us, o->type, o->count, s->plan.lead_time_s, s->plan.burn_in_s};
    if (o->kind == PLAN_RENT) {
        po.lead_time_s = (struct distribution){DIST_FIXED, s->plan.rent_lead_time_s, 0};
        po.burn_in_s = 0;
    }
    if (procurement_add_order(&s->procurement, &po) != 0)
        return -1;
    if (o->kind == PLAN_RENT && o->end_us < s->horizon.length_us) {
        struct retirement rt = {o->end_us, o->type, o->count};
        if (procurement_add_retirement(&s->procurement, &rt) != 0) {
            s->procurement.n_orders--;
            return -1;
        }
    }
    return 0;
}

static void unapply_order(struct scenario *s, const struct planned_order *o)
{
    s->procurement.n_orders--;
    if (o->kind == PLAN_RENT && o->end_us < s->horizon.length_us)
        s->procurement.n_retirements--;
}

static void reset_procurement(struct scenario *s, const struct plan_result *out)
{
    s->procurement.n_orders = out->base_orders;
    s->procurement.n_retirements = out->base_retirements;
}

static int evaluate(struct search *x, uint32_t until, uint32_t first, uint32_t n, struct forecast_result *r)
{
    memset(r, 0, sizeof *r);
    struct plan_eval e = {x->policy, until, first, n};
    int rc = x->o->evaluate(x->o->ctx, x->s, &e, r);
    if (rc != 0)
        forecast_result_release(r);
    return rc;
}

/* The share of the search's replications that meet the goal in period p
 * with the procurement as it stands. */
static int share_now(struct search *x, uint32_t p, double *share)
{
    struct forecast_result r;
    uint32_t last = x->check_to_end ? x->out->n_periods - 1 : p;
    int rc = evaluate(x, last, x->first_rep, x->n_reps, &r);
    x->out->evaluations++;
    if (rc != 0)
        return rc;
    /* with check_to_end, the worst of periods p..last */
    *share = plan_period_share(&r, p, &x->o->goal);
    for (uint32_t k = p + 1; k <= last; k++) {
        double sk = plan_period_share(&r, k, &x->o->goal);
        if (sk < *share)
            *share = sk;
    }
    forecast_result_release(&r);
    return 0;
}

/* Fills o's count-dependent fields for `count` nodes. */
static void price_order(const struct search *x, struct planned_order *o, int64_t count)
{
    const struct scenario *s = x->s;
    const struct node_type *nt = &s->catalog.types[o->type];
    o->count = count;
    if (o->kind == PLAN_RENT) {
        double hours = (double)(o->end_us - o->ready_us) / 3.6e9;
        o->price_usd = (double)count * nt->gpus * s->plan.rent_usd_per_gpu_hour * hours;
        o->running_usd = 0; /* in the rent */
        return;
    }
    o->price_usd = (double)count * nt->price_usd;
    double hours = o->ready_us < x->horizon_us ? (double)(x->horizon_us - o->ready_us) / 3.6e9 : 0;
    o->running_usd = (double)count * hours *
                     (nt->power_w / 1000 * s->plan.pue * s->plan.power_usd_per_kwh +
                      s->plan.hosting_usd_per_node_year / (365.0 * 24));
}

static int meets_with(struct search *x, uint32_t p, struct planned_order *o, int64_t count, int *meets)
{
    price_order(x, o, count);
    if (apply_order(x->s, o) != 0)
        return err_set(x->err, x->s->path, 0, 0, "out of memory");
    double share = 0;
    int rc = share_now(x, p, &share);
    unapply_order(x->s, o);
    if (rc != 0)
        return rc;
    *meets = share >= x->o->goal.confidence;
    progress(x, "%s %u: %s %lld x %s -> met in %.0f%% of %u replications", period_word(x->s), p + 1,
             o->kind == PLAN_RENT ? "renting" : "buying", (long long)count, x->s->catalog.types[o->type].name,
             100 * share, x->n_reps);
    return 0;
}

/* The fewest nodes (in steps, at most hi_nodes) of o's kind and type that
 * make period p meet the goal; count -1 when hi_nodes do not. */
static int fewest(struct search *x, uint32_t p, struct planned_order *o, int64_t hi_nodes, int capped,
                  int64_t *count)
{
    int64_t step = x->s->plan.step_nodes > 0 ? x->s->plan.step_nodes : 1;
    int64_t hi = hi_nodes / step, lo = 1;
    *count = -1;
    if (hi < 1)
        return 0;
    /* bisect on [lo, hi]; hi itself is forecast first when a cost bound set
     * it (it often fails, and then nothing below is tried), else only if
     * nothing below meets */
    int meets = 0, rc = 0, hi_known = 0;
    if (capped) {
        if ((rc = meets_with(x, p, o, hi * step, &meets)) != 0 || !meets)
            return rc;
        hi_known = 1;
    }
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if ((rc = meets_with(x, p, o, mid * step, &meets)) != 0)
            return rc;
        if (meets) {
            hi = mid;
            hi_known = 1;
        } else {
            lo = mid + 1;
        }
    }
    if (!hi_known) {
        if ((rc = meets_with(x, p, o, hi * step, &meets)) != 0 || !meets)
            return rc;
    }
    *count = lo * step;
    price_order(x, o, *count);
    return 0;
}

/* What the quarter of date `at` still allows to spend (HUGE_VAL: no budget). */
static double budget_left(const struct search *x, sim_time at)
{
    if (x->s->plan.budget_per_quarter_usd <= 0)
        return HUGE_VAL;
    uint32_t q = (uint32_t)(at / x->quarter_us);
    if (q >= x->n_quarters)
        q = x->n_quarters - 1;
    return x->s->plan.budget_per_quarter_usd - x->pp->spent[q];
}

static int64_t affordable(const struct search *x, const struct planned_order *o)
{
    int64_t hi = x->s->plan.max_nodes;
    double left = budget_left(x, o->at_us);
    if (left == HUGE_VAL)
        return hi;
    struct planned_order one = *o;
    price_order(x, &one, 1);
    double per_node = one.price_usd + (o->kind == PLAN_BUY ? 0 : 0);
    if (per_node <= 0)
        return hi;
    double n = floor(left / per_node);
    return n < (double)hi ? (int64_t)(n > 0 ? n : 0) : hi;
}

/* Deals with period p: nothing if it meets the goal, else the cheapest
 * order that makes it, else out of reach (with the reason). */
static double plan_cost(const struct policy_plan *pp);

static int settle_period(struct search *x, uint32_t p)
{
    const struct scenario *s = x->s;
    const struct plan_spec *ps = &s->plan;
    struct policy_plan *pp = x->pp;
    double share = 0;
    int rc = share_now(x, p, &share);
    if (rc != 0)
        return rc;
    progress(x, "%s %u: met in %.0f%% of %u replications with %zu order%s so far", period_word(s), p + 1,
             100 * share, x->n_reps, pp->n_orders, pp->n_orders == 1 ? "" : "s");
    if (share >= x->o->goal.confidence) {
        pp->missed[p] = 0;
        return 0;
    }
    sim_time start = (sim_time)p * x->period_us, end = start + x->period_us;
    if (end > x->horizon_us)
        end = x->horizon_us;
    /* the options that arrive in time, cheapest per GPU first: the first
     * one found bounds what the others may cost, so fewer are forecast */
    struct planned_order opts[64];
    double unit_per_gpu[64];
    size_t n_opts = 0;
    int reachable = 0, budget_bound = 0, capped = 0;
    for (size_t c = 0; c <= ps->n_candidates && n_opts < 64; c++) {
        struct planned_order o;
        memset(&o, 0, sizeof o);
        o.for_period = p;
        if (c < ps->n_candidates) {
            o.kind = PLAN_BUY;
            o.type = ps->candidate_types[c];
            o.at_us = start - (sim_time)llround(x->buy_lead_s * 1e6);
            o.ready_us = start;
            o.end_us = -1;
        } else {
            if (!ps->has_rent || ps->rent_type < 0)
                break;
            o.kind = PLAN_RENT;
            o.type = ps->rent_type;
            o.at_us = start - (sim_time)llround(ps->rent_lead_time_s * 1e6);
            o.ready_us = start;
            double term_s = (double)(end - start) / 1e6;
            if (term_s < ps->rent_min_term_s)
                term_s = ps->rent_min_term_s;
            o.end_us = start + (sim_time)llround(term_s * 1e6);
        }
        if (o.at_us < 0)
            continue; /* cannot arrive in time for this period */
        reachable = 1;
        struct planned_order one = o;
        price_order(x, &one, 1);
        double u = (one.price_usd + one.running_usd) / (double)s->catalog.types[o.type].gpus;
        size_t k = n_opts++;
        while (k > 0 && unit_per_gpu[k - 1] > u) { /* insertion: stable for equal costs */
            opts[k] = opts[k - 1];
            unit_per_gpu[k] = unit_per_gpu[k - 1];
            k--;
        }
        opts[k] = o;
        unit_per_gpu[k] = u;
    }
    struct planned_order best;
    int have = 0;
    for (size_t c = 0; c < n_opts; c++) {
        struct planned_order o = opts[c];
        int64_t hi = affordable(x, &o);
        budget_bound |= hi < ps->max_nodes;
        struct planned_order one = o;
        price_order(x, &one, 1);
        double unit = one.price_usd + one.running_usd;
        /* more than the best option's cost cannot win, nor more than
         * another policy's whole plan that meets the goal everywhere */
        double bound = have ? best.price_usd + best.running_usd : HUGE_VAL;
        if (x->cost_cap < HUGE_VAL && x->cost_cap - plan_cost(pp) < bound)
            bound = x->cost_cap - plan_cost(pp);
        int bounded = hi < ps->max_nodes;
        if (bound < HUGE_VAL && unit > 0) {
            double most = floor(bound / unit);
            if (most < (double)hi) {
                hi = most > 0 ? (int64_t)most : 0;
                capped |= !have;
                bounded = 1;
            }
        }
        int64_t count;
        if ((rc = fewest(x, p, &o, hi, bounded, &count)) != 0)
            return rc;
        if (count < 0)
            continue;
        double cost = o.price_usd + o.running_usd, best_cost = have ? best.price_usd + best.running_usd : 0;
        if (!have || cost < best_cost || (cost == best_cost && o.count < best.count)) {
            best = o;
            have = 1;
        }
    }
    if (!have && capped && reachable) {
        pp->missed[p] = 1;
        pp->dearer = 1;
        snprintf(pp->why[p], PLAN_REASON_MAX, "%s %u would cost more than the plan of another policy", period_word(s),
                 p + 1);
        progress(x, "%s; this policy cannot be the cheapest", pp->why[p]);
        return 0;
    }
    if (!have) {
        pp->missed[p] = 1;
        const char *word = period_word(s);
        if (!reachable) {
            pp->out_of_reach[p] = 1;
            double days_left = (double)start / 86400e6, lead_days = x->buy_lead_s / 86400;
            double first_lead = lead_days;
            if (ps->has_rent && ps->rent_lead_time_s / 86400 < first_lead)
                first_lead = ps->rent_lead_time_s / 86400;
            snprintf(pp->why[p], PLAN_REASON_MAX,
                     "%s %u cannot meet the SLO: an order placed now arrives after %.0f days (%s at %.0f%% "
                     "confidence plus burn-in), the %s starts in %.0f",
                     word, p + 1, first_lead,
                     first_lead < lead_days ? "the rental's lead time" : "lead time", 100 * x->o->goal.confidence,
                     word, days_left);
        } else {
            snprintf(pp->why[p], PLAN_REASON_MAX, "%s %u cannot meet the SLO even with %s of any candidate type",
                     word, p + 1, budget_bound ? "what the quarter's budget allows" : "max_nodes more nodes");
        }
        progress(x, "%s", pp->why[p]);
        return 0;
    }
    pp->missed[p] = 0;
    if (add_planned(pp, &best) != 0 || apply_order(x->s, &best) != 0)
        return err_set(x->err, s->path, 0, 0, "out of memory");
    if (ps->budget_per_quarter_usd > 0) {
        uint32_t q = (uint32_t)(best.at_us / x->quarter_us);
        pp->spent[q < x->n_quarters ? q : x->n_quarters - 1] += best.price_usd;
    }
    progress(x, "%s %u: %s %lld x %s ($%.0f)", period_word(s), p + 1, best.kind == PLAN_RENT ? "rent" : "order",
             (long long)best.count, s->catalog.types[best.type].name, best.price_usd + best.running_usd);
    return 0;
}

static int apply_orders(struct scenario *s, const struct plan_result *out, const struct planned_order *o, size_t n)
{
    reset_procurement(s, out);
    for (size_t i = 0; i < n; i++)
        if (apply_order(s, &o[i]) != 0)
            return -1;
    return 0;
}

/* The greedy search rents for one period at a time; a purchase serves every
 * later period too. For the first period p that has a rental and that a
 * purchase can still reach, try replacing every rental from p on by one
 * purchase for p: the fewest nodes of a candidate type that keep the goal in
 * every period from p to the end, kept only if it costs less than those
 * rentals. Later periods are tried in turn while nothing is replaced. */
static int consolidate(struct search *x)
{
    struct policy_plan *pp = x->pp;
    const struct plan_spec *ps = &x->s->plan;
    if (!ps->has_rent || !ps->n_candidates)
        return 0;
    struct planned_order *trial = malloc((pp->n_orders + 1) * sizeof *trial);
    if (!trial)
        return err_set(x->err, x->s->path, 0, 0, "out of memory");
    int rc = 0;
    for (uint32_t p = 0; p < x->out->n_periods && rc == 0; p++) {
        double rent_usd = 0;
        size_t n_trial = 0;
        int rents_p = 0, later = 0;
        for (size_t i = 0; i < pp->n_orders; i++) {
            const struct planned_order *o = &pp->orders[i];
            if (o->kind == PLAN_RENT && o->for_period >= p) {
                rent_usd += o->price_usd;
                rents_p |= o->for_period == p;
                later = 1;
            } else {
                trial[n_trial++] = *o;
            }
        }
        if (!later)
            break;
        sim_time start = (sim_time)p * x->period_us;
        sim_time at = start - (sim_time)llround(x->buy_lead_s * 1e6);
        if (!rents_p || at < 0)
            continue;
        if (apply_orders(x->s, x->out, trial, n_trial) != 0) {
            rc = err_set(x->err, x->s->path, 0, 0, "out of memory");
            break;
        }
        struct planned_order best;
        int have = 0;
        x->check_to_end = 1;
        for (size_t c = 0; c < ps->n_candidates && rc == 0; c++) {
            struct planned_order o = {PLAN_BUY, at, start, -1, ps->candidate_types[c], 0, 0, 0, p};
            struct planned_order one = o;
            price_order(x, &one, 1);
            double bound = have ? best.price_usd + best.running_usd : rent_usd;
            double unit = one.price_usd + one.running_usd;
            int64_t hi = affordable(x, &o);
            if (unit > 0 && floor(bound / unit) < (double)hi)
                hi = (int64_t)floor(bound / unit);
            int64_t count;
            if ((rc = fewest(x, p, &o, hi, 1, &count)) != 0 || count < 0)
                continue;
            if (o.price_usd + o.running_usd < bound) {
                best = o;
                have = 1;
            }
        }
        x->check_to_end = 0;
        if (rc == 0 && have) {
            trial[n_trial++] = best;
            memcpy(pp->orders, trial, n_trial * sizeof *trial);
            pp->n_orders = n_trial;
            progress(x, "%s %u on: buying %lld x %s ($%.0f) instead of renting ($%.0f)", period_word(x->s), p + 1,
                     (long long)best.count, x->s->catalog.types[best.type].name, best.price_usd + best.running_usd,
                     rent_usd);
        }
        if (apply_orders(x->s, x->out, pp->orders, pp->n_orders) != 0 && rc == 0)
            rc = err_set(x->err, x->s->path, 0, 0, "out of memory");
        if (have) {
            /* what each quarter has committed, again */
            memset(pp->spent, 0, x->n_quarters * sizeof *pp->spent);
            for (size_t i = 0; i < pp->n_orders; i++) {
                uint32_t q = (uint32_t)(pp->orders[i].at_us / x->quarter_us);
                pp->spent[q < x->n_quarters ? q : x->n_quarters - 1] += pp->orders[i].price_usd;
            }
            break;
        }
    }
    free(trial);
    return rc;
}

static int search_from(struct search *x, uint32_t from)
{
    for (uint32_t p = from; p < x->out->n_periods && !x->pp->dearer; p++) {
        int rc = settle_period(x, p);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void policy_plan_release(struct policy_plan *pp)
{
    free(pp->orders);
    free(pp->spent);
    free(pp->missed);
    free(pp->out_of_reach);
    free(pp->why);
    memset(pp, 0, sizeof *pp);
}

static int policy_plan_init(struct policy_plan *pp, uint32_t n_periods, uint32_t n_quarters)
{
    memset(pp, 0, sizeof *pp);
    pp->spent = calloc(n_quarters, sizeof *pp->spent);
    pp->missed = calloc(n_periods, 1);
    pp->out_of_reach = calloc(n_periods, 1);
    pp->why = calloc(n_periods, sizeof *pp->why);
    return pp->spent && pp->missed && pp->out_of_reach && pp->why ? 0 : -1;
}

static double plan_cost(const struct policy_plan *pp)
{
    double c = 0;
    for (size_t i = 0; i < pp->n_orders; i++)
        c += pp->orders[i].price_usd + pp->orders[i].running_usd;
    return c;
}

static uint32_t plan_missed(const struct policy_plan *pp, uint32_t n_periods)
{
    uint32_t m = 0;
    for (uint32_t p = 0; p < n_periods; p++)
        m += pp->missed[p];
    return m;
}

/* Copies the chosen policy's plan into out (orders merged). */
static int take_plan(struct plan_result *out, const struct policy_plan *pp, const char *policy)
{
    snprintf(out->policy, sizeof out->policy, "%s", policy);
    free(out->orders);
    out->orders = malloc((pp->n_orders + 1) * sizeof *out->orders);
    if (!out->orders)
        return -1;
    if (pp->n_orders) /* a plan without orders may have no array at all */
        memcpy(out->orders, pp->orders, pp->n_orders * sizeof *out->orders);
    out->n_orders = plan_merge_orders(out->orders, pp->n_orders);
    out->price_usd = out->running_usd = 0;
    for (size_t i = 0; i < out->n_orders; i++) {
        out->price_usd += out->orders[i].price_usd;
        out->running_usd += out->orders[i].running_usd;
    }
    out->cost_usd = out->price_usd + out->running_usd;
    memcpy(out->out_of_reach, pp->out_of_reach, out->n_periods);
    memcpy(out->why, pp->why, out->n_periods * sizeof *out->why);
    return 0;
}

static int apply_plan(struct scenario *s, const struct plan_result *out, const struct policy_plan *pp)
{
    reset_procurement(s, out);
    for (size_t i = 0; i < pp->n_orders; i++)
        if (apply_order(s, &pp->orders[i]) != 0)
            return -1;
    return 0;
}

/* Forecasts the plan on fresh seeds; fills out->confirm, share, met. */
static int confirm(struct search *x, uint32_t first)
{
    struct plan_result *out = x->out;
    forecast_result_release(&out->confirm);
    int rc = evaluate(x, out->n_periods - 1, first, x->o->confirm_reps, &out->confirm);
    if (rc != 0)
        return rc;
    out->confirmations++;
    out->confirm_first_rep = first;
    out->met = 1;
    for (uint32_t p = 0; p < out->n_periods; p++) {
        out->share[p] = plan_period_share(&out->confirm, p, &x->o->goal);
        out->met &= out->share[p] >= x->o->goal.confidence;
    }
    char line[256];
    int n = snprintf(line, sizeof line, "confirmation on %u fresh replications:", x->o->confirm_reps);
    for (uint32_t p = 0; p < out->n_periods && n > 0 && (size_t)n < sizeof line; p++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %.0f%%", 100 * out->share[p]);
    progress(x, "%s", line);
    return 0;
}

static void set_reason(const struct scenario *s, struct plan_result *out, const struct plan_options *o)
{
    out->reason[0] = 0;
    for (uint32_t p = 0; p < out->n_periods && out->confirm.completed; p++) {
        if (out->share[p] >= o->goal.confidence)
            continue;
        if (out->why[p][0])
            snprintf(out->reason, sizeof out->reason, "%s", out->why[p]);
        else
            snprintf(out->reason, sizeof out->reason,
                     "%s %u meets the SLO in only %.0f%% of %u fresh replications (%.0f%% needed)", period_word(s),
                     p + 1, 100 * out->share[p], out->confirm.completed, 100 * o->goal.confidence);
        return;
    }
}

int plan_run(struct scenario *s, const struct plan_options *o, struct plan_result *out, struct err *err)
{
    memset(out, 0, sizeof *out);
    struct forecast_result shape;
    if (forecast_result_init(&shape, s, 0, err) != 0) {
        forecast_result_release(&shape);
        return -1;
    }
    out->n_periods = shape.n_periods;
    forecast_result_release(&shape);
    out->base_orders = s->procurement.n_orders;
    out->base_retirements = s->procurement.n_retirements;
    out->out_of_reach = calloc(out->n_periods + 1, 1);
    out->why = calloc(out->n_periods + 1, sizeof *out->why);
    out->share = calloc(out->n_periods + 1, sizeof *out->share);
    out->alternatives = calloc(o->n_policies + 1, sizeof *out->alternatives);
    struct policy_plan *pps = calloc(o->n_policies + 1, sizeof *pps);
    if (!out->out_of_reach || !out->why || !out->share || !out->alternatives || !pps) {
        free(pps);
        return err_set(err, s->path, 0, 0, "out of memory");
    }
    out->n_alternatives = o->n_policies;
    struct search x = {s, o, out, err, NULL, 0, o->search_reps, s->horizon.period_us, s->horizon.length_us,
                       13 * 7 * 86400 * SIM_US_PER_S, 0, 0, NULL, HUGE_VAL, 0};
    x.n_quarters = (uint32_t)((x.horizon_us + x.quarter_us - 1) / x.quarter_us) + 1;
    x.buy_lead_s = plan_lead_quantile(&s->plan.lead_time_s, o->goal.confidence) + s->plan.burn_in_s;
    int rc = 0;
    size_t best = 0;
    for (size_t i = 0; i < o->n_policies; i++) {
        if (policy_plan_init(&pps[i], out->n_periods, x.n_quarters) != 0) {
            rc = err_set(err, s->path, 0, 0, "out of memory");
            goto done;
        }
    }
    for (size_t i = 0; i < o->n_policies; i++) {
        struct plan_alternative *alt = &out->alternatives[i];
        snprintf(alt->policy, sizeof alt->policy, "%s", o->policies[i]);
        x.policy = o->policies[i];
        x.pp = &pps[i];
        reset_procurement(s, out);
        rc = search_from(&x, 0);
        if (rc == 0 && !pps[i].dearer)
            rc = consolidate(&x);
        alt->cost_usd = plan_cost(&pps[i]);
        alt->n_orders = pps[i].n_orders;
        alt->missed = plan_missed(&pps[i], out->n_periods);
        alt->searched = rc == 0;
        alt->dearer = pps[i].dearer;
        if (rc == 0 && alt->missed == 0 && alt->cost_usd < x.cost_cap)
            x.cost_cap = alt->cost_usd;
        if (rc != 0) {
            /* interrupted: the best plan so far (this one if it is the first) */
            if (i == 0)
                best = 0;
            goto partial;
        }
        const struct plan_alternative *b = &out->alternatives[best];
        if (alt->missed < b->missed || (alt->missed == b->missed && alt->cost_usd < b->cost_usd))
            best = i;
    }
    /* confirm on fresh seeds; resume the search where the confirmation disagrees */
    x.policy = o->policies[best];
    x.pp = &pps[best];
    x.cost_cap = HUGE_VAL;
    uint32_t fresh = o->search_reps;
    uint32_t max_conf = o->max_confirmations ? o->max_confirmations : 1;
    for (;;) {
        if (apply_plan(s, out, x.pp) != 0) {
            rc = err_set(err, s->path, 0, 0, "out of memory");
            goto done;
        }
        if ((rc = confirm(&x, fresh)) != 0)
            goto partial;
        uint32_t first_bad = out->n_periods;
        for (uint32_t p = 0; p < out->n_periods && first_bad == out->n_periods; p++)
            if (out->share[p] < o->goal.confidence && !x.pp->missed[p])
                first_bad = p;
        if (first_bad == out->n_periods || out->confirmations >= max_conf)
            break;
        progress(&x, "the confirmation misses %s %u: searching again from there on its %u replications",
                 period_word(s), first_bad + 1, o->confirm_reps);
        x.first_rep = fresh;
        x.n_reps = o->confirm_reps;
        fresh += o->confirm_reps;
        if ((rc = search_from(&x, first_bad)) != 0)
            goto partial;
        out->alternatives[best].cost_usd = plan_cost(x.pp);
        out->alternatives[best].n_orders = x.pp->n_orders;
        out->alternatives[best].missed = plan_missed(x.pp, out->n_periods);
    }
    if (take_plan(out, x.pp, o->policies[best]) != 0) {
        rc = err_set(err, s->path, 0, 0, "out of memory");
        goto done;
    }
    set_reason(s, out, o);
    rc = 0;
    goto done;
partial:
    if (rc == -1)
        goto done;
    out->partial = 1;
    out->met = 0;
    forecast_result_release(&out->confirm);
    if (take_plan(out, &pps[best], o->policies[best]) != 0 || apply_plan(s, out, &pps[best]) != 0) {
        rc = err_set(err, s->path, 0, 0, "out of memory");
        goto done;
    }
    snprintf(out->reason, sizeof out->reason, "interrupted: the best plan found so far, not confirmed");
done:
    for (size_t i = 0; i < o->n_policies; i++)
        policy_plan_release(&pps[i]);
    free(pps);
    return rc;
}

void plan_result_release(struct plan_result *p)
{
    if (!p)
        return;
    free(p->orders);
    free(p->out_of_reach);
    free(p->why);
    free(p->share);
    free(p->alternatives);
    forecast_result_release(&p->confirm);
    memset(p, 0, sizeof *p);
}
