/* fill: the top-level keys, node types, cluster and runtime sections. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/fill.h"

void fill_shown(char *buf, size_t len, const char *prefix, size_t index, const char *key)
{
    if (key)
        snprintf(buf, len, "%s[%zu].%s", prefix, index, key);
    else
        snprintf(buf, len, "%s[%zu]", prefix, index);
}

enum reader_status fill_number(struct fill *f, yaml_node_t *map, const char *path, double *dst)
{
    struct schema_value v;
    enum reader_status st = reader_value(f->r, map, path, &v);
    if (st == READER_GIVEN || st == READER_DEFAULT)
        *dst = v.num;
    return st;
}

enum reader_status fill_int(struct fill *f, yaml_node_t *map, const char *path, int64_t *dst)
{
    struct schema_value v;
    enum reader_status st = reader_value(f->r, map, path, &v);
    if (st == READER_GIVEN || st == READER_DEFAULT)
        *dst = v.i;
    return st;
}

int fill_top(struct fill *f, yaml_node_t *root)
{
    int64_t seed = 1;
    fill_int(f, root, "seed", &seed);
    f->s->seed = (uint64_t)seed;
    struct schema_value v;
    if (reader_value(f->r, root, "start_date", &v) == READER_GIVEN) {
        f->s->start_unix_s = v.i;
        f->has_start = 1;
    }
    return 0;
}

/* ---- node types ---- */

int fill_node_type_ref(struct fill *f, yaml_node_t *value)
{
    const char *name = reader_text(value);
    if (!value || value->type != YAML_SCALAR_NODE || reader_is_null(value))
        return -1; /* the walk reported it */
    int at = node_catalog_find(&f->s->catalog, name);
    if (at >= 0)
        return at;
    const struct node_catalog *c = &f->s->catalog;
    const char *names[64];
    size_t n = 0;
    for (size_t i = 0; i < c->n && n < 64; i++)
        names[n++] = c->types[i].name;
    const char *near = schema_nearest(name, names, n);
    if (near) {
        reader_error(f->r, value, "unknown node type '%s'; did you mean '%s'?", name, near);
        return -1;
    }
    char known[512] = "";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(known);
        snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", names[i]);
    }
    reader_error(f->r, value, "unknown node type '%s' (known: %s)", name, known);
    return -1;
}

/* Fields given for a node type; *given counts those a new type must have. */
static void node_type_fields(struct fill *f, yaml_node_t *m, struct node_type *t, int *given)
{
    int64_t gpus = t->gpus, domain = t->nvlink_domain_gpus;
    double bytes = t->gpu_memory_gib * 1073741824.0;
    *given = 0;
    *given += fill_int(f, m, "node_types[].gpus", &gpus) == READER_GIVEN;
    fill_int(f, m, "node_types[].nvlink_domain_gpus", &domain);
    *given += fill_number(f, m, "node_types[].nvlink_bandwidth", &t->nvlink_gbps) == READER_GIVEN;
    *given += fill_number(f, m, "node_types[].gpu_memory", &bytes) == READER_GIVEN;
    *given += fill_number(f, m, "node_types[].power", &t->power_w) == READER_GIVEN;
    fill_number(f, m, "node_types[].price_usd", &t->price_usd);
    yaml_node_t *speed = reader_get(f->r, m, "speed");
    *given += fill_number(f, speed, "node_types[].speed.training", &t->speed[JOB_CLASS_TRAINING]) == READER_GIVEN;
    *given += fill_number(f, speed, "node_types[].speed.finetune", &t->speed[JOB_CLASS_FINETUNE]) == READER_GIVEN;
    *given += fill_number(f, speed, "node_types[].speed.inference", &t->speed[JOB_CLASS_INFERENCE]) == READER_GIVEN;
    t->gpus = (int32_t)gpus;
    t->nvlink_domain_gpus = (int32_t)domain;
    t->gpu_memory_gib = bytes / 1073741824.0;
}

enum { NODE_TYPE_REQUIRED_FIELDS = 7 };

/* A new type must say everything a model reads: no silent zeros. One
 * message lists what is missing. */
static void node_type_check_new(struct fill *f, yaml_node_t *m, const char *shown)
{
    static const char *const keys[] = {"gpus", "nvlink_bandwidth", "gpu_memory", "power", "speed"};
    static const char *const classes[] = {"speed.training", "speed.finetune", "speed.inference"};
    char missing[256] = "";
    size_t n = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        if (reader_get(f->r, m, keys[i]))
            continue;
        size_t len = strlen(missing);
        snprintf(missing + len, sizeof missing - len, "%s'%s'", n++ ? ", " : "", keys[i]);
    }
    yaml_node_t *speed = reader_get(f->r, m, "speed");
    for (size_t i = 0; speed && speed->type == YAML_MAPPING_NODE && i < 3; i++) {
        if (reader_get(f->r, speed, classes[i] + 6))
            continue;
        size_t len = strlen(missing);
        snprintf(missing + len, sizeof missing - len, "%s'%s'", n++ ? ", " : "", classes[i]);
    }
    if (n)
        reader_error(f->r, m,
                     "missing %s %s in '%s' (a new node type needs gpus, nvlink_bandwidth, gpu_memory, power and "
                     "speed for all three classes)",
                     n > 1 ? "keys" : "key", missing, shown);
}

static void node_type_check_domain(struct fill *f, yaml_node_t *m, const struct node_type *t, const char *shown)
{
    int32_t d = t->nvlink_domain_gpus, g = t->gpus;
    if (d == 0 || g <= 0 || d % g == 0 || g % d == 0)
        return;
    yaml_node_t *at = reader_get(f->r, m, "nvlink_domain_gpus");
    reader_error(f->r, at ? at : m,
                 "key '%s.nvlink_domain_gpus' is %d, which neither divides nor is a multiple of the %d GPUs "
                 "of a node",
                 shown, (int)d, (int)g);
}

static int node_type_fill(struct fill *f, yaml_node_t *m, size_t index, yaml_node_t *list)
{
    char shown[READER_PATH_MAX];
    fill_shown(shown, sizeof shown, "node_types", index, NULL);
    yaml_node_t *name = reader_get(f->r, m, "name");
    if (!name || name->type != YAML_SCALAR_NODE || reader_is_null(name) || m->type != YAML_MAPPING_NODE)
        return 0; /* reported by the walk */
    const char *text = reader_text(name);
    if (strlen(text) >= NODE_TYPE_NAME_MAX) {
        reader_error(f->r, name, "node type name '%s' is longer than %d characters", text, NODE_TYPE_NAME_MAX - 1);
        return 0;
    }
    for (size_t j = 0; j < index; j++) {
        yaml_node_t *prev = reader_get(f->r, reader_item(f->r, list, j), "name");
        if (prev && strcmp(reader_text(prev), text) == 0) {
            reader_error(f->r, name, "duplicate node type '%s' (first at line %lu)", text,
                         (unsigned long)prev->start_mark.line + 1);
            return 0;
        }
    }
    int at = node_catalog_find(&f->s->catalog, text);
    struct node_type t;
    memset(&t, 0, sizeof t);
    if (at >= 0)
        t = f->s->catalog.types[at];
    snprintf(t.name, sizeof t.name, "%s", text);
    int given;
    node_type_fields(f, m, &t, &given);
    if (at < 0 && given < NODE_TYPE_REQUIRED_FIELDS)
        node_type_check_new(f, m, shown);
    node_type_check_domain(f, m, &t, shown);
    return node_catalog_put(&f->s->catalog, &t) < 0 ? -1 : 0;
}

int fill_node_types(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *list = reader_get(f->r, root, "node_types");
    for (size_t i = 0; i < reader_count(list); i++)
        if (node_type_fill(f, reader_item(f->r, list, i), i, list) != 0)
            return -1;
    return 0;
}

/* ---- cluster ---- */

static int partition_name_ok(struct fill *f, yaml_node_t *list, size_t index, yaml_node_t *name)
{
    const char *text = reader_text(name);
    if (strlen(text) >= PARTITION_NAME_MAX) {
        reader_error(f->r, name, "partition name '%s' is longer than %d characters", text, PARTITION_NAME_MAX - 1);
        return 0;
    }
    for (size_t j = 0; j < index; j++) {
        yaml_node_t *prev = reader_get(f->r, reader_item(f->r, list, j), "name");
        if (prev && strcmp(reader_text(prev), text) == 0) {
            reader_error(f->r, name, "duplicate partition name '%s' (first at line %lu)", text,
                         (unsigned long)prev->start_mark.line + 1);
            return 0;
        }
    }
    return 1;
}

static int partition_fill(struct fill *f, yaml_node_t *list, size_t index)
{
    yaml_node_t *m = reader_item(f->r, list, index);
    if (!m || m->type != YAML_MAPPING_NODE)
        return 0;
    yaml_node_t *name = reader_get(f->r, m, "name");
    yaml_node_t *type = reader_get(f->r, m, "node_type");
    int name_ok = name && name->type == YAML_SCALAR_NODE && !reader_is_null(name) &&
                  partition_name_ok(f, list, index, name);
    int t = type ? fill_node_type_ref(f, type) : -1;
    int64_t nodes = 0;
    if (!name_ok || t < 0 || fill_int(f, m, "cluster.partitions[].nodes", &nodes) != READER_GIVEN)
        return 0;
    struct scenario *s = f->s;
    struct partition_spec *ps = realloc(s->partitions, (s->n_partitions + 1) * sizeof *ps);
    if (!ps)
        return -1;
    s->partitions = ps;
    struct partition_spec *p = &ps[s->n_partitions++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", reader_text(name));
    p->type = t;
    p->nodes = nodes;
    return 0;
}

static void fabric_fill(struct fill *f, yaml_node_t *cluster)
{
    yaml_node_t *m = reader_get(f->r, cluster, "fabric");
    struct fabric_spec *fs = &f->s->fabric;
    struct schema_value v;
    enum reader_status kind = reader_value(f->r, m, "cluster.fabric.kind", &v);
    if (kind >= READER_DEFAULT)
        fabric_kind_parse(v.text, &fs->kind);
    int64_t npl = 32, lpp = 8;
    fill_int(f, m, "cluster.fabric.nodes_per_leaf", &npl);
    fill_int(f, m, "cluster.fabric.leaves_per_pod", &lpp);
    fs->nodes_per_leaf = (int32_t)npl;
    fs->leaves_per_pod = (int32_t)lpp;
    fill_number(f, m, "cluster.fabric.oversubscription", &fs->oversubscription);
    fill_number(f, m, "cluster.fabric.link", &fs->link_gbps);
    if (fs->kind != FABRIC_NONE || kind == READER_BAD || !m || m->type != YAML_MAPPING_NODE)
        return;
    /* Topology keys with no fabric do nothing: say so rather than ignore them. */
    static const char *const keys[] = {"nodes_per_leaf", "leaves_per_pod", "oversubscription", "link"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        yaml_node_t *k = reader_key(f->r, m, keys[i]);
        if (k)
            reader_warning(f->r, k, "key 'cluster.fabric.%s' has no effect with fabric kind 'none'", keys[i]);
    }
}

int fill_cluster(struct fill *f, yaml_node_t *root)
{
    size_t errors = f->r->errors;
    yaml_node_t *cluster = reader_get(f->r, root, "cluster");
    yaml_node_t *list = reader_get(f->r, cluster, "partitions");
    if (list && (list->type == YAML_SEQUENCE_NODE || reader_is_null(list)) && reader_count(list) == 0)
        reader_error(f->r, list, "key 'cluster.partitions' needs at least one partition");
    for (size_t i = 0; i < reader_count(list); i++)
        if (partition_fill(f, list, i) != 0)
            return -1;
    f->cluster_ok = f->r->errors == errors;
    fabric_fill(f, cluster);
    return 0;
}

/* ---- runtime ---- */

int fill_runtime(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *m = reader_get(f->r, root, "runtime");
    struct schema_value v;
    if (reader_value(f->r, m, "runtime.default_class", &v) >= READER_DEFAULT)
        job_class_parse(v.text, &f->s->default_class);
    yaml_node_t *cf = reader_get(f->r, m, "comm_fraction");
    static const char *const paths[JOB_CLASS_COUNT] = {
        "runtime.comm_fraction.training", "runtime.comm_fraction.finetune", "runtime.comm_fraction.inference"};
    for (int k = 0; k < JOB_CLASS_COUNT; k++)
        fill_number(f, cf, paths[k], &f->s->comm_fraction[k]);
    return 0;
}
