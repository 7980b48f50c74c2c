/* fleetsim: the command-line entry point. One file per subcommand (cmd_*.c),
 * as git's builtin/ does; this file reads the global options and dispatches. */
#include <errno.h>
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

/* Global options come before the command, as git's do, and hold for every
 * command: the input limits of sim/input_file.h. */
static void set_max_input_mb(int64_t mb)
{
    input_file_set_trace_max((uint64_t)mb << 20);
    input_file_set_small_max((uint64_t)mb << 20);
}

/* FLEETSIM_MAX_TRACE_MB, older than the option: traces only */
static void set_max_trace_mb(int64_t mb)
{
    input_file_set_trace_max((uint64_t)mb << 20);
}

static void set_pipe_wait_s(int64_t s)
{
    input_file_set_pipe_wait_s((int)s);
}

struct global_option {
    const char *name, *arg;
    int64_t lo, hi;
    void (*set)(int64_t value);
    const char *help;
};

enum { MAX_INPUT_MB_MAX = 1 << 24, PIPE_WAIT_S_MAX = 86400 };

static const struct global_option global_options[] = {
    {"--max-input-mb", "N", 1, MAX_INPUT_MB_MAX, set_max_input_mb,
     "largest input read, in MiB, for every input (default 16384 for traces, 64 for others)"},
    {"--pipe-wait", "S", 1, PIPE_WAIT_S_MAX, set_pipe_wait_s,
     "seconds a pipe or FIFO may stay silent before it is given up (default 30)"},
};

/* The environment variables of the limits (older than the options, which
 * override them). Returns 0, or -1 after printing what is wrong. */
static int read_limit_environment(void)
{
    static const struct {
        const char *name;
        int64_t lo, hi;
        void (*set)(int64_t value);
    } vars[] = {{"FLEETSIM_MAX_TRACE_MB", 1, MAX_INPUT_MB_MAX, set_max_trace_mb},
                {"FLEETSIM_PIPE_WAIT_S", 1, PIPE_WAIT_S_MAX, set_pipe_wait_s}};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *text = getenv(vars[i].name);
        if (!text || !*text)
            continue;
        char *end;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || *end || v < vars[i].lo || v > vars[i].hi) {
            cli_error("%s is '%s', expected a whole number from %lld to %lld", vars[i].name, text,
                      (long long)vars[i].lo, (long long)vars[i].hi);
            return -1;
        }
        vars[i].set(v);
    }
    return 0;
}

/* Parses the global options at the start of argv ("--name N" or
 * "--name=N"); returns the index of the command, or -1 after an error. */
static int parse_global_options(int argc, char **argv)
{
    int i = 1;
    for (; i < argc; i++) {
        const struct global_option *g = NULL;
        const char *value = NULL;
        for (size_t k = 0; k < sizeof global_options / sizeof *global_options && !g; k++) {
            size_t n = strlen(global_options[k].name);
            if (strncmp(argv[i], global_options[k].name, n) == 0 && (argv[i][n] == '\0' || argv[i][n] == '=')) {
                g = &global_options[k];
                value = argv[i][n] == '=' ? argv[i] + n + 1 : NULL;
            }
        }
        if (!g)
            break;
        if (!value && i + 1 >= argc) {
            cli_error("option '%s' needs a value", g->name);
            return -1;
        }
        if (!value)
            value = argv[++i];
        int64_t v;
        if (cli_parse_int(g->name, value, g->lo, g->hi, &v) != 0)
            return -1;
        g->set(v);
    }
    return i;
}

static void print_usage(FILE *out)
{
    fprintf(out, "usage: fleetsim [--version] [--help] [--max-input-mb N] [--pipe-wait S] COMMAND [ARGS]\n\n"
                 "fleetsim is a discrete-event GPU-cluster simulator and capacity planner.\n\n"
                 "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\nglobal options (before the command):\n");
    for (size_t i = 0; i < sizeof global_options / sizeof *global_options; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s %s", global_options[i].name, global_options[i].arg);
        fprintf(out, "  %-18s %s\n", name, global_options[i].help);
    }
    fprintf(out, "\n'fleetsim COMMAND --help' tells more; 'fleetsim help scenario' lists the scenario keys;\n"
                 "'man fleetsim' once installed.\n"
                 "exit codes: 0 ok, 1 gate failed, 2 usage or bad input, 3 I/O error, 4 internal error or out of memory\n");
}

int main(int argc, char **argv)
{
    /* GSL's default handler aborts the process; every call's status is checked instead */
    gsl_set_error_handler_off();
    /* the limits' hints name the options that change them */
    input_file_set_hints("--max-input-mb raises it", "--pipe-wait sets the wait");
    if (read_limit_environment() != 0)
        return CLI_USAGE;
    int first = parse_global_options(argc, argv);
    if (first < 0) {
        fprintf(stderr, "try 'fleetsim --help'\n");
        return CLI_USAGE;
    }
    argc -= first - 1;
    argv += first - 1;
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
