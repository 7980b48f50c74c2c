/* forecast_task: a forecast's replications described in a few lines of
 * text, so that another process (a Slurm array task on another machine)
 * runs exactly the scenario this one runs: the scenario file (as named from
 * the command's folder) plus everything a command changes in memory before
 * it forecasts: the horizon (plan trims it), each team's growth (compare's
 * sweep), the procurement (plan's candidate orders and their returns), the
 * policy, and the first replication. Numbers are written as C99 hex floats
 * ("%a"), which read back bit for bit, so a remote replication sees the same
 * doubles and draws the same seeds.
 *
 *   kind forecast
 *   scenario PATH
 *   policy SPEC            (absent: the scenario's)
 *   first N
 *   horizon_us N
 *   growth TEAM X          (one per team)
 *   order AT_US TYPE COUNT DIST A B BURN_IN_S   (every order, in order)
 *   retire AT_US TYPE COUNT                     (every retirement, in order)
 */
#ifndef FLEETSIM_CLI_FORECAST_TASK_H
#define FLEETSIM_CLI_FORECAST_TASK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "scenarios/scenario.h"

enum { FORECAST_TASK_POLICY_MAX = 2 * POLICY_SPEC_MAX };

/* Writes the description of s's replications first.. under policy (NULL:
 * the scenario's). Returns 0, or -1 when a value cannot be written on one
 * line (a path or policy with a newline). */
int forecast_task_write(FILE *out, const struct scenario *s, const char *policy, uint32_t first);
/* Loads the scenario spec names into s (initialised by the caller; release
 * it either way) and applies the rest. policy gets the policy ("" for the
 * scenario's). Returns 0, or -1 with the reason in msg. */
int forecast_task_read(const char *spec, struct scenario *s, char *policy, size_t policy_len, uint32_t *first,
                       char *msg, size_t msg_len);

#endif
