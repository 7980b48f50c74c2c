/* rlscheduler: the evaluation protocol of RLScheduler (Zhang et al., SC'20),
 * reproduced to the letter so that its published heuristic tables (V and VI)
 * come out digit for digit. See ../shared/validation/rlscheduler-tables.md.
 *
 * This is a separate, named reproduction mode, not fleetsim's scheduler: it
 * commits to the highest-priority job and advances one event at a time until
 * that job fits (an arrival goes first when it is not later than the next
 * completion); its backfilling computes the reservation once per blocked job
 * and lets a job jump ahead only if now + requested time is strictly before
 * it; queued jobs join lazily, as in the reference code. Ties follow the
 * reference's stable in-place sorts of its queue and running lists, which this
 * module mirrors. The product's own EASY and conservative backfilling are in
 * policies/backfill.h.
 *
 * Input: a workload read with SWF_RLSCHEDULER (jobs sorted by id). Each window
 * is `window_len` consecutive jobs simulated alone on an empty machine of
 * `nodes` nodes x `procs / nodes` processors.
 */
#ifndef FLEETSIM_MODELS_RLSCHEDULER_H
#define FLEETSIM_MODELS_RLSCHEDULER_H

#include <stddef.h>

#include "models/workload.h"
#include "policies/ordering.h"
#include "sim/err.h"

enum { RLSCHEDULER_WINDOWS = 10, RLSCHEDULER_WINDOW_LEN = 1024 };

/* The reference draws these from numpy seeded with 1; they are the same for
 * every trace. */
extern const size_t rlscheduler_window_starts[RLSCHEDULER_WINDOWS];

struct rlscheduler_options {
    enum ordering_kind ordering;
    int backfill;
    int compat_wait; /* evaluate the wait of queued jobs as -1 - submit, as the reference does */
    int64_t nodes;   /* machine: nodes x (procs / nodes) processors */
    int64_t procs;
    size_t window_len;
};

struct rlscheduler_window {
    size_t start;      /* 0-based position of the window's first job */
    int64_t first_id;  /* its job id */
    double bsld;       /* mean bounded slowdown (10 s bound) over the window */
    double utilization;
};

/* Runs the protocol for n windows starting at starts[]. Returns 0 or -1. */
int rlscheduler_run(const struct workload *w, const struct rlscheduler_options *opt, const size_t *starts,
                    size_t n, struct rlscheduler_window *out, struct err *err);

#endif
