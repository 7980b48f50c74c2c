/* trace: reading any supported trace format by name. The format comes from
 * the file name (.swf, .swf.gz -> SWF; .jsonl, .jsonl.gz, .ndjson -> native)
 * or, failing that, from the content (a first line that starts with "JobID"
 * and holds a '|' is a Slurm sacct -P export; a first non-blank character
 * '{' means JSONL; anything else SWF). Readers return workloads sorted by
 * submit time unless the convention says otherwise.
 */
#ifndef FLEETSIM_TRACES_TRACE_H
#define FLEETSIM_TRACES_TRACE_H

#include "models/workload.h"
#include "sim/err.h"
#include "traces/swf.h"

enum trace_format { TRACE_AUTO, TRACE_SWF, TRACE_JSONL, TRACE_SACCT };

int trace_read(const char *path, enum trace_format fmt, enum swf_convention conv, struct workload *w,
               struct diag_list *diags, struct err *err);
enum trace_format trace_format_from_name(const char *path);

#endif
