#define _GNU_SOURCE
#include "agent/slurm_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int slurm_exec(const char *const *argv, struct buf *out, int timeout_ms, struct err *err)
{
    int po[2], pe[2];
    if (pipe2(po, O_CLOEXEC) != 0)
        return err_set(err, NULL, 0, 0, "cannot run '%s': %s", argv[0], strerror(errno));
    if (pipe2(pe, O_CLOEXEC) != 0) {
        close(po[0]);
        close(po[1]);
        return err_set(err, NULL, 0, 0, "cannot run '%s': %s", argv[0], strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return err_set(err, NULL, 0, 0, "cannot run '%s': %s", argv[0], strerror(errno));
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
            _exit(127);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execvp(argv[0], (char *const *)argv);
        dprintf(2, "cannot run '%s': %s (are Slurm's client commands installed?)\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    char errtext[512];
    size_t errlen = 0;
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_fds = 2, timed_out = 0;
    int64_t deadline = now_ms() + timeout_ms;
    while (open_fds > 0) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        int r = poll(fds, 2, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        for (int k = 0; k < 2; k++) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char chunk[65536];
            ssize_t n = read(fds[k].fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                close(fds[k].fd);
                fds[k].fd = -1;
                open_fds--;
                continue;
            }
            if (k == 0 && out)
                buf_append(out, chunk, (size_t)n);
            else if (k == 1 && errlen < sizeof errtext - 1) {
                size_t take = (size_t)n < sizeof errtext - 1 - errlen ? (size_t)n : sizeof errtext - 1 - errlen;
                memcpy(errtext + errlen, chunk, take);
                errlen += take;
            }
        }
    }
    for (int k = 0; k < 2; k++)
        if (fds[k].fd >= 0)
            close(fds[k].fd);
    if (timed_out)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    errtext[errlen] = '\0';
    errtext[strcspn(errtext, "\n")] = '\0';
    if (timed_out)
        return err_set(err, NULL, 0, 0, "'%s' did not finish within %d ms", argv[0], timeout_ms);
    if (out && out->oom)
        return err_set(err, NULL, 0, 0, "out of memory reading '%s'", argv[0]);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        return err_set(err, NULL, 0, 0, "'%s %s' failed (exit %d)%s%s", argv[0], argv[1] ? argv[1] : "",
                       WEXITSTATUS(status), errtext[0] ? ": " : "", errtext);
    return err_set(err, NULL, 0, 0, "'%s' killed by signal %d", argv[0], WTERMSIG(status));
}
