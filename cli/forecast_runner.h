/* forecast_runner: runs a scenario's Monte Carlo replications in parallel
 * worker processes (fork; each child runs one replication and sends its
 * results back through a pipe), or as a Slurm job array (--slurm: each task
 * writes the same message to a part file; see slurm_array.h), with progress
 * on stderr and a clean stop on Ctrl-C. Either way every result comes back
 * through one collect step and is placed by replication index, so results
 * do not depend on how many workers ran them, nor where. Shared by
 * forecast, plan and compare.
 */
#ifndef FLEETSIM_CLI_FORECAST_RUNNER_H
#define FLEETSIM_CLI_FORECAST_RUNNER_H

#include <stdint.h>

#include "scenarios/forecast.h"

struct slurm_session;
struct slurm_array;

struct forecast_run_options {
    uint32_t replications;
    int jobs;             /* worker processes */
    const char *policy;   /* NULL: the scenario's */
    const char *label;    /* for progress lines */
    int quiet;
    uint32_t first_replication; /* replications first .. first + replications - 1 (fresh seeds for a check) */
    struct slurm_session *slurm; /* NULL: local workers; else a job array on this session (jobs unused) */
    struct slurm_array *submitted; /* with slurm: the array forecast_runner_submit queued (NULL: submit now) */
};

/* Fills r (forecast_result_init is done here). Returns 0; 1 if interrupted
 * (r->partial set, r->completed replications kept); -1 on error (message
 * printed). */
int forecast_runner_run(const struct scenario *s, const struct forecast_run_options *o, struct forecast_result *r);
/* With o->slurm: puts the forecast's job array in the queue without waiting
 * for it, so that several forecasts run at once (compare's variants); a
 * later forecast_runner_run with o->submitted = a waits for it and collects
 * it. The description is taken now: s may change afterwards. Returns 0, or
 * -1 (said). */
int forecast_runner_submit(const struct scenario *s, const struct forecast_run_options *o, struct slurm_array *a);
/* `fleetsim _slurm-task` for a forecast: runs replication first + index of
 * the scenario spec describes (forecast_task.h) and writes its message to
 * fd. Returns the exit status. */
int forecast_runner_task(const char *spec, uint32_t index, int fd);
/* True once Ctrl-C was pressed during a run. */
int forecast_runner_interrupted(void);

#endif
