/* fuzz_machines: libFuzzer target for the machine and node lists
 * (traces/machines.h): a list that reads must build a cluster with as many
 * nodes and GPUs as it says. Build and run: `make fuzz` (needs clang). */
#include <stdlib.h>

#include "traces/machines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct machine_list m;
    struct diag_list d;
    struct err e;
    machines_init(&m);
    diag_list_init(&d, 64);
    err_clear(&e);
    int rc = machines_read_buffer("fuzz.csv", (const char *)data, size, &m, &d, &e);
    if ((rc != 0) != (e.set != 0))
        abort();
    if (rc == 0) {
        struct cluster c;
        if (machines_build_cluster(&m, &c, &e) != 0 || c.n_nodes != m.n || c.total_slots != m.total_gpus)
            abort();
        cluster_release(&c);
        char buf[64];
        machines_describe(&m, buf, sizeof buf);
    }
    machines_release(&m);
    diag_list_release(&d);
    return 0;
}
