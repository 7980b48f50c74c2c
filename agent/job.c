#include "agent/job.h"

#include <stdlib.h>
#include <string.h>

static const char *const state_names[JOB_STATE_COUNT] = {"queued", "running", "completed",
                                                         "failed", "cancelled", "timeout"};

struct agent_job *job_new(void)
{
    struct agent_job *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->start_us = j->end_us = j->first_start_us = j->ended_us = -1;
    j->reserved_us = -1;
    j->cpu_us = j->mem_peak_bytes = -1;
    j->exit_code = -1;
    j->pidfd = -1;
    j->user_index = j->team_index = -1;
    return j;
}

void job_free(struct agent_job *j)
{
    if (!j)
        return;
    free(j->argv_json);
    free(j->env_json);
    free(j->cwd);
    free(j->out_path);
    free(j->err_path);
    free(j->gpu_idx);
    free(j);
}

const char *job_state_name(int state)
{
    return state >= 0 && state < JOB_STATE_COUNT ? state_names[state] : "unknown";
}

int job_state_parse(const char *name)
{
    for (int i = 0; i < JOB_STATE_COUNT; i++)
        if (strcmp(state_names[i], name) == 0)
            return i;
    return -1;
}

int job_state_final(int state)
{
    return state >= JOB_COMPLETED;
}

int job_name_valid(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n >= max)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '_' || *s == '-'))
            return 0;
    return 1;
}
