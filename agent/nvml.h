/* nvml: the GPUs of this host, from NVIDIA's NVML loaded at run time with
 * dlopen("libnvidia-ml.so.1"), so the agent builds and runs on machines
 * without the driver. Only the versioned symbols are looked up (nvmlInit_v2,
 * nvmlDeviceGetCount_v2, ...); a symbol that is missing makes its feature
 * unavailable (NVLink, topology, ECC, XID events, samples), never a crash.
 * The prototypes below are declared here from the documented ABI; NVIDIA's
 * header is not needed.
 */
#ifndef FLEETSIM_AGENT_NVML_H
#define FLEETSIM_AGENT_NVML_H

#include <stdint.h>

#include "agent/inventory.h"
#include "sim/err.h"

struct nvml;

/* A sample for the DCGM-named metrics; -1 where unavailable. */
struct gpu_sample {
    int64_t fb_used_mib, fb_free_mib;
    int64_t gpu_util_pct, mem_copy_util_pct;
    double power_w;
    int64_t gpu_temp_c;
    int64_t sm_clock_mhz, mem_clock_mhz;
};

/* Loads and initialises NVML. NULL with err set when it cannot
 * ("libnvidia-ml.so.1 not found: use --inventory FILE"). lib: NULL for the
 * default library name (tests pass a fake). */
struct nvml *nvml_open(const char *lib, struct err *err);
void nvml_close(struct nvml *n);
/* Fills inv with one node named node_name holding this host's GPUs. */
int nvml_fill_inventory(struct nvml *n, const char *node_name, struct inventory *inv, struct err *err);
/* Health of GPU gpu (index as filled): waits for no XID event, reads ECC.
 * Returns 0 (sample filled) or -1. XIDs of all GPUs are collected on each
 * call and handed out per GPU. */
int nvml_poll_health(struct nvml *n, uint32_t gpu, struct gpu_health_sample *s);
int nvml_sample(struct nvml *n, uint32_t gpu, struct gpu_sample *s);
/* Which optional features loaded, e.g. "nvlink topology ecc xid samples". */
const char *nvml_features(const struct nvml *n);

#endif
