/* textfile: reading a whole trace file into memory, plain or gzip-compressed,
 * and walking it line by line.
 *
 * A regular file is read with one read(); if it is one gzip member, it is
 * inflated in one ISA-L call sized by the member's trailer. Anything
 * else (a pipe, several members, trailing bytes, a wrong trailer, corrupt
 * data, more than the size limit) streams through zlib's gzread, which
 * defines the result and the messages: both paths give the same bytes.
 *
 * Trace readers parse from memory so that the same code serves files, tests
 * and fuzzers (the *_read_buffer functions). The buffer returned by
 * textfile_read is malloc'd, owned by the caller, and NUL-terminated one byte
 * past `len` for convenience; it may itself contain NUL bytes, which is why
 * every consumer goes by `len`.
 */
#ifndef FLEETSIM_TRACES_TEXTFILE_H
#define FLEETSIM_TRACES_TEXTFILE_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>

#include "sim/err.h"

/* Reads path ("-" = standard input). A corrupt gzip stream fails with
 * "corrupt gzip data in 'FILE': <zlib's reason>". Returns 0 or -1. */
int textfile_read(const char *path, char **data, size_t *len, struct err *err);
/* The same, also recording a failure in diags, as the readers report
 * everything there. */
int textfile_load(const char *path, char **data, size_t *len, struct diag_list *diags,
                  struct err *err);

/* Starts a reader's helper thread: run(arg), with a stack of `stack` bytes
 * (0: the default), every signal but a fault blocked in it. 0 or -1. */
int textfile_thread_start(pthread_t *thread, size_t stack, void *(*run)(void *), void *arg);
/* A regular file that is one gzip member, inflated by a thread of its own
 * while a reader parses what is inflated so far (the SWF reader: HPC2N's
 * inflate, 12 ms, then overlaps its parse). _open reads the file and sizes
 * the text by the member's trailer; NULL when the file is not such a one
 * (or memory or the size limit says no): textfile_read then reads it the
 * usual way, which also words any error. _start starts the thread, which
 * calls each(ctx, ready) (if not NULL) after each piece it inflates, and
 * then(ctx, whole) at the end, whole 1 when the text is whole and checked;
 * -1 if it could not start. _wait blocks until at least `want` bytes are
 * inflated or the thread has ended, and returns how many are, with
 * *failed set when the inflate failed (a wrong trailer, several members,
 * trailing bytes, corrupt data: textfile_read's zlib then defines the
 * result). _finish joins the thread (then() included) and hands over the
 * text, NUL-terminated, to be freed by the caller (NULL once freed), or -1
 * when the inflate failed. _free_text, from the thread's callbacks alone,
 * frees the text once read through. _close frees what is left. */
struct textfile_stream;
struct textfile_stream *textfile_stream_open(const char *path);
size_t textfile_stream_len(const struct textfile_stream *s);
const char *textfile_stream_data(const struct textfile_stream *s);
int textfile_stream_start(struct textfile_stream *s, void (*each)(void *ctx, size_t ready),
                          void (*then)(void *ctx, int whole), void *ctx);
size_t textfile_stream_wait(struct textfile_stream *s, size_t want, int *failed);
int textfile_stream_finish(struct textfile_stream *s, char **data, size_t *len);
void textfile_stream_free_text(struct textfile_stream *s);
void textfile_stream_close(struct textfile_stream *s);

/* Copies up to 32 bytes of s for quoting in a message; bytes that are not
 * printable ASCII become \xNN, so a message never carries binary garbage to
 * a terminal. cap of 140 holds the worst case. Returns buf. */
const char *textfile_quote(char *buf, size_t cap, const char *s, size_t len);
enum { TEXTFILE_QUOTE_CAP = 140 };

/* Where a reader reports: errors and warnings go to diags (messages are
 * "name:line:col: level: msg"), the first error also to err. After
 * max_errors errors, reading stops with "too many errors, stopping". */
struct textfile_report {
    const char *name;
    struct diag_list *diags;
    struct err *err;
    size_t errors, max_errors;
    int stopped;   /* too many errors, or out of memory */
    int no_memory;
};

void textfile_error(struct textfile_report *r, long line, long col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void textfile_warn(struct textfile_report *r, long line, long col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void textfile_out_of_memory(struct textfile_report *r, long line);
/* jansson 2.14's decoder, when its buffers cannot grow, reports a syntax
 * error ("invalid token", or no message at all). Call textfile_json_watch()
 * before a decode; after a failed one, textfile_json_out_of_memory() says
 * whether an allocation of it failed (this thread's, since the watch), so
 * the input is not blamed. The watch routes jansson's allocations through
 * malloc, noting failures (json_set_alloc_funcs, once per process). */
void textfile_json_watch(void);
int textfile_json_out_of_memory(const json_error_t *je);

/* Line cursor over a buffer: lines end at '\n' (not included); the last line
 * may lack it. A UTF-8 byte-order mark at the very start is skipped, since
 * editors on some systems add one. */
struct textfile_lines {
    const char *data;
    size_t len, pos;
    long line; /* 1-based number of the line last returned */
};

void textfile_lines_init(struct textfile_lines *it, const char *data, size_t len);
/* Returns 1 and the next line, or 0 at the end. */
int textfile_lines_next(struct textfile_lines *it, const char **line, size_t *line_len);
/* For reading a buffer in pieces in parallel. _cut: the ends of `parts`
 * pieces of about equal size of what is left to the cursor, each ending at a
 * line's end (the last at the buffer's); a piece may be empty. _init_piece:
 * a cursor over [start, end) of data, start a line's, its lines counted from
 * 1 and no byte-order mark skipped (that belongs to the file's start). */
void textfile_lines_cut(const struct textfile_lines *it, size_t parts, size_t *ends);
/* The lines left to the cursor, up to its len. */
size_t textfile_lines_left(const struct textfile_lines *it);
/* How many records a reader of one record a line at most may push from
 * the cursor on, to size its array once: the lines left, but no more than
 * one per record_min bytes (at least 1), the format's shortest record
 * without its newline (the last line may lack one), so that a flood of
 * empty lines sizes nothing past a few times the text. TEXTFILE_RECORD_MIN serves
 * formats whose records are all longer (JSONL, sacct), where the bound
 * is a hint (their arrays grow past it); SWF's job line can be 9 bytes
 * and its read in chunks needs a true bound (traces/swf.c). */
#define TEXTFILE_RECORD_MIN 16
size_t textfile_records_bound(const struct textfile_lines *it, size_t record_min);
void textfile_lines_init_piece(struct textfile_lines *it, const char *data, size_t start,
                               size_t end);

#endif
