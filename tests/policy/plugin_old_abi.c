/* A plugin built for ABI version 1 (before GPU fractions and GPU-model
 * constraints): hosts must refuse it, saying what changed. */
#include <stddef.h>

#include "policies/policy.h"

static int create(const char *params, void **state, char *err, size_t len)
{
    *state = NULL;
    return 0;
}
static void destroy(void *state)
{
}
static int decide(void *state, const struct cluster_view *v, struct policy_decisions *out)
{
    out->n = out->n_allocs = 0;
    return 0;
}

static const struct policy_ops ops = {1u, "from-the-past", "ABI 1 on purpose", create,
                                      destroy, decide, NULL};

const struct policy_ops *fleetsim_policy_entry(void);
const struct policy_ops *fleetsim_policy_entry(void)
{
    return &ops;
}
