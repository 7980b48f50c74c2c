/* units: converting quantities between their stored form and text. Times are
 * stored as integer microseconds and written as exact decimal seconds, so a
 * value survives a write and a read unchanged and outputs are byte-stable.
 *
 * The parsers read what people write in scenario files: a non-negative
 * decimal number (digits, an optional fraction, an optional exponent such as
 * "1.5e3") followed at once by a unit, with no space and nothing after it.
 * A number without a unit is refused (is "90" seconds or days?), except the
 * number zero for durations, where the unit does not matter. Each returns 0,
 * or -1 and leaves *out untouched. Units are case-sensitive because case
 * carries meaning: "Gb" is gigabits, "GB" gigabytes; "m" is minutes, "M"
 * nothing (there is no month: months differ in length).
 *
 *   duration   us ms s m min h d w y          y = 365 d, w = 7 d
 *   bandwidth  bps Kbps Mbps Gbps Tbps        bits per second (SI: K = 1e3)
 *              Bps KBps MBps GBps TBps        bytes per second (x 8); also
 *              b/s Kb/s ... and B/s KB/s ...  with "/s" for "ps"
 *   size       B KB MB GB TB PB               SI (GB = 1e9 bytes)
 *              KiB MiB GiB TiB PiB            binary (GiB = 2^30 bytes)
 *   power      W kW MW
 *   money      250000, 250000.50, 250k, 1.2M, $250k, $3M   US dollars; a bare
 *              number is allowed: the currency is the only one
 *   date       YYYY-MM-DD                     UTC midnight, years 1970..9999
 */
#ifndef FLEETSIM_SIM_UNITS_H
#define FLEETSIM_SIM_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "12", "12.5", "0.000001"; negative values (unknown) as "-1". */
void units_format_seconds(char *buf, size_t len, int64_t us);

int units_parse_duration(const char *text, double *seconds);
int units_parse_bandwidth(const char *text, double *gbps);
int units_parse_size_bytes(const char *text, double *bytes);
int units_parse_power(const char *text, double *watts);
int units_parse_money(const char *text, double *usd);
int units_parse_date(const char *text, int64_t *unix_s);
/* Days since 1970-01-01 of a proleptic Gregorian date (no range check). */
int64_t units_days_from_civil(int64_t y, unsigned m, unsigned d);
/* "YYYY-MM-DD" of the UTC day holding unix_s. */
void units_format_date(char *buf, size_t len, int64_t unix_s);
/* A duration in the largest unit that divides it ("26w", "90d", "45s",
 * "1.5s"); used to show defaults and values back to people. */
void units_format_duration(char *buf, size_t len, double seconds);

#endif
