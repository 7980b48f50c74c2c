#include "scenarios/scenario.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/catalog.h"
#include "scenarios/fill.h"
#include "scenarios/reader.h"
#include "sim/input_file.h"

/* The sections, in the order they are filled: the catalog before the
 * partitions that name its types, the cluster before the procurement that
 * retires its nodes, runtime (the default class) before the workload, the
 * cluster before the plan's default candidates. A new section is a row here
 * plus its schema rows. */
static const struct section {
    const char *key;
    int (*fill)(struct fill *f, yaml_node_t *root);
} sections[] = {
    {"(top level)", fill_top},    {"node_types", fill_node_types}, {"cluster", fill_cluster},
    {"runtime", fill_runtime},    {"failures", fill_failures},     {"procurement", fill_procurement},
    {"workload", fill_workload},  {"horizon", fill_horizon},       {"workload", fill_workload_checks},
    {"forecast", fill_forecast},
    {"plan", fill_plan},          {"sweep", fill_sweep},
};

void scenario_init(struct scenario *s)
{
    memset(s, 0, sizeof *s);
    s->seed = 1;
    node_catalog_init(&s->catalog);
    failure_spec_init(&s->failures);
    procurement_spec_init(&s->procurement);
    s->fabric = (struct fabric_spec){FABRIC_NONE, 32, 8, 1.0, 400.0};
    s->default_class = JOB_CLASS_TRAINING;
    s->comm_fraction[JOB_CLASS_TRAINING] = 0.2;
    s->comm_fraction[JOB_CLASS_FINETUNE] = 0.1;
    s->comm_fraction[JOB_CLASS_INFERENCE] = 0.0;
    /* the planner's sections: the schema rows' defaults */
    workload_spec_init(&s->workload);
    s->horizon = (struct horizon_spec){52 * 7 * 86400 * SIM_US_PER_S, PERIOD_QUARTER, 13 * 7 * 86400 * SIM_US_PER_S,
                                       86400 * SIM_US_PER_S};
    s->forecast.replications = 20;
    snprintf(s->forecast.policy, sizeof s->forecast.policy, "fcfs+easy");
    s->plan.confidence = 0.9;
    s->plan.max_nodes = 1024;
    s->plan.step_nodes = 1;
    s->plan.lead_time_s = (struct distribution){DIST_FIXED, 26 * 7 * 86400.0, 0};
    s->plan.burn_in_s = 7 * 86400.0;
    s->plan.rent_type = -1;
    s->plan.rent_min_term_s = 30 * 86400.0;
    s->plan.rent_lead_time_s = 7 * 86400.0;
    s->plan.pue = 1.0;
}

void scenario_release(struct scenario *s)
{
    if (!s)
        return;
    free(s->path);
    free(s->service_restart_us);
    node_catalog_release(&s->catalog);
    free(s->partitions);
    failure_spec_release(&s->failures);
    procurement_spec_release(&s->procurement);
    workload_spec_release(&s->workload);
    free(s->plan.candidate_types);
    free(s->plan.slos);
    free(s->plan.policies);
    free(s->sweep.growth);
    free(s->sweep.policies);
    memset(s, 0, sizeof *s);
}

/* The first error added since `from` becomes err, so callers that look only
 * at err see the root cause. */
static int fail_with_first(const struct diag_list *d, size_t from, const char *name, struct err *err)
{
    for (size_t i = from; d && i < d->n; i++) {
        const struct diag *g = &d->items[i];
        if (g->level == DIAG_ERROR)
            return err_set(err, g->file, g->line, g->col, "%s", g->msg);
    }
    return err_set(err, name, 0, 0, "invalid scenario");
}

static int fill_sections(struct reader *r, struct scenario *s, int catalog_only)
{
    struct fill f = {r, s, 0, 0};
    yaml_node_t *root = reader_root(r);
    if (!root || root->type != YAML_MAPPING_NODE)
        return 0;
    for (size_t i = 0; i < sizeof sections / sizeof *sections; i++) {
        if (catalog_only && sections[i].fill != fill_node_types)
            continue;
        if (sections[i].fill(&f, root) != 0)
            return -1;
    }
    return 0;
}

/* A catalog document holds node types and nothing else. */
static void catalog_check_top(struct reader *r)
{
    yaml_node_t *root = reader_root(r);
    if (!root || root->type != YAML_MAPPING_NODE)
        return;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        if (k && strcmp(reader_text(k), "node_types") != 0 && schema_find(reader_text(k)))
            reader_error(r, k, "a node type catalog holds only 'node_types', not '%s'", reader_text(k));
    }
}

/* Diagnostics in file order (walk and fill find them in different passes);
 * those without a line (the error cap) stay last. Insertion sort: stable,
 * and there are at most a few dozen. */
static void sort_diags(struct diag_list *d, size_t from)
{
    for (size_t i = from + 1; d && i < d->n; i++) {
        struct diag g = d->items[i];
        long gl = g.line ? g.line : LONG_MAX;
        size_t j = i;
        for (; j > from; j--) {
            const struct diag *p = &d->items[j - 1];
            long pl = p->line ? p->line : LONG_MAX;
            if (pl < gl || (pl == gl && p->col <= g.col))
                break;
            d->items[j] = d->items[j - 1];
        }
        d->items[j] = g;
    }
}


/* Reads one document into s; catalog_only: a catalog file. */
static int scenario_parse(const char *name, const char *data, size_t len, struct scenario *s, int catalog_only,
                          struct diag_list *diags, struct err *err)
{
    size_t from = diags ? diags->n : 0;
    struct reader r;
    int rc = 0;
    if (reader_open(&r, name, data, len, diags) == 0) {
        r.top_optional = catalog_only;
        reader_walk(&r);
        if (catalog_only)
            catalog_check_top(&r);
        rc = fill_sections(&r, s, catalog_only);
    }
    size_t errors = r.errors;
    reader_close(&r);
    sort_diags(diags, from);
    if (rc != 0)
        return err_set(err, name, 0, 0, "out of memory");
    return errors ? fail_with_first(diags, from, name, err) : 0;
}

int scenario_read_catalog(const char *name, const char *data, size_t len, struct node_catalog *c,
                          struct diag_list *diags, struct err *err)
{
    struct scenario tmp;
    scenario_init(&tmp);
    tmp.catalog = *c; /* borrowed for the read, handed back after */
    int rc = scenario_parse(name, data, len, &tmp, 1, diags, err);
    *c = tmp.catalog;
    node_catalog_init(&tmp.catalog);
    scenario_release(&tmp);
    return rc;
}

int scenario_load_buffer(const char *name, const char *data, size_t len, struct scenario *s,
                         struct diag_list *diags, struct err *err)
{
    free(s->path);
    s->path = strdup(name);
    if (!s->path)
        return err_set(err, name, 0, 0, "out of memory");
    if (catalog_load_builtin(&s->catalog, diags, err) != 0)
        return -1;
    if (scenario_parse(name, data, len, s, 0, diags, err) != 0)
        return -1;
    /* what every run of it hands the simulator: services restart in place */
    free(s->service_restart_us);
    s->service_restart_us = calloc(s->workload.n_teams + 1, sizeof *s->service_restart_us);
    if (!s->service_restart_us)
        return err_set(err, name, 0, 0, "out of memory");
    for (size_t t = 0; t < s->workload.n_teams; t++)
        if (s->workload.teams[t].is_service)
            s->service_restart_us[t] = (sim_time)llround(s->workload.teams[t].service_restart_s * 1e6);
    return 0;
}

int scenario_load(const char *path, struct scenario *s, struct diag_list *diags, struct err *err)
{
    size_t len;
    char *data;
    if (input_file_read(path, "scenario", input_file_small_max_bytes(), &data, &len, err) != 0)
        return -1;
    int rc = scenario_load_buffer(path, data, len, s, diags, err);
    free(data);
    return rc;
}

int64_t scenario_initial_gpus(const struct scenario *s)
{
    int64_t gpus = 0;
    for (size_t i = 0; i < s->n_partitions; i++)
        gpus += s->partitions[i].nodes * s->catalog.types[s->partitions[i].type].gpus;
    return gpus;
}

double scenario_expected_failures_per_day(const struct scenario *s)
{
    if (!s->failures.enabled)
        return 0;
    double per_hour = 0;
    for (size_t i = 0; i < s->n_partitions; i++) {
        int32_t gpus = s->catalog.types[s->partitions[i].type].gpus;
        for (size_t c = 0; c < s->failures.n_categories; c++) {
            const struct failure_category *fc = &s->failures.categories[c];
            per_hour += (double)s->partitions[i].nodes * fc->rate_per_unit_hour * failure_scope_units(fc->scope, gpus);
        }
    }
    return per_hour * 24;
}

