/* queue_index: what EASY's walk over a deep queue asks of each waiting job,
 * kept across passes, so that a pass visits only the jobs that might start.
 *
 * Under FCFS the walk behind the head visits the queue in arrival order
 * and skips every job that needs more slots than are free, or that would
 * outlast the head's reservation (the shadow) and take more than the
 * slots the head leaves spare then. On a saturated cluster that is nearly
 * every job, and reading tens of thousands of them every pass was most of
 * a year-long forecast. The index is a tree of minima over the host's
 * queue coordinates (policy.h, ABI 4) in blocks of QUEUE_INDEX_BLOCK: per
 * block the least slots (0 for a fractional job, which may take none) and,
 * per size class (one slot, 2-3, 4-7, 8-15, ...), the least duration of its
 * jobs of that class or a smaller one; a subtree whose least slots exceed
 * the free slots, or whose least slots exceed the spare ones and whose
 * jobs of the free slots' class or smaller all outlast the shadow, holds
 * no job the walk would try, and is passed over whole. In a block that may
 * hold one, the view's jobs are read one by one. (With one least duration
 * for all sizes, a subtree holding a small long job and a large short one
 * looked like it held a small short one: on the 12,500-node year fleet 97%
 * of the blocks read held no job to try, and the walk was 17% of the run.
 * Classes are kept only where the walk wastes: below.) Minima over more
 * jobs than the queue holds only pass over less, so what the walk tries
 * is exactly what it tried reading every job (tests/unit/test_queue_index.c
 * checks both).
 *
 * Why blocks read from the view, not a leaf per job: a start in the
 * middle of a deep queue moves the jobs on one side of it by one
 * coordinate, and all of those must be read again. Reading two fields of
 * each job into a block's minima costs a fraction of writing a leaf per
 * job and its ancestors (measured on the 16k-GPU year: the refresh was
 * 17% of the run).
 *
 * Each pass brings the tree up to date from the host's record of what
 * changed (appends, starts, requeues), or rebuilds it when the host gives
 * none. */
#ifndef FLEETSIM_POLICIES_QUEUE_INDEX_H
#define FLEETSIM_POLICIES_QUEUE_INDEX_H

#include <stdint.h>

#include "policies/policy.h"

/* What backfilling counts as a job's length: its estimate, and at least
 * one microsecond, so a zero-length estimate still needs its slots at the
 * instant it starts. The walk and the index must read it alike. */
static inline int64_t queue_job_duration(const struct policy_job *job)
{
    return job->estimate_us > 0 ? job->estimate_us : 1;
}

/* Queue coordinates per leaf of the tree. */
#define QUEUE_INDEX_BLOCK 32

/* Size classes are switched on once the queue holds more jobs than
 * QUEUE_INDEX_CLASSES_FROM and the walk, with one class (one least
 * duration for every size), read more than QUEUE_INDEX_WASTED blocks that
 * held no job to try per call over its last QUEUE_INDEX_TALLY calls; they
 * stay on for the index's life (every rebuild sizes them to the jobs then
 * waiting). A class costs every refresh one more minimum per block and
 * node, and the refreshes read every job a start moved: where the walk
 * wastes little they are a loss (a year on 16,384 GPUs whose backlog
 * reaches 75,000: 6.6 -> 7.5 s with classes; HPC2N EASY 25% slower),
 * where it wastes much they pay many times over (the 12,500-node year
 * fleet wasted ~16 blocks a call). */
#define QUEUE_INDEX_CLASSES_FROM 4096
#define QUEUE_INDEX_WASTED 4
#define QUEUE_INDEX_TALLY 4096

/* A queue shorter than this is read job by job, without the tree, until
 * it holds twice as many: keeping the tree costs every pass a refresh of
 * the blocks its starts and arrivals touched, more than reading a few
 * hundred jobs (HPC2N EASY, at most 2,438 waiting: 8% fewer instructions
 * for the whole replay, callgrind). */
#define QUEUE_INDEX_SCAN_BELOW 512

struct queue_index {
    uint64_t size;        /* leaves (blocks): coordinates [0, size x QUEUE_INDEX_BLOCK); 0 = never built */
    int32_t *slots;       /* per tree node (root 1, block b at size + b): least slots */
    uint32_t classes;     /* job size classes: 0 (one slot), [2, 4), [4, 8), ...; 1 = one for all */
    int want_classes;     /* the walk wasted enough to keep classes (above) */
    int classes_sized;    /* a rebuild sized the classes since they were wanted */
    int scanning;         /* the queue is short: no tree, the walk reads every job */
    uint32_t scan_below;  /* QUEUE_INDEX_SCAN_BELOW (tests set 0 to keep the tree) */
    int64_t *dur;         /* per tree node, `classes` each: least duration of a job of that class or smaller */
    uint64_t origin, end; /* the coordinates the queue held at the last update */
    /* the walk's calls and the blocks it read in vain, since the last
     * look; written through a pointer, so the walk takes the index
     * read-only (the pointer is to tally_of: an index is not copied) */
    uint64_t tally_of[2], *tally;
};

void queue_index_init(struct queue_index *x);
void queue_index_release(struct queue_index *x);
/* Brings the index up to the view's queue. Returns 0, or -1 (memory). */
int queue_index_update(struct queue_index *x, const struct cluster_view *v);
/* The first queue position at or after `from` whose job might start: one
 * with at most `room` slots that ends within `window` or takes at most
 * `extra` slots, a fractional job counting as none (it may join a shared
 * GPU; the walk then decides); v->n_queued when none. */
uint32_t queue_index_next(const struct queue_index *x, const struct cluster_view *v, uint32_t from, int64_t room,
                          int64_t extra, int64_t window);

#endif
