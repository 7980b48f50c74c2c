/* procurement: capacity that arrives and leaves during a run.
 *
 * A purchase order (date, node type, count) is delivered after a lead time
 * drawn from its distribution (public reports: 8 to 52 weeks for H100-class
 * servers), then spends burn-in days being tested before it takes jobs. A
 * retirement (date, node type, count) drains that many nodes of the type
 * (running jobs finish, nothing new starts) and removes them once empty.
 * Each order draws its lead time from its own PCG stream (RNG_LEAD_TIMES,
 * order index). Nodes of orders are appended after the initial inventory,
 * in order of the orders, so node numbers do not depend on delivery dates.
 */
#ifndef FLEETSIM_MODELS_PROCUREMENT_H
#define FLEETSIM_MODELS_PROCUREMENT_H

#include <stddef.h>
#include <stdint.h>

#include "models/distribution.h"
#include "sim/engine.h"

enum { PROCUREMENT_NAME_MAX = 32 };

struct purchase_order {
    sim_time order_us; /* relative to the simulation start */
    int32_t type;      /* index into the node catalog */
    int64_t count;
    struct distribution lead_time_s;
    double burn_in_s;
};

struct retirement {
    sim_time at_us;
    int32_t type;
    int64_t count;
};

struct procurement_spec {
    struct purchase_order *orders;
    size_t n_orders;
    struct retirement *retirements;
    size_t n_retirements;
};

void procurement_spec_init(struct procurement_spec *p);
void procurement_spec_release(struct procurement_spec *p);
int procurement_add_order(struct procurement_spec *p, const struct purchase_order *o);
int procurement_add_retirement(struct procurement_spec *p, const struct retirement *r);
/* When order i's nodes start taking jobs: order + lead time (drawn from the
 * order's stream for `seed`) + burn-in. */
sim_time procurement_ready_time(const struct procurement_spec *p, size_t i, uint64_t seed);

#endif
