#include "traces/jsonl.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/node_types.h"
#include "sim/atomic_file.h"
#include "sim/units.h"
#include "traces/textfile.h"
#include "sim/suggest.h"

enum {
    JSONL_MAX_ERRORS = 20, /* then stop: the file is probably not a trace at all */
    JSONL_SUGGEST_MAX = 3  /* edit distance beyond which a suggestion is noise */
};

/* Times past 1e12 s are garbage, and in microseconds they still fit int64. */
#define JSONL_MAX_S 1e12

enum jsonl_type { JSONL_NUMBER, JSONL_INTEGER, JSONL_STRING, JSONL_ARRAY };

/* The job keys; the order is the writer's. `use` says where a value goes;
 * JSONL_IGNORED keys are what the live agent records for people, which a
 * replay does not need. */
enum jsonl_use {
    JSONL_ID,
    JSONL_SUBMIT,
    JSONL_RUNTIME,
    JSONL_LIMIT,
    JSONL_GPUS,
    JSONL_USER,
    JSONL_TEAM,
    JSONL_STATUS,
    JSONL_CLASS,
    JSONL_GPU_MILLI,
    JSONL_GPU_MODEL,
    JSONL_NODES,
    JSONL_START,
    JSONL_IGNORED,
    JSONL_VERSION,
    JSONL_MAX_NODES,
    JSONL_MAX_PROCS,
    JSONL_UNIX_START
};

struct jsonl_key {
    const char *name;
    enum jsonl_type type;
    enum jsonl_use use;
    int required;
    int min_exclusive; /* the value must be > min rather than >= min */
    double min, max;
};

static const struct jsonl_key jsonl_job_keys[] = {
    {"id", JSONL_INTEGER, JSONL_ID, 0, 0, -9.3e18, 9.3e18}, /* every int64_t (jansson refuses the rest) */
    {"submit_s", JSONL_NUMBER, JSONL_SUBMIT, 1, 0, 0, JSONL_MAX_S},
    {"runtime_s", JSONL_NUMBER, JSONL_RUNTIME, 1, 0, 0, JSONL_MAX_S},
    {"limit_s", JSONL_NUMBER, JSONL_LIMIT, 0, 1, 0, JSONL_MAX_S},
    {"gpus", JSONL_INTEGER, JSONL_GPUS, 1, 0, 1, 1e6},
    {"user", JSONL_STRING, JSONL_USER, 0, 0, 0, 0},
    {"team", JSONL_STRING, JSONL_TEAM, 0, 0, 0, 0},
    {"status", JSONL_INTEGER, JSONL_STATUS, 0, 0, -1, INT32_MAX},
    {"class", JSONL_STRING, JSONL_CLASS, 0, 0, 0, 0},
    {"gpu_milli", JSONL_INTEGER, JSONL_GPU_MILLI, 0, 0, 1, 1000},
    {"gpu_model", JSONL_STRING, JSONL_GPU_MODEL, 0, 0, 0, 0},
    {"nodes", JSONL_INTEGER, JSONL_NODES, 0, 0, 1, 1e6},
    {"start_s", JSONL_NUMBER, JSONL_START, 0, 0, 0, JSONL_MAX_S},
    {"end_s", JSONL_NUMBER, JSONL_IGNORED, 0, 0, 0, JSONL_MAX_S},
    {"exit", JSONL_INTEGER, JSONL_IGNORED, 0, 0, INT32_MIN, INT32_MAX},
    {"name", JSONL_STRING, JSONL_IGNORED, 0, 0, 0, 0},
    {"placement", JSONL_ARRAY, JSONL_IGNORED, 0, 0, 0, 0},
};

static const struct jsonl_key jsonl_header_keys[] = {
    {"fleetsim_trace", JSONL_INTEGER, JSONL_VERSION, 1, 0, 1, 1},
    {"max_nodes", JSONL_INTEGER, JSONL_MAX_NODES, 0, 0, 1, 1e9},
    {"max_procs", JSONL_INTEGER, JSONL_MAX_PROCS, 0, 0, 1, 1e9},
    {"unix_start_s", JSONL_INTEGER, JSONL_UNIX_START, 0, 0, 0, JSONL_MAX_S},
};

#define JSONL_N_JOB_KEYS (sizeof jsonl_job_keys / sizeof *jsonl_job_keys)
#define JSONL_N_HEADER_KEYS (sizeof jsonl_header_keys / sizeof *jsonl_header_keys)

struct jsonl_reader {
    struct textfile_report rep;
    struct workload *w;
    int seen_content; /* a non-blank line went by: a header is no longer allowed */
};

/* One line being read. */
struct jsonl_line {
    const char *text;
    size_t len;
    long line;
};

/* ---- messages ---- */


/* ---- keys ---- */

/* The nearest key, or NULL when none is close enough to be a typo. A
 * suggestion must be nearer than the key is long, or "foo" would get "id". */
static const char *jsonl_suggest(const char *key, const struct jsonl_key *keys, size_t n)
{
    const char *best = NULL;
    size_t best_d = JSONL_SUGGEST_MAX + 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = suggest_distance(key, keys[i].name);
        if (d < best_d) {
            best_d = d;
            best = keys[i].name;
        }
    }
    return best && best_d < strlen(key) ? best : NULL;
}

static const struct jsonl_key *jsonl_find(const char *key, const struct jsonl_key *keys, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(key, keys[i].name) == 0)
            return &keys[i];
    return NULL;
}

/* jansson gives no positions for keys, so find `"key"` followed by ':' in the
 * raw line. A key written with escapes is not found: column 1 then. */
static void jsonl_key_cols(const struct jsonl_line *ln, const char *key, long *key_col,
                           long *val_col)
{
    *key_col = *val_col = 1;
    size_t k = strlen(key);
    for (size_t i = 0; i + k + 2 <= ln->len; i++) {
        const char *p = ln->text + i;
        if (p[0] != '"' || memcmp(p + 1, key, k) != 0 || p[k + 1] != '"')
            continue;
        size_t j = i + k + 2;
        while (j < ln->len && (ln->text[j] == ' ' || ln->text[j] == '\t'))
            j++;
        if (j >= ln->len || ln->text[j] != ':')
            continue;
        j++;
        while (j < ln->len && (ln->text[j] == ' ' || ln->text[j] == '\t'))
            j++;
        *key_col = (long)i + 1;
        *val_col = (long)j + 1;
        return;
    }
}

static const char *jsonl_type_name(enum jsonl_type t)
{
    switch (t) {
    case JSONL_NUMBER:
        return "a number";
    case JSONL_INTEGER:
        return "an integer";
    case JSONL_STRING:
        return "a string";
    case JSONL_ARRAY:
        return "an array";
    }
    return "?";
}

static int jsonl_type_ok(const json_t *v, enum jsonl_type t)
{
    switch (t) {
    case JSONL_NUMBER:
        return json_is_number(v);
    case JSONL_INTEGER:
        return json_is_integer(v);
    case JSONL_STRING:
        return json_is_string(v);
    case JSONL_ARRAY:
        return json_is_array(v);
    }
    return 0;
}

static double jsonl_number(const json_t *v)
{
    return json_is_integer(v) ? (double)json_integer_value(v) : json_real_value(v);
}

static void jsonl_format_number(char *buf, size_t cap, const json_t *v)
{
    if (json_is_integer(v))
        snprintf(buf, cap, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else
        snprintf(buf, cap, "%.15g", json_real_value(v));
}

/* Type and range of one value; reports and returns -1 when wrong. */
static int jsonl_check_value(struct jsonl_reader *r, const struct jsonl_line *ln,
                             const struct jsonl_key *k, const json_t *v)
{
    long key_col, val_col;
    jsonl_key_cols(ln, k->name, &key_col, &val_col);
    if (!jsonl_type_ok(v, k->type)) {
        textfile_error(&r->rep, ln->line, val_col, "key '%s' must be %s", k->name, jsonl_type_name(k->type));
        return -1;
    }
    if (k->type != JSONL_NUMBER && k->type != JSONL_INTEGER)
        return 0;
    double x = jsonl_number(v);
    int low = k->min_exclusive ? !(x > k->min) : !(x >= k->min);
    if (!low && x <= k->max)
        return 0;
    char got[64];
    jsonl_format_number(got, sizeof got, v);
    if (k->min_exclusive)
        textfile_error(&r->rep, ln->line, val_col, "key '%s' is %s, expected more than %.15g and at most %.15g",
                    k->name, got, k->min, k->max);
    else
        textfile_error(&r->rep, ln->line, val_col, "key '%s' is %s, expected %.15g to %.15g", k->name, got,
                    k->min, k->max);
    return -1;
}

/* Reports an unknown key; returns the suggested key's index or -1. */
static long jsonl_unknown_key(struct jsonl_reader *r, const struct jsonl_line *ln, const char *key,
                              const struct jsonl_key *keys, size_t n)
{
    long key_col, val_col;
    jsonl_key_cols(ln, key, &key_col, &val_col);
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, key, strlen(key));
    const char *near = jsonl_suggest(key, keys, n);
    if (!near) {
        textfile_error(&r->rep, ln->line, key_col, "unknown key '%s'", q);
        return -1;
    }
    textfile_error(&r->rep, ln->line, key_col, "unknown key '%s'; did you mean '%s'?", q, near);
    return (long)(jsonl_find(near, keys, n) - keys);
}

/* Checks every key of obj against the table; fills found[] (by table index).
 * A required key that a typo stands for is not reported missing as well:
 * one mistake, one message. Returns the number of problems. */
static int jsonl_check_keys(struct jsonl_reader *r, const struct jsonl_line *ln, json_t *obj,
                            const struct jsonl_key *keys, size_t n, json_t **found)
{
    int bad = 0;
    const char *key;
    json_t *v;
    unsigned char named[JSONL_N_JOB_KEYS > JSONL_N_HEADER_KEYS ? JSONL_N_JOB_KEYS : JSONL_N_HEADER_KEYS];
    for (size_t i = 0; i < n; i++)
        found[i] = NULL, named[i] = 0;
    json_object_foreach(obj, key, v) {
        const struct jsonl_key *k = jsonl_find(key, keys, n);
        if (!k) {
            long near = jsonl_unknown_key(r, ln, key, keys, n);
            if (near >= 0)
                named[near] = 1;
            bad++;
            continue;
        }
        named[k - keys] = 1;
        if (jsonl_check_value(r, ln, k, v) != 0)
            bad++;
        else
            found[k - keys] = v;
    }
    for (size_t i = 0; i < n; i++) {
        if (keys[i].required && !named[i]) {
            textfile_error(&r->rep, ln->line, 1, "missing key '%s'", keys[i].name);
            bad++;
        }
    }
    return bad;
}

/* ---- lines ---- */

static sim_time jsonl_us(const json_t *v)
{
    if (json_is_integer(v))
        return (sim_time)json_integer_value(v) * SIM_US_PER_S;
    return (sim_time)llround(json_real_value(v) * 1e6);
}

static void jsonl_header(struct jsonl_reader *r, const struct jsonl_line *ln, json_t *obj)
{
    json_t *found[JSONL_N_HEADER_KEYS];
    const json_t *version = json_object_get(obj, "fleetsim_trace");
    if (json_is_integer(version) && json_integer_value(version) != 1) {
        long key_col, val_col;
        jsonl_key_cols(ln, "fleetsim_trace", &key_col, &val_col);
        textfile_error(&r->rep, ln->line, val_col,
                    "unsupported fleetsim_trace version %" JSON_INTEGER_FORMAT " (this reader knows 1)",
                    json_integer_value(version));
        return;
    }
    if (jsonl_check_keys(r, ln, obj, jsonl_header_keys, JSONL_N_HEADER_KEYS, found) != 0)
        return;
    for (size_t i = 0; i < JSONL_N_HEADER_KEYS; i++) {
        if (!found[i])
            continue;
        int64_t x = (int64_t)json_integer_value(found[i]);
        switch (jsonl_header_keys[i].use) {
        case JSONL_MAX_NODES:
            r->w->meta.max_nodes = x;
            break;
        case JSONL_MAX_PROCS:
            r->w->meta.max_procs = x;
            break;
        case JSONL_UNIX_START:
            r->w->meta.unix_start_s = x;
            break;
        default:
            break;
        }
    }
}

static int32_t jsonl_intern(struct jsonl_reader *r, struct string_table *t, const json_t *v,
                            long line)
{
    if (!v)
        return -1;
    int32_t k = string_table_intern(t, json_string_value(v));
    if (k < 0)
        textfile_out_of_memory(&r->rep, line);
    return k;
}

/* "training", "finetune" or "inference" (models/node_types.h's names). */
static int jsonl_class(struct jsonl_reader *r, const struct jsonl_line *ln, const json_t *v, int32_t *out)
{
    enum job_class k;
    if (job_class_parse(json_string_value(v), &k) == 0) {
        *out = (int32_t)k;
        return 0;
    }
    long key_col, val_col;
    jsonl_key_cols(ln, "class", &key_col, &val_col);
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, json_string_value(v), json_string_length(v));
    textfile_error(&r->rep, ln->line, val_col, "key 'class' is '%s', expected training, finetune or inference", q);
    return -1;
}

/* A GPU-model constraint: names separated by '|', none empty. */
static int jsonl_gpu_model(struct jsonl_reader *r, const struct jsonl_line *ln, const json_t *v, int32_t *out)
{
    const char *s = json_string_value(v);
    size_t n = json_string_length(v);
    int ok = n > 0 && s[0] != '|' && s[n - 1] != '|' && !strstr(s, "||") && strlen(s) == n;
    if (!ok) {
        long key_col, val_col;
        jsonl_key_cols(ln, "gpu_model", &key_col, &val_col);
        char q[TEXTFILE_QUOTE_CAP];
        textfile_quote(q, sizeof q, s, n);
        textfile_error(&r->rep, ln->line, val_col,
                       "key 'gpu_model' is '%s', expected GPU model names separated by '|' (\"V100M16|V100M32\")", q);
        return -1;
    }
    int32_t k = jsonl_intern(r, &r->w->gpu_models, v, ln->line);
    *out = k < 0 ? 0 : k + 1;
    return 0;
}

static void jsonl_job(struct jsonl_reader *r, const struct jsonl_line *ln, json_t *obj)
{
    json_t *found[JSONL_N_JOB_KEYS];
    if (jsonl_check_keys(r, ln, obj, jsonl_job_keys, JSONL_N_JOB_KEYS, found) != 0)
        return;
    struct job j = {.id = ln->line, .limit_us = -1, .user = -1, .team = -1, .status = -1, .job_class = -1,
                    .source_line = ln->line};
    sim_time start_us = -1;
    for (size_t i = 0; i < JSONL_N_JOB_KEYS; i++) {
        const json_t *v = found[i];
        if (!v)
            continue;
        switch (jsonl_job_keys[i].use) {
        case JSONL_ID:
            j.id = (int64_t)json_integer_value(v);
            break;
        case JSONL_SUBMIT:
            j.submit_us = jsonl_us(v);
            break;
        case JSONL_RUNTIME:
            j.runtime_us = jsonl_us(v);
            break;
        case JSONL_LIMIT:
            /* > 0 s must stay > 0 us, or the writer would emit a limit of 0 */
            j.limit_us = jsonl_us(v) > 0 ? jsonl_us(v) : 1;
            break;
        case JSONL_GPUS:
            j.slots = (int32_t)json_integer_value(v);
            break;
        case JSONL_USER:
            j.user = jsonl_intern(r, &r->w->users, v, ln->line);
            break;
        case JSONL_TEAM:
            j.team = jsonl_intern(r, &r->w->teams, v, ln->line);
            break;
        case JSONL_STATUS:
            j.status = (int32_t)json_integer_value(v);
            break;
        case JSONL_CLASS:
            if (jsonl_class(r, ln, v, &j.job_class) != 0)
                return;
            break;
        case JSONL_GPU_MILLI:
            j.gpu_milli = (int32_t)json_integer_value(v);
            break;
        case JSONL_GPU_MODEL:
            if (jsonl_gpu_model(r, ln, v, &j.gpu_models) != 0)
                return;
            break;
        case JSONL_NODES:
            j.nodes = (int32_t)json_integer_value(v);
            break;
        case JSONL_START:
            start_us = jsonl_us(v);
            break;
        default:
            break;
        }
    }
    if (j.gpu_milli == 1000)
        j.gpu_milli = 0; /* a whole GPU */
    if (j.gpu_milli > 0 && j.slots != 1) {
        long key_col, val_col;
        jsonl_key_cols(ln, "gpu_milli", &key_col, &val_col);
        textfile_error(&r->rep, ln->line, val_col,
                       "key 'gpu_milli' is %d with 'gpus' %d: a fraction of a GPU needs 'gpus' 1", (int)j.gpu_milli,
                       (int)j.slots);
        return;
    }
    if (j.nodes > 0 && (j.slots % j.nodes != 0 || (j.gpu_milli > 0 && j.nodes != 1))) {
        long key_col, val_col;
        jsonl_key_cols(ln, "nodes", &key_col, &val_col);
        textfile_error(&r->rep, ln->line, val_col,
                       "key 'nodes' is %d with 'gpus' %d: a job of n nodes has the same GPUs on each, so n must "
                       "divide 'gpus'%s",
                       (int)j.nodes, (int)j.slots, j.gpu_milli > 0 ? " (a fraction of a GPU runs on 1 node)" : "");
        return;
    }
    if (start_us >= j.submit_us) { /* the recorded queue time, for trace stats */
        j.wait_us = start_us - j.submit_us;
        j.wait_known = 1;
    }
    if (r->rep.no_memory)
        return;
    if (!workload_push(r->w, &j))
        textfile_out_of_memory(&r->rep, ln->line);
}

/* jansson quotes the bytes near the error, which may be binary garbage:
 * those become \xNN, as in every message we print. */
static void jsonl_clean(char *out, size_t cap, const char *in)
{
    size_t o = 0;
    for (; *in && o + 5 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        if (c >= 0x20 && c < 0x7f)
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = '\0';
}

/* jansson parses each line as a whole document; its "end of file" is the
 * end of our line. */
static void jsonl_syntax_error(struct jsonl_reader *r, const struct jsonl_line *ln,
                               const json_error_t *je)
{
    char raw[sizeof je->text + 16], text[4 * sizeof raw];
    const char *eof = strstr(je->text, "end of file");
    if (eof)
        snprintf(raw, sizeof raw, "%.*send of line%s", (int)(eof - je->text), je->text,
                 eof + strlen("end of file"));
    else
        snprintf(raw, sizeof raw, "%s", je->text);
    jsonl_clean(text, sizeof text, raw);
    long col = je->position > 0 ? (long)je->position : 1; /* bytes, like every column we report */
    textfile_error(&r->rep, ln->line, col, "invalid json: %s", text);
}

static int jsonl_is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

static void jsonl_line(struct jsonl_reader *r, const struct jsonl_line *ln)
{
    if (jsonl_is_blank(ln->text, ln->len))
        return;
    int first = !r->seen_content;
    r->seen_content = 1;
    json_error_t je;
    textfile_json_watch();
    json_t *obj = json_loadb(ln->text, ln->len, JSON_REJECT_DUPLICATES, &je);
    if (!obj) {
        if (textfile_json_out_of_memory(&je))
            textfile_out_of_memory(&r->rep, ln->line);
        else
            jsonl_syntax_error(r, ln, &je);
        return;
    }
    if (!json_is_object(obj)) {
        textfile_error(&r->rep, ln->line, 1, "expected a json object (one job per line)");
    } else if (json_object_get(obj, "fleetsim_trace")) {
        if (first)
            jsonl_header(r, ln, obj);
        else
            textfile_error(&r->rep, ln->line, 1, "header ('fleetsim_trace') allowed on the first line only");
    } else {
        jsonl_job(r, ln, obj);
    }
    json_decref(obj);
}

int jsonl_read_buffer(const char *name, const char *data, size_t len, struct workload *w,
                      struct diag_list *diags, struct err *err)
{
    struct jsonl_reader r = {.rep = {name, diags, err, 0, JSONL_MAX_ERRORS, 0, 0}, .w = w};
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    workload_reserve(w, w->n + textfile_records_bound(&it, TEXTFILE_RECORD_MIN)); /* a job a line at most */
    struct jsonl_line ln;
    while (!r.rep.stopped && textfile_lines_next(&it, &ln.text, &ln.len)) {
        ln.line = it.line;
        jsonl_line(&r, &ln);
    }
    if (r.rep.no_memory || r.rep.errors)
        return -1;
    workload_sort_by_submit(w);
    if (w->n == 0) {
        diag_add(diags, DIAG_ERROR, name, 0, 0, "no jobs in '%s'", name);
        return err_set(err, name, 0, 0, "no jobs in '%s'", name);
    }
    return 0;
}

int jsonl_read(const char *path, struct workload *w, struct diag_list *diags, struct err *err)
{
    char *data;
    size_t len;
    if (textfile_load(path, &data, &len, diags, err) != 0)
        return -1;
    int rc = jsonl_read_buffer(path, data, len, w, diags, err);
    free(data);
    return rc;
}

/* ---- writing ---- */

/* JSON string escaping; bytes >= 0x80 pass through (UTF-8 stays UTF-8). */
static void jsonl_put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void jsonl_put_header(FILE *f, const struct workload_meta *m)
{
    fputs("{\"fleetsim_trace\":1", f);
    if (m->max_nodes > 0)
        fprintf(f, ",\"max_nodes\":%" PRId64, m->max_nodes);
    if (m->max_procs > 0)
        fprintf(f, ",\"max_procs\":%" PRId64, m->max_procs);
    if (m->unix_start_s >= 0)
        fprintf(f, ",\"unix_start_s\":%" PRId64, m->unix_start_s);
    fputs("}\n", f);
}

static void jsonl_put_job(FILE *f, const struct workload *w, const struct job *j)
{
    char s[48];
    fprintf(f, "{\"id\":%" PRId64, j->id);
    units_format_seconds(s, sizeof s, j->submit_us);
    fprintf(f, ",\"submit_s\":%s", s);
    units_format_seconds(s, sizeof s, j->runtime_us);
    fprintf(f, ",\"runtime_s\":%s", s);
    if (j->limit_us != -1) {
        units_format_seconds(s, sizeof s, j->limit_us);
        fprintf(f, ",\"limit_s\":%s", s);
    }
    fprintf(f, ",\"gpus\":%" PRId32, j->slots);
    const char *user = string_table_get(&w->users, j->user);
    const char *team = string_table_get(&w->teams, j->team);
    if (user) {
        fputs(",\"user\":", f);
        jsonl_put_string(f, user);
    }
    if (team) {
        fputs(",\"team\":", f);
        jsonl_put_string(f, team);
    }
    if (j->status != -1)
        fprintf(f, ",\"status\":%" PRId32, j->status);
    if (j->job_class >= 0 && j->job_class < JOB_CLASS_COUNT)
        fprintf(f, ",\"class\":\"%s\"", job_class_name((enum job_class)j->job_class));
    if (j->gpu_milli > 0 && j->gpu_milli < 1000)
        fprintf(f, ",\"gpu_milli\":%" PRId32, j->gpu_milli);
    const char *models = workload_job_models(w, j);
    if (models) {
        fputs(",\"gpu_model\":", f);
        jsonl_put_string(f, models);
    }
    if (j->nodes > 0)
        fprintf(f, ",\"nodes\":%" PRId32, j->nodes);
    if (j->wait_known) {
        units_format_seconds(s, sizeof s, j->submit_us + j->wait_us);
        fprintf(f, ",\"start_s\":%s", s);
    }
    fputs("}\n", f);
}

static int jsonl_put_all(FILE *f, const struct workload *w)
{
    jsonl_put_header(f, &w->meta);
    for (size_t i = 0; i < w->n && !ferror(f); i++)
        jsonl_put_job(f, w, &w->jobs[i]);
    return fflush(f) != 0 || ferror(f) ? -1 : 0;
}

/* Through atomic_file: readers see the old file or the whole new one, never
 * a half, and a failure leaves the old one in place. */
static int jsonl_write_file(const char *path, const struct workload *w, struct err *err)
{
    struct atomic_file f;
    if (atomic_file_open(&f, path, err) != 0)
        return -1;
    if (jsonl_put_all(f.fp, w) != 0) {
        int saved = errno;
        atomic_file_abort(&f);
        return atomic_file_write_error(err, path, saved);
    }
    return atomic_file_commit(&f, err);
}

int jsonl_write(const char *path, FILE *out, const struct workload *w, struct err *err)
{
    if (path && strcmp(path, "-") != 0)
        return jsonl_write_file(path, w, err);
    if (jsonl_put_all(out, w) != 0)
        return err_set(err, "-", 0, 0, "cannot write the trace: %s", strerror(errno));
    return 0;
}
