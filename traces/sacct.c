#include "traces/sacct.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/units.h"
#include "traces/textfile.h"

enum {
    SACCT_MAX_ERRORS = 20,
    SACCT_MAX_FIELDS = 128,
    SACCT_REPEAT_MAX = 10, /* warnings of one kind shown, then counted */
};

enum sacct_col {
    COL_JOBIDRAW,
    COL_JOBID,
    COL_USER,
    COL_ACCOUNT,
    COL_GROUP,
    COL_SUBMIT,
    COL_START,
    COL_END,
    COL_ELAPSED,
    COL_TIMELIMIT,
    COL_TIMELIMITRAW,
    COL_ALLOCTRES,
    COL_REQTRES,
    COL_STATE,
    COL_COUNT
};

static const char *const sacct_col_names[COL_COUNT] = {
    "JobIDRaw", "JobID",     "User",         "Account",   "Group",   "Submit", "Start",
    "End",      "Elapsed",   "Timelimit",    "TimelimitRaw", "AllocTRES", "ReqTRES", "State",
};

enum sacct_skip { SKIP_STEP, SKIP_NOT_STARTED, SKIP_RUNNING, SKIP_NO_GPU, SKIP_KINDS };

struct sacct_reader {
    struct textfile_report rep;
    struct workload *w;
    int col[COL_COUNT]; /* field index of each known column, -1 = absent */
    size_t n_cols;
    int warned_local;
    int any_gpu;
    size_t skipped[SKIP_KINDS];
    long skip_line[SKIP_KINDS];
    int64_t min_submit_s;
    int64_t *submit_s; /* absolute submit times of the jobs read, by job */
    size_t submit_cap;
};

/* One line split at '|': pointers into the buffer, not terminated. */
struct sacct_fields {
    const char *p[SACCT_MAX_FIELDS];
    size_t len[SACCT_MAX_FIELDS];
    size_t n;
    const char *line;
};

int sacct_detect(const char *data, size_t len)
{
    size_t i = len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    if (len - i < 5 || strncasecmp(data + i, "JobID", 5) != 0)
        return 0;
    for (; i < len && data[i] != '\n'; i++)
        if (data[i] == '|')
            return 1;
    return 0;
}

static void sacct_split(const char *line, size_t len, struct sacct_fields *f)
{
    f->n = 0;
    f->line = line;
    size_t start = 0;
    if (len && line[len - 1] == '\r')
        len--;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != '|')
            continue;
        if (f->n < SACCT_MAX_FIELDS) {
            f->p[f->n] = line + start;
            f->len[f->n] = i - start;
        }
        f->n++;
        start = i + 1;
    }
}

static long sacct_col_of(const struct sacct_fields *f, size_t k)
{
    return (long)(f->p[k] - f->line) + 1;
}

static int sacct_eq(const char *p, size_t n, const char *word)
{
    return strlen(word) == n && strncasecmp(p, word, n) == 0;
}

static void sacct_skip(struct sacct_reader *r, enum sacct_skip kind, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void sacct_skip(struct sacct_reader *r, enum sacct_skip kind, long line, const char *fmt, ...)
{
    if (++r->skipped[kind] > SACCT_REPEAT_MAX)
        return;
    r->skip_line[kind] = line;
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(r->rep.diags, DIAG_WARNING, r->rep.name, line, 1, "%s", msg);
}

/* ---- the header ---- */

static int sacct_header(struct sacct_reader *r, const char *line, size_t len, long lineno)
{
    struct sacct_fields f;
    sacct_split(line, len, &f);
    if (f.n > SACCT_MAX_FIELDS) {
        textfile_error(&r->rep, lineno, 1, "%zu columns in the header, at most %d", f.n, SACCT_MAX_FIELDS);
        return -1;
    }
    r->n_cols = f.n;
    for (int c = 0; c < COL_COUNT; c++)
        r->col[c] = -1;
    for (size_t k = 0; k < f.n; k++) {
        for (int c = 0; c < COL_COUNT; c++) {
            if (!sacct_eq(f.p[k], f.len[k], sacct_col_names[c]))
                continue;
            if (r->col[c] >= 0)
                textfile_error(&r->rep, lineno, sacct_col_of(&f, k), "column '%s' appears twice in the header",
                               sacct_col_names[c]);
            r->col[c] = (int)k;
        }
    }
    const char *missing = r->col[COL_SUBMIT] < 0 ? "Submit"
                          : r->col[COL_ELAPSED] < 0 && (r->col[COL_START] < 0 || r->col[COL_END] < 0)
                              ? "Elapsed (or Start and End)"
                          : r->col[COL_ALLOCTRES] < 0 && r->col[COL_REQTRES] < 0 ? "AllocTRES"
                                                                                  : NULL;
    if (missing) {
        textfile_error(&r->rep, lineno, 1, "no column '%s' in the sacct header (export it with --format)", missing);
        return -1;
    }
    return r->rep.errors ? -1 : 0;
}

/* ---- values ---- */

/* "1704067200" (SLURM_TIME_FORMAT=%s) or "2024-01-01T00:00:00" (local time,
 * read as UTC). Returns 1 and *out, 0 for Unknown/None/empty, -1 if bad. */
static int sacct_time(struct sacct_reader *r, const char *p, size_t n, long line, int64_t *out)
{
    if (n == 0 || sacct_eq(p, n, "Unknown") || sacct_eq(p, n, "None"))
        return 0;
    char buf[32];
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    if (strspn(buf, "0123456789") == n) {
        *out = strtoll(buf, NULL, 10);
        return n <= 12 ? 1 : -1;
    }
    int y, mo, d, h, mi, s;
    char t, end;
    if (n != 19 || sscanf(buf, "%4d-%2d-%2d%c%2d:%2d:%2d%c", &y, &mo, &d, &t, &h, &mi, &s, &end) != 7 ||
        t != 'T' || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 60 ||
        y < 1970)
        return -1;
    /* 2027-02-30 is no day (mktime would make it March 2nd) */
    static const int month_days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > month_days[mo - 1] + (mo == 2 && leap))
        return -1;
    if (!r->warned_local) {
        r->warned_local = 1;
        textfile_warn(&r->rep, line, 1,
                      "times like '%s' are the exporting host's local time with no zone: read as UTC "
                      "(export with SLURM_TIME_FORMAT=%%s for exact times)",
                      buf);
    }
    *out = units_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + s;
    return 1;
}

/* "[D-][HH:]MM:SS[.fff]" -> seconds; -1 if bad. */
static int sacct_duration(const char *p, size_t n, double *out)
{
    char buf[48];
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    double days = 0;
    char *s = buf, *dash = strchr(buf, '-');
    if (dash) {
        *dash = '\0';
        if (!*buf || strspn(buf, "0123456789") != strlen(buf))
            return -1;
        days = strtod(buf, NULL);
        s = dash + 1;
    }
    double parts[3];
    int np = 0;
    for (char *tok = s;; np++) {
        char *colon = strchr(tok, ':');
        if (colon)
            *colon = '\0';
        if (np == 3 || !*tok || strspn(tok, "0123456789.") != strlen(tok))
            return -1;
        parts[np] = strtod(tok, NULL);
        if (!colon) {
            np++;
            break;
        }
        tok = colon + 1;
    }
    if (np < 2 && !dash)
        return -1;
    /* the clock fields are bounded: 1-99:99:99 is no duration */
    if (np >= 2 && parts[np - 1] >= 60)
        return -1;
    if (np == 3 && parts[1] >= 60)
        return -1;
    if (dash && parts[0] >= 24)
        return -1;
    double secs = 0;
    for (int i = 0; i < np; i++)
        secs = secs * 60 + parts[i];
    if (dash && np == 1)
        secs *= 3600; /* "2-12": days and hours */
    *out = days * 86400 + secs;
    /* beyond 1e12 s (as the SWF reader) microseconds overflow int64_t; a
     * run of 32,000 years is no run */
    return *out <= 1e12 ? 0 : -1;
}

/* The gres/gpu count of a TRES list ("cpu=16,gres/gpu=8,mem=500G" or
 * "gres/gpu:a100=8"). Returns 1 and *gpus, 0 when there is none, -1 bad. */
static int sacct_tres_gpus(const char *p, size_t n, int64_t *gpus)
{
    int found = 0;
    int64_t typed = 0, plain = -1;
    size_t i = 0;
    while (i < n) {
        size_t j = i;
        while (j < n && p[j] != ',')
            j++;
        const char *item = p + i;
        size_t len = j - i;
        if (len > 8 && strncmp(item, "gres/gpu", 8) == 0 && (item[8] == '=' || item[8] == ':')) {
            const char *eq = memchr(item, '=', len);
            if (!eq || eq + 1 == item + len)
                return -1;
            int64_t v = 0;
            for (const char *q = eq + 1; q < item + len; q++) {
                if (!isdigit((unsigned char)*q) || v > 100000000)
                    return -1;
                v = v * 10 + (*q - '0');
            }
            found = 1;
            if (item[8] == '=')
                plain = v;
            else
                typed += v;
        }
        i = j + 1;
    }
    if (!found)
        return 0;
    /* the untyped count is the total; typed ones split it */
    *gpus = plain >= 0 ? plain : typed;
    return 1;
}

/* SWF's status codes: 1 completed, 5 cancelled, 0 failed (any other end). */
static int32_t sacct_status(const char *p, size_t n)
{
    if (n >= 9 && strncmp(p, "COMPLETED", 9) == 0)
        return 1;
    if (n >= 9 && strncmp(p, "CANCELLED", 9) == 0)
        return 5;
    static const char *const failed[] = {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
                                         "BOOT_FAIL", "DEADLINE"};
    for (size_t i = 0; i < sizeof failed / sizeof *failed; i++)
        if (n >= strlen(failed[i]) && strncmp(p, failed[i], strlen(failed[i])) == 0)
            return 0;
    return -1;
}

static int sacct_has(const struct sacct_reader *r, const struct sacct_fields *f, enum sacct_col c)
{
    return r->col[c] >= 0 && (size_t)r->col[c] < f->n;
}

static int32_t sacct_intern(struct sacct_reader *r, struct string_table *t, const struct sacct_fields *f,
                            enum sacct_col c, long line)
{
    if (!sacct_has(r, f, c) || f->len[r->col[c]] == 0)
        return -1;
    char buf[256];
    size_t n = f->len[r->col[c]] < sizeof buf - 1 ? f->len[r->col[c]] : sizeof buf - 1;
    memcpy(buf, f->p[r->col[c]], n);
    buf[n] = '\0';
    int32_t k = string_table_intern(t, buf);
    if (k < 0)
        textfile_out_of_memory(&r->rep, line);
    return k;
}

static void sacct_bad(struct sacct_reader *r, const struct sacct_fields *f, enum sacct_col c, long line,
                      const char *what)
{
    int k = r->col[c];
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, f->p[k], f->len[k]);
    textfile_error(&r->rep, line, sacct_col_of(f, (size_t)k), "%s '%s' is not %s", sacct_col_names[c], q, what);
}

/* A time column: 1 and *out, 0 unknown, -1 reported. */
static int sacct_time_col(struct sacct_reader *r, const struct sacct_fields *f, enum sacct_col c, long line,
                          int64_t *out)
{
    if (!sacct_has(r, f, c))
        return 0;
    int k = r->col[c];
    int rc = sacct_time(r, f->p[k], f->len[k], line, out);
    if (rc < 0)
        sacct_bad(r, f, c, line, "a time (epoch seconds or YYYY-MM-DDTHH:MM:SS)");
    return rc;
}

static int64_t sacct_id(const struct sacct_reader *r, const struct sacct_fields *f, long line)
{
    enum sacct_col c = r->col[COL_JOBIDRAW] >= 0 ? COL_JOBIDRAW : COL_JOBID;
    if (!sacct_has(r, f, c))
        return line;
    int k = r->col[c];
    int64_t v = 0;
    if (f->len[k] == 0 || f->len[k] > 18)
        return line;
    for (size_t i = 0; i < f->len[k]; i++) {
        if (!isdigit((unsigned char)f->p[k][i]))
            return line; /* "123_4", "123+1": not a number of its own */
        v = v * 10 + (f->p[k][i] - '0');
    }
    return v;
}

static int sacct_is_step(const struct sacct_reader *r, const struct sacct_fields *f)
{
    for (int c = COL_JOBIDRAW; c <= COL_JOBID; c++)
        if (sacct_has(r, f, (enum sacct_col)c) && memchr(f->p[r->col[c]], '.', f->len[r->col[c]]))
            return 1;
    return 0;
}

static int sacct_gpus(struct sacct_reader *r, const struct sacct_fields *f, long line, int64_t *gpus)
{
    for (int c = COL_ALLOCTRES; c <= COL_REQTRES; c++) {
        if (!sacct_has(r, f, (enum sacct_col)c))
            continue;
        int k = r->col[c];
        int rc = sacct_tres_gpus(f->p[k], f->len[k], gpus);
        if (rc < 0) {
            sacct_bad(r, f, (enum sacct_col)c, line, "a TRES list with a whole gres/gpu count");
            return -1;
        }
        if (rc > 0)
            return 1;
    }
    return 0;
}

static int sacct_limit(struct sacct_reader *r, const struct sacct_fields *f, long line, sim_time *limit_us)
{
    *limit_us = -1;
    if (sacct_has(r, f, COL_TIMELIMIT)) {
        int k = r->col[COL_TIMELIMIT];
        const char *p = f->p[k];
        size_t n = f->len[k];
        double s;
        if (n == 0 || sacct_eq(p, n, "UNLIMITED") || sacct_eq(p, n, "Partition_Limit") || sacct_eq(p, n, "INVALID"))
            return 0;
        if (sacct_duration(p, n, &s) != 0) {
            sacct_bad(r, f, COL_TIMELIMIT, line, "a time limit ([D-]HH:MM:SS or UNLIMITED)");
            return -1;
        }
        *limit_us = s > 0 ? llround(s * 1e6) : -1;
        return 0;
    }
    if (sacct_has(r, f, COL_TIMELIMITRAW)) {
        int k = r->col[COL_TIMELIMITRAW];
        /* a field is not NUL-terminated: read its digits within its length */
        size_t digits = 0;
        while (digits < f->len[k] && f->p[k][digits] >= '0' && f->p[k][digits] <= '9')
            digits++;
        if (f->len[k] == 0 || digits < f->len[k])
            return 0; /* UNLIMITED, Partition_Limit */
        if (f->len[k] > 9) {
            sacct_bad(r, f, COL_TIMELIMITRAW, line, "a number of minutes");
            return -1;
        }
        long long m = 0;
        for (size_t i = 0; i < digits; i++)
            m = m * 10 + (f->p[k][i] - '0');
        *limit_us = m > 0 ? m * 60 * SIM_US_PER_S : -1;
    }
    return 0;
}

static int sacct_push_submit(struct sacct_reader *r, int64_t s)
{
    if (r->w->n > r->submit_cap)
        return -1;
    if (r->w->n == r->submit_cap) {
        size_t cap = r->submit_cap ? r->submit_cap * 2 : 1024;
        int64_t *p = realloc(r->submit_s, cap * sizeof *p);
        if (!p)
            return -1;
        r->submit_s = p;
        r->submit_cap = cap;
    }
    r->submit_s[r->w->n] = s;
    return 0;
}

static void sacct_line(struct sacct_reader *r, const char *line, size_t len, long lineno)
{
    struct sacct_fields f;
    sacct_split(line, len, &f);
    if (f.n != r->n_cols) {
        textfile_error(&r->rep, lineno, 1, "%zu fields, expected %zu as in the header (a '|' inside a field?)", f.n,
                       r->n_cols);
        return;
    }
    if (sacct_is_step(r, &f)) {
        sacct_skip(r, SKIP_STEP, lineno, "job step skipped (export with -X for allocations only)");
        return;
    }
    int64_t submit = 0, start = 0, end = 0;
    int has_submit = sacct_time_col(r, &f, COL_SUBMIT, lineno, &submit);
    int has_start = sacct_time_col(r, &f, COL_START, lineno, &start);
    int has_end = sacct_time_col(r, &f, COL_END, lineno, &end);
    double elapsed = -1;
    if (sacct_has(r, &f, COL_ELAPSED) && sacct_duration(f.p[r->col[COL_ELAPSED]], f.len[r->col[COL_ELAPSED]],
                                                        &elapsed) != 0) {
        sacct_bad(r, &f, COL_ELAPSED, lineno, "a duration ([D-]HH:MM:SS)");
        return;
    }
    int64_t gpus = 0;
    int has_gpus = sacct_gpus(r, &f, lineno, &gpus);
    sim_time limit_us;
    if (has_submit < 0 || has_start < 0 || has_end < 0 || has_gpus < 0 || sacct_limit(r, &f, lineno, &limit_us) != 0)
        return;
    const char *state = sacct_has(r, &f, COL_STATE) ? f.p[r->col[COL_STATE]] : "";
    size_t state_len = sacct_has(r, &f, COL_STATE) ? f.len[r->col[COL_STATE]] : 0;
    if (!has_submit) {
        textfile_error(&r->rep, lineno, sacct_col_of(&f, (size_t)r->col[COL_SUBMIT]), "Submit is unknown");
        return;
    }
    if ((state_len >= 7 && strncmp(state, "RUNNING", 7) == 0) || (r->col[COL_END] >= 0 && !has_end && has_start)) {
        sacct_skip(r, SKIP_RUNNING, lineno, "job still running: skipped");
        return;
    }
    if ((state_len >= 7 && strncmp(state, "PENDING", 7) == 0) || (r->col[COL_START] >= 0 && !has_start)) {
        sacct_skip(r, SKIP_NOT_STARTED, lineno, "job never started: skipped");
        return;
    }
    if (elapsed < 0)
        elapsed = (double)(end - start);
    if (elapsed < 0) {
        textfile_error(&r->rep, lineno, sacct_col_of(&f, (size_t)r->col[COL_END]), "End is before Start");
        return;
    }
    if (!has_gpus || gpus < 1) {
        sacct_skip(r, SKIP_NO_GPU, lineno, "no gres/gpu in the job's TRES (a CPU-only job): skipped");
        return;
    }
    if (gpus > 1000000) {
        textfile_error(&r->rep, lineno, sacct_col_of(&f, (size_t)r->col[COL_ALLOCTRES >= 0 ? COL_ALLOCTRES : COL_REQTRES]),
                       "gres/gpu count %lld is more than 1000000", (long long)gpus);
        return;
    }
    r->any_gpu = 1;
    struct job j = {.id = sacct_id(r, &f, lineno), .submit_us = 0, .runtime_us = llround(elapsed * 1e6),
                    .limit_us = limit_us, .slots = (int32_t)gpus, .status = sacct_status(state, state_len),
                    .source_line = lineno, .job_class = -1};
    j.user = sacct_intern(r, &r->w->users, &f, COL_USER, lineno);
    j.team = sacct_intern(r, &r->w->teams, &f, r->col[COL_ACCOUNT] >= 0 ? COL_ACCOUNT : COL_GROUP, lineno);
    if (r->rep.no_memory)
        return;
    if (sacct_push_submit(r, submit) != 0 || !workload_push(r->w, &j)) {
        textfile_out_of_memory(&r->rep, lineno);
        return;
    }
    if (r->w->n == 1 || submit < r->min_submit_s)
        r->min_submit_s = submit;
}

int sacct_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                      struct err *err)
{
    struct sacct_reader r;
    memset(&r, 0, sizeof r);
    r.rep = (struct textfile_report){name, diags, err, 0, SACCT_MAX_ERRORS, 0, 0};
    r.w = w;
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    /* a job a line at most (steps have lines of their own) */
    workload_reserve(w, w->n + textfile_records_bound(&it, TEXTFILE_RECORD_MIN));
    const char *line;
    size_t n;
    int have_header = 0;
    while (!r.rep.stopped && textfile_lines_next(&it, &line, &n)) {
        if (n == 0 || (n == 1 && line[0] == '\r'))
            continue;
        if (!have_header) {
            have_header = 1;
            if (sacct_header(&r, line, n, it.line) != 0)
                break;
            continue;
        }
        sacct_line(&r, line, n, it.line);
    }
    for (int k = 0; k < SKIP_KINDS; k++)
        if (r.skipped[k] > SACCT_REPEAT_MAX)
            textfile_warn(&r.rep, 0, 0, "%zu more warnings like the one at line %ld not shown",
                          r.skipped[k] - SACCT_REPEAT_MAX, r.skip_line[k]);
    if (!have_header && !r.rep.errors)
        textfile_error(&r.rep, 0, 0, "no sacct header line in '%s'", name);
    if (r.rep.no_memory || r.rep.errors) {
        free(r.submit_s);
        return -1;
    }
    if (w->n == 0) {
        free(r.submit_s);
        const char *why = r.skipped[SKIP_NO_GPU] && !r.any_gpu
                              ? " (no job has a gres/gpu count: is gres/gpu in AccountingStorageTRES?)"
                              : "";
        diag_add(diags, DIAG_ERROR, name, 0, 0, "no jobs in '%s'%s", name, why);
        return err_set(err, name, 0, 0, "no jobs in '%s'%s", name, why);
    }
    for (size_t i = 0; i < w->n; i++)
        w->jobs[i].submit_us = (r.submit_s[i] - r.min_submit_s) * SIM_US_PER_S;
    w->meta.unix_start_s = r.min_submit_s;
    free(r.submit_s);
    workload_sort_by_submit(w);
    return 0;
}

int sacct_read(const char *path, struct workload *w, struct diag_list *diags, struct err *err)
{
    char *data;
    size_t len;
    if (textfile_load(path, &data, &len, diags, err) != 0)
        return -1;
    int rc = sacct_read_buffer(path, data, len, w, diags, err);
    free(data);
    return rc;
}
