#include "models/runtime_model.h"

enum span_level runtime_min_span(int32_t slots, int32_t domain_gpus, int32_t node_gpus, int64_t leaf_gpus)
{
    int32_t domain = domain_gpus > 0 ? domain_gpus : node_gpus;
    if (slots <= domain)
        return SPAN_NVLINK;
    if (leaf_gpus > 0 && slots <= leaf_gpus)
        return SPAN_LEAF;
    return SPAN_SPINE;
}

double runtime_level_gbps(enum span_level level, double nvlink_gbps, double link_gbps, double share)
{
    switch (level) {
    case SPAN_NVLINK:
        return nvlink_gbps;
    case SPAN_LEAF:
        return link_gbps;
    case SPAN_SPINE:
        return link_gbps * share;
    }
    return link_gbps;
}

double runtime_slowdown(double comm_fraction, double ref_gbps, double eff_gbps)
{
    /* A placement never runs faster than the reference one: B_eff above
     * B_ref (a big job that happens to land on one leaf) counts as equal. */
    if (comm_fraction <= 0 || ref_gbps <= eff_gbps)
        return 1.0;
    if (eff_gbps <= 0)
        return 1e9; /* no bandwidth at all: the job makes no progress */
    return (1.0 - comm_fraction) + comm_fraction * ref_gbps / eff_gbps;
}

double runtime_checkpoint_efficiency(double interval_s, double overhead_s)
{
    if (interval_s <= 0 || overhead_s <= 0)
        return 1.0;
    return interval_s / (interval_s + overhead_s);
}
