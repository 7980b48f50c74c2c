#include "sim/pcg32.h"

static const uint64_t pcg32_multiplier = 6364136223846793005ULL;

static void pcg32_step(struct pcg32 *rng)
{
    rng->state = rng->state * pcg32_multiplier + rng->inc;
}

void pcg32_seed(struct pcg32 *rng, uint64_t initstate, uint64_t initseq)
{
    rng->state = 0;
    rng->inc = (initseq << 1) | 1u;
    pcg32_step(rng);
    rng->state += initstate;
    pcg32_step(rng);
}

uint32_t pcg32_next(struct pcg32 *rng)
{
    uint64_t old = rng->state;
    pcg32_step(rng);
    uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

uint32_t pcg32_bounded(struct pcg32 *rng, uint32_t bound)
{
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

double pcg32_unit(struct pcg32 *rng)
{
    uint64_t hi = pcg32_next(rng) >> 5; /* 27 bits */
    uint64_t lo = pcg32_next(rng) >> 6; /* 26 bits */
    return (double)((hi << 26) | lo) * (1.0 / 9007199254740992.0);
}

double pcg32_unit_open(struct pcg32 *rng)
{
    double u;
    do
        u = pcg32_unit(rng);
    while (u == 0.0);
    return u;
}

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

void pcg32_stream(struct pcg32 *rng, uint64_t seed, enum rng_purpose purpose, uint64_t index)
{
    uint64_t id = splitmix64(splitmix64((uint64_t)purpose) ^ index);
    pcg32_seed(rng, splitmix64(seed ^ id), id);
}
