#include "report/bench_suite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/reader.h"
#include "sim/input_file.h"
#include "sim/suggest.h"

static const char *const top_keys[] = {"policies", "workloads"};
static const char *const policy_keys[] = {"name", "spec", "params", "ordering", "backfill", "placement", "preempt",
                                          "quota"};
static const char *const workload_keys[] = {"name",  "trace", "scenario", "replication", "jobs",
                                            "nodes", "slots", "machines", "convention"};

#define N_OF(a) (sizeof(a) / sizeof *(a))

/* Reports keys of map not in keys[], with the nearest valid one. */
static void check_keys(struct reader *r, const yaml_node_t *map, const char *what, const char *const *keys, size_t n)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        const char *name = reader_text(k);
        const char *near = NULL;
        size_t best = 4, found = 0;
        for (size_t i = 0; i < n; i++) {
            if (!strcmp(keys[i], name))
                found = 1;
            size_t d = suggest_distance(name, keys[i]);
            if (d < best) {
                best = d;
                near = keys[i];
            }
        }
        if (found)
            continue;
        if (near)
            reader_error(r, k, "unknown key '%s' in %s; did you mean '%s'?", name, what, near);
        else
            reader_error(r, k, "unknown key '%s' in %s", name, what);
    }
}

static int scalar(struct reader *r, const yaml_node_t *n, const char *what)
{
    if (n && n->type == YAML_SCALAR_NODE)
        return 1;
    reader_error(r, n, "%s must be a string", what);
    return 0;
}

static int integer(struct reader *r, const yaml_node_t *n, const char *what, int64_t lo, int64_t hi, int64_t *out)
{
    if (!n)
        return 1;
    const char *t = reader_text(n);
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (n->type != YAML_SCALAR_NODE || !*t || *end || errno || v < lo || v > hi) {
        reader_error(r, n, "%s is '%s', expected an integer from %lld to %lld", what, t, (long long)lo, (long long)hi);
        return 0;
    }
    *out = v;
    return 1;
}

/* Appends s to buf (bounded). */
static void add(char *buf, size_t len, const char *s)
{
    size_t at = strlen(buf);
    if (at < len - 1)
        snprintf(buf + at, len - at, "%s", s);
}

/* A component: "NAME" or {name: NAME, param: value, ...} (name_needed), or
 * a mapping of parameters under a fixed name (preempt, quota: also true). */
static int component(struct reader *r, const yaml_node_t *n, const char *key, const char *fixed_name, char *spec,
                     size_t len)
{
    if (!n)
        return 1;
    if (reader_is_null(n) || (n->type == YAML_SCALAR_NODE && !*reader_text(n))) { /* found by fuzz_bench_suite */
        reader_error(r, n, "'%s' is empty: give %s or leave the key out", key,
                     fixed_name ? "its parameters (or true)" : "a name");
        return 0;
    }
    if (*spec)
        add(spec, len, "+");
    if (n->type == YAML_SCALAR_NODE) {
        const char *t = reader_text(n);
        if (fixed_name) {
            if (strcmp(t, "true") && strcmp(t, "yes")) {
                reader_error(r, n, "'%s' takes a mapping of its parameters, or true", key);
                return 0;
            }
            add(spec, len, fixed_name);
            return 1;
        }
        add(spec, len, t);
        return 1;
    }
    if (n->type != YAML_MAPPING_NODE) {
        reader_error(r, n, "'%s' must be a name or a mapping", key);
        return 0;
    }
    const yaml_node_t *name = fixed_name ? NULL : reader_get(r, n, "name");
    if (!fixed_name && (!name || name->type != YAML_SCALAR_NODE)) {
        reader_error(r, n, "'%s' as a mapping needs 'name'", key);
        return 0;
    }
    add(spec, len, fixed_name ? fixed_name : reader_text(name));
    int first = 1, ok = 1;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        if (!fixed_name && !strcmp(reader_text(k), "name"))
            continue;
        if (!v || v->type != YAML_SCALAR_NODE) {
            reader_error(r, v, "parameter '%s' of '%s' must be a scalar", reader_text(k), key);
            ok = 0;
            continue;
        }
        add(spec, len, first ? "(" : ",");
        add(spec, len, reader_text(k));
        add(spec, len, "=");
        add(spec, len, reader_text(v));
        first = 0;
    }
    if (!first)
        add(spec, len, ")");
    return ok;
}

/* Copies n's text into buf whole, or refuses it with its length: a spec
 * cut short would silently drop a component ('+quota(...)'). */
static int copy_whole(struct reader *r, const yaml_node_t *n, const char *what, char *buf, size_t cap)
{
    size_t len = strlen(reader_text(n));
    if (len >= cap) {
        reader_error(r, n, "%s is %zu characters long, more than the %zu allowed", what, len, cap - 1);
        return 0;
    }
    memcpy(buf, reader_text(n), len + 1);
    return 1;
}

static int load_policy(struct reader *r, const yaml_node_t *n, struct bench_policy *p)
{
    memset(p, 0, sizeof *p);
    if (reader_is_null(n) || (n->type == YAML_SCALAR_NODE && !*reader_text(n))) {
        reader_error(r, n, "a policy is a spec string or a mapping, not empty");
        return 0;
    }
    if (n->type == YAML_SCALAR_NODE) {
        if (!copy_whole(r, n, "the policy spec", p->spec, sizeof p->spec))
            return 0;
        snprintf(p->name, sizeof p->name, "%s", reader_text(n));
        return 1;
    }
    if (n->type != YAML_MAPPING_NODE) {
        reader_error(r, n, "a policy is a spec string or a mapping");
        return 0;
    }
    check_keys(r, n, "a policy", policy_keys, N_OF(policy_keys));
    const yaml_node_t *spec = reader_get(r, n, "spec"), *ord = reader_get(r, n, "ordering");
    int ok = 1;
    if (spec && ord) {
        reader_error(r, spec, "a policy has either 'spec' or 'ordering' (and its components), not both");
        return 0;
    }
    if (spec) {
        ok &= scalar(r, spec, "'spec'") && copy_whole(r, spec, "'spec'", p->spec, sizeof p->spec);
        if (ok && (!p->spec[0] || reader_is_null(spec))) { /* found by fuzz_bench_suite */
            reader_error(r, spec, "'spec' is empty: give a policy spec or leave the key out");
            ok = 0;
        }
    } else if (ord) {
        ok &= component(r, ord, "ordering", NULL, p->spec, sizeof p->spec);
        ok &= component(r, reader_get(r, n, "backfill"), "backfill", NULL, p->spec, sizeof p->spec);
        ok &= component(r, reader_get(r, n, "placement"), "placement", NULL, p->spec, sizeof p->spec);
        ok &= component(r, reader_get(r, n, "preempt"), "preempt", "preempt", p->spec, sizeof p->spec);
        ok &= component(r, reader_get(r, n, "quota"), "quota", "quota", p->spec, sizeof p->spec);
        if (strlen(p->spec) >= sizeof p->spec - 1) {
            reader_error(r, ord, "the policy spec these components make is longer than the %zu characters allowed",
                         sizeof p->spec - 2);
            ok = 0;
        }
    } else {
        reader_error(r, n, "a policy needs 'spec' or 'ordering'");
        return 0;
    }
    const yaml_node_t *params = reader_get(r, n, "params"), *name = reader_get(r, n, "name");
    if (params && scalar(r, params, "'params'") && !copy_whole(r, params, "'params'", p->params, sizeof p->params))
        ok = 0;
    if (name && scalar(r, name, "'name'"))
        snprintf(p->name, sizeof p->name, "%s", reader_text(name));
    else
        snprintf(p->name, sizeof p->name, "%.127s", p->spec);
    return ok;
}

static int load_workload(struct reader *r, const yaml_node_t *n, struct bench_workload *w)
{
    memset(w, 0, sizeof *w);
    w->jobs = w->nodes = w->slots = -1;
    if (!n || n->type != YAML_MAPPING_NODE) {
        reader_error(r, n, "a workload is a mapping with 'trace' or 'scenario'");
        return 0;
    }
    check_keys(r, n, "a workload", workload_keys, N_OF(workload_keys));
    const yaml_node_t *trace = reader_get(r, n, "trace"), *name = reader_get(r, n, "name");
    const yaml_node_t *scenario = reader_get(r, n, "scenario");
    if (!trace == !scenario) {
        reader_error(r, n, "a workload needs 'trace' or 'scenario' (one of them)");
        return 0;
    }
    if (scenario) {
        /* the jobs a scenario generates, on its cluster, with its models */
        w->is_scenario = 1;
        trace = scenario;
    }
    int ok = scalar(r, trace, scenario ? "'scenario'" : "'trace'") &&
             copy_whole(r, trace, scenario ? "'scenario'" : "'trace'", w->trace, sizeof w->trace);
    ok &= integer(r, reader_get(r, n, "replication"), "'replication'", 0, 1000000, &w->replication);
    if (scenario && (reader_get(r, n, "nodes") || reader_get(r, n, "slots"))) {
        reader_error(r, n, "a scenario workload runs on the scenario's cluster: drop 'nodes' and 'slots'");
        ok = 0;
    }
    if (!scenario && reader_get(r, n, "replication")) {
        reader_error(r, n, "'replication' applies to a scenario workload only");
        ok = 0;
    }
    if (name && scalar(r, name, "'name'"))
        snprintf(w->name, sizeof w->name, "%s", reader_text(name));
    else
        snprintf(w->name, sizeof w->name, "%.127s", w->trace);
    ok &= integer(r, reader_get(r, n, "jobs"), "'jobs'", 1, 100000000, &w->jobs);
    ok &= integer(r, reader_get(r, n, "nodes"), "'nodes'", 1, 10000000, &w->nodes);
    ok &= integer(r, reader_get(r, n, "slots"), "'slots'", 1, 4096, &w->slots);
    if ((w->nodes > 0) != (w->slots > 0)) {
        reader_error(r, n, "a workload gives 'nodes' and 'slots' together, or neither");
        ok = 0;
    }
    const yaml_node_t *machines = reader_get(r, n, "machines");
    if (machines) {
        if (scenario || w->nodes > 0) {
            reader_error(r, machines, "'machines' sets the cluster: drop %s",
                         scenario ? "it from a scenario workload" : "'nodes' and 'slots'");
            ok = 0;
        } else {
            ok &= scalar(r, machines, "'machines'") &&
                  copy_whole(r, machines, "'machines'", w->machines, sizeof w->machines);
        }
    }
    const yaml_node_t *conv = reader_get(r, n, "convention");
    if (conv) {
        if (!scalar(r, conv, "'convention'")) {
            ok = 0;
        } else if (simulation_convention_parse(reader_text(conv), &w->convention) != 0) {
            reader_error(r, conv, "unknown convention '%s' (" SIM_CONVENTION_NAMES ")", reader_text(conv));
            ok = 0;
        }
    }
    return ok;
}

int bench_suite_load(const char *path, struct bench_suite *s, struct diag_list *diags, struct err *err)
{
    memset(s, 0, sizeof *s);
    char *data;
    size_t len;
    if (input_file_read(path, "suite", input_file_small_max_bytes(), &data, &len, err) != 0)
        return -1;
    int rc = bench_suite_load_buffer(path, data, len, s, diags, err);
    free(data);
    return rc;
}

int bench_suite_load_buffer(const char *path, const char *data, size_t len, struct bench_suite *s,
                            struct diag_list *diags, struct err *err)
{
    memset(s, 0, sizeof *s);
    struct reader r;
    int rc = reader_open(&r, path, data, len, diags);
    if (rc != 0) {
        reader_close(&r);
        return -1;
    }
    yaml_node_t *root = reader_root(&r);
    if (!root || root->type != YAML_MAPPING_NODE) {
        reader_error(&r, root, "a bench suite is a mapping with 'policies' and 'workloads'");
        reader_close(&r);
        return -1;
    }
    check_keys(&r, root, "the suite", top_keys, N_OF(top_keys));
    const yaml_node_t *pols = reader_get(&r, root, "policies"), *wls = reader_get(&r, root, "workloads");
    if (reader_count(pols) == 0)
        reader_error(&r, pols ? pols : root, "'policies' must be a non-empty list");
    if (reader_count(wls) == 0)
        reader_error(&r, wls ? wls : root, "'workloads' must be a non-empty list");
    s->n_policies = reader_count(pols);
    s->n_workloads = reader_count(wls);
    s->policies = calloc(s->n_policies ? s->n_policies : 1, sizeof *s->policies);
    s->workloads = calloc(s->n_workloads ? s->n_workloads : 1, sizeof *s->workloads);
    if (!s->policies || !s->workloads) {
        reader_close(&r);
        bench_suite_release(s);
        return err_set(err, path, 0, 0, "out of memory");
    }
    for (size_t i = 0; i < s->n_policies; i++) {
        yaml_node_t *n = reader_item(&r, pols, i);
        if (!load_policy(&r, n, &s->policies[i]))
            continue;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(s->policies[k].name, s->policies[i].name))
                reader_error(&r, n, "two policies are named '%s': give one a 'name'", s->policies[i].name);
    }
    for (size_t i = 0; i < s->n_workloads; i++) {
        yaml_node_t *n = reader_item(&r, wls, i);
        if (!load_workload(&r, n, &s->workloads[i]))
            continue;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(s->workloads[k].name, s->workloads[i].name))
                reader_error(&r, n, "two workloads are named '%s': give one a 'name'", s->workloads[i].name);
    }
    size_t errors = r.errors;
    reader_close(&r);
    if (errors) {
        bench_suite_release(s);
        return -1;
    }
    return 0;
}

void bench_suite_release(struct bench_suite *s)
{
    if (!s)
        return;
    free(s->policies);
    free(s->workloads);
    memset(s, 0, sizeof *s);
}
