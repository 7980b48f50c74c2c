#include "sim/units.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void units_format_seconds(char *buf, size_t len, int64_t us)
{
    if (us < 0) {
        snprintf(buf, len, "-1");
        return;
    }
    long long whole = us / 1000000, frac = us % 1000000;
    if (!frac) {
        snprintf(buf, len, "%lld", whole);
        return;
    }
    int digits = 6;
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, len, "%lld.%0*lld", whole, digits, frac);
}

struct unit {
    const char *name;
    double factor;
};

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The leading non-negative decimal number of text; *rest points after it.
 * Written by hand rather than with strtod so that "inf", "nan", hex floats,
 * leading blanks and signs are refused, and so that the "e" of an exponent
 * is only taken when digits follow (no unit starts with "e", but be safe). */
static int parse_number(const char *text, double *value, const char **rest)
{
    const char *p = text;
    size_t int_digits = 0, frac_digits = 0;
    while (is_digit(*p)) {
        p++;
        int_digits++;
    }
    if (*p == '.') {
        p++;
        while (is_digit(*p)) {
            p++;
            frac_digits++;
        }
    }
    if (int_digits + frac_digits == 0)
        return -1;
    if (*p == 'e' || *p == 'E') {
        const char *q = p + 1;
        if (*q == '+' || *q == '-')
            q++;
        if (is_digit(*q)) {
            while (is_digit(*q))
                q++;
            p = q;
        }
    }
    char buf[64];
    size_t n = (size_t)(p - text);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    double v;
    if (sscanf(buf, "%lf", &v) != 1 || !isfinite(v))
        return -1;
    *value = v;
    *rest = p;
    return 0;
}

static int parse_with_units(const char *text, const struct unit *units, size_t n, int bare_ok,
                            double *out)
{
    double v;
    const char *rest;
    if (!text || parse_number(text, &v, &rest) != 0)
        return -1;
    if (*rest == '\0') {
        if (!bare_ok)
            return -1;
        *out = v;
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rest, units[i].name) == 0) {
            double r = v * units[i].factor;
            if (!isfinite(r))
                return -1;
            *out = r;
            return 0;
        }
    }
    return -1;
}

int units_parse_duration(const char *text, double *seconds)
{
    static const struct unit units[] = {
        {"us", 1e-6}, {"ms", 1e-3}, {"s", 1},           {"m", 60},         {"min", 60},
        {"h", 3600},  {"d", 86400}, {"w", 7 * 86400.0}, {"y", 365 * 86400.0},
    };
    double v;
    const char *rest;
    /* Zero is zero in any unit, so "0" needs none. */
    if (text && parse_number(text, &v, &rest) == 0 && *rest == '\0' && v == 0) {
        *seconds = 0;
        return 0;
    }
    return parse_with_units(text, units, sizeof units / sizeof *units, 0, seconds);
}

int units_parse_bandwidth(const char *text, double *gbps)
{
    static const char *const prefixes[] = {"", "K", "M", "G", "T"};
    static const double scale[] = {1e-9, 1e-6, 1e-3, 1, 1e3};
    /* Both spellings for each: "Gbps" / "Gb/s", "GBps" / "GB/s". */
    struct unit units[5 * 4];
    char names[5 * 4][8];
    size_t n = 0;
    for (size_t i = 0; i < 5; i++) {
        static const char *const tails[] = {"bps", "b/s", "Bps", "B/s"};
        for (size_t j = 0; j < 4; j++) {
            snprintf(names[n], sizeof names[n], "%s%s", prefixes[i], tails[j]);
            units[n].name = names[n];
            units[n].factor = scale[i] * (j >= 2 ? 8 : 1);
            n++;
        }
    }
    return parse_with_units(text, units, n, 0, gbps);
}

int units_parse_size_bytes(const char *text, double *bytes)
{
    static const struct unit units[] = {
        {"B", 1},
        {"KB", 1e3},
        {"MB", 1e6},
        {"GB", 1e9},
        {"TB", 1e12},
        {"PB", 1e15},
        {"KiB", 1024.0},
        {"MiB", 1024.0 * 1024},
        {"GiB", 1024.0 * 1024 * 1024},
        {"TiB", 1024.0 * 1024 * 1024 * 1024},
        {"PiB", 1024.0 * 1024 * 1024 * 1024 * 1024},
    };
    return parse_with_units(text, units, sizeof units / sizeof *units, 0, bytes);
}

int units_parse_power(const char *text, double *watts)
{
    static const struct unit units[] = {{"W", 1}, {"kW", 1e3}, {"MW", 1e6}};
    return parse_with_units(text, units, sizeof units / sizeof *units, 0, watts);
}

int units_parse_money(const char *text, double *usd)
{
    static const struct unit units[] = {{"k", 1e3}, {"M", 1e6}, {"B", 1e9}};
    if (text && text[0] == '$')
        text++;
    return parse_with_units(text, units, sizeof units / sizeof *units, 1, usd);
}

/* Howard Hinnant's days_from_civil: exact for the proleptic Gregorian
 * calendar, with no dependence on timegm or the process's time zone. */
int64_t units_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* The inverse of units_days_from_civil (Hinnant's civil_from_days). */
void units_format_date(char *buf, size_t len, int64_t unix_s)
{
    int64_t z = (unix_s >= 0 ? unix_s : unix_s - 86399) / 86400 + 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    const unsigned d = doy - (153 * mp + 2) / 5 + 1;
    const unsigned m = mp < 10 ? mp + 3 : mp - 9;
    const int64_t y = (int64_t)yoe + era * 400 + (m <= 2);
    snprintf(buf, len, "%04lld-%02u-%02u", (long long)y, m, d);
}

static unsigned days_in_month(unsigned y, unsigned m)
{
    static const unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

static int parse_fixed_digits(const char *p, size_t n, unsigned *out)
{
    unsigned v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(p[i]))
            return -1;
        v = v * 10 + (unsigned)(p[i] - '0');
    }
    *out = v;
    return 0;
}

int units_parse_date(const char *text, int64_t *unix_s)
{
    unsigned y, m, d;
    if (!text || strlen(text) != 10 || text[4] != '-' || text[7] != '-')
        return -1;
    if (parse_fixed_digits(text, 4, &y) || parse_fixed_digits(text + 5, 2, &m) ||
        parse_fixed_digits(text + 8, 2, &d))
        return -1;
    if (y < 1970 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
        return -1;
    *unix_s = units_days_from_civil(y, m, d) * 86400;
    return 0;
}

void units_format_duration(char *buf, size_t len, double seconds)
{
    static const struct unit units[] = {
        {"y", 365 * 86400.0}, {"w", 7 * 86400.0}, {"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1},
    };
    if (seconds == 0) {
        snprintf(buf, len, "0");
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        double q = seconds / units[i].factor;
        if (q >= 1 && q == floor(q)) {
            snprintf(buf, len, "%.0f%s", q, units[i].name);
            return;
        }
    }
    if (seconds >= 1)
        snprintf(buf, len, "%gs", seconds);
    else if (seconds >= 1e-3)
        snprintf(buf, len, "%gms", seconds * 1e3);
    else
        snprintf(buf, len, "%gus", seconds * 1e6);
}
