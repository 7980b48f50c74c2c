#include "policies/queue_index.h"

#include <stdlib.h>
#include <string.h>

void queue_index_init(struct queue_index *x)
{
    memset(x, 0, sizeof *x);
}

void queue_index_release(struct queue_index *x)
{
    if (!x)
        return;
    free(x->slots);
    free(x->dur);
    queue_index_init(x);
}

/* A leaf no waiting job holds: never a candidate. */
static void leaf_empty(struct queue_index *x, uint64_t c)
{
    x->slots[x->size + c] = INT32_MAX;
    x->dur[x->size + c] = INT64_MAX;
}

static void leaf_set(struct queue_index *x, uint64_t c, const struct policy_job *job)
{
    x->slots[x->size + c] = job->milli > 0 ? 0 : job->slots;
    x->dur[x->size + c] = queue_job_duration(job);
}

static void pull(struct queue_index *x, uint64_t k)
{
    int32_t a = x->slots[2 * k], b = x->slots[2 * k + 1];
    int64_t c = x->dur[2 * k], d = x->dur[2 * k + 1];
    x->slots[k] = a < b ? a : b;
    x->dur[k] = c < d ? c : d;
}

/* Recomputes the ancestors of leaves [a, b). */
static void pull_range(struct queue_index *x, uint64_t a, uint64_t b)
{
    for (a += x->size, b += x->size; a > 1; a /= 2, b = (b + 1) / 2)
        for (uint64_t k = a / 2; k <= (b - 1) / 2; k++)
            pull(x, k);
}

/* Sets leaves [a, b) from the view where the queue holds them, empty
 * elsewhere, and their ancestors. */
static void refresh(struct queue_index *x, const struct cluster_view *v, uint64_t a, uint64_t b)
{
    if (b > x->size)
        b = x->size;
    if (a >= b)
        return;
    uint64_t end = v->queue_origin + v->n_queued;
    for (uint64_t c = a; c < b; c++) {
        if (c >= v->queue_origin && c < end)
            leaf_set(x, c, &v->queued[c - v->queue_origin]);
        else
            leaf_empty(x, c);
    }
    pull_range(x, a, b);
}

static int rebuild(struct queue_index *x, const struct cluster_view *v)
{
    uint64_t end = v->queue_origin + v->n_queued, size = 64;
    while (size < end)
        size *= 2;
    if (size != x->size) {
        int32_t *slots = realloc(x->slots, 2 * size * sizeof *slots);
        if (!slots)
            return -1;
        x->slots = slots;
        int64_t *dur = realloc(x->dur, 2 * size * sizeof *dur);
        if (!dur)
            return -1;
        x->dur = dur;
        x->size = size;
    }
    for (uint64_t c = 0; c < size; c++) {
        if (c >= v->queue_origin && c < end)
            leaf_set(x, c, &v->queued[c - v->queue_origin]);
        else
            leaf_empty(x, c);
    }
    for (uint64_t k = size; k-- > 1;)
        pull(x, k);
    return 0;
}

int queue_index_update(struct queue_index *x, const struct cluster_view *v)
{
    uint64_t origin = v->queue_origin, end = origin + v->n_queued;
    if (!v->queue_tracked || x->size == 0 || end > x->size) {
        if (rebuild(x, v) != 0) {
            x->size = 0; /* half built: the next pass rebuilds */
            return -1;
        }
    } else {
        for (uint32_t k = 0; k < v->n_queue_dirty; k++)
            refresh(x, v, v->queue_dirty[2 * k], v->queue_dirty[2 * k + 1]);
        /* what the queue no longer holds at either end */
        refresh(x, v, x->origin, origin < x->end ? origin : x->end);
        refresh(x, v, end > x->origin ? end : x->origin, x->end);
    }
    x->origin = origin;
    x->end = end;
    return 0;
}

struct query {
    const struct queue_index *x;
    uint64_t from, to; /* coordinates */
    int64_t room, extra, window;
};

/* Whether node k may hold a job the walk would try. */
static int may_hold(const struct query *q, uint64_t k)
{
    int32_t s = q->x->slots[k];
    return s <= q->room && (q->x->dur[k] <= q->window || s <= q->extra);
}

/* The first coordinate in [q->from, q->to) under node k (leaves [lo, hi))
 * that may hold one, or UINT64_MAX. */
static uint64_t first_in(const struct query *q, uint64_t k, uint64_t lo, uint64_t hi)
{
    if (hi <= q->from || lo >= q->to || !may_hold(q, k))
        return UINT64_MAX;
    if (hi - lo == 1)
        return lo;
    uint64_t mid = lo + (hi - lo) / 2, c = first_in(q, 2 * k, lo, mid);
    return c != UINT64_MAX ? c : first_in(q, 2 * k + 1, mid, hi);
}

uint32_t queue_index_next(const struct queue_index *x, const struct cluster_view *v, uint32_t from, int64_t room,
                          int64_t extra, int64_t window)
{
    if (from >= v->n_queued)
        return v->n_queued;
    struct query q = {x, v->queue_origin + from, v->queue_origin + v->n_queued, room, extra, window};
    uint64_t c = first_in(&q, 1, 0, x->size);
    return c == UINT64_MAX ? v->n_queued : (uint32_t)(c - v->queue_origin);
}
