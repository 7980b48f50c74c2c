#include "report/html.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void html_write_text(FILE *fp, const char *s)
{
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '&': fputs("&amp;", fp); break;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '"': fputs("&quot;", fp); break;
        case '\'': fputs("&#39;", fp); break;
        default: fputc(*p, fp);
        }
    }
}

static const char style_sheet[] =
    "body{font-family:\"DejaVu Sans\",Verdana,sans-serif;font-size:14px;color:#222;max-width:1100px;"
    "margin:1.5em auto;padding:0 1em;line-height:1.4}\n"
    "h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
    ".sub{color:#666;margin-top:0}\n"
    ".recommendation{background:#f3f7fc;border-left:4px solid #2a6ebb;padding:.6em 1em}\n"
    ".recommendation.bad{background:#fdf3f2;border-left-color:#c0392b}\n"
    ".note{background:#fff8e1;border-left:4px solid #f0ad00;padding:.5em 1em}\n"
    "table{border-collapse:collapse;margin:.5em 0;font-size:13px}\n"
    "th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;vertical-align:top}\n"
    "th{background:#f5f5f5}td.l,th.l{text-align:left}\n"
    ".band{display:block;color:#777;font-size:11px}\n"
    "figure{margin:1em 0}figcaption{color:#555;font-size:13px}\n"
    "figure svg{max-width:100%;height:auto}\n";

void html_begin(FILE *fp, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; img-src data:\">\n<title>",
          fp);
    html_write_text(fp, title);
    fputs("</title>\n<style>\n", fp);
    fputs(style_sheet, fp);
    fputs("</style>\n</head>\n<body>\n", fp);
}

void html_end(FILE *fp)
{
    fputs("</body>\n</html>\n", fp);
}

int html_inline_svg(FILE *fp, const char *path, struct err *err)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return err_set(err, path, 0, 0, "cannot read chart: %s", strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        fclose(in);
        return err_set(err, path, 0, 0, "out of memory");
    }
    for (;;) {
        if (n == cap) {
            char *nb = realloc(buf, 2 * cap + 1);
            if (!nb) {
                free(buf);
                fclose(in);
                return err_set(err, path, 0, 0, "out of memory");
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, in);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(in);
    fclose(in);
    buf[n] = '\0';
    char *svg = bad ? NULL : strstr(buf, "<svg");
    if (!svg) {
        free(buf);
        return err_set(err, path, 0, 0, "chart holds no svg element");
    }
    fwrite(svg, 1, n - (size_t)(svg - buf), fp);
    if (n && buf[n - 1] != '\n')
        fputc('\n', fp);
    free(buf);
    return 0;
}
