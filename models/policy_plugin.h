/* policy_plugin: a host's one way to get a running policy instance from what
 * a user typed, whether a built-in spec ("fairshare+easy+pack") or a plugin,
 * a shared object built against policies/policy.h and named by path
 * ("./mypolicy.so", "./mypolicy.so:PARAMS"). Loading a plugin is I/O
 * (dlopen), so it lives here, host side, not in policies/. Hosts do not call
 * it directly: models/policy_host.h creates instances (guarding a plugin's
 * create()) for the simulator, the agent and the contract suite alike.
 *
 * A plugin exports `fleetsim_policy_entry` (POLICY_ENTRY_SYMBOL) returning
 * its policy_ops, whose abi_version must lie in [POLICY_ABI_OLDEST,
 * POLICY_ABI_VERSION]; it may export `fleetsim_policy_params` (POLICY_PARAMS_SYMBOL) for its parameter
 * table. A mismatch, a missing symbol or an incomplete table is a clear
 * error naming the file. The instance owns the dlopen handle: unload
 * destroys the policy state, then closes the library.
 */
#ifndef FLEETSIM_MODELS_POLICY_PLUGIN_H
#define FLEETSIM_MODELS_POLICY_PLUGIN_H

#include <stddef.h>

#include "policies/policy.h"
#include "sim/err.h"

struct policy_plugin {
    const struct policy_ops *ops;
    void *state;
    void *handle;                      /* dlopen handle; NULL for a built-in */
    const struct policy_param *params; /* a plugin's table, or NULL */
    size_t n_params;
    policy_kinds_fn decision_kinds;    /* a plugin's optional declaration, or NULL */
};

/* True when spec names a plugin: before any '(' or ':' it contains '/' or
 * ends in ".so". */
int policy_plugin_is_path(const char *spec);
/* Opens a plugin and checks it without creating an instance (for
 * `fleetsim policy describe ./x.so`). pl is initialised here. */
int policy_plugin_open(struct policy_plugin *pl, const char *path, struct err *err);
/* Splits "PATH.so[:PARAMS]" into path and parameters; extra_params (from
 * --policy-params), when not NULL or "", replace ":PARAMS" (both is an
 * error). *params points into spec or extra_params. */
int policy_plugin_split(const char *spec, const char *extra_params, char *path, size_t len, const char **params,
                        struct err *err);
/* Creates a built-in from spec. extra_params, when not NULL or "", are
 * appended to the ordering as "ORDERING(PARAMS)". Returns 0, or -1 with err
 * set; pl is initialised here either way. */
int policy_plugin_create_builtin(struct policy_plugin *pl, const char *spec, const char *extra_params,
                                 struct err *err);
/* Destroys the instance and closes the library; a zeroed pl is a no-op. */
void policy_plugin_unload(struct policy_plugin *pl);

#endif
