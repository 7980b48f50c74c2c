#include "models/fabric.h"

#include <string.h>

/* Progressive filling on the normalised rates x_j in [0, 1]: raise every
 * unfrozen flow's x together until a leaf's uplink fills (or x reaches 1),
 * freeze the flows on that leaf, repeat. Flow j then gets x_j of its demand
 * on every leaf it uses. */
void fabric_max_min(struct fabric_flow *flows, size_t n_flows, const uint32_t *leaf, const double *demand,
                    const double *capacity, size_t n_leaves, double *scratch_load, uint8_t *scratch_frozen)
{
    double *x = scratch_load; /* reuse: first n_flows entries hold x, then per-leaf sums */
    double *frozen_load = scratch_load + n_flows;
    double *open_demand = frozen_load + n_leaves;
    memset(scratch_frozen, 0, n_flows);
    for (size_t j = 0; j < n_flows; j++)
        x[j] = 0;
    size_t open = n_flows;
    while (open) {
        for (size_t l = 0; l < n_leaves; l++)
            frozen_load[l] = open_demand[l] = 0;
        for (size_t j = 0; j < n_flows; j++) {
            for (uint32_t k = 0; k < flows[j].count; k++) {
                uint32_t i = flows[j].first + k;
                if (scratch_frozen[j])
                    frozen_load[leaf[i]] += x[j] * demand[i];
                else
                    open_demand[leaf[i]] += demand[i];
            }
        }
        /* the level at which the first leaf fills */
        double level = 1.0;
        for (size_t l = 0; l < n_leaves; l++) {
            if (open_demand[l] <= 0)
                continue;
            double room = capacity[l] - frozen_load[l];
            double at = room > 0 ? room / open_demand[l] : 0;
            if (at < level)
                level = at;
        }
        /* freeze the flows on saturated leaves (all of them at level 1) */
        size_t frozen_now = 0;
        for (size_t j = 0; j < n_flows; j++) {
            if (scratch_frozen[j])
                continue;
            int saturated = level >= 1.0;
            for (uint32_t k = 0; k < flows[j].count && !saturated; k++) {
                uint32_t l = leaf[flows[j].first + k];
                double used = frozen_load[l] + level * open_demand[l];
                saturated = open_demand[l] > 0 && used >= capacity[l] * (1 - 1e-12);
            }
            if (saturated) {
                x[j] = level;
                scratch_frozen[j] = 1;
                frozen_now++;
            }
        }
        if (!frozen_now) { /* numerical corner: freeze everything at this level */
            for (size_t j = 0; j < n_flows; j++)
                if (!scratch_frozen[j]) {
                    x[j] = level;
                    scratch_frozen[j] = 1;
                    frozen_now++;
                }
        }
        open -= frozen_now;
    }
    for (size_t j = 0; j < n_flows; j++) {
        double total = 0;
        for (uint32_t k = 0; k < flows[j].count; k++)
            total += demand[flows[j].first + k];
        flows[j].rate_gbps = x[j] * total;
    }
}
