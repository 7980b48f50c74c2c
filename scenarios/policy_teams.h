/* policy_teams: team names in a policy spec, as a planner writes them
 * (`quota(guarantee=research:256;serving:128)`, `multifactor(shares=...)`),
 * turned into the team indices policies take. Policies see only indices
 * (policies/ knows no names); the scenario knows which index is which team,
 * since its teams are interned first, in its order.
 *
 * A KEY in a KEY:VALUE list item (after '=' or ';', up to ':') that is not
 * a number must name a team of the workload; numbers pass unchanged. The
 * rest of the spec is copied as it is.
 */
#ifndef FLEETSIM_SCENARIOS_POLICY_TEAMS_H
#define FLEETSIM_SCENARIOS_POLICY_TEAMS_H

#include <stddef.h>

#include "traces/synth.h"

/* Writes spec with team names replaced by indices into out. Returns 0, or
 * -1 with msg saying which name is not a team (and the nearest that is), or
 * that out is too small. */
int policy_teams_resolve(const struct workload_spec *w, const char *spec, char *out, size_t len, char *msg,
                         size_t msg_len);

#endif
