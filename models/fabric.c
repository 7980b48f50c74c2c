#include "models/fabric.h"

#include <stdlib.h>
#include <string.h>

static double fill_level(double room, double open)
{
    return room > 0 ? room / open : 0;
}

/* Progressive filling on the normalised rates x_j in [0, 1]: all open flows
 * rise together (the water level); leaf l fills at level
 * (capacity - load of frozen flows) / (open demand on l); the first leaf to
 * fill freezes its open flows at that level, and the water rises again.
 * Each flow freezes once: O(pairs + rounds x leaves). */
int fabric_max_min(struct fabric_flow *flows, size_t n_flows, const uint32_t *leaf, const double *demand,
                   const double *capacity, size_t n_leaves)
{
    size_t pairs = 0;
    for (size_t j = 0; j < n_flows; j++)
        pairs += flows[j].count;
    double *room = malloc((n_leaves + 1) * sizeof *room); /* capacity - frozen load */
    double *open = calloc(n_leaves + 1, sizeof *open);    /* demand of open flows */
    size_t *start = calloc(n_leaves + 2, sizeof *start); /* CSR: leaf -> flows */
    uint32_t *who = malloc((pairs + 1) * sizeof *who);
    double *x = malloc((n_flows + 1) * sizeof *x);
    uint8_t *frozen = calloc(n_flows + 1, 1);
    uint32_t *active = malloc((n_leaves + 1) * sizeof *active);
    int rc = 0;
    if (!room || !open || !start || !who || !x || !frozen || !active) {
        rc = -1;
        goto done;
    }
    for (size_t l = 0; l < n_leaves; l++)
        room[l] = capacity[l];
    for (size_t j = 0; j < n_flows; j++)
        for (uint32_t k = 0; k < flows[j].count; k++) {
            uint32_t l = leaf[flows[j].first + k];
            open[l] += demand[flows[j].first + k];
            start[l + 2]++;
        }
    for (size_t l = 2; l < n_leaves + 2; l++)
        start[l] += start[l - 1];
    for (size_t j = 0; j < n_flows; j++)
        for (uint32_t k = 0; k < flows[j].count; k++)
            who[start[leaf[flows[j].first + k] + 1]++] = (uint32_t)j;
    /* start[l]..start[l+1] now lists the flows on leaf l */
    for (size_t j = 0; j < n_flows; j++)
        x[j] = 1.0; /* what is never frozen by a full leaf gets all it asks */
    /* the leaves still open, shrinking as they fill */
    size_t n_active = 0;
    for (size_t l = 0; l < n_leaves; l++)
        if (open[l] > 1e-12 * (capacity[l] + 1))
            active[n_active++] = (uint32_t)l;
    double level = 0;
    while (n_active) {
        size_t full_at = n_active;
        double at = 1.0;
        for (size_t a = 0; a < n_active;) {
            uint32_t l = active[a];
            if (open[l] <= 1e-12 * (capacity[l] + 1)) { /* emptied by frozen flows */
                active[a] = active[--n_active];
                continue;
            }
            double t = fill_level(room[l], open[l]);
            if (t < at) {
                at = t;
                full_at = a;
            }
            a++;
        }
        if (full_at >= n_active)
            break; /* no leaf fills below full demand */
        uint32_t full = active[full_at];
        if (at > level)
            level = at;
        for (size_t i = start[full]; i < start[full + 1]; i++) {
            uint32_t j = who[i];
            if (frozen[j])
                continue;
            frozen[j] = 1;
            x[j] = level;
            for (uint32_t k = 0; k < flows[j].count; k++) {
                uint32_t l = leaf[flows[j].first + k];
                double d = demand[flows[j].first + k];
                open[l] -= d;
                room[l] -= level * d;
            }
        }
        open[full] = 0;
        active[full_at] = active[--n_active];
    }
    for (size_t j = 0; j < n_flows; j++) {
        double total = 0;
        for (uint32_t k = 0; k < flows[j].count; k++)
            total += demand[flows[j].first + k];
        flows[j].rate_gbps = x[j] * total;
    }
done:
    free(room);
    free(open);
    free(start);
    free(who);
    free(x);
    free(frozen);
    free(active);
    return rc;
}
