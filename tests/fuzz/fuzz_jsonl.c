/* fuzz_jsonl: libFuzzer target for the native JSON Lines reader and writer.
 * A trace that reads must write, and read back to the same jobs.
 * Build and run: `make fuzz` (needs clang). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_check_same(const struct workload *a, const struct workload *b)
{
    if (a->n != b->n)
        abort();
    for (size_t i = 0; i < a->n; i++) {
        const struct job *x = &a->jobs[i], *y = &b->jobs[i];
        if (x->id != y->id || x->submit_us != y->submit_us || x->runtime_us != y->runtime_us ||
            x->limit_us != y->limit_us || x->slots != y->slots || x->status != y->status)
            abort();
    }
}

/* Writes w to memory and reads it back. */
static void fuzz_round_trip(const struct workload *w)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return;
    struct err e;
    err_clear(&e);
    int rc = jsonl_write("-", f, w, &e);
    fclose(f);
    if (rc == 0) {
        struct workload back;
        workload_init(&back);
        err_clear(&e);
        if (jsonl_read_buffer("fuzz-out.jsonl", buf, len, &back, NULL, &e) != 0)
            abort(); /* the writer wrote something its own reader refuses */
        fuzz_check_same(w, &back);
        workload_release(&back);
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct workload w;
    struct diag_list d;
    struct err e;
    workload_init(&w);
    diag_list_init(&d, 64);
    err_clear(&e);
    int rc = jsonl_read_buffer("fuzz.jsonl", (const char *)data, size, &w, &d, &e);
    if ((rc != 0) != (e.set != 0))
        abort();
    if (rc == 0)
        fuzz_round_trip(&w);
    workload_release(&w);
    diag_list_release(&d);
    return 0;
}
