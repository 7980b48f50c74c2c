/* unit_main.c: the harness of tests/unit/test.h for the agent's unit tests
 * (a separate binary, build/tests/agent_unit_tests, so the agent's modules
 * and their SQLite/libdl dependencies stay out of the simulator's tests). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/test.h"

void suite_agent_config(void);
void suite_agent_inventory(void);
void suite_agent_protocol(void);
void suite_agent_scheduler(void);
void suite_agent_store(void);

static int failed_checks, passed, failed, skipped;
static const char *current;
static const char *only;

void test_run(const char *name, void (*fn)(void))
{
    if (only && !strstr(name, only))
        return;
    int before = failed_checks, skipped_before = skipped;
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
        printf("FAIL %s: %s:%d: %s is \"%s\", want \"%s\"\n", current, file, line, expr, got ? got : "(null)",
               want ? want : "(null)");
        return 0;
    }
    return 1;
}

int test_check_near(double got, double want, double tol, const char *expr, const char *file, int line)
{
    double d = got > want ? got - want : want - got;
    if (!(d <= tol)) {
        failed_checks++;
        printf("FAIL %s: %s:%d: %s is %.9g, want %.9g\n", current, file, line, expr, got, want);
        return 0;
    }
    return 1;
}

const char *test_shared_trace(const char *name)
{
    (void)name;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        only = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    suite_agent_config();
    suite_agent_inventory();
    suite_agent_protocol();
    suite_agent_scheduler();
    suite_agent_store();
    printf("agent unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
