/* waiting_queue: the simulation host's queue of waiting jobs, in arrival
 * order, as a policy's view shows it (cluster_view.queued), with the record
 * of what changed in it between passes (policy.h, ABI 4).
 *
 * The jobs lie at an offset in their buffers. After a pass the gaps its
 * starts left close, those near the head by moving the jobs before them up
 * (the queue then begins further on), those near the end by moving the
 * jobs after them down: the split that moves the fewest jobs. A requeued
 * job near the head moves the jobs before it down. The
 * buffers slide back, or grow, once the end is reached. Every write is
 * noted as a range of coordinates (offset + position) for the next view; a
 * slide moves every coordinate and promises nothing (tracked 0). For a
 * policy that reads gaps, a start deep in a long queue leaves a gap open
 * instead, closed with the others once they are an eighth of the queue
 * (waiting_queue_close_gaps).
 * tests/unit/test_simulation.c checks the view pass after pass (every
 * waiting job once, in arrival order); tests/unit/test_queue_index.c that
 * replays with and without the record start every job alike. */
#ifndef FLEETSIM_MODELS_WAITING_QUEUE_H
#define FLEETSIM_MODELS_WAITING_QUEUE_H

#include <stdint.h>

#include "policies/policy.h"

/* Ranges of changed coordinates kept apart before they merge into one. */
#define WAITING_QUEUE_RANGES 8
/* A pass's gaps close at once when that moves at most this many jobs
 * (a queue shorter than twice this never holds an open gap). */
#define WAITING_QUEUE_GAP_MOVES 256

struct waiting_queue {
    struct policy_job *jobs; /* jobs[0..n): the view's queued[] */
    uint32_t *w;             /* the workload index of each */
    uint32_t n;
    /* the queue's own: buffers, the starts marked this pass, the record */
    struct policy_job *jobs_buf;
    uint32_t *w_buf;
    uint32_t cap, off;
    uint8_t *leaving; /* per position, 1 when marked; all zeros between passes */
    uint32_t *gaps_at; /* scratch of close_gaps: the marked positions */
    uint32_t n_leaving, first_leaving, last_leaving;
    uint64_t dirty[2 * WAITING_QUEUE_RANGES];
    uint32_t n_dirty;
    int tracked; /* 0 until the first view, and after a slide */
    /* the policy reads gaps (policy.h, policy_job.gap): those that are
     * costly to close may stay open; n_gaps of jobs[0..n) are */
    int keep_gaps;
    uint32_t n_gaps;
};

void waiting_queue_init(struct waiting_queue *q);
void waiting_queue_release(struct waiting_queue *q);
/* Makes a place for the job of workload index wi where it arrived
 * (workload order: a requeued job goes back there) and sets w[*pos]; the
 * caller fills jobs[*pos]. Returns 0, or -1 if memory ran out. */
int waiting_queue_insert(struct waiting_queue *q, uint32_t wi, uint32_t *pos);
/* Marks the job at pos as leaving (it starts); waiting_queue_close_gaps()
 * removes the marked ones, so positions stay those of the view until then. */
void waiting_queue_mark(struct waiting_queue *q, uint32_t pos);
void waiting_queue_close_gaps(struct waiting_queue *q);
/* The jobs waiting: n less the open gaps. */
uint32_t waiting_queue_waiting(const struct waiting_queue *q);
/* Fills the view's queue and its record (tracked only if `record`), as of
 * the last waiting_queue_seen(). */
void waiting_queue_view(const struct waiting_queue *q, struct cluster_view *v, int record);
/* The policy has seen the queue as it is: the record starts again. */
void waiting_queue_seen(struct waiting_queue *q);

#endif
