/* preempt: making room for a waiting job by stopping running ones, for the
 * composed policy (policies/queue_policy.h).
 *
 * Every job has a tier (higher = more important): by default its priority
 * input (QoS), or the `team_tier` of its team; Tiresias and SRTF orderings
 * and quotas bring their own (see their headers). When the job the pass is
 * on does not fit, the running jobs of a lower tier (by more than the
 * ordering's margin) are its candidate victims: lowest tier first, then the
 * latest started (the least work lost), then the higher id. If the free slots
 * plus the victims' slots on up nodes hold the job, just enough victims are
 * preempted, in that order, and the job starts on their slots in the same
 * pass; otherwise nobody is preempted. A job preempted max_preemptions
 * times, or running for less than min_run_s, is never a victim: this bounds
 * how much work one job can lose and stops thrashing.
 *
 * The host requeues a preempted job in arrival order and rolls it back to
 * its last checkpoint (policies/policy.h).
 */
#ifndef FLEETSIM_POLICIES_PREEMPT_H
#define FLEETSIM_POLICIES_PREEMPT_H

#include <stddef.h>
#include <stdint.h>

#include "policies/backfill.h"
#include "policies/params.h"
#include "policies/policy.h"

extern const struct policy_param preempt_params[];
extern const size_t preempt_n_params;

enum { PREEMPT_TEAM_TIERS_MAX = 64 };

struct preempt_victim {
    double tier;
    int64_t start_us;
    int64_t id;
    uint32_t running; /* index into view.running */
    int32_t up_slots; /* slots on up nodes: what preempting it frees (read once `ready`) */
};

struct preempt {
    int64_t max_preemptions;
    int64_t min_run_us;
    int32_t team[PREEMPT_TEAM_TIERS_MAX];
    double team_tier[PREEMPT_TEAM_TIERS_MAX];
    size_t n_team_tiers;
    double margin;
    /* per pass */
    struct preempt_victim *victims, *victims_scratch; /* scratch: the sort's */
    uint32_t n_victims, cap_victims;
    /* the victims' up_slots read and the victims sorted (lowest tier
     * first); victims[lowest] is the one the sort puts first, sorted or
     * not */
    int ready;
    uint32_t lowest;
    uint32_t first_open; /* victims[0..first_open) are taken or free nothing */
    uint32_t *chosen; /* scratch: victims picked for one job */
    uint8_t *taken; /* per running index: preempted this pass */
    uint32_t cap_taken;
    double fail_tier; /* a job of this tier or lower, at least fail_slots big, */
    int32_t fail_slots; /* found no room this pass: do not search again */
};

/* Reads the `preempt` component's parameters (p may be NULL: defaults). */
int preempt_init(struct preempt *pr, const struct params *p, char *err, size_t err_len);
void preempt_release(struct preempt *pr);
/* The default tier of a job: team_tier of its team, else its priority. */
double preempt_tier_of(const struct preempt *pr, const struct policy_job *job);
/* Starts a pass: the victims, given each running job's tier. */
int preempt_begin(struct preempt *pr, const struct cluster_view *view, const double *tier_running);

/* Asked by the pass (a backfill_hooks.make_room): frees room for queued[qi]
 * of tier job_tier. `may_take(ctx, job)` (may be NULL) vetoes victims (quota:
 * only teams above their guarantee); `account(ctx, job, -1)` is told of each
 * victim as it is chosen, and `account(ctx, job, +1)` when the choice is
 * undone because the victims would not make enough room. Returns 0 (room
 * made, *free_now raised), 1 (none), -1 (error). */
int preempt_make_room(struct preempt *pr, struct backfill_pass *pass, uint32_t qi, double job_tier,
                      int64_t *free_now, int (*may_take)(void *ctx, const struct policy_job *job),
                      void (*account)(void *ctx, const struct policy_job *job, int sign), void *ctx);

#endif
