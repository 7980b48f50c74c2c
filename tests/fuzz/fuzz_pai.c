/* fuzz_pai: libFuzzer target for the PAI 2020 reader (traces/pai.h). The
 * input is the job table, a NUL byte, then the task table (no NUL: all job
 * table, an empty task table), so the fuzzer explores the join; the checks
 * are fuzz_reader.h's. Build and run: `make fuzz` (needs clang). */
#include <string.h>

#include "tests/fuzz/fuzz_reader.h"
#include "traces/pai.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_pai_read(const char *name, const char *data, size_t len, struct workload *w, struct diag_list *d,
                         struct err *e)
{
    const char *nul = memchr(data, '\0', len);
    size_t job_len = nul ? (size_t)(nul - data) : len;
    const char *task = nul ? nul + 1 : data + len;
    return pai_read_buffers(name, data, job_len, "fuzz_task_table", task, len - job_len - (nul != NULL), w, d, e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader_check(fuzz_pai_read, data, size);
    return 0;
}
