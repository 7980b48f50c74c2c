/* buf: a growable byte buffer for building requests, responses and metrics
 * text. Always NUL-terminated after a successful append. An allocation
 * failure sets `oom` and later appends do nothing, so a caller can build a
 * whole text and check once at the end. The buffer owns its data.
 */
#ifndef FLEETSIM_AGENT_BUF_H
#define FLEETSIM_AGENT_BUF_H

#include <stddef.h>

struct buf {
    char *data;
    size_t len, cap;
    int oom;
};

void buf_init(struct buf *b);
void buf_release(struct buf *b);
void buf_reset(struct buf *b);
/* Return 0, or -1 when memory ran out (and then b->oom is set). */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Drops the first n bytes. */
void buf_consume(struct buf *b, size_t n);

#endif
