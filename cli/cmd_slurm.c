/* fleetsim _slurm-task DIR INDEX and _slurm-merge DIR COUNT: what the batch
 * scripts of --slurm run on a compute node (slurm_array.h). Hidden: not in
 * the command list, not for people. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/forecast_runner.h"
#include "cli/slurm_array.h"

/* The kinds of work an array carries, by the spec's "kind" line. */
static const struct {
    const char *kind;
    slurm_task_fn run;
} task_kinds[] = {
    {"forecast", forecast_runner_task},
    {"bench", cmd_bench_task},
};

static int parse_count(const char *text, uint32_t *out)
{
    char *end;
    unsigned long v = strtoul(text, &end, 10);
    if (end == text || *end || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Which task function the spec in dir asks for. */
static slurm_task_fn task_kind(const char *spec)
{
    char kind[32];
    if (slurm_spec_get(spec, "kind", kind, sizeof kind) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof task_kinds / sizeof *task_kinds; i++)
        if (!strcmp(kind, task_kinds[i].kind))
            return task_kinds[i].run;
    return NULL;
}

static int run_kind(const char *spec, uint32_t index, int fd)
{
    slurm_task_fn fn = task_kind(spec);
    if (!fn) {
        dprintf(fd, "Ethe task description has no known 'kind' line (a different fleetsim version?)");
        return CLI_USAGE;
    }
    return fn(spec, index, fd);
}

int cmd_slurm_task(int argc, char **argv)
{
    uint32_t index;
    if (argc != 3 || parse_count(argv[2], &index) != 0) {
        cli_error("usage: fleetsim _slurm-task DIR INDEX (run by --slurm's batch script)");
        return CLI_USAGE;
    }
    return slurm_array_task(argv[1], index, run_kind);
}

int cmd_slurm_merge(int argc, char **argv)
{
    uint32_t count;
    if (argc != 3 || parse_count(argv[2], &count) != 0) {
        cli_error("usage: fleetsim _slurm-merge DIR COUNT (run by --slurm's merge job)");
        return CLI_USAGE;
    }
    return slurm_array_merge(argv[1], count);
}
