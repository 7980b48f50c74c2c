/* periods: a forecast's accounting per period of its horizon. The horizon
 * is cut into n periods [start + k x length, start + (k+1) x length); the
 * simulation host reports what happened over an interval of time (an attempt
 * ran, capacity was present) or at an instant (a failure, work lost, an
 * arrival too big, the backlog), and this module spreads it over the
 * periods it overlaps. The arrays belong to the simulation's result; a
 * `struct periods` only points at them.
 */
#ifndef FLEETSIM_MODELS_PERIODS_H
#define FLEETSIM_MODELS_PERIODS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"

/* Measurements per period of a horizon (planner forecasts). */
struct sim_period_stats {
    double busy_slot_us;     /* slot time used by attempts, overlapping the period */
    double capacity_slot_us; /* slot time present */
    double lost_slot_us;     /* work lost to failures in the period, x slots */
    double peak_queued_slots; /* the backlog: max of slots asked by queued jobs */
    uint64_t failures;
    uint64_t jobs_too_big;    /* arrivals larger than the whole cluster (skipped) */
};

struct periods {
    struct sim_period_stats *stats; /* n entries; NULL: no periods asked for */
    double *team_busy_slot_us;      /* n x n_teams: [period * n_teams + team] */
    size_t n_teams;                 /* the last one holds jobs without a team */
    sim_time start_us, period_us;
    uint32_t n;
};

/* The period holding time t, or NULL outside the periods (or without any). */
struct sim_period_stats *periods_at(const struct periods *p, sim_time t);
/* An attempt of `slots` slots by `team` (-1 or out of range: no team) ran
 * over [from, to): its busy time, by period and by team. */
void periods_add_busy(struct periods *p, int32_t team, double slots, sim_time from, sim_time to);
/* `slots` slots were present over [from, to). */
void periods_add_capacity(struct periods *p, double slots, sim_time from, sim_time to);

#endif
