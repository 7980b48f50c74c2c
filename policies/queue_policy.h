/* queue_policy: the composed policy "ORDERING[+BACKFILL]", e.g. "sjf+easy".
 * An ordering (policies/ordering.h) ranks the waiting jobs, a backfill mode
 * (policies/backfill.h) decides which of them start, and placement_pack()
 * picks their nodes. Without "+BACKFILL" the mode is "none".
 */
#ifndef FLEETSIM_POLICIES_QUEUE_POLICY_H
#define FLEETSIM_POLICIES_QUEUE_POLICY_H

#include "policies/policy.h"

extern const struct policy_ops queue_policy_ops;

#endif
