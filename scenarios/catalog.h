/* catalog: the built-in node types. Their source is
 * models/catalog/node-types.yaml (every figure with its public source); the
 * build turns it into a C string ($(BUILD)/gen/node_types_yaml.c), so the
 * binary needs no data files. It is read by the scenario loader against the
 * same schema rows as a scenario's node_types entries.
 */
#ifndef FLEETSIM_SCENARIOS_CATALOG_H
#define FLEETSIM_SCENARIOS_CATALOG_H

#include <stddef.h>

#include "models/node_types.h"
#include "sim/err.h"

/* The YAML text, and its length without the terminating NUL (generated). */
extern const char scenario_builtin_catalog_yaml[];
extern const size_t scenario_builtin_catalog_yaml_len;

/* The name its diagnostics carry. */
#define CATALOG_BUILTIN_NAME "models/catalog/node-types.yaml"

/* Adds the built-in types to c. Returns 0, or -1 with err set (a broken
 * built-in catalog is a bug in fleetsim, and diags then says where). */
int catalog_load_builtin(struct node_catalog *c, struct diag_list *diags, struct err *err);

#endif
