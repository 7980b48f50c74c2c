/* forecast_runner: runs a scenario's Monte Carlo replications in parallel
 * worker processes (fork; each child runs one replication and sends its
 * results back through a pipe), with progress on stderr and a clean stop on
 * Ctrl-C. Results are placed by replication index, so they do not depend on
 * how many workers ran them. Shared by forecast, plan and compare.
 */
#ifndef FLEETSIM_CLI_FORECAST_RUNNER_H
#define FLEETSIM_CLI_FORECAST_RUNNER_H

#include <stdint.h>

#include "scenarios/forecast.h"

struct forecast_run_options {
    uint32_t replications;
    int jobs;             /* worker processes */
    const char *policy;   /* NULL: the scenario's */
    const char *label;    /* for progress lines */
    int quiet;
    uint32_t first_replication; /* replications first .. first + replications - 1 (fresh seeds for a check) */
};

/* Fills r (forecast_result_init is done here). Returns 0; 1 if interrupted
 * (r->partial set, r->completed replications kept); -1 on error (message
 * printed). */
int forecast_runner_run(const struct scenario *s, const struct forecast_run_options *o, struct forecast_result *r);
/* True once Ctrl-C was pressed during a run. */
int forecast_runner_interrupted(void);

#endif
