/* multifactor: Slurm-style multifactor priority (the priority/multifactor
 * plugin), as a queue ordering. A waiting job's priority is
 *
 *   w_age * age + w_size * size + w_fairshare * fairshare + w_qos * qos
 *
 * with every factor in [0, 1]:
 *   age        min(1, wait / age_max_s)
 *   size       slots / total slots (favor_small=1: 1 minus that)
 *   fairshare  2^(-U / S) (Slurm's classic formula): U the team's share of
 *              all usage, S its normalized share of the cluster
 *   qos        from the job's priority input: the `qos` table (P:F), else
 *              priority / the highest priority waiting (0 when none is > 0)
 * Highest priority first; ties go to the earlier arrival.
 *
 * Usage is GPU-seconds per team, learned through observe() (a finished,
 * preempted or failed attempt adds slots x its run time) and decayed with a
 * half-life: usage u added at t counts u * 2^(-(now - t) / half_life_s).
 * Running jobs add slots x (now - start) from the view, undecayed. So
 * decide() stays a pure function of (state, view): observe() is the only
 * writer, and a host that replays the events rebuilds the same state.
 *
 * Shares: `shares` gives teams (by the host's team index; -1 = unknown)
 * their weight (default `default_share`); `groups` builds a two-level
 * fair-share tree, "W:T|T|T;W:T|T" (a group of weight W over its teams).
 * A team's normalized share is its group's weight over the groups that are
 * active (have a team with usage or jobs), times its weight over its group's
 * active teams; a team in no group is a group of its own with its weight.
 *
 * `fairshare` is the same ordering with fair-share dominant (w_fairshare 1,
 * a little age so nothing waits forever).
 */
#ifndef FLEETSIM_POLICIES_MULTIFACTOR_H
#define FLEETSIM_POLICIES_MULTIFACTOR_H

#include <stddef.h>
#include <stdint.h>

#include "policies/ordering.h"
#include "policies/params.h"
#include "policies/policy.h"

extern const struct policy_param multifactor_params[];
extern const size_t multifactor_n_params;
extern const struct policy_param fairshare_params[];
extern const size_t fairshare_n_params;

struct multifactor;

/* fairshare_defaults: the `fairshare` spelling's defaults. */
struct multifactor *multifactor_new(const struct params *p, char *err, size_t err_len);
void multifactor_free(struct multifactor *m);
/* Keys for every queued job (lower first) into keys[0..n_queued). Returns
 * 0 or -1 (memory). */
int multifactor_keys(struct multifactor *m, const struct cluster_view *view, struct ordering_key *keys);
/* The priority of queued[i] as computed by the last multifactor_keys(). */
double multifactor_priority(const struct multifactor *m, uint32_t i);
/* The fair-share factor of a team at view time (after multifactor_keys). */
double multifactor_fairshare(const struct multifactor *m, int32_t team);
void multifactor_observe(struct multifactor *m, const struct policy_event *ev);

#endif
