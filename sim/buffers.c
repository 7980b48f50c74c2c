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

/* x86-64's huge page (and arm64's with 4 KiB pages); where huge pages are
 * larger the advice covers none of them and changes nothing */
enum { HUGE_PAGE_BYTES = 2u << 20 };

void buffers_prefer_huge_pages(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    uintptr_t from = ((uintptr_t)p + HUGE_PAGE_BYTES - 1) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1),
              to = ((uintptr_t)p + n) & ~(uintptr_t)(HUGE_PAGE_BYTES - 1);
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_HUGEPAGE); /* advice: refused, nothing changes */
#else
    (void)p;
    (void)n;
#endif
}

void *buffers_alloc_large(size_t n)
{
    /* from half a huge page on: rounding up at most doubles what it holds */
    if (n < HUGE_PAGE_BYTES / 2 || n > SIZE_MAX - HUGE_PAGE_BYTES)
        return malloc(n ? n : 1);
    /* malloc's large blocks start 16 bytes past a page and end where they
     * end: the 2 MiB pages they only partly cover (a few hundred 4 KiB
     * pages at each end of HPC2N's arrays) fault page by page */
    size_t whole = (n + HUGE_PAGE_BYTES - 1) & ~(size_t)(HUGE_PAGE_BYTES - 1);
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE_BYTES, whole) != 0)
        return malloc(n);
    buffers_prefer_huge_pages(p, whole);
    return p;
}
