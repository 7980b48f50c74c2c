/* html: writing HTML that is safe for any text from user data, and a
 * self-contained page: no scripts, no external resources, a Content Security
 * Policy that forbids fetching anything, so a report works offline and a
 * hostile team or scenario name cannot turn into markup.
 *
 * Every piece of text goes through html_write_text, which escapes & < > " '
 * (so the same call is right in element content and in quoted attributes).
 * SVG produced by gnuplot is inlined as it is, minus its XML prolog: gnuplot's
 * svg terminal escapes < and & in the text it draws.
 */
#ifndef FLEETSIM_REPORT_HTML_H
#define FLEETSIM_REPORT_HTML_H

#include <stdio.h>

#include "sim/err.h"

void html_write_text(FILE *fp, const char *s);
/* The doctype, head (charset, viewport, CSP, the house style sheet, title)
 * and the opening body tag. */
void html_begin(FILE *fp, const char *title);
void html_end(FILE *fp);
/* Copies the <svg> element of the file at path into fp. Returns 0, or -1
 * with err set when the file cannot be read or holds no <svg element. */
int html_inline_svg(FILE *fp, const char *path, struct err *err);

#endif
