#include "agent/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static enum log_level min_level = LOGL_INFO;

void log_set_level(enum log_level level)
{
    min_level = level;
}

int log_parse_level(const char *text, enum log_level *level)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(text, names[i]) == 0) {
            *level = (enum log_level)i;
            return 0;
        }
    return -1;
}

const char *log_quote(char *out, size_t len, const char *s)
{
    size_t o = 0;
    if (len < 3) {
        if (len)
            out[0] = '\0';
        return out;
    }
    out[o++] = '"';
    for (; s && *s && o + 3 < len; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (c < 0x20) {
            out[o++] = '?';
        } else {
            out[o++] = (char)c;
        }
    }
    out[o++] = '"';
    out[o] = '\0';
    return out;
}

void log_write(enum log_level level, const char *msg, const char *fields, ...)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    if (level < min_level)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[40];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    char line[2048];
    char q[512];
    int n = snprintf(line, sizeof line, "ts=%s.%06ldZ level=%s msg=%s", when, ts.tv_nsec / 1000,
                     names[level], log_quote(q, sizeof q, msg));
    if (n < 0)
        return;
    if (fields && *fields && (size_t)n < sizeof line - 1) {
        line[n++] = ' ';
        va_list ap;
        va_start(ap, fields);
        int m = vsnprintf(line + n, sizeof line - (size_t)n, fields, ap);
        va_end(ap);
        if (m > 0)
            n += m;
        if ((size_t)n >= sizeof line)
            n = (int)sizeof line - 1;
    }
    line[n] = '\0';
    fprintf(stderr, "%s\n", line);
}
