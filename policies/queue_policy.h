/* queue_policy: the composed policy. A spec names components joined by '+',
 * each with optional parameters in parentheses (policies/params.h):
 *
 *   ORDERING[+BACKFILL][+PLACEMENT][+preempt(...)][+quota(...)]
 *
 * e.g. "sjf+easy", "fairshare(half_life_s=3600)+easy+pack", "tiresias+spread",
 * "fcfs+easy+quota(guarantee=0:64;1:32)". The registry lists the components
 * and their parameter tables (policies/registry.h).
 *
 *  - The ordering ranks the waiting jobs: fcfs, sjf, f1, wfp3, unicep
 *    (policies/ordering.h), multifactor and fairshare (multifactor.h),
 *    tiresias (tiresias.h), srtf (srtf.h).
 *  - A quota (quota.h) puts the jobs that fit their team's guarantee first,
 *    holds back or lets borrow the others, and reclaims by preemption.
 *  - The backfilling mode (backfill.h) decides which start: none, easy,
 *    conservative, greedy. Default none; greedy for tiresias and srtf.
 *  - The placement (placement.h) picks their nodes: pack (default),
 *    first-fit, best-fit, spread, gavel. Every one is gang-safe.
 *  - Preemption (preempt.h) makes room for a job that does not fit by
 *    stopping jobs of a lower tier. It is on with +preempt, with tiresias
 *    and srtf (tiers from attained service or remaining time), and with a
 *    quota that reclaims (tiers: within the guarantee or borrowing).
 *
 * Specs without the new components decide exactly as before they existed.
 */
#ifndef FLEETSIM_POLICIES_QUEUE_POLICY_H
#define FLEETSIM_POLICIES_QUEUE_POLICY_H

#include "policies/policy.h"

extern const struct policy_ops queue_policy_ops;
/* The decision kinds (POLICY_KINDS_*) an instance may emit: starts always,
 * reservations with easy or conservative backfilling, preemptions when a
 * component preempts. */
uint32_t queue_policy_decision_kinds(const void *state);
/* 1 when the instance reads gaps in the queue (policy.h, policy_job.gap):
 * FCFS without backfilling, with EASY or with conservative, no quota, no
 * preemption, whose walks go in arrival order and skip them. */
int queue_policy_reads_gaps(const void *state);
/* 1 when the instance's last conservative pass started from the profile it
 * kept (policies/promises.h) rather than rebuilding; for tests. */
int queue_policy_last_pass_kept(const void *state);
/* 1 when that pass read only what the host's record of the queue says
 * changed (policies/promises.c, read_changes); for tests. */
int queue_policy_last_pass_read_changes(const void *state);
/* promises_record_whole of the instance's record; for tests. */
int queue_policy_record_whole(const void *state);
/* The promises the last pass stepped over in blocks none of which may
 * move (policies/promises.h); for tests. */
uint32_t queue_policy_last_pass_stepped_over(const void *state);
/* The promises the last pass moved, and those of them that kept their
 * place in the order (policies/promises.h, promises_move); for tests. */
void queue_policy_last_pass_moves(const void *state, uint32_t *moved, uint32_t *in_place);
/* The gaps inside the queue (policy.h, policy_job.gap) the last pass,
 * reading only the queue's changes, accepted as left by the pass before
 * (policies/promises.c, read_changes); for tests. */
uint32_t queue_policy_last_pass_inner_gaps(const void *state);
/* Conservative's order of promises in blocks of at most n (before the
 * first pass; policies/promise_order.h); for tests. */
void queue_policy_set_promise_block(void *state, uint32_t n);

#endif
