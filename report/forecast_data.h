/* forecast_data: the numbers of a forecast report as files for programs:
 * periods.csv, samples.csv, teams.csv and summary.json (see forecast_report.h
 * for what each holds). Column names carry units; team names are quoted as
 * RFC 4180 asks; summary.json has sorted, stable keys and meta.version.
 * Missing values (no job started in a period, say) are empty in CSV and null
 * in JSON. Each file is written atomically.
 */
#ifndef FLEETSIM_REPORT_FORECAST_DATA_H
#define FLEETSIM_REPORT_FORECAST_DATA_H

#include <jansson.h>

#include "report/forecast_digest.h"
#include "sim/err.h"

int forecast_data_write(const char *dir, const struct forecast_digest *d, struct err *err);
/* The recommendation as summary.json has it, set on root: "recommendation"
 * (its sentences), "action_needed" and, where a plan would help, "next".
 * 0, or -1 when out of memory. */
int forecast_data_recommendation(json_t *root, const struct forecast_digest *d);

#endif
