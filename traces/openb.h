/* openb: reader for Alibaba's 2023 GPU-sharing trace (FGD, ATC '23,
 * alibaba/clusterdata cluster-trace-gpu-v2023, csv/openb_pod_list_*.csv):
 *
 *   name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
 *
 * One pod (task) per line; times are seconds from the start of the trace and
 * are kept as they are. submit = creation_time, start = scheduled_time, run
 * time = deletion_time - scheduled_time, GPUs = num_gpu. pod_phase:
 * Succeeded 1, Failed 0, Running -1 (still running when the trace was taken:
 * deletion_time is then the end of the trace). The id is the row number.
 *
 * Not modelled, counted and reported once: a GPU fraction (gpu_milli below
 * 1000: the pod shares one GPU; it replays on a whole GPU) and a GPU-model
 * constraint (gpu_spec, e.g. "V100M16|V100M32": the pod replays on any
 * node). cpu_milli, memory_mib and qos are not read. Skipped with a counted
 * warning: CPU-only pods (num_gpu 0), pods never scheduled (Pending, no
 * scheduled_time), repeated names.
 *
 * The cluster comes from the node list (openb_node_list_*.csv:
 * sn,cpu_milli,memory_mib,gpu,model), read by traces/machines.h.
 */
#ifndef FLEETSIM_TRACES_OPENB_H
#define FLEETSIM_TRACES_OPENB_H

#include <stddef.h>

#include "models/workload.h"
#include "sim/err.h"

int openb_detect(const char *data, size_t len);
int openb_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                      struct err *err);

#endif
