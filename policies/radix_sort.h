/* radix_sort: ascending sorts by 64-bit keys in linear time, least
 * significant byte first, stable, skipping the bytes every key shares. For
 * long arrays where a comparison sort waits on each compare: a year-long
 * forecast's waits and demand edges (over a million; gsl_sort is a
 * heapsort, qsort calls its comparator ~20 times a key), and a pass's
 * ordering keys (an SRTF pass over 10,000 queued jobs). It lives in
 * policies/, like merge_sort.h, because policies/ may include nothing
 * else and every layer above may include it. */
#ifndef FLEETSIM_POLICIES_RADIX_SORT_H
#define FLEETSIM_POLICIES_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RADIX_SIGN_BIT ((uint64_t)1 << 63)

/* A signed integer as an unsigned key in the same order. */
static inline uint64_t radix_key_i64(int64_t v)
{
    return (uint64_t)v ^ RADIX_SIGN_BIT;
}

/* A double (not NaN) as an unsigned key in the order of its value: a
 * positive one with its sign bit set, a negative one with every bit
 * flipped. -0.0 comes just before 0.0; a caller that holds them equal
 * passes 0.0 for both. */
static inline uint64_t radix_key_double(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u & RADIX_SIGN_BIT ? ~u : u | RADIX_SIGN_BIT;
}

/* Sorts key[0..n) ascending; payload (NULL: none) moves with its key, and
 * equal keys keep their order. tmp_key and tmp_payload hold n each
 * (tmp_payload may be NULL when payload is). Allocates nothing. */
void radix_sort_u64(uint64_t *key, uint64_t *payload, size_t n, uint64_t *tmp_key, uint64_t *tmp_payload);
/* The same for signed keys, scratch allocated. Returns 0, or -1 (memory)
 * with both arrays untouched. */
int radix_sort_i64(int64_t *key, int64_t *payload, size_t n);
/* Sorts x[0..n) ascending, NaN-free: the order gsl_sort gives, except that
 * -0.0 comes before 0.0 where gsl_sort may leave them either way. Returns
 * 0, or -1 (memory) with x untouched. */
int radix_sort_doubles(double *x, size_t n);

#endif
