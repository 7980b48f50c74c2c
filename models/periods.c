#include "models/periods.h"

struct sim_period_stats *periods_at(const struct periods *p, sim_time t)
{
    if (!p->stats || t < p->start_us)
        return NULL;
    int64_t k = (t - p->start_us) / p->period_us;
    return k < (int64_t)p->n ? &p->stats[k] : NULL;
}

/* How much of [from, to) falls in period k (0 if none). The periods are few
 * (a forecast's horizon), so callers walk them all. */
static sim_time overlap(const struct periods *p, uint32_t k, sim_time from, sim_time to)
{
    sim_time a = p->start_us + (sim_time)k * p->period_us, b = a + p->period_us;
    sim_time lo = from > a ? from : a, hi = to < b ? to : b;
    return hi > lo ? hi - lo : 0;
}

void periods_add_busy(struct periods *p, int32_t team, double slots, sim_time from, sim_time to)
{
    if (!p->stats)
        return;
    size_t t = team >= 0 && (size_t)team < p->n_teams - 1 ? (size_t)team : p->n_teams - 1;
    for (uint32_t k = 0; k < p->n; k++) {
        sim_time o = overlap(p, k, from, to);
        if (o > 0) {
            p->stats[k].busy_slot_us += slots * (double)o;
            p->team_busy_slot_us[k * p->n_teams + t] += slots * (double)o;
        }
    }
}

void periods_add_capacity(struct periods *p, double slots, sim_time from, sim_time to)
{
    if (!p->stats)
        return;
    for (uint32_t k = 0; k < p->n; k++) {
        sim_time o = overlap(p, k, from, to);
        if (o > 0)
            p->stats[k].capacity_slot_us += slots * (double)o;
    }
}
