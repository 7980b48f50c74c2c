/* grow: room for n items in a buffer that doubles as it fills. The same as
 * sim/buffers.h's buffers_grow, which policies/ may not include: the
 * policies build alone, into plugins too (`make check-layers`). */
#ifndef FLEETSIM_POLICIES_GROW_H
#define FLEETSIM_POLICIES_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Room for n items of `size` bytes in *buf (capacity *cap, 64 items at
 * first). Returns 0, or -1 out of memory with *buf unchanged. */
static inline int policies_grow(void **buf, uint32_t *cap, uint32_t n, size_t size)
{
    if (n <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 64;
    while (c < n)
        c *= 2;
    void *p = realloc(*buf, (size_t)c * size);
    if (!p)
        return -1;
    *buf = p;
    *cap = c;
    return 0;
}

#endif
