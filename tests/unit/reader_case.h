/* reader_case: what a test of a trace reader keeps (the workload, the
 * diagnostics, the error, the status), and the check that one diagnostic
 * reads exactly as expected ("t.swf:3:1: warning: ..."), and whether two
 * reads agree. Shared by the SWF, JSONL, sacct and scenario tests and the
 * SWF fuzz target. */
#ifndef FLEETSIM_TESTS_UNIT_READER_CASE_H
#define FLEETSIM_TESTS_UNIT_READER_CASE_H

#include "models/workload.h"
#include "sim/err.h"

struct reader_case {
    struct workload w;
    struct diag_list d;
    struct err e;
    int rc;
};

/* Initialises everything; the caller then runs a reader into it. */
void reader_case_begin(struct reader_case *c);
void reader_case_release(struct reader_case *c);
/* Whether one diagnostic formats exactly as want; lists them all if not. */
int has_diag(const struct diag_list *d, const char *want);
/* Whether two reads of one input agree in everything a caller can see:
 * status, error, every diagnostic in order, meta, users, teams and jobs.
 * Prints the first difference. */
int reader_case_same(const struct reader_case *a, const struct reader_case *b);

#endif
