/* buffers: small chores every module otherwise writes again: growing a
 * dynamic array geometrically, asking for huge pages under a large one,
 * and writing a whole buffer to a descriptor through short writes and
 * signals.
 */
#ifndef FLEETSIM_SIM_BUFFERS_H
#define FLEETSIM_SIM_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

/* Makes *p hold at least `need` elements of `elem` bytes (doubling from 64);
 * *cap is its capacity. Returns 0, or -1 with *p untouched. */
int buffers_grow(void **p, uint32_t *cap, uint32_t need, size_t elem);
/* Asks for huge pages under [p, p + n), an array about to be filled,
 * where the system has them (Linux's transparent huge pages, over the
 * whole 2 MiB pages the range holds; elsewhere nothing). On a virtual
 * machine whose page faults are dear, a trace's first touch of its arrays
 * is then one fault a 2 MiB instead of one a 4 KiB. */
void buffers_prefer_huge_pages(void *p, size_t n);
/* malloc(n) for an array about to be filled: from 1 MiB on, aligned on a
 * huge page and rounded up to whole ones, with the advice above, so that
 * none of it faults 4 KiB at a time. Freed by free(); realloc keeps the
 * bytes (not the alignment). NULL when out of memory. */
void *buffers_alloc_large(size_t n);
/* Writes all n bytes, retrying on EINTR. Returns 0 or -1 (errno set). */
int buffers_write_all(int fd, const void *p, size_t n);

#endif
