/* pai: reader for Alibaba PAI's 2020 GPU trace (NSDI '22 "MLaaS in the
 * Wild", alibaba/clusterdata cluster-trace-gpu-v2020): the job table joined
 * with the task table. Both are CSV without a header row (a header row
 * starting with "job_name" is accepted and skipped):
 *
 *   pai_job_table:  job_name,inst_id,user,status,start_time,end_time
 *   pai_task_table: job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type
 *
 * The task table is the file beside the job table whose name has
 * "task_table" where the job table's has "job_table". Times are seconds
 * with a constant offset (fake dates) and are kept as they are.
 *
 * A job: submit = the job's start_time (PAI's job start_time is its
 * submission); start = the earliest start_time of its tasks; run time = the
 * job's end_time - start; GPUs = the sum over its tasks of plan_gpu x
 * inst_num / 100, rounded up to whole GPUs; user -> user; status:
 * Terminated 1, Failed 0 (Running and Waiting jobs have no end: skipped).
 * No VC. Counted and reported once: GPU fractions (a total that is not
 * whole, or a task with plan_gpu < 100), GPU-model constraints (a gpu_type
 * other than MISC), tasks of no job. Skipped with a counted warning: jobs
 * without a task, without GPUs, not started, still running, repeated.
 */
#ifndef FLEETSIM_TRACES_PAI_H
#define FLEETSIM_TRACES_PAI_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

/* Whether the first line looks like a PAI job table row (6 fields, the
 * fourth a PAI status) or its header. */
int pai_detect(const char *data, size_t len);
/* The task table's path for a job table's: "task_table" for the last
 * "job_table" in the file name. -1 when the name has none or buf is short. */
int pai_task_path(const char *job_path, char *buf, size_t cap);
int pai_read_buffers(const char *job_name, const char *job_data, size_t job_len, const char *task_name,
                     const char *task_data, size_t task_len, struct workload *w, struct diag_list *diags,
                     struct err *err);

#endif
