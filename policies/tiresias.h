/* tiresias: Tiresias-style discretized two-dimensional least-attained-service
 * (2D-LAS; Gu et al., NSDI'19) as a queue ordering. A job's attained service
 * is GPU time (slots x time run, over all its attempts; the view's
 * attained_us plus, while running, slots x (now - start)). The thresholds
 * cut it into queues: queue 0 below the first, queue k at or above the k-th.
 * Lower queues go first, and within a queue the earlier submission (FIFO), so
 * a job that has run long sinks and new jobs get GPUs quickly without knowing
 * runtimes. It is preemptive: a waiting job in a lower queue preempts running
 * jobs in higher ones (the composed policy's preemption, tier = -queue).
 * With starve_factor > 0, a job that has waited starve_factor times its
 * attained run time (attained / slots) goes back to queue 0 (Tiresias's
 * STARVELIMIT).
 */
#ifndef FLEETSIM_POLICIES_TIRESIAS_H
#define FLEETSIM_POLICIES_TIRESIAS_H

#include <stddef.h>
#include <stdint.h>

#include "policies/ordering.h"
#include "policies/params.h"

enum { TIRESIAS_MAX_THRESHOLDS = 8 };

extern const struct policy_param tiresias_params[];
extern const size_t tiresias_n_params;

struct tiresias {
    double threshold_gpu_us[TIRESIAS_MAX_THRESHOLDS];
    size_t n_thresholds;
    double starve_factor;
};

int tiresias_init(struct tiresias *t, const struct params *p, char *err, size_t err_len);
/* The queue of a job with attained_gpu_us of service that has waited waited_us. */
uint32_t tiresias_queue(const struct tiresias *t, double attained_gpu_us, int64_t waited_us, int32_t slots);
struct ordering_key tiresias_key(const struct tiresias *t, const struct policy_job *job, int64_t now_us,
                                 uint32_t index);
/* When the key of a job that waits from now on next changes: the first
 * time after now_us at which its starvation rule would send it back to
 * queue 0, or INT64_MAX when it never will while it waits (no rule, no
 * service attained, or in queue 0 already). The attained service of a
 * waiting job stays as it is, and the time it waited only grows, so a key
 * changes at most once while the job waits (policies/kept_order.h keeps
 * the order between). A time that is early is allowed: the key is then
 * read again, and found unchanged. */
int64_t tiresias_key_changes(const struct tiresias *t, const struct policy_job *job, int64_t now_us);

#endif
