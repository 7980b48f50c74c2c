/* ordering: queue orderings (which waiting job comes first). Lower key first;
 * ties go to the earlier arrival, so every ordering is total and deterministic.
 *
 * Keys use seconds (s = submit, r = requested time, n = slots, w = wait):
 *   fcfs   s
 *   sjf    (r, s)
 *   f1     log10(r) * n + 870 * log10(s)         (Carastan-Santos & de Camargo, SC'17)
 *   wfp3   -(w / r)^3 * n                         (Tang et al.)
 *   unicep -w / (log2(n) * r)
 * with r or s <= 0 replaced by 0.1 in f1, and tiny offsets (1e-15) in unicep as
 * in the RLScheduler reference. `compat_wait` makes w = -1 - s, the value the
 * RLScheduler reference code evaluates for queued jobs; it exists only to
 * reproduce that paper's WFP3 and UNICEP columns.
 */
#ifndef FLEETSIM_POLICIES_ORDERING_H
#define FLEETSIM_POLICIES_ORDERING_H

#include <stddef.h>
#include <stdint.h>

#include "policies/policy.h"

enum ordering_kind { ORDERING_FCFS, ORDERING_SJF, ORDERING_F1, ORDERING_WFP3, ORDERING_UNICEP };

struct ordering_key {
    double primary;
    double secondary;
    uint32_t index; /* arrival position: the final tie-break */
};

/* Returns 0 and sets *kind, or -1 for an unknown name. */
int ordering_parse(const char *name, size_t len, enum ordering_kind *kind);
const char *ordering_name(enum ordering_kind kind);
/* True when the order changes with time (keys use the wait). */
int ordering_depends_on_time(enum ordering_kind kind);

struct ordering_key ordering_key_of(enum ordering_kind kind, const struct policy_job *job,
                                    int64_t now_us, int compat_wait, uint32_t index);
/* Whether key a goes before key b: lower primary, then lower secondary,
 * then the earlier arrival (a total order when neither holds a NaN). */
static inline int ordering_key_before(const struct ordering_key *a, const struct ordering_key *b)
{
    if (a->primary != b->primary)
        return a->primary < b->primary;
    if (a->secondary != b->secondary)
        return a->secondary < b->secondary;
    return a->index < b->index;
}
int ordering_key_compare(const struct ordering_key *a, const struct ordering_key *b);
/* Sorts keys[0..n) by ordering_key_compare, with scratch[0..n). Keys have
 * distinct indices, so the order is total and any sort gives it: a radix
 * sort of the primary, then the merge sort within runs of equal primaries,
 * for 512 keys or more without NaN; the merge sort
 * (policies/merge_sort.h: qsort was half of an SJF replay of HPC2N) for
 * the rest. */
void ordering_keys_sort(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch);
/* Sorts keys[0..n) (ordering_keys_sort) and writes their indices, in that
 * order, into order[0..n). */
void ordering_keys_order(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch, uint32_t *order);

/* Writes into order[0..n_queued) the queue indices in priority order, using
 * keys[] and scratch[] (n_queued entries each) as scratch. FCFS needs no
 * sort. */
void ordering_sort(enum ordering_kind kind, const struct cluster_view *view, int compat_wait,
                   struct ordering_key *keys, struct ordering_key *scratch, uint32_t *order);

#endif
