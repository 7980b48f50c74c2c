/* fuzz_swf: libFuzzer target for the SWF reader. Every input is read under
 * both conventions; whatever it holds, the reader must return cleanly, set
 * err exactly when it fails, and leave nothing allocated once released; read
 * in 2 to 8 chunks (swf_read_buffer_chunks), it must give exactly what the
 * serial read gives. Build and run: `make fuzz` (needs clang). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "tests/unit/reader_case.h"
#include "traces/swf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_one(const uint8_t *data, size_t size, enum swf_convention conv)
{
    struct reader_case serial, chunked;
    reader_case_begin(&serial);
    reader_case_begin(&chunked);
    serial.rc = swf_read_buffer_chunks("fuzz.swf", (const char *)data, size, conv, 1, &serial.w, &serial.d,
                                       &serial.e);
    if ((serial.rc != 0) != (serial.e.set != 0))
        abort(); /* a failure must say why; a success must not carry an error */
    for (size_t i = 0; serial.rc == 0 && i < serial.w.n; i++) {
        const struct job *j = &serial.w.jobs[i];
        if (j->slots < 1 || j->runtime_us < 0 || j->submit_us < 0)
            abort(); /* the simulator relies on these */
        if (i && conv == SWF_REPLAY && j->submit_us < serial.w.jobs[i - 1].submit_us)
            abort();
    }
    chunked.rc = swf_read_buffer_chunks("fuzz.swf", (const char *)data, size, conv, 2 + (int)(size % 7),
                                        &chunked.w, &chunked.d, &chunked.e);
    if (!reader_case_same(&serial, &chunked))
        abort();
    reader_case_release(&serial);
    reader_case_release(&chunked);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_one(data, size, SWF_REPLAY);
    fuzz_one(data, size, SWF_RLSCHEDULER);
    return 0;
}
