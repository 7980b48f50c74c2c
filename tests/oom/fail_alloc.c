/* fail_alloc.c: an LD_PRELOAD library that makes exactly one allocation of
 * a process fail, so a test can walk every place where memory can run out.
 *
 *   FLEETSIM_FAIL_ALLOC=N    the N-th call (from 1) of malloc, calloc,
 *                            realloc, posix_memalign, aligned_alloc or
 *                            memalign returns NULL with errno ENOMEM;
 *                            0 or unset: none fails
 *   FLEETSIM_ALLOC_COUNT=F   at exit, the number of calls is written to F
 *
 * Only the process's own calls count, from its first one (the dynamic
 * loader's and the libraries' set-up included): the same run gives the same
 * count, so N walks the same places each time. Threads share the count.
 * glibc routes its own allocations (strdup, fopen, qsort's buffer) through
 * these symbols too, and exports the real ones as __libc_*.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t k, size_t n);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);

static atomic_ulong calls;
static unsigned long fail_at; /* read once, before main, from the environment */

__attribute__((constructor)) static void fail_alloc_init(void)
{
    const char *s = getenv("FLEETSIM_FAIL_ALLOC");
    fail_at = s ? strtoul(s, NULL, 10) : 0;
}

__attribute__((destructor)) static void fail_alloc_report(void)
{
    const char *path = getenv("FLEETSIM_ALLOC_COUNT");
    if (!path)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%lu\n", (unsigned long)atomic_load(&calls));
        fclose(f);
    }
}

/* Whether this call is the one that fails. */
static int fails(void)
{
    unsigned long k = atomic_fetch_add(&calls, 1) + 1;
    if (fail_at && k == fail_at) {
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    return fails() ? NULL : __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    return fails() ? NULL : __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    /* realloc(p, 0) frees: that cannot fail */
    if (p && n == 0)
        return __libc_realloc(p, n);
    return fails() ? NULL : __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
    return fails() ? NULL : __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
    return fails() ? NULL : __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    if (align % sizeof(void *) != 0 || (align & (align - 1)) != 0)
        return EINVAL;
    if (fails())
        return ENOMEM;
    void *p = __libc_memalign(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
