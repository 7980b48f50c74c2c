/* gnuplot: drawing charts with gnuplot, run as a child process on a script
 * file, never through a pipe (a pipe hides gnuplot's exit status).
 *
 * A chart is NAME.gp plus its data files in one folder; the script names its
 * files relative to that folder, so a user re-renders it there with
 * `gnuplot -d NAME.gp`. gnuplot_render runs
 *     gnuplot -d -e "outfile='NAME.svg.tmp.PID'" NAME.gp
 * in the folder (-d: no init files, so a user's ~/.gnuplot cannot change the
 * result), with stdin from /dev/null and stdout and stderr captured, under a
 * time limit; the image is renamed into place only when gnuplot exits 0, so a
 * failed chart leaves no half-written file. Scripts start with
 * gnuplot_write_preamble, which pins the terminal (svg, fixed size), the font
 * and `noenhanced` (so `_`, `^`, `{` in names are not markup), and reads
 * `outfile` when it is set.
 *
 * Text from user data goes into scripts only through gnuplot_write_string:
 * a single-quoted string, in which gnuplot interprets no backslash escapes
 * and only '' (one quote) is special; control characters become spaces.
 *
 * Nothing here prints: failures come back in a struct err, with the first
 * lines of what gnuplot said.
 */
#ifndef FLEETSIM_REPORT_GNUPLOT_H
#define FLEETSIM_REPORT_GNUPLOT_H

#include <stddef.h>
#include <stdio.h>

#include "sim/err.h"

enum { GNUPLOT_TIMEOUT_S = 60, GNUPLOT_FONT_PT = 10 };
#define GNUPLOT_FONT "DejaVu Sans"

/* 1 when `gnuplot --version` runs and exits 0 (version gets its first line,
 * e.g. "gnuplot 5.4 patchlevel 4"), else 0. */
int gnuplot_probe(char *version, size_t len);
/* Runs script (a file name in dir) so that it draws output (a file name in
 * dir). Returns 0, or -1 with err set: gnuplot missing, killed after
 * timeout_s, or failed (the message quotes its stderr). */
int gnuplot_render(const char *dir, const char *script, const char *output, int timeout_s, struct err *err);
void gnuplot_write_string(FILE *fp, const char *s);
/* script: the script's own file name, for the comment on how to redraw. */
void gnuplot_write_preamble(FILE *fp, const char *script, const char *default_output, int width_px, int height_px);

#endif
