/* pcg32: the PCG-XSH-RR 64/32 generator (O'Neill, 2014), written here from the
 * published algorithm (pcg_setseq_64_xsh_rr_32), and the per-purpose streams
 * the simulator draws from.
 *
 * Every random purpose (arrivals, durations, sizes, failures of node N,
 * replication R, ...) gets its own generator, seeded from (scenario seed,
 * stable stream id), so adding draws for one purpose never shifts another's
 * sequence: changing the policy cannot change the workload a seed produces.
 * A `struct pcg32` is a plain value: copy it to checkpoint it.
 */
#ifndef FLEETSIM_SIM_PCG32_H
#define FLEETSIM_SIM_PCG32_H

#include <stdint.h>

struct pcg32 {
    uint64_t state;
    uint64_t inc; /* always odd */
};

/* pcg32_srandom_r from the reference: initstate picks the position,
 * initseq the stream (one of 2^63). */
void pcg32_seed(struct pcg32 *rng, uint64_t initstate, uint64_t initseq);
uint32_t pcg32_next(struct pcg32 *rng);
/* Uniform in [0, bound) without modulo bias (the reference's rejection rule). */
uint32_t pcg32_bounded(struct pcg32 *rng, uint32_t bound);
/* Uniform double in [0, 1) with 53 random bits (two draws). */
double pcg32_unit(struct pcg32 *rng);
/* Uniform double in (0, 1): safe to take a logarithm of. */
double pcg32_unit_open(struct pcg32 *rng);

/* Stable stream ids: a purpose and an index (node number, replication, ...). */
enum rng_purpose {
    RNG_ARRIVALS = 1,
    RNG_DURATIONS = 2,
    RNG_SIZES = 3,
    RNG_FAILURES = 4,
    RNG_REPAIRS = 5,
    RNG_REPLICATION = 6,
    RNG_LEAD_TIMES = 7,
    RNG_TEST = 99
};

/* Seeds `rng` for (seed, purpose, index). Mixing is a fixed function
 * (splitmix64), so ids never depend on call order. */
void pcg32_stream(struct pcg32 *rng, uint64_t seed, enum rng_purpose purpose, uint64_t index);

#endif
