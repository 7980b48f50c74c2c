#include "traces/pai.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "traces/gpufmt.h"

enum { JOB_NAME, JOB_INST, JOB_USER, JOB_STATUS, JOB_START, JOB_END, JOB_FIELDS };
enum { TASK_JOB, TASK_NAME, TASK_INST_NUM, TASK_STATUS, TASK_START, TASK_END, TASK_CPU, TASK_MEM, TASK_GPU,
       TASK_GPU_TYPE, TASK_FIELDS };

/* What the join gathers per job, by the job's index in g.ids. */
struct pai_job {
    long line;
    int valid;
    double submit_s, end_s;
    int has_end;
    int32_t status; /* -2: Running/Waiting */
    int32_t user;
    double gpu_pct; /* sum of plan_gpu x inst_num */
    int fractional;
    double start_s;
    int has_start, tasks;
    long constraint_line;
    char constraint[16];  /* quoted, for the note */
    char gpu_type[32];    /* as in the task table, for the constraint */
};

struct pai_reader {
    struct gpufmt g;
    struct pai_job *jobs;
    size_t cap;
    size_t orphans; /* tasks of no job in the job table */
    long orphan_line;
    char orphan[TEXTFILE_QUOTE_CAP];
};

static int pai_status_word(const char *p, size_t n)
{
    static const char *const words[] = {"Terminated", "Failed", "Running", "Waiting"};
    for (int i = 0; i < 4; i++)
        if (n == strlen(words[i]) && strncasecmp(p, words[i], n) == 0)
            return i;
    return -1;
}

int pai_detect(const char *data, size_t len)
{
    const char *line;
    size_t n;
    if (!gpufmt_first_line(data, len, &line, &n))
        return 0;
    struct gpufmt_row row;
    gpufmt_split(line, n, &row);
    if (row.n != JOB_FIELDS)
        return 0;
    if (gpufmt_find(&row, "job_name") == 0 && gpufmt_find(&row, "inst_id") == 1)
        return 1;
    return pai_status_word(row.p[JOB_STATUS], row.len[JOB_STATUS]) >= 0;
}

int pai_task_path(const char *job_path, char *buf, size_t cap)
{
    const char *base = strrchr(job_path, '/');
    base = base ? base + 1 : job_path;
    const char *hit = NULL;
    for (const char *p = strstr(base, "job_table"); p; p = strstr(p + 1, "job_table"))
        hit = p;
    if (!hit)
        return -1;
    size_t pre = (size_t)(hit - job_path), post = strlen(hit + 9);
    if (pre + 10 + post + 1 > cap)
        return -1;
    memcpy(buf, job_path, pre);
    memcpy(buf + pre, "task_table", 10);
    memcpy(buf + pre + 10, hit + 9, post + 1);
    return 0;
}

static int pai_is_header(const struct gpufmt_row *row)
{
    return row->n && gpufmt_find(row, "job_name") == 0;
}

static void pai_bad(struct gpufmt *g, const struct gpufmt_row *row, size_t k, long line, const char *col,
                    const char *what)
{
    char q[TEXTFILE_QUOTE_CAP];
    textfile_quote(q, sizeof q, row->p[k], row->len[k]);
    textfile_error(&g->rep, line, gpufmt_col(row, k), "%s '%s' is not %s", col, q, what);
}

/* 1 and *out, 0 when empty, -1 reported. */
static int pai_time(struct gpufmt *g, const struct gpufmt_row *row, size_t k, long line, const char *col, double *out)
{
    int rc = gpufmt_time(row->p[k], row->len[k], out);
    if (rc < 0)
        pai_bad(g, row, k, line, col, "a time in seconds");
    return rc;
}

static struct pai_job *pai_slot(struct pai_reader *r, size_t k, long line)
{
    if (k >= r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        while (cap <= k)
            cap *= 2;
        struct pai_job *p = realloc(r->jobs, cap * sizeof *p);
        if (!p) {
            textfile_out_of_memory(&r->g.rep, line);
            return NULL;
        }
        memset(p + r->cap, 0, (cap - r->cap) * sizeof *p);
        r->jobs = p;
        r->cap = cap;
    }
    return &r->jobs[k];
}

static void pai_job_row(struct pai_reader *r, const char *line, size_t len, long lineno)
{
    struct gpufmt *g = &r->g;
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    if (row.n != JOB_FIELDS) {
        textfile_error(&g->rep, lineno, 1, "%zu fields, expected %d (job_name,inst_id,user,status,start_time,end_time)",
                       row.n, JOB_FIELDS);
        return;
    }
    size_t before = g->ids.n;
    int dup = gpufmt_duplicate(g, row.p[JOB_NAME], row.len[JOB_NAME], lineno);
    if (dup != 0) {
        if (dup < 0)
            textfile_out_of_memory(&g->rep, lineno);
        return;
    }
    struct pai_job *j = pai_slot(r, before, lineno);
    if (!j)
        return;
    j->line = lineno;
    int st = pai_status_word(row.p[JOB_STATUS], row.len[JOB_STATUS]);
    int has_submit = pai_time(g, &row, JOB_START, lineno, "start_time", &j->submit_s);
    int has_end = pai_time(g, &row, JOB_END, lineno, "end_time", &j->end_s);
    if (st < 0) {
        pai_bad(g, &row, JOB_STATUS, lineno, "status", "Terminated, Failed, Running or Waiting");
        return;
    }
    if (has_submit < 0 || has_end < 0)
        return;
    if (!has_submit) {
        textfile_error(&g->rep, lineno, gpufmt_col(&row, JOB_START), "start_time (the submission) is empty");
        return;
    }
    j->has_end = has_end;
    j->status = st == 0 ? GPUFMT_STATUS_COMPLETED : st == 1 ? GPUFMT_STATUS_FAILED : -2;
    j->user = gpufmt_intern(g, &g->w->users, row.p[JOB_USER], row.len[JOB_USER], lineno);
    j->valid = 1;
}

static void pai_task_row(struct pai_reader *r, size_t n_jobs, const char *line, size_t len, long lineno)
{
    struct gpufmt *g = &r->g;
    struct gpufmt_row row;
    gpufmt_split(line, len, &row);
    if (row.n != TASK_FIELDS) {
        textfile_error(&g->rep, lineno, 1,
                       "%zu fields, expected %d (job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,"
                       "plan_mem,plan_gpu,gpu_type)",
                       row.n, TASK_FIELDS);
        return;
    }
    double inst = 1, gpu = 0, start = 0, end = 0;
    int bad = 0;
    if (!gpufmt_empty(row.p[TASK_INST_NUM], row.len[TASK_INST_NUM]) &&
        (gpufmt_num(row.p[TASK_INST_NUM], row.len[TASK_INST_NUM], &inst) != 0 || inst < 0 || inst > 1e6)) {
        pai_bad(g, &row, TASK_INST_NUM, lineno, "inst_num", "a number of instances from 0 to 1000000");
        bad = 1;
    }
    if (!gpufmt_empty(row.p[TASK_GPU], row.len[TASK_GPU]) &&
        (gpufmt_num(row.p[TASK_GPU], row.len[TASK_GPU], &gpu) != 0 || gpu < 0 || gpu > 1e5)) {
        pai_bad(g, &row, TASK_GPU, lineno, "plan_gpu", "a percentage of a GPU from 0 to 100000");
        bad = 1;
    }
    int has_start = pai_time(g, &row, TASK_START, lineno, "start_time", &start);
    if (pai_time(g, &row, TASK_END, lineno, "end_time", &end) < 0 || has_start < 0 || bad)
        return;
    char name[256];
    size_t n = row.len[TASK_JOB] < sizeof name - 1 ? row.len[TASK_JOB] : sizeof name - 1;
    memcpy(name, row.p[TASK_JOB], n);
    name[n] = '\0';
    int32_t k = string_table_intern(&g->ids, name);
    if (k < 0) {
        textfile_out_of_memory(&g->rep, lineno);
        return;
    }
    if ((size_t)k >= n_jobs || !r->jobs[k].valid) {
        if (r->orphans++ == 0) {
            r->orphan_line = lineno;
            textfile_quote(r->orphan, sizeof r->orphan, row.p[TASK_JOB], row.len[TASK_JOB]);
        }
        return;
    }
    struct pai_job *j = &r->jobs[k];
    j->tasks++;
    j->gpu_pct += gpu * inst;
    if (gpu > 0 && gpu < 100)
        j->fractional = 1;
    if (has_start && (!j->has_start || start < j->start_s)) {
        j->start_s = start;
        j->has_start = 1;
    }
    const char *type = row.p[TASK_GPU_TYPE];
    size_t type_len = row.len[TASK_GPU_TYPE];
    if (gpu > 0 && !gpufmt_empty(type, type_len) && !(type_len == 4 && strncasecmp(type, "MISC", 4) == 0) &&
        !j->constraint_line) {
        j->constraint_line = lineno;
        textfile_quote(j->constraint, sizeof j->constraint, type, type_len < 12 ? type_len : 12);
        size_t keep = type_len < sizeof j->gpu_type - 1 ? type_len : sizeof j->gpu_type - 1;
        memcpy(j->gpu_type, type, keep);
        j->gpu_type[keep] = '\0';
    }
}

static void pai_lines(struct pai_reader *r, const char *data, size_t len, int tasks, size_t n_jobs)
{
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    const char *line;
    size_t n;
    int first = 1;
    while (!r->g.rep.stopped && textfile_lines_next(&it, &line, &n)) {
        if (n == 0 || (n == 1 && line[0] == '\r'))
            continue;
        if (first) {
            first = 0;
            struct gpufmt_row row;
            gpufmt_split(line, n, &row);
            if (pai_is_header(&row))
                continue;
        }
        if (tasks)
            pai_task_row(r, n_jobs, line, n, it.line);
        else
            pai_job_row(r, line, n, it.line);
    }
}

static void pai_join(struct pai_reader *r, size_t n_jobs)
{
    struct gpufmt *g = &r->g;
    for (size_t k = 0; k < n_jobs && !g->rep.stopped; k++) {
        struct pai_job *pj = &r->jobs[k];
        if (!pj->valid)
            continue;
        long line = pj->line;
        if (!pj->tasks) {
            gpufmt_skip(g, GPUFMT_SKIP_NO_TASK, line, "job '%s' has no task in the task table: skipped",
                        g->ids.items[k]);
            continue;
        }
        double gpus = pj->gpu_pct / 100;
        if (gpus <= 0) {
            gpufmt_skip(g, GPUFMT_SKIP_NO_GPU, line, "job '%s' plans no GPU (a CPU-only job): skipped", g->ids.items[k]);
            continue;
        }
        if (pj->status == -2 || !pj->has_end) {
            gpufmt_skip(g, GPUFMT_SKIP_RUNNING, line, "job '%s' has no end (Running or Waiting): skipped",
                        g->ids.items[k]);
            continue;
        }
        if (!pj->has_start) {
            gpufmt_skip(g, GPUFMT_SKIP_NOT_STARTED, line, "job '%s' has no task that started: skipped",
                        g->ids.items[k]);
            continue;
        }
        double start = pj->start_s < pj->submit_s ? pj->submit_s : pj->start_s;
        double run = pj->end_s - start;
        if (run < 0) {
            textfile_error(&g->rep, line, 0, "job '%s' ends (end_time) before its first task starts", g->ids.items[k]);
            continue;
        }
        double whole = ceil(gpus - 1e-9);
        if (whole > 1000000) {
            textfile_error(&g->rep, line, 0, "job '%s' plans %.0f GPUs, more than 1000000", g->ids.items[k], whole);
            continue;
        }
        /* less than one GPU in all: a share of one GPU; fractions of more
         * than one replay on whole GPUs */
        int32_t milli = whole == 1 && gpus < 1 - 1e-9 ? (int32_t)llround(gpus * 1000) : 0;
        if (milli < 0 || milli >= 1000)
            milli = 0;
        if (milli > 0)
            gpufmt_note(g, GPUFMT_NOTE_FRACTION, line, NULL, 0);
        else if (pj->fractional || whole - gpus > 1e-9)
            gpufmt_note(g, GPUFMT_NOTE_FRACTION_MULTI, line, NULL, 0);
        int32_t models = 0;
        if (pj->constraint_line) {
            gpufmt_note(g, GPUFMT_NOTE_CONSTRAINT, line, pj->constraint, strlen(pj->constraint));
            models = gpufmt_intern(g, &g->w->gpu_models, pj->gpu_type, strlen(pj->gpu_type), line) + 1;
        }
        struct job j = {.id = (int64_t)k + 1, .submit_us = llround(pj->submit_s * 1e6),
                        .runtime_us = llround(run * 1e6), .limit_us = -1, .slots = (int32_t)whole, .user = pj->user,
                        .team = -1, .status = pj->status, .source_line = line, .job_class = -1,
                        .wait_us = llround((start - pj->submit_s) * 1e6), .wait_known = 1,
                        .gpu_milli = milli, .gpu_models = models};
        gpufmt_push(g, &j, pj->submit_s, line);
    }
}

int pai_read_buffers(const char *job_name, const char *job_data, size_t job_len, const char *task_name,
                     const char *task_data, size_t task_len, struct workload *w, struct diag_list *diags,
                     struct err *err)
{
    struct pai_reader r = {0};
    gpufmt_init(&r.g, job_name, w, diags, err, 0);
    pai_lines(&r, job_data, job_len, 0, 0);
    size_t n_jobs = r.g.ids.n;
    if (!r.g.rep.stopped && pai_slot(&r, n_jobs, 0)) {
        r.g.rep.name = task_name;
        pai_lines(&r, task_data, task_len, 1, n_jobs);
        if (r.orphans)
            textfile_warn(&r.g.rep, r.orphan_line, 0,
                          "%zu tasks belong to no job in the job table: ignored (the first here, of job '%s')",
                          r.orphans, r.orphan);
        r.g.rep.name = job_name;
        if (!r.g.rep.errors)
            pai_join(&r, n_jobs);
    }
    free(r.jobs);
    return gpufmt_finish(&r.g);
}
