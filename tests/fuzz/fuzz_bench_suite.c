/* fuzz_bench_suite: libFuzzer target for `fleetsim bench` suites (YAML:
 * policies and workloads). Whatever the bytes, loading returns cleanly, a
 * refusal carries a diagnostic, and the suite is released without a leak.
 * Build and run: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/bench_suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bench_suite s;
    struct diag_list d;
    struct err e;
    diag_list_init(&d, 64);
    err_clear(&e);
    int rc = bench_suite_load_buffer("fuzz-suite.yaml", (const char *)data, size, &s, &d, &e);
    if (rc != 0 && d.n == 0 && !e.set)
        abort(); /* a refusal must say why */
    for (size_t i = 0; rc == 0 && i < s.n_policies; i++)
        if (!memchr(s.policies[i].spec, '\0', sizeof s.policies[i].spec) || !s.policies[i].spec[0])
            abort();
    bench_suite_release(&s);
    diag_list_release(&d);
    return 0;
}
