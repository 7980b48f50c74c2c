#include "policies/registry.h"

#include <stdio.h>

#include "policies/queue_policy.h"

static const struct policy_ops *const builtin_policies[] = {
    &queue_policy_ops,
};

const struct policy_ops *policy_registry_find(const char *spec, const char **params, char *err,
                                              size_t err_len)
{
    if (!spec || !*spec) {
        snprintf(err, err_len, "empty policy spec");
        return NULL;
    }
    /* Every spec so far is an ordering with optional backfilling. */
    *params = spec;
    return &queue_policy_ops;
}

int policy_registry_create(const char *spec, const struct policy_ops **ops, void **state, char *err,
                           size_t err_len)
{
    const char *params;
    const struct policy_ops *found = policy_registry_find(spec, &params, err, err_len);
    if (!found)
        return -1;
    if (found->create(params, state, err, err_len) != 0)
        return -1;
    *ops = found;
    return 0;
}

size_t policy_registry_count(void)
{
    return sizeof builtin_policies / sizeof *builtin_policies;
}

const struct policy_ops *policy_registry_at(size_t index)
{
    return index < policy_registry_count() ? builtin_policies[index] : NULL;
}
