#include "report/csv.h"

#include <math.h>
#include <string.h>

void csv_write_field(FILE *fp, const char *s)
{
    size_t n = strlen(s);
    int quote = n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t');
    if (!quote && strpbrk(s, ",\"\r\n"))
        quote = 1;
    if (!quote) {
        fputs(s, fp);
        return;
    }
    fputc('"', fp);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', fp);
        fputc(*p, fp);
    }
    fputc('"', fp);
}

void csv_format_number(char *buf, size_t len, double v, const char *missing)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "%s", missing);
        return;
    }
    if (v == 0)
        v = 0; /* -0 prints as "-0" */
    snprintf(buf, len, "%.10g", v);
}

void csv_write_number(FILE *fp, double v)
{
    char buf[CSV_NUMBER_MAX];
    csv_format_number(buf, sizeof buf, v, "");
    fputs(buf, fp);
}

void csv_write_dat_number(FILE *fp, double v)
{
    char buf[CSV_NUMBER_MAX];
    csv_format_number(buf, sizeof buf, v, "NaN");
    fputs(buf, fp);
}
