#include "agent/slurm_json.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies a JSON string (or "" for null/absent) into dst; -1 when too long. */
static int copy_str(char *dst, size_t size, const json_t *v)
{
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    size_t len = strlen(s);
    if (len >= size)
        return -1;
    memcpy(dst, s, len + 1);
    return 0;
}

static int64_t int_or(const json_t *v, int64_t fallback)
{
    if (json_is_integer(v))
        return (int64_t)json_integer_value(v);
    if (json_is_real(v))
        return (int64_t)json_real_value(v);
    return fallback;
}

/* Loads the document and returns its array `key`, or NULL with err set. */
static json_t *load_array(const char *text, size_t len, const char *key, const char *what, json_t **root,
                          struct err *err)
{
    json_error_t je;
    *root = json_loadb(text, len, 0, &je);
    if (!*root) {
        err_set(err, what, je.line, je.column, "not JSON: %s", je.text);
        return NULL;
    }
    json_t *errors = json_object_get(*root, "errors");
    if (json_is_array(errors) && json_array_size(errors) > 0) {
        json_t *e = json_array_get(errors, 0);
        const char *msg = json_string_value(json_object_get(e, "error"));
        const char *desc = json_string_value(json_object_get(e, "description"));
        err_set(err, what, 0, 0, "slurm reports an error: %s%s%s", msg ? msg : "(no message)",
                desc && *desc ? ": " : "", desc ? desc : "");
        return NULL;
    }
    json_t *arr = json_object_get(*root, key);
    if (!json_is_array(arr)) {
        err_set(err, what, 0, 0, "no '%s' array in the output", key);
        return NULL;
    }
    return arr;
}

/* The document's array `key` (*arr) and a zeroed record per element (one
 * more, so never calloc(0)); NULL with err set and *root released. */
static void *load_records(const char *text, size_t len, const char *key, const char *what, size_t elem,
                          json_t **root, json_t **arr, struct err *err)
{
    *arr = load_array(text, len, key, what, root, err);
    void *recs = *arr ? calloc(json_array_size(*arr) + 1, elem) : NULL;
    if (*arr && !recs)
        err_set(err, NULL, 0, 0, "out of memory");
    if (!recs) {
        json_decref(*root);
        *root = NULL;
    }
    return recs;
}

int32_t slurm_gres_gpus(const char *s)
{
    /* items separated by ','; but "(IDX:0-1,4)" holds commas too */
    int32_t total = 0;
    const char *p = s;
    while (p && *p) {
        const char *end = p;
        int depth = 0;
        while (*end && (depth > 0 || *end != ',')) {
            depth += *end == '(';
            depth -= *end == ')';
            end++;
        }
        const char *item = p;
        if (strncmp(item, "gres:", 5) == 0 || strncmp(item, "gres/", 5) == 0)
            item += 5;
        if (strncmp(item, "gpu", 3) == 0 && (item[3] == ':' || item[3] == '=')) {
            /* the count is the last ':'- or '='-separated field, before a
             * trailing "(IDX:...)" or "(S:...)" ("(null)" is a type name) */
            const char *stop = end;
            if (stop > item && stop[-1] == ')') {
                const char *open = stop - 1;
                while (open > item && *open != '(')
                    open--;
                if (*open == '(')
                    stop = open;
            }
            const char *q = stop;
            while (q > item && isdigit((unsigned char)q[-1]))
                q--;
            if (q < stop && (q[-1] == ':' || q[-1] == '='))
                total += (int32_t)strtol(q, NULL, 10);
        }
        p = *end ? end + 1 : end;
    }
    return total;
}

int slurm_gres_indices(const char *s, int32_t *idx, size_t max)
{
    const char *p = strstr(s, "IDX:");
    if (!p)
        return 0;
    p += 4;
    size_t n = 0;
    while (*p && *p != ')') {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            return -1;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a)
                return -1;
            p = end;
        }
        for (long i = a; i <= b; i++) {
            if (n >= max)
                return -1;
            idx[n++] = (int32_t)i;
        }
        if (*p == ',')
            p++;
        else if (*p != ')' && *p)
            return -1;
    }
    return (int)n;
}

/* Appends prefix + number (zero-padded to width) + suffix. */
static int add_name(char (*names)[SLURM_NAME_MAX], size_t max, size_t *n, const char *prefix, size_t plen, long num,
                    int width, const char *suffix, size_t slen)
{
    if (*n >= max)
        return -1;
    char num_text[32];
    int nl = num >= 0 ? snprintf(num_text, sizeof num_text, "%0*ld", width, num) : 0;
    if (num < 0)
        num_text[0] = '\0';
    if (plen + (size_t)nl + slen >= SLURM_NAME_MAX)
        return -1;
    memcpy(names[*n], prefix, plen);
    memcpy(names[*n] + plen, num_text, (size_t)nl);
    memcpy(names[*n] + plen + (size_t)nl, suffix, slen);
    names[*n][plen + (size_t)nl + slen] = '\0';
    (*n)++;
    return 0;
}

int slurm_hostlist_expand(const char *list, char (*names)[SLURM_NAME_MAX], size_t max)
{
    size_t n = 0;
    const char *p = list;
    while (*p) {
        const char *start = p;
        const char *br = NULL;
        while (*p && *p != ',' && *p != '[')
            p++;
        if (*p != '[') { /* a plain name */
            if (p > start && add_name(names, max, &n, start, (size_t)(p - start), -1, 0, "", 0) != 0)
                return -1;
            if (*p == ',')
                p++;
            continue;
        }
        br = p;
        const char *close = strchr(br, ']');
        if (!close)
            return -1;
        const char *suffix = close + 1, *suffix_end = suffix;
        while (*suffix_end && *suffix_end != ',')
            suffix_end++;
        const char *r = br + 1;
        while (r < close) {
            char *end;
            const char *num_start = r;
            long a = strtol(r, &end, 10), b = a;
            if (end == r || a < 0)
                return -1;
            int width = (int)(end - num_start);
            r = end;
            if (*r == '-') {
                b = strtol(r + 1, &end, 10);
                if (end == r + 1 || b < a || b - a > 100000)
                    return -1;
                r = end;
            }
            for (long i = a; i <= b; i++)
                if (add_name(names, max, &n, start, (size_t)(br - start), i, width, suffix,
                             (size_t)(suffix_end - suffix)) != 0)
                    return -1;
            if (*r == ',')
                r++;
            else if (r != close)
                return -1;
        }
        p = suffix_end;
        if (*p == ',')
            p++;
    }
    return (int)n;
}

static int has_flag(const json_t *flags, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(flags, i, v) if (json_is_string(v) && strcmp(json_string_value(v), name) == 0) return 1;
    return 0;
}

static int in_partition(const json_t *parts, const char *partition)
{
    if (json_is_string(parts)) { /* a job: "gpu" or "gpu,ext" */
        const char *s = json_string_value(parts);
        size_t len = strlen(partition);
        for (const char *p = s; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
            if (strncmp(p, partition, len) == 0 && (p[len] == ',' || p[len] == '\0'))
                return 1;
        return 0;
    }
    size_t i;
    json_t *v;
    json_array_foreach(parts, i, v) if (json_is_string(v) && strcmp(json_string_value(v), partition) == 0) return 1;
    return 0;
}

int slurm_parse_nodes(const char *text, size_t len, const char *partition, struct slurm_node **out, size_t *n,
                      struct err *err)
{
    *out = NULL;
    *n = 0;
    json_t *root, *arr;
    struct slurm_node *nodes = load_records(text, len, "nodes", "sinfo --json", sizeof *nodes, &root, &arr, err);
    if (!nodes)
        return -1;
    size_t count = 0, i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (partition && !in_partition(json_object_get(v, "partitions"), partition))
            continue;
        struct slurm_node *nd = &nodes[count];
        if (copy_str(nd->name, sizeof nd->name, json_object_get(v, "name")) != 0 || !nd->name[0]) {
            free(nodes);
            json_decref(root);
            return err_set(err, "sinfo --json", 0, 0, "node %zu: missing or too long 'name'", i);
        }
        int dup = 0;
        for (size_t k = 0; k < count && !dup; k++)
            dup = strcmp(nodes[k].name, nd->name) == 0;
        if (dup)
            continue;
        const char *gres = json_string_value(json_object_get(v, "gres"));
        const char *used = json_string_value(json_object_get(v, "gres_used"));
        nd->gpus = gres ? slurm_gres_gpus(gres) : 0;
        nd->gpus_used = used ? slurm_gres_gpus(used) : 0;
        (void)copy_str(nd->features, sizeof nd->features, json_object_get(v, "active_features"));
        if (!nd->features[0])
            (void)copy_str(nd->features, sizeof nd->features, json_object_get(v, "features"));
        (void)copy_str(nd->reason, sizeof nd->reason, json_object_get(v, "reason"));
        const char *state = json_string_value(json_object_get(v, "state"));
        const json_t *flags = json_object_get(v, "state_flags");
        state = state ? state : "unknown";
        nd->down = strstr(state, "down") || strstr(state, "fail") || strstr(state, "unknown") ||
                   strstr(state, "future") || has_flag(flags, "NOT_RESPONDING") || has_flag(flags, "FAIL") ||
                   has_flag(flags, "POWERED_DOWN");
        nd->drained = strstr(state, "drain") || has_flag(flags, "DRAIN") || has_flag(flags, "DRAINING") ||
                      has_flag(flags, "DRAINED");
        count++;
    }
    json_decref(root);
    *out = nodes;
    *n = count;
    return 0;
}

static int job_phase(const char *state)
{
    static const char *const active[] = {"RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "STAGE_OUT",
                                         "SIGNALING", "RESIZING", NULL};
    if (strcmp(state, "PENDING") == 0 || strcmp(state, "REQUEUED") == 0 || strcmp(state, "REQUEUE_HOLD") == 0 ||
        strcmp(state, "REQUEUE_FED") == 0)
        return SLURM_PENDING;
    for (size_t i = 0; active[i]; i++)
        if (strcmp(state, active[i]) == 0)
            return SLURM_ACTIVE;
    return SLURM_ENDED;
}

/* gres_detail ["gpu:2(IDX:0-1)", ...] lines up with the node list. */
static void fill_gres_idx(struct slurm_job *j, const json_t *detail)
{
    j->gres_idx[0] = '\0';
    if (!json_is_array(detail) || json_array_size(detail) == 0 || !j->nodes[0])
        return;
    char(*names)[SLURM_NAME_MAX] = malloc(256 * sizeof *names);
    if (!names)
        return;
    int nn = slurm_hostlist_expand(j->nodes, names, 256);
    size_t len = 0;
    for (int k = 0; k < nn && (size_t)k < json_array_size(detail); k++) {
        const char *d = json_string_value(json_array_get(detail, (size_t)k));
        int32_t idx[64];
        int ni = d ? slurm_gres_indices(d, idx, 64) : -1;
        for (int g = 0; g < ni; g++) {
            int w = snprintf(j->gres_idx + len, sizeof j->gres_idx - len, "%s%s:%d", len ? "," : "", names[k], idx[g]);
            if (w < 0 || (size_t)w >= sizeof j->gres_idx - len) {
                j->gres_idx[0] = '\0'; /* too long to keep whole: unknown */
                free(names);
                return;
            }
            len += (size_t)w;
        }
    }
    free(names);
}

int slurm_parse_jobs(const char *text, size_t len, const char *partition, struct slurm_job **out, size_t *n,
                     struct err *err)
{
    *out = NULL;
    *n = 0;
    json_t *root, *arr;
    struct slurm_job *jobs = load_records(text, len, "jobs", "squeue --json", sizeof *jobs, &root, &arr, err);
    if (!jobs)
        return -1;
    size_t count = 0, i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (partition && !in_partition(json_object_get(v, "partition"), partition))
            continue;
        struct slurm_job *j = &jobs[count];
        j->id = int_or(json_object_get(v, "job_id"), -1);
        if (j->id <= 0 || copy_str(j->state, sizeof j->state, json_object_get(v, "job_state")) != 0) {
            free(jobs);
            json_decref(root);
            return err_set(err, "squeue --json", 0, 0, "job %zu: missing 'job_id' or 'job_state'", i);
        }
        j->phase = job_phase(j->state);
        j->held = j->phase == SLURM_PENDING && int_or(json_object_get(v, "priority"), 1) == 0;
        if (copy_str(j->user, sizeof j->user, json_object_get(v, "user_name")) != 0 ||
            copy_str(j->account, sizeof j->account, json_object_get(v, "account")) != 0 ||
            copy_str(j->nodes, sizeof j->nodes, json_object_get(v, "nodes")) != 0 ||
            copy_str(j->required_nodes, sizeof j->required_nodes, json_object_get(v, "required_nodes")) != 0) {
            long long id = (long long)j->id;
            free(jobs);
            json_decref(root);
            return err_set(err, "squeue --json", 0, 0, "job %lld: a user, account or node list too long", id);
        }
        if (copy_str(j->name, sizeof j->name, json_object_get(v, "name")) != 0)
            j->name[0] = '\0'; /* a name is only shown */
        if (copy_str(j->comment, sizeof j->comment, json_object_get(v, "comment")) != 0)
            j->comment[0] = '\0';
        j->node_count = (int32_t)int_or(json_object_get(v, "node_count"), 1);
        if (j->node_count < 1)
            j->node_count = 1;
        const char *per_node = json_string_value(json_object_get(v, "tres_per_node"));
        const char *per_job = json_string_value(json_object_get(v, "tres_per_job"));
        j->gpus_per_node = per_node ? slurm_gres_gpus(per_node) : 0;
        j->gpus = j->gpus_per_node * j->node_count;
        if (j->gpus == 0 && per_job)
            j->gpus = slurm_gres_gpus(per_job);
        j->limit_s = int_or(json_object_get(v, "time_limit"), -1);
        if (j->limit_s > 0)
            j->limit_s *= 60; /* Slurm's time limits are minutes */
        j->submit_s = int_or(json_object_get(v, "submit_time"), 0);
        j->start_s = int_or(json_object_get(v, "start_time"), 0);
        j->end_s = int_or(json_object_get(v, "end_time"), 0);
        j->restart_cnt = (int32_t)int_or(json_object_get(v, "restart_cnt"), 0);
        int64_t status = int_or(json_object_get(v, "exit_code"), 0);
        /* a wait(2) status: exit code in the high byte, else the signal */
        j->exit_code = (status & 0x7f) ? 128 + (int32_t)(status & 0x7f) : (int32_t)((status >> 8) & 0xff);
        fill_gres_idx(j, json_object_get(v, "gres_detail"));
        count++;
    }
    json_decref(root);
    *out = jobs;
    *n = count;
    return 0;
}
