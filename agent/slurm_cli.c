#include "agent/slurm_cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/client.h"
#include "agent/config.h"
#include "agent/slurm_backend.h"

static const char submit_usage[] =
    "usage: fleetsim-agent submit --backend slurm --partition NAME [options] [--] COMMAND [ARGS...]\n"
    "\n"
    "Submits COMMAND to a Slurm partition that fleetsim-agent schedules (run\n"
    "--backend slurm): through sbatch, as you, in the current directory. The job\n"
    "arrives held; the agent pins the nodes its policy chooses and releases it.\n"
    "Slurm sets CUDA_VISIBLE_DEVICES. Prints the Slurm job id. Output goes where\n"
    "sbatch puts it (./slurm-ID.out).\n"
    "\n"
    "options:\n"
    "      --partition NAME  the partition (required)\n"
    "  -g, --gpus N          GPUs the whole job needs (default 1)\n"
    "  -N, --nodes N         nodes, each with GPUS/N GPUs (default 1)\n"
    "  -t, --time LIMIT      wall-time limit: 90s, 30m, 1.5h, 2d, 1:30:00 (rounded up\n"
    "                        to whole minutes, Slurm's unit; default: the partition's)\n"
    "      --team TEAM       the Slurm account\n"
    "  -J, --name NAME       the job name\n"
    "  -h, --help            this help\n"
    "\n"
    "example: fleetsim-agent submit --backend slurm --partition gpu --gpus 16 --nodes 2 -- ./train.sh\n";

int slurm_cli_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return 0;
        if (strcmp(argv[i], "--backend=slurm") == 0 || (strcmp(argv[i], "--backend") == 0 && i + 1 < argc &&
                                                         strcmp(argv[i + 1], "slurm") == 0))
            return 1;
    }
    return 0;
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fleetsim-agent: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\ntry 'fleetsim-agent submit --backend slurm --help'\n");
    va_end(ap);
    return AGENT_USAGE;
}

static int parse_count(const char *text, const char *option, int *out)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 1 || v > 100000)
        return usage_error("'%s' needs a whole number from 1 to 100000", option);
    *out = (int)v;
    return AGENT_OK;
}

int slurm_cli_submit(int argc, char **argv)
{
    enum { O_BACKEND = 256, O_PARTITION, O_TEAM };
    static const struct option opts[] = {
        {"backend", required_argument, NULL, O_BACKEND}, {"partition", required_argument, NULL, O_PARTITION},
        {"gpus", required_argument, NULL, 'g'},          {"nodes", required_argument, NULL, 'N'},
        {"time", required_argument, NULL, 't'},          {"team", required_argument, NULL, O_TEAM},
        {"name", required_argument, NULL, 'J'},          {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct slurm_submit s = {.gpus = 1, .nodes = 1};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:g:N:t:J:h", opts, NULL)) != -1) {
        switch (c) {
        case O_BACKEND:
            if (strcmp(optarg, "slurm") != 0)
                return usage_error("unknown backend '%s' (local, slurm)", optarg);
            break;
        case O_PARTITION: s.partition = optarg; break;
        case 'g':
            if (parse_count(optarg, "--gpus", &s.gpus) != AGENT_OK)
                return AGENT_USAGE;
            break;
        case 'N':
            if (parse_count(optarg, "--nodes", &s.nodes) != AGENT_OK)
                return AGENT_USAGE;
            break;
        case 't':
            if (config_parse_duration(optarg, &s.time_us) != 0 || s.time_us <= 0)
                return usage_error("bad time limit '%s' (e.g. 90s, 30m, 1.5h, 1:30:00)", optarg);
            break;
        case O_TEAM: s.account = optarg; break;
        case 'J': s.name = optarg; break;
        case 'h': fputs(submit_usage, stdout); return AGENT_OK;
        case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!s.partition)
        return usage_error("%s", "--backend slurm needs --partition NAME");
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc)
        return usage_error("%s", "no command to run (fleetsim-agent submit --backend slurm ... -- COMMAND)");
    if (s.gpus % s.nodes != 0)
        return usage_error("%s", "--gpus must split evenly over --nodes (Slurm gives each node the same GPUs)");
    s.argv = argv + optind;
    s.argc = argc - optind;
    struct err err;
    err_clear(&err);
    if (slurm_backend_submit(&s, &err) != 0) {
        fprintf(stderr, "fleetsim-agent: error: %s\n", err.msg);
        return AGENT_IO;
    }
    return AGENT_OK;
}
