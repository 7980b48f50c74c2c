/* _GNU_SOURCE: sched_getaffinity and CPU_COUNT under -std=c11. */
#define _GNU_SOURCE 1
#include "traces/swf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <fcntl.h>

#include "sim/progress.h"
#include "traces/textfile.h"

enum {
    SWF_FIELDS = 18,
    SWF_MIN_FIELDS = 5,  /* up to the allocated processors: the least that is a job */
    /* the shortest job line: SWF_MIN_FIELDS fields of one byte, a space
     * between each (its newline aside), so a read in chunks can size each
     * piece's room by its bytes as well as its lines */
    SWF_JOB_LINE_MIN = 2 * SWF_MIN_FIELDS - 1,
    SWF_MAX_ERRORS = 20, /* then stop: the file is not SWF, and the reader should say so quickly */
    SWF_REPEAT_MAX = 10, /* warnings of one kind shown per file before they are only counted */
    SWF_TOKEN_MAX = 64,  /* longer is no number a log would hold */
    /* A chunk read by another thread should take far longer than starting
     * the thread (~50 us): 1 MB is ~2.5 ms of parsing. */
    SWF_CHUNK_MIN_BYTES = 1 << 20,
    SWF_MAX_CHUNKS = 8,
    /* A chunk's thread needs a few KB of stack (a line's fields, two message
     * buffers, vsnprintf's), not the default 8 MB of address space, which
     * under a limit (ulimit -v) is memory the serial read may need. */
    SWF_CHUNK_STACK = 256 << 10,
    /* A chunk looks at the stop flag once per this many lines (a few ms) */
    SWF_CHUNK_STOP_LINES = 1024
};

/* Beyond 1e12 s (31,700 years) a time is garbage, and in microseconds it
 * still fits int64 with room to spare. */
#define SWF_ABSURD_S 1e12
/* 2001-09-09 in epoch seconds: no relative log runs that long, so a first
 * submit beyond it is an absolute timestamp. */
#define SWF_EPOCH_GUESS_S 1e9

/* 1-based field numbers, as the SWF definition counts them. */
enum swf_field {
    SWF_F_JOB = 1,
    SWF_F_SUBMIT = 2,
    SWF_F_RUN = 4,
    SWF_F_ALLOC = 5,
    SWF_F_REQ_PROCS = 8,
    SWF_F_REQ_TIME = 9,
    SWF_F_STATUS = 11,
    SWF_F_USER = 12,
    SWF_F_GROUP = 13
};

/* Warnings by the rule that decides whether one is shown: the kinds real
 * logs repeat thousands of times are capped per file (the rest counted), two
 * are shown once per file, the others always. A chunk read in parallel keeps
 * the kind of each warning it shows, since its join applies the rule again
 * with what the chunks before it have shown. */
enum swf_warning {
    SWF_W_SHORT,
    SWF_W_TOO_SHORT,
    SWF_W_NO_SUBMIT,
    SWF_W_NO_RUN,
    SWF_W_NO_PROCS,
    SWF_REPEAT_KINDS,               /* the kinds above: SWF_REPEAT_MAX shown per file */
    SWF_W_EXTRA = SWF_REPEAT_KINDS, /* once: fields after the 18th */
    SWF_W_ORDER,                    /* once: a submit earlier than the job's before */
    SWF_W_OTHER                     /* always: a bad header value */
};

/* The header keys a reader has set (swf_reader.header_set). */
enum { SWF_H_MAX_NODES = 1, SWF_H_MAX_PROCS = 2, SWF_H_UNIX_START = 4 };

/* One job line split into its first 18 fields. */
struct swf_fields {
    long line;
    int nf; /* tokens on the line, those past the 18th included */
    const char *tok[SWF_FIELDS];
    size_t len[SWF_FIELDS];
    long col[SWF_FIELDS];
    long extra_col; /* where the 19th token starts, if any */
    double v[SWF_FIELDS]; /* -1 = unknown or missing */
};

/* The name a field interned last: logs list a user's jobs in runs, and the
 * same token always interns to the same index, so a run costs one memcmp. */
struct swf_last_name {
    const char *tok; /* into the buffer being read; NULL = none yet */
    size_t len;
    int32_t index;
};

struct swf_reader {
    struct textfile_report rep;
    enum swf_convention conv;
    struct workload *w;
    unsigned header_set; /* SWF_H_* */
    long max_procs_line, max_procs_col; /* where MaxProcs was read, for the shape warning */
    int have_first; /* the first job line with a submit time, for epoch detection */
    double first_submit_s;
    long first_line, first_col;
    double min_submit_s;
    double prev_submit_s; /* the last job line's, once have_first */
    int warned_once[SWF_W_OTHER - SWF_W_EXTRA];
    size_t repeats[SWF_REPEAT_KINDS];
    long repeat_line[SWF_REPEAT_KINDS];
    struct swf_last_name last_user, last_team;
    /* In a chunk (keep_kinds): the kind of each warning shown, kinds[i] that
     * of rep.diags->items[i], and how many were shown when the first submit
     * was noted, where the order check across the chunk's start belongs. */
    int keep_kinds;
    unsigned char *kinds;
    size_t n_kinds, cap_kinds;
    size_t kinds_at_first;
    /* In a chunk: raised when the reader of the file has stopped (too many
     * errors, out of memory), which then never joins this chunk: its lines
     * are not worth reading on. */
    const atomic_int *stop;
    /* In a read in chunks, where every reader writes into the file's array
     * (which must then never move), the index its jobs stay below: the end
     * of the piece's room, where the next piece's begins. A room holds as
     * many jobs as its piece's lines and bytes can (SWF_JOB_LINE_MIN), so a
     * reader that fills one reports no memory (the chunk is then read
     * again, or the file serially), and whatever the bounds, no reader
     * writes into another's room. SIZE_MAX: w's array grows. */
    size_t room_end;
    /* the jobs were checked in arrival order as they were read (a feed
     * that stands): swf_finish need not check again */
    int in_order;
};

static double swf_value(const struct swf_fields *f, int field)
{
    return f->v[field - 1];
}

/* ---- messages ---- */

/* Whether a warning of this kind at this line is shown, counting it. The
 * first few of a repeated kind are shown; swf_report_repeats counts the rest,
 * so a log with 3,000 skipped jobs does not bury the one real problem. */
static int swf_shown(struct swf_reader *r, enum swf_warning kind, long line)
{
    if (kind < SWF_REPEAT_KINDS) {
        if (++r->repeats[kind] > SWF_REPEAT_MAX)
            return 0;
        r->repeat_line[kind] = line;
        return 1;
    }
    if (kind == SWF_W_OTHER)
        return 1;
    int *once = &r->warned_once[kind - SWF_W_EXTRA];
    if (*once)
        return 0;
    *once = 1;
    return 1;
}

static void swf_keep_kind(struct swf_reader *r, enum swf_warning kind)
{
    if (r->n_kinds == r->cap_kinds) {
        size_t cap = r->cap_kinds ? 2 * r->cap_kinds : 64;
        unsigned char *kinds = realloc(r->kinds, cap);
        if (!kinds) {
            textfile_out_of_memory(&r->rep, 0);
            return;
        }
        r->kinds = kinds;
        r->cap_kinds = cap;
    }
    r->kinds[r->n_kinds++] = (unsigned char)kind;
}

static void swf_warn(struct swf_reader *r, enum swf_warning kind, long line, long col,
                     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void swf_warn(struct swf_reader *r, enum swf_warning kind, long line, long col,
                     const char *fmt, ...)
{
    if (!swf_shown(r, kind, line))
        return;
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(r->rep.diags, DIAG_WARNING, r->rep.name, line, col, "%s", msg);
    if (r->keep_kinds)
        swf_keep_kind(r, kind);
}

static void swf_report_repeats(struct swf_reader *r)
{
    for (int k = 0; k < SWF_REPEAT_KINDS; k++) {
        if (r->repeats[k] > SWF_REPEAT_MAX)
            textfile_warn(&r->rep, 0, 0, "%zu more warnings like the one at line %ld not shown",
                     r->repeats[k] - SWF_REPEAT_MAX, r->repeat_line[k]);
    }
}

/* ---- header lines ---- */

static int swf_is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static int swf_parse_header_int(const char *tok, size_t len, long long *out)
{
    char buf[SWF_TOKEN_MAX];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (end != buf + len || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

/* "; Key: value". Only the keys that size the machine or anchor the clock
 * matter; the rest (and continuation lines without a key) are notes. */
static void swf_header(struct swf_reader *r, const char *s, size_t n, long lineno)
{
    size_t i = 0;
    while (i < n && (swf_is_space((unsigned char)s[i]) || s[i] == ';'))
        i++;
    size_t key = i;
    while (i < n && s[i] != ':' && !swf_is_space((unsigned char)s[i]))
        i++;
    size_t key_len = i - key;
    while (i < n && swf_is_space((unsigned char)s[i]))
        i++;
    if (i >= n || s[i] != ':')
        return;
    i++;
    int64_t *slot = NULL;
    long long min = 1;
    unsigned bit = 0;
    if (key_len == 8 && memcmp(s + key, "MaxNodes", 8) == 0)
        slot = &r->w->meta.max_nodes, bit = SWF_H_MAX_NODES;
    else if (key_len == 8 && memcmp(s + key, "MaxProcs", 8) == 0)
        slot = &r->w->meta.max_procs, bit = SWF_H_MAX_PROCS;
    else if (key_len == 13 && memcmp(s + key, "UnixStartTime", 13) == 0)
        slot = &r->w->meta.unix_start_s, min = 0, bit = SWF_H_UNIX_START;
    if (!slot)
        return;
    while (i < n && swf_is_space((unsigned char)s[i]))
        i++;
    size_t val = i;
    while (i < n && !swf_is_space((unsigned char)s[i]))
        i++;
    long long v;
    char q[TEXTFILE_QUOTE_CAP];
    if (swf_parse_header_int(s + val, i - val, &v) != 0 || v < min) {
        swf_warn(r, SWF_W_OTHER, lineno, (long)val + 1, "header '%.*s' has a bad value '%s': ignored",
                 (int)key_len, s + key, textfile_quote(q, sizeof q, s + val, i - val));
        return;
    }
    *slot = (int64_t)v;
    r->header_set |= bit;
    if (bit == SWF_H_MAX_PROCS) {
        r->max_procs_line = lineno;
        r->max_procs_col = (long)val + 1;
    }
}

/* ---- job lines: splitting and numbers ---- */

/* What each byte is to the splitter: one table lookup per byte instead of
 * a chain of compares, since splitting is most of the reading time. */
enum swf_byte { SWF_B_OTHER, SWF_B_DIGIT, SWF_B_SPACE, SWF_B_CONTROL };

/* Written out: a range initializer is a GNU extension. O other, D digit,
 * S space (as swf_is_space), C control (< 0x20 and 0x7f, but not a space). */
#define O SWF_B_OTHER
#define D SWF_B_DIGIT
#define S SWF_B_SPACE
#define C SWF_B_CONTROL
static const unsigned char swf_byte_class[256] = {
    C, C, C, C, C, C, C, C, C, S, C, S, S, S, C, C,
    C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, C,
    S, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    D, D, D, D, D, D, D, D, D, D, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, C,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
    O, O, O, O, O, O, O, O, O, O, O, O, O, O, O, O,
};
#undef O
#undef D
#undef S
#undef C

/* Most fields are small integers: read them directly (exactly, and about
 * ten times faster than strtod). Returns 0, or -1 if tok is not one. */
static int swf_parse_integer(const char *tok, size_t len, double *out)
{
    size_t i = tok[0] == '-';
    if (len == i || len - i > 15)
        return -1;
    long long v = 0;
    for (; i < len; i++) {
        if (tok[i] < '0' || tok[i] > '9')
            return -1;
        v = v * 10 + (tok[i] - '0');
    }
    *out = tok[0] == '-' ? -(double)v : (double)v;
    return 0;
}

/* Splits a job line into tokens and reads the plain integers among them on
 * the way (the same values swf_parse_integer gives); f->v[i] is NAN where a
 * token needs swf_parse_number. Returns 0, or -1 when the line holds binary
 * garbage (reported once, before any bad number on the line). */
static int swf_split(struct swf_reader *r, const char *s, size_t n, long lineno,
                     struct swf_fields *f)
{
    f->line = lineno;
    const unsigned char *u = (const unsigned char *)s, *p = u, *end = u + n;
    int nf = 0;
    for (;;) {
        while (p < end && swf_byte_class[*p] == SWF_B_SPACE)
            p++;
        if (p == end)
            break;
        const unsigned char *start = p;
        int neg = *p == '-';
        p += neg;
        const unsigned char *digits = p;
        uint64_t v = 0;
        unsigned d;
        while (p < end && (d = (unsigned)*p - '0') < 10) {
            v = v * 10 + d;
            p++;
        }
        int integer = (size_t)(p - digits) - 1 < 15; /* 1 to 15 digits */
        if (p < end && swf_byte_class[*p] != SWF_B_SPACE) {
            integer = 0;
            for (; p < end && swf_byte_class[*p] != SWF_B_SPACE; p++) {
                if (swf_byte_class[*p] == SWF_B_CONTROL) {
                    textfile_error(&r->rep, lineno, (long)(p - u) + 1, "unexpected byte 0x%02x", *p);
                    return -1;
                }
            }
        }
        if (nf < SWF_FIELDS) {
            f->tok[nf] = (const char *)start;
            f->len[nf] = (size_t)(p - start);
            f->col[nf] = (long)(start - u) + 1;
            f->v[nf] = !integer ? NAN : neg ? -(double)v : (double)v;
        } else if (nf == SWF_FIELDS) {
            f->extra_col = (long)(start - u) + 1;
        }
        nf++;
    }
    f->nf = nf;
    return 0;
}

/* "552.21", "-.5", "7.": at most 15 digits in all and so an exact integer
 * m, divided by an exact power of ten; one correctly rounded division is
 * what strtod returns (Clinger's fast path). Returns -1 for anything else,
 * which strtod then judges. */
static int swf_parse_decimal(const char *tok, size_t len, double *out)
{
    static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
    size_t i = tok[0] == '-';
    int64_t m = 0;
    int digits = 0, frac = -1; /* digits after the point, -1 = no point yet */
    for (; i < len; i++) {
        if (tok[i] == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (tok[i] < '0' || tok[i] > '9' || ++digits > 15)
            return -1;
        m = m * 10 + (tok[i] - '0');
        frac += frac >= 0;
    }
    if (digits == 0 || frac < 0)
        return -1;
    double v = (double)m / pow10[frac];
    *out = tok[0] == '-' ? -v : v;
    return 0;
}

static int swf_is_number_char(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

/* Plain decimal numbers only: strtod alone would also take "nan", "inf"
 * and hex floats, none of which a log means. */
static int swf_parse_number(const char *tok, size_t len, double *out)
{
    char buf[SWF_TOKEN_MAX];
    if (len == 0 || len >= sizeof buf)
        return -1;
    if (swf_parse_integer(tok, len, out) == 0 || swf_parse_decimal(tok, len, out) == 0)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!swf_is_number_char(tok[i]))
            return -1;
    memcpy(buf, tok, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end != buf + len || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

/* Returns the number of errors found on the line. */
static int swf_parse_fields(struct swf_reader *r, struct swf_fields *f)
{
    int bad = 0;
    char q[TEXTFILE_QUOTE_CAP];
    for (int i = 0; i < SWF_FIELDS; i++) {
        if (i >= f->nf) {
            f->v[i] = -1;
            continue;
        }
        if (isnan(f->v[i]) && swf_parse_number(f->tok[i], f->len[i], &f->v[i]) != 0) {
            textfile_error(&r->rep, f->line, f->col[i], "field %d ('%s') is not a number", i + 1,
                      textfile_quote(q, sizeof q, f->tok[i], f->len[i]));
            bad++;
            f->v[i] = -1;
        } else if (f->v[i] <= -1) {
            f->v[i] = -1; /* the spec's "unknown"; logs also write -2, -99 */
        }
    }
    return bad;
}

static int swf_check_times(struct swf_reader *r, const struct swf_fields *f)
{
    static const int time_fields[] = {SWF_F_SUBMIT, SWF_F_RUN, SWF_F_REQ_TIME};
    int bad = 0;
    char q[TEXTFILE_QUOTE_CAP];
    for (size_t k = 0; k < sizeof time_fields / sizeof *time_fields; k++) {
        int i = time_fields[k] - 1;
        if (i < f->nf && f->v[i] > SWF_ABSURD_S) {
            textfile_error(&r->rep, f->line, f->col[i], "field %d ('%s') is out of range (more than 1e12 s)",
                      i + 1, textfile_quote(q, sizeof q, f->tok[i], f->len[i]));
            bad++;
        }
    }
    return bad;
}

/* floor(v) == v without the libm call: every double from 2^52 up is whole,
 * and below it the conversion to int64_t is exact. v is finite. */
static int swf_is_whole(double v)
{
    return fabs(v) >= 4503599627370496.0 || v == (double)(int64_t)v;
}

/* A whole number from a field, or an error at it. */
static int swf_whole(struct swf_reader *r, const struct swf_fields *f, int field, double max,
                     int64_t *out)
{
    int i = field - 1;
    double v = f->v[i];
    char q[TEXTFILE_QUOTE_CAP];
    if (v < 0) {
        *out = -1;
        return 0;
    }
    if (!swf_is_whole(v)) {
        textfile_error(&r->rep, f->line, f->col[i], "field %d ('%s') is not a whole number", field,
                  textfile_quote(q, sizeof q, f->tok[i], f->len[i]));
        return -1;
    }
    if (v > max) {
        textfile_error(&r->rep, f->line, f->col[i], "field %d ('%s') is too large (more than %.0f)", field,
                  textfile_quote(q, sizeof q, f->tok[i], f->len[i]), max);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

static sim_time swf_us(double s)
{
    /* whole seconds (nearly every field) times 10^6 stay below 2^53, exact:
     * what llround gives, without the call */
    if (fabs(s) < 9e9 && swf_is_whole(s))
        return (sim_time)s * 1000000;
    return (sim_time)llround(s * 1e6);
}

/* ---- conversion into jobs ---- */

/* Ids are kept as the log wrote them when it wrote digits (ALCF's user ids
 * pass 2^53, where a double would round them). */
static const char *swf_id_text(char *buf, size_t cap, const char *tok, size_t len, double v)
{
    size_t i = tok[0] == '+';
    size_t digits = i;
    while (digits < len && tok[digits] >= '0' && tok[digits] <= '9')
        digits++;
    if (digits == len && len > i && len - i < cap) {
        while (i + 1 < len && tok[i] == '0')
            i++; /* "007" and "7" are one user */
        memcpy(buf, tok + i, len - i);
        buf[len - i] = '\0';
    } else if (v == floor(v) && v < 9e18) {
        snprintf(buf, cap, "%lld", (long long)v);
    } else {
        snprintf(buf, cap, "%.17g", v);
    }
    return buf;
}

static int32_t swf_intern(struct swf_reader *r, struct string_table *t, struct swf_last_name *last,
                          const struct swf_fields *f, int field)
{
    int i = field - 1;
    if (f->v[i] < 0)
        return -1;
    if (last->tok && last->len == f->len[i] && memcmp(last->tok, f->tok[i], f->len[i]) == 0)
        return last->index;
    char buf[SWF_TOKEN_MAX];
    int32_t k = string_table_intern(t, swf_id_text(buf, sizeof buf, f->tok[i], f->len[i], f->v[i]));
    if (k < 0) {
        textfile_out_of_memory(&r->rep, f->line);
        return k;
    }
    *last = (struct swf_last_name){f->tok[i], f->len[i], k};
    return k;
}

static int32_t swf_status(double v)
{
    if (v < 0 || v > INT32_MAX || !swf_is_whole(v))
        return -1;
    return (int32_t)v;
}

/* What both conventions share: the id, the submit time, the outcome.
 * Returns 0, 1 when the job is skipped (with a warning), -1 on error. */
static int swf_job_base(struct swf_reader *r, const struct swf_fields *f, struct job *j)
{
    memset(j, 0, sizeof *j);
    j->job_class = -1;
    j->source_line = f->line;
    if (swf_whole(r, f, SWF_F_JOB, 9e18, &j->id) != 0)
        return -1;
    char q[TEXTFILE_QUOTE_CAP];
    if (swf_value(f, SWF_F_SUBMIT) < 0) {
        swf_warn(r, SWF_W_NO_SUBMIT, f->line, f->col[SWF_F_SUBMIT - 1],
                 "job '%s' has no submit time: skipped",
                 textfile_quote(q, sizeof q, f->tok[0], f->len[0]));
        return 1;
    }
    j->submit_us = swf_us(swf_value(f, SWF_F_SUBMIT));
    j->status = swf_status(swf_value(f, SWF_F_STATUS));
    j->user = j->team = -1;
    return 0;
}

static int swf_job_people(struct swf_reader *r, const struct swf_fields *f, struct job *j)
{
    j->user = swf_intern(r, &r->w->users, &r->last_user, f, SWF_F_USER);
    j->team = swf_intern(r, &r->w->teams, &r->last_team, f, SWF_F_GROUP);
    return r->rep.no_memory ? -1 : 0;
}

static void swf_push(struct swf_reader *r, const struct job *j)
{
    if (r->w->n >= r->room_end || !workload_push(r->w, j))
        textfile_out_of_memory(&r->rep, j->source_line);
}

/* SWF_REPLAY: what a resource manager saw. */
static void swf_convert_replay(struct swf_reader *r, const struct swf_fields *f)
{
    struct job j;
    int rc = swf_job_base(r, f, &j);
    if (rc != 0) {
        r->w->meta.skipped_at_read += rc == 1;
        return;
    }
    char q[TEXTFILE_QUOTE_CAP];
    if (swf_value(f, SWF_F_RUN) < 0) {
        swf_warn(r, SWF_W_NO_RUN, f->line, f->col[SWF_F_RUN - 1],
                 "job '%s' has no run time: skipped",
                 textfile_quote(q, sizeof q, f->tok[0], f->len[0]));
        r->w->meta.skipped_at_read++;
        return;
    }
    int size_field = swf_value(f, SWF_F_REQ_PROCS) > 0 ? SWF_F_REQ_PROCS
                     : swf_value(f, SWF_F_ALLOC) > 0   ? SWF_F_ALLOC
                                                       : 0;
    if (!size_field) {
        swf_warn(r, SWF_W_NO_PROCS, f->line, f->col[SWF_F_ALLOC - 1],
                 "job '%s' has no processor count: skipped",
                 textfile_quote(q, sizeof q, f->tok[0], f->len[0]));
        r->w->meta.skipped_at_read++;
        return;
    }
    int64_t slots;
    if (swf_whole(r, f, size_field, INT32_MAX, &slots) != 0)
        return;
    j.slots = (int32_t)slots;
    j.runtime_us = swf_us(swf_value(f, SWF_F_RUN));
    j.limit_us = swf_value(f, SWF_F_REQ_TIME) > 0 ? swf_us(swf_value(f, SWF_F_REQ_TIME)) : -1;
    if (swf_job_people(r, f, &j) == 0)
        swf_push(r, &j);
}

/* SWF_RLSCHEDULER: the loader of DIR-LAB/deep-batch-scheduler (job.py), step
 * by step, because its published tables depend on each quirk. */
static void swf_convert_rlscheduler(struct swf_reader *r, const struct swf_fields *f)
{
    struct job j;
    int rc = swf_job_base(r, f, &j);
    if (rc != 0) {
        r->w->meta.skipped_at_read += rc == 1;
        return;
    }
    int64_t alloc, req;
    if (swf_whole(r, f, SWF_F_ALLOC, INT32_MAX, &alloc) != 0 ||
        swf_whole(r, f, SWF_F_REQ_PROCS, INT32_MAX, &req) != 0)
        return;
    int64_t procs = alloc > req ? alloc : req;
    if (procs <= 0) {
        /* job.py would keep it with -1 processors; no simulator can place that */
        char q[TEXTFILE_QUOTE_CAP];
        swf_warn(r, SWF_W_NO_PROCS, f->line, f->col[SWF_F_ALLOC - 1],
                 "job '%s' has no processor count: skipped",
                 textfile_quote(q, sizeof q, f->tok[0], f->len[0]));
        r->w->meta.skipped_at_read++;
        return;
    }
    double run_s = swf_value(f, SWF_F_RUN);
    double request_s = swf_value(f, SWF_F_REQ_TIME);
    if (request_s == -1)
        request_s = run_s; /* the original run time, before the fix-up below */
    if (run_s < 0)
        run_s = 10;
    if (run_s == 0) {
        r->w->meta.skipped_at_read++;
        return;
    }
    j.slots = (int32_t)procs;
    j.runtime_us = swf_us(run_s);
    j.limit_us = request_s < 0 ? -1 : swf_us(request_s);
    if (swf_job_people(r, f, &j) == 0)
        swf_push(r, &j);
}

/* ---- one line ---- */

/* A submit time against the previous job line's, if there was one. */
static void swf_check_order(struct swf_reader *r, double s, long line, long col)
{
    if (r->have_first && s < r->prev_submit_s)
        swf_warn(r, SWF_W_ORDER, line, col,
                 "submit time %.15g is earlier than the previous job's %.15g: %s", s,
                 r->prev_submit_s,
                 r->conv == SWF_REPLAY ? "jobs sorted by submit time"
                                       : "jobs kept in id order (RLScheduler convention)");
}

static void swf_note_submit(struct swf_reader *r, const struct swf_fields *f)
{
    double s = swf_value(f, SWF_F_SUBMIT);
    if (s < 0)
        return;
    swf_check_order(r, s, f->line, f->col[SWF_F_SUBMIT - 1]);
    if (!r->have_first) {
        r->have_first = 1;
        r->first_submit_s = r->min_submit_s = s;
        r->first_line = f->line;
        r->first_col = f->col[SWF_F_SUBMIT - 1];
        r->kinds_at_first = r->n_kinds;
    }
    if (s < r->min_submit_s)
        r->min_submit_s = s;
    r->prev_submit_s = s;
}

static void swf_job_line(struct swf_reader *r, const char *s, size_t n, long lineno)
{
    struct swf_fields f;
    if (swf_split(r, s, n, lineno, &f) != 0 || f.nf == 0)
        return;
    if (swf_parse_fields(r, &f) != 0)
        return;
    if (f.nf < SWF_MIN_FIELDS) {
        swf_warn(r, SWF_W_TOO_SHORT, lineno, 1,
                 "%d fields, expected 18: too short to describe a job: skipped", f.nf);
        r->w->meta.skipped_at_read++;
        return;
    }
    if (f.nf < SWF_FIELDS)
        swf_warn(r, SWF_W_SHORT, lineno, 1,
                 "%d fields, expected 18: missing fields taken as unknown (-1)", f.nf);
    if (f.nf > SWF_FIELDS) /* Alea's extended SWF appends node lists and queue names */
        swf_warn(r, SWF_W_EXTRA, lineno, f.extra_col,
                 "%d fields, expected 18: fields after the 18th ignored here and on any "
                 "later line",
                 f.nf);
    if (swf_check_times(r, &f) != 0)
        return;
    swf_note_submit(r, &f);
    if (r->conv == SWF_RLSCHEDULER)
        swf_convert_rlscheduler(r, &f);
    else
        swf_convert_replay(r, &f);
}

static int swf_is_comment(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && swf_is_space((unsigned char)s[i]))
        i++;
    return i < n && s[i] == ';';
}

/* ---- after the last line ---- */

/* Absolute epoch submits (ALCF's Mira log) would put the first arrival
 * decades into the simulation; the log start becomes the earliest submit. */
static void swf_make_relative(struct swf_reader *r)
{
    if ((r->header_set & SWF_H_UNIX_START) || !r->have_first || r->first_submit_s <= SWF_EPOCH_GUESS_S)
        return;
    int64_t start_s = (int64_t)floor(r->min_submit_s);
    /* rounded as the submits were: past 2^53 us a double's step is more than
     * 1 us, and an exact start_s * 10^6 could lie above the first submit */
    sim_time shift_us = swf_us(floor(r->min_submit_s));
    for (size_t i = 0; i < r->w->n; i++)
        r->w->jobs[i].submit_us -= shift_us;
    r->w->meta.unix_start_s = start_s;
    textfile_warn(&r->rep, r->first_line, r->first_col,
             "submit times look absolute (epoch seconds): made relative to the first job");
}

static int swf_id_cmp(const void *pa, const void *pb)
{
    const struct job *a = pa, *b = pb;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    /* source_line makes qsort stable, as job.py's sort is */
    return a->source_line < b->source_line ? -1 : a->source_line > b->source_line;
}

static int swf_finish(struct swf_reader *r)
{
    if (r->rep.no_memory)
        return -1;
    swf_report_repeats(r);
    swf_make_relative(r);
    /* the header's two sizes must describe one machine of equal nodes */
    int64_t mn = r->w->meta.max_nodes, mp = r->w->meta.max_procs;
    if (mn > 0 && mp > 0 && mp % mn != 0)
        textfile_warn(&r->rep, r->max_procs_line, r->max_procs_col,
                      "header 'MaxProcs' %lld is not a multiple of 'MaxNodes' %lld: the machine is taken as %lld "
                      "nodes of 1 slot (--nodes and --slots set it)",
                      (long long)mp, (long long)mn, (long long)mp);
    if (r->conv == SWF_RLSCHEDULER) {
        if (r->w->n > 1)
            qsort(r->w->jobs, r->w->n, sizeof *r->w->jobs, swf_id_cmp);
        if (r->w->meta.max_procs < 0)
            r->w->meta.max_procs = r->w->meta.max_nodes;
    } else if (!r->in_order) {
        workload_sort_by_submit(r->w);
    }
    if (r->rep.errors)
        return -1;
    if (r->w->n == 0) {
        diag_add(r->rep.diags, DIAG_ERROR, r->rep.name, 0, 0, "no jobs in '%s'", r->rep.name);
        return err_set(r->rep.err, r->rep.name, 0, 0, "no jobs in '%s'", r->rep.name);
    }
    return 0;
}

/* ---- reading: serially, or in chunks read in parallel ---- */

static void swf_reader_init(struct swf_reader *r, const char *name, enum swf_convention conv,
                            struct workload *w, struct diag_list *diags, struct err *err,
                            size_t max_errors)
{
    memset(r, 0, sizeof *r);
    r->rep.name = name;
    r->conv = conv;
    r->w = w;
    r->rep.diags = diags;
    r->rep.err = err;
    r->rep.max_errors = max_errors;
    r->room_end = SIZE_MAX;
}

static void swf_read_lines(struct swf_reader *r, struct textfile_lines *it)
{
    const char *s;
    size_t n;
    while (!r->rep.stopped && textfile_lines_next(it, &s, &n)) {
        if (r->stop && it->line % SWF_CHUNK_STOP_LINES == 0 &&
            atomic_load_explicit(r->stop, memory_order_relaxed)) {
            r->rep.stopped = 1; /* and so never joined */
            break;
        }
        if (swf_is_comment(s, n))
            swf_header(r, s, n, it->line);
        else
            swf_job_line(r, s, n, it->line);
    }
}

/* A piece of the file after the first, read by a thread of its own into its
 * own workload (its jobs in the file's array, below) and diags as if it
 * were a whole file, lines counted from its start. Its first error stops
 * it (max_errors 0): only the reader that has read everything before the
 * piece knows whether that error is within the limit, so that reader
 * reads the piece again itself. */
struct swf_chunk {
    struct swf_reader r;
    /* its names and header; its jobs lie in the file's array, from where
     * the pieces before it cannot reach (their lines) to where it cannot
     * (its own), and the join moves them down after those before. An array
     * of its own, copied at the join, was 10 MB more to fault in and copy
     * for HPC2N (a fifth of the memory a replay touched) */
    struct workload w;
    struct diag_list diags;
    struct err err;
    struct textfile_lines it;
    pthread_t thread;
    int started;    /* it has been read, or is being read */
    int own_thread; /* by `thread` (else by a thread the join has joined) */
};

static void *swf_chunk_run(void *arg)
{
    struct swf_chunk *c = arg;
    swf_read_lines(&c->r, &c->it);
    return NULL;
}

/* A chunk over [start, end) of data, its jobs to go to jobs[0, room). */
static void swf_chunk_prepare(struct swf_chunk *c, const char *name, enum swf_convention conv,
                              const char *data, size_t start, size_t end, struct job *jobs, size_t room,
                              const atomic_int *stop)
{
    workload_init(&c->w);
    c->w.jobs = jobs;
    c->w.cap = room;
    diag_list_init(&c->diags, 0);
    err_clear(&c->err);
    swf_reader_init(&c->r, name, conv, &c->w, &c->diags, &c->err, 0);
    c->r.keep_kinds = 1;
    c->r.stop = stop;
    c->r.room_end = room;
    textfile_lines_init_piece(&c->it, data, start, end);
}

/* Reads the chunk in a thread of its own. */
static void swf_chunk_start(struct swf_chunk *c)
{
    c->started = c->own_thread = textfile_thread_start(&c->thread, SWF_CHUNK_STACK, swf_chunk_run, c) == 0;
}

/* Whether the chunk read to its end, keeping the kind of every warning. */
static int swf_chunk_ok(const struct swf_chunk *c)
{
    return c->started && !c->r.rep.stopped && c->r.n_kinds == c->diags.n;
}

static void swf_chunk_release(struct swf_chunk *c)
{
    c->w.jobs = NULL; /* the file's */
    c->w.cap = 0;
    workload_release(&c->w);
    diag_list_release(&c->diags);
    free(c->r.kinds);
}

/* map[k]: where the chunk's name k lands in `to`, -1 until a job joined
 * names it first; then interned, so in the order and, should memory run
 * out, at the line that the serial read interns it. */
static int32_t swf_join_name(struct swf_reader *r, struct string_table *to, const struct string_table *from,
                             int32_t *map, int32_t k, long line)
{
    if (k < 0 || map[k] >= 0)
        return k < 0 ? k : map[k];
    map[k] = string_table_intern(to, from->items[k]);
    if (map[k] < 0)
        textfile_out_of_memory(&r->rep, line);
    return map[k];
}

static int32_t *swf_join_map(size_t n)
{
    int32_t *map = malloc((n ? n : 1) * sizeof *map);
    for (size_t i = 0; map && i < n; i++)
        map[i] = -1;
    return map;
}

/* What reading on through the chunk's lines would have done to r, which has
 * read the line0 lines before them: the chunk's warnings judged again by
 * what r has shown, with the order check across the chunk's start where its
 * first submit was noted; its header keys (the last line wins), submits,
 * skipped jobs, names and jobs. */
static void swf_join(struct swf_reader *r, const struct swf_chunk *c, long line0)
{
    const struct swf_reader *k = &c->r;
    for (size_t i = 0; i <= c->diags.n; i++) {
        if (k->have_first && i == k->kinds_at_first)
            swf_check_order(r, k->first_submit_s, k->first_line + line0, k->first_col);
        if (i == c->diags.n)
            break;
        const struct diag *g = &c->diags.items[i];
        if (swf_shown(r, (enum swf_warning)k->kinds[i], g->line + line0))
            diag_add(r->rep.diags, g->level, r->rep.name, g->line + line0, g->col, "%s", g->msg);
    }
    for (int kind = 0; kind < SWF_REPEAT_KINDS; kind++) /* those the chunk only counted */
        if (k->repeats[kind] > SWF_REPEAT_MAX)
            r->repeats[kind] += k->repeats[kind] - SWF_REPEAT_MAX;
    const struct workload_meta *m = &c->w.meta;
    if (k->header_set & SWF_H_MAX_NODES)
        r->w->meta.max_nodes = m->max_nodes;
    if (k->header_set & SWF_H_MAX_PROCS) {
        r->w->meta.max_procs = m->max_procs;
        r->max_procs_line = k->max_procs_line + line0;
        r->max_procs_col = k->max_procs_col;
    }
    if (k->header_set & SWF_H_UNIX_START)
        r->w->meta.unix_start_s = m->unix_start_s;
    r->header_set |= k->header_set;
    r->w->meta.skipped_at_read += m->skipped_at_read;
    if (k->have_first) {
        if (!r->have_first) {
            r->have_first = 1;
            r->first_submit_s = r->min_submit_s = k->first_submit_s;
            r->first_line = k->first_line + line0;
            r->first_col = k->first_col;
        }
        if (k->min_submit_s < r->min_submit_s)
            r->min_submit_s = k->min_submit_s;
        r->prev_submit_s = k->prev_submit_s;
    }
    int32_t *users = swf_join_map(c->w.users.n);
    int32_t *teams = users ? swf_join_map(c->w.teams.n) : NULL;
    if (!teams)
        textfile_out_of_memory(&r->rep, line0 + 1);
    /* down the array: r's jobs end at or before where the chunk's begin */
    for (size_t i = 0; teams && i < c->w.n && !r->rep.no_memory; i++) {
        struct job j = c->w.jobs[i];
        j.source_line += line0;
        j.user = swf_join_name(r, &r->w->users, &c->w.users, users, j.user, j.source_line);
        j.team = swf_join_name(r, &r->w->teams, &c->w.teams, teams, j.team, j.source_line);
        if (!r->rep.no_memory)
            swf_push(r, &j);
    }
    free(users);
    free(teams);
}

static int swf_read_serial(const char *name, const char *data, size_t len, enum swf_convention conv,
                           struct workload *w, struct diag_list *diags, struct err *err)
{
    struct swf_reader r;
    swf_reader_init(&r, name, conv, w, diags, err, SWF_MAX_ERRORS);
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    workload_reserve(w, w->n + textfile_records_bound(&it, SWF_JOB_LINE_MIN));
    swf_read_lines(&r, &it);
    return swf_finish(&r);
}

/* What a read had added to diags since it held n0 (dropped0 dropped), gone. */
static void swf_diags_back(struct diag_list *diags, size_t n0, size_t dropped0)
{
    if (!diags)
        return;
    while (diags->n > n0) {
        diags->n--;
        free(diags->items[diags->n].file);
        free(diags->items[diags->n].msg);
    }
    diags->dropped = dropped0;
}

/* A read in pieces: the pieces' ends, the rooms of their jobs in the
 * file's array (piece i's from at[i]), and the chunks that read the pieces
 * after the first. */
struct swf_pieces {
    size_t n;
    size_t ends[SWF_MAX_CHUNKS], at[SWF_MAX_CHUNKS + 1];
    struct swf_chunk c[SWF_MAX_CHUNKS - 1];
    atomic_int stop;
};

/* Where a read in pieces started from, to start again serially. */
struct swf_start {
    size_t diags, dropped;
    struct err err;
};

static struct swf_start swf_start_of(const struct diag_list *diags, const struct err *err)
{
    struct swf_start at = {diags ? diags->n : 0, diags ? diags->dropped : 0, {0}};
    if (err)
        at.err = *err;
    return at;
}

/* Once r has read the first piece to it->len: each later one joined in
 * file order, or read here when its chunk could not read it to the end;
 * once r stops (too many errors, as the serial read does here, or out of
 * memory), the chunks left stop within a few thousand lines, unjoined. Out
 * of memory, everything is released and the file read again serially. */
static int swf_read_rest(struct swf_reader *r, struct textfile_lines *it, struct swf_pieces *p, const char *name,
                         const char *data, size_t len, const struct swf_start *start)
{
    size_t i = 1;
    for (; i < p->n && !r->rep.stopped; i++) {
        struct swf_chunk *k = &p->c[i - 1];
        if (k->own_thread)
            pthread_join(k->thread, NULL);
        it->len = p->ends[i];
        r->room_end = p->at[i + 1];
        if (swf_chunk_ok(k)) {
            swf_join(r, k, it->line);
            it->line += k->it.line;
            it->pos = it->len;
        } else {
            swf_read_lines(r, it);
        }
        swf_chunk_release(k);
    }
    atomic_store_explicit(&p->stop, 1, memory_order_relaxed);
    for (; i < p->n; i++) {
        if (p->c[i - 1].own_thread)
            pthread_join(p->c[i - 1].thread, NULL);
        swf_chunk_release(&p->c[i - 1]);
    }
    if (r->rep.no_memory) {
        /* The chunks' names, warnings, stacks and arenas held memory that
         * the serial read never needs: with them and all read here gone, it
         * may well succeed, or say itself where memory ran out. */
        struct workload *w = r->w;
        struct diag_list *diags = r->rep.diags;
        struct err *err = r->rep.err;
        workload_release(w);
        workload_init(w);
        swf_diags_back(diags, start->diags, start->dropped);
        if (err)
            *err = start->err;
        return swf_read_serial(name, data, len, r->conv, w, diags, err);
    }
    return swf_finish(r);
}

/* Starts the chunks of pieces 2 .. n - 1 in threads of their own, and reads
 * piece 1 in this one (the caller's, or the inflating thread once done). */
static void swf_read_tail(struct swf_pieces *p, const char *name, enum swf_convention conv, const char *data,
                          struct job *jobs)
{
    for (size_t i = 1; i < p->n; i++)
        swf_chunk_prepare(&p->c[i - 1], name, conv, data, p->ends[i - 1], p->ends[i], jobs + p->at[i],
                          p->at[i + 1] - p->at[i], &p->stop);
    for (size_t i = 2; i < p->n; i++)
        swf_chunk_start(&p->c[i - 1]);
    p->c[0].started = 1;
    swf_chunk_run(&p->c[0]);
}

int swf_read_buffer_chunks(const char *name, const char *data, size_t len, enum swf_convention conv,
                           int chunks, struct workload *w, struct diag_list *diags, struct err *err)
{
    size_t n = chunks < 1 ? 1 : chunks > SWF_MAX_CHUNKS ? SWF_MAX_CHUNKS : (size_t)chunks;
    struct swf_pieces *p = n > 1 ? calloc(1, sizeof *p) : NULL;
    if (!p)
        return swf_read_serial(name, data, len, conv, w, diags, err);
    struct swf_start start = swf_start_of(diags, err);
    struct swf_reader r;
    swf_reader_init(&r, name, conv, w, diags, err, SWF_MAX_ERRORS);
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    p->n = n;
    textfile_lines_cut(&it, n, p->ends);
    /* piece i's jobs go to w's array from at[i], which no job of the pieces
     * before it reaches: one array, sized once, for all */
    p->at[0] = w->n;
    for (size_t i = 0; i < n; i++) {
        struct textfile_lines piece;
        textfile_lines_init_piece(&piece, data, i ? p->ends[i - 1] : it.pos, p->ends[i]);
        p->at[i + 1] = p->at[i] + textfile_records_bound(&piece, SWF_JOB_LINE_MIN);
    }
    workload_reserve(w, p->at[n]);
    if (w->cap < p->at[n] || p->at[n] == p->at[0]) {
        /* short of memory (the serial read grows its array as memory
         * allows), or no line to read (and maybe no array to point into) */
        free(p);
        return swf_read_serial(name, data, len, conv, w, diags, err);
    }
    atomic_init(&p->stop, 0);
    for (size_t i = 1; i < n; i++) {
        swf_chunk_prepare(&p->c[i - 1], name, conv, data, p->ends[i - 1], p->ends[i], w->jobs + p->at[i],
                          p->at[i + 1] - p->at[i], &p->stop);
        swf_chunk_start(&p->c[i - 1]);
    }
    /* the first piece here */
    it.len = p->ends[0];
    r.room_end = p->at[1];
    swf_read_lines(&r, &it);
    int rc = swf_read_rest(&r, &it, p, name, data, len, &start);
    free(p);
    return rc;
}

/* ---- a gzip'd log read while it inflates ---- */

/* The whole text in memory first, then read in pieces (swf_read_buffer_chunks). */
static int swf_read_usual(const char *path, enum swf_convention conv, int chunks, struct workload *w,
                          struct diag_list *diags, struct err *err);

/* The inflate's cost against the parse's, per byte (ISA-L and this reader
 * on HPC2N's log: 12 against 33 ms). It places the end of the first piece,
 * read here as the text arrives, so that the inflating thread, which then
 * reads the second (and starts threads for any others), ends with it. */
#define SWF_INFLATE_COST 0.36

struct swf_stream {
    struct textfile_stream *text;
    const char *name;
    enum swf_convention conv;
    const char *data;
    size_t len;
    size_t first_before; /* the first piece: the lines that start before it */
    struct job *jobs;
    struct swf_pieces p;
};

/* The end of the last whole line in data[pos, ready) (after its newline),
 * or pos when none has ended there yet: how far a reader following the
 * inflate may read. */
static size_t swf_whole_lines_end(const char *data, size_t pos, size_t ready)
{
    const char *nl = ready > pos ? memrchr(data + pos, '\n', ready - pos) : NULL;
    return nl ? (size_t)(nl - data) + 1 : pos;
}

/* The first line start at or after `before` (0 stays 0), within the first
 * `ready` bytes, or SIZE_MAX if they do not tell yet. */
static size_t swf_first_end(const char *data, size_t len, size_t ready, size_t before)
{
    if (before == 0)
        return 0;
    if (ready < before)
        return SIZE_MAX;
    const char *nl = memchr(data + before - 1, '\n', ready - (before - 1));
    return nl ? (size_t)(nl - data) + 1 : ready == len ? len : SIZE_MAX;
}

/* Run by the inflating thread once the text is whole: the pieces after the
 * first, cut and read. */
static void swf_stream_tail(void *arg, int whole)
{
    struct swf_stream *st = arg;
    if (!whole)
        return; /* swf_read_stream drops the read */
    struct swf_pieces *p = &st->p;
    p->ends[0] = swf_first_end(st->data, st->len, st->len, st->first_before);
    struct textfile_lines tail;
    textfile_lines_init_piece(&tail, st->data, p->ends[0], st->len);
    textfile_lines_cut(&tail, p->n - 1, p->ends + 1);
    /* rooms by bytes, which the array was sized for (lines are not counted:
     * that would be a pass over the text before the first job is read) */
    for (size_t i = 1; i < p->n; i++)
        p->at[i + 1] = p->at[i] + (p->ends[i] - p->ends[i - 1]) / SWF_JOB_LINE_MIN + 1;
    swf_read_tail(p, st->name, st->conv, st->data, st->jobs);
}

/* The first piece, read here as the text arrives. Returns 0, or -1 when the
 * inflate failed. */
static int swf_stream_first(struct swf_stream *st, struct swf_reader *r, struct textfile_lines *it)
{
    int failed;
    size_t ready = textfile_stream_wait(st->text, st->len < 3 ? st->len : 3, &failed);
    if (failed)
        return -1;
    textfile_lines_init(it, st->data, st->len); /* past a byte-order mark */
    size_t end = SIZE_MAX; /* the first piece's, once known */
    while (!r->rep.stopped) {
        if (end == SIZE_MAX)
            end = swf_first_end(st->data, st->len, ready, st->first_before);
        /* to the last whole line inflated, or the piece's end */
        size_t upto = end != SIZE_MAX ? end : swf_whole_lines_end(st->data, it->pos, ready);
        if (upto > it->pos) {
            it->len = upto;
            swf_read_lines(r, it);
        }
        if (end != SIZE_MAX && it->pos >= end)
            break;
        ready = textfile_stream_wait(st->text, ready + 1, &failed);
        if (failed)
            return -1;
    }
    it->len = end == SIZE_MAX ? it->pos : end;
    return 0;
}

/* swf_read's way with a gzip'd log of two pieces or more: the inflate and
 * the parse overlap. HPC2N's load on 2 processors: ~34 ms (15 inflating,
 * then 19 parsing in two pieces) -> ~22 ms (parsing as the text arrives).
 * Returns 1 when it does not apply or could not start (swf_read then reads
 * the usual way, and so words any error), else what swf_read returns. */
static int swf_read_stream(const char *path, enum swf_convention conv, int chunks, struct workload *w,
                           struct diag_list *diags, struct err *err)
{
    struct textfile_stream *text = textfile_stream_open(path);
    if (!text)
        return 1;
    size_t len = textfile_stream_len(text);
    size_t n = chunks > 0 ? (size_t)chunks : (size_t)swf_chunks_for(len);
    n = n > SWF_MAX_CHUNKS ? SWF_MAX_CHUNKS : n;
    struct swf_stream *st = n > 1 && w->n == 0 ? calloc(1, sizeof *st) : NULL;
    if (!st) {
        textfile_stream_close(text);
        return 1;
    }
    st->text = text;
    st->name = path;
    st->conv = conv;
    st->data = textfile_stream_data(text);
    st->len = len;
    double share = (SWF_INFLATE_COST * (double)(n - 1) + 1) / (double)n;
    st->first_before = (size_t)((double)len * share);
    st->first_before = st->first_before > len ? len : st->first_before;
    struct swf_pieces *p = &st->p;
    p->n = n;
    atomic_init(&p->stop, 0);
    /* the first piece's job lines start before first_before (and one
     * straddles it); the others' fit their bytes (swf_stream_tail) */
    p->at[0] = 0;
    p->at[1] = st->first_before / SWF_JOB_LINE_MIN + 2;
    size_t total = p->at[1] + (len - st->first_before) / SWF_JOB_LINE_MIN + n;
    workload_reserve(w, total);
    /* all the thread reads is set before it starts: a small log is inflated
     * before this thread runs on, and its tail read at once (a NULL array
     * there crashed CI's bench suite once in three runs) */
    st->jobs = w->jobs;
    if (w->cap < total || textfile_stream_start(text, NULL, swf_stream_tail, st) != 0) {
        textfile_stream_close(text);
        free(st);
        return 1;
    }
    struct swf_start start = swf_start_of(diags, err);
    struct swf_reader r;
    swf_reader_init(&r, path, conv, w, diags, err, SWF_MAX_ERRORS);
    r.room_end = p->at[1];
    struct textfile_lines it;
    int first = swf_stream_first(st, &r, &it);
    if (r.rep.stopped)
        atomic_store_explicit(&p->stop, 1, memory_order_relaxed);
    char *data;
    size_t got;
    if (first != 0 || textfile_stream_finish(text, &data, &got) != 0) {
        /* the inflate failed (the tail never ran): as if never begun */
        textfile_stream_close(text);
        workload_release(w);
        workload_init(w);
        swf_diags_back(diags, start.diags, start.dropped);
        if (err)
            *err = start.err;
        free(st);
        return 1;
    }
    textfile_stream_close(text);
    int rc = swf_read_rest(&r, &it, p, path, data, len, &start);
    free(st);
    free(data);
    return rc;
}

/* ---- a gzip'd log fed to a replay as it is read ---- */

/* One thread inflates the log and parses it serially as the text arrives,
 * telling a replay (models/workload.h, workload_feed) the jobs that are
 * final: read, and in arrival order, so that the read's last steps
 * (swf_finish, run by the caller once the thread is done: the sort by
 * submit, the shift of absolute submits) will neither move nor change them.
 * A job out of that order, submits that look absolute, or an error: the
 * feed breaks, and the replay runs again on the whole. */
struct swf_feed {
    struct textfile_stream *text;
    const char *path, *data;
    size_t len;
    /* the thread's workload, until it is joined: the caller's array, which
     * a replay reads below the count told, with the count, names and meta
     * of its own (the caller's struct is not written while it reads) */
    struct workload w;
    struct workload *caller;
    struct swf_reader r; /* the thread's, until it is joined */
    struct textfile_lines it;
    size_t checked; /* jobs checked for order */
    size_t told;    /* the thread's copy of told.count (it alone tells) */
    int broken;
    struct swf_start start;
    struct workload_meta head; /* w's when the first job was told, then fixed */
    struct progress jobs;      /* the jobs told final; its state a workload_feed_state */
};

static void swf_feed_tell(struct swf_feed *f, size_t told, enum workload_feed_state state)
{
    if (f->told == 0 && told > 0)
        f->head = f->r.w->meta; /* before the telling: the waiter reads it after */
    f->told = told;
    progress_tell(&f->jobs, told, (int)state);
}

/* The jobs read since the last call checked: the count still in order, or
 * f->broken set. */
static size_t swf_feed_check(struct swf_feed *f)
{
    const struct swf_reader *r = &f->r;
    const struct workload *w = r->w;
    /* swf_make_relative's test, which a later UnixStartTime would undo */
    if (r->rep.errors || (r->have_first && !(r->header_set & SWF_H_UNIX_START) &&
                          r->first_submit_s > SWF_EPOCH_GUESS_S))
        f->broken = 1;
    for (; !f->broken && f->checked < w->n; f->checked++)
        if (f->checked > 0 && !workload_in_arrival_order(&w->jobs[f->checked - 1], &w->jobs[f->checked]))
            f->broken = 1;
    return f->checked;
}

/* Reads the lines that end before `upto` and tells what is final. */
static void swf_feed_read(struct swf_feed *f, size_t upto, enum workload_feed_state state)
{
    if (upto > f->it.pos) {
        f->it.len = upto;
        swf_read_lines(&f->r, &f->it);
    }
    size_t final = swf_feed_check(f);
    if (f->broken)
        swf_feed_tell(f, f->told, WORKLOAD_FEED_BROKEN);
    else
        swf_feed_tell(f, final, state);
}

static void swf_feed_piece(void *ctx, size_t ready)
{
    struct swf_feed *f = ctx;
    if (f->broken)
        return; /* told already: the thread reads on at the end, for the replay to run again */
    if (f->it.data == NULL)
        textfile_lines_init(&f->it, f->data, f->len); /* past a byte-order mark: a piece holds 3 bytes */
    size_t upto = swf_whole_lines_end(f->data, f->it.pos, ready);
    if (upto > f->it.pos)
        swf_feed_read(f, upto, WORKLOAD_FEED_MORE);
}

static void swf_feed_end(void *ctx, int whole)
{
    struct swf_feed *f = ctx;
    if (!whole) {
        f->broken = 1;
        swf_feed_tell(f, f->told, WORKLOAD_FEED_BROKEN);
        return;
    }
    if (f->it.data == NULL) /* an empty text: no piece came */
        textfile_lines_init(&f->it, f->data, f->len);
    swf_feed_read(f, f->len, WORKLOAD_FEED_ENDED);
    /* read through (no name token is read again): while the replay runs on,
     * HPC2N's 19 MB of text were a third of its peak */
    textfile_stream_free_text(f->text);
}

/* the feed's states are told through a progress, whose "more" is 0 */
_Static_assert((int)WORKLOAD_FEED_MORE == (int)PROGRESS_MORE, "a feed's MORE is a progress's");

static size_t swf_feed_wait(void *ctx, size_t want, enum workload_feed_state *state)
{
    struct swf_feed *f = ctx;
    int st;
    size_t told = progress_wait(&f->jobs, want, &st);
    *state = (enum workload_feed_state)st;
    return told;
}

static void swf_feed_free(struct swf_feed *f)
{
    textfile_stream_close(f->text);
    progress_release(&f->jobs);
    free(f->r.kinds);
    free(f);
}

struct swf_feed *swf_feed_start(const char *path, struct workload *w, struct diag_list *diags, struct err *err,
                                struct workload_feed *feed)
{
    struct textfile_stream *text = w->n == 0 ? textfile_stream_open(path) : NULL;
    if (!text)
        return NULL;
    struct swf_feed *f = calloc(1, sizeof *f);
    size_t len = textfile_stream_len(text);
    size_t room = len / SWF_JOB_LINE_MIN + 1; /* the array must never move: sized by bytes */
    if (f)
        workload_reserve(w, room);
    if (!f || w->cap < room || progress_init(&f->jobs) != 0) {
        textfile_stream_close(text);
        free(f);
        return NULL;
    }
    f->text = text;
    f->path = path;
    f->data = textfile_stream_data(text);
    f->len = len;
    f->start = swf_start_of(diags, err);
    f->caller = w;
    f->w = *w; /* w is fresh but for its array */
    swf_reader_init(&f->r, path, SWF_REPLAY, &f->w, diags, err, SWF_MAX_ERRORS);
    f->r.room_end = w->cap;
    if (textfile_stream_start(text, swf_feed_piece, swf_feed_end, f) != 0) {
        swf_feed_free(f);
        return NULL;
    }
    *feed = (struct workload_feed){swf_feed_wait, f};
    return f;
}

int swf_feed_header(struct swf_feed *f, struct workload_meta *head)
{
    int state;
    if (progress_wait(&f->jobs, 1, &state) == 0 || state == WORKLOAD_FEED_BROKEN)
        return -1;
    *head = f->head; /* written before the first job was told, never after */
    return 0;
}

int swf_feed_finish(struct swf_feed *f, int *kept)
{
    char *data;
    size_t len;
    struct workload *w = f->caller;
    struct diag_list *diags = f->r.rep.diags;
    struct err *err = f->r.rep.err;
    *kept = 0;
    int whole = textfile_stream_finish(f->text, &data, &len) == 0;
    *w = f->w; /* the thread is done: all it read is the caller's */
    f->r.w = w;
    if (!whole) {
        /* the inflate failed: as if never begun, read the usual way */
        const char *path = f->path;
        struct swf_start start = f->start;
        swf_feed_free(f);
        workload_release(w);
        workload_init(w);
        swf_diags_back(diags, start.diags, start.dropped);
        if (err)
            *err = start.err;
        return swf_read_usual(path, SWF_REPLAY, 0, w, diags, err);
    }
    /* a feed that read to the end unbroken checked every job's order (a
     * broken one stopped checking; the whole is then sorted as usual) */
    f->r.in_order = !f->broken && f->checked == w->n;
    int rc = swf_finish(&f->r);
    *kept = rc == 0 && !f->broken && progress_state(&f->jobs) == WORKLOAD_FEED_ENDED && f->told == w->n &&
            f->head.max_nodes == w->meta.max_nodes && f->head.max_procs == w->meta.max_procs;
    swf_feed_free(f);
    free(data);
    return rc;
}

/* The bytes of address space this process has mapped, or -1 if unknown. */
static long long swf_mapped_bytes(void)
{
    int fd = open("/proc/self/statm", O_RDONLY); /* no malloc: memory may be short */
    if (fd < 0)
        return -1;
    char buf[64];
    ssize_t got = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    long long pages = 0;
    for (const char *p = buf; *p >= '0' && *p <= '9'; p++)
        pages = pages * 10 + (*p - '0');
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? pages * page : -1;
}

/* Under an address-space limit (ulimit -v), how many of n chunks fit. Each
 * thread beyond the first takes a malloc arena (glibc maps 128 MB to place
 * its 64 MB, kept after the thread ends) for its names and warnings (its
 * jobs go to the file's array); the serial read needs about twice the
 * buffer. */
static size_t swf_chunks_within_limit(size_t len, size_t n)
{
    struct rlimit lim;
    if (n < 2 || getrlimit(RLIMIT_AS, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
        return n;
    long long mapped = swf_mapped_bytes();
    if (mapped < 0 || (unsigned long long)mapped >= (unsigned long long)lim.rlim_cur)
        return 1;
    unsigned long long room = (unsigned long long)lim.rlim_cur - (unsigned long long)mapped;
    unsigned long long serial = 2ULL * len, per_chunk = 128ULL << 20;
    while (n > 1 && serial + (n - 1) * per_chunk > room)
        n--;
    return n;
}

int swf_chunks_for(size_t len)
{
    long cpus = -1;
#ifdef CPU_COUNT
    cpu_set_t set; /* the processors this process may run on */
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
#endif
    if (cpus < 1)
        cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = len / SWF_CHUNK_MIN_BYTES;
    if (cpus < 1)
        n = 1;
    else if (n > (size_t)cpus)
        n = (size_t)cpus;
    n = n < 1 ? 1 : n > SWF_MAX_CHUNKS ? SWF_MAX_CHUNKS : n;
    return (int)swf_chunks_within_limit(len, n);
}

int swf_read_buffer(const char *name, const char *data, size_t len, enum swf_convention conv,
                    struct workload *w, struct diag_list *diags, struct err *err)
{
    return swf_read_buffer_chunks(name, data, len, conv, swf_chunks_for(len), w, diags, err);
}

int swf_read_chunks(const char *path, enum swf_convention conv, int chunks, struct workload *w,
                    struct diag_list *diags, struct err *err)
{
    int rc = swf_read_stream(path, conv, chunks, w, diags, err);
    return rc != 1 ? rc : swf_read_usual(path, conv, chunks, w, diags, err);
}

static int swf_read_usual(const char *path, enum swf_convention conv, int chunks, struct workload *w,
                          struct diag_list *diags, struct err *err)
{
    int rc;
    char *data;
    size_t len;
    if (textfile_load(path, &data, &len, diags, err) != 0)
        return -1;
    rc = chunks > 0 ? swf_read_buffer_chunks(path, data, len, conv, chunks, w, diags, err)
                    : swf_read_buffer(path, data, len, conv, w, diags, err);
    free(data);
    return rc;
}

int swf_read(const char *path, enum swf_convention conv, struct workload *w, struct diag_list *diags,
             struct err *err)
{
    return swf_read_chunks(path, conv, 0, w, diags, err);
}
