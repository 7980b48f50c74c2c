#include "report/forecast_data.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/csv.h"
#include "report/json_doc.h"
#include "sim/atomic_file.h"
#include "sim/units.h"

#ifndef FLEETSIM_VERSION_STRING
#define FLEETSIM_VERSION_STRING "unknown"
#endif

static const char *const sample_field_names[SAMPLE_FIELDS] = {"capacity_gpus", "in_use_gpus", "backlog_gpus",
                                                              "queue_jobs", "offered_gpus"};

static int open_in(struct atomic_file *f, const char *dir, const char *name, struct err *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path)
        return err_set(err, dir, 0, 0, "path too long");
    return atomic_file_open(f, path, err);
}

static void write_band_csv(FILE *fp, const struct forecast_band *b)
{
    csv_write_number(fp, b->mean);
    fputc(',', fp);
    csv_write_number(fp, b->p5);
    fputc(',', fp);
    csv_write_number(fp, b->p50);
    fputc(',', fp);
    csv_write_number(fp, b->p95);
}

static void write_period_key(FILE *fp, const struct forecast_digest *d, uint32_t p)
{
    char label[16], secs[32], date[32];
    forecast_digest_period_label(d, p, label, sizeof label);
    units_format_seconds(secs, sizeof secs, forecast_digest_period_start(d, p));
    forecast_digest_date(d, forecast_digest_period_start(d, p), date, sizeof date);
    fprintf(fp, "%u,%s,%s,%s", p + 1, label, secs, date);
}

static int write_periods_csv(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct atomic_file f;
    if (open_in(&f, dir, "periods.csv", err))
        return -1;
    fputs("period,period_label,period_start_s,period_start_date,metric,mean,p5,p50,p95\n", f.fp);
    for (uint32_t p = 0; p < d->n_periods; p++)
        for (int m = 0; m < FM_COUNT; m++) {
            write_period_key(f.fp, d, p);
            fputc(',', f.fp);
            csv_write_field(f.fp, forecast_metric_name((enum forecast_metric)m));
            fputc(',', f.fp);
            write_band_csv(f.fp, &d->period_bands[(size_t)p * FM_COUNT + m]);
            fputc('\n', f.fp);
        }
    return atomic_file_commit(&f, err);
}

static int write_samples_csv(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct atomic_file f;
    if (open_in(&f, dir, "samples.csv", err))
        return -1;
    fputs("time_s,date", f.fp);
    for (size_t k = 0; k < SAMPLE_FIELDS; k++)
        fprintf(f.fp, ",%s_mean,%s_p5,%s_p50,%s_p95", sample_field_names[k], sample_field_names[k],
                sample_field_names[k], sample_field_names[k]);
    fputc('\n', f.fp);
    for (uint32_t s = 0; s < d->n_samples; s++) {
        char secs[32], date[32];
        sim_time t = forecast_digest_sample_time(d, s);
        units_format_seconds(secs, sizeof secs, t);
        forecast_digest_date(d, t, date, sizeof date);
        fprintf(f.fp, "%s,%s", secs, date);
        for (size_t k = 0; k < SAMPLE_FIELDS; k++) {
            fputc(',', f.fp);
            write_band_csv(f.fp, &d->sample_bands[(size_t)s * SAMPLE_FIELDS + k]);
        }
        fputc('\n', f.fp);
    }
    return atomic_file_commit(&f, err);
}

static int write_teams_csv(const char *dir, const struct forecast_digest *d, struct err *err)
{
    struct atomic_file f;
    if (open_in(&f, dir, "teams.csv", err))
        return -1;
    fputs("team,period,period_label,period_start_s,period_start_date,gpu_hours_mean,gpu_hours_p5,gpu_hours_p50,"
          "gpu_hours_p95\n",
          f.fp);
    for (size_t t = 0; t < d->n_teams; t++)
        for (uint32_t p = 0; p < d->n_periods; p++) {
            csv_write_field(f.fp, d->r->team_names[t]);
            fputc(',', f.fp);
            write_period_key(f.fp, d, p);
            fputc(',', f.fp);
            write_band_csv(f.fp, &d->team_bands[(size_t)p * d->n_teams + t]);
            fputc('\n', f.fp);
        }
    return atomic_file_commit(&f, err);
}

/* JSON builders: a NULL from jansson (out of memory) sticks in *ok. */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v == 0 ? 0.0 : v) : json_null();
}

static json_t *seconds(sim_time us)
{
    if (us % SIM_US_PER_S == 0)
        return json_integer((json_int_t)(us / SIM_US_PER_S));
    return json_real((double)us / 1e6);
}

static json_t *str_or_null(const char *s)
{
    return s && s[0] ? json_string(s) : json_null();
}

static json_t *date_or_null(const struct forecast_digest *d, sim_time us)
{
    char date[32];
    forecast_digest_date(d, us, date, sizeof date);
    return str_or_null(date);
}

static json_t *band(const struct forecast_band *b)
{
    return json_pack("{s:o,s:o,s:o,s:o}", "mean", num(b->mean), "p5", num(b->p5), "p50", num(b->p50), "p95",
                     num(b->p95));
}

int forecast_data_recommendation(json_t *root, const struct forecast_digest *d)
{
    int ok = 1;
    json_t *rec = json_array();
    for (size_t i = 0; i < d->n_lines; i++)
        json_push(rec, json_string(d->lines[i]), &ok);
    json_put(root, "recommendation", rec, &ok);
    json_put(root, "action_needed", json_boolean(d->alarm), &ok);
    if (d->next)
        json_put(root, "next", json_string(d->next), &ok);
    return ok ? 0 : -1;
}

static const char *source_name(enum timeline_source s)
{
    return s == TIMELINE_PLAN ? "plan" : s == TIMELINE_RETIRE ? "retirement" : "placed";
}

static json_t *build_json(const struct forecast_digest *d, int *ok)
{
    const struct forecast_result *r = d->r;
    json_t *root = json_object();
    json_t *meta = json_object();
    json_put(meta, "version", json_string(FLEETSIM_VERSION_STRING), ok);
    json_put(meta, "kind", json_string("forecast"), ok);
    json_put(meta, "format", json_integer(1), ok);
    json_put(root, "meta", meta, ok);

    json_t *sc = json_object();
    json_put(sc, "name", str_or_null(d->scenario_name), ok);
    if (d->has_seed && d->seed <= (uint64_t)INT64_MAX)
        json_put(sc, "seed", json_integer((json_int_t)d->seed), ok);
    else if (d->has_seed) {
        char s[32];
        snprintf(s, sizeof s, "%llu", (unsigned long long)d->seed);
        json_put(sc, "seed", json_string(s), ok);
    } else
        json_put(sc, "seed", json_null(), ok);
    json_put(sc, "start_date", date_or_null(d, 0), ok);
    json_put(root, "scenario", sc, ok);

    json_put(root, "replications",
        json_pack("{s:I,s:I,s:b}", "requested", (json_int_t)r->replications, "completed", (json_int_t)r->completed,
                  "partial", r->partial || r->completed < r->replications),
        ok);
    json_t *hz = json_object();
    json_put(hz, "period", json_string(r->period_name), ok);
    json_put(hz, "period_s", seconds(r->period_us), ok);
    json_put(hz, "periods", json_integer(d->n_periods), ok);
    json_put(hz, "sample_s", seconds(r->sample_us), ok);
    json_put(hz, "samples", json_integer(d->n_samples), ok);
    json_put(hz, "start_s", seconds(r->start_us), ok);
    json_put(hz, "length_s", r->horizon_us > 0 ? seconds(r->horizon_us) : json_null(), ok);
    json_put(hz, "last_period_partial", json_boolean(r->last_period_partial), ok);
    json_put(root, "horizon", hz, ok);

    if (forecast_data_recommendation(root, d) != 0)
        *ok = 0;

    if (d->plan && d->plan->period_share && d->plan->slo)
        /* a plan's goal: all its SLOs, as written */
        json_put(root, "slo", json_pack("{s:s,s:o}", "goal", d->plan->slo, "confidence", num(d->slo_confidence)), ok);
    else if (d->has_slo)
        json_put(root, "slo",
            json_pack("{s:s,s:o,s:o}", "metric", d->slo_metric, "threshold_s", num(d->slo_threshold_s), "confidence",
                      num(d->slo_confidence)),
            ok);
    else
        json_put(root, "slo", json_null(), ok);

    json_t *periods = json_array();
    for (uint32_t p = 0; p < d->n_periods; p++) {
        json_t *po = json_object();
        char label[16];
        forecast_digest_period_label(d, p, label, sizeof label);
        sim_time t = forecast_digest_period_start(d, p);
        json_put(po, "index", json_integer(p + 1), ok);
        json_put(po, "label", json_string(label), ok);
        json_put(po, "start_s", seconds(t), ok);
        json_put(po, "start_date", date_or_null(d, t), ok);
        json_put(po, "length_s", seconds(forecast_period_length_us(r, p)), ok);
        json_put(po, "partial", json_boolean(r->last_period_partial && p + 1 == d->n_periods), ok);
        json_t *metrics = json_object();
        for (int m = 0; m < FM_COUNT; m++)
            json_put(metrics, forecast_metric_name((enum forecast_metric)m),
                band(&d->period_bands[(size_t)p * FM_COUNT + m]), ok);
        json_put(po, "metrics", metrics, ok);
        json_t *teams = json_array();
        for (size_t t2 = 0; t2 < d->n_teams; t2++) {
            json_t *tb = band(&d->team_bands[(size_t)p * d->n_teams + t2]);
            json_put(tb, "team", json_string(r->team_names[t2]), ok);
            json_push(teams, tb, ok);
        }
        json_put(po, "team_gpu_hours", teams, ok);
        if (d->has_slo)
            json_put(po, "slo_share", num(d->slo_share[p]), ok);
        json_push(periods, po, ok);
    }
    json_put(root, "periods", periods, ok);

    json_t *teams = json_array();
    for (size_t t = 0; t < d->n_teams; t++) {
        const struct team_waits *w = &d->waits[t];
        json_t *to = json_object();
        json_put(to, "name", json_string(r->team_names[t]), ok);
        json_put(to, "gpu_hours", band(&d->team_total[t]), ok);
        json_put(to, "waits",
            json_pack("{s:I,s:o,s:o,s:o,s:o}", "jobs", (json_int_t)w->n, "mean_s", num(w->mean_s), "p50_s",
                      num(w->p50_s), "p95_s", num(w->p95_s), "p99_s", num(w->p99_s)),
            ok);
        json_push(teams, to, ok);
    }
    json_put(root, "teams", teams, ok);

    json_t *cap = json_object();
    json_put(cap, "initial_gpus", json_integer(d->initial_gpus), ok);
    json_t *events = json_array();
    for (size_t i = 0; i < d->n_events; i++) {
        const struct timeline_event *e = &d->events[i];
        json_t *eo = json_object();
        json_put(eo, "source", json_string(source_name(e->source)), ok);
        json_put(eo, "node_type", json_string(e->node_type), ok);
        json_put(eo, "count", json_integer(e->count), ok);
        json_put(eo, "gpus", json_integer(e->gpus), ok);
        json_put(eo, "order_s", seconds(e->order_us), ok);
        json_put(eo, "order_date", date_or_null(d, e->order_us), ok);
        json_put(eo, "ready_s", seconds(e->ready_us), ok);
        json_put(eo, "ready_date", date_or_null(d, e->ready_us), ok);
        json_put(eo, "cost_usd", num(e->cost_usd), ok);
        json_push(events, eo, ok);
    }
    json_put(cap, "events", events, ok);
    json_put(root, "capacity", cap, ok);

    if (d->plan) {
        const struct plan_summary *pl = d->plan;
        json_t *plo = json_object();
        json_put(plo, "met", json_boolean(pl->met), ok);
        json_put(plo, "slo", str_or_null(pl->slo), ok);
        json_put(plo, "reason", str_or_null(pl->reason), ok);
        json_put(plo, "total_cost_usd", num(pl->total_cost_usd), ok);
        json_t *orders = json_array();
        for (size_t i = 0; i < pl->n_orders; i++) {
            const struct plan_order *o = &pl->orders[i];
            json_t *oo = json_object();
            json_put(oo, "node_type", json_string(o->node_type), ok);
            json_put(oo, "count", json_integer(o->count), ok);
            json_put(oo, "cost_usd", num(o->cost_usd), ok);
            json_put(oo, "date_s", seconds(o->date_us), ok);
            json_put(oo, "date", date_or_null(d, o->date_us), ok);
            json_put(oo, "ready_s", o->ready_us >= 0 ? seconds(o->ready_us) : json_null(), ok);
            json_put(oo, "ready_date", o->ready_us >= 0 ? date_or_null(d, o->ready_us) : json_null(), ok);
            json_push(orders, oo, ok);
        }
        json_put(plo, "orders", orders, ok);
        /* when the last order is in service: the plan is complete then */
        sim_time ready = -1;
        for (size_t i = 0; i < pl->n_orders; i++) {
            sim_time at = pl->orders[i].ready_us >= 0 ? pl->orders[i].ready_us : pl->orders[i].date_us;
            if (at > ready)
                ready = at;
        }
        json_put(plo, "ready_s", ready >= 0 ? seconds(ready) : json_null(), ok);
        json_put(plo, "ready_date", ready >= 0 ? date_or_null(d, ready) : json_null(), ok);
        json_put(plo, "policy", str_or_null(pl->policy), ok);
        json_put(plo, "instead_of", str_or_null(pl->instead_of), ok);
        json_put(root, "plan", plo, ok);
    } else {
        json_put(root, "plan", json_null(), ok);
    }
    return root;
}

static int write_json(const char *dir, const struct forecast_digest *d, struct err *err)
{
    int ok = 1;
    json_t *root = build_json(d, &ok);
    if (!ok || !root) {
        json_decref(root);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    struct atomic_file f;
    if (open_in(&f, dir, "summary.json", err)) {
        json_decref(root);
        return -1;
    }
    int rc = json_doc_write(f.fp, root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10), f.path, err);
    json_decref(root);
    if (rc != 0) {
        atomic_file_abort(&f);
        return -1;
    }
    return atomic_file_commit(&f, err);
}

int forecast_data_write(const char *dir, const struct forecast_digest *d, struct err *err)
{
    if (write_periods_csv(dir, d, err) || write_samples_csv(dir, d, err) || write_teams_csv(dir, d, err) ||
        write_json(dir, d, err))
        return -1;
    return 0;
}
