#include "sim/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void err_clear(struct err *e)
{
    memset(e, 0, sizeof *e);
}

int err_setv(struct err *e, const char *file, long line, long col, const char *fmt, va_list ap)
{
    if (!e || e->set)
        return -1;
    e->set = 1;
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    e->line = line;
    e->col = col;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    return -1;
}

int err_set(struct err *e, const char *file, long line, long col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_setv(e, file, line, col, fmt, ap);
    va_end(ap);
    return -1;
}

static void format_position(char *buf, size_t len, const char *file, long line, long col,
                            const char *level, const char *msg)
{
    if (file && *file && line > 0 && col > 0)
        snprintf(buf, len, "%s:%ld:%ld: %s: %s", file, line, col, level, msg);
    else if (file && *file && line > 0)
        snprintf(buf, len, "%s:%ld: %s: %s", file, line, level, msg);
    else if (file && *file)
        snprintf(buf, len, "%s: %s: %s", file, level, msg);
    else
        snprintf(buf, len, "%s: %s", level, msg);
}

void err_format(const struct err *e, char *buf, size_t len)
{
    format_position(buf, len, e->file, e->line, e->col, "error", e->msg);
}

void diag_list_init(struct diag_list *d, size_t limit)
{
    memset(d, 0, sizeof *d);
    d->limit = limit;
}

void diag_list_release(struct diag_list *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        free(d->items[i].file);
        free(d->items[i].msg);
    }
    free(d->items);
    memset(d, 0, sizeof *d);
}

static char *dup_or_null(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

void diag_add(struct diag_list *d, enum diag_level level, const char *file, long line, long col,
              const char *fmt, ...)
{
    if (!d)
        return;
    if (d->limit && d->n >= d->limit) {
        d->dropped++;
        return;
    }
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        struct diag *items = realloc(d->items, cap * sizeof *items);
        if (!items) {
            d->dropped++;
            return;
        }
        d->items = items;
        d->cap = cap;
    }
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct diag *g = &d->items[d->n];
    g->level = level;
    g->line = line;
    g->col = col;
    g->file = dup_or_null(file);
    g->msg = dup_or_null(msg);
    if (!g->msg) {
        free(g->file);
        d->dropped++;
        return;
    }
    d->n++;
}

size_t diag_count(const struct diag_list *d, enum diag_level level)
{
    size_t k = 0;
    for (size_t i = 0; i < d->n; i++)
        k += d->items[i].level == level;
    return k;
}

void diag_format(const struct diag *g, char *buf, size_t len)
{
    format_position(buf, len, g->file, g->line, g->col,
                    g->level == DIAG_ERROR ? "error" : "warning", g->msg);
}
