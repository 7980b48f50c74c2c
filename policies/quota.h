/* quota: guaranteed GPUs per team, borrowing of idle capacity, and
 * reclaiming by preemption, as Kueue's cohorts or Volcano's queues do.
 *
 * A team's usage is the slots of its running jobs. A job "fits its quota"
 * when its team's usage plus its slots stays within the team's guarantee.
 * Jobs that fit their quota go before the others (each group in the
 * ordering's order). A job that does not fit its quota may still start on
 * idle slots when borrow=1 (it is then borrowing); with borrow=0 it is held
 * back and does not block anyone. With reclaim=1, a waiting job that fits
 * its quota but not the free slots preempts borrowing jobs: a running job
 * borrows when, counting its team's running jobs in start order (earliest
 * first), it pushed the team past its guarantee. Borrowers are taken latest
 * start first, and only from teams still above their guarantee at that
 * moment of the pass.
 *
 * Guarantees need not add up to the cluster: what is not guaranteed is
 * shared by borrowing.
 */
#ifndef FLEETSIM_POLICIES_QUOTA_H
#define FLEETSIM_POLICIES_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#include "policies/params.h"
#include "policies/policy.h"

extern const struct policy_param quota_params[];
extern const size_t quota_n_params;

struct quota;

struct quota *quota_new(const struct params *p, char *err, size_t err_len);
void quota_free(struct quota *q);
int quota_reclaims(const struct quota *q);
/* Starts a pass: usage per team from the running jobs, and each running
 * job's tier into tier_running[] (1 within its team's guarantee, 0
 * borrowing). Returns 0 or -1 (memory). */
int quota_begin(struct quota *q, const struct cluster_view *view, double *tier_running);
/* 1 if job fits its team's quota now (usage updated during the pass). */
int quota_fits(const struct quota *q, const struct policy_job *job);
/* May job start now (fits, or borrowing is allowed)? */
int quota_admit(const struct quota *q, const struct policy_job *job);
/* May a running job of `team` be taken to reclaim (its team is above its guarantee)? */
int quota_over(const struct quota *q, int32_t team);
void quota_started(struct quota *q, const struct policy_job *job);
void quota_stopped(struct quota *q, const struct policy_job *job);
int64_t quota_guarantee(const struct quota *q, int32_t team);

#endif
