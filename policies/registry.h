/* registry: the built-in policies, found by spec string. A spec is what users
 * type after --policy: "fcfs", "sjf+easy", "f1+conservative". The registry
 * picks the policy_ops that understands the spec and the parameters to pass
 * to its create(). Loading plugins by path is the hosts' business (dlopen is
 * I/O); they hand the loaded ops to the same code paths.
 */
#ifndef FLEETSIM_POLICIES_REGISTRY_H
#define FLEETSIM_POLICIES_REGISTRY_H

#include <stddef.h>

#include "policies/policy.h"

/* Returns the ops for spec and sets *params (pointing into spec), or NULL and
 * a message in err. */
const struct policy_ops *policy_registry_find(const char *spec, const char **params, char *err,
                                              size_t err_len);
/* Creates an instance; returns 0, or -1 with a message in err. */
int policy_registry_create(const char *spec, const struct policy_ops **ops, void **state, char *err,
                           size_t err_len);
size_t policy_registry_count(void);
const struct policy_ops *policy_registry_at(size_t index);

#endif
