#include "policies/kept_order.h"

#include <stdlib.h>
#include <string.h>

#include "policies/grow.h"

void kept_order_init(struct kept_order *k, enum ordering_kind kind)
{
    memset(k, 0, sizeof *k);
    k->kind = kind;
}

void kept_order_release(struct kept_order *k)
{
    if (!k)
        return;
    free(k->entry);
    free(k->next);
    free(k->named);
    free(k->named_scratch);
    free(k->mark);
    kept_order_init(k, k->kind);
}

void kept_order_note(struct kept_order *k, const struct cluster_view *v)
{
    if (!v->queue_tracked) {
        k->valid = 0;
        return;
    }
    for (uint32_t d = 0; d < v->n_queue_dirty && k->valid; d++) {
        uint64_t a = v->queue_dirty[2 * d], b = v->queue_dirty[2 * d + 1];
        if (a >= b)
            continue;
        /* joined to a range it meets (arrivals come one a pass, each next
         * to the last); ranges may still overlap, which the write allows */
        uint32_t r = 0;
        while (r < k->n_ranges && (a > k->range[2 * r + 1] || b < k->range[2 * r]))
            r++;
        if (r < k->n_ranges) {
            k->range[2 * r] = a < k->range[2 * r] ? a : k->range[2 * r];
            k->range[2 * r + 1] = b > k->range[2 * r + 1] ? b : k->range[2 * r + 1];
        } else if (k->n_ranges == KEPT_ORDER_RANGES) {
            k->valid = 0; /* too much to keep: the next write sorts afresh */
        } else {
            k->range[2 * r] = a;
            k->range[2 * r + 1] = b;
            k->n_ranges++;
        }
    }
}

static int reserve(struct kept_order *k, uint32_t n)
{
    return policies_grow((void **)&k->entry, &k->cap, n, sizeof *k->entry) != 0 ||
                   policies_grow((void **)&k->next, &k->cap_next, n, sizeof *k->next) != 0 ||
                   policies_grow((void **)&k->named, &k->cap_named, n, sizeof *k->named) != 0 ||
                   policies_grow((void **)&k->named_scratch, &k->cap_scratch, n, sizeof *k->named_scratch) != 0 ||
                   policies_grow((void **)&k->mark, &k->cap_mark, n, 1) != 0
               ? -1
               : 0;
}

/* The whole queue keyed and sorted, nothing kept. */
static int sort_afresh(struct kept_order *k, const struct cluster_view *v, uint32_t *order)
{
    k->valid = 0;
    k->n_ranges = 0;
    k->sorted_all = 1;
    ordering_sort(k->kind, v, 0, k->named, k->named_scratch, order);
    return 0;
}

/* A job the record named, at place `out` of the order. */
static void put_named(struct kept_order *k, const struct ordering_key *key, uint64_t origin, uint32_t *order,
                      uint32_t out)
{
    k->next[out] = (struct kept_order_entry){key->primary, key->secondary, origin + key->index};
    order[out] = key->index;
}

int kept_order_write(struct kept_order *k, const struct cluster_view *v, uint32_t *order)
{
    uint32_t n = v->n_queued;
    uint64_t origin = v->queue_origin;
    k->sorted_all = 0;
    if (reserve(k, n) != 0) {
        k->valid = 0;
        return -1;
    }
    /* gaps are never shown to an ordering other than FCFS (policy.h); the
     * order kept holds jobs only */
    if (v->n_queue_gaps != 0)
        return sort_afresh(k, v, order);
    if (!k->valid) {
        k->n = 0;
        k->n_ranges = 1;
        k->range[0] = origin;
        k->range[1] = origin + n;
        k->sorted_all = 1;
    }
    /* the jobs at the places the record named, keyed, each once (ranges
     * may overlap), and marked */
    uint8_t *mark = k->mark;
    memset(mark, 0, n);
    uint32_t named = 0;
    for (uint32_t r = 0; r < k->n_ranges; r++) {
        uint64_t a = k->range[2 * r] > origin ? k->range[2 * r] - origin : 0;
        uint64_t b = k->range[2 * r + 1] > origin ? k->range[2 * r + 1] - origin : 0;
        for (uint64_t i = a; i < b && i < n; i++) {
            if (mark[i])
                continue;
            mark[i] = 1;
            struct ordering_key key = ordering_key_of(k->kind, &v->queued[i], v->now_us, 0, (uint32_t)i);
            if (key.primary != key.primary || key.secondary != key.secondary)
                return sort_afresh(k, v, order); /* no total order to merge by */
            k->named[named++] = key;
        }
    }
    k->keyed = named;
    ordering_keys_sort(k->named, named, k->named_scratch);
    /* One pass over the order kept: a job still waiting at a place the
     * record did not name keeps its key, and the jobs named merge in (a
     * kept job's place in the queue orders as its coordinate). */
    uint32_t out = 0, j = 0;
    for (uint32_t i = 0; i < k->n; i++) {
        const struct kept_order_entry *e = &k->entry[i];
        uint64_t at = e->coord - origin; /* wraps past n when before the origin */
        if (at >= n || mark[at])
            continue;
        struct ordering_key key = {e->primary, e->secondary, (uint32_t)at};
        for (; j < named && ordering_key_before(&k->named[j], &key) && out < n; j++)
            put_named(k, &k->named[j], origin, order, out++);
        if (out == n)
            return sort_afresh(k, v, order); /* more than the queue holds: the record did not hold */
        k->next[out] = *e;
        order[out++] = (uint32_t)at;
    }
    if (out + (named - j) != n)
        return sort_afresh(k, v, order); /* jobs missing: the record did not hold */
    for (; j < named; j++)
        put_named(k, &k->named[j], origin, order, out++);
    struct kept_order_entry *t = k->entry; /* the order written is kept; the old one is the next's room */
    uint32_t cap = k->cap;
    k->entry = k->next;
    k->cap = k->cap_next;
    k->next = t;
    k->cap_next = cap;
    k->n = n;
    k->valid = 1;
    k->n_ranges = 0;
    return 0;
}
