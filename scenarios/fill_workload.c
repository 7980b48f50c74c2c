/* fill: the workload section: a base trace and synthetic teams
 * (traces/synth.h). Cross-field rules: profiles of exactly 24 and 7 values,
 * not all zero; bursts that end after they start; GPU counts that are
 * integers, given once; a runtime for every class with a weight (and either
 * a distribution or an empirical list, not both); unique team names; at
 * least one team or a trace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scenarios/fill.h"
#include "sim/input_file.h"
#include "sim/units.h"
#include "traces/trace.h"

/* Jobs one replication may synthesize: each costs about JOB_BYTES in the
 * workload, the simulator's per-job arrays and the waits, so this is about
 * 8 GiB per worker process. Larger workloads are refused before any
 * forecast starts rather than failing minutes later out of memory. */
enum { SYNTH_MAX_JOBS = 50000000, JOB_BYTES = 160 };
/* Growth per quarter is a fraction (0.25 = 25%); 5 or more (500% a
 * quarter) is taken for a percentage written where a fraction is meant. */
#define GROWTH_PERCENT_LIKE 5.0

static const char *const class_paths[JOB_CLASS_COUNT] = {
    "workload.teams[].runtime.training", "workload.teams[].runtime.finetune", "workload.teams[].runtime.inference"};

static int team_name_ok(struct fill *f, yaml_node_t *list, size_t index, yaml_node_t *name)
{
    const char *text = reader_text(name);
    if (strlen(text) >= TEAM_NAME_MAX) {
        reader_error(f->r, name, "team name '%s' is longer than %d characters", text, TEAM_NAME_MAX - 1);
        return 0;
    }
    for (size_t j = 0; j < index; j++) {
        yaml_node_t *prev = reader_get(f->r, reader_item(f->r, list, j), "name");
        if (prev && strcmp(reader_text(prev), text) == 0) {
            reader_error(f->r, name, "duplicate team name '%s' (first at line %lu)", text,
                         (unsigned long)prev->start_mark.line + 1);
            return 0;
        }
    }
    return 1;
}

/* hourly (24) or weekly (7): exactly n values, not all zero, normalised to
 * mean 1. Absent: flat (left as initialised). */
static void profile_fill(struct fill *f, yaml_node_t *m, const char *key, size_t n, double *out, const char *prefix,
                         size_t index)
{
    yaml_node_t *list = reader_get(f->r, m, key);
    if (!list || reader_is_null(list) || list->type != YAML_SEQUENCE_NODE)
        return; /* absent, or the walk reported it */
    char shown[READER_PATH_MAX], item_path[READER_PATH_MAX];
    fill_shown(shown, sizeof shown, prefix, index, key);
    snprintf(item_path, sizeof item_path, "workload.teams[].%s[]", key);
    size_t got = reader_count(list);
    if (got != n) {
        reader_error(f->r, list, "key '%s' has %zu values, expected %zu (%s)", shown, got, n,
                     n == 24 ? "one per hour of day, 0 to 23 UTC" : "one per day of week, Monday first");
        return;
    }
    double v[24], sum = 0;
    for (size_t i = 0; i < n; i++) {
        struct schema_value sv;
        if (reader_scalar(f->r, reader_item(f->r, list, i), item_path, &sv) != READER_GIVEN)
            return;
        v[i] = sv.num;
        sum += sv.num;
    }
    if (!(sum > 0)) {
        reader_error(f->r, list, "key '%s' is all zeros: the team would submit nothing", shown);
        return;
    }
    for (size_t i = 0; i < n; i++)
        out[i] = v[i] * (double)n / sum;
}

static int bursts_fill(struct fill *f, yaml_node_t *m, struct team_spec *t, size_t index)
{
    yaml_node_t *list = reader_get(f->r, m, "bursts");
    size_t n = reader_count(list);
    if (!n)
        return 0;
    t->bursts = calloc(n, sizeof *t->bursts);
    if (!t->bursts)
        return -1;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *b = reader_item(f->r, list, i);
        if (!b || b->type != YAML_MAPPING_NODE)
            continue;
        char prefix[READER_PATH_MAX], start[READER_PATH_MAX], end[READER_PATH_MAX];
        fill_shown(prefix, sizeof prefix, "workload.teams", index, "bursts");
        fill_shown(start, sizeof start, prefix, i, "start");
        fill_shown(end, sizeof end, prefix, i, "end");
        struct burst x = {0, 0, 1};
        int ok = fill_time(f, b, "workload.teams[].bursts[].start", start, &x.start_us) == 0;
        ok &= fill_time(f, b, "workload.teams[].bursts[].end", end, &x.end_us) == 0;
        ok &= fill_number(f, b, "workload.teams[].bursts[].multiplier", &x.multiplier) == READER_GIVEN;
        if (!ok)
            continue;
        if (x.end_us <= x.start_us) {
            reader_error(f->r, reader_get(f->r, b, "end"), "key '%s' (%s) is not after '%s' (%s)", end,
                         reader_text(reader_get(f->r, b, "end")), start, reader_text(reader_get(f->r, b, "start")));
            continue;
        }
        t->bursts[t->n_bursts++] = x;
    }
    return 0;
}

/* A GPU count written as a key: a plain integer 1 to 1000000. */
static int gpu_key(const char *text, int32_t *out)
{
    size_t n = strlen(text);
    if (n == 0 || n > 7 || strspn(text, "0123456789") != n)
        return -1;
    long v = strtol(text, NULL, 10);
    if (v < 1 || v > 1000000)
        return -1;
    *out = (int32_t)v;
    return 0;
}

static int gpus_fill(struct fill *f, yaml_node_t *m, struct team_spec *t, size_t index)
{
    yaml_node_t *map = reader_get(f->r, m, "gpus");
    size_t n = map && map->type == YAML_MAPPING_NODE
                   ? (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start)
                   : 0;
    t->gpus = calloc(n ? n : 1, sizeof *t->gpus);
    t->gpu_weights = calloc(n ? n : 1, sizeof *t->gpu_weights);
    if (!t->gpus || !t->gpu_weights)
        return -1;
    if (!n) {
        if (map && map->type == YAML_MAPPING_NODE)
            reader_error(f->r, map, "key 'workload.teams[%zu].gpus' is empty: give at least one GPU count", index);
        t->gpus[0] = 1; /* absent: every job takes one GPU */
        t->gpu_weights[0] = 1;
        t->n_gpus = 1;
        return 0;
    }
    double sum = 0;
    int bad = 0;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *key = yaml_document_get_node(&f->r->doc, p->key);
        yaml_node_t *val = yaml_document_get_node(&f->r->doc, p->value);
        const char *text = reader_text(key);
        char shown[READER_PATH_MAX];
        snprintf(shown, sizeof shown, "workload.teams[%zu].gpus.%s", index, text);
        int32_t g;
        if (!key || key->type != YAML_SCALAR_NODE)
            continue; /* the walk reported it */
        if (gpu_key(text, &g) != 0) {
            reader_error(f->r, key, "key '%s' is not a GPU count (an integer 1 to 1000000)", shown);
            bad = 1;
            continue;
        }
        struct schema_value v;
        if (reader_scalar(f->r, val, "workload.teams[].gpus.*", &v) != READER_GIVEN) {
            bad = 1;
            continue;
        }
        size_t at = 0;
        while (at < t->n_gpus && t->gpus[at] < g)
            at++;
        if (at < t->n_gpus && t->gpus[at] == g) {
            reader_error(f->r, key, "GPU count %d is given twice in 'workload.teams[%zu].gpus'", (int)g, index);
            bad = 1;
            continue;
        }
        /* kept sorted by count, so the file's order does not change the draws */
        memmove(t->gpus + at + 1, t->gpus + at, (t->n_gpus - at) * sizeof *t->gpus);
        memmove(t->gpu_weights + at + 1, t->gpu_weights + at, (t->n_gpus - at) * sizeof *t->gpu_weights);
        t->gpus[at] = g;
        t->gpu_weights[at] = v.num;
        t->n_gpus++;
        sum += v.num;
    }
    if (!bad && !(sum > 0))
        reader_error(f->r, map, "key 'workload.teams[%zu].gpus' has only zero weights", index);
    return 0;
}

static void classes_fill(struct fill *f, yaml_node_t *m, struct team_spec *t, size_t index)
{
    yaml_node_t *map = reader_get(f->r, m, "classes");
    if (!map || map->type != YAML_MAPPING_NODE)
        return; /* default: the scenario's default class (team_spec_init) */
    static const char *const paths[JOB_CLASS_COUNT] = {
        "workload.teams[].classes.training", "workload.teams[].classes.finetune", "workload.teams[].classes.inference"};
    double w[JOB_CLASS_COUNT] = {0}, sum = 0;
    for (int c = 0; c < JOB_CLASS_COUNT; c++) {
        if (fill_number(f, map, paths[c], &w[c]) == READER_BAD)
            return;
        sum += w[c];
    }
    if (!(sum > 0)) {
        reader_error(f->r, map, "key 'workload.teams[%zu].classes' has no class with a weight above 0", index);
        return;
    }
    memcpy(t->class_weights, w, sizeof w);
}

static int empirical_fill(struct fill *f, yaml_node_t *list, struct runtime_spec *rs, const char *shown,
                          const char *path)
{
    size_t n = reader_count(list);
    if (!n) {
        if (!list || list->type == YAML_SEQUENCE_NODE || reader_is_null(list))
            reader_error(f->r, list, "key '%s.empirical' needs at least one runtime", shown);
        return 0;
    }
    char item[READER_PATH_MAX];
    snprintf(item, sizeof item, "%s.empirical[]", path);
    double *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct schema_value sv;
        if (reader_scalar(f->r, reader_item(f->r, list, i), item, &sv) != READER_GIVEN) {
            free(v);
            return 0;
        }
        v[i] = sv.num;
    }
    free(rs->empirical_s);
    rs->empirical_s = v;
    rs->n_empirical = n;
    return 0;
}

static int runtime_fill(struct fill *f, yaml_node_t *team, struct team_spec *t, size_t index)
{
    yaml_node_t *rt = reader_get(f->r, team, "runtime");
    if (!rt || rt->type != YAML_MAPPING_NODE)
        return 0; /* missing or not a mapping: the walk said so */
    for (int c = 0; c < JOB_CLASS_COUNT; c++) {
        const char *name = job_class_name((enum job_class)c);
        yaml_node_t *node = reader_get(f->r, rt, name);
        char shown[READER_PATH_MAX];
        snprintf(shown, sizeof shown, "workload.teams[%zu].runtime.%s", index, name);
        if (!node) {
            if (t->class_weights[c] > 0)
                reader_error(f->r, rt, "missing key '%s' in 'workload.teams[%zu].runtime' (class '%s' has a weight)",
                             name, index, name);
            continue;
        }
        if (t->class_weights[c] <= 0)
            reader_warning(f->r, reader_key(f->r, rt, name), "key '%s' has no effect: class '%s' has no weight", shown,
                           name);
        struct runtime_spec *rs = &t->runtime[c];
        if (node->type == YAML_MAPPING_NODE) {
            yaml_node_t *emp = reader_key(f->r, node, "empirical");
            yaml_node_t *kind = reader_key(f->r, node, "distribution");
            if (emp && kind) {
                reader_error(f->r, emp, "key '%s' gives both 'distribution' and 'empirical': give one", shown);
                continue;
            }
            if (emp) {
                if (reader_get(f->r, node, "empirical")->type == YAML_SEQUENCE_NODE &&
                    (size_t)(node->data.mapping.pairs.top - node->data.mapping.pairs.start) > 1)
                    reader_error(f->r, node, "key '%s' with 'empirical' takes no distribution parameters", shown);
                if (empirical_fill(f, reader_get(f->r, node, "empirical"), rs, shown, class_paths[c]) != 0)
                    return -1;
                continue;
            }
            if (!kind) {
                reader_error(f->r, node, "missing key 'distribution' in '%s' (or give 'empirical: [...]')", shown);
                continue;
            }
        }
        reader_distribution(f->r, rt, class_paths[c], shown, &rs->dist);
    }
    return 0;
}

/* runtime_by_gpus: size classes in increasing order of up_to. */
static int by_size_fill(struct fill *f, yaml_node_t *m, struct team_spec *t, size_t index)
{
    yaml_node_t *list = reader_get(f->r, m, "runtime_by_gpus");
    size_t n = reader_count(list);
    if (!n)
        return 0;
    t->by_size = calloc(n, sizeof *t->by_size);
    if (!t->by_size)
        return -1;
    for (size_t i = 0; i < n; i++) {
        yaml_node_t *item = reader_item(f->r, list, i);
        if (!item || item->type != YAML_MAPPING_NODE)
            continue;
        char prefix[READER_PATH_MAX], shown[READER_PATH_MAX];
        fill_shown(prefix, sizeof prefix, "workload.teams", index, "runtime_by_gpus");
        fill_shown(shown, sizeof shown, prefix, i, "runtime");
        int64_t up_to = 0;
        struct size_runtime sr;
        memset(&sr, 0, sizeof sr);
        if (fill_int(f, item, "workload.teams[].runtime_by_gpus[].up_to", &up_to) != READER_GIVEN)
            continue;
        yaml_node_t *rt = reader_get(f->r, item, "runtime");
        if (rt && rt->type == YAML_MAPPING_NODE && reader_key(f->r, rt, "empirical")) {
            if (reader_key(f->r, rt, "distribution")) {
                reader_error(f->r, rt, "key '%s' gives both 'distribution' and 'empirical': give one", shown);
                continue;
            }
            if (empirical_fill(f, reader_get(f->r, rt, "empirical"), &sr.runtime, shown,
                               "workload.teams[].runtime_by_gpus[].runtime") != 0)
                return -1;
            if (!sr.runtime.n_empirical)
                continue;
        } else if (rt && rt->type == YAML_MAPPING_NODE && !reader_key(f->r, rt, "distribution")) {
            reader_error(f->r, rt, "missing key 'distribution' in '%s' (or give 'empirical: [...]')", shown);
            continue;
        } else if (reader_distribution(f->r, item, "workload.teams[].runtime_by_gpus[].runtime", shown,
                                       &sr.runtime.dist) != READER_GIVEN) {
            continue;
        }
        if (t->n_by_size && up_to <= t->by_size[t->n_by_size - 1].up_to_gpus) {
            reader_error(f->r, reader_get(f->r, item, "up_to"),
                         "key '%s[%zu].up_to' is %lld, not above the previous entry's %d: give size classes in "
                         "increasing order",
                         prefix, i, (long long)up_to, (int)t->by_size[t->n_by_size - 1].up_to_gpus);
            free(sr.runtime.empirical_s);
            continue;
        }
        sr.up_to_gpus = (int32_t)up_to;
        t->by_size[t->n_by_size++] = sr;
    }
    return 0;
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* A team's list of numbers under key (each checked against the schema row
 * named path): 0 with *out NULL when absent or wrong (the reader reported
 * it), -1 out of memory. */
static int number_list_fill(struct fill *f, yaml_node_t *m, const char *key, const char *path, double **out,
                            size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    yaml_node_t *list = reader_get(f->r, m, key);
    size_t n = reader_count(list);
    if (!n)
        return 0;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < n; i++) {
        struct schema_value sv;
        if (reader_scalar(f->r, reader_item(f->r, list, i), path, &sv) != READER_GIVEN) {
            free(v);
            return 0;
        }
        v[i] = sv.num;
    }
    *out = v;
    *n_out = n;
    return 0;
}

static int limits_fill(struct fill *f, yaml_node_t *m, struct team_spec *t)
{
    if (number_list_fill(f, m, "limits", "workload.teams[].limits[]", &t->limits_s, &t->n_limits) != 0)
        return -1;
    if (t->n_limits) /* the draw needs them sorted; the file's order does not matter */
        qsort(t->limits_s, t->n_limits, sizeof *t->limits_s, cmp_double);
    return 0;
}

static int batch_fill(struct fill *f, yaml_node_t *m, struct team_spec *t)
{
    return number_list_fill(f, m, "batch", "workload.teams[].batch[]", &t->batch_sizes, &t->n_batch);
}

static void service_fill(struct fill *f, yaml_node_t *m, struct team_spec *t)
{
    yaml_node_t *sv = reader_get(f->r, m, "service");
    if (!sv || sv->type != YAML_MAPPING_NODE)
        return;
    t->is_service = 1;
    int64_t replicas = 1;
    fill_int(f, sv, "workload.teams[].service.replicas", &replicas);
    t->replicas = (int32_t)replicas;
    t->service_restart_s = 600;
    fill_number(f, sv, "workload.teams[].service.restart", &t->service_restart_s);
}

static int team_fill(struct fill *f, yaml_node_t *list, size_t index)
{
    yaml_node_t *m = reader_item(f->r, list, index);
    yaml_node_t *name = reader_get(f->r, m, "name");
    if (!m || m->type != YAML_MAPPING_NODE || !name || name->type != YAML_SCALAR_NODE || reader_is_null(name) ||
        !team_name_ok(f, list, index, name))
        return 0;
    struct workload_spec *ws = &f->s->workload;
    struct team_spec *t = workload_spec_add_team(ws);
    if (!t)
        return -1;
    team_spec_init(t, f->s->default_class);
    snprintf(t->name, sizeof t->name, "%s", reader_text(name));
    fill_number(f, m, "workload.teams[].jobs_per_hour", &t->jobs_per_hour);
    profile_fill(f, m, "hourly", 24, t->hourly, "workload.teams", index);
    profile_fill(f, m, "weekly", 7, t->weekly, "workload.teams", index);
    if (bursts_fill(f, m, t, index) != 0 || gpus_fill(f, m, t, index) != 0)
        return -1;
    classes_fill(f, m, t, index);
    if (runtime_fill(f, m, t, index) != 0 || by_size_fill(f, m, t, index) != 0 || limits_fill(f, m, t) != 0 ||
        batch_fill(f, m, t) != 0)
        return -1;
    service_fill(f, m, t);
    fill_number(f, m, "workload.teams[].limit_factor", &t->limit_factor);
    fill_number(f, m, "workload.teams[].limit_round", &t->limit_round_s);
    fill_number(f, m, "workload.teams[].growth_per_quarter", &t->growth_per_quarter);
    int64_t prio = 0;
    fill_int(f, m, "workload.teams[].priority", &prio);
    t->priority = (int32_t)prio;
    return 0;
}

/* A relative trace path is relative to the scenario file's folder. */
static int trace_fill(struct fill *f, yaml_node_t *m)
{
    struct schema_value v;
    if (reader_value(f->r, m, "workload.trace", &v) != READER_GIVEN)
        return 0;
    const char *file = f->r->file, *slash = strrchr(file, '/');
    size_t dir = v.text[0] == '/' || !slash ? 0 : (size_t)(slash - file) + 1;
    size_t len = dir + strlen(v.text) + 1;
    char *path = malloc(len);
    if (!path)
        return -1;
    snprintf(path, len, "%.*s%s", (int)dir, file, v.text);
    /* every replication (and the checks below) reads it again: a device or
     * a pipe cannot serve, and /dev/zero would be read until memory ran out */
    const char *kind = NULL;
    int regular = input_file_is_regular(path, &kind);
    if (regular < 0 || access(path, R_OK) != 0)
        reader_error(f->r, reader_get(f->r, m, "trace"), "key 'workload.trace' names '%s', which cannot be read: %s",
                     path, strerror(errno));
    else if (!regular)
        reader_error(f->r, reader_get(f->r, m, "trace"),
                     "key 'workload.trace' names '%s', which is %s: a scenario's trace must be a regular file "
                     "(every replication reads it)",
                     path, kind);
    free(f->s->workload.base_trace);
    f->s->workload.base_trace = path;
    return 0;
}

int fill_workload(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *key = reader_key(f->r, root, "workload");
    if (!key)
        return 0;
    yaml_node_t *m = reader_get(f->r, root, "workload");
    f->s->has_workload = 1;
    if (trace_fill(f, m) != 0)
        return -1;
    fill_number(f, m, "workload.base_growth_per_quarter", &f->s->workload.base_growth_per_quarter);
    yaml_node_t *teams = reader_get(f->r, m, "teams");
    for (size_t i = 0; i < reader_count(teams); i++)
        if (team_fill(f, teams, i) != 0)
            return -1;
    if (!reader_count(teams) && !reader_get(f->r, m, "trace"))
        reader_error(f->r, m && m->type == YAML_MAPPING_NODE ? m : key,
                     "key 'workload' needs 'teams' (at least one) or a 'trace'");
    return 0;
}

/* ---- checks against the cluster and the horizon ---- */

/* The most GPUs the cluster ever has: the partitions plus every order. */
static int64_t whole_cluster_gpus(const struct scenario *s)
{
    int64_t gpus = scenario_initial_gpus(s);
    for (size_t i = 0; i < s->procurement.n_orders; i++) {
        const struct purchase_order *o = &s->procurement.orders[i];
        if (o->type >= 0 && (size_t)o->type < s->catalog.n)
            gpus += o->count * s->catalog.types[o->type].gpus;
    }
    return gpus;
}

static void check_growth(struct fill *f, yaml_node_t *m, const char *key, const char *shown, double g)
{
    if (!(g >= GROWTH_PERCENT_LIKE))
        return;
    reader_error(f->r, reader_get(f->r, m, key),
                 "key '%s' is %g, which means %.0f%% a quarter: growth is a fraction (0.3 = 30%%); did you mean "
                 "%g?",
                 shown, g, 100 * g, g / 100);
}

/* GPU counts no node set can ever hold: an error at the count, with the
 * share of the team's jobs it would lose. */
static void check_fit(struct fill *f, yaml_node_t *team, const struct team_spec *t, size_t index, int64_t whole)
{
    yaml_node_t *map = reader_get(f->r, team, "gpus");
    if (!map || map->type != YAML_MAPPING_NODE)
        return;
    double sum = 0;
    for (size_t k = 0; k < t->n_gpus; k++)
        sum += t->gpu_weights[k];
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *key = yaml_document_get_node(&f->r->doc, p->key);
        int32_t g;
        if (!key || key->type != YAML_SCALAR_NODE || gpu_key(reader_text(key), &g) != 0 || g <= whole)
            continue;
        double w = 0;
        for (size_t k = 0; k < t->n_gpus; k++)
            if (t->gpus[k] == g)
                w = t->gpu_weights[k];
        if (w <= 0)
            continue;
        reader_error(f->r, key,
                     "key 'workload.teams[%zu].gpus.%d' asks for %d GPUs, more than the whole cluster has (%lld, "
                     "orders included): %.1f%% of the jobs of team '%s' could never start",
                     index, (int)g, (int)g, (long long)whole, sum > 0 ? 100 * w / sum : 0, t->name);
    }
}

/* A base trace's jobs larger than the whole cluster: a warning (the trace
 * may come from a larger machine), counted, with their share of the work. */
static int check_base_trace(struct fill *f, yaml_node_t *m, int64_t whole)
{
    const char *path = f->s->workload.base_trace;
    const char *kind;
    if (!path || whole <= 0 || access(path, R_OK) != 0 || input_file_is_regular(path, &kind) != 1)
        return 0;
    struct workload w;
    struct diag_list diags;
    struct err err;
    workload_init(&w);
    diag_list_init(&diags, 1);
    err_clear(&err);
    if (trace_read(path, TRACE_AUTO, SWF_REPLAY, &w, &diags, &err) == 0) {
        size_t big = 0;
        double work = 0, big_work = 0;
        for (size_t i = 0; i < w.n; i++) {
            double x = (double)w.jobs[i].slots * (double)(w.jobs[i].runtime_us > 0 ? w.jobs[i].runtime_us : 0);
            work += x;
            if (w.jobs[i].slots > whole) {
                big++;
                big_work += x;
            }
        }
        if (big)
            reader_warning(f->r, reader_get(f->r, m, "trace"),
                           "%zu of the %zu jobs of '%s' ask for more GPUs than the whole cluster has (%lld, orders "
                           "included): they will never start (%.1f%% of the trace's work)",
                           big, w.n, path, (long long)whole, work > 0 ? 100 * big_work / work : 0);
    }
    /* a trace that cannot be read is the forecast's to report, with its line */
    workload_release(&w);
    diag_list_release(&diags);
    return 0;
}

int fill_workload_checks(struct fill *f, yaml_node_t *root)
{
    struct scenario *s = f->s;
    if (!s->has_workload)
        return 0;
    yaml_node_t *m = reader_get(f->r, root, "workload");
    yaml_node_t *teams = reader_get(f->r, m, "teams");
    check_growth(f, m, "base_growth_per_quarter", "workload.base_growth_per_quarter",
                 s->workload.base_growth_per_quarter);
    int64_t whole = f->cluster_ok ? whole_cluster_gpus(s) : 0;
    check_base_trace(f, m, whole);
    double jobs = 0, most = -1;
    size_t biggest = 0;
    /* teams that failed their checks were not added: match by name */
    for (size_t i = 0, k = 0; i < reader_count(teams) && k < s->workload.n_teams; i++) {
        yaml_node_t *tm = reader_item(f->r, teams, i);
        yaml_node_t *name = reader_get(f->r, tm, "name");
        const struct team_spec *t = &s->workload.teams[k];
        if (!name || strcmp(reader_text(name), t->name) != 0)
            continue;
        char shown[READER_PATH_MAX];
        fill_shown(shown, sizeof shown, "workload.teams", i, "growth_per_quarter");
        check_growth(f, tm, "growth_per_quarter", shown, t->growth_per_quarter);
        if (whole > 0)
            check_fit(f, tm, t, i, whole);
        if (t->growth_per_quarter < GROWTH_PERCENT_LIKE && s->horizon.length_us > 0) {
            double n = synth_expected_jobs(t, 0, s->horizon.length_us, s->start_unix_s);
            jobs += n;
            if (n > most) {
                most = n;
                biggest = i;
            }
        }
        k++;
    }
    if (jobs > SYNTH_MAX_JOBS) {
        yaml_node_t *tm = reader_item(f->r, teams, biggest);
        char horizon[32];
        units_format_duration(horizon, sizeof horizon, (double)s->horizon.length_us / 1e6);
        reader_error(f->r, reader_get(f->r, tm, "jobs_per_hour"),
                     "workload too large to synthesize: about %.3g million jobs over the %s horizon (about %.3g GiB "
                     "per replication), the limit is %d million; lower 'jobs_per_hour' or shorten the horizon",
                     jobs / 1e6, horizon, jobs * JOB_BYTES / 1073741824.0, SYNTH_MAX_JOBS / 1000000);
    }
    return 0;
}
