#include "scenarios/build.h"

#include <stdlib.h>
#include <string.h>

#include "traces/synth.h"

int scenario_build_cluster(const struct scenario *s, struct cluster *c, struct err *err)
{
    size_t n = s->n_partitions + s->procurement.n_orders;
    struct cluster_group *groups = malloc((n ? n : 1) * sizeof *groups);
    if (!groups)
        return err_set(err, s->path, 0, 0, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < s->n_partitions; i++)
        groups[k++] = (struct cluster_group){s->partitions[i].type, s->partitions[i].nodes, -1};
    for (size_t i = 0; i < s->procurement.n_orders; i++)
        groups[k++] = (struct cluster_group){s->procurement.orders[i].type, s->procurement.orders[i].count,
                                             (int32_t)i};
    int rc = cluster_init_groups(c, groups, k, &s->catalog, &s->fabric, err);
    free(groups);
    return rc;
}

void scenario_build_models(const struct scenario *s, struct sim_models *m)
{
    memset(m, 0, sizeof *m);
    m->failures = s->failures.enabled ? &s->failures : NULL;
    memcpy(m->checkpoint, s->failures.checkpoint, sizeof m->checkpoint);
    m->procurement = &s->procurement;
    memcpy(m->comm_fraction, s->comm_fraction, sizeof m->comm_fraction);
    m->default_class = s->default_class;
    m->seed = s->seed;
    m->service_restart_us = s->service_restart_us;
    m->n_service_teams = s->service_restart_us ? s->workload.n_teams : 0;
}

int scenario_build_workload(const struct scenario *s, uint64_t seed, struct workload *w, struct err *err)
{
    workload_init(w);
    for (size_t t = 0; t < s->workload.n_teams; t++)
        if (string_table_intern(&w->teams, s->workload.teams[t].name) < 0)
            return err_set(err, NULL, 0, 0, "out of memory");
    return synth_generate(&s->workload, 0, s->horizon.length_us, s->start_unix_s, seed, w, err);
}
