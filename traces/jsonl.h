/* jsonl: fleetsim's native trace format, JSON Lines, one job per line, units
 * in the key names (see traces/README.md for the full list):
 *
 *   {"fleetsim_trace":1,"max_nodes":240,"max_procs":240}      optional first line
 *   {"id":1,"submit_s":0,"runtime_s":3600,"limit_s":7200,"gpus":8,"user":"u4","team":"g1"}
 *
 * Every reader converts into struct workload; this writer writes it back, so
 * `fleetsim trace convert` round-trips. Unknown keys, wrong types and values
 * out of range are errors with file:line:col and the nearest valid key.
 * Writing goes to a temporary file renamed over the target at the end, so a
 * failed write never leaves half a file.
 */
#ifndef FLEETSIM_TRACES_JSONL_H
#define FLEETSIM_TRACES_JSONL_H

#include <stddef.h>
#include <stdio.h>

#include "models/workload.h"
#include "sim/err.h"

int jsonl_read(const char *path, struct workload *w, struct diag_list *diags, struct err *err);
int jsonl_read_buffer(const char *name, const char *data, size_t len, struct workload *w,
                      struct diag_list *diags, struct err *err);
/* Writes w to path ("-" = the given stream `out`). Returns 0 or -1. */
int jsonl_write(const char *path, FILE *out, const struct workload *w, struct err *err);

#endif
