/* forecast_charts: the charts of a forecast report, as gnuplot scripts and
 * data files. Each chart NAME is NAME.dat (whitespace-separated columns with
 * a '#' header naming them and their units; blocks separated by two blank
 * lines where a chart has several series) plus NAME.gp, which draws NAME.svg
 * from it (gnuplot.h: svg terminal, pinned font, noenhanced). Team names are
 * the only user text in the scripts, as single-quoted strings.
 *
 * Time axes are dates when the scenario has a start_date (data in Unix
 * seconds, UTC) and days since the start otherwise; per-period charts put one
 * tick per period, labelled Q1, Q2, ... (or M, W).
 */
#ifndef FLEETSIM_REPORT_FORECAST_CHARTS_H
#define FLEETSIM_REPORT_FORECAST_CHARTS_H

#include <stddef.h>

#include "report/forecast_digest.h"
#include "sim/err.h"

typedef int (*forecast_chart_write_fn)(const char *dir, const struct forecast_digest *d, struct err *err);

struct forecast_chart {
    const char *name;    /* file stem */
    const char *title;   /* heading in the page */
    const char *caption; /* how to read it */
    forecast_chart_write_fn write;
};

/* The charts that apply to d, in page order (the per-team CDF needs started
 * jobs, the plan timeline needs orders or retirements). Returns how many went
 * into out (at most max). */
size_t forecast_charts_list(const struct forecast_digest *d, const struct forecast_chart **out, size_t max);

#endif
