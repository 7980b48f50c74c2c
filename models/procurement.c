#include "models/procurement.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void procurement_spec_init(struct procurement_spec *p)
{
    memset(p, 0, sizeof *p);
}

void procurement_spec_release(struct procurement_spec *p)
{
    if (!p)
        return;
    free(p->orders);
    free(p->retirements);
    memset(p, 0, sizeof *p);
}

int procurement_add_order(struct procurement_spec *p, const struct purchase_order *o)
{
    struct purchase_order *orders = realloc(p->orders, (p->n_orders + 1) * sizeof *orders);
    if (!orders)
        return -1;
    p->orders = orders;
    p->orders[p->n_orders++] = *o;
    return 0;
}

int procurement_add_retirement(struct procurement_spec *p, const struct retirement *r)
{
    struct retirement *rs = realloc(p->retirements, (p->n_retirements + 1) * sizeof *rs);
    if (!rs)
        return -1;
    p->retirements = rs;
    p->retirements[p->n_retirements++] = *r;
    return 0;
}

sim_time procurement_ready_time(const struct procurement_spec *p, size_t i, uint64_t seed)
{
    const struct purchase_order *o = &p->orders[i];
    struct pcg32 rng;
    pcg32_stream(&rng, seed, RNG_LEAD_TIMES, i);
    double lead_s = distribution_sample(&o->lead_time_s, &rng);
    if (lead_s < 0)
        lead_s = 0;
    return o->order_us + llround((lead_s + o->burn_in_s) * 1e6);
}
