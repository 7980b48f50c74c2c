/* Unit tests of sim/buffers: the geometric growth and the large arrays that
 * start on a huge page. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

enum { MIB = 1 << 20 };

static void test_grow_doubles_and_keeps(void)
{
    int *p = NULL;
    uint32_t cap = 0;
    CHECK_INT(buffers_grow((void **)&p, &cap, 1, sizeof *p), 0);
    CHECK_INT(cap, 64);
    for (int i = 0; i < 64; i++)
        p[i] = i;
    CHECK_INT(buffers_grow((void **)&p, &cap, 65, sizeof *p), 0);
    CHECK_INT(cap, 128);
    CHECK_INT(buffers_grow((void **)&p, &cap, 600, sizeof *p), 0);
    CHECK_INT(cap, 1024);
    int same = 1;
    for (int i = 0; i < 64; i++)
        same &= p[i] == i;
    CHECK(same);
    free(p);
}

/* From 1 MiB on the array starts on a 2 MiB boundary and holds every byte
 * asked for; it is freed and grown as malloc's. */
static void test_alloc_large_aligned(void)
{
    static const size_t sizes[] = {MIB, MIB + 5, 2 * MIB, 17 * MIB + 3};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        unsigned char *p = buffers_alloc_large(n);
        if (!CHECK(p != NULL))
            return;
        CHECK_INT((uintptr_t)p % (2 * MIB), 0);
        memset(p, 0xa5, n);
        unsigned char *q = realloc(p, n + 3 * MIB);
        if (!CHECK(q != NULL))
            return; /* (p leaks: the test has failed) */
        CHECK_INT(q[0], 0xa5);
        CHECK_INT(q[n - 1], 0xa5);
        q[n + 3 * MIB - 1] = 1;
        free(q);
    }
}

/* Below 1 MiB it is malloc's block, and 0 bytes is still a block. */
static void test_alloc_large_small(void)
{
    char *p = buffers_alloc_large(100);
    CHECK(p != NULL);
    if (p)
        memset(p, 1, 100);
    free(p);
    p = buffers_alloc_large(0);
    CHECK(p != NULL);
    free(p);
}

void suite_buffers(void)
{
    test_run("buffers: growth doubles from 64 and keeps the elements", test_grow_doubles_and_keeps);
    test_run("buffers: a large array starts on a huge page, holds n bytes, reallocs", test_alloc_large_aligned);
    test_run("buffers: small and empty arrays are malloc's", test_alloc_large_small);
}
