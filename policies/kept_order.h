/* kept_order: a priority order whose keys never change while a job waits,
 * kept from pass to pass through the host's record of the queue
 * (policy.h, ABI 4, queue_tracked) instead of computed and sorted afresh:
 * a pass keys and sorts only the jobs the record names, and merges them
 * into the order kept, with the jobs that left taken out. Such orders are
 * SJF's and F1's (policies/ordering.h), FCFS's where hooks take a pass
 * off the queue's own order, SRTF's remaining time and Tiresias' queue
 * (their inputs change only while a job runs).
 *
 * A key may also change at a time known when it is read: Tiresias'
 * starvation rule sends a job that has waited long enough back to queue
 * 0. Such an order gives kept_order_init a `changes` function, and the
 * order keeps the times its keys change (a heap of them, `due`): a write
 * keys again, with the jobs the record names, every job whose time has
 * come. The keys must then change at no other time.
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
 * it; it must not change while the job waits, but at the times the
 * order's `changes` function gives. */
typedef struct ordering_key (*kept_order_key_fn)(const void *ctx, const struct policy_job *job, int64_t now_us,
                                                 uint32_t index);
/* The first time after now_us at which the key of a job that waits from
 * now on may change, or INT64_MAX when it will not (an early time is
 * allowed: the key is read again then). */
typedef int64_t (*kept_order_changes_fn)(const void *ctx, const struct policy_job *job, int64_t now_us);

/* A time at which the key of the job at a coordinate may change (the job
 * may have left since: the job there is then keyed again for nothing). */
struct kept_order_due {
    int64_t at_us;
    uint64_t coord;
};

struct kept_order {
    kept_order_key_fn key;
    kept_order_changes_fn changes; /* or NULL: keys that never change while a job waits */
    const void *ctx;
    /* when changes: a min-heap by time of the keys kept that change, one
     * entry or more for each (a job keyed again adds one; those of a job
     * gone stay until their time) */
    struct kept_order_due *due;
    uint32_t n_due, cap_due;
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
    /* the last write sorted the whole queue, or keyed `keyed` jobs: those
     * the record named, and `keyed_due` more whose time had come (for
     * tests and figures) */
    int sorted_all;
    uint32_t keyed, keyed_due;
};

/* changes: NULL, or when keys change with time alone (above). */
void kept_order_init(struct kept_order *k, kept_order_key_fn key, kept_order_changes_fn changes, const void *ctx);
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
