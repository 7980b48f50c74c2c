#include "scenarios/reader.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { READER_MAX_VISITS = 1000000 };

/* ---- positions and messages ---- */

static void reader_vreport(struct reader *r, enum diag_level level, const yaml_node_t *at, const char *fmt,
                           va_list ap)
{
    if (level == DIAG_ERROR && r->errors++ >= READER_MAX_ERRORS) {
        if (r->errors == READER_MAX_ERRORS + 1)
            diag_add(r->diags, DIAG_ERROR, r->file, 0, 0, "too many errors; stopped after %d",
                     READER_MAX_ERRORS);
        return;
    }
    char msg[ERR_MSG_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    long line = at ? (long)at->start_mark.line + 1 : 0;
    long col = at ? (long)at->start_mark.column + 1 : 0;
    diag_add(r->diags, level, r->file, line, col, "%s", msg);
}

void reader_error(struct reader *r, const yaml_node_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    reader_vreport(r, DIAG_ERROR, at, fmt, ap);
    va_end(ap);
}

void reader_warning(struct reader *r, const yaml_node_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    reader_vreport(r, DIAG_WARNING, at, fmt, ap);
    va_end(ap);
}

/* ---- the document ---- */

/* Whether libyaml failed for want of memory: it says so, or, where its
 * loader's own copies fail (a tag, an anchor), it says nothing at all. */
static int yaml_out_of_memory(const yaml_parser_t *parser)
{
    return parser->error == YAML_MEMORY_ERROR || parser->error == YAML_NO_ERROR;
}

/* Parses events only, as far as the nesting stays under READER_MAX_DEPTH.
 * Returns 0, or -1 with the error reported (too deep, or out of memory); a
 * syntax error is left for the loader to report with its context. */
static int reader_check_depth(const char *file, const char *data, size_t len, struct diag_list *diags)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return 0; /* the loader says "out of memory" */
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
    int depth = 0, rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            if (yaml_out_of_memory(&parser)) { /* unchecked depth: no loading */
                diag_add(diags, DIAG_ERROR, file, 0, 0, "out of memory reading '%s'", file);
                rc = -1;
            }
            break;
        }
        yaml_event_type_t type = ev.type;
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > READER_MAX_DEPTH) {
                diag_add(diags, DIAG_ERROR, file, (long)ev.start_mark.line + 1, (long)ev.start_mark.column + 1,
                         "nested more than %d levels deep (the limit)", READER_MAX_DEPTH);
                rc = -1;
            }
        } else if (type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        yaml_event_delete(&ev);
        if (rc != 0 || type == YAML_STREAM_END_EVENT)
            break;
    }
    yaml_parser_delete(&parser);
    return rc;
}

int reader_open(struct reader *r, const char *file, const char *data, size_t len, struct diag_list *diags)
{
    memset(r, 0, sizeof *r);
    r->file = file;
    r->diags = diags;
    if (reader_check_depth(file, data, len, diags) != 0) {
        r->errors++;
        return -1;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        diag_add(diags, DIAG_ERROR, file, 0, 0, "out of memory");
        r->errors++;
        return -1;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)data, len);
    int ok = yaml_parser_load(&parser, &r->doc);
    if (!ok && yaml_out_of_memory(&parser)) {
        /* not the file's fault: no position, and nothing said of its syntax */
        diag_add(diags, DIAG_ERROR, file, 0, 0, "out of memory reading '%s'", file);
        r->errors++;
    } else if (!ok) {
        /* libyaml says what it was parsing and where that began: keep both */
        char ctx[128] = "";
        if (parser.context)
            snprintf(ctx, sizeof ctx, " %s (from line %lu, column %lu)", parser.context,
                     (unsigned long)parser.context_mark.line + 1, (unsigned long)parser.context_mark.column + 1);
        long line = (long)parser.problem_mark.line + 1, col = (long)parser.problem_mark.column + 1;
        if (parser.error == YAML_READER_ERROR) {
            /* libyaml gives a reader error (bad UTF-8) as a byte offset only */
            line = 1;
            col = 1;
            for (size_t i = 0; i < parser.problem_offset && i < len; i++) {
                if (data[i] == '\n')
                    line++, col = 1;
                else if (((unsigned char)data[i] & 0xC0) != 0x80)
                    col++;
            }
        }
        diag_add(diags, DIAG_ERROR, file, line, col, "invalid yaml: %s%s", parser.problem ? parser.problem : "syntax error",
                 ctx);
        r->errors++;
    }
    yaml_parser_delete(&parser);
    if (!ok)
        return -1;
    r->loaded = 1;
    if (!yaml_document_get_root_node(&r->doc)) {
        diag_add(diags, DIAG_ERROR, file, 0, 0, "empty scenario: no keys");
        r->errors++;
        return -1;
    }
    return 0;
}

void reader_close(struct reader *r)
{
    if (r->loaded)
        yaml_document_delete(&r->doc);
    r->loaded = 0;
}

yaml_node_t *reader_root(struct reader *r)
{
    return r->loaded ? yaml_document_get_root_node(&r->doc) : NULL;
}

const char *reader_text(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : "";
}

/* A plain `key:` with nothing after it, or ~ / null. */
int reader_is_null(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *t = reader_text(n);
    return !*t || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "NULL");
}

static int is_quoted(const yaml_node_t *n)
{
    return n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
}

static yaml_node_pair_t *find_pair(struct reader *r, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(reader_text(k), key) == 0)
            return p;
    }
    return NULL;
}

yaml_node_t *reader_get(struct reader *r, const yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(r, map, key);
    return p ? yaml_document_get_node(&r->doc, p->value) : NULL;
}

yaml_node_t *reader_key(struct reader *r, const yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(r, map, key);
    return p ? yaml_document_get_node(&r->doc, p->key) : NULL;
}

size_t reader_count(const yaml_node_t *seq)
{
    if (!seq || seq->type != YAML_SEQUENCE_NODE)
        return 0;
    return (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

yaml_node_t *reader_item(struct reader *r, const yaml_node_t *seq, size_t i)
{
    if (i >= reader_count(seq))
        return NULL;
    return yaml_document_get_node(&r->doc, seq->data.sequence.items.start[i]);
}

/* ---- the walk ---- */

/* Where the walk is: the schema path ("cluster.partitions[].nodes") and the
 * path shown to people ("cluster.partitions[1].nodes"). */
struct walk_path {
    char schema[READER_PATH_MAX];
    char shown[READER_PATH_MAX];
};

static void walk_node(struct reader *r, yaml_node_t *node, const struct schema_key *k,
                      const struct walk_path *at);

/* Returns -1 when the path would not fit: no valid key is that long, so the
 * caller reports it as unknown. */
static int path_child(struct walk_path *out, const struct walk_path *at, const char *key)
{
    const char *dot = at->schema[0] ? "." : "";
    int a = snprintf(out->schema, sizeof out->schema, "%s%s%s", at->schema, dot, key);
    int b = snprintf(out->shown, sizeof out->shown, "%s%s%s", at->shown, dot, key);
    return a < 0 || b < 0 || (size_t)a >= sizeof out->schema || (size_t)b >= sizeof out->shown ? -1 : 0;
}

static const char *node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a list";
    default:
        return "a scalar";
    }
}

static void walk_scalar(struct reader *r, yaml_node_t *node, const struct schema_key *k,
                        const struct walk_path *at)
{
    if (node->type != YAML_SCALAR_NODE) {
        reader_error(r, node, "key '%s' must be %s, not %s", at->shown,
                     k->type == SCHEMA_DISTRIBUTION ? "a duration or a mapping" : "a single value",
                     node_kind(node));
        return;
    }
    if (reader_is_null(node)) {
        reader_error(r, node, "key '%s' has no value", at->shown);
        return;
    }
    struct schema_value v;
    char msg[ERR_MSG_MAX];
    if (schema_convert(k, at->shown, reader_text(node), is_quoted(node), &v, msg, sizeof msg) != 0)
        reader_error(r, node, "%s", msg);
}

static int walk_key_node(struct reader *r, yaml_node_t *map, yaml_node_pair_t *p, const struct walk_path *at,
                         yaml_node_t **key)
{
    *key = yaml_document_get_node(&r->doc, p->key);
    if (!*key || (*key)->type != YAML_SCALAR_NODE) {
        reader_error(r, *key ? *key : map, "a key must be a plain name, not %s", *key ? node_kind(*key) : "empty");
        return -1;
    }
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
        yaml_node_t *prev = yaml_document_get_node(&r->doc, q->key);
        if (prev && prev->type == YAML_SCALAR_NODE && strcmp(reader_text(prev), reader_text(*key)) == 0) {
            reader_error(r, *key, "duplicate key '%s' (first at line %lu)", reader_text(*key),
                         (unsigned long)prev->start_mark.line + 1);
            return -1;
        }
    }
    return 0;
}

static void report_unknown(struct reader *r, yaml_node_t *key, const struct walk_path *at)
{
    const char *name = reader_text(key);
    const char *near = schema_nearest_key(at->schema, name);
    const char *where = at->shown[0] ? at->shown : NULL;
    if (near && where)
        reader_error(r, key, "unknown key '%s' in '%s'; did you mean '%s'?", name, where, near);
    else if (near)
        reader_error(r, key, "unknown key '%s'; did you mean '%s'?", name, near);
    else if (where)
        reader_error(r, key, "unknown key '%s' in '%s'", name, where);
    else
        reader_error(r, key, "unknown key '%s'", name);
}

static void walk_required(struct reader *r, yaml_node_t *map, const struct walk_path *at)
{
    const struct schema_key *c;
    if (r->top_optional && !at->schema[0])
        return;
    for (size_t i = 0; (c = schema_child(at->schema, i)); i++) {
        if (!(c->flags & SCHEMA_REQUIRED) || find_pair(r, map, schema_key_name(c)))
            continue;
        if (at->shown[0])
            reader_error(r, map, "missing key '%s' in '%s'", schema_key_name(c), at->shown);
        else
            reader_error(r, map, "missing key '%s'", schema_key_name(c));
    }
}

static void walk_map(struct reader *r, yaml_node_t *map, const struct walk_path *at)
{
    if (reader_is_null(map)) {
        /* `section:` alone (or `~`, or a document of nothing but `---`): no
         * keys, so the keys it must have are missing, as in an empty mapping */
        walk_required(r, map, at);
        return;
    }
    if (map->type != YAML_MAPPING_NODE) {
        if (at->shown[0])
            reader_error(r, map, "key '%s' must be a mapping of keys, not %s", at->shown, node_kind(map));
        else
            reader_error(r, map, "a scenario must be a mapping of keys, not %s", node_kind(map));
        return;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *key;
        if (walk_key_node(r, map, p, at, &key) != 0)
            continue;
        struct walk_path child;
        const struct schema_key *k = path_child(&child, at, reader_text(key)) == 0 ? schema_find(child.schema) : NULL;
        if (!k && (k = schema_wildcard(at->schema)) != NULL)
            snprintf(child.schema, sizeof child.schema, "%s", k->path); /* a data key: checked when filled */
        if (!k) {
            report_unknown(r, key, at);
            continue;
        }
        walk_node(r, yaml_document_get_node(&r->doc, p->value), k, &child);
    }
    walk_required(r, map, at);
}

static void walk_list(struct reader *r, yaml_node_t *seq, const struct walk_path *at)
{
    if (reader_is_null(seq))
        return;
    if (seq->type != YAML_SEQUENCE_NODE) {
        reader_error(r, seq, "key '%s' must be a list, not %s", at->shown, node_kind(seq));
        return;
    }
    struct walk_path item;
    int n = snprintf(item.schema, sizeof item.schema, "%s[]", at->schema);
    const struct schema_key *k = n > 0 && (size_t)n < sizeof item.schema ? schema_find(item.schema) : NULL;
    for (size_t i = 0; k && i < reader_count(seq); i++) {
        n = snprintf(item.shown, sizeof item.shown, "%s[%zu]", at->shown, i);
        if (n > 0 && (size_t)n < sizeof item.shown)
            walk_node(r, reader_item(r, seq, i), k, &item);
    }
}

static void walk_node(struct reader *r, yaml_node_t *node, const struct schema_key *k,
                      const struct walk_path *at)
{
    if (!node || r->errors > READER_MAX_ERRORS)
        return;
    if (++r->visits > READER_MAX_VISITS) {
        if (r->visits == READER_MAX_VISITS + 1)
            reader_error(r, node, "scenario too large: more than %d values (aliases?)", READER_MAX_VISITS);
        return;
    }
    if (k->type == SCHEMA_MAP || (k->type == SCHEMA_DISTRIBUTION && node->type == YAML_MAPPING_NODE))
        walk_map(r, node, at);
    else if (k->type == SCHEMA_LIST)
        walk_list(r, node, at);
    else
        walk_scalar(r, node, k, at);
}

void reader_walk(struct reader *r)
{
    yaml_node_t *root = reader_root(r);
    struct walk_path top = {"", ""};
    if (root)
        walk_map(r, root, &top);
}

/* ---- typed getters ---- */

enum reader_status reader_value(struct reader *r, const yaml_node_t *map, const char *path,
                                struct schema_value *v)
{
    const struct schema_key *k = schema_find(path);
    char msg[ERR_MSG_MAX];
    if (!k)
        return READER_ABSENT; /* a fill function asked for a key the table lacks: a bug */
    yaml_node_t *n = reader_get(r, map, schema_key_name(k));
    if (n) {
        if (n->type != YAML_SCALAR_NODE || reader_is_null(n))
            return READER_BAD;
        return schema_convert(k, path, reader_text(n), is_quoted(n), v, msg, sizeof msg) == 0 ? READER_GIVEN
                                                                                           : READER_BAD;
    }
    if (!k->def)
        return READER_ABSENT;
    return schema_convert(k, path, k->def, 0, v, msg, sizeof msg) == 0 ? READER_DEFAULT : READER_BAD;
}

enum reader_status reader_scalar(struct reader *r, const yaml_node_t *node, const char *path, struct schema_value *v)
{
    const struct schema_key *k = schema_find(path);
    char msg[ERR_MSG_MAX];
    (void)r;
    if (!k || !node || node->type != YAML_SCALAR_NODE || reader_is_null(node))
        return READER_BAD;
    return schema_convert(k, path, reader_text(node), is_quoted(node), v, msg, sizeof msg) == 0 ? READER_GIVEN
                                                                                             : READER_BAD;
}

/* Which parameters each kind takes, in the order of struct distribution's a, b. */
static const char *const dist_params[][2] = {
    [DIST_FIXED] = {"value", NULL},      [DIST_UNIFORM] = {"lo", "hi"},
    [DIST_EXPONENTIAL] = {"mean", NULL}, [DIST_WEIBULL] = {"shape", "scale"},
    [DIST_LOGNORMAL] = {"median", "sigma"},
};

static int dist_takes(enum distribution_kind kind, const char *key)
{
    for (int i = 0; i < 2; i++)
        if (dist_params[kind][i] && strcmp(dist_params[kind][i], key) == 0)
            return 1;
    return !strcmp(key, "distribution");
}

static void dist_param_list(enum distribution_kind kind, char *buf, size_t len)
{
    if (dist_params[kind][1])
        snprintf(buf, len, "'%s' and '%s'", dist_params[kind][0], dist_params[kind][1]);
    else
        snprintf(buf, len, "'%s'", dist_params[kind][0]);
}

/* Parameters given that the kind does not take: errors, never ignored. */
static int dist_check_extra(struct reader *r, yaml_node_t *m, enum distribution_kind kind, const char *shown)
{
    int bad = 0;
    char takes[64];
    dist_param_list(kind, takes, sizeof takes);
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *key = yaml_document_get_node(&r->doc, p->key);
        const char *name = reader_text(key);
        char path[READER_PATH_MAX];
        snprintf(path, sizeof path, "%s.%s", shown, name);
        if (dist_takes(kind, name))
            continue;
        /* unknown keys were reported by the walk; here only known ones */
        bad = 1;
        reader_error(r, key, "key '%s' does not apply to distribution '%s' (it takes %s)", path,
                     distribution_kind_name(kind), takes);
    }
    return bad ? -1 : 0;
}

/* Parameter `which` of the kind; absent ones are collected into *missing
 * for one message. */
static int dist_param(struct reader *r, yaml_node_t *m, const char *path, enum distribution_kind kind, int which,
                      double *out, char *missing, size_t len)
{
    char key_path[READER_PATH_MAX];
    snprintf(key_path, sizeof key_path, "%s.%s", path, dist_params[kind][which]);
    struct schema_value v;
    enum reader_status st = reader_value(r, m, key_path, &v);
    if (st == READER_ABSENT) {
        size_t at = strlen(missing);
        snprintf(missing + at, len - at, "%s'%s'", at ? ", " : "", dist_params[kind][which]);
        return -1;
    }
    *out = v.num;
    return st == READER_GIVEN ? 0 : -1;
}

static enum reader_status dist_from_map(struct reader *r, yaml_node_t *m, const char *path, const char *shown,
                                        struct distribution *d)
{
    char kind_path[READER_PATH_MAX];
    snprintf(kind_path, sizeof kind_path, "%s.distribution", path);
    struct schema_value v;
    enum distribution_kind kind;
    if (reader_value(r, m, kind_path, &v) != READER_GIVEN || distribution_kind_parse(v.text, &kind) != 0)
        return READER_BAD; /* missing or unknown: the walk said so */
    int bad = dist_check_extra(r, m, kind, shown);
    double a = 0, b = 0;
    char missing[64] = "";
    int params_bad = dist_param(r, m, path, kind, 0, &a, missing, sizeof missing);
    if (dist_params[kind][1])
        params_bad |= dist_param(r, m, path, kind, 1, &b, missing, sizeof missing);
    if (*missing) {
        char takes[64];
        dist_param_list(kind, takes, sizeof takes);
        reader_error(r, m, "missing %s %s in '%s' (distribution '%s' takes %s)", strchr(missing, ',') ? "keys" : "key",
                     missing, shown, distribution_kind_name(kind), takes);
    }
    bad |= params_bad;
    if (!params_bad && kind == DIST_UNIFORM && a > b) {
        reader_error(r, reader_get(r, m, "lo"), "key '%s.lo' (%s) is greater than '%s.hi' (%s)", shown,
                     reader_text(reader_get(r, m, "lo")), shown, reader_text(reader_get(r, m, "hi")));
        bad = 1;
    }
    if (bad)
        return READER_BAD;
    *d = (struct distribution){kind, a, b};
    return READER_GIVEN;
}

enum reader_status reader_distribution(struct reader *r, const yaml_node_t *map, const char *path,
                                       const char *shown, struct distribution *d)
{
    const struct schema_key *k = schema_find(path);
    yaml_node_t *n = k ? reader_get(r, map, schema_key_name(k)) : NULL;
    if (!n)
        return READER_ABSENT;
    if (n->type == YAML_MAPPING_NODE)
        return dist_from_map(r, n, path, shown, d);
    struct schema_value v;
    enum reader_status st = reader_value(r, map, path, &v);
    if (st == READER_GIVEN)
        *d = (struct distribution){DIST_FIXED, v.num, 0};
    return st;
}
