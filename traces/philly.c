#include "traces/philly.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "traces/gpufmt.h"

struct philly_reader {
    struct gpufmt g;
    const char *data;
    size_t len;
    /* the job being read: its bytes, and the line and line start of its first byte */
    size_t obj, obj_end;
    long obj_line;
    size_t obj_line_start;
};

static size_t philly_ws(const char *d, size_t len, size_t i)
{
    while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n'))
        i++;
    return i;
}

int philly_detect(const char *data, size_t len)
{
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    i = philly_ws(data, len, i);
    return i < len && data[i] == '[';
}

/* Line and column of byte off, counting from the last known line start at
 * or before it. */
static void philly_where_from(const char *d, size_t from, long from_line, size_t line_start, size_t off, long *line,
                              long *col)
{
    long l = from_line;
    size_t ls = line_start;
    for (size_t i = from; i < off; i++)
        if (d[i] == '\n') {
            l++;
            ls = i + 1;
        }
    *line = l;
    *col = (long)(off - ls) + 1;
}

/* Where the value of the nth (0-based) occurrence of "key" in the current
 * job is; the job's start when it is not found. */
static size_t philly_value_at(const struct philly_reader *r, const char *key, int nth)
{
    char pat[64];
    int n = snprintf(pat, sizeof pat, "\"%s\"", key);
    size_t plen = (size_t)n;
    for (size_t i = r->obj; i + plen <= r->obj_end; i++) {
        if (memcmp(r->data + i, pat, plen) != 0)
            continue;
        size_t j = philly_ws(r->data, r->obj_end, i + plen);
        if (j >= r->obj_end || r->data[j] != ':')
            continue; /* a string value that happens to read like the key */
        if (nth-- > 0)
            continue;
        return philly_ws(r->data, r->obj_end, j + 1);
    }
    return r->obj;
}

static void philly_error_at(struct philly_reader *r, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void philly_error_at(struct philly_reader *r, size_t off, const char *fmt, ...)
{
    long line, col;
    philly_where_from(r->data, r->obj, r->obj_line, r->obj_line_start, off, &line, &col);
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    textfile_error(&r->g.rep, line, col, "%s", msg);
}

/* A time value: 1 and *out, 0 when absent, null or "None", -1 reported. */
static int philly_time(struct philly_reader *r, const json_t *v, const char *key, int nth, int64_t *out)
{
    if (!v || json_is_null(v))
        return 0;
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t n = json_string_length(v);
        if (gpufmt_empty(s, n))
            return 0;
        if (gpufmt_datetime(s, n, out) == 0)
            return 1;
        char q[TEXTFILE_QUOTE_CAP];
        textfile_quote(q, sizeof q, s, n);
        philly_error_at(r, philly_value_at(r, key, nth), "%s '%s' is not a time (YYYY-MM-DD HH:MM:SS)", key, q);
        return -1;
    }
    philly_error_at(r, philly_value_at(r, key, nth), "%s must be a string (YYYY-MM-DD HH:MM:SS)", key);
    return -1;
}

static int philly_string(struct philly_reader *r, const json_t *obj, const char *key, const char **out, size_t *n)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    *n = 0;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v)) {
        philly_error_at(r, philly_value_at(r, key, 0), "%s must be a string", key);
        return -1;
    }
    *out = json_string_value(v);
    *n = json_string_length(v);
    return 1;
}

static int32_t philly_status(struct philly_reader *r, const char *s, size_t n, int *bad)
{
    if (!s)
        return -1;
    if (n == 4 && memcmp(s, "Pass", 4) == 0)
        return GPUFMT_STATUS_COMPLETED;
    if (n == 6 && memcmp(s, "Killed", 6) == 0)
        return GPUFMT_STATUS_KILLED;
    if (n == 6 && memcmp(s, "Failed", 6) == 0)
        return GPUFMT_STATUS_FAILED;
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, s, n);
    philly_error_at(r, philly_value_at(r, "status", 0), "status '%s' is not Pass, Killed or Failed", q);
    *bad = 1;
    return -1;
}

/* GPUs in an attempt's detail: the sum of its machines' gpus lists; -1 when
 * it has no detail, -2 when reported. */
static int64_t philly_detail_gpus(struct philly_reader *r, const json_t *att, int *detail_nth)
{
    const json_t *detail = json_object_get(att, "detail");
    if (!detail || json_is_null(detail))
        return -1;
    int nth = (*detail_nth)++;
    if (!json_is_array(detail)) {
        philly_error_at(r, philly_value_at(r, "detail", nth), "detail must be an array of {ip, gpus}");
        return -2;
    }
    int64_t gpus = 0;
    size_t i;
    const json_t *m;
    json_array_foreach(detail, i, m)
    {
        const json_t *list = json_is_object(m) ? json_object_get(m, "gpus") : NULL;
        if (!json_is_array(list)) {
            philly_error_at(r, philly_value_at(r, "detail", nth), "detail entry %zu has no gpus array", i + 1);
            return -2;
        }
        gpus += (int64_t)json_array_size(list);
    }
    return gpus;
}

static void philly_job(struct philly_reader *r, const json_t *obj, int64_t index)
{
    struct gpufmt *g = &r->g;
    long line = r->obj_line;
    if (!json_is_object(obj)) {
        philly_error_at(r, r->obj, "job %lld is not a JSON object", (long long)index);
        return;
    }
    const char *id, *status_s, *vc, *user;
    size_t id_n, status_n, vc_n, user_n;
    const char *id_key = json_object_get(obj, "jobid") ? "jobid" : "id";
    int bad = 0;
    int has_id = philly_string(r, obj, id_key, &id, &id_n);
    if (philly_string(r, obj, "status", &status_s, &status_n) < 0 || philly_string(r, obj, "vc", &vc, &vc_n) < 0 ||
        philly_string(r, obj, "user", &user, &user_n) < 0 || has_id < 0)
        return;
    if (!has_id) {
        philly_error_at(r, r->obj, "missing key 'jobid'");
        return;
    }
    int64_t submit;
    const json_t *sub = json_object_get(obj, "submitted_time");
    int has_submit = philly_time(r, sub, "submitted_time", 0, &submit);
    if (has_submit < 0)
        return;
    if (has_submit == 0) {
        philly_error_at(r, sub ? philly_value_at(r, "submitted_time", 0) : r->obj, "missing key 'submitted_time'");
        return;
    }
    int32_t status = philly_status(r, status_s, status_n, &bad);
    int64_t num_gpus = -1;
    const json_t *ng = json_object_get(obj, "num_gpus");
    if (ng) {
        if (!json_is_integer(ng) || json_integer_value(ng) < 0 || json_integer_value(ng) > 1000000) {
            philly_error_at(r, philly_value_at(r, "num_gpus", 0), "num_gpus must be an integer from 0 to 1000000");
            bad = 1;
        } else {
            num_gpus = (int64_t)json_integer_value(ng);
        }
    }
    const json_t *atts = json_object_get(obj, "attempts");
    if (atts && !json_is_array(atts) && !json_is_null(atts)) {
        philly_error_at(r, philly_value_at(r, "attempts", 0), "attempts must be an array");
        bad = 1;
    }
    /* every attempt, so that each bad time is reported */
    int64_t run_s = 0, first_start = 0, last_gpus = -1, any_gpus = -1;
    int used = 0, gpu_change = 0, running = 0, start_nth = 0, end_nth = 0, detail_nth = 0;
    size_t i;
    const json_t *att;
    json_array_foreach(atts, i, att)
    {
        if (!json_is_object(att)) {
            philly_error_at(r, philly_value_at(r, "attempts", 0), "attempt %zu is not a JSON object", i + 1);
            bad = 1;
            continue;
        }
        const json_t *sv = json_object_get(att, "start_time"), *ev = json_object_get(att, "end_time");
        int nth_s = sv ? start_nth++ : 0, nth_e = ev ? end_nth++ : 0;
        int64_t start, end;
        int hs = philly_time(r, sv, "start_time", nth_s, &start);
        int he = philly_time(r, ev, "end_time", nth_e, &end);
        int64_t gpus = philly_detail_gpus(r, att, &detail_nth);
        if (hs < 0 || he < 0 || gpus == -2) {
            bad = 1;
            continue;
        }
        if (gpus >= 0) {
            if (any_gpus >= 0 && gpus != any_gpus)
                gpu_change = 1;
            any_gpus = last_gpus = gpus;
        }
        if (!hs)
            continue; /* never started */
        if (!he) {
            running = i + 1 == json_array_size(atts);
            continue;
        }
        if (end < start) {
            philly_error_at(r, philly_value_at(r, "end_time", nth_e), "end_time is before start_time");
            bad = 1;
            continue;
        }
        if (!used || start < first_start)
            first_start = start;
        run_s += end - start;
        used++;
    }
    if (bad)
        return;
    int dup = gpufmt_duplicate(g, id, id_n, line);
    if (dup < 0)
        textfile_out_of_memory(&g->rep, line);
    if (dup != 0)
        return;
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, id, id_n);
    if (running) {
        gpufmt_skip(g, GPUFMT_SKIP_RUNNING, line, "job '%s' has no end_time on its last attempt (still running): skipped",
                    q);
        return;
    }
    if (!used) {
        gpufmt_skip(g, GPUFMT_SKIP_NOT_STARTED, line, "job '%s' has no attempt that started: skipped", q);
        return;
    }
    int64_t gpus = num_gpus >= 0 ? num_gpus : last_gpus;
    if (gpus <= 0) {
        gpufmt_skip(g, GPUFMT_SKIP_NO_GPU, line, "job '%s' has no GPUs (%s): skipped", q,
                    num_gpus == 0 ? "num_gpus is 0" : last_gpus == 0 ? "empty GPU lists" : "no detail, no num_gpus");
        return;
    }
    if (gpus > 1000000) {
        philly_error_at(r, r->obj, "job '%s' has %lld GPUs, more than 1000000", q, (long long)gpus);
        return;
    }
    if (used > 1)
        gpufmt_note(g, GPUFMT_NOTE_ATTEMPTS, line, NULL, 0);
    if (gpu_change && num_gpus < 0)
        gpufmt_note(g, GPUFMT_NOTE_GPU_CHANGE, line, NULL, 0);
    struct job j = {.id = index, .runtime_us = run_s * 1000000, .limit_us = -1, .slots = (int32_t)gpus,
                    .status = status, .source_line = line, .job_class = -1};
    if (first_start >= submit) {
        j.wait_us = (first_start - submit) * 1000000;
        j.wait_known = 1;
    }
    j.user = user ? gpufmt_intern(g, &g->w->users, user, user_n, line) : -1;
    j.team = vc ? gpufmt_intern(g, &g->w->teams, vc, vc_n, line) : -1;
    if (!g->rep.no_memory)
        gpufmt_push(g, &j, (double)submit, line);
}

/* jansson's message may quote bytes of the input: keep them printable. */
static void philly_syntax_error(struct philly_reader *r, size_t off, const json_error_t *je)
{
    char text[128];
    snprintf(text, sizeof text, "%.120s", je->text);
    for (char *c = text; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
            *c = '?';
    philly_error_at(r, off, "bad JSON: %s", text);
}

/* Moves the job cursor forward to byte i, keeping its line and line start. */
static void philly_move(struct philly_reader *r, size_t i)
{
    for (size_t k = r->obj; k < i; k++)
        if (r->data[k] == '\n') {
            r->obj_line++;
            r->obj_line_start = k + 1;
        }
    r->obj = i;
    r->obj_end = r->len;
}

int philly_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                       struct err *err)
{
    struct philly_reader r = {.data = data, .len = len, .obj_line = 1};
    gpufmt_init(&r.g, name, w, diags, err, 1);
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    r.obj = r.obj_line_start = i;
    i = philly_ws(data, len, i);
    philly_move(&r, i);
    if (i >= len || data[i] != '[') {
        philly_error_at(&r, i, "a Philly job log is one JSON array of jobs: '[' expected");
        return gpufmt_finish(&r.g);
    }
    i = philly_ws(data, len, i + 1);
    int64_t index = 0;
    while (!r.g.rep.stopped) {
        philly_move(&r, i);
        if (i >= len) {
            philly_error_at(&r, i, "the array of jobs is not closed: ']' expected");
            break;
        }
        if (data[i] == ']' && index == 0)
            break;
        json_error_t je;
        textfile_json_watch();
        json_t *job = json_loadb(data + i, len - i, JSON_DISABLE_EOF_CHECK | JSON_DECODE_ANY, &je);
        if (!job) {
            if (textfile_json_out_of_memory(&je))
                textfile_out_of_memory(&r.g.rep, r.obj_line);
            else
                philly_syntax_error(&r, i + (size_t)(je.position > 0 ? je.position - 1 : 0), &je);
            break;
        }
        r.obj_end = i + (size_t)je.position;
        philly_job(&r, job, ++index);
        json_decref(job);
        size_t k = philly_ws(data, len, r.obj_end);
        if (k < len && data[k] == ',') {
            i = philly_ws(data, len, k + 1);
            continue;
        }
        philly_move(&r, k);
        if (k < len && data[k] == ']') {
            k = philly_ws(data, len, k + 1);
            if (k < len)
                philly_error_at(&r, k, "text after the array of jobs");
            break;
        }
        philly_error_at(&r, k, "',' or ']' expected after job %lld", (long long)index);
        break;
    }
    return gpufmt_finish(&r.g);
}
