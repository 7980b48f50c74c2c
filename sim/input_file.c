#include "sim/input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The settings of the process (the CLI sets them from its options). */
static uint64_t input_file_trace_max = INPUT_FILE_TRACE_MAX_DEFAULT;
static uint64_t input_file_small_max = INPUT_FILE_SMALL_MAX_DEFAULT;
static int input_file_pipe_wait_s = INPUT_FILE_WAIT_S;
static const char *input_file_size_hint, *input_file_wait_hint;

void input_file_set_pipe_wait_s(int seconds)
{
    input_file_pipe_wait_s = seconds > 0 ? seconds : INPUT_FILE_WAIT_S;
}

uint64_t input_file_trace_max_bytes(void)
{
    return input_file_trace_max;
}

uint64_t input_file_small_max_bytes(void)
{
    return input_file_small_max;
}

void input_file_set_trace_max(uint64_t bytes)
{
    input_file_trace_max = bytes ? bytes : INPUT_FILE_TRACE_MAX_DEFAULT;
}

void input_file_set_small_max(uint64_t bytes)
{
    input_file_small_max = bytes ? bytes : INPUT_FILE_SMALL_MAX_DEFAULT;
}

void input_file_set_hints(const char *size_hint, const char *wait_hint)
{
    input_file_size_hint = size_hint;
    input_file_wait_hint = wait_hint;
}

void input_file_too_large(char *buf, size_t len, uint64_t limit_bytes)
{
    char lim[32];
    input_file_format_size(lim, sizeof lim, limit_bytes);
    snprintf(buf, len, "larger than %s (the limit%s%s)", lim, input_file_size_hint ? "; " : "",
             input_file_size_hint ? input_file_size_hint : "");
}

void input_file_format_size(char *buf, size_t len, uint64_t bytes)
{
    if (bytes >= ((uint64_t)1 << 30) && bytes % ((uint64_t)1 << 30) == 0)
        snprintf(buf, len, "%llu GiB", (unsigned long long)(bytes >> 30));
    else if (bytes >= ((uint64_t)1 << 20) && bytes % ((uint64_t)1 << 20) == 0)
        snprintf(buf, len, "%llu MiB", (unsigned long long)(bytes >> 20));
    else
        snprintf(buf, len, "%llu bytes", (unsigned long long)bytes);
}

static const char *input_file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a folder";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISFIFO(m))
        return "a pipe";
    return "not a regular file";
}

int input_file_is_regular(const char *path, const char **kind)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    *kind = S_ISREG(st.st_mode) ? NULL : input_file_kind(st.st_mode);
    return S_ISREG(st.st_mode);
}

/* Waits until fd has data (or its writer closed it) for INPUT_FILE_WAIT_S. */
static int input_file_wait(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    int got;
    do
        got = poll(&p, 1, input_file_pipe_wait_s * 1000);
    while (got < 0 && errno == EINTR);
    return got > 0 ? 0 : -1;
}

int input_file_open(const char *path, const char *what, struct err *err)
{
    int fd;
    if (strcmp(path, "-") == 0) {
        fd = dup(STDIN_FILENO);
        if (fd < 0)
            return err_set(err, path, 0, 0, "cannot read the %s: %s", what, strerror(errno));
        return fd;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return err_set(err, path, 0, 0, "cannot read the %s '%s': %s", what, path, strerror(errno));
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
        return err_set(err, path, 0, 0, "cannot read the %s '%s': it is %s, not a regular file", what, path,
                       input_file_kind(st.st_mode));
    if (S_ISREG(st.st_mode)) {
        fd = open(path, O_RDONLY);
        if (fd < 0)
            return err_set(err, path, 0, 0, "cannot read the %s '%s': %s", what, path, strerror(errno));
        return fd;
    }
    /* A FIFO: opening blocks until a writer comes, so open without waiting
     * and wait (bounded) for the first data or the writer's end. */
    fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return err_set(err, path, 0, 0, "cannot read the %s '%s': %s", what, path, strerror(errno));
    if (input_file_wait(fd) != 0) {
        close(fd);
        return err_set(err, path, 0, 0, "cannot read the %s '%s': a pipe with no data after %d s%s%s%s", what, path,
                       input_file_pipe_wait_s, input_file_wait_hint ? " (" : "",
                       input_file_wait_hint ? input_file_wait_hint : "", input_file_wait_hint ? ")" : "");
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

int input_file_read(const char *path, const char *what, size_t max_bytes, char **data, size_t *len,
                    struct err *err)
{
    *data = NULL;
    *len = 0;
    int fd = input_file_open(path, what, err);
    if (fd < 0)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    const char *why = buf ? NULL : "out of memory";
    int too_big = 0;
    while (!why) {
        if (cap - n < 2) {
            if (cap > max_bytes) {
                too_big = 1;
                break;
            }
            char *more = realloc(buf, cap * 2);
            if (!more) {
                why = "out of memory";
                break;
            }
            buf = more;
            cap *= 2;
        }
        ssize_t got = read(fd, buf + n, cap - n - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            why = strerror(errno);
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > max_bytes) {
            too_big = 1;
            break;
        }
    }
    close(fd);
    if (too_big || why) {
        free(buf);
        if (too_big) {
            char why_big[160];
            input_file_too_large(why_big, sizeof why_big, max_bytes);
            return err_set(err, path, 0, 0, "cannot read the %s '%s': %s", what, path, why_big);
        }
        return err_set(err, path, 0, 0, "cannot read the %s '%s': %s", what, path, why);
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}
