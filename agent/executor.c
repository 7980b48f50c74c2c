/* _GNU_SOURCE: pipe2, syscall(SYS_pidfd_open), initgroups/setgroups. */
#define _GNU_SOURCE
#include "agent/executor.h"
#include "agent/cgroup.h"
#include "sim/buffers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

extern char **environ;

enum { SPEC_MAX_BYTES = 4 << 20 };

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t executor_proc_start(pid_t pid)
{
    if (pid <= 0)
        return 0;
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    char *p = strrchr(text, ')');
    if (!p || !p[1])
        return 0;
    p += 2; /* field 3: state */
    if (*p == 'Z' || *p == 'X')
        return 0;
    /* fields 3..21 skipped, field 22 is starttime */
    for (int field = 3; field < 22; field++) {
        p = strchr(p, ' ');
        if (!p)
            return 0;
        p++;
    }
    return strtoll(p, NULL, 10);
}

int executor_alive(pid_t pid, int64_t start)
{
    return start > 0 && executor_proc_start(pid) == start;
}

int executor_pidfd(pid_t pid)
{
    long fd = syscall(SYS_pidfd_open, (int)pid, 0);
    return fd < 0 ? -1 : (int)fd;
}

int executor_spawn(const struct executor_spec *spec, pid_t *pid, int64_t *start, int *go_fd, struct err *err)
{
    json_error_t je;
    json_t *argv = json_loads(spec->argv_json, 0, &je);
    json_t *env = json_loads(spec->env_json, 0, &je);
    json_t *o = json_object();
    if (!argv || !env || !o) {
        json_decref(argv);
        json_decref(env);
        json_decref(o);
        return err_set(err, NULL, 0, 0, "job spec is not valid JSON");
    }
    json_object_set_new(o, "dir", json_string(spec->dir));
    json_object_set_new(o, "argv", argv);
    json_object_set_new(o, "env", env);
    json_object_set_new(o, "cwd", json_string(spec->cwd));
    json_object_set_new(o, "stdout", json_string(spec->out_path));
    json_object_set_new(o, "stderr", json_string(spec->err_path));
    json_object_set_new(o, "uid", json_integer(spec->uid));
    json_object_set_new(o, "gid", json_integer(spec->gid));
    json_object_set_new(o, "user", json_string(spec->user));
    json_object_set_new(o, "switch_user", json_boolean(spec->switch_user));
    json_object_set_new(o, "cgroup", json_string(spec->cgroup ? spec->cgroup : ""));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        return err_set(err, NULL, 0, 0, "out of memory");

    int ctl[2];
    if (pipe2(ctl, O_CLOEXEC) != 0) {
        free(text);
        return err_set(err, NULL, 0, 0, "cannot create a pipe: %s", strerror(errno));
    }
    pid_t child = fork();
    if (child < 0) {
        int e = errno;
        close(ctl[0]);
        close(ctl[1]);
        free(text);
        return err_set(err, NULL, 0, 0, "cannot fork: %s", strerror(e));
    }
    if (child == 0) {
        /* the supervisor-to-be: fd 3 is the handshake, a session of its own,
         * no signal blocked (exec keeps the mask) */
        if (ctl[0] == 3)
            fcntl(3, F_SETFD, 0);
        else if (dup2(ctl[0], 3) < 0)
            _exit(127);
        setsid();
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        char *args[] = {"fleetsim-agent", "__supervise", NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    close(ctl[0]);
    int64_t st = executor_proc_start(child);
    size_t len = strlen(text);
    text[len] = '\n';
    int bad = st == 0 || buffers_write_all(ctl[1], text, len + 1) != 0;
    free(text);
    if (bad) {
        close(ctl[1]);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        return err_set(err, NULL, 0, 0, "the job supervisor died at start");
    }
    *pid = child;
    *start = st;
    *go_fd = ctl[1];
    return 0;
}

int executor_go(int go_fd)
{
    int rc = buffers_write_all(go_fd, "G", 1);
    close(go_fd);
    return rc;
}

void executor_abandon(int go_fd)
{
    close(go_fd);
}

int executor_signal(pid_t pid, int64_t start, int hard)
{
    if (!executor_alive(pid, start))
        return -1;
    return kill(pid, hard ? SIGUSR1 : SIGTERM);
}

static void join(char *out, size_t len, const char *dir, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

int executor_started(const char *dir)
{
    char path[4200];
    join(path, sizeof path, dir, "started");
    return access(path, F_OK) == 0;
}

int executor_read_status(const char *dir, struct executor_status *st)
{
    char path[4200];
    join(path, sizeof path, dir, "status");
    json_error_t je;
    json_t *o = json_load_file(path, 0, &je);
    if (!o)
        return access(path, F_OK) == 0 ? -1 : 0;
    memset(st, 0, sizeof *st);
    json_t *v;
    st->exit_code = json_is_integer(v = json_object_get(o, "exit")) ? (int)json_integer_value(v) : -1;
    st->term_signal = json_is_integer(v = json_object_get(o, "signal")) ? (int)json_integer_value(v) : 0;
    st->end_us = json_is_integer(v = json_object_get(o, "end_us")) ? json_integer_value(v) : now_us();
    st->cpu_us = json_is_integer(v = json_object_get(o, "cpu_us")) ? json_integer_value(v) : -1;
    st->mem_peak_bytes = json_is_integer(v = json_object_get(o, "mem_peak_bytes")) ? json_integer_value(v) : -1;
    st->survivors = json_is_integer(v = json_object_get(o, "survivors")) ? (int)json_integer_value(v) : 0;
    if (json_is_string(v = json_object_get(o, "error")))
        snprintf(st->error, sizeof st->error, "%s", json_string_value(v));
    json_decref(o);
    return 1;
}

void executor_cleanup(const char *dir)
{
    char path[4200];
    static const char *const names[] = {"started", "status", "status.tmp"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        join(path, sizeof path, dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* ---- the supervisor ---- */

static void close_fds_from(int first)
{
    int fds[1024];
    size_t n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    int self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) && n < sizeof fds / sizeof *fds) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd >= first && fd != self)
            fds[n++] = fd;
    }
    closedir(d);
    for (size_t i = 0; i < n; i++)
        close(fds[i]);
}

static char *read_line_fd(int fd)
{
    size_t cap = 4096, len = 0;
    char *s = malloc(cap);
    if (!s)
        return NULL;
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= SPEC_MAX_BYTES)
                break;
            cap *= 2;
            char *t = realloc(s, cap);
            if (!t)
                break;
            s = t;
        }
        ssize_t r = read(fd, s + len, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (s[len] == '\n') {
            s[len] = '\0';
            return s;
        }
        len++;
    }
    free(s);
    return NULL;
}

struct cg_figures {
    int64_t cpu_us, mem_peak_bytes;
    int survivors;
};

enum { STATUS_RESERVED_BYTES = 4096 };

/* The status file's space is taken before the job runs (status.tmp, filled
 * with blanks): on a full disk the end is still written, in place, so a job
 * that ended is never taken for one whose supervisor died (which a --requeue
 * job would run again). Returns 0, or -1 if the space cannot be had. */
static int reserve_status(const char *dir)
{
    char tmp[4200];
    join(tmp, sizeof tmp, dir, "status.tmp");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    char blank[STATUS_RESERVED_BYTES];
    memset(blank, ' ', sizeof blank);
    blank[sizeof blank - 1] = '\n';
    int rc = buffers_write_all(fd, blank, sizeof blank) == 0 && fsync(fd) == 0 ? 0 : -1;
    close(fd);
    if (rc != 0)
        unlink(tmp);
    return rc;
}

/* Writes the status into the reserved status.tmp (no new blocks needed),
 * fsyncs, renames it to status. Returns 0 or -1. */
static int write_status_once(const char *dir, const char *text)
{
    char tmp[4200], path[4200];
    join(tmp, sizeof tmp, dir, "status.tmp");
    join(path, sizeof path, dir, "status");
    size_t n = strlen(text);
    if (n + 1 > STATUS_RESERVED_BYTES)
        n = STATUS_RESERVED_BYTES - 1;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = pwrite(fd, text, n, 0) == (ssize_t)n && fsync(fd) == 0 ? 0 : -1;
    close(fd);
    return rc == 0 ? rename(tmp, path) : -1;
}

static void write_status(const char *dir, int exit_code, int sig, const char *error, const struct cg_figures *cf)
{
    json_t *o = json_object();
    if (cf && cf->cpu_us >= 0)
        json_object_set_new(o, "cpu_us", json_integer(cf->cpu_us));
    if (cf && cf->mem_peak_bytes >= 0)
        json_object_set_new(o, "mem_peak_bytes", json_integer(cf->mem_peak_bytes));
    if (cf && cf->survivors > 0)
        json_object_set_new(o, "survivors", json_integer(cf->survivors));
    if (exit_code >= 0)
        json_object_set_new(o, "exit", json_integer(exit_code));
    json_object_set_new(o, "signal", json_integer(sig));
    json_object_set_new(o, "end_us", json_integer(now_us()));
    if (error && *error)
        json_object_set_new(o, "error", json_string(error));
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        return;
    /* the agent must learn how the job ended: keep trying (a disk that is
     * full even for the reserved file, an I/O error) rather than exit
     * without a status, which would read as a lost job */
    for (unsigned delay_ms = 100; write_status_once(dir, text) != 0; delay_ms = delay_ms < 5000 ? delay_ms * 2 : 5000) {
        struct timespec ts = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    free(text);
}

/* In the job's child: report a failed step to the supervisor and give up. */
static void child_fail(int report, const char *step)
{
    char msg[300];
    int n = snprintf(msg, sizeof msg, "%s: %s", step, strerror(errno));
    if (n > 0)
        (void)!write(report, msg, (size_t)n);
    _exit(127);
}

static int open_output(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOCTTY, 0600); /* a job's output may echo its secrets */
}

static void run_child(json_t *spec, char **argv, char **envp, int report)
{
    setpgid(0, 0);
    /* into the job's cgroup while still root: everything it forks stays there */
    const char *cg = json_string_value(json_object_get(spec, "cgroup"));
    if (cg && *cg && cgroup_join(cg) != 0)
        child_fail(report, "joining the job's cgroup");
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    umask(022);
    if (json_is_true(json_object_get(spec, "switch_user"))) {
        uid_t uid = (uid_t)json_integer_value(json_object_get(spec, "uid"));
        gid_t gid = (gid_t)json_integer_value(json_object_get(spec, "gid"));
        const char *user = json_string_value(json_object_get(spec, "user"));
        if (setgid(gid) != 0)
            child_fail(report, "setgid");
        if (user && *user && initgroups(user, gid) != 0 && setgroups(0, NULL) != 0)
            child_fail(report, "initgroups");
        if (!(user && *user) && setgroups(0, NULL) != 0)
            child_fail(report, "setgroups");
        if (setuid(uid) != 0)
            child_fail(report, "setuid");
        /* checked: the ids took, and root cannot be regained */
        if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid) {
            errno = EPERM;
            child_fail(report, "switching user");
        }
        if (uid != 0 && setuid(0) == 0) {
            errno = EPERM;
            child_fail(report, "dropping root");
        }
    }
    const char *cwd = json_string_value(json_object_get(spec, "cwd"));
    if (!cwd || chdir(cwd) != 0)
        child_fail(report, "chdir");
    const char *out = json_string_value(json_object_get(spec, "stdout"));
    const char *errp = json_string_value(json_object_get(spec, "stderr"));
    int in = open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0)
        child_fail(report, "stdin");
    int fo = out ? open_output(out) : -1;
    if (fo < 0)
        child_fail(report, "opening stdout file");
    int fe = errp && out && strcmp(errp, out) == 0 ? dup(fo) : (errp ? open_output(errp) : -1);
    if (fe < 0)
        child_fail(report, "opening stderr file");
    if (dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
        child_fail(report, "redirecting output");
    if (in > 2)
        close(in);
    if (fo > 2)
        close(fo);
    if (fe > 2)
        close(fe);
    environ = envp;
    execvp(argv[0], argv);
    child_fail(report, argv[0]);
}

int executor_supervise_main(void)
{
    /* fd 3 is the handshake; everything else the agent had is not ours */
    close_fds_from(4);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) {
        dup2(devnull, 0);
        if (devnull > 2)
            close(devnull);
    }
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);

    char *line = read_line_fd(3);
    if (!line)
        return 0; /* the agent died before sending the job: nothing ran */
    json_error_t je;
    json_t *spec = json_loads(line, 0, &je);
    free(line);
    char go = 0;
    ssize_t r;
    do
        r = read(3, &go, 1);
    while (r < 0 && errno == EINTR);
    close(3);
    if (!spec)
        return 2;
    if (r != 1 || go != 'G') {
        json_decref(spec);
        return 0; /* no go: the agent died before recording the start */
    }
    const char *dir = json_string_value(json_object_get(spec, "dir"));
    json_t *jargv = json_object_get(spec, "argv"), *jenv = json_object_get(spec, "env");
    if (!dir || !json_is_array(jargv) || json_array_size(jargv) == 0 || !json_is_array(jenv)) {
        json_decref(spec);
        return 2;
    }
    /* no room for the status or the marker: exit without running (no
     * marker: the agent puts the job back in the queue) */
    if (reserve_status(dir) != 0) {
        json_decref(spec);
        return 2;
    }
    char marker[4200];
    join(marker, sizeof marker, dir, "started");
    int mfd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (mfd < 0 || fsync(mfd) != 0) {
        if (mfd >= 0)
            close(mfd);
        unlink(marker);
        json_decref(spec);
        return 2;
    }
    close(mfd);

    size_t na = json_array_size(jargv), ne = json_array_size(jenv);
    char **argv = calloc(na + 1, sizeof *argv), **envp = calloc(ne + 1, sizeof *envp);
    if (!argv || !envp) {
        write_status(dir, -1, 0, "out of memory", NULL);
        return 2;
    }
    for (size_t i = 0; i < na; i++)
        argv[i] = (char *)json_string_value(json_array_get(jargv, i));
    for (size_t i = 0; i < ne; i++)
        envp[i] = (char *)json_string_value(json_array_get(jenv, i));

    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        write_status(dir, -1, 0, "cannot create a pipe", NULL);
        return 2;
    }
    pid_t child = fork();
    if (child < 0) {
        write_status(dir, -1, 0, "cannot fork the job", NULL);
        return 2;
    }
    if (child == 0) {
        close(report[0]);
        run_child(spec, argv, envp, report[1]);
    }
    setpgid(child, child);
    close(report[1]);
    char error[256] = "";
    size_t el = 0;
    for (;;) {
        ssize_t n = read(report[0], error + el, sizeof error - 1 - el);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || (el += (size_t)n) >= sizeof error - 1)
            break;
    }
    error[el] = '\0';
    close(report[0]);

    const char *cg = json_string_value(json_object_get(spec, "cgroup"));
    if (cg && !*cg)
        cg = NULL;
    int status = 0;
    for (;;) {
        siginfo_t info;
        int sig = sigwaitinfo(&set, &info);
        if (sig < 0)
            continue;
        if (sig == SIGUSR1) {
            kill(-child, SIGKILL);
            if (cg)
                cgroup_kill(cg, 0);
        } else if (sig != SIGCHLD) {
            kill(-child, SIGTERM);
            if (cg)
                cgroup_signal(cg, SIGTERM); /* the ones that left the group (setsid) too */
        } else {
            /* peek first: while the leader is an unreaped zombie its pid,
             * and so the group id, cannot be reused by anyone else */
            siginfo_t peek;
            memset(&peek, 0, sizeof peek);
            if (waitid(P_PID, (id_t)child, &peek, WEXITED | WNOHANG | WNOWAIT) == 0 && peek.si_pid == child) {
                /* the leader is gone: nothing of the job may outlive it */
                kill(-child, SIGKILL);
                if (waitpid(child, &status, 0) == child)
                    break;
            }
        }
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    int termsig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    struct cg_figures cf = {-1, -1, 0};
    if (cg) {
        /* nothing of the job outlives it: setsid'd and double-forked
         * processes are still in its cgroup */
        cf.survivors = cgroup_kill(cg, 10000000);
        cgroup_read_stats(cg, &cf.cpu_us, &cf.mem_peak_bytes);
        if (cf.survivors == 0)
            cgroup_remove(cg);
    }
    write_status(dir, el ? -1 : code, termsig, error, &cf);
    free(argv);
    free(envp);
    json_decref(spec);
    return 0;
}
