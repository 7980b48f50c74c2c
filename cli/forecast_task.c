#include "cli/forecast_task.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/slurm_array.h"
#include "models/procurement.h"

int forecast_task_write(FILE *out, const struct scenario *s, const char *policy, uint32_t first)
{
    if (!s->path || strchr(s->path, '\n') || (policy && strchr(policy, '\n')))
        return -1;
    fprintf(out, "kind forecast\nscenario %s\n", s->path);
    if (policy)
        fprintf(out, "policy %s\n", policy);
    fprintf(out, "first %" PRIu32 "\nhorizon_us %" PRId64 "\n", first, (int64_t)s->horizon.length_us);
    for (size_t t = 0; t < s->workload.n_teams; t++)
        fprintf(out, "growth %zu %a\n", t, s->workload.teams[t].growth_per_quarter);
    for (size_t i = 0; i < s->procurement.n_orders; i++) {
        const struct purchase_order *o = &s->procurement.orders[i];
        fprintf(out, "order %" PRId64 " %" PRId32 " %" PRId64 " %d %a %a %a\n", (int64_t)o->order_us, o->type,
                o->count, (int)o->lead_time_s.kind, o->lead_time_s.a, o->lead_time_s.b, o->burn_in_s);
    }
    for (size_t i = 0; i < s->procurement.n_retirements; i++) {
        const struct retirement *r = &s->procurement.retirements[i];
        fprintf(out, "retire %" PRId64 " %" PRId32 " %" PRId64 "\n", (int64_t)r->at_us, r->type, r->count);
    }
    return 0;
}

static int bad(char *msg, size_t len, const char *what, const char *line)
{
    snprintf(msg, len, "bad %s line in the task description: '%.200s'", what, line);
    return -1;
}

int forecast_task_read(const char *spec, struct scenario *s, char *policy, size_t policy_len, uint32_t *first,
                       char *msg, size_t msg_len)
{
    char path[SLURM_PATH_MAX], value[64];
    if (slurm_spec_get(spec, "scenario", path, sizeof path) != 0 || slurm_spec_get(spec, "first", value, sizeof value))
        return bad(msg, msg_len, "missing scenario or first", spec);
    *first = (uint32_t)strtoul(value, NULL, 10);
    if (slurm_spec_get(spec, "policy", policy, policy_len) != 0)
        policy[0] = '\0';
    if (cli_load_scenario(path, s, 1) != CLI_OK) {
        snprintf(msg, msg_len, "the scenario '%.1000s' did not load on this node (its messages are in the task's log)",
                 path);
        return -1;
    }
    s->procurement.n_orders = 0; /* the command's, in full, replace the file's */
    s->procurement.n_retirements = 0;
    for (const char *line = spec; *line;) {
        char text[512];
        size_t n = strcspn(line, "\n");
        snprintf(text, sizeof text, "%.*s", (int)(n < sizeof text ? n : sizeof text - 1), line);
        line += n;
        if (*line)
            line++;
        int64_t at, count;
        int32_t type;
        int kind;
        size_t team;
        double g, a, b, burn;
        long long horizon;
        if (!strncmp(text, "horizon_us ", 11)) {
            if (sscanf(text + 11, "%lld", &horizon) != 1)
                return bad(msg, msg_len, "horizon_us", text);
            s->horizon.length_us = (sim_time)horizon;
        } else if (!strncmp(text, "growth ", 7)) {
            if (sscanf(text + 7, "%zu %la", &team, &g) != 2 || team >= s->workload.n_teams)
                return bad(msg, msg_len, "growth", text);
            s->workload.teams[team].growth_per_quarter = g;
        } else if (!strncmp(text, "order ", 6)) {
            if (sscanf(text + 6, "%" SCNd64 " %" SCNd32 " %" SCNd64 " %d %la %la %la", &at, &type, &count, &kind, &a,
                       &b, &burn) != 7 || kind < DIST_FIXED || kind > DIST_LOGNORMAL || type < 0 ||
                (size_t)type >= s->catalog.n)
                return bad(msg, msg_len, "order", text);
            struct purchase_order o = {(sim_time)at, type, count, {(enum distribution_kind)kind, a, b}, burn};
            if (procurement_add_order(&s->procurement, &o) != 0)
                return bad(msg, msg_len, "order (out of memory)", text);
        } else if (!strncmp(text, "retire ", 7)) {
            if (sscanf(text + 7, "%" SCNd64 " %" SCNd32 " %" SCNd64, &at, &type, &count) != 3 || type < 0 ||
                (size_t)type >= s->catalog.n)
                return bad(msg, msg_len, "retire", text);
            struct retirement r = {(sim_time)at, type, count};
            if (procurement_add_retirement(&s->procurement, &r) != 0)
                return bad(msg, msg_len, "retire (out of memory)", text);
        }
    }
    return 0;
}
