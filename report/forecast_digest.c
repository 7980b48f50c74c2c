#include "report/forecast_digest.h"

#include <ctype.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/distribution.h"
#include "sim/child.h"
#include "sim/units.h"

static void *xcalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

sim_time forecast_digest_period_start(const struct forecast_digest *d, uint32_t p)
{
    return d->r->start_us + (sim_time)p * d->r->period_us;
}

sim_time forecast_digest_sample_time(const struct forecast_digest *d, uint32_t s)
{
    return d->r->start_us + (sim_time)s * d->r->sample_us;
}

void forecast_digest_period_label(const struct forecast_digest *d, uint32_t p, char *buf, size_t len)
{
    snprintf(buf, len, "%c%u", d->period_letter, p + 1);
}

void forecast_digest_date(const struct forecast_digest *d, sim_time t_us, char *buf, size_t len)
{
    if (!d->has_dates) {
        if (len)
            buf[0] = '\0';
        return;
    }
    int64_t s = d->start_unix_s + (t_us >= 0 ? t_us / SIM_US_PER_S : -((-t_us + SIM_US_PER_S - 1) / SIM_US_PER_S));
    units_format_date(buf, len, s);
}

void forecast_digest_when(const struct forecast_digest *d, sim_time t_us, char *buf, size_t len)
{
    if (d->has_dates)
        forecast_digest_date(d, t_us, buf, len);
    else
        snprintf(buf, len, "day %lld", (long long)(t_us / (86400 * SIM_US_PER_S)));
}

void forecast_digest_format_wait(char *buf, size_t len, double s)
{
    if (!isfinite(s))
        snprintf(buf, len, "n/a");
    else if (s < 120)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.0f min", s / 60);
    else if (s < 48 * 3600)
        snprintf(buf, len, "%.1f h", s / 3600);
    else
        snprintf(buf, len, "%.1f d", s / 86400);
}

/* 12345 -> "12,345" (rounded to an integer). */
static void fmt_count(char *buf, size_t len, double v)
{
    char raw[48];
    snprintf(raw, sizeof raw, "%.0f", fabs(v) < 1e18 ? v : 0);
    if (strcmp(raw, "-0") == 0)
        snprintf(raw, sizeof raw, "0");
    const char *digits = raw[0] == '-' ? raw + 1 : raw;
    size_t nd = strlen(digits), o = 0;
    if (raw[0] == '-' && o + 1 < len)
        buf[o++] = '-';
    for (size_t i = 0; i < nd && o + 1 < len; i++) {
        if (i && (nd - i) % 3 == 0 && o + 1 < len)
            buf[o++] = ',';
        if (o + 1 < len)
            buf[o++] = digits[i];
    }
    buf[o] = '\0';
}

static void fmt_usd(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, "n/a");
    else if (fabs(v) >= 1e9)
        snprintf(buf, len, "$%.2fB", v / 1e9);
    else if (fabs(v) >= 1e6)
        snprintf(buf, len, "$%.2fM", v / 1e6);
    else {
        char c[40];
        fmt_count(c, sizeof c, v);
        snprintf(buf, len, "$%.28s", c);
    }
}

static struct forecast_band band_of_values(double *v, size_t n)
{
    struct forecast_band b = {NAN, NAN, NAN, NAN, NAN, NAN};
    if (!n)
        return b;
    gsl_sort(v, 1, n);
    b.mean = gsl_stats_mean(v, 1, n);
    b.p5 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.05);
    b.p50 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.50);
    b.p95 = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.95);
    return b;
}

static int add_line(struct forecast_digest *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int add_line(struct forecast_digest *d, const char *fmt, ...)
{
    char **nl = realloc(d->lines, (d->n_lines + 1) * sizeof *nl);
    if (!nl)
        return -1;
    d->lines = nl;
    char *s = malloc(DIGEST_TEXT_MAX);
    if (!s)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s, DIGEST_TEXT_MAX, fmt, ap);
    va_end(ap);
    d->lines[d->n_lines++] = s;
    return 0;
}

static int pool_waits(struct forecast_digest *d)
{
    const struct forecast_result *r = d->r;
    for (size_t t = 0; t < d->n_teams; t++) {
        struct team_waits *w = &d->waits[t];
        size_t n = 0;
        for (uint32_t i = 0; i < r->completed; i++)
            if (r->reps[i].team_n_waits)
                n += r->reps[i].team_n_waits[t];
        w->n = n;
        if (!n) {
            w->p50_s = w->p95_s = w->p99_s = w->mean_s = NAN;
            for (size_t k = 0; k < DIGEST_CDF_POINTS; k++)
                w->cdf_s[k] = NAN;
            continue;
        }
        double *all = malloc(n * sizeof *all);
        if (!all)
            return -1;
        size_t o = 0;
        for (uint32_t i = 0; i < r->completed; i++) {
            const struct forecast_replication *rep = &r->reps[i];
            if (!rep->team_n_waits)
                continue;
            memcpy(all + o, rep->team_waits_s + rep->team_offset[t], rep->team_n_waits[t] * sizeof *all);
            o += rep->team_n_waits[t];
        }
        gsl_sort(all, 1, n);
        w->mean_s = gsl_stats_mean(all, 1, n);
        w->p50_s = gsl_stats_quantile_from_sorted_data(all, 1, n, 0.50);
        w->p95_s = gsl_stats_quantile_from_sorted_data(all, 1, n, 0.95);
        w->p99_s = gsl_stats_quantile_from_sorted_data(all, 1, n, 0.99);
        for (size_t k = 0; k < DIGEST_CDF_POINTS; k++)
            w->cdf_s[k] = gsl_stats_quantile_from_sorted_data(all, 1, n, (double)k / (DIGEST_CDF_POINTS - 1));
        free(all);
    }
    return 0;
}

static int add_event(struct forecast_digest *d, const struct timeline_event *e)
{
    struct timeline_event *ne = realloc(d->events, (d->n_events + 1) * sizeof *ne);
    if (!ne)
        return -1;
    d->events = ne;
    d->events[d->n_events++] = *e;
    return 0;
}

static int build_timeline(struct forecast_digest *d)
{
    const struct scenario *sc = d->r->scenario;
    if (sc) {
        const struct procurement_spec *ps = &sc->procurement;
        for (size_t i = 0; i < ps->n_orders; i++) {
            const struct purchase_order *o = &ps->orders[i];
            struct timeline_event e = {.source = TIMELINE_PLACED, .order_us = o->order_us, .count = o->count};
            double lead_s = distribution_mean(&o->lead_time_s) + o->burn_in_s;
            e.ready_us = o->order_us + (sim_time)llround(lead_s * 1e6);
            e.cost_usd = NAN;
            if (o->type >= 0 && (size_t)o->type < sc->catalog.n) {
                const struct node_type *nt = &sc->catalog.types[o->type];
                snprintf(e.node_type, sizeof e.node_type, "%s", nt->name);
                e.gpus = o->count * nt->gpus;
                e.cost_usd = (double)o->count * nt->price_usd;
            }
            if (add_event(d, &e))
                return -1;
        }
        for (size_t i = 0; i < ps->n_retirements; i++) {
            const struct retirement *rt = &ps->retirements[i];
            struct timeline_event e = {.source = TIMELINE_RETIRE, .order_us = rt->at_us, .ready_us = rt->at_us,
                                       .count = rt->count, .cost_usd = NAN};
            if (rt->type >= 0 && (size_t)rt->type < sc->catalog.n) {
                const struct node_type *nt = &sc->catalog.types[rt->type];
                snprintf(e.node_type, sizeof e.node_type, "%s", nt->name);
                e.gpus = -rt->count * nt->gpus;
            }
            if (add_event(d, &e))
                return -1;
        }
    }
    if (d->plan) {
        for (size_t i = 0; i < d->plan->n_orders; i++) {
            const struct plan_order *o = &d->plan->orders[i];
            struct timeline_event e = {.source = TIMELINE_PLAN, .order_us = o->date_us,
                                       .ready_us = o->ready_us >= 0 ? o->ready_us : o->date_us,
                                       .count = o->count, .gpus = o->gpus, .cost_usd = o->cost_usd};
            snprintf(e.node_type, sizeof e.node_type, "%s", o->node_type);
            if (!e.gpus && sc) {
                int k = node_catalog_find(&sc->catalog, o->node_type);
                if (k >= 0)
                    e.gpus = o->count * sc->catalog.types[k].gpus;
            }
            if (add_event(d, &e))
                return -1;
            if (o->end_us > 0 && o->end_us < (sim_time)d->r->n_periods * d->r->period_us) {
                /* a rental's return */
                struct timeline_event back = e;
                back.source = TIMELINE_RETIRE;
                back.order_us = back.ready_us = o->end_us;
                back.gpus = -e.gpus;
                back.cost_usd = NAN;
                if (add_event(d, &back))
                    return -1;
            }
        }
    }
    /* By arrival; ties keep their order (insertion sort is stable). */
    for (size_t i = 1; i < d->n_events; i++) {
        struct timeline_event e = d->events[i];
        size_t j = i;
        while (j > 0 && d->events[j - 1].ready_us > e.ready_us) {
            d->events[j] = d->events[j - 1];
            j--;
        }
        d->events[j] = e;
    }
    return 0;
}

static double slo_metric_value(const struct forecast_digest *d, const struct forecast_period *p)
{
    if (strcmp(d->slo_metric, "p50_wait") == 0)
        return p->wait_p50_s;
    if (strcmp(d->slo_metric, "p99_wait") == 0)
        return p->wait_p99_s;
    return p->wait_p95_s;
}

static const struct forecast_band *pband(const struct forecast_digest *d, uint32_t p, enum forecast_metric m)
{
    return &d->period_bands[(size_t)p * FM_COUNT + m];
}

static int recommend_plan(struct forecast_digest *d)
{
    const struct plan_summary *pl = d->plan;
    char slo[160];
    if (pl->slo && pl->slo[0])
        snprintf(slo, sizeof slo, "'%s'", pl->slo);
    else
        snprintf(slo, sizeof slo, "the SLO");
    if (pl->instead_of && pl->policy) {
        char other[32];
        fmt_usd(other, sizeof other, pl->instead_cost_usd);
        if (add_line(d, "Adopt the policy %s instead of %s: it is the cheaper way to keep %s (%s of orders under %s).",
                     pl->policy, pl->instead_of, slo, other, pl->instead_of))
            return -1;
    }
    if (!pl->met)
        d->alarm = 1;
    if (!pl->n_orders) {
        if (!pl->met)
            return add_line(d, "No plan meets %s%s%s.", slo, pl->reason && pl->reason[0] ? ": " : "",
                            pl->reason ? pl->reason : "");
        return add_line(d, "No purchase is needed: %s holds in every %s with the fleet and the orders already placed%s.",
                        slo, d->r->period_name, pl->instead_of ? " and that policy" : "");
    }
    char text[DIGEST_TEXT_MAX] = "";
    size_t o = 0;
    for (size_t i = 0; i < pl->n_orders && o < sizeof text; i++) {
        const struct plan_order *po = &pl->orders[i];
        char when[32], ready[32], cost[32], n[32];
        forecast_digest_when(d, po->date_us, when, sizeof when);
        forecast_digest_when(d, po->ready_us >= 0 ? po->ready_us : po->date_us, ready, sizeof ready);
        fmt_usd(cost, sizeof cost, po->cost_usd);
        fmt_count(n, sizeof n, (double)po->count);
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%s x %s by %s (in service about %s, %s)",
                              i ? (i + 1 == pl->n_orders ? " and " : ", ") : "", n, po->node_type, when, ready,
                              cost);
    }
    char total[32];
    fmt_usd(total, sizeof total, pl->total_cost_usd);
    if (!pl->met)
        return add_line(d, "No plan meets %s in every %s%s%s. The best one: order %s; %s in all.", slo,
                        d->r->period_name, pl->reason && pl->reason[0] ? ": " : "", pl->reason ? pl->reason : "",
                        text, total);
    return add_line(d, "Order %s; %s in all. With these orders %s holds in every %s.", text, total, slo,
                    d->r->period_name);
}

/* Capacity against the offered load (what the workload asks for), never
 * against the backlog: a queue that grows is the symptom of a shortfall,
 * and counting it as demand would bill the same GPU-hours again every day
 * they wait. */
/* The share of capacity past which the recommendation warns that waits
 * climb steeply (queueing delay grows as 1 / (1 - load)). */
#define TIGHT_LOAD 0.85

/* Whether period p's offered load passes its capacity (both known). */
static int short_of_capacity(const struct forecast_digest *d, uint32_t p)
{
    double load = pband(d, p, FM_OFFERED_LOAD)->mean, cap = pband(d, p, FM_CAPACITY)->mean;
    return isfinite(load) && isfinite(cap) && cap > 0 && load > cap;
}

static int recommend_capacity(struct forecast_digest *d)
{
    uint32_t first = UINT32_MAX, worst = 0, tight = 0;
    double worst_gap = -INFINITY, tight_headroom = INFINITY;
    for (uint32_t p = 0; p < d->n_periods; p++) {
        double load = pband(d, p, FM_OFFERED_LOAD)->mean, cap = pband(d, p, FM_CAPACITY)->mean;
        if (!isfinite(load) || !isfinite(cap) || cap <= 0)
            continue;
        if (short_of_capacity(d, p)) {
            if (first == UINT32_MAX)
                first = p;
            if (load - cap > worst_gap) {
                worst_gap = load - cap;
                worst = p;
            }
        }
        double headroom = (cap - load) / cap;
        if (headroom < tight_headroom) {
            tight_headroom = headroom;
            tight = p;
        }
    }
    char l1[16], l2[16], date[32], a[32], b[32], c[32], e[32];
    if (first != UINT32_MAX) {
        d->alarm = d->plan_helps = 1;
        forecast_digest_period_label(d, first, l1, sizeof l1);
        forecast_digest_when(d, forecast_digest_period_start(d, first), date, sizeof date);
        double load = pband(d, first, FM_OFFERED_LOAD)->mean, cap = pband(d, first, FM_CAPACITY)->mean;
        fmt_count(a, sizeof a, load);
        fmt_count(b, sizeof b, cap);
        fmt_count(c, sizeof c, worst_gap);
        fmt_count(e, sizeof e, pband(d, worst, FM_OFFERED_LOAD)->mean);
        forecast_digest_period_label(d, worst, l2, sizeof l2);
        char q[32], tight_note[160] = "";
        fmt_count(q, sizeof q, pband(d, worst, FM_BACKLOG)->mean);
        /* waits climb steeply well before the load reaches capacity */
        for (uint32_t p = 0; p < first; p++) {
            double lp = pband(d, p, FM_OFFERED_LOAD)->mean, cp = pband(d, p, FM_CAPACITY)->mean;
            if (cp > 0 && lp >= TIGHT_LOAD * cp) {
                char lt[16];
                forecast_digest_period_label(d, p, lt, sizeof lt);
                snprintf(tight_note, sizeof tight_note, " Already in %s the load is %.0f%% of capacity, where waits "
                                                        "climb steeply.",
                         lt, 100 * lp / cp);
                break;
            }
        }
        return add_line(d,
                        "The offered load outgrows capacity from %s (starting %s): %s GPUs of work submitted per "
                        "hour against %s GPUs present (%.0f%% short); the largest gap is %s GPUs, in %s (%s GPUs "
                        "offered). Queues grow without bound where the load passes capacity: the backlog reaches "
                        "%s GPUs queued in %s, which is the queue, not demand.%s",
                        l1, date, a, b, 100.0 * (load - cap) / cap, c, l2, e, q, l2, tight_note);
    }
    if (!isfinite(tight_headroom))
        return 0;
    forecast_digest_period_label(d, tight, l1, sizeof l1);
    fmt_count(a, sizeof a, pband(d, tight, FM_OFFERED_LOAD)->mean);
    fmt_count(b, sizeof b, pband(d, tight, FM_CAPACITY)->mean);
    fmt_count(c, sizeof c, pband(d, tight, FM_OFFERED_PEAK)->mean);
    return add_line(d,
                    "Capacity covers the offered load in every %s; the tightest is %s, with %.0f%% headroom "
                    "(%s GPUs offered on average, %s at the peak, of %s GPUs).",
                    d->r->period_name, l1, 100.0 * tight_headroom, a, c, b);
}

static int recommend_slo(struct forecast_digest *d)
{
    char thr[32];
    forecast_digest_format_wait(thr, sizeof thr, d->slo_threshold_s);
    char met[DIGEST_TEXT_MAX / 2] = "", missed[DIGEST_TEXT_MAX / 2] = "";
    size_t om = 0, ox = 0;
    for (uint32_t p = 0; p < d->n_periods; p++) {
        char l[16];
        forecast_digest_period_label(d, p, l, sizeof l);
        if (d->slo_share[p] >= d->slo_confidence) {
            if (om < sizeof met)
                om += (size_t)snprintf(met + om, sizeof met - om, "%s%s", om ? ", " : "", l);
        } else if (ox < sizeof missed) {
            ox += (size_t)snprintf(missed + ox, sizeof missed - ox, "%s%s (met in %.0f%% of replications)", ox ? ", " : "",
                                   l, 100.0 * d->slo_share[p]);
        }
    }
    char what[256];
    if (d->plan && d->plan->period_share && d->plan->slo)
        snprintf(what, sizeof what, "'%s'", d->plan->slo);
    else
        snprintf(what, sizeof what, "%s <= %s", d->slo_metric, thr);
    if (!ox)
        return add_line(d, "SLO %s is met in every %s in at least %.0f%% of replications.", what, d->r->period_name,
                        100.0 * d->slo_confidence);
    d->alarm = d->plan_helps = 1;
    return add_line(d, "SLO %s (confidence %.0f%%) is missed in %s%s%s.", what, 100.0 * d->slo_confidence, missed,
                    om ? "; met in " : "", met);
}

static int recommend_waits_and_use(struct forecast_digest *d)
{
    uint32_t pw = 0, pu = 0;
    for (uint32_t p = 1; p < d->n_periods; p++) {
        if (pband(d, p, FM_WAIT_P95)->mean > pband(d, pw, FM_WAIT_P95)->mean)
            pw = p;
        if (pband(d, p, FM_UTILIZATION)->mean > pband(d, pu, FM_UTILIZATION)->mean)
            pu = p;
    }
    if (!d->n_periods)
        return 0;
    char lw[16], lu[16], w[32], w5[32], w95[32];
    forecast_digest_period_label(d, pw, lw, sizeof lw);
    forecast_digest_period_label(d, pu, lu, sizeof lu);
    const struct forecast_band *bw = pband(d, pw, FM_WAIT_P95), *bu = pband(d, pu, FM_UTILIZATION);
    forecast_digest_format_wait(w, sizeof w, bw->mean);
    forecast_digest_format_wait(w5, sizeof w5, bw->p5);
    forecast_digest_format_wait(w95, sizeof w95, bw->p95);
    return add_line(d,
                    "The p95 queue wait is worst in %s: %s on average (p5-p95 across replications: %s to %s). "
                    "Utilization peaks in %s at %.0f%% (p5-p95: %.0f%% to %.0f%%).",
                    lw, w, w5, w95, lu, 100.0 * bu->mean, 100.0 * bu->p5, 100.0 * bu->p95);
}

/* The next step where a plan would help and none was made: the command that
 * sizes the orders, for this scenario, with an SLO when it names none. It
 * depends on the scenario and on whether a --policy was given, never on how
 * the forecast ran or how the policy was spelt, so --slurm and -j print the
 * same bytes (a --policy is pointed to, not copied). 0, or -1 when out of
 * memory. */
static int next_step(struct forecast_digest *d)
{
    const struct scenario *s = d->r->scenario;
    char *path = child_shell_word(s && s->path ? s->path : "SCENARIO");
    if (!path)
        return -1;
    size_t named = !s ? 0 : s->plan.n_slos ? s->plan.n_slos : (size_t)(s->plan.has_slo != 0); /* plan.slo is one */
    const char *goal = named == 1 ? "the scenario's SLO" : named ? "the scenario's SLOs" : "that SLO";
    const char *slo = named ? "" : " --slo 'p95_wait <= 2h'";
    int policy = d->r->policy_override != NULL;
    const char *note = !named && policy ? " (the scenario names none: put yours; and give it this forecast's --policy)"
                       : !named         ? " (the scenario names none: put yours)"
                       : policy         ? " (give it this forecast's --policy)"
                                        : "";
    size_t len = strlen(path) + strlen(slo) + strlen(goal) + strlen(note) + 64;
    d->next = malloc(len);
    if (d->next)
        snprintf(d->next, len, "fleetsim plan %s%s finds the cheapest orders that meet %s%s.", path, slo, goal, note);
    free(path);
    return d->next ? 0 : -1;
}

static int recommend(struct forecast_digest *d)
{
    const struct forecast_result *r = d->r;
    if (r->partial || r->completed < r->replications)
        if (add_line(d, "Partial results: %u of %u replications finished, so the bands are rougher than asked for.",
                     r->completed, r->replications))
            return -1;
    if (d->plan && recommend_plan(d))
        return -1;
    double too_big = 0;
    for (uint32_t p = 0; p < d->n_periods; p++)
        too_big += pband(d, p, FM_JOBS_TOO_BIG)->mean;
    if (too_big > 0) {
        d->alarm = 1;
        if (add_line(d, "About %.0f jobs per replication ask for more GPUs than the whole cluster has: they never "
                        "start and are left out of the waits and the utilization.",
                     too_big))
            return -1;
    }
    if (r->last_period_partial && d->n_periods) {
        char l[16], len[32];
        forecast_digest_period_label(d, d->n_periods - 1, l, sizeof l);
        forecast_digest_format_wait(len, sizeof len, (double)forecast_period_length_us(r, d->n_periods - 1) / 1e6);
        if (add_line(d, "%s is partial: the horizon ends %s into it, so its capacity and load are averaged over "
                        "that part only and its waits cover fewer jobs.",
                     l, len))
            return -1;
    }
    /* The earlier alarm leads: an SLO missed periods before the load passes
     * capacity, told second, would read as a cluster that holds until then. */
    uint32_t short_from = 0, missed_from = 0;
    while (short_from < d->n_periods && !short_of_capacity(d, short_from))
        short_from++;
    while (d->has_slo && missed_from < d->n_periods && d->slo_share[missed_from] >= d->slo_confidence)
        missed_from++;
    int slo_first = d->has_slo && missed_from < short_from;
    if (slo_first && recommend_slo(d))
        return -1;
    if (recommend_capacity(d))
        return -1;
    if (!slo_first && d->has_slo && recommend_slo(d))
        return -1;
    if (recommend_waits_and_use(d))
        return -1;
    return d->plan_helps && !d->plan ? next_step(d) : 0;
}

int forecast_digest_init(struct forecast_digest *d, const struct forecast_result *r,
                         const struct plan_summary *plan, struct err *err)
{
    memset(d, 0, sizeof *d);
    d->r = r;
    d->plan = plan;
    d->n_periods = r->n_periods;
    d->n_samples = r->n_samples;
    d->n_teams = r->n_teams;
    d->period_letter = r->period_name[0] ? (char)toupper((unsigned char)r->period_name[0]) : 'P';
    const struct scenario *sc = r->scenario;
    if (sc) {
        d->seed = sc->seed;
        d->has_seed = 1;
        d->has_dates = sc->start_unix_s != 0;
        d->start_unix_s = sc->start_unix_s;
        if (sc->path) {
            const char *base = strrchr(sc->path, '/');
            snprintf(d->scenario_name, sizeof d->scenario_name, "%s", base ? base + 1 : sc->path);
        }
        if (sc->plan.has_slo) {
            d->has_slo = 1;
            snprintf(d->slo_metric, sizeof d->slo_metric, "%s", sc->plan.slo_metric);
            d->slo_threshold_s = sc->plan.slo_threshold_s;
            d->slo_confidence = sc->plan.confidence;
        }
        d->initial_gpus = scenario_initial_gpus(sc);
    }
    if (plan && plan->period_share) {
        d->has_slo = 1;
        d->slo_confidence = plan->confidence;
    }
    d->period_bands = xcalloc((size_t)d->n_periods * FM_COUNT, sizeof *d->period_bands);
    d->team_bands = xcalloc((size_t)d->n_periods * d->n_teams, sizeof *d->team_bands);
    d->team_total = xcalloc(d->n_teams, sizeof *d->team_total);
    d->sample_bands = xcalloc((size_t)d->n_samples * SAMPLE_FIELDS, sizeof *d->sample_bands);
    d->waits = xcalloc(d->n_teams, sizeof *d->waits);
    d->slo_share = xcalloc(d->n_periods, sizeof *d->slo_share);
    double *vals = xcalloc(r->completed, sizeof *vals);
    if (!d->period_bands || !d->team_bands || !d->team_total || !d->sample_bands || !d->waits || !d->slo_share ||
        !vals)
        goto oom;
    for (uint32_t p = 0; p < d->n_periods; p++) {
        for (int m = 0; m < FM_COUNT; m++)
            d->period_bands[(size_t)p * FM_COUNT + m] = forecast_band_of(r, p, (enum forecast_metric)m);
        for (size_t t = 0; t < d->n_teams; t++)
            d->team_bands[(size_t)p * d->n_teams + t] = forecast_band_team(r, p, t);
        if (d->plan && d->plan->period_share) {
            /* a plan's goal (every SLO it was given) decides, as in its verdict */
            d->slo_share[p] = d->plan->period_share[p];
        } else if (d->has_slo && r->completed) {
            uint32_t ok = 0;
            for (uint32_t i = 0; i < r->completed; i++) {
                double v = slo_metric_value(d, &r->reps[i].periods[p]);
                ok += !(v > d->slo_threshold_s); /* no jobs (NaN) waited too long */
            }
            d->slo_share[p] = (double)ok / r->completed;
        }
    }
    for (uint32_t s = 0; s < d->n_samples; s++)
        for (size_t f = 0; f < SAMPLE_FIELDS; f++)
            d->sample_bands[(size_t)s * SAMPLE_FIELDS + f] = forecast_band_sample(r, s, f);
    for (size_t t = 0; t < d->n_teams; t++) {
        for (uint32_t i = 0; i < r->completed; i++) {
            double sum = 0;
            for (uint32_t p = 0; p < d->n_periods; p++)
                sum += r->reps[i].periods[p].team_gpu_hours ? r->reps[i].periods[p].team_gpu_hours[t] : 0;
            vals[i] = sum;
        }
        d->team_total[t] = band_of_values(vals, r->completed);
    }
    free(vals);
    vals = NULL;
    if (!sc && d->n_samples)
        d->initial_gpus = (int64_t)llround(d->sample_bands[SAMPLE_CAPACITY].mean);
    if (pool_waits(d) || build_timeline(d) || recommend(d))
        goto oom;
    return 0;
oom:
    free(vals);
    forecast_digest_release(d);
    return err_set(err, NULL, 0, 0, "out of memory");
}

void forecast_digest_release(struct forecast_digest *d)
{
    free(d->period_bands);
    free(d->team_bands);
    free(d->team_total);
    free(d->sample_bands);
    free(d->waits);
    free(d->slo_share);
    free(d->events);
    for (size_t i = 0; i < d->n_lines; i++)
        free(d->lines[i]);
    free(d->lines);
    free(d->next);
    memset(d, 0, sizeof *d);
}
