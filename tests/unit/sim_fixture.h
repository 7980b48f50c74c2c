/* sim_fixture: small workloads and clusters for policy and simulation tests. */
#ifndef FLEETSIM_TESTS_UNIT_SIM_FIXTURE_H
#define FLEETSIM_TESTS_UNIT_SIM_FIXTURE_H

#include "models/cluster.h"
#include "models/simulation.h"
#include "models/workload.h"

struct fixture_job {
    double submit_s, runtime_s, limit_s; /* limit -1 = none */
    int slots;
};

void fixture_workload(struct workload *w, const struct fixture_job *jobs, size_t n);
/* A random workload of n jobs for a cluster of `slots` slots (seeded PCG). */
void fixture_random_workload(struct workload *w, size_t n, int max_slots, uint64_t seed);
/* Replays w on nodes x slots under spec; fills start times (seconds) in
 * starts[] (w->n entries, -1 if never started). Returns 0 on success. */
int fixture_replay(const struct workload *w, int nodes, int slots, const char *spec, double *starts,
                   struct sim_options *opt);

/* Reads a native trace (JSONL) from text into w (initialized here);
 * prints the error and returns non-zero when it does not read. */
int fixture_read_jsonl(struct workload *w, const char *text);

/* simulation_run for a policy created by hand (ops and state): the host
 * adopts it for the run and leaves it to the caller. */
int fixture_run_ops(const struct workload *w, const struct cluster *c, const struct policy_ops *ops, void *state,
                    const struct sim_options *opt, struct sim_result *res, struct err *err);

#endif
