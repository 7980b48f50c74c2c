#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

void cli_print_diags(const struct diag_list *d, size_t max_warnings, int quiet)
{
    size_t shown = 0, hidden = d->dropped;
    char line[ERR_MSG_MAX + ERR_FILE_MAX + 64];
    for (size_t i = 0; i < d->n; i++) {
        const struct diag *g = &d->items[i];
        if (g->level == DIAG_WARNING && (quiet || shown >= max_warnings)) {
            hidden++;
            continue;
        }
        if (g->level == DIAG_WARNING)
            shown++;
        diag_format(g, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    if (hidden && !quiet)
        fprintf(stderr, "fleetsim: %zu more warnings not shown\n", hidden);
}

void cli_print_err(const struct err *e)
{
    char line[ERR_MSG_MAX + ERR_FILE_MAX + 64];
    if (e->file[0]) {
        err_format(e, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    } else {
        fprintf(stderr, "fleetsim: error: %s\n", e->msg);
    }
}

static void vreport(const char *level, const char *fmt, va_list ap)
{
    fprintf(stderr, "fleetsim: %s: ", level);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
}

void cli_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning", fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
    fprintf(stderr, "try 'fleetsim %s --help'\n", cmd);
    return CLI_USAGE;
}

int cli_parse_int(const char *option, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end) {
        cli_error("option '%s' needs an integer, not '%s'", option, text);
        return -1;
    }
    if (v < lo || v > hi) {
        cli_error("option '%s' is %lld, expected %lld to %lld", option, v, (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}
