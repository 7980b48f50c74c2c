/* The simulator's unit-test binary: every suite in tests/unit/suites.h. */
#include <stdio.h>

#include "tests/unit/suites.h"
#include "tests/unit/test.h"

int main(int argc, char **argv)
{
    if (argc > 1)
        test_filter(argv[1]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < sizeof test_suites / sizeof *test_suites; i++)
        test_suites[i]();
    return test_report("unit");
}
