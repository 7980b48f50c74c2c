/* fuzz_scenario: libFuzzer target for the scenario loader (YAML, schema
 * table, every fill_* section). Whatever the bytes, loading must return
 * cleanly, set err exactly when it fails, report every failure in diags, and
 * leave nothing allocated once released. Build and run: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "scenarios/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    struct scenario s;
    struct diag_list d;
    struct err e;
    scenario_init(&s);
    diag_list_init(&d, 64);
    err_clear(&e);
    int rc = scenario_load_buffer("fuzz.yaml", (const char *)data, size, &s, &d, &e);
    if ((rc != 0) != (e.set != 0))
        abort(); /* a failure must say why; a success must not carry an error */
    if (rc == 0 && s.n_partitions == 0)
        abort(); /* a scenario that loads has a cluster (cluster.partitions is required) */
    scenario_release(&s);
    diag_list_release(&d);
    return 0;
}
