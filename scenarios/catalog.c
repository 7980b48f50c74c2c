#include "scenarios/catalog.h"

#include "scenarios/scenario.h"

int catalog_load_builtin(struct node_catalog *c, struct diag_list *diags, struct err *err)
{
    return scenario_read_catalog(CATALOG_BUILTIN_NAME, scenario_builtin_catalog_yaml,
                                 scenario_builtin_catalog_yaml_len, c, diags, err);
}
