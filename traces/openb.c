#include "traces/openb.h"

#include <math.h>
#include <string.h>
#include <strings.h>

#include "traces/gpufmt.h"

enum openb_col { O_NAME, O_GPUS, O_MILLI, O_SPEC, O_PHASE, O_CREATE, O_DELETE, O_SCHED, O_COLS };
static const char *const openb_names[O_COLS] = {"name",          "num_gpu",       "gpu_milli",     "gpu_spec",
                                                "pod_phase",     "creation_time", "deletion_time", "scheduled_time"};

struct openb_reader {
    struct gpufmt g;
    int col[O_COLS];
    size_t n_cols;
};

static const char *openb_columns(const char *line, size_t len, int col[O_COLS], size_t *n_cols)
{
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    *n_cols = row.n;
    const char *missing = NULL;
    for (int c = 0; c < O_COLS; c++)
        if ((col[c] = gpufmt_find(&row, openb_names[c])) < 0 && !missing)
            missing = openb_names[c];
    return missing;
}

int openb_detect(const char *data, size_t len)
{
    const char *line;
    size_t n, n_cols;
    int col[O_COLS];
    /* a pod list without times (the multigpu50 resample) is still one: its
     * read then says what it lacks */
    return gpufmt_first_line(data, len, &line, &n) &&
           (!openb_columns(line, n, col, &n_cols) || (col[O_NAME] >= 0 && col[O_GPUS] >= 0 && col[O_MILLI] >= 0));
}

static void openb_bad(struct openb_reader *r, const struct gpufmt_row *row, enum openb_col c, long line,
                      const char *what)
{
    int k = r->col[c];
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, row->p[k], row->len[k]);
    textfile_error(&r->g.rep, line, gpufmt_col(row, (size_t)k), "%s '%s' is not %s", openb_names[c], q, what);
}

/* 1 and *out, 0 empty, -1 reported. */
static int openb_time(struct openb_reader *r, const struct gpufmt_row *row, enum openb_col c, long line, double *out)
{
    int k = r->col[c];
    if (gpufmt_empty(row->p[k], row->len[k]))
        return 0;
    if (gpufmt_num(row->p[k], row->len[k], out) == 0 && *out >= 0 && *out <= 1e12)
        return 1;
    openb_bad(r, row, c, line, "seconds from 0 to 1e12");
    return -1;
}

static int32_t openb_status(const char *p, size_t n)
{
    if (n == 9 && strncasecmp(p, "Succeeded", 9) == 0)
        return GPUFMT_STATUS_COMPLETED;
    if (n == 6 && strncasecmp(p, "Failed", 6) == 0)
        return GPUFMT_STATUS_FAILED;
    return -1;
}

static void openb_row(struct openb_reader *r, const char *line, size_t len, long lineno, int64_t row_no)
{
    struct gpufmt *g = &r->g;
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    if (row.n != r->n_cols) {
        textfile_error(&g->rep, lineno, 1, "%zu fields, expected %zu as in the header", row.n, r->n_cols);
        return;
    }
    double create = 0, del = 0, sched = 0;
    int64_t gpus = 0, milli = 0;
    int has_create = openb_time(r, &row, O_CREATE, lineno, &create);
    int has_del = openb_time(r, &row, O_DELETE, lineno, &del);
    int has_sched = openb_time(r, &row, O_SCHED, lineno, &sched);
    int bad = has_create < 0 || has_del < 0 || has_sched < 0;
    if (gpufmt_int(row.p[r->col[O_GPUS]], row.len[r->col[O_GPUS]], &gpus) != 0 || gpus < 0 || gpus > 1000000) {
        openb_bad(r, &row, O_GPUS, lineno, "a whole number of GPUs from 0 to 1000000");
        bad = 1;
    }
    if (gpufmt_empty(row.p[r->col[O_MILLI]], row.len[r->col[O_MILLI]]))
        milli = 0;
    else if (gpufmt_int(row.p[r->col[O_MILLI]], row.len[r->col[O_MILLI]], &milli) != 0 || milli < 0 ||
             milli > 1000) {
        openb_bad(r, &row, O_MILLI, lineno, "thousandths of a GPU from 0 to 1000");
        bad = 1;
    }
    if (bad)
        return;
    if (!has_create) {
        textfile_error(&g->rep, lineno, gpufmt_col(&row, (size_t)r->col[O_CREATE]), "creation_time is empty");
        return;
    }
    int dup = gpufmt_duplicate(g, row.p[r->col[O_NAME]], row.len[r->col[O_NAME]], lineno);
    if (dup < 0)
        textfile_out_of_memory(&g->rep, lineno);
    if (dup != 0)
        return;
    if (gpus == 0) {
        gpufmt_skip(g, GPUFMT_SKIP_NO_GPU, lineno, "pod with 0 GPUs (a CPU-only pod): skipped");
        return;
    }
    const char *phase = row.p[r->col[O_PHASE]];
    size_t phase_len = row.len[r->col[O_PHASE]];
    if (!has_sched || (phase_len == 7 && strncasecmp(phase, "Pending", 7) == 0)) {
        gpufmt_skip(g, GPUFMT_SKIP_NOT_STARTED, lineno, "pod never scheduled (Pending): skipped");
        return;
    }
    if (!has_del) {
        gpufmt_skip(g, GPUFMT_SKIP_RUNNING, lineno, "pod has no deletion_time: skipped");
        return;
    }
    if (del < sched || sched < create) {
        textfile_error(&g->rep, lineno, gpufmt_col(&row, (size_t)r->col[del < sched ? O_DELETE : O_SCHED]),
                       del < sched ? "deletion_time is before scheduled_time" : "scheduled_time is before creation_time");
        return;
    }
    /* gpu_milli is per GPU: a share of one GPU is shared, of several replays whole */
    int share = milli > 0 && milli < 1000;
    if (share)
        gpufmt_note(g, gpus == 1 ? GPUFMT_NOTE_FRACTION : GPUFMT_NOTE_FRACTION_MULTI, lineno,
                    row.p[r->col[O_MILLI]], row.len[r->col[O_MILLI]]);
    int32_t models = 0;
    if (!gpufmt_empty(row.p[r->col[O_SPEC]], row.len[r->col[O_SPEC]])) {
        gpufmt_note(g, GPUFMT_NOTE_CONSTRAINT, lineno, row.p[r->col[O_SPEC]], row.len[r->col[O_SPEC]]);
        models = gpufmt_intern(g, &g->w->gpu_models, row.p[r->col[O_SPEC]], row.len[r->col[O_SPEC]], lineno) + 1;
    }
    struct job j = {.id = row_no, .submit_us = llround(create * 1e6), .runtime_us = llround((del - sched) * 1e6),
                    .limit_us = -1, .slots = (int32_t)gpus, .user = -1, .team = -1,
                    .status = openb_status(phase, phase_len), .source_line = lineno, .job_class = -1,
                    .wait_us = llround((sched - create) * 1e6), .wait_known = 1,
                    .gpu_milli = share && gpus == 1 ? (int32_t)milli : 0, .gpu_models = models};
    gpufmt_push(g, &j, create, lineno);
}

static int openb_header(void *ctx, const char *line, size_t len, long lineno)
{
    struct openb_reader *r = ctx;
    const char *missing = openb_columns(line, len, r->col, &r->n_cols);
    if (missing)
        textfile_error(&r->g.rep, lineno, 1, "no column '%s' in the openb pod list header%s", missing,
                       r->col[O_CREATE] < 0 ? " (a list without times can be packed, not replayed)" : "");
    return missing != NULL;
}

static void openb_next_row(void *ctx, const char *line, size_t len, long lineno, int64_t row_no)
{
    openb_row(ctx, line, len, lineno, row_no);
}

int openb_read_buffer(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *diags,
                      struct err *err)
{
    struct openb_reader r;
    gpufmt_init(&r.g, name, w, diags, err, 0);
    struct gpufmt_csv csv = {openb_header, openb_next_row, &r};
    gpufmt_read_csv(&r.g, data, len, &csv);
    return gpufmt_finish(&r.g);
}
