/* Tests of policies/radix_sort.c against qsort: random keys over the whole
 * int64 range and over narrow ones (where byte passes are skipped), many
 * ties (payloads keep their input order), and doubles of both signs
 * including zeros, infinities and subnormals. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/pcg32.h"
#include "policies/radix_sort.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

struct keyed {
    int64_t key, payload;
};

static int keyed_cmp(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    /* payloads are the input positions: a stable sort keeps them rising */
    return (x->payload > y->payload) - (x->payload < y->payload);
}

static int64_t random_key(struct pcg32 *rng, int shape)
{
    uint64_t u = (uint64_t)pcg32_next(rng) << 32 | pcg32_next(rng);
    switch (shape) {
    case 0:
        return (int64_t)u; /* the whole range, both signs */
    case 1:
        return (int64_t)(u % 7) - 3; /* ties everywhere, around zero */
    case 2:
        return (int64_t)(u % 1000000) * 1000000; /* microsecond times */
    default:
        return u & 1 ? INT64_MIN : INT64_MAX;
    }
}

static void test_i64_matches_stable_qsort(void)
{
    struct pcg32 rng;
    pcg32_seed(&rng, 11, 3);
    for (int shape = 0; shape < 4; shape++) {
        for (size_t n = 0; n < 3000; n = n * 3 + 1) {
            int64_t *key = malloc((n + 1) * sizeof *key), *payload = malloc((n + 1) * sizeof *payload);
            struct keyed *want = malloc((n + 1) * sizeof *want);
            for (size_t i = 0; i < n; i++) {
                key[i] = random_key(&rng, shape);
                payload[i] = (int64_t)i;
                want[i] = (struct keyed){key[i], (int64_t)i};
            }
            qsort(want, n, sizeof *want, keyed_cmp);
            CHECK_INT(radix_sort_i64(key, payload, n), 0);
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                bad += key[i] != want[i].key || payload[i] != want[i].payload;
            int ok = CHECK_INT(bad, 0);
            free(key);
            free(payload);
            free(want);
            if (!ok)
                return;
        }
    }
    int64_t one = 5;
    CHECK_INT(radix_sort_i64(&one, NULL, 1), 0);
    CHECK_INT(one, 5);
}

static int double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_doubles_match_qsort(void)
{
    static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, 5e-324, -5e-324, 1.0, -1.0, 1.7976931348623157e308};
    struct pcg32 rng;
    pcg32_seed(&rng, 12, 4);
    enum { N = 5000 };
    double *x = malloc(N * sizeof *x), *want = malloc(N * sizeof *want);
    for (size_t i = 0; i < N; i++) {
        double u = pcg32_unit(&rng);
        x[i] = i % 10 == 0   ? special[i / 10 % (sizeof special / sizeof *special)]
               : i % 3 == 0 ? floor(u * 100) - 50 /* ties */
                            : (u - 0.3) * pow(10, (double)(i % 40) - 20);
        want[i] = x[i];
    }
    qsort(want, N, sizeof *want, double_cmp);
    CHECK_INT(radix_sort_doubles(x, N), 0);
    size_t bad = 0, zeros_in_order = 1;
    for (size_t i = 0; i < N; i++) {
        bad += x[i] != want[i]; /* -0.0 == 0.0: their order is the one freedom */
        if (i > 0 && x[i] == 0 && x[i - 1] == 0 && signbit(x[i]) && !signbit(x[i - 1]))
            zeros_in_order = 0;
    }
    CHECK_INT(bad, 0);
    CHECK(zeros_in_order); /* -0.0 before 0.0, as documented */
    for (size_t i = 1; i < N; i++)
        if (!CHECK(x[i - 1] <= x[i]))
            break;
    free(x);
    free(want);
}

void suite_radix_sort(void)
{
    test_run("radix sort: int64 keys and payloads as a stable qsort", test_i64_matches_stable_qsort);
    test_run("radix sort: doubles as qsort, signs, zeros, infinities", test_doubles_match_qsort);
}
