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
#include <signal.h>
#include <unistd.h>

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#include "sim/buffers.h"
#include "sim/input_file.h"
#include "sim/progress.h"

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

/* ---- one gzip member, inflated by ISA-L ---- */

/* A file that is one gzip member (gzip's magic) whose trailer gives ISIZE:
 * the bytes it will inflate to, when that is the whole story (checked as it
 * inflates). 0 when it is no such file or too large for the limit. */
static int textfile_member_size(const unsigned char *in, size_t in_len, uint64_t max, size_t *isize)
{
    if (in_len < 18 || in_len > UINT32_MAX || in[0] != 0x1f || in[1] != 0x8b)
        return 0; /* ISA-L counts its input in 32 bits */
    const unsigned char *t = in + in_len - 4;
    uint64_t n = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
    if (n > max || n >= SIZE_MAX)
        return 0;
    *isize = (size_t)n;
    return 1;
}

/* Inflates in[0, in_len), which must be exactly one gzip member of out_len
 * bytes (ISA-L checks the header and the CRC; the length and the input's end
 * are checked here), into out, `piece` bytes at a time, telling `done` after
 * each (NULL: nobody). Returns 0, or -1 for anything else: a wrong ISIZE,
 * more than 4 GiB, a second member, trailing bytes, corrupt data, for which
 * zlib takes over. ISA-L inflates HPC2N's log in 12 ms where libdeflate took
 * 15 and zlib 33, and, unlike libdeflate, in pieces at the same speed. */
static int textfile_inflate_member(const unsigned char *in, size_t in_len, char *out, size_t out_len, size_t piece,
                                   void (*done)(void *ctx, size_t n), void *ctx)
{
    struct inflate_state st;
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;
    st.next_in = (uint8_t *)(uintptr_t)in; /* ISA-L only reads it */
    st.avail_in = (uint32_t)in_len;
    st.next_out = (uint8_t *)out;
    size_t made = 0;
    while (st.block_state != ISAL_BLOCK_FINISH) {
        uint32_t in_before = st.avail_in;
        size_t room = out_len - made < piece ? out_len - made : piece;
        st.avail_out = (uint32_t)room;
        if (isal_inflate(&st) != ISAL_DECOMP_OK)
            return -1;
        size_t got = room - st.avail_out;
        if (got == 0 && st.avail_in == in_before && st.block_state != ISAL_BLOCK_FINISH)
            return -1; /* stuck: the input ends early, or ISIZE is too small */
        made += got;
        if (got && done)
            done(ctx, made);
    }
    return made == out_len && st.avail_in == 0 ? 0 : -1;
}

/* The whole member at once (textfile_read): the output, NUL-terminated, or
 * NULL when zlib must take over. */
static char *textfile_inflate_whole(const unsigned char *in, size_t in_len, uint64_t max, size_t *len)
{
    size_t isize;
    if (!textfile_member_size(in, in_len, max, &isize))
        return NULL;
    char *out = buffers_alloc_large(isize + 1);
    if (!out || textfile_inflate_member(in, in_len, out, isize, isize, NULL, NULL) != 0) {
        free(out);
        return NULL;
    }
    out[isize] = '\0';
    *len = isize;
    return out;
}

/* A regular file of at most max bytes from its offset `start` on, read with
 * one read() (size + 1 bytes, the last free for a NUL), or NULL when it
 * must stream instead (not a regular file, too large, no memory, changed
 * while read): the caller then seeks back to start. */
static char *textfile_read_whole(int fd, off_t start, uint64_t max, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < start ||
        (uint64_t)(st.st_size - start) > max || (uint64_t)(st.st_size - start) >= SIZE_MAX)
        return NULL;
    *size = (size_t)(st.st_size - start);
    char *raw = buffers_alloc_large(*size + 1);
    if (raw && !textfile_slurp(fd, raw, *size)) {
        free(raw);
        return NULL;
    }
    return raw;
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
    /* "-" may be a file already partly read (by a shell's `read`, say):
     * what is left starts at the current offset */
    off_t start = lseek(fd, 0, SEEK_CUR); /* fails on a pipe, which streams */
    size_t size = 0;
    char *raw = start < 0 ? NULL : textfile_read_whole(fd, start, max, &size);
    /* gzread copies input without the two magic bytes as it is */
    int gzip = raw && size >= 2 && (unsigned char)raw[0] == 0x1f && (unsigned char)raw[1] == 0x8b;
    if (raw && !gzip) {
        close(fd);
        raw[size] = '\0';
        *data = raw;
        *len = size;
        return 0;
    }
    char *out = raw ? textfile_inflate_whole((const unsigned char *)raw, size, max, len) : NULL;
    free(raw);
    if (out) {
        close(fd);
        *data = out;
        return 0;
    }
    if (start >= 0 && lseek(fd, start, SEEK_SET) != start) {
        int e = errno;
        close(fd);
        return err_set(err, path, 0, 0, "cannot read '%s': %s", path, strerror(e));
    }
    return textfile_read_gz(fd, path, data, len, err);
}

/* ---- a gzip file inflated by a thread while a reader follows ---- */

/* What the thread publishes at a time: the reader's first lines wait for
 * this much (0.2 ms of inflating), and the lock is taken ~80 times for
 * HPC2N's 19 MB. */
enum { TEXTFILE_STREAM_PIECE = 256 << 10 };

enum textfile_stream_state { TEXTFILE_STREAM_RUNNING = PROGRESS_MORE, TEXTFILE_STREAM_DONE, TEXTFILE_STREAM_FAILED };

struct textfile_stream {
    unsigned char *raw; /* the file as read */
    size_t raw_len;
    char *data; /* its text: len bytes and a NUL, owned here until finish */
    size_t len;
    void (*each)(void *ctx, size_t ready);
    void (*then)(void *ctx, int whole);
    void *ctx;
    pthread_t thread;
    int started, joined;
    struct progress inflated; /* bytes of text, and the state */
};

static void textfile_stream_inflated(void *ctx, size_t n)
{
    struct textfile_stream *s = ctx;
    progress_tell(&s->inflated, n, TEXTFILE_STREAM_RUNNING);
    if (s->each)
        s->each(s->ctx, n);
}

static void *textfile_stream_run(void *arg)
{
    struct textfile_stream *s = arg;
    int rc = textfile_inflate_member(s->raw, s->raw_len, s->data, s->len, TEXTFILE_STREAM_PIECE,
                                     textfile_stream_inflated, s);
    free(s->raw); /* read through: 3 MB of HPC2N's peak */
    s->raw = NULL;
    progress_tell(&s->inflated, rc == 0 ? s->len : 0, rc == 0 ? TEXTFILE_STREAM_DONE : TEXTFILE_STREAM_FAILED);
    if (s->then)
        s->then(s->ctx, rc == 0);
    return NULL;
}

struct textfile_stream *textfile_stream_open(const char *path)
{
    /* only a regular file, which the usual read can open again: not "-",
     * not a pipe whose bytes this would take */
    const char *kind;
    if (strcmp(path, "-") == 0 || input_file_is_regular(path, &kind) != 1)
        return NULL;
    struct err ignored = {0};
    int fd = input_file_open(path, "trace", &ignored);
    if (fd < 0)
        return NULL;
    size_t raw_len, isize;
    unsigned char *raw = (unsigned char *)textfile_read_whole(fd, 0, input_file_trace_max_bytes(), &raw_len);
    close(fd);
    struct textfile_stream *s = NULL;
    if (!raw || !textfile_member_size(raw, raw_len, input_file_trace_max_bytes(), &isize) ||
        !(s = calloc(1, sizeof *s)) || !(s->data = buffers_alloc_large(isize + 1)) ||
        progress_init(&s->inflated) != 0) {
        free(raw);
        if (s)
            free(s->data);
        free(s);
        return NULL;
    }
    s->raw = raw;
    s->raw_len = raw_len;
    s->len = isize;
    s->data[isize] = '\0';
    return s;
}

size_t textfile_stream_len(const struct textfile_stream *s)
{
    return s->len;
}

const char *textfile_stream_data(const struct textfile_stream *s)
{
    return s->data;
}

int textfile_thread_start(pthread_t *thread, size_t stack, void *(*run)(void *), void *arg)
{
    /* the faults its own code raises stay unblocked, so that a crash there
     * is reported (a handler runs) as anywhere; other signals stay with
     * the threads that were there to take them */
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    sigset_t mask, old;
    sigfillset(&mask);
    for (size_t k = 0; k < sizeof faults / sizeof *faults; k++)
        sigdelset(&mask, faults[k]);
    pthread_attr_t attr;
    int have_attr = stack && pthread_attr_init(&attr) == 0;
    if (have_attr)
        pthread_attr_setstacksize(&attr, stack); /* refused: the default */
    pthread_sigmask(SIG_SETMASK, &mask, &old);
    int rc = pthread_create(thread, have_attr ? &attr : NULL, run, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (have_attr)
        pthread_attr_destroy(&attr);
    return rc == 0 ? 0 : -1;
}

int textfile_stream_start(struct textfile_stream *s, void (*each)(void *ctx, size_t ready),
                          void (*then)(void *ctx, int whole), void *ctx)
{
    s->each = each;
    s->then = then;
    s->ctx = ctx;
    s->started = textfile_thread_start(&s->thread, 0, textfile_stream_run, s) == 0;
    return s->started ? 0 : -1;
}

size_t textfile_stream_wait(struct textfile_stream *s, size_t want, int *failed)
{
    int state;
    size_t ready = progress_wait(&s->inflated, want, &state);
    *failed = state == TEXTFILE_STREAM_FAILED;
    return ready;
}

void textfile_stream_free_text(struct textfile_stream *s)
{
    free(s->data);
    s->data = NULL;
}

int textfile_stream_finish(struct textfile_stream *s, char **data, size_t *len)
{
    if (s->started && !s->joined) {
        pthread_join(s->thread, NULL);
        s->joined = 1;
    }
    if (!s->started || progress_state(&s->inflated) != TEXTFILE_STREAM_DONE)
        return -1;
    *data = s->data;
    *len = s->len;
    s->data = NULL;
    return 0;
}

void textfile_stream_close(struct textfile_stream *s)
{
    if (!s)
        return;
    if (s->started && !s->joined)
        pthread_join(s->thread, NULL);
    progress_release(&s->inflated);
    free(s->raw);
    free(s->data);
    free(s);
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
