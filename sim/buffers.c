/* _DEFAULT_SOURCE: madvise and MADV_HUGEPAGE under -std=c11. */
#define _DEFAULT_SOURCE 1
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
    /* x86-64's huge page (and arm64's with 4 KiB pages); where huge pages
     * are larger the advice covers none of them and changes nothing */
    enum { HUGE_PAGE_BYTES = 2u << 20 };
    uintptr_t from = ((uintptr_t)p + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1),
              to = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice: refused, nothing changes */
#else
    (void)p;
    (void)n;
#endif
}
