/* Unit tests: agent/state_lock (one agent per state_dir). The case that
 * matters is the restart after a kill: an agent that dies while a child of
 * its own has forked but not yet exec'd must leave the lock free. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/state_lock.h"
#include "tests/unit/test.h"

void suite_agent_state_lock(void);

/* Takes the lock in a child "agent"; returns its pid once it holds it, or -1.
 * With fork_child, that agent first forks a grandchild that keeps every
 * descriptor and never execs (the moment between fork and exec, made long),
 * reports the grandchild's pid into *grandchild, and dies at once. */
static pid_t agent_holding(const char *path, const char *dir, int fork_child, pid_t *grandchild)
{
    int ready[2];
    if (pipe(ready) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        int fd;
        struct err e;
        err_clear(&e);
        if (state_lock_take(path, dir, &fd, &e) != 0)
            _exit(1);
        pid_t g = 0;
        if (fork_child) {
            g = fork();
            if (g == 0) {
                close(ready[1]);
                pause(); /* holds the lock file open, never execs */
                _exit(0);
            }
        }
        if (write(ready[1], &g, sizeof g) != (ssize_t)sizeof g)
            _exit(1);
        if (fork_child)
            _exit(0); /* the agent dies; its child lives on */
        pause();
        _exit(0);
    }
    close(ready[1]);
    pid_t g = -1;
    ssize_t got = pid > 0 ? read(ready[0], &g, sizeof g) : -1;
    close(ready[0]);
    if (got != (ssize_t)sizeof g) {
        if (pid > 0)
            waitpid(pid, NULL, 0);
        return -1;
    }
    if (grandchild)
        *grandchild = g;
    return pid;
}

static void test_lock_exclusive_and_free_after_death(void)
{
    char dir[] = "/tmp/fleetsim-lock-XXXXXX";
    if (!mkdtemp(dir)) {
        test_skip("no temporary folder");
        return;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/agent.lock", dir);
    struct err e;
    int fd = -1;

    /* a live agent holds it: a second is refused and told who holds it */
    pid_t a = agent_holding(path, dir, 0, NULL);
    CHECK(a > 0);
    err_clear(&e);
    CHECK_INT(state_lock_take(path, dir, &fd, &e), -1);
    char want[64];
    snprintf(want, sizeof want, "another agent (pid %ld) holds", (long)a);
    CHECK(strstr(e.msg, want) != NULL);
    CHECK(strstr(e.msg, dir) != NULL);
    if (fd >= 0)
        close(fd);
    struct stat st;
    CHECK_INT(stat(path, &st), 0);
    CHECK_INT(st.st_mode & 0777, 0600);

    /* killed: free at once */
    kill(a, SIGKILL);
    waitpid(a, NULL, 0);
    err_clear(&e);
    CHECK_INT(state_lock_take(path, dir, &fd, &e), 0);
    close(fd); /* released: this process no longer holds it */

    /* an agent dead while its forked child still has the file open (between
     * fork and exec): the lock is free; a flock(2) lock would still be held */
    pid_t g = 0;
    a = agent_holding(path, dir, 1, &g);
    CHECK(a > 0);
    CHECK(g > 0);
    if (a > 0)
        waitpid(a, NULL, 0);
    err_clear(&e);
    CHECK_INT(state_lock_take(path, dir, &fd, &e), 0);
    if (e.msg[0])
        printf("  state_lock: %s\n", e.msg);
    if (fd >= 0)
        close(fd);
    if (g > 0) {
        kill(g, SIGKILL);
        /* the grandchild was re-parented; it is not ours to wait for */
    }
    unlink(path);
    rmdir(dir);
}

void suite_agent_state_lock(void)
{
    test_run("state lock: one agent per state_dir; free once the agent dies, even with a forked child alive",
             test_lock_exclusive_and_free_after_death);
}
