/* itp: reader for the Microsoft ITP job traces released with ElasticFlow
 * (ASPLOS '23, microsoft/elasticflow-traces, raw-traces.tar.gz: one
 * clusterNN.csv per cluster):
 *
 *   job_id,submission_time,duration,num_gpu
 *   965d744f-0445-c1a8-12af-97e4c536c66e,1932025,2429,64
 *
 * job_id is a UUID (the job's id becomes its row number, 1-based, unless it
 * is a plain number); submission_time is seconds from the start of the
 * collection and is kept as the submit time (so clusters stay aligned);
 * duration is the run time (s); num_gpu the GPUs. No queue time, outcome,
 * user or VC is recorded. Columns are found by name, in any order. A job
 * with 0 GPUs is skipped with a counted warning; a repeated job_id is
 * skipped. Times or counts that cannot be read are errors at line:col.
 */
#ifndef FLEETSIM_TRACES_ITP_H
#define FLEETSIM_TRACES_ITP_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

/* Whether the first line is the ITP header (job_id,submission_time,...). */
int itp_detect(const char *data, size_t len);
int itp_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                    struct err *err);

#endif
