#include "report/forecast_html.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/html.h"
#include "sim/atomic_file.h"
#include "sim/units.h"

#ifndef FLEETSIM_VERSION_STRING
#define FLEETSIM_VERSION_STRING "unknown"
#endif

enum cell_kind { CELL_PCT, CELL_WAIT, CELL_COUNT, CELL_FIXED1 };

static void fmt_value(char *buf, size_t len, double v, enum cell_kind k)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "n/a");
        return;
    }
    switch (k) {
    case CELL_PCT: snprintf(buf, len, "%.1f%%", 100 * v + 0.0); break;
    case CELL_WAIT: forecast_digest_format_wait(buf, len, v); break;
    case CELL_COUNT: snprintf(buf, len, "%.0f", v + 0.0); break;
    case CELL_FIXED1: snprintf(buf, len, "%.1f", v + 0.0); break;
    }
    if (strcmp(buf, "-0") == 0 || strcmp(buf, "-0.0") == 0)
        memmove(buf, buf + 1, strlen(buf));
}

static void band_cell(FILE *fp, const struct forecast_band *b, enum cell_kind k)
{
    char m[32], lo[32], hi[32];
    fmt_value(m, sizeof m, b->mean, k);
    fmt_value(lo, sizeof lo, b->p5, k);
    fmt_value(hi, sizeof hi, b->p95, k);
    fprintf(fp, "<td>%s<span class=\"band\">%s &ndash; %s</span></td>", m, lo, hi);
}

static void text_cell(FILE *fp, const char *tag, const char *cls, const char *s)
{
    fprintf(fp, "<%s%s%s%s>", tag, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    html_write_text(fp, s);
    fprintf(fp, "</%s>", tag);
}

static void write_header(FILE *fp, const struct forecast_digest *d)
{
    const struct forecast_result *r = d->r;
    fputs(d->plan ? "<header>\n<h1>Capacity plan" : "<header>\n<h1>Capacity forecast", fp);
    if (d->scenario_name[0]) {
        fputs(": ", fp);
        html_write_text(fp, d->scenario_name);
    }
    fputs("</h1>\n<p class=\"sub\">", fp);
    char start[32], plen[32];
    forecast_digest_when(d, r->start_us, start, sizeof start);
    units_format_duration(plen, sizeof plen, (double)r->period_us / 1e6);
    fprintf(fp, "%u %s%s of %s from ", d->n_periods, r->period_name, d->n_periods == 1 ? "" : "s", plen);
    html_write_text(fp, start);
    fprintf(fp, " &middot; %u of %u replications", r->completed, r->replications);
    if (d->has_seed)
        fprintf(fp, " &middot; seed %llu", (unsigned long long)d->seed);
    fputs(" &middot; fleetsim ", fp);
    html_write_text(fp, FLEETSIM_VERSION_STRING);
    if (r->partial || r->completed < r->replications)
        fputs(" &middot; <strong>partial</strong>", fp);
    fputs("</p>\n</header>\n", fp);
}

static void write_recommendation(FILE *fp, const struct forecast_digest *d, const struct report_status *st)
{
    fprintf(fp, "<section id=\"recommendation\" class=\"recommendation%s\">\n<h2>Recommendation</h2>\n",
            d->alarm ? " bad" : "");
    for (size_t i = 0; i < d->n_lines; i++) {
        fputs("<p>", fp);
        html_write_text(fp, d->lines[i]);
        fputs("</p>\n", fp);
    }
    if (d->next) {
        fputs("<p class=\"next\" id=\"next\">Next: ", fp);
        html_write_text(fp, d->next);
        fputs("</p>\n", fp);
    }
    fputs("</section>\n", fp);
    if (st->gnuplot_missing)
        fputs("<p class=\"note\" id=\"charts-missing\">gnuplot was not found, so this report has no charts. "
              "The tables below hold the numbers; each chart's script and data are in this folder "
              "(install gnuplot and run <code>gnuplot -d NAME.gp</code> here to draw them).</p>\n",
              fp);
    else if (st->charts_failed)
        fprintf(fp, "<p class=\"note\" id=\"charts-failed\">%d chart%s could not be drawn; see the notes at the "
                    "end.</p>\n",
                st->charts_failed, st->charts_failed == 1 ? "" : "s");
}

static const struct {
    enum forecast_metric m;
    const char *head;
    enum cell_kind kind;
} summary_cols[] = {
    {FM_UTILIZATION, "utilization", CELL_PCT},      {FM_WAIT_P50, "wait p50", CELL_WAIT},
    {FM_WAIT_P95, "wait p95", CELL_WAIT},           {FM_WAIT_P99, "wait p99", CELL_WAIT},
    {FM_OFFERED_LOAD, "offered load (GPUs)", CELL_COUNT}, {FM_OFFERED_PEAK, "offered peak (GPUs)", CELL_COUNT},
    {FM_BACKLOG, "backlog (GPUs queued)", CELL_COUNT},   {FM_CAPACITY, "capacity (GPUs)", CELL_COUNT},
    {FM_LOST_GPU_HOURS, "lost GPU-hours", CELL_COUNT},  {FM_FAILURES, "failures", CELL_FIXED1},
    {FM_JOBS_SUBMITTED, "jobs submitted", CELL_COUNT},
};

static void period_head_cell(FILE *fp, const struct forecast_digest *d, uint32_t p)
{
    char label[16], date[32];
    forecast_digest_period_label(d, p, label, sizeof label);
    forecast_digest_date(d, forecast_digest_period_start(d, p), date, sizeof date);
    int cut = d->r->last_period_partial && p + 1 == d->n_periods;
    fprintf(fp, "<th class=\"l\">%s%s", label, cut ? " <span class=\"partial\">(partial)</span>" : "");
    if (date[0])
        fprintf(fp, "<span class=\"band\">from %s</span>", date);
    fputs("</th>", fp);
}

static void write_summary_table(FILE *fp, const struct forecast_digest *d)
{
    fprintf(fp, "<section id=\"summary\">\n<h2>Per %s</h2>\n", d->r->period_name);
    fputs("<p>Each cell: the mean across replications, and below it the 5th to 95th percentile. The offered load "
          "is the GPU-hours submitted per hour (reference-GPU equivalents), its peak what the jobs would hold at "
          "once with unlimited capacity; the backlog is the most GPUs queued at once.</p>\n"
          "<table>\n<thead><tr><th class=\"l\">period</th>",
          fp);
    for (size_t c = 0; c < sizeof summary_cols / sizeof *summary_cols; c++)
        fprintf(fp, "<th>%s</th>", summary_cols[c].head);
    if (d->has_slo)
        fputs("<th>SLO met in</th>", fp);
    fputs("</tr></thead>\n<tbody>\n", fp);
    for (uint32_t p = 0; p < d->n_periods; p++) {
        fputs("<tr>", fp);
        period_head_cell(fp, d, p);
        for (size_t c = 0; c < sizeof summary_cols / sizeof *summary_cols; c++)
            band_cell(fp, &d->period_bands[(size_t)p * FM_COUNT + summary_cols[c].m], summary_cols[c].kind);
        if (d->has_slo)
            fprintf(fp, "<td>%.0f%% of replications</td>", 100 * d->slo_share[p]);
        fputs("</tr>\n", fp);
    }
    fputs("</tbody>\n</table>\n</section>\n", fp);
}

static int write_charts(FILE *fp, const char *dir, const struct forecast_chart *const *charts, const int *drawn,
                        size_t n, struct err *err)
{
    fputs("<section id=\"charts\">\n<h2>Charts</h2>\n", fp);
    for (size_t i = 0; i < n; i++) {
        const struct forecast_chart *c = charts[i];
        fprintf(fp, "<figure id=\"chart-%s\" class=\"chart\">\n", c->name);
        if (drawn[i]) {
            char path[4096];
            if ((size_t)snprintf(path, sizeof path, "%s/%s.svg", dir, c->name) >= sizeof path)
                return err_set(err, dir, 0, 0, "path too long");
            if (html_inline_svg(fp, path, err))
                return -1;
        } else {
            fprintf(fp, "<p class=\"note\">Not drawn: the script is <code>%s.gp</code>, its data <code>%s.dat</code>."
                        "</p>\n",
                    c->name, c->name);
        }
        fputs("<figcaption><strong>", fp);
        html_write_text(fp, c->title);
        fputs(".</strong> ", fp);
        html_write_text(fp, c->caption);
        fprintf(fp, " (<code>%s.gp</code>, <code>%s.dat</code>)</figcaption>\n</figure>\n", c->name, c->name);
    }
    if (!n)
        fputs("<p>No chart applies: the forecast has no periods and no samples.</p>\n", fp);
    fputs("</section>\n", fp);
    return 0;
}

static void write_plan(FILE *fp, const struct forecast_digest *d)
{
    const struct plan_summary *pl = d->plan;
    if (!pl && !d->n_events)
        return;
    fputs("<section id=\"plan\">\n<h2>Capacity plan</h2>\n", fp);
    if (pl) {
        fputs("<p>", fp);
        if (pl->slo) {
            fputs("SLO <code>", fp);
            html_write_text(fp, pl->slo);
            fputs("</code>: ", fp);
        }
        char cost[64];
        snprintf(cost, sizeof cost, "%.2f", pl->total_cost_usd + 0.0);
        fprintf(fp, "%s", pl->met ? "<strong>met</strong>" : "<strong>not met</strong>");
        if (!pl->met && pl->reason) {
            fputs(" &mdash; ", fp);
            html_write_text(fp, pl->reason);
        }
        fprintf(fp, ". %zu order%s, total cost $%s.</p>\n", pl->n_orders, pl->n_orders == 1 ? "" : "s", cost);
    }
    if (d->n_events) {
        fputs("<table id=\"timeline\">\n<thead><tr><th class=\"l\">what</th><th class=\"l\">ordered</th>"
              "<th class=\"l\">in service (expected)</th><th class=\"l\">node type</th><th>nodes</th><th>GPUs</th>"
              "<th>cost (USD)</th></tr></thead>\n<tbody>\n",
              fp);
        int64_t gpus = d->initial_gpus;
        for (size_t i = 0; i < d->n_events; i++) {
            const struct timeline_event *e = &d->events[i];
            char a[32], b[32], cost[48];
            forecast_digest_when(d, e->order_us, a, sizeof a);
            forecast_digest_when(d, e->ready_us, b, sizeof b);
            if (isfinite(e->cost_usd))
                snprintf(cost, sizeof cost, "%.0f", e->cost_usd + 0.0);
            else
                snprintf(cost, sizeof cost, "n/a");
            gpus += e->gpus;
            fprintf(fp, "<tr%s>", e->source == TIMELINE_PLAN ? " class=\"planned\"" : "");
            text_cell(fp, "td", "l",
                      e->source == TIMELINE_PLAN    ? "plan order"
                      : e->source == TIMELINE_RETIRE ? "retirement"
                                                     : "order placed");
            text_cell(fp, "td", "l", a);
            text_cell(fp, "td", "l", b);
            text_cell(fp, "td", "l", e->node_type);
            fprintf(fp, "<td>%lld</td><td>%+lld<span class=\"band\">%lld present</span></td><td>%s</td></tr>\n",
                    (long long)e->count, (long long)e->gpus, (long long)gpus, cost);
        }
        fputs("</tbody>\n</table>\n", fp);
    } else {
        fputs("<p>No orders.</p>\n", fp);
    }
    fputs("</section>\n", fp);
}

static void write_teams(FILE *fp, const struct forecast_digest *d)
{
    if (!d->n_teams)
        return;
    fputs("<section id=\"teams\">\n<h2>GPU-hours per team</h2>\n<table>\n<thead><tr><th class=\"l\">team</th>", fp);
    for (uint32_t p = 0; p < d->n_periods; p++)
        period_head_cell(fp, d, p);
    fputs("<th>horizon</th></tr></thead>\n<tbody>\n", fp);
    for (size_t t = 0; t < d->n_teams; t++) {
        fputs("<tr>", fp);
        text_cell(fp, "td", "l", d->r->team_names[t]);
        for (uint32_t p = 0; p < d->n_periods; p++)
            band_cell(fp, &d->team_bands[(size_t)p * d->n_teams + t], CELL_COUNT);
        band_cell(fp, &d->team_total[t], CELL_COUNT);
        fputs("</tr>\n", fp);
    }
    fputs("</tbody>\n</table>\n<h2>Queue wait p95 per team and period</h2>\n"
          "<p>Of the jobs each team submitted in the period, unstarted ones counted to the horizon's end; mean over "
          "the replications with their p5-p95.</p>\n<table id=\"team-waits\">\n<thead><tr><th class=\"l\">team</th>",
          fp);
    for (uint32_t p = 0; p < d->n_periods; p++)
        period_head_cell(fp, d, p);
    fputs("</tr></thead>\n<tbody>\n", fp);
    for (size_t t = 0; t < d->n_teams; t++) {
        fputs("<tr>", fp);
        text_cell(fp, "td", "l", d->r->team_names[t]);
        for (uint32_t p = 0; p < d->n_periods; p++) {
            struct forecast_band b = forecast_band_team_wait(d->r, p, t, FM_WAIT_P95);
            band_cell(fp, &b, CELL_WAIT);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</tbody>\n</table>\n<h2>Queue wait per team</h2>\n"
          "<p>Over every started job of every replication.</p>\n<table>\n<thead><tr><th class=\"l\">team</th>"
          "<th>jobs</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th></tr></thead>\n<tbody>\n",
          fp);
    for (size_t t = 0; t < d->n_teams; t++) {
        const struct team_waits *w = &d->waits[t];
        char a[32], b[32], c[32], e[32];
        fmt_value(a, sizeof a, w->mean_s, CELL_WAIT);
        fmt_value(b, sizeof b, w->p50_s, CELL_WAIT);
        fmt_value(c, sizeof c, w->p95_s, CELL_WAIT);
        fmt_value(e, sizeof e, w->p99_s, CELL_WAIT);
        fputs("<tr>", fp);
        text_cell(fp, "td", "l", d->r->team_names[t]);
        fprintf(fp, "<td>%zu</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", w->n, a, b, c, e);
    }
    fputs("</tbody>\n</table>\n</section>\n", fp);
}

static void write_notes(FILE *fp, const struct forecast_digest *d, const struct report_status *st)
{
    const struct forecast_result *r = d->r;
    char plen[32], slen[32];
    units_format_duration(plen, sizeof plen, (double)r->period_us / 1e6);
    units_format_duration(slen, sizeof slen, (double)r->sample_us / 1e6);
    fputs("<section id=\"notes\">\n<h2>Notes</h2>\n<ul>\n", fp);
    fprintf(fp, "<li>Replications: %u of %u completed%s.</li>\n", r->completed, r->replications,
            r->partial || r->completed < r->replications ? " &mdash; <strong id=\"partial\">partial results</strong>"
                                                         : "");
    if (d->has_seed)
        fprintf(fp, "<li>Seed: %llu; replication <i>r</i> draws from a seed derived from it and <i>r</i>, so a "
                    "rerun gives the same numbers.</li>\n",
                (unsigned long long)d->seed);
    fprintf(fp, "<li>Periods: %u of %s; the time series is sampled every %s.</li>\n", d->n_periods, plen, slen);
    fputs("<li>Bands: the mean across replications, and the 5th to 95th percentile (linear interpolation between "
          "order statistics).</li>\n"
          "<li>Files beside this page: <code>summary.json</code>, <code>periods.csv</code>, <code>samples.csv</code>, "
          "<code>teams.csv</code>; each chart as <code>NAME.gp</code> + <code>NAME.dat</code>, redrawn by "
          "<code>gnuplot -d NAME.gp</code> in this folder.</li>\n",
          fp);
    if (st->charts_failed) {
        fprintf(fp, "<li>%d chart%s failed to draw; the first error: <code>", st->charts_failed,
                st->charts_failed == 1 ? "" : "s");
        html_write_text(fp, st->first_gnuplot_error);
        fputs("</code></li>\n", fp);
    }
    fputs("</ul>\n</section>\n", fp);
}

int forecast_html_write(const char *dir, const struct forecast_digest *d, const struct forecast_chart *const *charts,
                        const int *drawn, size_t n_charts, const struct report_status *st, struct err *err)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/index.html", dir) >= sizeof path)
        return err_set(err, dir, 0, 0, "path too long");
    struct atomic_file f;
    if (atomic_file_open(&f, path, err))
        return -1;
    char title[320];
    snprintf(title, sizeof title, "fleetsim %s%s%s", d->plan ? "plan" : "forecast", d->scenario_name[0] ? ": " : "",
             d->scenario_name);
    html_begin(f.fp, title);
    write_header(f.fp, d);
    write_recommendation(f.fp, d, st);
    write_summary_table(f.fp, d);
    if (write_charts(f.fp, dir, charts, drawn, n_charts, err)) {
        atomic_file_abort(&f);
        return -1;
    }
    write_plan(f.fp, d);
    write_teams(f.fp, d);
    write_notes(f.fp, d, st);
    html_end(f.fp);
    return atomic_file_commit(&f, err);
}
