/* gpufmt: what the GPU-cluster trace readers share (Philly, Helios/Acme,
 * Alibaba PAI 2020 and openb 2023, Microsoft ITP): splitting a CSV line,
 * finding columns by name, reading numbers and "YYYY-MM-DD HH:MM:SS" times,
 * the per-kind warnings that a real log repeats thousands of times (first 10
 * shown, then counted), the notes on what a job carries that the workload
 * cannot (fractional GPUs, GPU-model constraints, extra attempts: counted and
 * reported once per kind), duplicate ids, and the end of a read (no jobs ->
 * error, sorting, the skipped count in meta.skipped_at_read).
 *
 * Outcomes use SWF's status codes, as sacct does: 1 completed, 0 failed,
 * 5 cancelled or killed, -1 unknown.
 *
 * Everything here borrows its inputs; struct gpufmt owns the duplicate-id
 * table and the absolute submit times until gpufmt_finish or gpufmt_release.
 */
#ifndef FLEETSIM_TRACES_GPUFMT_H
#define FLEETSIM_TRACES_GPUFMT_H

#include <stddef.h>
#include <stdint.h>

#include "models/workload.h"
#include "sim/err.h"
#include "traces/textfile.h"

enum { GPUFMT_MAX_FIELDS = 64, GPUFMT_MAX_ERRORS = 20, GPUFMT_REPEAT_MAX = 10 };

enum { GPUFMT_STATUS_FAILED = 0, GPUFMT_STATUS_COMPLETED = 1, GPUFMT_STATUS_KILLED = 5 };

/* One CSV line split at commas: pointers into the buffer, not terminated.
 * A field in double quotes loses its quotes (a quoted comma stays inside);
 * surrounding spaces are kept, gpufmt_trim drops them. */
struct gpufmt_row {
    const char *p[GPUFMT_MAX_FIELDS];
    size_t len[GPUFMT_MAX_FIELDS];
    size_t n; /* may exceed GPUFMT_MAX_FIELDS: the rest are not stored */
    const char *line;
};

void gpufmt_split(const char *line, size_t len, struct gpufmt_row *row);
/* 1-based byte column of field k. */
long gpufmt_col(const struct gpufmt_row *row, size_t k);
/* The index of the column named `name` (case and surrounding spaces
 * ignored), or -1. */
int gpufmt_find(const struct gpufmt_row *header, const char *name);
/* Whether field k is empty or one of the spellings of "no value" (NaN, None,
 * null, NA, NaT, Unknown). */
int gpufmt_empty(const char *p, size_t n);

/* Strict decimal numbers (surrounding spaces allowed): 0 and *out, or -1. */
int gpufmt_int(const char *p, size_t n, int64_t *out);
int gpufmt_num(const char *p, size_t n, double *out);
/* "YYYY-MM-DD HH:MM:SS" (or with 'T'), as Unix seconds read as UTC: 0, or
 * -1 when it is not such a time. */
int gpufmt_datetime(const char *p, size_t n, int64_t *out);
/* A time column that may hold either form: epoch or relative seconds, or a
 * date and time. 1 and *out_s, 0 when empty, -1 when neither. */
int gpufmt_time(const char *p, size_t n, double *out_s);

/* Notes on what cannot be mapped into the workload, or is mapped but
 * changes how a job replays, reported once each. */
enum gpufmt_note {
    GPUFMT_NOTE_FRACTION,   /* a fraction of one GPU: mapped (job.gpu_milli), told once */
    GPUFMT_NOTE_CONSTRAINT, /* a GPU-model constraint: mapped (job.gpu_models), told once */
    GPUFMT_NOTE_FRACTION_MULTI, /* fractions of several GPUs: whole GPUs */
    GPUFMT_NOTE_ATTEMPTS,   /* more than one attempt */
    GPUFMT_NOTE_GPU_CHANGE, /* attempts on different GPU counts */
    GPUFMT_NOTES
};

/* Kinds of skipped jobs, each warned about 10 times, then counted. */
enum gpufmt_skip {
    GPUFMT_SKIP_NO_GPU,      /* CPU-only job */
    GPUFMT_SKIP_NOT_STARTED, /* never started: pending, no attempt */
    GPUFMT_SKIP_RUNNING,     /* no end: still running at the end of the trace */
    GPUFMT_SKIP_DUPLICATE,   /* its id appeared before */
    GPUFMT_SKIP_NO_TASK,     /* PAI: no task in the task table */
    GPUFMT_SKIPS
};

struct gpufmt {
    struct textfile_report rep;
    struct workload *w;
    size_t skipped[GPUFMT_SKIPS];
    long skip_line[GPUFMT_SKIPS];
    size_t noted[GPUFMT_NOTES];
    long note_line[GPUFMT_NOTES];
    char note_example[GPUFMT_NOTES][64];
    struct string_table ids; /* ids seen, for duplicates */
    long *id_line;           /* where each id in `ids` was first seen */
    size_t id_line_cap;
    double *submit_s; /* absolute submit times, by job, when rebase is set */
    size_t submit_cap;
    int rebase; /* make submit times relative to the earliest (unix_start_s) */
    size_t diag_start; /* diagnostics before this read's */
};

void gpufmt_init(struct gpufmt *g, const char *name, struct workload *w, struct diag_list *diags, struct err *err,
                 int rebase);
void gpufmt_release(struct gpufmt *g);

void gpufmt_skip(struct gpufmt *g, enum gpufmt_skip kind, long line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Counts a note; example (may be NULL) is quoted in the one warning. */
void gpufmt_note(struct gpufmt *g, enum gpufmt_note kind, long line, const char *example, size_t example_len);
/* Whether id (a job name, any text) was seen before: then a skip warning
 * naming the first line is given and 1 returned. 0 when new, -1 no memory. */
int gpufmt_duplicate(struct gpufmt *g, const char *id, size_t len, long line);
/* A job id: the text itself when it is a plain number, else `fallback`. */
int64_t gpufmt_id(const char *p, size_t n, int64_t fallback);
/* Interns a (trimmed) name; -1 when empty. */
int32_t gpufmt_intern(struct gpufmt *g, struct string_table *t, const char *p, size_t n, long line);
/* Appends a job; with rebase, submit_abs_s is its absolute submit time (the
 * job's submit_us is then set by gpufmt_finish). Returns 0 or -1 (no memory). */
int gpufmt_push(struct gpufmt *g, const struct job *j, double submit_abs_s, long line);
/* The first line of data (the header a detector looks at): 1 and *line,
 * *n, or 0 when data holds no line. */
int gpufmt_first_line(const char *data, size_t len, const char **line, size_t *n);

/* What a CSV reader does with its header line and with each row after it. */
struct gpufmt_csv {
    /* 0 to read on; non-zero: the header is wrong, reported here, and
     * reading stops */
    int (*header)(void *ctx, const char *line, size_t len, long lineno);
    void (*row)(void *ctx, const char *line, size_t len, long lineno, int64_t row_no);
    void *ctx;
};
/* Reads data line by line until g's report stops it: blank lines are
 * skipped, the first line goes to csv->header, the others to csv->row,
 * numbered from 1. */
void gpufmt_read_csv(struct gpufmt *g, const char *data, size_t len, const struct gpufmt_csv *csv);

/* Reports the counted warnings and notes, fails on errors or no jobs,
 * rebases and sorts. Returns 0 or -1. Releases g. */
int gpufmt_finish(struct gpufmt *g);

#endif
