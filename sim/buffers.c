#define _DEFAULT_SOURCE /* madvise */
#include "sim/buffers.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int buffers_grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap && *p)
        return 0;
    uint32_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

int buffers_write_all(int fd, const void *p, size_t n)
{
    const char *at = p;
    while (n) {
        ssize_t w = write(fd, at, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        at += w;
        n -= (size_t)w;
    }
    return 0;
}

void buffers_prefer_huge_pages(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    enum { HUGE = 2u << 20 };
    uintptr_t from = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1), to = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice: refused, nothing changes */
#else
    (void)p;
    (void)n;
#endif
}
