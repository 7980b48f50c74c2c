/* node_types: what a kind of GPU server is, as the models need it, and the
 * catalog of kinds. The built-in catalog is models/catalog/node-types.yaml
 * (each figure with its public source), compiled into the binary and read by
 * scenarios/; a scenario may override any field or add types.
 *
 * Speed factors are relative to the reference, an H100 SXM node (1.0): a
 * job's trace runtime is taken as its runtime on the reference, and runs
 * runtime / speed[class] on another type.
 */
#ifndef FLEETSIM_MODELS_NODE_TYPES_H
#define FLEETSIM_MODELS_NODE_TYPES_H

#include <stddef.h>
#include <stdint.h>

enum job_class { JOB_CLASS_TRAINING = 0, JOB_CLASS_FINETUNE = 1, JOB_CLASS_INFERENCE = 2, JOB_CLASS_COUNT };

enum { NODE_TYPE_NAME_MAX = 32 };

struct node_type {
    char name[NODE_TYPE_NAME_MAX];
    int32_t gpus;               /* per node */
    int32_t nvlink_domain_gpus; /* GPUs in one NVLink domain; 0 = no NVLink (PCIe) */
    double nvlink_gbps;         /* NVLink bandwidth per GPU, gigabits per second */
    double gpu_memory_gib;
    double power_w;             /* per node */
    double price_usd;           /* per node; a placeholder the user overrides */
    double speed[JOB_CLASS_COUNT];
};

struct node_catalog {
    struct node_type *types;
    size_t n, cap;
};

void node_catalog_init(struct node_catalog *c);
void node_catalog_release(struct node_catalog *c);
/* Adds or replaces (by name) a type; returns its index or -1 (memory). */
int node_catalog_put(struct node_catalog *c, const struct node_type *t);
int node_catalog_find(const struct node_catalog *c, const char *name);
const char *job_class_name(enum job_class k);
int job_class_parse(const char *name, enum job_class *k);

#endif
