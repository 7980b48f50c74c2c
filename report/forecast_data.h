/* forecast_data: the numbers of a forecast report as files for programs:
 * periods.csv, samples.csv, teams.csv and summary.json (see forecast_report.h
 * for what each holds). Column names carry units; team names are quoted as
 * RFC 4180 asks; summary.json has sorted, stable keys and meta.version.
 * Missing values (no job started in a period, say) are empty in CSV and null
 * in JSON. Each file is written atomically.
 */
#ifndef FLEETSIM_REPORT_FORECAST_DATA_H
#define FLEETSIM_REPORT_FORECAST_DATA_H

#include "report/forecast_digest.h"
#include "sim/err.h"

int forecast_data_write(const char *dir, const struct forecast_digest *d, struct err *err);

#endif
