#include "models/fabric.h"

#include <stdlib.h>
#include <string.h>

static double fill_level(double room, double open)
{
    return room > 0 ? room / open : 0;
}

static int emptied(double open, double capacity)
{
    return open <= 1e-12 * (capacity + 1);
}

/* Marks a position of the open leaves whose leaf the frozen flows emptied:
 * fill levels are never negative. */
#define EMPTIED (-1.0)

/* Progressive filling on the normalised rates x_j in [0, 1]: all open flows
 * rise together (the water level); leaf l fills at level
 * (capacity - load of frozen flows) / (open demand on l); the first leaf to
 * fill freezes its open flows at that level, and the water rises again.
 * Each flow freezes once.
 *
 * The open leaves are an array scanned in order each round; the first with
 * the lowest level fills (a strict "<", so ties go to the earlier
 * position), a leaf leaves by taking the last one's place, and a leaf the
 * frozen flows emptied (to within rounding) leaves when the scan meets it.
 * That order decides how ties break, so it is kept exactly; what a round
 * costs is a pass over one array of cached levels, recomputed only for the
 * leaves the round's frozen flows touched: O(pairs + rounds x leaves)
 * comparisons, no division outside the touched leaves. */
int fabric_max_min(struct fabric_flow *flows, size_t n_flows, const uint32_t *leaf, const double *demand,
                   const double *capacity, size_t n_leaves)
{
    size_t pairs = 0;
    for (size_t j = 0; j < n_flows; j++)
        pairs += flows[j].count;
    /* one block for all the scratch: a solver called at every instant
     * would otherwise scatter ten allocations of changing sizes among the
     * host's long-lived ones, and the heap only grows (measured: 285 MiB
     * peak RSS instead of 43 on the 90-day bench fleet) */
    size_t nl = n_leaves + 1, nf = n_flows + 1;
    size_t bytes = (3 * nl + nf) * sizeof(double) + (nl + 1) * sizeof(size_t) +
                   (2 * nl + pairs + 1 + nf) * sizeof(uint32_t) + nf;
    char *block = malloc(bytes), *at_byte = block;
    if (!block)
        return -1;
    double *room = (double *)(void *)at_byte; /* capacity - frozen load */
    double *open = room + nl;                 /* demand of open flows */
    double *level_at = open + nl;             /* position -> its fill level */
    double *x = level_at + nl;
    size_t *start = (size_t *)(void *)(x + nf); /* CSR: leaf -> flows */
    uint32_t *who = (uint32_t *)(void *)(start + nl + 1);
    uint32_t *active = who + pairs + 1;       /* position -> open leaf */
    uint32_t *pos = active + nl;              /* leaf -> position, UINT32_MAX once closed */
    uint32_t *frozen_now = pos + nl;          /* the flows one round froze */
    uint8_t *frozen = (uint8_t *)(frozen_now + nf);
    memset(open, 0, nl * sizeof *open);
    memset(start, 0, (nl + 1) * sizeof *start);
    memset(frozen, 0, nf);
    int rc = 0;
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
    for (size_t j = 0; j < n_flows; j++) {
        x[j] = 1.0; /* what is never frozen by a full leaf gets all it asks */
        flows[j].bottleneck = FABRIC_NO_LEAF;
    }
    size_t n_active = 0;
    for (size_t l = 0; l < n_leaves; l++) {
        pos[l] = UINT32_MAX;
        if (!emptied(open[l], capacity[l])) {
            pos[l] = (uint32_t)n_active;
            level_at[n_active] = fill_level(room[l], open[l]);
            active[n_active++] = (uint32_t)l;
        }
    }
    double level = 0;
    int any_emptied = 0; /* some position holds EMPTIED */
    while (n_active) {
        size_t full_at = n_active;
        double at = 1.0;
        for (size_t a = 0; any_emptied && a < n_active;) {
            if (level_at[a] == EMPTIED) {
                pos[active[a]] = UINT32_MAX;
                active[a] = active[--n_active];
                level_at[a] = level_at[n_active];
                pos[active[a]] = (uint32_t)a;
                continue;
            }
            if (level_at[a] < at) {
                at = level_at[a];
                full_at = a;
            }
            a++;
        }
        /* the common round: nothing to close, a plain first-minimum pass */
        for (size_t a = 0; !any_emptied && a < n_active; a++) {
            if (level_at[a] < at) {
                at = level_at[a];
                full_at = a;
            }
        }
        any_emptied = 0;
        if (full_at >= n_active)
            break; /* no leaf fills below full demand */
        uint32_t full = active[full_at];
        if (at > level)
            level = at;
        size_t n_frozen_now = 0;
        for (size_t i = start[full]; i < start[full + 1]; i++) {
            uint32_t j = who[i];
            if (frozen[j])
                continue;
            frozen[j] = 1;
            x[j] = level;
            flows[j].bottleneck = full;
            frozen_now[n_frozen_now++] = j;
            for (uint32_t k = 0; k < flows[j].count; k++) {
                uint32_t l = leaf[flows[j].first + k];
                double d = demand[flows[j].first + k];
                open[l] -= d;
                room[l] -= level * d;
            }
        }
        /* the full leaf leaves first, as the scan's next pass would find
         * the array; then the touched leaves' levels are brought up to date */
        open[full] = 0;
        pos[full] = UINT32_MAX;
        active[full_at] = active[--n_active];
        level_at[full_at] = level_at[n_active];
        if (full_at < n_active)
            pos[active[full_at]] = (uint32_t)full_at;
        for (size_t i = 0; i < n_frozen_now; i++) {
            uint32_t j = frozen_now[i];
            for (uint32_t k = 0; k < flows[j].count; k++) {
                uint32_t l = leaf[flows[j].first + k];
                if (pos[l] == UINT32_MAX)
                    continue;
                if (emptied(open[l], capacity[l])) {
                    level_at[pos[l]] = EMPTIED;
                    any_emptied = 1;
                } else {
                    level_at[pos[l]] = fill_level(room[l], open[l]);
                }
            }
        }
    }
    for (size_t j = 0; j < n_flows; j++) {
        double total = 0;
        for (uint32_t k = 0; k < flows[j].count; k++)
            total += demand[flows[j].first + k];
        flows[j].rate_gbps = x[j] * total;
        flows[j].share = x[j];
    }
    free(block);
    return rc;
}
