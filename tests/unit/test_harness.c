/* test_harness: the functions of tests/unit/test.h, shared by every unit-test
 * binary (the simulator's and the agent's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test.h"

static int failed_checks;
static int passed, failed, skipped;
static const char *current;
static const char *only; /* run only tests whose name contains this */

void test_filter(const char *name_part)
{
    only = name_part;
}

int test_report(const char *group)
{
    printf("%s: %d passed, %d failed, %d skipped\n", group, passed, failed, skipped);
    return failed ? 1 : 0;
}


void test_run(const char *name, void (*fn)(void))
{
    if (only && !strstr(name, only))
        return;
    int before = failed_checks;
    int skipped_before = skipped;
    current = name;
    fn();
    if (skipped != skipped_before)
        return;
    if (failed_checks == before)
        passed++;
    else
        failed++;
}

void test_skip(const char *why)
{
    skipped++;
    printf("skip: %s: %s\n", current, why);
}

int test_check(int ok, const char *expr, const char *file, int line)
{
    if (!ok) {
        failed_checks++;
        printf("FAIL %s: %s:%d: %s\n", current, file, line, expr);
    }
    return ok;
}

int test_check_int(long long got, long long want, const char *expr, const char *file, int line)
{
    if (got != want) {
        failed_checks++;
        printf("FAIL %s: %s:%d: %s is %lld, want %lld\n", current, file, line, expr, got, want);
        return 0;
    }
    return 1;
}

int test_check_str(const char *got, const char *want, const char *expr, const char *file, int line)
{
    if (!got || !want || strcmp(got, want) != 0) {
        failed_checks++;
        printf("FAIL %s: %s:%d: %s is \"%s\", want \"%s\"\n", current, file, line, expr,
               got ? got : "(null)", want ? want : "(null)");
        return 0;
    }
    return 1;
}

int test_check_near(double got, double want, double tol, const char *expr, const char *file, int line)
{
    double d = got - want;
    if (d < 0)
        d = -d;
    if (!(d <= tol)) {
        failed_checks++;
        printf("FAIL %s: %s:%d: %s is %.9g, want %.9g (tolerance %g)\n", current, file, line, expr, got,
               want, tol);
        return 0;
    }
    return 1;
}

const char *test_shared_trace(const char *name)
{
    static char path[4096];
    const char *dir = getenv("FLEETSIM_SHARED_TRACES");
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "../shared/traces", name);
    return access(path, R_OK) == 0 ? path : NULL;
}

