/* Tests of policies/length_bounds against the notes kept in a list: after
 * each of thousands of random notes (sizes past the table's room, lengths
 * from 1 us to years so the top band rises late, starts in any order, some
 * never found: INT64_MAX), every question gets the latest start noted for
 * a size no larger and a length in a lower band than the asked one's, over
 * the notes the table kept (those of its first LENGTH_BOUNDS_SIZES sizes). */
#include <stdio.h>
#include <stdlib.h>

#include "policies/length_bounds.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

struct note {
    int64_t slots, dur, at;
};

static int64_t random_length(struct pcg32 *r)
{
    /* 1 us to ~2^45 us (a year), spread over the bands */
    uint32_t band = pcg32_bounded(r, 46);
    return ((int64_t)1 << band) + (int64_t)pcg32_bounded(r, 1u << (band < 31 ? band : 31));
}

static void test_matches_list(void)
{
    enum { NOTES = 3000 };
    struct note *kept = malloc(NOTES * sizeof *kept);
    int64_t sizes_seen[64];
    uint32_t n_sizes = 0;
    struct pcg32 r;
    pcg32_stream(&r, 7, RNG_TEST, 77);
    for (int round = 0; round < 4 && kept; round++) {
        struct length_bounds b;
        length_bounds_clear(&b);
        uint32_t n = 0;
        n_sizes = 0;
        for (uint32_t i = 0; i < NOTES; i++) {
            struct note x = {1 + (int64_t)pcg32_bounded(&r, round < 2 ? 8 : 24), random_length(&r),
                             pcg32_bounded(&r, 50) == 0 ? INT64_MAX : (int64_t)pcg32_bounded(&r, 1u << 30)};
            length_bounds_note(&b, x.slots, x.dur, x.at);
            /* the table keeps the notes of its first sizes */
            uint32_t s = 0;
            while (s < n_sizes && sizes_seen[s] != x.slots)
                s++;
            if (s == n_sizes && n_sizes < LENGTH_BOUNDS_SIZES)
                sizes_seen[n_sizes++] = x.slots;
            if (s < n_sizes)
                kept[n++] = x;
            int64_t slots = 1 + (int64_t)pcg32_bounded(&r, 24), dur = random_length(&r);
            int64_t want = INT64_MIN;
            for (uint32_t k = 0; k < n; k++)
                if (kept[k].slots <= slots && length_band(kept[k].dur) < length_band(dur) && kept[k].at > want)
                    want = kept[k].at;
            int64_t got = length_bounds_below(&b, slots, dur);
            if (!CHECK(got == want)) {
                printf("  round %d, note %u: %lld slots for %lld us: %lld, the list says %lld\n", round, i,
                       (long long)slots, (long long)dur, (long long)got, (long long)want);
                break;
            }
        }
    }
    free(kept);
}

static void test_band(void)
{
    CHECK(length_band(0) == 0);
    CHECK(length_band(1) == 0);
    CHECK(length_band(2) == 1);
    CHECK(length_band(3) == 1);
    CHECK(length_band(4) == 2);
    CHECK(length_band(INT64_MAX) == 62);
}

void suite_length_bounds(void)
{
    test_run("length bounds: floor(log2) bands", test_band);
    test_run("length bounds: the latest start below a band, as a list of notes says", test_matches_list);
}
