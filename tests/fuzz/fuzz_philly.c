/* fuzz_philly: libFuzzer target for the philly reader (traces/philly.h); the checks are
 * fuzz_reader.h's. Build and run: `make fuzz` (needs clang); tests/traces/run.sh
 * also builds it with tests/fuzz/standalone.c and runs its seeds. */
#include "tests/fuzz/fuzz_reader.h"
#include "traces/philly.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reader_check(philly_read_buffer, data, size);
    return 0;
}
