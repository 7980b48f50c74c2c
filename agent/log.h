/* log: the daemon's structured log, one logfmt line per event on stderr
 * (journald adds its own metadata under systemd):
 *
 *   ts=2025-01-02T03:04:05.678901Z level=info msg="job started" job=12 gpus=2
 *
 * `msg` is a fixed lowercase phrase (greppable); variable facts go in
 * key=value fields, built by the caller's format. Values that may hold
 * spaces or quotes are passed through log_quote(). Only agent/ logs.
 */
#ifndef FLEETSIM_AGENT_LOG_H
#define FLEETSIM_AGENT_LOG_H

#include <stddef.h>

enum log_level { LOGL_DEBUG = 0, LOGL_INFO = 1, LOGL_WARN = 2, LOGL_ERROR = 3 };

void log_set_level(enum log_level level);
/* "debug", "info", "warn", "error" -> *level; -1 otherwise. */
int log_parse_level(const char *text, enum log_level *level);
/* fields: a printf format for the key=value part (may be NULL). */
void log_write(enum log_level level, const char *msg, const char *fields, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes s as a logfmt value ("..." with \" \\ \n escaped) into out. */
const char *log_quote(char *out, size_t len, const char *s);

#endif
