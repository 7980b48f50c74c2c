/* fuzz_sacct: libFuzzer target for the Slurm `sacct -P` reader. Whatever the
 * bytes, the reader must return cleanly, set err exactly when it fails, and
 * give jobs the simulator can run (fuzz_reader.h, the checks every trace
 * reader's target makes). Build and run: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/fuzz_reader.h"
#include "traces/sacct.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    (void)sacct_detect((const char *)data, size);
    fuzz_reader_check(sacct_read_buffer, data, size);
    return 0;
}
