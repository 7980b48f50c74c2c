/* trace: reading any supported trace format by name. The format comes from
 * the file name (.swf, .swf.gz -> SWF; .jsonl, .jsonl.gz, .ndjson -> native)
 * or, failing that, from the content (a first line that starts with "JobID"
 * and holds a '|' is a Slurm sacct -P export; a first non-blank character
 * '[' a Philly job log, '{' JSONL; a CSV header names the GPU formats:
 * ITP, openb pods, Helios/Acme; six fields with a PAI status an Alibaba PAI
 * job table; any other CSV header is an error naming the formats; anything
 * else SWF). Readers return workloads sorted by submit time unless the
 * convention says otherwise.
 */
#ifndef FLEETSIM_TRACES_TRACE_H
#define FLEETSIM_TRACES_TRACE_H

#include "models/workload.h"
#include "sim/err.h"
#include "traces/swf.h"

enum trace_format {
    TRACE_AUTO,
    TRACE_SWF,
    TRACE_JSONL,
    TRACE_SACCT,
    TRACE_PHILLY, /* Microsoft Philly cluster_job_log (traces/philly.h) */
    TRACE_HELIOS, /* SenseTime Helios cluster_log.csv, Acme trace_*.csv (traces/helios.h) */
    TRACE_PAI,    /* Alibaba PAI 2020 job + task tables (traces/pai.h) */
    TRACE_OPENB,  /* Alibaba openb 2023 pod list (traces/openb.h) */
    TRACE_ITP,    /* Microsoft ITP / ElasticFlow CSV (traces/itp.h) */
    TRACE_FORMATS
};

/* The names --format takes, in order, for messages. */
#define TRACE_FORMAT_NAMES "auto, swf, jsonl, sacct, philly, helios, acme, pai, openb, itp"

int trace_read(const char *path, enum trace_format fmt, enum swf_convention conv, struct workload *w,
               struct diag_list *diags, struct err *err);
/* The same, also telling which format was read (the one detected under
 * TRACE_AUTO); used may be NULL. */
int trace_read_format(const char *path, enum trace_format fmt, enum swf_convention conv, struct workload *w,
                      struct diag_list *diags, struct err *err, enum trace_format *used);
enum trace_format trace_format_from_name(const char *path);
/* "swf", "philly", ... ("acme" reads as helios); -1 when unknown. */
int trace_format_parse(const char *name, enum trace_format *fmt);
const char *trace_format_name(enum trace_format fmt);
/* Whether the format is one of the GPU-cluster traces (Philly to ITP). */
int trace_format_is_gpu(enum trace_format fmt);

#endif
