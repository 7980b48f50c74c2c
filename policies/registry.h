/* registry: the built-in policies, found by spec string. A spec is what users
 * type after --policy: "fcfs", "sjf+easy", "fairshare(half_life_s=3600)+easy+pack".
 * The registry picks the policy_ops that understands the spec and the
 * parameters to pass to its create(). Loading plugins by path is the hosts'
 * business (dlopen is I/O: models/policy_plugin.h); they hand the loaded ops
 * to the same code paths.
 *
 * Every built-in spec is one composed policy (policies/queue_policy.h) of
 * components, and the registry lists them with their parameter tables, the
 * single source for `fleetsim policy list` and `fleetsim policy describe`.
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
/* The decision kinds (POLICY_KINDS_*) a built-in instance may emit. */
uint32_t policy_registry_decision_kinds(const struct policy_ops *ops, const void *state);
/* 1 when a built-in instance reads gaps in the queue (policy.h,
 * policy_job.gap), so a host may leave them open; 0 for every other. */
int policy_registry_reads_gaps(const struct policy_ops *ops, const void *state);
size_t policy_registry_count(void);
const struct policy_ops *policy_registry_at(size_t index);

enum policy_component_kind {
    POLICY_COMPONENT_ORDERING = 0,
    POLICY_COMPONENT_BACKFILL,
    POLICY_COMPONENT_PLACEMENT,
    POLICY_COMPONENT_PREEMPTION,
    POLICY_COMPONENT_QUOTA
};

struct policy_component {
    const char *name;
    enum policy_component_kind kind;
    const char *summary;
    const char *reference; /* where the idea comes from, or "" */
    const struct policy_param *params;
    const size_t *n_params; /* NULL: no parameters */
    /* orderings: preemptive by nature (tiresias, srtf) */
    int preemptive;
    /* fair orderings keep every team's wait bounded under contention (the
     * contract suite checks it) */
    int fair;
};

size_t policy_registry_component_count(void);
const struct policy_component *policy_registry_component_at(size_t index);
/* By exact name, or NULL. */
const struct policy_component *policy_registry_component(const char *name, size_t len);
const char *policy_component_kind_name(enum policy_component_kind kind);
/* Names of the components of one kind, ", "-separated, into buf. */
void policy_registry_names(enum policy_component_kind kind, char *buf, size_t len);

#endif
