/* gpu_share: the GPUs that fractional jobs share (openb's gpu_milli), as a
 * host keeps them for the policy view (policies/policy.h, ABI 2).
 *
 * A node's GPUs are whole free GPUs (its free slots, anonymous), GPUs held
 * by whole-GPU jobs (anonymous too), and shared GPUs, named by their index on
 * the node and listed here with the thousandths of a GPU in use (1..1000).
 * The list is kept sorted by (node, gpu), so a node's shared GPUs are one
 * run of it: gpu_share_index() writes each node's run into its policy_node
 * (shared_first, n_shared) after a change. Taking a share of a GPU that is
 * not shared yet opens it (the caller takes one free slot); giving back the
 * last share closes it (the caller gets the slot back). The set owns its
 * arrays; a host with no fractional job never allocates.
 */
#ifndef FLEETSIM_MODELS_GPU_SHARE_H
#define FLEETSIM_MODELS_GPU_SHARE_H

#include <stdint.h>

#include "policies/policy.h"

struct gpu_share {
    struct policy_shared_gpu *gpus; /* sorted by (node, gpu) */
    uint32_t n, cap;
    int dirty; /* changed since the last gpu_share_index */
};

void gpu_share_init(struct gpu_share *s);
void gpu_share_release(struct gpu_share *s);
/* Adds milli to GPU gpu of node; *opened is 1 when the GPU was not shared
 * before (it takes a free slot). Returns 0, or -1 (memory). */
int gpu_share_take(struct gpu_share *s, uint32_t node, int32_t gpu, int32_t milli, int *opened);
/* Takes milli off; returns 1 when that was the GPU's last share (it is a
 * free slot again), 0 otherwise (also when the GPU is not shared). */
int gpu_share_give(struct gpu_share *s, uint32_t node, int32_t gpu, int32_t milli);
/* Writes shared_first / n_shared of every node after a change. */
void gpu_share_index(struct gpu_share *s, struct policy_node *nodes, uint32_t n_nodes);

#endif
