/* fill: the planner's sections: horizon, forecast, plan and sweep.
 * Cross-field rules: the SLO's grammar and metric, policies the registry
 * knows, candidate node types that exist, step_nodes <= max_nodes, a time
 * series of at most a million samples.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/registry.h"
#include "scenarios/fill.h"
#include "scenarios/policy_teams.h"
#include "scenarios/plan.h"
#include "sim/units.h"

enum { HORIZON_MAX_SAMPLES = 1000000 };

int fill_policy_ok(struct fill *f, yaml_node_t *node, const char *shown, const char *spec)
{
    size_t n = strlen(spec);
    if (n >= POLICY_SPEC_MAX) { /* plugin paths too: a path cut short names another file */
        reader_error(f->r, node, "key '%s' is %zu characters long, more than the %d allowed", shown, n,
                     POLICY_SPEC_MAX - 1);
        return 0;
    }
    if (strchr(spec, '/') || (n > 3 && strcmp(spec + n - 3, ".so") == 0))
        return 1; /* a plugin: the host loads it */
    const struct policy_ops *ops;
    void *state = NULL;
    char msg[256], resolved[POLICY_SPEC_MAX * 2];
    if (policy_teams_resolve(&f->s->workload, spec, resolved, sizeof resolved, msg, sizeof msg) != 0) {
        reader_error(f->r, node, "key '%s': %s", shown, msg);
        return 0;
    }
    if (policy_registry_create(resolved, &ops, &state, msg, sizeof msg) != 0) {
        reader_error(f->r, node, "key '%s' is '%s': %s", shown, spec, msg);
        return 0;
    }
    if (ops->destroy)
        ops->destroy(state);
    return 1;
}

int fill_horizon(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *m = reader_get(f->r, root, "horizon");
    struct horizon_spec *h = &f->s->horizon;
    double length_s = (double)h->length_us / 1e6, sample_s = (double)h->sample_us / 1e6;
    struct schema_value v;
    if (reader_value(f->r, m, "horizon.period", &v) >= READER_DEFAULT) {
        static const struct {
            const char *name;
            enum period_kind kind;
            sim_time us;
        } periods[] = {{"week", PERIOD_WEEK, 7 * 86400 * SIM_US_PER_S},
                       {"month", PERIOD_MONTH, 365 * 86400 * SIM_US_PER_S / 12},
                       {"quarter", PERIOD_QUARTER, 13 * 7 * 86400 * SIM_US_PER_S}};
        for (size_t i = 0; i < sizeof periods / sizeof *periods; i++) {
            if (strcmp(v.text, periods[i].name) == 0) {
                h->period = periods[i].kind;
                h->period_us = periods[i].us;
            }
        }
    }
    if (fill_number(f, m, "horizon.length", &length_s) == READER_BAD ||
        fill_number(f, m, "horizon.sample", &sample_s) == READER_BAD)
        return 0;
    h->length_us = llround(length_s * 1e6);
    h->sample_us = llround(sample_s * 1e6);
    if (h->sample_us > 0 && h->length_us / h->sample_us > HORIZON_MAX_SAMPLES) {
        char len[32], smp[32];
        units_format_duration(len, sizeof len, length_s);
        units_format_duration(smp, sizeof smp, sample_s);
        yaml_node_t *at = reader_get(f->r, m, "sample");
        reader_error(f->r, at ? at : m, "key 'horizon.sample' is %s: more than %d samples over %s", smp,
                     HORIZON_MAX_SAMPLES, len);
    }
    return 0;
}

int fill_forecast(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *m = reader_get(f->r, root, "forecast");
    struct forecast_spec *fs = &f->s->forecast;
    int64_t reps = fs->replications;
    fill_int(f, m, "forecast.replications", &reps);
    fs->replications = (uint32_t)reps;
    struct schema_value v;
    if (reader_value(f->r, m, "forecast.policy", &v) == READER_GIVEN &&
        fill_policy_ok(f, reader_get(f->r, m, "policy"), "forecast.policy", v.text))
        snprintf(fs->policy, sizeof fs->policy, "%s", v.text);
    return 0;
}

/* One SLO "[TEAM:] METRIC <= DURATION" (plan_slo_parse's grammar), with a
 * team the workload has; reported at node. */
static int slo_ok(struct fill *f, yaml_node_t *node, const char *shown, const char *text, struct plan_slo *slo)
{
    struct err err;
    err_clear(&err);
    if (strlen(text) >= PLAN_SLO_TEXT_MAX) {
        reader_error(f->r, node, "key '%s' is longer than %d characters", shown, PLAN_SLO_TEXT_MAX - 1);
        return 0;
    }
    if (plan_slo_parse(text, slo, &err) != 0 || (f->s->has_workload && plan_slo_resolve(slo, f->s, &err) != 0)) {
        reader_error(f->r, node, "key '%s'%s%s", shown, strncmp(err.msg, "names ", 6) ? ": " : " ", err.msg);
        return 0;
    }
    return 1;
}

static int slo_fill(struct fill *f, yaml_node_t *m, struct plan_spec *p)
{
    yaml_node_t *list = reader_get(f->r, m, "slos");
    size_t n = reader_count(list);
    if (list && list->type == YAML_SEQUENCE_NODE && n == 0)
        reader_error(f->r, list, "key 'plan.slos' is empty: give SLOs or leave it out");
    p->slos = calloc(n + 1, sizeof *p->slos);
    if (!p->slos)
        return -1;
    struct schema_value v;
    struct plan_slo slo;
    if (reader_value(f->r, m, "plan.slo", &v) == READER_GIVEN &&
        slo_ok(f, reader_get(f->r, m, "slo"), "plan.slo", v.text, &slo)) {
        snprintf(p->slos[p->n_slos++], PLAN_SLO_TEXT_MAX, "%s", v.text);
        if (slo.team < 0 && !slo.team_name[0] && slo.metric != FM_WAIT_MEAN) {
            /* the one SLO the report's tables mark */
            p->has_slo = 1;
            snprintf(p->slo_metric, sizeof p->slo_metric, "%s",
                     slo.metric == FM_WAIT_P50 ? "p50_wait" : slo.metric == FM_WAIT_P99 ? "p99_wait" : "p95_wait");
            p->slo_threshold_s = slo.threshold_s;
        }
    }
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = reader_item(f->r, list, i);
        char shown[READER_PATH_MAX];
        fill_shown(shown, sizeof shown, "plan.slos", i, NULL);
        if (reader_scalar(f->r, item, "plan.slos[]", &v) == READER_GIVEN && slo_ok(f, item, shown, v.text, &slo))
            snprintf(p->slos[p->n_slos++], PLAN_SLO_TEXT_MAX, "%s", v.text);
    }
    return 0;
}

static int policies_fill(struct fill *f, yaml_node_t *m, struct plan_spec *p)
{
    yaml_node_t *list = reader_get(f->r, m, "policies");
    size_t n = reader_count(list);
    if (list && list->type == YAML_SEQUENCE_NODE && n == 0)
        reader_error(f->r, list, "key 'plan.policies' is empty: give policies or leave it out");
    p->policies = calloc(n + 1, sizeof *p->policies);
    if (!p->policies)
        return -1;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = reader_item(f->r, list, i);
        struct schema_value v;
        char shown[READER_PATH_MAX];
        fill_shown(shown, sizeof shown, "plan.policies", i, NULL);
        if (reader_scalar(f->r, item, "plan.policies[]", &v) == READER_GIVEN && fill_policy_ok(f, item, shown, v.text))
            snprintf(p->policies[p->n_policies++], POLICY_SPEC_MAX, "%s", v.text);
    }
    return 0;
}

static void rent_fill(struct fill *f, yaml_node_t *m, struct plan_spec *p)
{
    yaml_node_t *rent = reader_get(f->r, m, "rent");
    if (!rent || rent->type != YAML_MAPPING_NODE)
        return;
    yaml_node_t *type = reader_get(f->r, rent, "node_type");
    int t = type && type->type == YAML_SCALAR_NODE ? fill_node_type_ref(f, type) : -1;
    if (fill_number(f, rent, "plan.rent.usd_per_gpu_hour", &p->rent_usd_per_gpu_hour) == READER_GIVEN && t >= 0) {
        p->has_rent = 1;
        p->rent_type = t;
    }
    fill_number(f, rent, "plan.rent.min_term", &p->rent_min_term_s);
    fill_number(f, rent, "plan.rent.lead_time", &p->rent_lead_time_s);
}

static int candidates_fill(struct fill *f, yaml_node_t *m, struct plan_spec *p)
{
    yaml_node_t *list = reader_get(f->r, m, "candidates");
    size_t n = reader_count(list);
    size_t cap = n > f->s->n_partitions ? n : f->s->n_partitions;
    free(p->candidate_types);
    p->candidate_types = calloc(cap ? cap : 1, sizeof *p->candidate_types);
    p->n_candidates = 0;
    if (!p->candidate_types)
        return -1;
    if (list && list->type == YAML_SEQUENCE_NODE && n == 0)
        reader_error(f->r, list, "key 'plan.candidates' is empty: name at least one node type, or leave it out");
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = reader_item(f->r, list, i);
        if (!item || item->type != YAML_SCALAR_NODE)
            continue;
        int t = fill_node_type_ref(f, item);
        int dup = 0;
        for (size_t j = 0; t >= 0 && j < p->n_candidates; j++)
            dup |= p->candidate_types[j] == t;
        if (dup)
            reader_error(f->r, item, "node type '%s' is listed twice in 'plan.candidates'", reader_text(item));
        else if (t >= 0)
            p->candidate_types[p->n_candidates++] = t;
    }
    if (n)
        return 0;
    /* default: the types of the partitions, in their order */
    for (size_t i = 0; i < f->s->n_partitions; i++) {
        int32_t t = f->s->partitions[i].type;
        int dup = 0;
        for (size_t j = 0; j < p->n_candidates; j++)
            dup |= p->candidate_types[j] == t;
        if (!dup)
            p->candidate_types[p->n_candidates++] = t;
    }
    return 0;
}

int fill_plan(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *m = reader_get(f->r, root, "plan");
    struct plan_spec *p = &f->s->plan;
    if (slo_fill(f, m, p) != 0 || policies_fill(f, m, p) != 0)
        return -1;
    fill_number(f, m, "plan.confidence", &p->confidence);
    rent_fill(f, m, p);
    fill_number(f, m, "plan.budget_per_quarter", &p->budget_per_quarter_usd);
    fill_number(f, m, "plan.power_usd_per_kwh", &p->power_usd_per_kwh);
    fill_number(f, m, "plan.pue", &p->pue);
    fill_number(f, m, "plan.hosting_usd_per_node_year", &p->hosting_usd_per_node_year);
    if (candidates_fill(f, m, p) != 0)
        return -1;
    enum reader_status ms = fill_int(f, m, "plan.max_nodes", &p->max_nodes);
    enum reader_status ss = fill_int(f, m, "plan.step_nodes", &p->step_nodes);
    if (ms >= READER_DEFAULT && ss >= READER_DEFAULT && p->step_nodes > p->max_nodes)
        reader_error(f->r, reader_get(f->r, m, "step_nodes"), "key 'plan.step_nodes' is %lld, more than max_nodes (%lld)",
                     (long long)p->step_nodes, (long long)p->max_nodes);
    reader_distribution(f->r, m, "plan.lead_time", "plan.lead_time", &p->lead_time_s);
    fill_number(f, m, "plan.burn_in", &p->burn_in_s);
    return 0;
}

int fill_sweep(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *m = reader_get(f->r, root, "sweep");
    struct sweep_spec *sw = &f->s->sweep;
    yaml_node_t *growth = reader_get(f->r, m, "growth");
    yaml_node_t *policy = reader_get(f->r, m, "policy");
    size_t ng = reader_count(growth), np = reader_count(policy);
    if ((growth && growth->type == YAML_SEQUENCE_NODE && !ng) || (policy && policy->type == YAML_SEQUENCE_NODE && !np))
        reader_error(f->r, growth && !ng ? growth : policy, "key 'sweep.%s' is empty: give values or leave it out",
                     growth && !ng ? "growth" : "policy");
    if (ng) {
        sw->growth = calloc(ng, sizeof *sw->growth);
        if (!sw->growth)
            return -1;
        for (size_t i = 0; i < ng; i++) {
            struct schema_value v;
            if (reader_scalar(f->r, reader_item(f->r, growth, i), "sweep.growth[]", &v) == READER_GIVEN)
                sw->growth[sw->n_growth++] = v.num;
        }
    }
    if (np) {
        sw->policies = calloc(np, sizeof *sw->policies);
        if (!sw->policies)
            return -1;
        for (size_t i = 0; i < np; i++) {
            yaml_node_t *item = reader_item(f->r, policy, i);
            struct schema_value v;
            char shown[READER_PATH_MAX];
            fill_shown(shown, sizeof shown, "sweep.policy", i, NULL);
            if (reader_scalar(f->r, item, "sweep.policy[]", &v) == READER_GIVEN &&
                fill_policy_ok(f, item, shown, v.text))
                snprintf(sw->policies[sw->n_policies++], POLICY_SPEC_MAX, "%s", v.text);
        }
    }
    return 0;
}
