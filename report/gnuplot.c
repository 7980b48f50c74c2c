#include "report/gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { OUTPUT_KEEP = 4096, EXIT_NO_EXEC = 127 };

struct child_result {
    int started;     /* fork and pipe worked */
    int timed_out;
    int status;      /* waitpid status */
    char out[OUTPUT_KEEP]; /* the first bytes of stdout + stderr */
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Runs argv in dir (NULL: here), collecting its output, within timeout_s. */
static void run_child(char *const argv[], const char *dir, int timeout_s, struct child_result *cr)
{
    memset(cr, 0, sizeof *cr);
    int fds[2];
    if (pipe(fds) != 0)
        return;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        /* The child: its own process group, so a timeout can end all of it. */
        setpgid(0, 0);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (dir && chdir(dir) != 0)
            _exit(EXIT_NO_EXEC);
        execvp(argv[0], argv);
        _exit(EXIT_NO_EXEC);
    }
    cr->started = 1;
    close(fds[1]);
    size_t kept = 0;
    int64_t deadline = now_ms() + (int64_t)timeout_s * 1000;
    int open_fd = 1;
    while (open_fd) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            cr->timed_out = 1;
            break;
        }
        struct pollfd p = {.fd = fds[0], .events = POLLIN};
        int rc = poll(&p, 1, (int)(left > 1000 ? 1000 : left));
        if (rc < 0 && errno != EINTR)
            break;
        if (rc <= 0)
            continue;
        char buf[1024];
        ssize_t got = read(fds[0], buf, sizeof buf);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            open_fd = 0;
            break;
        }
        size_t take = (size_t)got;
        if (take > sizeof cr->out - 1 - kept)
            take = sizeof cr->out - 1 - kept;
        memcpy(cr->out + kept, buf, take);
        kept += take;
    }
    close(fds[0]);
    /* Output closed: wait for the exit, still within the deadline. */
    while (!cr->timed_out) {
        pid_t w = waitpid(pid, &cr->status, WNOHANG);
        if (w == pid)
            return;
        if (w < 0 && errno != EINTR) {
            cr->status = EXIT_NO_EXEC << 8;
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

int gnuplot_probe(char *version, size_t len)
{
    char *argv[] = {"gnuplot", "--version", NULL};
    struct child_result cr;
    run_child(argv, NULL, 10, &cr);
    if (len)
        version[0] = '\0';
    if (!cr.started || cr.timed_out || !WIFEXITED(cr.status) || WEXITSTATUS(cr.status) != 0)
        return 0;
    if (len) {
        size_t n = strcspn(cr.out, "\r\n");
        if (n >= len)
            n = len - 1;
        memcpy(version, cr.out, n);
        version[n] = '\0';
    }
    return 1;
}

/* gnuplot's message, squeezed onto one line: the lines that name the script
 * ("NAME.gp" line N: ...) say what went wrong; without one, the last line. */
static void summarize_output(const char *out, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *best = NULL, *last = NULL;
    for (const char *line = out; *line;) {
        size_t n = strcspn(line, "\n");
        int blank = 1;
        for (size_t i = 0; i < n; i++)
            if (line[i] != ' ' && line[i] != '\t' && line[i] != '^' && line[i] != '\r')
                blank = 0;
        if (!blank) {
            last = line;
            if (!best && strstr(line, "\" line ") && memchr(line, ':', n) && !strstr(line, "warning:"))
                best = line;
        }
        line += n;
        if (*line == '\n')
            line++;
    }
    const char *pick = best ? best : last;
    if (!pick)
        return;
    size_t n = strcspn(pick, "\r\n"), o = 0;
    for (size_t i = 0; i < n && o + 1 < len; i++)
        buf[o++] = (pick[i] == '\t') ? ' ' : pick[i];
    buf[o] = '\0';
}

int gnuplot_render(const char *dir, const char *script, const char *output, int timeout_s, struct err *err)
{
    char tmp_name[512], tmp_path[4200], final_path[4200], define[640];
    snprintf(tmp_name, sizeof tmp_name, "%s.tmp.%ld", output, (long)getpid());
    snprintf(tmp_path, sizeof tmp_path, "%s/%s", dir, tmp_name);
    snprintf(final_path, sizeof final_path, "%s/%s", dir, output);
    /* Our own file names only (letters, digits, _ . -), so quoting is simple. */
    snprintf(define, sizeof define, "outfile='%s'", tmp_name);
    char *argv[] = {"gnuplot", "-d", "-e", define, (char *)script, NULL};
    struct child_result cr;
    run_child(argv, dir, timeout_s, &cr);
    if (!cr.started) {
        return err_set(err, script, 0, 0, "cannot start gnuplot: %s", strerror(errno));
    }
    if (cr.timed_out) {
        remove(tmp_path);
        return err_set(err, script, 0, 0, "gnuplot took longer than %d s and was stopped", timeout_s);
    }
    char said[256];
    summarize_output(cr.out, said, sizeof said);
    if (WIFSIGNALED(cr.status)) {
        remove(tmp_path);
        return err_set(err, script, 0, 0, "gnuplot was killed by signal %d", WTERMSIG(cr.status));
    }
    int code = WIFEXITED(cr.status) ? WEXITSTATUS(cr.status) : -1;
    if (code == EXIT_NO_EXEC && !said[0]) {
        remove(tmp_path);
        return err_set(err, script, 0, 0, "gnuplot not found (install gnuplot-nox)");
    }
    if (code != 0) {
        remove(tmp_path);
        return err_set(err, script, 0, 0, "gnuplot failed (exit %d): %s", code, said[0] ? said : "no message");
    }
    struct stat sb;
    if (stat(tmp_path, &sb) != 0 || sb.st_size == 0) {
        remove(tmp_path);
        return err_set(err, script, 0, 0, "gnuplot wrote no image to '%s'", output);
    }
    if (rename(tmp_path, final_path) != 0) {
        int saved = errno;
        remove(tmp_path);
        return err_set(err, final_path, 0, 0, "cannot write: %s", strerror(saved));
    }
    return 0;
}

void gnuplot_write_string(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\'')
            fputs("''", fp);
        else if (*p < 0x20 || *p == 0x7f)
            fputc(' ', fp);
        else
            fputc(*p, fp);
    }
    fputc('\'', fp);
}

void gnuplot_write_preamble(FILE *fp, const char *script, const char *default_output, int width_px, int height_px)
{
    fprintf(fp,
            "# Written by fleetsim. Redraw %s in this folder with: gnuplot -d %s\n"
            "# (into another file: gnuplot -d -e \"outfile='other.svg'\" %s). The data is in the .dat file.\n",
            default_output, script, script);
    fputs("if (!exists(\"outfile\")) outfile = ", fp);
    gnuplot_write_string(fp, default_output);
    fputc('\n', fp);
    fprintf(fp,
            "set encoding utf8\n"
            "set terminal svg size %d,%d fixed noenhanced font \"%s,%d\" background \"#ffffff\"\n"
            "set output outfile\n"
            "set datafile missing \"NaN\"\n"
            "set grid ytics lc rgb \"#dddddd\"\n"
            "set border 3\nset tics nomirror\n"
            "set key outside below horizontal noenhanced\n",
            width_px, height_px, GNUPLOT_FONT, GNUPLOT_FONT_PT);
}
