/* inventory: the GPUs the agent owns, grouped into nodes, with their
 * identity (UUID, PCI bus id, model, memory), NVLink domains and health.
 *
 * Two sources fill it: NVML (agent/nvml.h) on a real GPU node, or a fake
 * inventory file (JSON, see agent/README.md) on machines without GPUs, which
 * may describe several nodes. GPUs are numbered globally (0..n_gpus-1), node
 * by node; jobs get GPUs by UUID, never by index, because NVML's index is not
 * the CUDA index.
 *
 * Health: a GPU that reports a critical XID or an uncorrectable ECC error is
 * drained automatically (inventory_health_update); an admin may drain or
 * resume GPUs and whole nodes. A drained GPU is never given to a new job.
 * The inventory owns its arrays.
 */
#ifndef FLEETSIM_AGENT_INVENTORY_H
#define FLEETSIM_AGENT_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

enum { INV_UUID_MAX = 96, INV_NAME_MAX = 96, INV_BUS_MAX = 32, INV_NODE_NAME_MAX = 64, INV_REASON_MAX = 128,
       INV_MAX_PEERS = 36, INV_MAX_GPUS = 4096, INV_MAX_NODES = 1024, INV_MAX_NODE_GPUS = 64 };

enum inventory_source { INVENTORY_FAKE = 0, INVENTORY_NVML = 1 };

struct inv_gpu {
    int32_t node;        /* index into nodes */
    int32_t local_index; /* index on its node (NVML index for NVML) */
    char uuid[INV_UUID_MAX];
    char model[INV_NAME_MAX];
    char pci_bus_id[INV_BUS_MAX]; /* "" = unknown */
    uint64_t memory_bytes;
    int32_t minor;         /* /dev/nvidiaN, -1 = unknown */
    int32_t nvlink_domain; /* per node: GPUs with the same value share NVLink; -1 = none */
    int32_t n_peers;       /* GPUs directly linked by NVLink (global indices) */
    int32_t peers[INV_MAX_PEERS];
    /* health */
    int drained;
    int auto_drained; /* by a health rule rather than an admin */
    char drain_reason[INV_REASON_MAX];
    int last_xid;               /* 0 = none seen */
    int64_t ecc_uncorrected;    /* volatile count, -1 = not supported */
    int64_t ecc_baseline;       /* count at the last resume; more than this drains */
};

struct inv_node {
    char name[INV_NODE_NAME_MAX];
    int32_t first_gpu, n_gpus;
    int32_t nvlink_domain; /* for the policy view: -1 when its GPUs have no NVLink */
    int32_t leaf, pod;     /* fabric position for the policy view (fake inventory's "leaf"/"pod"), -1 = unknown */
    int drained;
    char drain_reason[INV_REASON_MAX];
};

struct inventory {
    struct inv_node *nodes;
    uint32_t n_nodes;
    struct inv_gpu *gpus;
    uint32_t n_gpus;
    enum inventory_source source;
    char driver_version[80];
    int8_t *pcie_level; /* n_gpus x n_gpus NVML topology levels (0..50), -1 = unknown; NULL if none */
};

/* One observation of a GPU's health: what NVML (or a fake) reported. */
struct gpu_health_sample {
    int xid;                 /* a critical XID event, 0 = none */
    int64_t ecc_uncorrected; /* volatile uncorrectable ECC count, -1 = unknown */
};

struct health_rules {
    const int *xids; /* XIDs that drain */
    size_t n_xids;
    int drain_on_ecc;
};

void inventory_init(struct inventory *inv);
void inventory_release(struct inventory *inv);
/* Reads a fake inventory file. Errors name the file and the JSON path. */
int inventory_load_fake(struct inventory *inv, const char *path, struct err *err);
int inventory_parse_fake(struct inventory *inv, const char *name, const char *text, size_t len, struct err *err);
/* Adds a node with n GPUs; returns the node index or -1 (memory, limits). */
int inventory_add_node(struct inventory *inv, const char *name, int32_t n_gpus);
/* Global GPU index by UUID, or by "NODE:LOCAL"; -1 if none. */
int inventory_find_gpu(const struct inventory *inv, const char *text);
int inventory_find_node(const struct inventory *inv, const char *name);
/* Applies a health observation to gpu. Returns 1 if it drained the GPU just
 * now (reason written), 0 otherwise. */
int inventory_health_update(struct inventory *inv, uint32_t gpu, const struct gpu_health_sample *s,
                            const struct health_rules *rules, char *reason, size_t reason_len);
/* Picks n GPUs on node that are neither drained nor busy[] (indexed by
 * global GPU), into out (global indices, ascending). Prefers one NVLink
 * domain that holds them all (the fullest that fits), else the domains with
 * the most free GPUs first. Returns 0, or -1 if the node has too few. */
int inventory_pick_gpus(const struct inventory *inv, uint32_t node, int32_t n, const uint8_t *busy,
                        int32_t *out);
/* Usable (not drained) GPUs on node. */
int32_t inventory_node_usable(const struct inventory *inv, uint32_t node);

#endif
