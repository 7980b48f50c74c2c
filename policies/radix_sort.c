#include "policies/radix_sort.h"

#include <stdlib.h>

/* One pass counts every byte position; then one stable scatter per
 * position where the keys differ. */
void radix_sort_u64(uint64_t *key, uint64_t *payload, size_t n, uint64_t *tmp_key, uint64_t *tmp_payload)
{
    if (n < 2)
        return;
    size_t count[8][256]; /* 16 KB of stack: passes may run in parallel threads */
    memset(count, 0, sizeof count);
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
}

int radix_sort_i64(int64_t *key, int64_t *payload, size_t n)
{
    if (n < 2)
        return 0;
    uint64_t *tmp_key = malloc(n * sizeof *tmp_key);
    uint64_t *tmp_payload = payload ? malloc(n * sizeof *tmp_payload) : NULL;
    if (!tmp_key || (payload && !tmp_payload)) {
        free(tmp_key);
        free(tmp_payload);
        return -1;
    }
    uint64_t *k = (uint64_t *)key; /* int64_t and uint64_t may alias each other */
    for (size_t i = 0; i < n; i++)
        k[i] = radix_key_i64(key[i]);
    radix_sort_u64(k, (uint64_t *)payload, n, tmp_key, tmp_payload);
    for (size_t i = 0; i < n; i++)
        k[i] ^= RADIX_SIGN_BIT; /* back from radix_key_i64 */
    free(tmp_key);
    free(tmp_payload);
    return 0;
}

/* radix_key_double undone. */
static double key_double(uint64_t u)
{
    u = u & RADIX_SIGN_BIT ? u & ~RADIX_SIGN_BIT : ~u;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

int radix_sort_doubles(double *x, size_t n)
{
    if (n < 2)
        return 0;
    uint64_t *k = malloc(2 * n * sizeof *k);
    if (!k)
        return -1;
    for (size_t i = 0; i < n; i++)
        k[i] = radix_key_double(x[i]);
    radix_sort_u64(k, NULL, n, k + n, NULL);
    for (size_t i = 0; i < n; i++)
        x[i] = key_double(k[i]);
    free(k);
    return 0;
}
