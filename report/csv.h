/* csv: the small pieces every CSV and gnuplot data file of the report is made
 * of, so that all of them quote and format numbers the same way.
 *
 * Fields follow RFC 4180 quoting: a field holding a comma, a double quote, a
 * CR or LF, or leading/trailing blanks is written in double quotes with its
 * quotes doubled. Records end in LF, as every other file fleetsim writes.
 * Numbers use one fixed format ("%.10g", negative zero as "0") so outputs are
 * byte-identical for the same input; a value that is not finite is a missing
 * value: an empty CSV field, "NaN" in gnuplot data files.
 */
#ifndef FLEETSIM_REPORT_CSV_H
#define FLEETSIM_REPORT_CSV_H

#include <stddef.h>
#include <stdio.h>

enum { CSV_NUMBER_MAX = 32 };

void csv_write_field(FILE *fp, const char *s);
/* "%.10g"; NaN and infinities give `missing`. */
void csv_format_number(char *buf, size_t len, double v, const char *missing);
void csv_write_number(FILE *fp, double v);     /* missing: empty */
void csv_write_dat_number(FILE *fp, double v); /* missing: NaN */

#endif
