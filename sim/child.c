#include "sim/child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads what one read gives and appends it to buf (kept *len bytes), or
 * hands it to sink. Returns 1 to go on reading, 0 at end of file, -1 when
 * the sink refused it. */
static int drain(int fd, char *buf, size_t cap, size_t *len, child_sink_fn sink, void *ctx)
{
    char chunk[65536];
    ssize_t got = read(fd, chunk, sizeof chunk);
    if (got < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (got == 0)
        return 0;
    if (sink)
        return sink(ctx, chunk, (size_t)got) == 0 ? 1 : -1;
    size_t take = (size_t)got;
    if (take > cap - 1 - *len)
        take = cap - 1 - *len;
    memcpy(buf + *len, chunk, take);
    *len += take;
    buf[*len] = '\0';
    return 1;
}

void child_run(char *const argv[], const char *dir, int timeout_s, int split_stderr, struct child_result *cr)
{
    child_run_ms(argv, dir, timeout_s * 1000, split_stderr, NULL, NULL, cr);
}

void child_run_ms(char *const argv[], const char *dir, int timeout_ms, int split_stderr, child_sink_fn sink, void *ctx,
                  struct child_result *cr)
{
    memset(cr, 0, sizeof *cr);
    int out[2], err[2] = {-1, -1};
    if (pipe(out) != 0)
        return;
    if (split_stderr && pipe(err) != 0) {
        close(out[0]);
        close(out[1]);
        return;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(out[0]);
        close(out[1]);
        if (split_stderr) {
            close(err[0]);
            close(err[1]);
        }
        return;
    }
    if (pid == 0) {
        /* The child: its own process group, so a timeout can end all of it. */
        setpgid(0, 0);
#ifdef __linux__
        /* and it dies with its caller: a tool the caller no longer waits for
         * must not act later. A SIGKILLed agent's `scontrol update` would
         * otherwise land after the next agent read Slurm's queue and pinned
         * the job itself: one decision carried out twice. (The signal
         * follows the forking thread, which waits here for the child's end.)
         * getppid: the caller may have died before prctl. Only this
         * process gets the signal: what it forks without exec (a wrapper
         * script's own children) lives on. */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* best effort: without it, as before */
        if (getppid() != parent)
            _exit(CHILD_EXIT_NO_EXEC);
#else
        (void)parent;
#endif
        /* a host that blocks signals (the agent reads them from a signalfd)
         * must not pass that mask on to what it runs */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
        dup2(out[1], STDOUT_FILENO);
        dup2(split_stderr ? err[1] : out[1], STDERR_FILENO);
        close(out[0]);
        close(out[1]);
        if (split_stderr) {
            close(err[0]);
            close(err[1]);
        }
        if (dir && chdir(dir) != 0)
            _exit(CHILD_EXIT_NO_EXEC);
        execvp(argv[0], argv);
        _exit(CHILD_EXIT_NO_EXEC);
    }
    cr->started = 1;
    close(out[1]);
    if (split_stderr)
        close(err[1]);
    size_t kept_out = 0, kept_err = 0;
    int64_t deadline = now_ms() + timeout_ms;
    int open_out = 1, open_err = split_stderr;
    while (open_out || open_err) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            cr->timed_out = 1;
            break;
        }
        struct pollfd p[2];
        nfds_t n = 0;
        if (open_out)
            p[n++] = (struct pollfd){.fd = out[0], .events = POLLIN};
        if (open_err)
            p[n++] = (struct pollfd){.fd = err[0], .events = POLLIN};
        int rc = poll(p, n, (int)(left > 1000 ? 1000 : left));
        if (rc < 0 && errno != EINTR)
            break;
        if (rc <= 0)
            continue;
        for (nfds_t i = 0; i < n; i++) {
            if (!p[i].revents)
                continue;
            if (p[i].fd == out[0])
                open_out = drain(out[0], cr->out, sizeof cr->out, &kept_out, sink, ctx);
            else
                open_err = drain(err[0], cr->err, sizeof cr->err, &kept_err, NULL, NULL);
        }
        if (open_out < 0) {
            cr->sink_failed = 1;
            break;
        }
    }
    close(out[0]);
    if (split_stderr)
        close(err[0]);
    /* Output closed: wait for the exit, still within the deadline. */
    while (!cr->timed_out && !cr->sink_failed) {
        pid_t w = waitpid(pid, &cr->status, WNOHANG);
        if (w == pid)
            return;
        if (w < 0 && errno != EINTR) {
            cr->status = CHILD_EXIT_NO_EXEC << 8;
            return;
        }
        if (now_ms() >= deadline) {
            cr->timed_out = 1;
            break;
        }
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &cr->status, 0) < 0 && errno == EINTR) {
    }
}

int child_in_path(const char *name)
{
    struct stat st;
    if (strchr(name, '/'))
        return stat(name, &st) == 0 && S_ISREG(st.st_mode) && access(name, X_OK) == 0;
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        char full[4096];
        int len = snprintf(full, sizeof full, "%.*s/%s", (int)(n ? n : 1), n ? path : ".", name);
        if (len > 0 && (size_t)len < sizeof full && stat(full, &st) == 0 && S_ISREG(st.st_mode) &&
            access(full, X_OK) == 0)
            return 1;
        path += n;
        if (*path == ':')
            path++;
    }
    return 0;
}

char *child_shell_word(const char *word)
{
    if (word[0] && strspn(word, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:@%+=,-") ==
                       strlen(word))
        return strdup(word);
    char *q = malloc(4 * strlen(word) + 3), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *c = word; *c; c++) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return q;
}
