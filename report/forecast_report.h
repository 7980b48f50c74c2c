/* forecast_report: the report of a forecast (and of a plan, when there is
 * one), written into a folder people open, share and re-render.
 *
 * forecast_report_write(dir, ...) creates dir when absent and writes:
 *   index.html       self-contained (charts inlined as SVG, no scripts, no
 *                    external resources): a recommendation derived from the
 *                    numbers (and, without a plan, the `fleetsim plan`
 *                    command that would help), the charts, per-period tables with p5-p95
 *                    bands, the plan's timeline, GPU-hours per team, notes
 *   NAME.gp NAME.dat NAME.svg   one set per chart; `gnuplot -d NAME.gp` in
 *                    dir redraws NAME.svg
 *   periods.csv      one row per period x metric: mean, p5, p50, p95
 *   samples.csv      the sampled time series, bands of every field
 *   teams.csv        one row per team x period: GPU-hours band
 *   summary.json     stable keys, meta.version, per-period bands, the plan
 * Every file is written atomically and is byte-identical for the same input
 * (no timestamps, one number format). Without gnuplot the data, the scripts
 * and an HTML page with tables (saying the charts are missing) are written
 * all the same, and st->gnuplot_missing is set; a chart that gnuplot fails to
 * draw is counted in st->charts_failed, the first message kept, and the rest
 * of the report still written. Only failures to write files are errors.
 *
 * Nothing here prints or exits: the caller reads report_status and warns.
 * Text from user data (team, scenario, node-type names) is escaped for HTML
 * and passed to gnuplot only as single-quoted strings under `noenhanced`.
 * All pointers are borrowed for the duration of the call.
 */
#ifndef FLEETSIM_REPORT_FORECAST_REPORT_H
#define FLEETSIM_REPORT_FORECAST_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "models/node_types.h"
#include "scenarios/forecast.h"
#include "sim/engine.h"
#include "sim/err.h"

/* One purchase order of a plan. Times are relative to the scenario start,
 * like every sim_time. */
struct plan_order {
    sim_time date_us;   /* when to place the order */
    sim_time ready_us;  /* when its nodes take jobs (lead time + burn-in); < 0: not known, date_us is used */
    char node_type[NODE_TYPE_NAME_MAX];
    int64_t count;      /* nodes */
    int64_t gpus;       /* GPUs the nodes add; 0: count x the type's GPUs in the scenario's catalog */
    double cost_usd;
    sim_time end_us;    /* rented capacity: when it goes back; 0 or less: kept */
};

struct plan_summary {
    const struct plan_order *orders; /* in the order they are placed */
    size_t n_orders;
    double total_cost_usd;
    int met;            /* the SLO is met in every period with the requested confidence */
    const char *reason; /* why no plan meets the SLO (when !met); may be NULL */
    const char *slo;    /* as the user wrote it, e.g. "p95_wait <= 2h"; may be NULL */
    const char *policy;         /* the policy the plan adopts; may be NULL (the forecast's) */
    const char *instead_of;     /* the forecast's policy when the plan changes it, else NULL */
    double instead_cost_usd;    /* the cheapest plan under instead_of (when set) */
    const double *period_share; /* per period, the share of replications meeting every SLO of the plan; may be NULL */
    double confidence;          /* the share needed (with period_share) */
};

struct report_status {
    int gnuplot_missing;            /* gnuplot could not be started: no charts */
    int charts_written;
    int charts_failed;
    char first_gnuplot_error[256];  /* the first failure, for the CLI's warning */
};

/* Returns 0, or -1 with err set when dir or a file in it cannot be written.
 * plan may be NULL (a forecast without a plan). st is always filled. */
int forecast_report_write(const char *dir, const struct forecast_result *r, const struct plan_summary *plan,
                          struct report_status *st, struct err *err);

#endif
