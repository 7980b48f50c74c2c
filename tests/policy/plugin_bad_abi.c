/* A plugin built for another ABI version: hosts must refuse it, clearly.
 * plugin_old_abi.c builds this same file as ABI 1. */
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

#ifndef PLUGIN_ABI
#define PLUGIN_ABI 42u
#define PLUGIN_NAME "from-the-future"
#endif

static const struct policy_ops ops = {PLUGIN_ABI, PLUGIN_NAME, "wrong ABI on purpose", create,
                                      destroy, decide, NULL};

const struct policy_ops *fleetsim_policy_entry(void);
const struct policy_ops *fleetsim_policy_entry(void)
{
    return &ops;
}
