#include "report/gnuplot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/child.h"

int gnuplot_probe(char *version, size_t len)
{
    char *argv[] = {"gnuplot", "--version", NULL};
    struct child_result cr;
    child_run(argv, NULL, 10, 0, &cr);
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
    child_run(argv, dir, timeout_s, 0, &cr);
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
    if (code == CHILD_EXIT_NO_EXEC && !said[0]) {
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
