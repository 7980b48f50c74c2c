#include "traces/gpufmt.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/units.h"

int gpufmt_first_line(const char *data, size_t len, const char **line, size_t *n)
{
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    return textfile_lines_next(&it, line, n);
}

void gpufmt_read_csv(struct gpufmt *g, const char *data, size_t len, const struct gpufmt_csv *csv)
{
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    const char *line;
    size_t n;
    int have_header = 0;
    int64_t row_no = 0;
    while (!g->rep.stopped && textfile_lines_next(&it, &line, &n)) {
        if (n == 0 || (n == 1 && line[0] == '\r'))
            continue;
        if (!have_header) {
            have_header = 1;
            if (csv->header(csv->ctx, line, n, it.line) != 0)
                return;
            continue;
        }
        csv->row(csv->ctx, line, n, it.line, ++row_no);
    }
}

void gpufmt_split(const char *line, size_t len, struct gpufmt_row *row)
{
    row->n = 0;
    row->line = line;
    if (len && line[len - 1] == '\r')
        len--;
    size_t i = 0;
    for (;;) {
        size_t start = i, end;
        const char *p = line + i;
        if (i < len && line[i] == '"') {
            /* quoted: up to the closing quote ("" is an escaped quote) */
            size_t j = i + 1;
            while (j < len && !(line[j] == '"' && (j + 1 >= len || line[j + 1] != '"')))
                j += line[j] == '"' ? 2 : 1;
            p = line + i + 1;
            end = j < len ? j : len;
            i = j < len ? j + 1 : len;
            while (i < len && line[i] != ',')
                i++;
            start = (size_t)(p - line);
        } else {
            while (i < len && line[i] != ',')
                i++;
            end = i;
        }
        if (row->n < GPUFMT_MAX_FIELDS) {
            row->p[row->n] = line + start;
            row->len[row->n] = end - start;
        }
        row->n++;
        if (i >= len)
            break;
        i++; /* the comma */
    }
}

long gpufmt_col(const struct gpufmt_row *row, size_t k)
{
    return (long)(row->p[k] - row->line) + 1;
}

static void gpufmt_trim(const char **p, size_t *n)
{
    while (*n && isspace((unsigned char)**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n && isspace((unsigned char)(*p)[*n - 1]))
        (*n)--;
}

int gpufmt_find(const struct gpufmt_row *header, const char *name)
{
    size_t want = strlen(name);
    for (size_t k = 0; k < header->n && k < GPUFMT_MAX_FIELDS; k++) {
        const char *p = header->p[k];
        size_t n = header->len[k];
        gpufmt_trim(&p, &n);
        if (n == want && strncasecmp(p, name, n) == 0)
            return (int)k;
    }
    return -1;
}

int gpufmt_empty(const char *p, size_t n)
{
    gpufmt_trim(&p, &n);
    static const char *const none[] = {"NaN", "None", "null", "NA", "NaT", "Unknown", "nan"};
    if (n == 0)
        return 1;
    for (size_t i = 0; i < sizeof none / sizeof *none; i++)
        if (strlen(none[i]) == n && strncasecmp(p, none[i], n) == 0)
            return 1;
    return 0;
}

int gpufmt_int(const char *p, size_t n, int64_t *out)
{
    gpufmt_trim(&p, &n);
    size_t i = 0;
    int neg = 0;
    if (n && (p[0] == '-' || p[0] == '+')) {
        neg = p[0] == '-';
        i = 1;
    }
    if (i == n || n - i > 18)
        return -1;
    int64_t v = 0;
    for (; i < n; i++) {
        if (!isdigit((unsigned char)p[i]))
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

int gpufmt_num(const char *p, size_t n, double *out)
{
    gpufmt_trim(&p, &n);
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    /* plain decimals only: no hex, inf, nan */
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)buf[i]) && !strchr("+-.eE", buf[i]))
            return -1;
    char *end;
    double v = strtod(buf, &end);
    if (*end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int gpufmt_datetime(const char *p, size_t n, int64_t *out)
{
    gpufmt_trim(&p, &n);
    char buf[40];
    if (n < 19 || n >= sizeof buf)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    int y, mo, d, h, mi, s, used = 0;
    char t;
    if (sscanf(buf, "%4d-%2d-%2d%c%2d:%2d:%2d%n", &y, &mo, &d, &t, &h, &mi, &s, &used) != 7 ||
        (t != ' ' && t != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
        s < 0 || s > 60 || y < 1970 || y > 9999)
        return -1;
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap))
        return -1;
    /* pandas may add fractional seconds: ".000" */
    if (buf[used] == '.') {
        used++;
        while (isdigit((unsigned char)buf[used]))
            used++;
    }
    if (buf[used])
        return -1;
    *out = units_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s;
    return 0;
}

int gpufmt_time(const char *p, size_t n, double *out_s)
{
    if (gpufmt_empty(p, n))
        return 0;
    int64_t t;
    if (gpufmt_datetime(p, n, &t) == 0) {
        *out_s = (double)t;
        return 1;
    }
    double v;
    if (gpufmt_num(p, n, &v) == 0 && v >= 0 && v <= 1e12) {
        *out_s = v;
        return 1;
    }
    return -1;
}

void gpufmt_init(struct gpufmt *g, const char *name, struct workload *w, struct diag_list *diags, struct err *err,
                 int rebase)
{
    memset(g, 0, sizeof *g);
    g->rep = (struct textfile_report){name, diags, err, 0, GPUFMT_MAX_ERRORS, 0, 0};
    g->w = w;
    g->rebase = rebase;
    g->diag_start = diags ? diags->n : 0;
}

/* The counts and notes summarise the whole file: they go before the per-line
 * warnings, so that a front end that shows only the first few still shows
 * them. */
static void gpufmt_summaries_first(struct gpufmt *g, size_t first)
{
    struct diag_list *d = g->rep.diags;
    if (!d || first >= d->n || first <= g->diag_start)
        return;
    size_t k = d->n - first;
    struct diag *tmp = malloc(k * sizeof *tmp);
    if (!tmp)
        return; /* order only */
    memcpy(tmp, d->items + first, k * sizeof *tmp);
    memmove(d->items + g->diag_start + k, d->items + g->diag_start, (first - g->diag_start) * sizeof *tmp);
    memcpy(d->items + g->diag_start, tmp, k * sizeof *tmp);
    free(tmp);
}

void gpufmt_release(struct gpufmt *g)
{
    for (size_t i = 0; i < g->ids.n; i++)
        free(g->ids.items[i]);
    free(g->ids.items);
    free(g->ids.index);
    memset(&g->ids, 0, sizeof g->ids);
    free(g->id_line);
    g->id_line = NULL;
    free(g->submit_s);
    g->submit_s = NULL;
}

void gpufmt_skip(struct gpufmt *g, enum gpufmt_skip kind, long line, const char *fmt, ...)
{
    g->w->meta.skipped_at_read++;
    if (++g->skipped[kind] > GPUFMT_REPEAT_MAX)
        return;
    g->skip_line[kind] = line;
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(g->rep.diags, DIAG_WARNING, g->rep.name, line, 0, "%s", msg);
}

void gpufmt_note(struct gpufmt *g, enum gpufmt_note kind, long line, const char *example, size_t example_len)
{
    if (g->noted[kind]++ == 0) {
        g->note_line[kind] = line;
        if (example)
            textfile_quote(g->note_example[kind], sizeof g->note_example[kind], example,
                           example_len < 16 ? example_len : 16);
    }
}

int gpufmt_duplicate(struct gpufmt *g, const char *id, size_t len, long line)
{
    char buf[256];
    size_t n = len < sizeof buf - 1 ? len : sizeof buf - 1;
    memcpy(buf, id, n);
    buf[n] = '\0';
    size_t before = g->ids.n;
    int32_t k = string_table_intern(&g->ids, buf);
    if (k < 0)
        return -1;
    if ((size_t)k < before) {
        char q[TEXTFILE_QUOTE_CAP];
        textfile_quote(q, sizeof q, id, len);
        gpufmt_skip(g, GPUFMT_SKIP_DUPLICATE, line, "job '%s' appeared before, at line %ld: skipped", q,
                    g->id_line[k]);
        return 1;
    }
    if (g->ids.n > g->id_line_cap) {
        size_t cap = g->id_line_cap ? g->id_line_cap * 2 : 1024;
        long *p = realloc(g->id_line, cap * sizeof *p);
        if (!p)
            return -1;
        g->id_line = p;
        g->id_line_cap = cap;
    }
    g->id_line[k] = line;
    return 0;
}

int64_t gpufmt_id(const char *p, size_t n, int64_t fallback)
{
    int64_t v;
    return gpufmt_int(p, n, &v) == 0 && v >= 0 ? v : fallback;
}

int32_t gpufmt_intern(struct gpufmt *g, struct string_table *t, const char *p, size_t n, long line)
{
    gpufmt_trim(&p, &n);
    if (gpufmt_empty(p, n))
        return -1;
    char buf[256];
    if (n > sizeof buf - 1)
        n = sizeof buf - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    int32_t k = string_table_intern(t, buf);
    if (k < 0)
        textfile_out_of_memory(&g->rep, line);
    return k;
}

int gpufmt_push(struct gpufmt *g, const struct job *j, double submit_abs_s, long line)
{
    if (g->rebase && g->w->n >= g->submit_cap) {
        size_t cap = g->submit_cap ? g->submit_cap * 2 : 1024;
        double *p = realloc(g->submit_s, cap * sizeof *p);
        if (!p) {
            textfile_out_of_memory(&g->rep, line);
            return -1;
        }
        g->submit_s = p;
        g->submit_cap = cap;
    }
    if (g->rebase)
        g->submit_s[g->w->n] = submit_abs_s;
    if (!workload_push(g->w, j)) {
        textfile_out_of_memory(&g->rep, line);
        return -1;
    }
    return 0;
}

static void gpufmt_report_notes(struct gpufmt *g)
{
    static const char *const what[GPUFMT_NOTES] = {
        "ask for a fraction of one GPU: each shares a GPU with other fractional jobs (gpu_milli)",
        "are constrained to GPU models: each runs only on nodes of those models (gpu_model)",
        "ask for fractions of several GPUs: each replays on whole GPUs",
        "ran in more than one attempt: each replays as one run, its attempts' run times summed",
        "ran attempts on different GPU counts: each replays on its last attempt's count",
    };
    static const char *const unit[GPUFMT_NOTES] = {"jobs", "jobs", "jobs", "jobs", "jobs"};
    for (int k = 0; k < GPUFMT_NOTES; k++) {
        if (!g->noted[k])
            continue;
        if (g->note_example[k][0])
            textfile_warn(&g->rep, g->note_line[k], 0, "%zu %s %s (the first here, '%s')", g->noted[k], unit[k],
                          what[k], g->note_example[k]);
        else
            textfile_warn(&g->rep, g->note_line[k], 0, "%zu %s %s (the first here)", g->noted[k], unit[k], what[k]);
    }
}

int gpufmt_finish(struct gpufmt *g)
{
    size_t first = g->rep.diags ? g->rep.diags->n : 0;
    for (int k = 0; k < GPUFMT_SKIPS; k++)
        if (g->skipped[k] > GPUFMT_REPEAT_MAX)
            textfile_warn(&g->rep, 0, 0, "%zu more warnings like the one at line %ld not shown",
                          g->skipped[k] - GPUFMT_REPEAT_MAX, g->skip_line[k]);
    gpufmt_report_notes(g);
    gpufmt_summaries_first(g, first);
    struct workload *w = g->w;
    int rc = 0;
    if (g->rep.no_memory || g->rep.errors) {
        rc = -1;
    } else if (w->n == 0) {
        diag_add(g->rep.diags, DIAG_ERROR, g->rep.name, 0, 0, "no jobs in '%s'", g->rep.name);
        rc = err_set(g->rep.err, g->rep.name, 0, 0, "no jobs in '%s'", g->rep.name);
    } else if (g->rebase) {
        double min = g->submit_s[0];
        for (size_t i = 1; i < w->n; i++)
            if (g->submit_s[i] < min)
                min = g->submit_s[i];
        int64_t origin = (int64_t)floor(min);
        for (size_t i = 0; i < w->n; i++)
            w->jobs[i].submit_us = llround((g->submit_s[i] - (double)origin) * 1e6);
        w->meta.unix_start_s = origin;
    }
    if (rc == 0)
        workload_sort_by_submit(w);
    gpufmt_release(g);
    return rc;
}
