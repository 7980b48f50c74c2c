/* err: how library code reports problems without printing or exiting.
 *
 * A failing call fills a caller-provided `struct err` (the first error wins:
 * later calls to err_set on an already-set err are ignored, so the root cause
 * survives) and returns a non-zero status. Diagnostics that do not stop the
 * work (warnings, or errors collected while reading on to find more) go into a
 * `struct diag_list`, which the command-line layer prints.
 *
 * Positions are 1-based; line or column 0 means "not known". Messages are
 * lowercase, problem first, culprit in quotes, without the position prefix:
 * err_format() and diag_format() build "file:line:col: error: message".
 */
#ifndef FLEETSIM_SIM_ERR_H
#define FLEETSIM_SIM_ERR_H

#include <stdarg.h>
#include <stddef.h>

enum { ERR_MSG_MAX = 512, ERR_FILE_MAX = 256 };

struct err {
    int set;
    char file[ERR_FILE_MAX];
    long line;
    long col;
    char msg[ERR_MSG_MAX];
};

enum diag_level { DIAG_WARNING, DIAG_ERROR };

struct diag {
    enum diag_level level;
    long line;
    long col;
    char *file;
    char *msg;
};

/* A growable list; `limit` (0 = none) caps what is stored, `dropped` counts the
 * rest so a million-line bad file cannot exhaust memory. */
struct diag_list {
    struct diag *items;
    size_t n, cap;
    size_t limit;
    size_t dropped;
};

void err_clear(struct err *e);
/* Sets the error if it is not set yet. file may be NULL. Returns -1 so that
 * callers can write `return err_set(...)`. */
int err_set(struct err *e, const char *file, long line, long col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int err_setv(struct err *e, const char *file, long line, long col, const char *fmt, va_list ap)
    __attribute__((format(printf, 5, 0)));
/* "file:line:col: error: msg" (parts that are unknown are left out). */
void err_format(const struct err *e, char *buf, size_t len);

void diag_list_init(struct diag_list *d, size_t limit);
void diag_list_release(struct diag_list *d);
void diag_add(struct diag_list *d, enum diag_level level, const char *file, long line, long col,
              const char *fmt, ...) __attribute__((format(printf, 6, 7)));
size_t diag_count(const struct diag_list *d, enum diag_level level);
void diag_format(const struct diag *g, char *buf, size_t len);

#endif
