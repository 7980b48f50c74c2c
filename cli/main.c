/* fleetsim: the command-line entry point. One file per subcommand (cmd_*.c),
 * as git's builtin/ does; this file only dispatches. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "cli/cli.h"
#include "sim/input_file.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"forecast", cmd_forecast, "Monte Carlo forecast of a scenario: utilization, waits, offered load and backlog per period"},
    {"plan", cmd_plan, "the cheapest purchase orders that keep a queue-wait SLO in every period"},
    {"compare", cmd_compare, "forecast several scenarios (or a scenario's sweep) side by side"},
    {"fit", cmd_fit, "fit a scenario's workload section to a trace, with the goodness of fit"},
    {"replay", cmd_replay, "replay a job trace under a scheduling policy and summarize it"},
    {"trace", cmd_trace, "convert traces to the native format, or describe them (trace convert|stats)"},
    {"validate", cmd_validate, "check a scenario file and summarize it (see 'fleetsim help scenario')"},
    {"policy", cmd_policy, "list the built-in policy components, or describe one's parameters"},
    {"bench", cmd_bench, "benchmark policies x workloads from a suite file, with a regression gate"},
};

/* Run by --slurm's batch scripts on compute nodes; not listed. */
static const struct command hidden[] = {
    {"_slurm-task", cmd_slurm_task, NULL},
    {"_slurm-merge", cmd_slurm_merge, NULL},
};

static void print_usage(FILE *out)
{
    fprintf(out, "usage: fleetsim [--version] [--help] COMMAND [ARGS]\n\n"
                 "fleetsim is a discrete-event GPU-cluster simulator and capacity planner.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'fleetsim COMMAND --help' tells more; 'fleetsim help scenario' lists the scenario keys;\n"
                 "'man fleetsim' once installed.\n"
                 "exit codes: 0 ok, 1 gate failed, 2 usage or bad input, 3 I/O error, 4 internal error\n");
}

int main(int argc, char **argv)
{
    /* GSL's default handler aborts the process; every call's status is checked instead */
    gsl_set_error_handler_off();
    const char *max_mb = getenv("FLEETSIM_MAX_TRACE_MB");
    if (max_mb && *max_mb) {
        char *end;
        unsigned long long mb = strtoull(max_mb, &end, 10);
        if (*end || mb == 0 || mb > ((uint64_t)1 << 40)) {
            fprintf(stderr, "fleetsim: error: FLEETSIM_MAX_TRACE_MB is '%s', expected a whole number of MiB "
                            "from 1\n", max_mb);
            return CLI_USAGE;
        }
        input_file_set_trace_max((uint64_t)mb << 20);
    }
    const char *wait_s = getenv("FLEETSIM_PIPE_WAIT_S");
    if (wait_s && *wait_s)
        input_file_set_pipe_wait_s(atoi(wait_s));
    if (argc < 2) {
        print_usage(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        /* topics that are not commands: file formats */
        if (argc > 2 && strcmp(name, "help") == 0 && strcmp(argv[2], "scenario") == 0)
            return cmd_help_scenario();
        if (argc > 2 && strcmp(name, "help") == 0) {
            for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) {
                if (!strcmp(argv[2], commands[i].name)) {
                    char *args[] = {argv[2], "--help", NULL};
                    return commands[i].run(2, args);
                }
            }
        }
        print_usage(stdout);
        return CLI_OK;
    }
    if (!strcmp(name, "--version")) {
        printf("fleetsim %s\n", FLEETSIM_VERSION_STRING);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (!strcmp(name, commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++)
        if (!strcmp(name, hidden[i].name))
            return hidden[i].run(argc - 1, argv + 1);
    fprintf(stderr, "fleetsim: error: unknown command '%s'\n", name);
    print_usage(stderr);
    return CLI_USAGE;
}
