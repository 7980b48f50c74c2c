/* cli: what the subcommands share: exit codes, printing diagnostics, reading
 * numbers from the command line. Only cli/ and agent/ print or exit.
 *
 * Exit codes (documented in fleetsim(1)):
 *   0 ok; 1 a gate failed (regression, SLO not met); 2 usage or bad input;
 *   3 I/O error (cannot read or write a file); 4 internal error (a policy
 *   broke its contract, crashed or did not return; out of memory);
 *   130 interrupted (Ctrl-C).
 */
#ifndef FLEETSIM_CLI_CLI_H
#define FLEETSIM_CLI_CLI_H

#include <stdint.h>
#include <jansson.h>
#include <stdio.h>

#include "models/policy_host.h"
#include "models/workload.h"
#include "scenarios/scenario.h"
#include "traces/machines.h"
#include "sim/err.h"
#include "traces/trace.h"

enum cli_exit { CLI_OK = 0, CLI_GATE = 1, CLI_USAGE = 2, CLI_IO = 3, CLI_INTERNAL = 4, CLI_INTERRUPTED = 130 };

/* Prints diagnostics to stderr: every error, and at most `max_warnings`
 * warnings followed by a count of the rest (unless quiet). */
void cli_print_diags(const struct diag_list *d, size_t max_warnings, int quiet);
void cli_print_err(const struct err *e);
/* Prints e; returns `status`, or 4 (CLI_INTERNAL) when memory ran out: that
 * is neither the input's fault (2) nor the files' (3). */
int cli_fail(const struct err *e, int status);
/* `status`, or 4 (CLI_INTERNAL) when e says memory ran out. */
int cli_status_for(const struct err *e, int status);
/* Writes root (taken; NULL: memory ran out building it) to stdout whole,
 * encoded with flags: CLI_OK, or the failure said and its status. */
int cli_print_json(json_t *root, size_t flags);
/* "fleetsim: error: ..." on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Parses a whole decimal integer in [lo, hi]; prints an error naming the
 * option and returns -1 otherwise. */
int cli_parse_int(const char *option, const char *text, int64_t lo, int64_t hi, int64_t *out);
/* Parses seconds (> 0, at most a day) for an option like --decide-timeout. */
int cli_parse_seconds(const char *option, const char *text, double *out);
/* Creates the policy a user named (built-in spec or plugin path) for the
 * simulator, printing any error. decide_timeout_s: 0 for the default.
 * Returns CLI_OK, CLI_USAGE (a wrong spec or plugin) or CLI_IO (a plugin
 * that cannot be read). */
int cli_open_policy(const char *spec, const char *params, double decide_timeout_s, struct policy_host *ph);
/* The same, saying nothing: 0, or -1 with err. */
int cli_policy_open(const char *spec, const char *params, double decide_timeout_s, struct policy_host *ph,
                    struct err *err);
/* Reads a machine or node list (traces/machines.h), printing its
 * diagnostics; returns CLI_OK, CLI_USAGE or CLI_IO. m is initialised here;
 * release it either way. */
int cli_read_machines(const char *path, int quiet, struct machine_list *m);
/* The cluster from a machine list (one node per GPU machine, its model as
 * the node type); desc (len bytes) says where it came from. */
int cli_cluster_from_machines(const char *path, int quiet, struct cluster *c, char *desc, size_t len);
/* Loads a scenario, printing its diagnostics; returns CLI_OK, CLI_USAGE or
 * CLI_IO. s must be initialised (release it either way). */
int cli_load_scenario(const char *path, struct scenario *s, int quiet);
/* Checks an output before anything is read or run, with a message: one
 * that is the same regular file as input or other_input (NULL: none) is
 * refused with
 * CLI_USAGE, one that cannot be written (a missing folder, a folder:
 * atomic_file_probe) with CLI_IO, so a long run is not made for nothing.
 * "-" (standard output) is never refused. Returns CLI_OK or that code. */
int cli_check_output(const char *output, const char *input, const char *other_input);
/* Suggests "try 'fleetsim CMD --help'" after a usage error; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "auto", "swf", "jsonl", "sacct", "philly", ... (TRACE_FORMAT_NAMES) -> *fmt;
 * a usage error (CLI_USAGE) otherwise. */
int cli_parse_format(const char *cmd, const char *text, enum trace_format *fmt);
/* Reads a trace, printing its diagnostics. Returns CLI_OK, CLI_USAGE (bad
 * trace) or CLI_IO (cannot read). w is initialised here; release it always. */
int cli_read_trace(const char *path, enum trace_format fmt, enum swf_convention conv, int quiet,
                   struct workload *w);

/* After a loader ran: prints its diagnostics (and err when they hold no
 * error), releases diags, and maps the outcome to an exit code. */
int cli_finish_load(int rc, struct diag_list *diags, const struct err *err, int quiet);

int cmd_fit(int argc, char **argv);
int cmd_forecast(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* Hidden: what --slurm's batch scripts run on a compute node (cmd_slurm.c). */
int cmd_slurm_task(int argc, char **argv);
int cmd_slurm_merge(int argc, char **argv);
/* One bench cell of a --slurm array: the spec's cell `index` (cmd_bench.c). */
int cmd_bench_task(const char *spec, uint32_t index, int fd);
/* `fleetsim help scenario`: the scenario schema reference on stdout. */
int cmd_help_scenario(void);

#endif
