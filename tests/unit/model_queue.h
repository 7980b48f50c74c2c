/* model_queue: a waiting queue changed at random as the simulation host
 * changes its own, with the host's record of what changed (policy.h, ABI
 * 4): arrivals at the end, starts near the head or anywhere (the gap
 * closed toward the nearer end, moving the jobs on that side), requeues
 * near the head, and moves of the whole queue (nothing recorded). For the
 * tests of what a policy keeps from pass to pass through that record. */
#ifndef FLEETSIM_TESTS_UNIT_MODEL_QUEUE_H
#define FLEETSIM_TESTS_UNIT_MODEL_QUEUE_H

#include <stdint.h>

#include "policies/policy.h"
#include "sim/pcg32.h"

enum { MODEL_QUEUE_CAP = 3000, MODEL_QUEUE_MAX_DIRT = 64 };

struct model_queue {
    struct policy_job buf[MODEL_QUEUE_CAP];
    uint32_t off, n; /* the queue: buf[off .. off + n), coordinates off + i */
    uint64_t dirt[2 * MODEL_QUEUE_MAX_DIRT];
    uint32_t n_dirt;
    int tracked;
    int64_t next_id;
};

/* One random change, recorded. */
void model_queue_change(struct model_queue *m, struct pcg32 *r);
/* The view of the queue as it stands, with the record since the last pass. */
void model_queue_view(const struct model_queue *m, struct cluster_view *v);
/* A policy saw the view: the record starts afresh. */
void model_queue_passed(struct model_queue *m);

#endif
