#include "policies/tiresias.h"

#include <math.h>

const struct policy_param tiresias_params[] = {
    {"thresholds_gpu_s", "ascending list A;B;..", "3600;28800",
     "attained GPU-seconds at which a job moves to the next queue"},
    {"starve_factor", "number >= 0", "0", "back to queue 0 after waiting this many times its run time; 0 = never"},
};
const size_t tiresias_n_params = sizeof tiresias_params / sizeof *tiresias_params;

int tiresias_init(struct tiresias *t, const struct params *p, char *err, size_t err_len)
{
    double th[TIRESIAS_MAX_THRESHOLDS];
    if (params_ascending(p, "thresholds_gpu_s", 1e-6, 1e15, th, TIRESIAS_MAX_THRESHOLDS, &t->n_thresholds, err,
                         err_len) != 0 ||
        params_number(p, "starve_factor", 0, 1e12, &t->starve_factor, err, err_len) != 0)
        return -1;
    for (size_t i = 0; i < t->n_thresholds; i++)
        t->threshold_gpu_us[i] = th[i] * 1e6;
    return 0;
}

/* Whether the starvation rule applies to a job with attained_gpu_us of
 * service on `slots`, and if so the wait that sends it back to queue 0
 * (*limit_us). tiresias_queue and tiresias_key_changes must read the same
 * double, computed alike: the kept order trusts the second to foresee
 * the first. */
static int starve_limit(const struct tiresias *t, double attained_gpu_us, int32_t slots, double *limit_us)
{
    if (!(t->starve_factor > 0) || slots <= 0 || !(attained_gpu_us > 0))
        return 0;
    *limit_us = t->starve_factor * attained_gpu_us / slots;
    return 1;
}

uint32_t tiresias_queue(const struct tiresias *t, double attained_gpu_us, int64_t waited_us, int32_t slots)
{
    double limit;
    if (starve_limit(t, attained_gpu_us, slots, &limit) && (double)waited_us >= limit)
        return 0;
    uint32_t q = 0;
    while (q < t->n_thresholds && attained_gpu_us >= t->threshold_gpu_us[q])
        q++;
    return q;
}

struct ordering_key tiresias_key(const struct tiresias *t, const struct policy_job *job, int64_t now_us,
                                 uint32_t index)
{
    uint32_t q = tiresias_queue(t, (double)job->attained_us, now_us - job->submit_us, job->slots);
    return (struct ordering_key){(double)q, (double)job->submit_us / 1e6, index};
}

int64_t tiresias_key_changes(const struct tiresias *t, const struct policy_job *job, int64_t now_us)
{
    double x;
    if (!starve_limit(t, (double)job->attained_us, job->slots, &x) || tiresias_key(t, job, now_us, 0).primary == 0)
        return INT64_MAX; /* no rule, or in queue 0 already */
    /* tiresias_queue's test, (double)waited >= x: for a whole number of
     * microseconds below 2^53 (converted exactly) that is waited >=
     * ceil(x). Past 2^53 the conversion rounds, and may pass x sooner:
     * asked again there, then every pass. */
    const double exact = 9007199254740992.0; /* 2^53 */
    int64_t waited = x < exact ? (int64_t)ceil(x) : (int64_t)exact;
    int64_t at = job->submit_us <= INT64_MAX - waited ? job->submit_us + waited : INT64_MAX;
    return at > now_us ? at : now_us + 1;
}
