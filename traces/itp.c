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
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    const char *line;
    size_t n;
    int col[ITP_COLS];
    return textfile_lines_next(&it, &line, &n) && itp_header(line, n, col) == 0;
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

int itp_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                    struct err *err)
{
    struct gpufmt g;
    gpufmt_init(&g, name, w, diags, err, 0);
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    const char *line;
    size_t n, n_cols = 0;
    int col[ITP_COLS], have_header = 0;
    int64_t row_no = 0;
    while (!g.rep.stopped && textfile_lines_next(&it, &line, &n)) {
        if (n == 0 || (n == 1 && line[0] == '\r'))
            continue;
        if (!have_header) {
            have_header = 1;
            struct gpufmt_row row;
            gpufmt_split(line, n, &row);
            n_cols = row.n;
            if (itp_header(line, n, col) != 0) {
                char q[TEXTFILE_QUOTE_CAP];
                textfile_quote(q, sizeof q, line, n);
                textfile_error(&g.rep, it.line, 1,
                               "header '%s' lacks one of job_id, submission_time, duration, num_gpu", q);
                break;
            }
            continue;
        }
        itp_row(&g, col, n_cols, line, n, it.line, ++row_no);
    }
    return gpufmt_finish(&g);
}
