/* philly: reader for Microsoft Philly's job log (ATC '19,
 * msr-fiddle/philly-traces, cluster_job_log): one JSON array of jobs,
 *
 *   [{"status": "Pass", "vc": "ee9e8c", "jobid": "application_1506638472019_14199",
 *     "submitted_time": "2017-10-07 01:11:39", "user": "...",
 *     "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
 *                   "detail": [{"ip": "m161", "gpus": ["gpu0", "gpu1"]}]}, ...]}, ...]
 *
 * and the filtered subsets in the same shape that carry "id" and
 * "num_gpus" instead of "jobid" and the attempts' detail (marwage's jobs.json
 * in ../shared/traces). Times are "YYYY-MM-DD HH:MM:SS" with no zone (Philly's
 * local time, read as UTC); submit times become relative to the earliest,
 * whose time goes to meta.unix_start_s.
 *
 * A job: submit = submitted_time; start = its first attempt's start_time (the
 * recorded queue time is start - submit); run time = the sum of its attempts'
 * run times (end_time - start_time each; the gaps between attempts, which
 * are re-queueing, are not replayed); GPUs = num_gpus if given, else the
 * GPUs in the last attempt's detail; status: Pass 1, Killed 5, Failed 0
 * (SWF's codes); vc -> team; user -> user; id = its place in the array
 * (1-based). Counted and reported once: jobs with more than one attempt, and
 * jobs whose attempts ran on different GPU counts. Skipped with a counted
 * warning: jobs without an attempt that started, jobs whose last attempt has
 * no end (still running), jobs with no GPUs (empty GPU lists), repeated job
 * ids. A time that cannot be read, a wrong type or a missing jobid or
 * submitted_time is an error at the value's line and column.
 */
#ifndef FLEETSIM_TRACES_PHILLY_H
#define FLEETSIM_TRACES_PHILLY_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

/* Whether the first non-blank character is '[' (a JSON array). */
int philly_detect(const char *data, size_t len);
int philly_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                       struct err *err);

#endif
