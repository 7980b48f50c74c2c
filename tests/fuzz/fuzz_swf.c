/* fuzz_swf: libFuzzer target for the SWF reader. Every input is read under
 * both conventions; whatever it holds, the reader must return cleanly, set
 * err exactly when it fails, and leave nothing allocated once released.
 * Build and run: `make fuzz` (needs clang). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "traces/swf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_one(const uint8_t *data, size_t size, enum swf_convention conv)
{
    struct workload w;
    struct diag_list d;
    struct err e;
    workload_init(&w);
    diag_list_init(&d, 64);
    err_clear(&e);
    int rc = swf_read_buffer("fuzz.swf", (const char *)data, size, conv, &w, &d, &e);
    if ((rc != 0) != (e.set != 0))
        abort(); /* a failure must say why; a success must not carry an error */
    for (size_t i = 0; rc == 0 && i < w.n; i++) {
        const struct job *j = &w.jobs[i];
        if (j->slots < 1 || j->runtime_us < 0 || j->submit_us < 0)
            abort(); /* the simulator relies on these */
        if (i && conv == SWF_REPLAY && j->submit_us < w.jobs[i - 1].submit_us)
            abort();
    }
    workload_release(&w);
    diag_list_release(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(data, size, SWF_REPLAY);
    fuzz_one(data, size, SWF_RLSCHEDULER);
    return 0;
}
