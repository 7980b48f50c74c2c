/* fuzz_sacct: libFuzzer target for the Slurm `sacct -P` reader. Whatever the
 * bytes, the reader must return cleanly, set err exactly when it fails, and
 * give jobs the simulator can run. Build and run: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "traces/sacct.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct workload w;
    struct diag_list d;
    struct err e;
    workload_init(&w);
    diag_list_init(&d, 64);
    err_clear(&e);
    (void)sacct_detect((const char *)data, size);
    int rc = sacct_read_buffer("fuzz.sacct", (const char *)data, size, &w, &d, &e);
    if ((rc != 0) != (e.set != 0))
        abort();
    for (size_t i = 0; rc == 0 && i < w.n; i++) {
        const struct job *j = &w.jobs[i];
        if (j->slots < 1 || j->runtime_us < 0 || j->submit_us < 0)
            abort();
    }
    workload_release(&w);
    diag_list_release(&d);
    return 0;
}
