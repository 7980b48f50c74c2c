#include "agent/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* snprintf through a va_list: paths are bounded by the caller, and a cut
 * message is fine */
__attribute__((format(printf, 3, 4))) static void fmt(char *out, size_t len, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(out, len, f, ap);
    va_end(ap);
}

static int read_text(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off + 1 < len) {
        ssize_t n = read(fd, buf + off, len - 1 - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    close(fd);
    buf[off] = '\0';
    return (int)off;
}

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    ssize_t w = write(fd, text, n);
    int e = errno;
    close(fd);
    errno = e;
    return w == (ssize_t)n ? 0 : -1;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* mountinfo escapes blanks as \040 and so on */
static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

int cgroup_find_mount(const char *text, char *out, size_t len)
{
    const char *line = text;
    while (line && *line) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char buf[8192];
        if (n < sizeof buf) {
            memcpy(buf, line, n);
            buf[n] = '\0';
            /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
            char *dash = strstr(buf, " - ");
            if (dash && strncmp(dash + 3, "cgroup2 ", 8) == 0) {
                char *f[5];
                char *save = NULL, *p = buf;
                int k = 0;
                *dash = '\0';
                for (; k < 5 && (f[k] = strtok_r(p, " ", &save)); k++)
                    p = NULL;
                if (k == 5) {
                    unescape(f[4]);
                    if (strlen(f[4]) < len) {
                        snprintf(out, len, "%s", f[4]);
                        return 0;
                    }
                }
            }
        }
        line = end ? end + 1 : NULL;
    }
    return -1;
}

int cgroup_find_own(const char *text, char *out, size_t len)
{
    const char *p = text;
    while (p && *p) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n >= 3 && strncmp(p, "0::", 3) == 0 && n - 3 < len) {
            memcpy(out, p + 3, n - 3);
            out[n - 3] = '\0';
            return 0;
        }
        p = end ? end + 1 : NULL;
    }
    return -1;
}

static void enable_controllers(const char *dir)
{
    char path[CGROUP_PATH_MAX + 64], have[512];
    snprintf(path, sizeof path, "%s/cgroup.controllers", dir);
    if (read_text(path, have, sizeof have) < 0)
        return;
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
    static const char *const want[] = {"cpu", "memory", "pids"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char *w = strstr(have, want[i]);
        size_t l = strlen(want[i]);
        if (w && (w == have || w[-1] == ' ') && (w[l] == ' ' || w[l] == '\n' || w[l] == '\0')) {
            char cmd[32];
            snprintf(cmd, sizeof cmd, "+%s", want[i]);
            (void)write_text(path, cmd); /* best effort: the figures need them, containment does not */
        }
    }
}

void cgroup_host_init(struct cgroup_host *h, const char *tag, const char *mountinfo, const char *self_cgroup)
{
    memset(h, 0, sizeof *h);
    static char text[1 << 16];
    if (read_text(mountinfo ? mountinfo : "/proc/self/mountinfo", text, sizeof text) < 0 ||
        cgroup_find_mount(text, h->mount, sizeof h->mount) != 0) {
        h->mount[0] = '\0';
        fmt(h->why, sizeof h->why, "no cgroup2 file system is mounted (see /proc/self/mountinfo)");
        return;
    }
    if (read_text(self_cgroup ? self_cgroup : "/proc/self/cgroup", text, sizeof text) < 0 ||
        cgroup_find_own(text, h->own, sizeof h->own) != 0) {
        fmt(h->why, sizeof h->why, "the agent is in no cgroup v2 (no '0::' line in /proc/self/cgroup)");
        return;
    }
    char path[CGROUP_PATH_MAX + 64];
    if (strcmp(h->own, "/") == 0 || h->own[0] == '\0') {
        /* not delegated (a container, a shell): a folder of our own under the root */
        fmt(h->base, sizeof h->base, "%s/fleetsim-agent-%s", h->mount, tag);
        if (mkdir(h->base, 0755) != 0 && errno != EEXIST) {
            fmt(h->why, sizeof h->why, "cannot create cgroup '%s': %s", h->base, strerror(errno));
            return;
        }
    } else {
        /* delegated (Delegate=yes): the agent into a leaf, the jobs beside it */
        const char *own = h->own;
        size_t ol = strlen(own);
        if (ol >= 6 && strcmp(own + ol - 6, "/agent") == 0)
            ol -= 6; /* already in the leaf (started again inside it) */
        fmt(h->base, sizeof h->base, "%s%.*s", h->mount, (int)ol, own);
        fmt(path, sizeof path, "%s/agent", h->base);
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            fmt(h->why, sizeof h->why,
                     "cannot create cgroup '%s': %s (is the agent's cgroup delegated to it? Delegate=yes)", path,
                     strerror(errno));
            return;
        }
        fmt(path, sizeof path, "%s/agent/cgroup.procs", h->base);
        if (write_text(path, "0") != 0) {
            fmt(h->why, sizeof h->why,
                     "cannot move the agent into '%s': %s (is the agent's cgroup delegated to it? Delegate=yes)",
                     path, strerror(errno));
            return;
        }
        h->moved = 1;
    }
    enable_controllers(h->base);
    /* a probe: can we create a job's cgroup here? */
    fmt(path, sizeof path, "%s/probe-%ld", h->base, (long)getpid());
    if (mkdir(path, 0755) != 0) {
        fmt(h->why, sizeof h->why, "cannot create a job cgroup under '%s': %s", h->base, strerror(errno));
        return;
    }
    rmdir(path);
    h->usable = 1;
}

void cgroup_job_path(const struct cgroup_host *h, int64_t job_id, char *out, size_t len)
{
    fmt(out, len, "%s/job-%lld", h->base, (long long)job_id);
}

int cgroup_job_create(const char *cg, struct err *err)
{
    if (access(cg, F_OK) == 0)
        cgroup_remove(cg); /* a leftover of an earlier attempt */
    if (mkdir(cg, 0755) != 0)
        return err_set(err, NULL, 0, 0, "cannot create the job's cgroup '%s': %s", cg, strerror(errno));
    return 0;
}

int cgroup_join(const char *cg)
{
    char path[CGROUP_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg);
    return write_text(path, "0");
}

/* Calls fn on each pid in cg/cgroup.procs; returns how many there were. */
static int each_pid(const char *cg, int sig)
{
    char path[CGROUP_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cgroup.procs", cg);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int n = 0;
    long pid;
    while (fscanf(f, "%ld", &pid) == 1) {
        if (pid > 0 && sig)
            kill((pid_t)pid, sig);
        n++;
    }
    fclose(f);
    return n;
}

int cgroup_count(const char *cg)
{
    return each_pid(cg, 0);
}

int cgroup_signal(const char *cg, int sig)
{
    int n = each_pid(cg, sig);
    return n < 0 ? 0 : n;
}

int cgroup_kill(const char *cg, int64_t wait_us)
{
    char path[CGROUP_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cgroup.kill", cg);
    int have_kill = write_text(path, "1") == 0;
    int64_t until = mono_us() + wait_us;
    long pause = 1000;
    for (;;) {
        int n = have_kill ? cgroup_count(cg) : each_pid(cg, SIGKILL);
        if (n <= 0)
            return 0;
        if (mono_us() >= until)
            return n;
        sleep_us(pause);
        if (pause < 20000)
            pause *= 2;
    }
}

int cgroup_read_stats(const char *cg, int64_t *cpu_us, int64_t *mem_peak_bytes)
{
    char path[CGROUP_PATH_MAX + 32], text[2048];
    *cpu_us = -1;
    *mem_peak_bytes = -1;
    snprintf(path, sizeof path, "%s/cpu.stat", cg);
    if (read_text(path, text, sizeof text) < 0)
        return -1;
    const char *u = strstr(text, "usage_usec ");
    if (u)
        *cpu_us = strtoll(u + 11, NULL, 10);
    snprintf(path, sizeof path, "%s/memory.peak", cg);
    if (read_text(path, text, sizeof text) > 0)
        *mem_peak_bytes = strtoll(text, NULL, 10);
    return 0;
}

int cgroup_remove(const char *cg)
{
    if (access(cg, F_OK) != 0)
        return 0;
    cgroup_kill(cg, 5000000);
    for (int tries = 0; tries < 50; tries++) {
        if (rmdir(cg) == 0 || errno == ENOENT)
            return 0;
        sleep_us(10000);
    }
    return -1;
}
