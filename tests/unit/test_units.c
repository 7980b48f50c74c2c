/* Tests of sim/units.c: each parser's units, what it refuses, and dates
 * (leap years, month lengths) against known Unix times. */
#include <math.h>
#include <stdio.h>

#include "sim/units.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

static double dur(const char *text)
{
    double s = -12345;
    return units_parse_duration(text, &s) == 0 ? s : NAN;
}

static void test_durations(void)
{
    CHECK_NEAR(dur("45s"), 45, 0);
    CHECK_NEAR(dur("1.5h"), 5400, 0);
    CHECK_NEAR(dur("90d"), 90 * 86400.0, 0);
    CHECK_NEAR(dur("26w"), 26 * 7 * 86400.0, 0);
    CHECK_NEAR(dur("2y"), 2 * 365 * 86400.0, 0);
    CHECK_NEAR(dur("30m"), 1800, 0);
    CHECK_NEAR(dur("30min"), 1800, 0);
    CHECK_NEAR(dur("250ms"), 0.25, 1e-15);
    CHECK_NEAR(dur("5us"), 5e-6, 1e-18);
    CHECK_NEAR(dur("1e3s"), 1000, 0);
    CHECK_NEAR(dur(".5h"), 1800, 0);
    CHECK_NEAR(dur("0"), 0, 0);
    CHECK_NEAR(dur("0.0"), 0, 0);
}

static void test_durations_refused(void)
{
    static const char *const bad[] = {"",     "90",  "1.5", "-5s", "+5s", "5 s", " 5s", "5s ", "5S",  "5sec",
                                      "5M",   "inf", "nan", "h",   "1e",  "0x10s", "5hh", "5d2", "..5s", "1e400s"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        double s = 7;
        if (!CHECK(units_parse_duration(bad[i], &s) != 0))
            printf("  accepted '%s'\n", bad[i]);
        CHECK_NEAR(s, 7, 0); /* untouched on failure */
    }
    double s;
    CHECK(units_parse_duration(NULL, &s) != 0);
}

static double bw(const char *text)
{
    double g;
    return units_parse_bandwidth(text, &g) == 0 ? g : NAN;
}

static void test_bandwidths(void)
{
    CHECK_NEAR(bw("400Gbps"), 400, 0);
    CHECK_NEAR(bw("400Gb/s"), 400, 0);
    CHECK_NEAR(bw("1.6Tbps"), 1600, 1e-9);
    CHECK_NEAR(bw("100Mbps"), 0.1, 1e-15);
    CHECK_NEAR(bw("10Kbps"), 1e-5, 1e-18);
    CHECK_NEAR(bw("1bps"), 1e-9, 1e-21);
    CHECK_NEAR(bw("50GB/s"), 400, 0);
    CHECK_NEAR(bw("900GBps"), 7200, 0);
    CHECK_NEAR(bw("1.8TB/s"), 14400, 1e-9);
    CHECK_NEAR(bw("64GB/s"), 512, 0);
    CHECK(isnan(bw("400")));
    CHECK(isnan(bw("400gbps")));
    CHECK(isnan(bw("400G")));
    CHECK(isnan(bw("400Gbit/s")));
    CHECK(isnan(bw("-1Gbps")));
}

static void test_sizes_power_money(void)
{
    double v;
    CHECK(units_parse_size_bytes("80GiB", &v) == 0 && v == 80.0 * 1073741824.0);
    CHECK(units_parse_size_bytes("141GB", &v) == 0 && v == 141e9);
    CHECK(units_parse_size_bytes("1.5TiB", &v) == 0 && v == 1.5 * 1099511627776.0);
    CHECK(units_parse_size_bytes("512B", &v) == 0 && v == 512);
    CHECK(units_parse_size_bytes("80", &v) != 0);
    CHECK(units_parse_size_bytes("80Gb", &v) != 0);
    CHECK(units_parse_power("10.2kW", &v) == 0 && fabs(v - 10200) < 1e-9);
    CHECK(units_parse_power("700W", &v) == 0 && v == 700);
    CHECK(units_parse_power("700", &v) != 0);
    CHECK(units_parse_money("250000", &v) == 0 && v == 250000);
    CHECK(units_parse_money("$250k", &v) == 0 && v == 250000);
    CHECK(units_parse_money("$1.2M", &v) == 0 && fabs(v - 1.2e6) < 1e-6);
    CHECK(units_parse_money("3M", &v) == 0 && v == 3e6);
    CHECK(units_parse_money("$", &v) != 0);
    CHECK(units_parse_money("250 k", &v) != 0);
    CHECK(units_parse_money("-5", &v) != 0);
}

static void test_dates(void)
{
    int64_t t;
    CHECK(units_parse_date("1970-01-01", &t) == 0 && t == 0);
    CHECK(units_parse_date("2027-01-01", &t) == 0 && t == INT64_C(1798761600));
    CHECK(units_parse_date("2000-02-29", &t) == 0 && t == INT64_C(951782400)); /* 400-year leap */
    CHECK(units_parse_date("2024-02-29", &t) == 0 && t == INT64_C(1709164800));
    CHECK(units_parse_date("2024-12-31", &t) == 0 && t == INT64_C(1735603200));
    CHECK(units_parse_date("2023-02-29", &t) != 0);
    CHECK(units_parse_date("2100-02-29", &t) != 0); /* century, not leap */
    CHECK(units_parse_date("2027-04-31", &t) != 0);
    CHECK(units_parse_date("2027-13-01", &t) != 0);
    CHECK(units_parse_date("2027-00-10", &t) != 0);
    CHECK(units_parse_date("2027-01-00", &t) != 0);
    CHECK(units_parse_date("1969-12-31", &t) != 0);
    CHECK(units_parse_date("2027-1-01", &t) != 0);
    CHECK(units_parse_date("2027/01/01", &t) != 0);
    CHECK(units_parse_date("2027-01-01T00", &t) != 0);
    /* every day from 1970 to 2100 round-trips through the formatter */
    int bad = 0;
    for (int64_t day = 0; day < 47847; day++) {
        char buf[16];
        units_format_date(buf, sizeof buf, day * 86400 + 3600);
        bad += units_parse_date(buf, &t) != 0 || t != day * 86400;
    }
    CHECK_INT(bad, 0);
}

static void test_format_duration(void)
{
    char b[32];
    units_format_duration(b, sizeof b, 26 * 7 * 86400.0);
    CHECK_STR(b, "26w");
    units_format_duration(b, sizeof b, 90 * 86400.0);
    CHECK_STR(b, "90d");
    units_format_duration(b, sizeof b, 365 * 86400.0);
    CHECK_STR(b, "1y");
    units_format_duration(b, sizeof b, 1800);
    CHECK_STR(b, "30m");
    units_format_duration(b, sizeof b, 1.5);
    CHECK_STR(b, "1.5s");
    units_format_duration(b, sizeof b, 0.25);
    CHECK_STR(b, "250ms");
    units_format_duration(b, sizeof b, 0);
    CHECK_STR(b, "0");
    units_format_seconds(b, sizeof b, 1500000);
    CHECK_STR(b, "1.5"); /* unchanged */
}

void suite_units(void)
{
    test_run("units durations", test_durations);
    test_run("units durations refused", test_durations_refused);
    test_run("units bandwidths", test_bandwidths);
    test_run("units sizes, power, money", test_sizes_power_money);
    test_run("units dates", test_dates);
    test_run("units format duration", test_format_duration);
}
