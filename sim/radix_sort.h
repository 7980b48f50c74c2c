/* radix_sort: ascending sorts of 64-bit keys in linear time, for the
 * arrays of a year-long forecast (over a million waits, two and a half
 * million demand edges), where a comparison sort was a tenth of a
 * replication: gsl_sort is a heapsort, qsort calls its comparator ~20
 * times a key. Least significant byte first, stable, skipping the bytes
 * every key shares; scratch as large as the input is allocated per call.
 */
#ifndef FLEETSIM_SIM_RADIX_SORT_H
#define FLEETSIM_SIM_RADIX_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sorts key[0..n) ascending; payload (NULL: none) moves with its key, and
 * keys that are equal keep their order. Returns 0, or -1 (memory) with
 * both arrays untouched. */
int radix_sort_i64(int64_t *key, int64_t *payload, size_t n);
/* Sorts x[0..n) ascending, NaN-free: the order gsl_sort gives, except that
 * -0.0 comes before 0.0 where gsl_sort may leave them either way. Returns
 * 0, or -1 (memory) with x untouched. */
int radix_sort_doubles(double *x, size_t n);

#endif
