/* helios: reader for the SenseTime Helios job logs (SC '21,
 * S-Lab-System-Group/HeliosData, <cluster>/cluster_log.csv) and the Shanghai
 * AI Lab Acme traces that follow their columns (NSDI '24, InternLM/AcmeTrace,
 * trace_seren.csv, trace_kalos.csv):
 *
 *   job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
 *
 * Columns are found by name (case ignored, any order; Acme has no vc).
 * Needed: submit_time, gpu_num, state, and duration or start_time and
 * end_time. Times are "YYYY-MM-DD HH:MM:SS" with no zone (read as UTC) or
 * seconds; submit times become relative to the earliest, whose time goes to
 * meta.unix_start_s. Run time = duration (else end - start); the recorded
 * queue time = start - submit (else the queue column). state: COMPLETED 1,
 * CANCELLED 5, FAILED, TIMEOUT, NODE_FAIL, OUT_OF_MEMORY 0, others -1 (SWF's
 * codes). vc -> team, user -> user, job_id -> id when it is a number, else the
 * row number. Skipped with a counted warning: CPU-only jobs (gpu_num 0), jobs
 * that never started (PENDING, no start time), jobs still running (no end and
 * no duration), repeated job ids.
 */
#ifndef FLEETSIM_TRACES_HELIOS_H
#define FLEETSIM_TRACES_HELIOS_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

int helios_detect(const char *data, size_t len);
int helios_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                       struct err *err);

#endif
