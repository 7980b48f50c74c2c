/* fuzz_reader: what every trace reader's fuzz target checks (the GPU
 * readers and sacct) of one read, whatever
 * the input: the reader returns cleanly, sets err exactly when it fails, and
 * a workload it returns is one the simulator can run (sizes of at least one
 * slot, no negative times or queue times, sorted by submit time); and
 * nothing stays allocated once released (ASan's leak check). */
#ifndef FLEETSIM_TESTS_FUZZ_FUZZ_READER_H
#define FLEETSIM_TESTS_FUZZ_FUZZ_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "models/workload.h"
#include "sim/err.h"

typedef int (*fuzz_read_fn)(const char *name, const char *data, size_t len, struct workload *w,
                            struct diag_list *diags, struct err *err);

static inline void fuzz_reader_check(fuzz_read_fn read, const uint8_t *data, size_t size)
{
    struct workload w;
    struct diag_list d;
    struct err e;
    workload_init(&w);
    diag_list_init(&d, 64);
    err_clear(&e);
    int rc = read("fuzz.trace", (const char *)data, size, &w, &d, &e);
    if ((rc != 0) != (e.set != 0))
        abort();
    for (size_t i = 0; rc == 0 && i < w.n; i++) {
        const struct job *j = &w.jobs[i];
        if (j->slots < 1 || j->runtime_us < 0 || j->submit_us < 0 || (j->wait_known && j->wait_us < 0))
            abort();
        if (i && j->submit_us < w.jobs[i - 1].submit_us)
            abort();
    }
    workload_release(&w);
    diag_list_release(&d);
}

#endif
