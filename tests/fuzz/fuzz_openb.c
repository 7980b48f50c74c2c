/* fuzz_openb: libFuzzer target for the openb reader (traces/openb.h); the checks are
 * fuzz_reader.h's. Build and run: `make fuzz` (needs clang); tests/traces/run.sh
 * also builds it with tests/fuzz/standalone.c and runs its seeds. */
#include "tests/fuzz/fuzz_reader.h"
#include "traces/openb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader_check(openb_read_buffer, data, size);
    return 0;
}
