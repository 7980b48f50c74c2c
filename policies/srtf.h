/* srtf: shortest remaining time first, with the user's estimates. A job's
 * remaining time is its estimate minus the time it has run (attained GPU
 * time / slots, over all attempts), at least 0: what the policy can know,
 * since the work lost to a preemption or failure is the host's business.
 * Shortest first, ties to the earlier submission. Preemptive: a waiting job
 * preempts running jobs whose remaining time is more than (1 + margin) times
 * its own (tier = -log(1 + remaining_s)), so near-equal jobs do not trade
 * places back and forth.
 */
#ifndef FLEETSIM_POLICIES_SRTF_H
#define FLEETSIM_POLICIES_SRTF_H

#include <stddef.h>
#include <stdint.h>

#include "policies/ordering.h"
#include "policies/params.h"

extern const struct policy_param srtf_params[];
extern const size_t srtf_n_params;

struct srtf {
    double margin;
};

int srtf_init(struct srtf *s, const struct params *p, char *err, size_t err_len);
/* Remaining seconds of a job that has attained_gpu_us of service. */
double srtf_remaining_s(const struct policy_job *job, double attained_gpu_us);
struct ordering_key srtf_key(const struct policy_job *job, uint32_t index);
/* Preemption tier (higher = more urgent) and the tier margin. */
double srtf_tier(const struct policy_job *job, double attained_gpu_us);
double srtf_tier_margin(const struct srtf *s);

#endif
