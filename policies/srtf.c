#include "policies/srtf.h"

#include <math.h>

const struct policy_param srtf_params[] = {
    {"margin", "number >= 0", "0.1",
     "preempt only jobs with more than (1 + margin) times the waiting job's remaining time"},
};
const size_t srtf_n_params = sizeof srtf_params / sizeof *srtf_params;

int srtf_init(struct srtf *s, const struct params *p, char *err, size_t err_len)
{
    return params_number(p, "margin", 0, 1e6, &s->margin, err, err_len);
}

double srtf_remaining_s(const struct policy_job *job, double attained_gpu_us)
{
    double ran_us = job->slots > 0 ? attained_gpu_us / job->slots : 0;
    double left = ((double)job->estimate_us - ran_us) / 1e6;
    return left > 0 ? left : 0;
}

struct ordering_key srtf_key(const struct policy_job *job, uint32_t index)
{
    return (struct ordering_key){srtf_remaining_s(job, (double)job->attained_us), (double)job->submit_us / 1e6,
                                 index};
}

double srtf_tier(const struct policy_job *job, double attained_gpu_us)
{
    return -log1p(srtf_remaining_s(job, attained_gpu_us));
}

double srtf_tier_margin(const struct srtf *s)
{
    return log1p(s->margin);
}
