/* forecast_html: index.html of a forecast report. One self-contained page
 * (html.h): the recommendation first, then the per-period summary with
 * p5-p95 bands, the charts inlined as SVG (or, where a chart was not drawn, a
 * note naming its script and data), the capacity plan, GPU-hours and waits
 * per team, and notes on how the numbers were made. drawn[i] says whether
 * charts[i]'s NAME.svg exists in dir to be inlined.
 */
#ifndef FLEETSIM_REPORT_FORECAST_HTML_H
#define FLEETSIM_REPORT_FORECAST_HTML_H

#include <stddef.h>

#include "report/forecast_charts.h"
#include "report/forecast_digest.h"
#include "report/forecast_report.h"
#include "sim/err.h"

int forecast_html_write(const char *dir, const struct forecast_digest *d, const struct forecast_chart *const *charts,
                        const int *drawn, size_t n_charts, const struct report_status *st, struct err *err);

#endif
