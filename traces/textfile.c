#include "traces/textfile.h"

#include <stdarg.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>
#include <zlib.h>

#include "sim/buffers.h"
#include "sim/input_file.h"

enum { TEXTFILE_CHUNK = 1 << 20, TEXTFILE_GZBUF = 1 << 17 };

/* zlib prefixes its messages with the path it was given; the caller's
 * message names the file already, so only the reason is kept. */
static const char *textfile_zlib_reason(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    if (strncmp(msg, "<fd:", 4) == 0) {
        const char *p = strstr(msg, ">: ");
        if (p)
            return p + 3;
    }
    return msg;
}

static int textfile_check(gzFile gz, const char *path, struct err *err)
{
    int errnum = Z_OK;
    const char *msg = gzerror(gz, &errnum);
    if (errnum == Z_OK)
        return 0;
    if (errnum == Z_ERRNO)
        return err_set(err, path, 0, 0, "cannot read '%s': %s", path, strerror(errno));
    if (errnum == Z_MEM_ERROR)
        return err_set(err, path, 0, 0, "out of memory reading '%s'", path);
    return err_set(err, path, 0, 0, "corrupt gzip data in '%s': %s", path,
                   textfile_zlib_reason(msg, path));
}

static int textfile_too_large(const char *path, uint64_t max, struct err *err)
{
    char why_big[160];
    input_file_too_large(why_big, sizeof why_big, max);
    return err_set(err, path, 0, 0, "cannot read the trace '%s': %s", path, why_big);
}

/* Grows *buf so that at least one more chunk fits. */
static int textfile_grow(char **buf, size_t *cap, size_t len)
{
    if (*cap - len > 1)
        return 0;
    if (*cap > SIZE_MAX / 2)
        return -1;
    size_t ncap = *cap ? *cap * 2 : TEXTFILE_CHUNK;
    char *p = realloc(*buf, ncap);
    if (!p)
        return -1;
    *buf = p;
    *cap = ncap;
    return 0;
}

/* zlib, streaming from fd (which gzclose closes; for "-" it is a duplicate,
 * so standard input stays open): pipes, multi-member gzip files, trailing bytes,
 * corrupt data, sizes past the limit. Its gzread is what defines the result
 * (plain input copied, members concatenated, trailing garbage ignored) and
 * its messages, so the fast path below only takes what it can prove equal. */
static int textfile_read_gz(int fd, const char *path, char **data, size_t *len, struct err *err)
{
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        return err_set(err, path, 0, 0, "out of memory reading '%s'", path);
    }
    gzbuffer(gz, TEXTFILE_GZBUF);
    uint64_t max = input_file_trace_max_bytes();
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (textfile_grow(&buf, &cap, n) != 0) {
            gzclose(gz);
            free(buf);
            return err_set(err, path, 0, 0, "out of memory reading '%s'", path);
        }
        size_t room = cap - n - 1; /* keep one byte for the terminator */
        unsigned ask = room > INT_MAX / 2 ? INT_MAX / 2 : (unsigned)room;
        if ((uint64_t)ask > max - (uint64_t)n + 1) /* n <= max here */
            ask = (unsigned)(max - (uint64_t)n + 1);
        int got = gzread(gz, buf + n, ask);
        if (got <= 0)
            break;
        n += (size_t)got;
        if ((uint64_t)n > max) { /* /dev/zero behind a pipe, a gzip bomb */
            gzclose(gz);
            free(buf);
            return textfile_too_large(path, max, err);
        }
    }
    if (textfile_check(gz, path, err) != 0) {
        gzclose(gz);
        free(buf);
        return -1;
    }
    gzclose(gz);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

/* Reads exactly want bytes of a regular file at its start. Returns 1 when
 * that is the whole file, 0 when it is not (it changed size since fstat, or
 * a read failed: the streaming path then decides and words the error). */
static int textfile_slurp(int fd, char *buf, size_t want)
{
    size_t n = 0;
    while (n < want) {
        ssize_t got = read(fd, buf + n, want - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        n += (size_t)got;
    }
    char probe;
    ssize_t got;
    do
        got = read(fd, &probe, 1);
    while (got < 0 && errno == EINTR);
    return got == 0;
}

/* One gzip member covering the whole file, inflated at once by libdeflate
 * (about 2.5 times zlib's speed on traces). The trailer's ISIZE sizes the
 * output; libdeflate checks it and the CRC, so any mismatch (a wrong ISIZE,
 * more than 4 GiB, a second member, trailing bytes, corrupt data) returns
 * NULL and zlib takes over. */
static char *textfile_inflate_whole(const unsigned char *in, size_t in_len, uint64_t max, size_t *len)
{
    if (in_len < 18)
        return NULL;
    const unsigned char *t = in + in_len - 4;
    uint64_t isize = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
    if (isize > max || isize >= SIZE_MAX)
        return NULL;
    char *out = buffers_alloc_large((size_t)isize + 1);
    struct libdeflate_decompressor *d = out ? libdeflate_alloc_decompressor() : NULL;
    size_t used = 0, got = 0;
    enum libdeflate_result rc = LIBDEFLATE_BAD_DATA;
    if (d)
        rc = libdeflate_gzip_decompress_ex(d, in, in_len, out, (size_t)isize, &used, &got);
    libdeflate_free_decompressor(d);
    if (rc != LIBDEFLATE_SUCCESS || used != in_len || got != isize) {
        free(out);
        return NULL;
    }
    out[got] = '\0';
    *len = got;
    return out;
}

int textfile_read(const char *path, char **data, size_t *len, struct err *err)
{
    *data = NULL;
    *len = 0;
    int fd = input_file_open(path, "trace", err);
    if (fd < 0)
        return -1;
    /* A regular file is read with one read() and, when gzip'd, inflated in
     * one call; a pipe, or a file too large for the limit, streams. */
    uint64_t max = input_file_trace_max_bytes();
    struct stat st;
    /* "-" may be a file already partly read (by a shell's `read`, say):
     * what is left starts at the current offset */
    off_t start = lseek(fd, 0, SEEK_CUR); /* fails on a pipe, which streams */
    if (start < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < start ||
        (uint64_t)(st.st_size - start) > max || (uint64_t)(st.st_size - start) >= SIZE_MAX)
        return textfile_read_gz(fd, path, data, len, err);
    size_t size = (size_t)(st.st_size - start);
    char *raw = buffers_alloc_large(size + 1);
    if (!raw) /* streaming needs less memory */
        return textfile_read_gz(fd, path, data, len, err);
    int whole = textfile_slurp(fd, raw, size);
    /* gzread copies input without the two magic bytes as it is */
    int gzip = size >= 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b;
    if (whole && !gzip) {
        close(fd);
        raw[size] = '\0';
        *data = raw;
        *len = size;
        return 0;
    }
    char *out = whole ? textfile_inflate_whole((const unsigned char *)raw, size, max, len) : NULL;
    free(raw);
    if (out) {
        close(fd);
        *data = out;
        return 0;
    }
    if (lseek(fd, start, SEEK_SET) != start) {
        int e = errno;
        close(fd);
        return err_set(err, path, 0, 0, "cannot read '%s': %s", path, strerror(e));
    }
    return textfile_read_gz(fd, path, data, len, err);
}

int textfile_load(const char *path, char **data, size_t *len, struct diag_list *diags,
                  struct err *err)
{
    struct err e; /* a local one: err may be NULL or set already */
    err_clear(&e);
    if (textfile_read(path, data, len, &e) == 0)
        return 0;
    diag_add(diags, DIAG_ERROR, e.file, e.line, e.col, "%s", e.msg);
    return err_set(err, e.file, e.line, e.col, "%s", e.msg);
}

const char *textfile_quote(char *buf, size_t cap, const char *s, size_t len)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == 32) {
            o += (size_t)snprintf(buf + o, cap - o, "...");
            break;
        }
        if (c >= 0x20 && c < 0x7f)
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    buf[o] = '\0';
    return buf;
}

void textfile_lines_init(struct textfile_lines *it, const char *data, size_t len)
{
    it->data = data;
    it->len = len;
    it->pos = 0;
    it->line = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        it->pos = 3;
}

void textfile_lines_init_piece(struct textfile_lines *it, const char *data, size_t start,
                               size_t end)
{
    it->data = data;
    it->len = end;
    it->pos = start;
    it->line = 0;
}

size_t textfile_lines_left(const struct textfile_lines *it)
{
    size_t n = 0, at = it->pos;
    while (at < it->len) {
        const char *nl = memchr(it->data + at, '\n', it->len - at);
        n++;
        if (!nl)
            break;
        at = (size_t)(nl - it->data) + 1;
    }
    return n;
}

size_t textfile_records_bound(const struct textfile_lines *it, size_t record_min)
{
    size_t lines = textfile_lines_left(it), most = (it->len - it->pos) / record_min + 1;
    return lines < most ? lines : most;
}

void textfile_lines_cut(const struct textfile_lines *it, size_t parts, size_t *ends)
{
    size_t at = it->pos;
    for (size_t i = 0; i + 1 < parts; i++) {
        size_t target = it->pos + (it->len - it->pos) / parts * (i + 1);
        if (target > at) { /* the first line start at or after target */
            const char *nl = memchr(it->data + target - 1, '\n', it->len - (target - 1));
            at = nl ? (size_t)(nl - it->data) + 1 : it->len;
        }
        ends[i] = at;
    }
    ends[parts - 1] = it->len;
}

int textfile_lines_next(struct textfile_lines *it, const char **line, size_t *line_len)
{
    if (it->pos >= it->len)
        return 0;
    const char *start = it->data + it->pos;
    const char *nl = memchr(start, '\n', it->len - it->pos);
    size_t n = nl ? (size_t)(nl - start) : it->len - it->pos;
    it->pos += n + (nl != NULL);
    it->line++;
    *line = start;
    *line_len = n;
    return 1;
}

void textfile_error(struct textfile_report *r, long line, long col, const char *fmt, ...)
{
    if (r->stopped)
        return;
    if (r->errors == r->max_errors) {
        diag_add(r->diags, DIAG_ERROR, r->name, line, 0, "too many errors, stopping");
        r->stopped = 1;
        return;
    }
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(r->diags, DIAG_ERROR, r->name, line, col, "%s", msg);
    err_set(r->err, r->name, line, col, "%s", msg);
    r->errors++;
}

void textfile_warn(struct textfile_report *r, long line, long col, const char *fmt, ...)
{
    char msg[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_add(r->diags, DIAG_WARNING, r->name, line, col, "%s", msg);
}

static _Thread_local int textfile_json_alloc_failed;

static void *textfile_json_malloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        textfile_json_alloc_failed = 1;
    return p;
}

static void textfile_json_hooks(void)
{
    json_set_alloc_funcs(textfile_json_malloc, free);
}

void textfile_json_watch(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, textfile_json_hooks);
    textfile_json_alloc_failed = 0;
}

int textfile_json_out_of_memory(const json_error_t *je)
{
    return textfile_json_alloc_failed || json_error_code(je) == json_error_out_of_memory;
}

void textfile_out_of_memory(struct textfile_report *r, long line)
{
    err_set(r->err, r->name, line, 0, "out of memory reading '%s'", r->name);
    r->no_memory = 1;
    r->stopped = 1;
}
