/* sacct: reader for Slurm accounting exports, `sacct --parsable2` (-P):
 * '|'-separated fields under a header line naming them (see
 * ../shared/reference/integration-notes.md §1.2), e.g. from
 *
 *   SLURM_TIME_FORMAT=%s sacct -a -X -P -S 2024-01-01 -E 2024-04-01 \
 *     --format=JobIDRaw,User,Account,Partition,Submit,Start,End,Elapsed,Timelimit,NNodes,AllocTRES,State
 *
 * Columns are found by name (case ignored), in any order; unknown ones are
 * ignored. Needed: Submit; the run time from Elapsed, or Start and End; the
 * GPU count from AllocTRES (gres/gpu=N, typed gres/gpu:a100=N counts too),
 * or ReqTRES for a job that never got an allocation. Optional: JobIDRaw (or
 * JobID) -> id, else the line number; User -> user; Account (or Group) ->
 * team; Timelimit ([D-]HH:MM:SS, UNLIMITED) or TimelimitRaw (minutes) ->
 * limit; State -> status (COMPLETED 1, CANCELLED 5, other ends 0, as SWF).
 *
 * Times are epoch seconds (SLURM_TIME_FORMAT=%s) or sacct's default
 * YYYY-MM-DDTHH:MM:SS, which is the exporting host's local time with no zone:
 * read as UTC, with one warning. Submit times become relative to the
 * earliest, whose Unix time goes to meta.unix_start_s.
 *
 * Skipped with a (counted) warning: job steps (ids with a '.': an export
 * without -X), jobs that never started or are still running (PENDING,
 * RUNNING, Start/End 'Unknown'), and jobs without gres/gpu (CPU-only jobs).
 * If no job has a gres/gpu count at all, that is an error (the cluster's
 * AccountingStorageTRES does not list gres/gpu). A line with a different
 * number of fields than the header, or a time or count that cannot be read,
 * is an error at its line and column.
 */
#ifndef FLEETSIM_TRACES_SACCT_H
#define FLEETSIM_TRACES_SACCT_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

/* Whether data looks like a sacct -P export: the first line starts with
 * "JobID" and holds a '|'. */
int sacct_detect(const char *data, size_t len);
int sacct_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                      struct err *err);
int sacct_read(const char *path, struct workload *w, struct diag_list *diags, struct err *err);

#endif
