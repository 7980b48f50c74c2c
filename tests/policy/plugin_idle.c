/* A plugin that never starts a job, with a parameter table full of holes
 * (NULL fields, control bytes, a string longer than any column): a host
 * must describe it without crashing and must not report its run as a
 * perfect one (tests/cli_test.sh). */
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

static const struct policy_ops ops = {POLICY_ABI_VERSION, "idle", NULL, create, destroy, decide, NULL};

const struct policy_ops *fleetsim_policy_entry(void);
const struct policy_ops *fleetsim_policy_entry(void)
{
    return &ops;
}

#define LONG8 "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
static const struct policy_param params[] = {
    {NULL, NULL, NULL, NULL},
    {"depth", "integer", NULL, "a default left NULL"},
    {"bell\a\x1b[31m", NULL, "1", NULL},
    {"long", "text", LONG8 LONG8 LONG8 LONG8 LONG8, "a default of 320 bytes"},
};

const struct policy_param *fleetsim_policy_params(size_t *n);
const struct policy_param *fleetsim_policy_params(size_t *n)
{
    *n = sizeof params / sizeof *params;
    return params;
}
