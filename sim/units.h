/* units: converting quantities between their stored form and text. Times are
 * stored as integer microseconds and written as exact decimal seconds, so a
 * value survives a write and a read unchanged and outputs are byte-stable.
 */
#ifndef FLEETSIM_SIM_UNITS_H
#define FLEETSIM_SIM_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "12", "12.5", "0.000001"; negative values (unknown) as "-1". */
void units_format_seconds(char *buf, size_t len, int64_t us);

#endif
