/* PCG32 against the reference's published test vectors (pcg32-demo, seed 42,
 * stream 54; ../shared/reference/integration-notes.md section 4). */
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

static void test_seeding_state(void)
{
    struct pcg32 r;
    pcg32_seed(&r, 42, 54);
    CHECK_INT(r.inc, 0x6d);
    CHECK(r.state == 0x185706b82c2e03f8ULL);
}

static void test_demo_rounds(void)
{
    static const uint32_t round1[6] = {0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e};
    static const char coins[] = "HHTTTHTHHHTHTTTHHHHHTTTHHHTHTHTHTTHTTTHHHHHHTTTTHHTTTTTHTTTTTTTHT";
    static const int dice[33] = {3, 4, 1, 1, 2, 2, 3, 2, 4, 3, 2, 4, 3, 3, 5, 2, 3,
                                 1, 3, 1, 5, 1, 4, 1, 5, 6, 4, 6, 6, 2, 6, 3, 3};
    static const uint32_t round2[6] = {0x74ab93ad, 0x1c1da000, 0x494ff896, 0x34462f2f, 0xd308a3e5, 0x0fa83bab};
    struct pcg32 r;
    pcg32_seed(&r, 42, 54);
    for (int i = 0; i < 6; i++)
        CHECK_INT(pcg32_next(&r), round1[i]);
    char got[66];
    for (int i = 0; i < 65; i++)
        got[i] = pcg32_bounded(&r, 2) ? 'H' : 'T';
    got[65] = 0;
    CHECK_STR(got, coins);
    for (int i = 0; i < 33; i++)
        CHECK_INT((int)pcg32_bounded(&r, 6) + 1, dice[i]);
    for (uint32_t i = 52; i > 1; i--)
        (void)pcg32_bounded(&r, i); /* the demo deals a deck of 52 cards */
    for (int i = 0; i < 6; i++)
        CHECK_INT(pcg32_next(&r), round2[i]);
}

static void test_streams_independent(void)
{
    struct pcg32 a, b, a2;
    pcg32_stream(&a, 7, RNG_ARRIVALS, 0);
    pcg32_stream(&b, 7, RNG_DURATIONS, 0);
    pcg32_stream(&a2, 7, RNG_ARRIVALS, 0);
    int same = 0;
    for (int i = 0; i < 100; i++) {
        uint32_t x = pcg32_next(&a);
        same += x == pcg32_next(&b);
        CHECK_INT(x, pcg32_next(&a2)); /* a stream is a pure function of (seed, purpose, index) */
    }
    CHECK(same < 3);
    struct pcg32 n0, n1;
    pcg32_stream(&n0, 7, RNG_FAILURES, 0);
    pcg32_stream(&n1, 7, RNG_FAILURES, 1);
    CHECK(pcg32_next(&n0) != pcg32_next(&n1));
}

static void test_unit_range_and_mean(void)
{
    struct pcg32 r;
    pcg32_stream(&r, 1, RNG_TEST, 0);
    double sum = 0;
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        double u = pcg32_unit(&r);
        bad += !(u >= 0.0 && u < 1.0);
        sum += u;
    }
    CHECK_INT(bad, 0);
    /* mean of 1e5 uniforms: sd 0.000913, so 5 sd is 0.0046 */
    CHECK_NEAR(sum / 100000, 0.5, 0.0046);
}

void suite_pcg32(void)
{
    test_run("pcg32 seeding state", test_seeding_state);
    test_run("pcg32 demo rounds", test_demo_rounds);
    test_run("pcg32 streams independent", test_streams_independent);
    test_run("pcg32 unit range and mean", test_unit_range_and_mean);
}
