/* test.h: the unit-test harness. A suite is a function that calls
 * test_run() for each test; a test fails if any CHECK in it fails. The runner
 * prints every failure with file:line and ends with "N passed, N failed".
 */
#ifndef FLEETSIM_TESTS_UNIT_TEST_H
#define FLEETSIM_TESTS_UNIT_TEST_H

#include <stdint.h>
#include <string.h>

void test_run(const char *name, void (*fn)(void));
int test_check(int ok, const char *expr, const char *file, int line);
int test_check_int(long long got, long long want, const char *expr, const char *file, int line);
int test_check_str(const char *got, const char *want, const char *expr, const char *file, int line);
int test_check_near(double got, double want, double tol, const char *expr, const char *file, int line);
/* Path of the shared traces folder, or NULL (the test then skips). */
const char *test_shared_trace(const char *name);
void test_skip(const char *why);
/* Runs only tests whose name contains name_part (NULL: all). */
void test_filter(const char *name_part);
/* Prints "GROUP: N passed, N failed, N skipped"; returns the exit status. */
int test_report(const char *group);

#define CHECK(cond) test_check(!!(cond), #cond, __FILE__, __LINE__)
#define CHECK_INT(got, want) test_check_int((long long)(got), (long long)(want), #got, __FILE__, __LINE__)
#define CHECK_STR(got, want) test_check_str((got), (want), #got, __FILE__, __LINE__)
#define CHECK_NEAR(got, want, tol) test_check_near((got), (want), (tol), #got, __FILE__, __LINE__)

#endif
