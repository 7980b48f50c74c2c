/* machines: the machine (node) lists that come with GPU traces, read into
 * a list of nodes with their GPU counts, from which `fleetsim replay` builds
 * its cluster:
 *
 *   openb node list (Alibaba 2023):    sn,cpu_milli,memory_mib,gpu,model
 *   Philly cluster_machine_list:       machineId, number of GPUs, single GPU mem
 *   Philly revised_machine_list:       ,machineId,number of GPUs
 *   PAI 2020 pai_machine_spec:         machine,gpu_type,cap_cpu,cap_mem,cap_gpu
 *   Helios cluster_gpu_number.csv:     date,vc...,total (GPUs per VC per day): the
 *                                      largest daily total, in nodes of 8 GPUs
 *   Alea .machines (beside an SWF log): cluster_id name nodes cpus_per_node speed ram_kb
 *                                      (whitespace separated, no header; slots = CPUs)
 *
 * Columns are found by name. Machines with 0 GPUs (CPU-only) are counted and
 * left out of the cluster. A node's model (openb model, PAI gpu_type,
 * Philly's memory per GPU, Alea's cluster name) becomes its node type, named
 * in the cluster's type_names, so that jobs constrained to GPU models
 * (job.gpu_models) run only on their nodes (see traces/README.md). The list
 * owns its arrays.
 */
#ifndef FLEETSIM_TRACES_MACHINES_H
#define FLEETSIM_TRACES_MACHINES_H

#include <stddef.h>
#include <stdint.h>

#include "models/cluster.h"
#include "models/workload.h"
#include "sim/err.h"

struct machine_list {
    int32_t *gpus;  /* per GPU machine */
    int32_t *model; /* index into models, -1 = unknown */
    size_t n, cap;
    size_t cpu_only; /* machines with 0 GPUs, left out */
    int64_t total_gpus;
    int cpu_slots; /* the slots are CPUs (Alea .machines), not GPUs */
    struct string_table models;
};

void machines_init(struct machine_list *m);
void machines_release(struct machine_list *m);
/* Whether the first line is the header of a machine list. */
int machines_detect(const char *data, size_t len);
int machines_read_buffer(const char *name, const char *data, size_t len, struct machine_list *m,
                         struct diag_list *diags, struct err *err);
int machines_read(const char *path, struct machine_list *m, struct diag_list *diags, struct err *err);
/* One node per GPU machine, in the list's order. Returns 0 or -1. */
int machines_build_cluster(const struct machine_list *m, struct cluster *c, struct err *err);
/* "549 x 8 G2, 387 x 2 T4, ..." (the largest groups first), into buf. */
void machines_describe(const struct machine_list *m, char *buf, size_t cap);
/* The machine list that ships beside a trace, when that file can be read:
 * beside an openb pod list its node list ("pod_list_NAME" ->
 * "node_list_gpu_node" in the file name); beside an SWF log Alea's
 * companion (X.swf or X.swf.gz -> X.swf.machines). Returns 0 and the path,
 * or -1. */
int machines_sibling(const char *trace_path, char *buf, size_t cap);

#endif
