#include "sim/radix_sort.h"

#include <stdlib.h>
#include <string.h>

/* Sorts unsigned keys (with their payloads) by bytes, least significant
 * first: one pass counts every byte position, then one stable scatter per
 * position where the keys differ. */
static int sort_u64(uint64_t *key, uint64_t *payload, size_t n)
{
    if (n < 2)
        return 0;
    uint64_t *tmp_key = malloc(n * sizeof *tmp_key);
    uint64_t *tmp_payload = payload ? malloc(n * sizeof *tmp_payload) : NULL;
    size_t(*count)[256] = calloc(8, sizeof *count);
    if (!tmp_key || (payload && !tmp_payload) || !count) {
        free(tmp_key);
        free(tmp_payload);
        free(count);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        for (unsigned b = 0; b < 8; b++)
            count[b][(key[i] >> (8 * b)) & 0xff]++;
    uint64_t *from_key = key, *to_key = tmp_key, *from_payload = payload, *to_payload = tmp_payload;
    for (unsigned b = 0; b < 8; b++) {
        if (count[b][(key[0] >> (8 * b)) & 0xff] == n)
            continue; /* every key has this byte: the pass would not move one */
        size_t at[256], sum = 0;
        for (unsigned d = 0; d < 256; d++) {
            at[d] = sum;
            sum += count[b][d];
        }
        for (size_t i = 0; i < n; i++) {
            size_t to = at[(from_key[i] >> (8 * b)) & 0xff]++;
            to_key[to] = from_key[i];
            if (payload)
                to_payload[to] = from_payload[i];
        }
        uint64_t *t = from_key;
        from_key = to_key;
        to_key = t;
        t = from_payload;
        from_payload = to_payload;
        to_payload = t;
    }
    if (from_key != key) {
        memcpy(key, from_key, n * sizeof *key);
        if (payload)
            memcpy(payload, from_payload, n * sizeof *payload);
    }
    free(tmp_key);
    free(tmp_payload);
    free(count);
    return 0;
}

/* Signed keys in the order of unsigned ones: the sign bit flipped. */
#define SIGN_BIT ((uint64_t)1 << 63)

int radix_sort_i64(int64_t *key, int64_t *payload, size_t n)
{
    uint64_t *k = (uint64_t *)key; /* int64_t and uint64_t may alias each other */
    for (size_t i = 0; i < n; i++)
        k[i] ^= SIGN_BIT;
    int rc = sort_u64(k, (uint64_t *)payload, n);
    for (size_t i = 0; i < n; i++)
        k[i] ^= SIGN_BIT;
    return rc;
}

/* A double's bits in the order of its value: a positive one with its sign
 * bit set, a negative one with every bit flipped. */
static uint64_t double_key(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u & SIGN_BIT ? ~u : u | SIGN_BIT;
}

static double key_double(uint64_t u)
{
    u = u & SIGN_BIT ? u & ~SIGN_BIT : ~u;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

int radix_sort_doubles(double *x, size_t n)
{
    uint64_t *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < n; i++)
        k[i] = double_key(x[i]);
    int rc = sort_u64(k, NULL, n);
    if (rc == 0)
        for (size_t i = 0; i < n; i++)
            x[i] = key_double(k[i]);
    free(k);
    return rc;
}
