/* build: what a loaded scenario builds for a run: the cluster (the initial
 * partitions, then the nodes of each purchase order, in order, which stay
 * absent until delivered) and the models the simulation host runs. The
 * scenario must outlive both: they borrow its catalog and specs.
 */
#ifndef FLEETSIM_SCENARIOS_BUILD_H
#define FLEETSIM_SCENARIOS_BUILD_H

#include "models/cluster.h"
#include "models/simulation.h"
#include "models/workload.h"
#include "scenarios/scenario.h"
#include "sim/err.h"

int scenario_build_cluster(const struct scenario *s, struct cluster *c, struct err *err);
void scenario_build_models(const struct scenario *s, struct sim_models *m);
/* The jobs s generates over its horizon from seed (forecast_seed gives a
 * replication's), its teams interned first in the scenario's order so that
 * team t is team t. w is initialised here; release it either way. */
int scenario_build_workload(const struct scenario *s, uint64_t seed, struct workload *w, struct err *err);

#endif
