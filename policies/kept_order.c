#include "policies/kept_order.h"

#include <stdlib.h>
#include <string.h>

#include "policies/grow.h"

void kept_order_init(struct kept_order *k, kept_order_key_fn key, kept_order_changes_fn changes, const void *ctx)
{
    memset(k, 0, sizeof *k);
    k->key = key;
    k->changes = changes;
    k->ctx = ctx;
}

/* ---- the times keys change: a binary min-heap ---- */

static int due_before(const struct kept_order_due *a, const struct kept_order_due *b)
{
    return a->at_us < b->at_us;
}

/* Notes when the key of the job at place i of the view, just read, next
 * changes. Out of memory the order is no longer kept (the next write
 * sorts afresh, which notes them all again). */
static void due_note(struct kept_order *k, const struct cluster_view *v, uint32_t i)
{
    int64_t at = k->changes(k->ctx, &v->queued[i], v->now_us);
    if (at == INT64_MAX)
        return;
    if (policies_grow((void **)&k->due, &k->cap_due, k->n_due + 1, sizeof *k->due) != 0) {
        k->valid = 0;
        return;
    }
    struct kept_order_due d = {at, v->queue_origin + i};
    uint32_t c = k->n_due++;
    while (c > 0 && due_before(&d, &k->due[(c - 1) / 2])) {
        k->due[c] = k->due[(c - 1) / 2];
        c = (c - 1) / 2;
    }
    k->due[c] = d;
}

/* The earliest time noted, taken out. */
static struct kept_order_due due_pop(struct kept_order *k)
{
    struct kept_order_due top = k->due[0], last = k->due[--k->n_due];
    uint32_t c = 0, n = k->n_due;
    for (;;) {
        uint32_t child = 2 * c + 1;
        if (child >= n)
            break;
        if (child + 1 < n && due_before(&k->due[child + 1], &k->due[child]))
            child++;
        if (!due_before(&k->due[child], &last))
            break;
        k->due[c] = k->due[child];
        c = child;
    }
    if (n > 0)
        k->due[c] = last;
    return top;
}

void kept_order_release(struct kept_order *k)
{
    if (!k)
        return;
    free(k->entry);
    free(k->next);
    free(k->mark);
    free(k->due);
    kept_order_init(k, k->key, k->changes, k->ctx);
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

/* The whole queue keyed and sorted into order[], the keys sorted left in keys[]. */
static void sort_all(const struct kept_order *k, const struct cluster_view *v, struct ordering_key *keys,
                     struct ordering_key *scratch, uint32_t *order)
{
    for (uint32_t i = 0; i < v->n_queued; i++)
        keys[i] = k->key(k->ctx, &v->queued[i], v->now_us, i);
    ordering_keys_order(keys, v->n_queued, scratch, order);
}

/* The whole queue keyed and sorted, and kept from the keys sorted. */
static void sort_afresh(struct kept_order *k, const struct cluster_view *v, struct ordering_key *keys,
                        struct ordering_key *scratch, uint32_t *order)
{
    sort_all(k, v, keys, scratch, order);
    for (uint32_t i = 0; i < v->n_queued; i++)
        k->entry[i] = (struct kept_order_entry){keys[i].primary, keys[i].secondary, v->queue_origin + keys[i].index};
    k->n = v->n_queued;
    k->valid = 1;
    k->n_ranges = 0;
    k->sorted_all = 1;
    /* every job keyed: each one's time noted afresh (after an untracked
     * view too: the next view, if tracked, merges into this order) */
    k->n_due = 0;
    if (k->changes)
        for (uint32_t i = 0; i < v->n_queued; i++)
            due_note(k, v, i);
}

/* The job at place i, named by the record or come due, keyed (once). */
static void key_named(struct kept_order *k, const struct cluster_view *v, struct ordering_key *keys,
                      uint32_t *n_named, uint32_t i)
{
    k->mark[i] = 1;
    keys[(*n_named)++] = k->key(k->ctx, &v->queued[i], v->now_us, i);
    if (k->changes)
        due_note(k, v, i);
}

/* A job the record named, at place `out` of the order. */
static void put_named(struct kept_order *k, const struct ordering_key *key, uint64_t origin, uint32_t *order,
                      uint32_t out)
{
    k->next[out] = (struct kept_order_entry){key->primary, key->secondary, origin + key->index};
    order[out] = key->index;
}

void kept_order_write(struct kept_order *k, const struct cluster_view *v, struct ordering_key *keys,
                      struct ordering_key *scratch, uint32_t *order)
{
    uint32_t n = v->n_queued;
    uint64_t origin = v->queue_origin;
    k->sorted_all = 0;
    k->keyed = 0;
    k->keyed_due = 0;
    /* a job keyed again, or gone, leaves its old times in the heap until
     * they come: past a bound on them, sorting afresh notes them anew */
    if (k->n_due > 4u * (uint64_t)n + 1024u)
        k->valid = 0;
    if (policies_grow((void **)&k->entry, &k->cap, n, sizeof *k->entry) != 0 ||
        policies_grow((void **)&k->next, &k->cap_next, n, sizeof *k->next) != 0 ||
        policies_grow((void **)&k->mark, &k->cap_mark, n, 1) != 0) {
        /* the order is still written; only what is kept is lost */
        k->valid = 0;
        k->sorted_all = 1;
        sort_all(k, v, keys, scratch, order);
        return;
    }
    if (!k->valid) {
        sort_afresh(k, v, keys, scratch, order);
        return;
    }
    /* the jobs at the places the record named, keyed, each once (ranges
     * may overlap), and marked */
    uint8_t *mark = k->mark;
    if (n > 0)
        memset(mark, 0, n);
    uint32_t n_named = 0;
    for (uint32_t r = 0; r < k->n_ranges; r++) {
        uint64_t a = k->range[2 * r] > origin ? k->range[2 * r] - origin : 0;
        uint64_t b = k->range[2 * r + 1] > origin ? k->range[2 * r + 1] - origin : 0;
        for (uint64_t i = a; i < b && i < n; i++)
            if (!mark[i])
                key_named(k, v, keys, &n_named, (uint32_t)i);
    }
    /* the jobs whose keys' times have come (those keyed again above note
     * times after now) */
    uint32_t n_record = n_named;
    while (k->n_due > 0 && k->due[0].at_us <= v->now_us) {
        uint64_t i = due_pop(k).coord - origin; /* wraps past n when before the origin */
        if (i < n && !mark[i])
            key_named(k, v, keys, &n_named, (uint32_t)i);
    }
    k->keyed = n_record;
    k->keyed_due = n_named - n_record;
    if (!k->valid) {
        /* a time could not be noted (memory): sorted afresh, which notes
         * every time again, or, failing that too, leaves the next write
         * to sort afresh */
        sort_afresh(k, v, keys, scratch, order);
        return;
    }
    ordering_keys_sort(keys, n_named, scratch);
    /* One pass over the order kept: a job still waiting at a place the
     * record did not name keeps its key, and the jobs named merge in (a
     * kept job's place in the queue orders as its coordinate). The places
     * kept are distinct and none is named, so at most n come out. */
    uint32_t out = 0, j = 0;
    for (uint32_t i = 0; i < k->n; i++) {
        const struct kept_order_entry *e = &k->entry[i];
        uint64_t at = e->coord - origin; /* wraps past n when before the origin */
        if (at >= n || mark[at])
            continue;
        struct ordering_key key = {e->primary, e->secondary, (uint32_t)at};
        for (; j < n_named && ordering_key_before(&keys[j], &key); j++)
            put_named(k, &keys[j], origin, order, out++);
        k->next[out] = *e;
        order[out++] = (uint32_t)at;
    }
    for (; j < n_named; j++)
        put_named(k, &keys[j], origin, order, out++);
    if (out != n) {
        /* places neither kept nor named: a job the record did not name
         * joined the queue (the record did not hold) */
        sort_afresh(k, v, keys, scratch, order);
        return;
    }
    /* the order written is kept; the old one is the next's room (their
     * capacities differ after a failed growth) */
    struct kept_order_entry *t = k->entry;
    uint32_t cap = k->cap;
    k->entry = k->next;
    k->cap = k->cap_next;
    k->next = t;
    k->cap_next = cap;
    k->n = n;
    k->n_ranges = 0;
}
