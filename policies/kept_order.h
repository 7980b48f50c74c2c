/* kept_order: a priority order whose keys never change while a job waits,
 * kept from pass to pass through the host's record of the queue
 * (policy.h, ABI 4, queue_tracked) instead of computed and sorted afresh:
 * a pass keys and sorts only the jobs the record names, and merges them
 * into the order kept, with the jobs that left taken out. Such orders are
 * SJF's and F1's (policies/ordering.h), FCFS's where hooks take a pass
 * off the queue's own order, SRTF's remaining time and Tiresias' queue
 * without its starvation rule (their inputs change only while a job
 * runs).
 *
 * The order written is a fresh sort's (every job keyed, then
 * ordering_keys_sort), entry for entry. The keys must be finite (SJF and
 * F1: integer fields, log10 of positive numbers; SRTF: the estimate less
 * the service per slot, clamped at 0; Tiresias: a queue number and the
 * submit time), so they order the jobs totally (ordering_key_before); a
 * job's place in the queue orders as its coordinate does; and a job
 * outside the record's ranges is the same job with the same fields, so
 * its key is the one kept. Anything the record cannot vouch for (an
 * untracked view, more ranges between two writes than are kept, a count
 * that does not add up) sorts the whole queue afresh, and keeps that.
 *
 * Why: an SJF pass sorted every waiting job (HPC2N's sjf+easy replay spent
 * 58% of its instructions there), so a replay whose queue grows with the
 * log was quadratic with a large constant; SRTF's spent a fifth of its. */
#ifndef FLEETSIM_POLICIES_KEPT_ORDER_H
#define FLEETSIM_POLICIES_KEPT_ORDER_H

#include <stdint.h>

#include "policies/ordering.h"
#include "policies/policy.h"

/* Ranges of coordinates the record named since the order was last
 * written, kept merged; past this many the next write sorts afresh. */
#define KEPT_ORDER_RANGES 64u

struct kept_order_entry {
    double primary, secondary; /* the job's key (struct ordering_key) */
    uint64_t coord;            /* its place in the host's queue */
};

/* The key of a waiting job at `index` of the view, as the pass orders
 * it; it must not change while the job waits. */
typedef struct ordering_key (*kept_order_key_fn)(const void *ctx, const struct policy_job *job, int64_t now_us,
                                                 uint32_t index);

struct kept_order {
    kept_order_key_fn key;
    const void *ctx;
    /* every job of the queue when the order was last written, in order;
     * valid: that, and `range` holds every change since */
    struct kept_order_entry *entry, *next;
    uint32_t n, cap, cap_next;
    int valid;
    uint64_t range[2 * KEPT_ORDER_RANGES];
    uint32_t n_ranges;
    /* scratch: a mark per job waiting */
    uint8_t *mark;
    uint32_t cap_mark;
    /* the last write sorted the whole queue, or keyed `keyed` jobs the
     * record named (for tests and figures) */
    int sorted_all;
    uint32_t keyed;
};

void kept_order_init(struct kept_order *k, kept_order_key_fn key, const void *ctx);
void kept_order_release(struct kept_order *k);
/* Reads the view's record of what changed: call on every decide(), even
 * one that writes no order, since the record covers only the time since
 * the previous call. */
void kept_order_note(struct kept_order *k, const struct cluster_view *v);
/* Writes into order[0..n_queued) the queue indices in priority order, as
 * a fresh sort would (gaps too, which no host shows an ordering other
 * than FCFS), with keys[] and scratch[] (n_queued entries each) as
 * scratch. Out of memory it still writes the order, by a fresh sort, and
 * keeps nothing. */
void kept_order_write(struct kept_order *k, const struct cluster_view *v, struct ordering_key *keys,
                     struct ordering_key *scratch, uint32_t *order);

#endif
