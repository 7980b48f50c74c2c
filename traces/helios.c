#include "traces/helios.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "traces/gpufmt.h"

enum helios_col { H_ID, H_USER, H_VC, H_GPUS, H_STATE, H_SUBMIT, H_START, H_END, H_DURATION, H_QUEUE, H_COLS };
static const char *const helios_names[H_COLS] = {"job_id", "user",     "vc",       "gpu_num",  "state",
                                                 "submit_time", "start_time", "end_time", "duration", "queue"};

struct helios_reader {
    struct gpufmt g;
    int col[H_COLS];
    size_t n_cols;
};

static void helios_columns(const char *line, size_t len, int col[H_COLS], size_t *n_cols)
{
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    for (int c = 0; c < H_COLS; c++)
        col[c] = gpufmt_find(&row, helios_names[c]);
    *n_cols = row.n;
}

/* What is missing from a header, or NULL when it is a Helios/Acme one. */
static const char *helios_missing(const int col[H_COLS])
{
    if (col[H_SUBMIT] < 0)
        return "submit_time";
    if (col[H_GPUS] < 0)
        return "gpu_num";
    if (col[H_STATE] < 0)
        return "state";
    if (col[H_DURATION] < 0 && (col[H_START] < 0 || col[H_END] < 0))
        return "duration (or start_time and end_time)";
    return NULL;
}

int helios_detect(const char *data, size_t len)
{
    const char *line;
    size_t n, n_cols;
    int col[H_COLS];
    if (!gpufmt_first_line(data, len, &line, &n))
        return 0;
    helios_columns(line, n, col, &n_cols);
    return col[H_ID] >= 0 && !helios_missing(col);
}

static int helios_has(const struct helios_reader *r, const struct gpufmt_row *row, enum helios_col c)
{
    return r->col[c] >= 0 && !gpufmt_empty(row->p[r->col[c]], row->len[r->col[c]]);
}

/* A time column: 1 and *out, 0 when empty or absent, -1 reported. */
static int helios_time(struct helios_reader *r, const struct gpufmt_row *row, enum helios_col c, long line,
                       double *out)
{
    if (r->col[c] < 0)
        return 0;
    int k = r->col[c];
    int rc = gpufmt_time(row->p[k], row->len[k], out);
    if (rc < 0) {
        char q[TEXTFILE_QUOTE_CAP];
        textfile_quote(q, sizeof q, row->p[k], row->len[k]);
        textfile_error(&r->g.rep, line, gpufmt_col(row, (size_t)k),
                       "%s '%s' is not a time (YYYY-MM-DD HH:MM:SS or seconds)", helios_names[c], q);
    }
    return rc;
}

static int helios_number(struct helios_reader *r, const struct gpufmt_row *row, enum helios_col c, long line,
                         double lo, double hi, double *out)
{
    int k = r->col[c];
    if (gpufmt_num(row->p[k], row->len[k], out) == 0 && *out >= lo && *out <= hi)
        return 0;
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, row->p[k], row->len[k]);
    textfile_error(&r->g.rep, line, gpufmt_col(row, (size_t)k), "%s '%s' is not a number from %.0f to %.0f",
                   helios_names[c], q, lo, hi);
    return -1;
}

static int32_t helios_status(const char *p, size_t n)
{
    static const char *const failed[] = {"FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED", "BOOT_FAIL"};
    if (n >= 9 && strncasecmp(p, "COMPLETED", 9) == 0)
        return GPUFMT_STATUS_COMPLETED;
    if (n >= 8 && (strncasecmp(p, "CANCELLED", 9) == 0 || strncasecmp(p, "CANCELED", 8) == 0))
        return GPUFMT_STATUS_KILLED;
    for (size_t i = 0; i < sizeof failed / sizeof *failed; i++)
        if (n == strlen(failed[i]) && strncasecmp(p, failed[i], n) == 0)
            return GPUFMT_STATUS_FAILED;
    return -1;
}

static void helios_row(struct helios_reader *r, const char *line, size_t len, long lineno, int64_t row_no)
{
    struct gpufmt *g = &r->g;
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    if (row.n != r->n_cols) {
        textfile_error(&g->rep, lineno, 1, "%zu fields, expected %zu as in the header", row.n, r->n_cols);
        return;
    }
    double submit = 0, start = 0, end = 0, duration = -1, queue = -1, gpus = 0;
    int has_submit = helios_time(r, &row, H_SUBMIT, lineno, &submit);
    int has_start = helios_time(r, &row, H_START, lineno, &start);
    int has_end = helios_time(r, &row, H_END, lineno, &end);
    int bad = has_submit < 0 || has_start < 0 || has_end < 0;
    if (helios_number(r, &row, H_GPUS, lineno, 0, 1000000, &gpus) != 0 || gpus != floor(gpus))
        bad = 1;
    if (helios_has(r, &row, H_DURATION) && helios_number(r, &row, H_DURATION, lineno, 0, 1e12, &duration) != 0)
        bad = 1;
    if (helios_has(r, &row, H_QUEUE) && helios_number(r, &row, H_QUEUE, lineno, 0, 1e12, &queue) != 0)
        bad = 1;
    if (bad)
        return;
    if (!has_submit) {
        textfile_error(&g->rep, lineno, gpufmt_col(&row, (size_t)r->col[H_SUBMIT]), "submit_time is empty");
        return;
    }
    if (r->col[H_ID] >= 0) {
        int dup = gpufmt_duplicate(g, row.p[r->col[H_ID]], row.len[r->col[H_ID]], lineno);
        if (dup < 0)
            textfile_out_of_memory(&g->rep, lineno);
        if (dup != 0)
            return;
    }
    const char *state = row.p[r->col[H_STATE]];
    size_t state_len = row.len[r->col[H_STATE]];
    if (gpus < 1) {
        gpufmt_skip(g, GPUFMT_SKIP_NO_GPU, lineno, "job with 0 GPUs (a CPU-only job): skipped");
        return;
    }
    if ((state_len == 7 && strncasecmp(state, "PENDING", 7) == 0) || (r->col[H_START] >= 0 && !has_start)) {
        gpufmt_skip(g, GPUFMT_SKIP_NOT_STARTED, lineno, "job never started: skipped");
        return;
    }
    if (duration < 0 && has_start && has_end)
        duration = end - start;
    if (duration < 0 && has_start && !has_end) {
        gpufmt_skip(g, GPUFMT_SKIP_RUNNING, lineno, "job has no end_time (still running): skipped");
        return;
    }
    if (duration < 0) {
        textfile_error(&g->rep, lineno, gpufmt_col(&row, (size_t)r->col[r->col[H_END] >= 0 ? H_END : H_DURATION]),
                       "end_time is before start_time");
        return;
    }
    struct job j = {.id = r->col[H_ID] >= 0 ? gpufmt_id(row.p[r->col[H_ID]], row.len[r->col[H_ID]], row_no) : row_no,
                    .runtime_us = llround(duration * 1e6), .limit_us = -1, .slots = (int32_t)gpus,
                    .status = helios_status(state, state_len), .source_line = lineno, .job_class = -1};
    if (has_start && start >= submit) {
        j.wait_us = llround((start - submit) * 1e6);
        j.wait_known = 1;
    } else if (queue >= 0) {
        j.wait_us = llround(queue * 1e6);
        j.wait_known = 1;
    }
    j.user = r->col[H_USER] >= 0 ? gpufmt_intern(g, &g->w->users, row.p[r->col[H_USER]], row.len[r->col[H_USER]], lineno)
                                 : -1;
    j.team = r->col[H_VC] >= 0 ? gpufmt_intern(g, &g->w->teams, row.p[r->col[H_VC]], row.len[r->col[H_VC]], lineno)
                               : -1;
    if (!g->rep.no_memory)
        gpufmt_push(g, &j, submit, lineno);
}

static int helios_header(void *ctx, const char *line, size_t len, long lineno)
{
    struct helios_reader *r = ctx;
    helios_columns(line, len, r->col, &r->n_cols);
    const char *missing = helios_missing(r->col);
    if (missing)
        textfile_error(&r->g.rep, lineno, 1, "no column '%s' in the header", missing);
    return missing != NULL;
}

static void helios_next_row(void *ctx, const char *line, size_t len, long lineno, int64_t row_no)
{
    helios_row(ctx, line, len, lineno, row_no);
}

int helios_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                       struct err *err)
{
    struct helios_reader r;
    gpufmt_init(&r.g, name, w, diags, err, 1);
    struct gpufmt_csv csv = {helios_header, helios_next_row, &r};
    gpufmt_read_csv(&r.g, data, len, &csv);
    return gpufmt_finish(&r.g);
}
