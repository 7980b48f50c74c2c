/* runtime_model: how long a job runs where it is placed.
 *
 *   runtime = base / speed x slowdown
 *   slowdown = (1 - f) + f x B_ref / B_eff
 *
 * base is the job's trace (or sampled) runtime on the reference hardware
 * (H100 SXM) placed as tightly as its size allows; speed is the node type's
 * factor for the job's class (the slowest type when a job spans several);
 * f is the class's communication fraction. B_ref is the per-GPU bandwidth
 * at the tightest span the job's size allows (NVLink if it fits one NVLink
 * domain, the NIC link if it fits one leaf, else the link), B_eff the one it
 * gets: NVLink inside one domain, the link inside one leaf, and across
 * leaves the link times its max-min fair share of the oversubscribed
 * uplinks (models/fabric.h). A job placed as tightly as possible, without
 * contention, runs base / speed. With checkpoints (interval I, overhead O)
 * the wall time grows by (I + O) / I.
 */
#ifndef FLEETSIM_MODELS_RUNTIME_MODEL_H
#define FLEETSIM_MODELS_RUNTIME_MODEL_H

#include <stdint.h>

#include "models/fabric.h"

/* The tightest span a job of `slots` GPUs can have. domain_gpus 0 means the
 * node is the domain. */
enum span_level runtime_min_span(int32_t slots, int32_t domain_gpus, int32_t node_gpus, int64_t leaf_gpus);
/* Per-GPU bandwidth at a span level. share is the job's max-min fraction of
 * its link demand (1 when uncontended); used only for SPAN_SPINE. */
double runtime_level_gbps(enum span_level level, double nvlink_gbps, double link_gbps, double share);
double runtime_slowdown(double comm_fraction, double ref_gbps, double eff_gbps);
/* Progress per wall-clock second while checkpointing every interval_s with
 * overhead_s each (1 without checkpoints). */
double runtime_checkpoint_efficiency(double interval_s, double overhead_s);

#endif
