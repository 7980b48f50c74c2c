/* build: what a loaded scenario builds for a run: the cluster (the initial
 * partitions, then the nodes of each purchase order, in order, which stay
 * absent until delivered) and the models the simulation host runs. The
 * scenario must outlive both: they borrow its catalog and specs.
 */
#ifndef FLEETSIM_SCENARIOS_BUILD_H
#define FLEETSIM_SCENARIOS_BUILD_H

#include "models/cluster.h"
#include "models/simulation.h"
#include "scenarios/scenario.h"
#include "sim/err.h"

int scenario_build_cluster(const struct scenario *s, struct cluster *c, struct err *err);
void scenario_build_models(const struct scenario *s, struct sim_models *m);

#endif
