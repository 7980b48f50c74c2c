#include "traces/itp.h"

#include <math.h>
#include <string.h>

#include "sim/units.h"
#include "traces/gpufmt.h"

enum itp_col { ITP_ID, ITP_SUBMIT, ITP_DURATION, ITP_GPUS, ITP_COLS };
static const char *const itp_names[ITP_COLS] = {"job_id", "submission_time", "duration", "num_gpu"};

static int itp_header(const char *line, size_t len, int col[ITP_COLS])
{
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    for (int c = 0; c < ITP_COLS; c++)
        if ((col[c] = gpufmt_find(&row, itp_names[c])) < 0)
            return -1;
    return 0;
}

int itp_detect(const char *data, size_t len)
{
    const char *line;
    size_t n;
    int col[ITP_COLS];
    return gpufmt_first_line(data, len, &line, &n) && itp_header(line, n, col) == 0;
}

static void itp_bad(struct gpufmt *g, const struct gpufmt_row *row, const int col[ITP_COLS], enum itp_col c,
                    long line, const char *what)
{
    int k = col[c];
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, row->p[k], row->len[k]);
    textfile_error(&g->rep, line, gpufmt_col(row, (size_t)k), "%s '%s' is not %s", itp_names[c], q, what);
}

static void itp_row(struct gpufmt *g, const int col[ITP_COLS], size_t n_cols, const char *line, size_t len,
                    long lineno, int64_t row_no)
{
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    if (row.n != n_cols) {
        textfile_error(&g->rep, lineno, 1, "%zu fields, expected %zu as in the header", row.n, n_cols);
        return;
    }
    double submit, duration;
    int64_t gpus;
    int ok = 1;
    if (gpufmt_num(row.p[col[ITP_SUBMIT]], row.len[col[ITP_SUBMIT]], &submit) != 0 || submit < 0 || submit > 1e12) {
        itp_bad(g, &row, col, ITP_SUBMIT, lineno, "seconds from 0 to 1e12");
        ok = 0;
    }
    if (gpufmt_num(row.p[col[ITP_DURATION]], row.len[col[ITP_DURATION]], &duration) != 0 || duration < 0 ||
        duration > 1e12) {
        itp_bad(g, &row, col, ITP_DURATION, lineno, "seconds from 0 to 1e12");
        ok = 0;
    }
    if (gpufmt_int(row.p[col[ITP_GPUS]], row.len[col[ITP_GPUS]], &gpus) != 0 || gpus < 0 || gpus > 1000000) {
        itp_bad(g, &row, col, ITP_GPUS, lineno, "a whole number of GPUs from 0 to 1000000");
        ok = 0;
    }
    if (!ok)
        return;
    int dup = gpufmt_duplicate(g, row.p[col[ITP_ID]], row.len[col[ITP_ID]], lineno);
    if (dup < 0)
        textfile_out_of_memory(&g->rep, lineno);
    if (dup != 0)
        return;
    if (gpus == 0) {
        gpufmt_skip(g, GPUFMT_SKIP_NO_GPU, lineno, "job with 0 GPUs (a CPU-only job): skipped");
        return;
    }
    struct job j = {.id = gpufmt_id(row.p[col[ITP_ID]], row.len[col[ITP_ID]], row_no),
                    .submit_us = llround(submit * 1e6), .runtime_us = llround(duration * 1e6), .limit_us = -1,
                    .slots = (int32_t)gpus, .user = -1, .team = -1, .status = -1, .source_line = lineno,
                    .job_class = -1};
    gpufmt_push(g, &j, submit, lineno);
}

struct itp_reader {
    struct gpufmt g;
    int col[ITP_COLS];
    size_t n_cols;
};

static int itp_read_header(void *ctx, const char *line, size_t len, long lineno)
{
    struct itp_reader *r = ctx;
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    r->n_cols = row.n;
    if (itp_header(line, len, r->col) == 0)
        return 0;
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, line, len);
    textfile_error(&r->g.rep, lineno, 1, "header '%s' lacks one of job_id, submission_time, duration, num_gpu", q);
    return -1;
}

static void itp_next_row(void *ctx, const char *line, size_t len, long lineno, int64_t row_no)
{
    struct itp_reader *r = ctx;
    itp_row(&r->g, r->col, r->n_cols, line, len, lineno, row_no);
}

int itp_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                    struct err *err)
{
    struct itp_reader r;
    gpufmt_init(&r.g, name, w, diags, err, 0);
    struct gpufmt_csv csv = {itp_read_header, itp_next_row, &r};
    gpufmt_read_csv(&r.g, data, len, &csv);
    return gpufmt_finish(&r.g);
}
