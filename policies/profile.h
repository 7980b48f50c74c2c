/* profile: the future availability of slots as a step function, used by
 * conservative backfilling to give every waiting job a reservation.
 *
 * Step k holds `free[k]` slots from time[k] until time[k+1]; the last step
 * lasts forever. Built from the running jobs' expected ends, then carved by
 * each reservation. Only pooled slot counts are modelled here.
 */
#ifndef FLEETSIM_POLICIES_PROFILE_H
#define FLEETSIM_POLICIES_PROFILE_H

#include <stdint.h>

struct profile {
    int64_t *time;
    int64_t *free;
    uint32_t n, cap;
};

void profile_init(struct profile *p);
void profile_release(struct profile *p);
/* One step: free_now slots from now on. Returns 0 or -1 (memory). */
int profile_reset(struct profile *p, int64_t now, int64_t free_now);
/* `slots` become free at time t and stay free (t must not precede the last
 * breakpoint: add releases in ascending time). */
int profile_add_release(struct profile *p, int64_t t, int64_t slots);
/* Earliest breakpoint t with at least `slots` free throughout [t, t + dur). */
int64_t profile_earliest(const struct profile *p, int64_t slots, int64_t dur);
/* Takes `slots` out of [t, t + dur). Returns 0 or -1 (memory). */
int profile_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots);

#endif
