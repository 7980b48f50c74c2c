#include "policies/queue_index.h"

#include <stdlib.h>
#include <string.h>

void queue_index_init(struct queue_index *x)
{
    memset(x, 0, sizeof *x);
    x->tally = x->tally_of;
    x->scan_below = QUEUE_INDEX_SCAN_BELOW;
}

void queue_index_release(struct queue_index *x)
{
    if (!x)
        return;
    free(x->slots);
    free(x->dur);
    queue_index_init(x);
}

/* A job's slots as the index counts them: a fractional job may take none. */
static int32_t job_slots(const struct policy_job *job)
{
    return job->milli > 0 ? 0 : job->slots;
}

/* The size class of a job of `slots`: floor(log2(slots)), 0 for at most
 * one slot (1 -> 0, 2-3 -> 1, 4-7 -> 2, ...), at most the index's last
 * class, which holds every larger job too. Powers of two open their class,
 * so a class holds no job of a common GPU count larger than the free slots
 * that picked it (with classes closed by powers of two, 65-127 free slots
 * picked the class of the 128-GPU jobs). */
static uint32_t size_class(const struct queue_index *x, int64_t slots)
{
    uint32_t c = slots <= 1 ? 0 : 63 - (uint32_t)__builtin_clzll((unsigned long long)slots);
    return c < x->classes ? c : x->classes - 1;
}

/* Sets leaf b, the minima of the jobs the queue holds in block b (none:
 * never a candidate), read from the view itself. */
static void block_set(struct queue_index *x, const struct cluster_view *v, uint64_t b)
{
    uint64_t lo = b * QUEUE_INDEX_BLOCK, hi = lo + QUEUE_INDEX_BLOCK, end = v->queue_origin + v->n_queued;
    if (lo < v->queue_origin)
        lo = v->queue_origin;
    if (hi > end)
        hi = end;
    int32_t slots = INT32_MAX;
    int64_t least[32], *dur = &x->dur[(x->size + b) * x->classes];
    for (uint32_t c = 0; c < x->classes; c++)
        least[c] = INT64_MAX;
    for (uint64_t c = lo; c < hi; c++) {
        const struct policy_job *job = &v->queued[c - v->queue_origin];
        if (job->gap)
            continue;
        int32_t s = job_slots(job);
        int64_t d = queue_job_duration(job);
        uint32_t k = size_class(x, s);
        slots = s < slots ? s : slots;
        /* a branch, not a conditional store: a run of one class would
         * otherwise wait on its own last store every job */
        if (d < least[k])
            least[k] = d;
    }
    dur[0] = least[0];
    for (uint32_t c = 1; c < x->classes; c++)
        dur[c] = dur[c - 1] < least[c] ? dur[c - 1] : least[c];
    x->slots[x->size + b] = slots;
}

static void pull(struct queue_index *x, uint64_t k)
{
    int32_t a = x->slots[2 * k], b = x->slots[2 * k + 1];
    x->slots[k] = a < b ? a : b;
    const int64_t *l = &x->dur[2 * k * x->classes], *r = l + x->classes;
    int64_t *d = &x->dur[k * x->classes];
    for (uint32_t c = 0; c < x->classes; c++)
        d[c] = l[c] < r[c] ? l[c] : r[c];
}

/* Recomputes the ancestors of leaves [a, b). */
static void pull_range(struct queue_index *x, uint64_t a, uint64_t b)
{
    for (a += x->size, b += x->size; a > 1; a /= 2, b = (b + 1) / 2)
        for (uint64_t k = a / 2; k <= (b - 1) / 2; k++)
            pull(x, k);
}

/* Sets the blocks of coordinates [a, b) from the view, and their
 * ancestors. */
static void refresh(struct queue_index *x, const struct cluster_view *v, uint64_t a, uint64_t b)
{
    uint64_t limit = x->size * QUEUE_INDEX_BLOCK;
    if (b > limit)
        b = limit;
    if (a >= b)
        return;
    uint64_t first = a / QUEUE_INDEX_BLOCK, last = (b - 1) / QUEUE_INDEX_BLOCK;
    for (uint64_t k = first; k <= last; k++)
        block_set(x, v, k);
    pull_range(x, first, last + 1);
}

static int rebuild(struct queue_index *x, const struct cluster_view *v)
{
    uint64_t end = v->queue_origin + v->n_queued, size = 2;
    while (size * QUEUE_INDEX_BLOCK < end)
        size *= 2;
    /* classes, once they pay (queue_index.h), up to the largest job
     * waiting and the cluster's size (a larger job cannot start): a larger
     * job that comes later joins the last class, which is only coarser
     * (17 classes for a 100,000-GPU cluster whose jobs ask at most 1,024
     * made every refresh pay for 6 empty ones) */
    int64_t largest = 1;
    for (uint32_t k = 0; x->want_classes && k < v->n_queued; k++)
        largest = v->queued[k].slots > largest ? v->queued[k].slots : largest;
    largest = largest < v->total_slots ? largest : v->total_slots;
    uint32_t classes = 1;
    while (x->want_classes && classes < 32 && ((int64_t)1 << classes) <= largest)
        classes++;
    x->classes_sized = x->want_classes; /* one class if every job waiting has one slot */
    if (size != x->size || classes != x->classes) {
        int32_t *slots = realloc(x->slots, 2 * size * sizeof *slots);
        if (!slots)
            return -1;
        x->slots = slots;
        int64_t *dur = realloc(x->dur, 2 * size * classes * sizeof *dur);
        if (!dur)
            return -1;
        x->dur = dur;
        x->size = size;
        x->classes = classes;
    }
    for (uint64_t k = 0; k < size; k++)
        block_set(x, v, k);
    for (uint64_t k = size; k-- > 1;)
        pull(x, k);
    return 0;
}

int queue_index_update(struct queue_index *x, const struct cluster_view *v)
{
    uint64_t origin = v->queue_origin, end = origin + v->n_queued;
    /* a short queue is read job by job (queue_index.h); the tree is built
     * afresh once the queue is long again */
    if (v->n_queued < (x->scanning ? 2 * x->scan_below : x->scan_below)) {
        x->scanning = 1;
        return 0;
    }
    if (x->scanning) {
        x->scanning = 0;
        x->size = 0;
    }
    if (!x->want_classes && x->tally[0] >= QUEUE_INDEX_TALLY) {
        x->want_classes = v->n_queued > QUEUE_INDEX_CLASSES_FROM && x->tally[1] > QUEUE_INDEX_WASTED * x->tally[0];
        x->tally[0] = x->tally[1] = 0;
    }
    if (!v->queue_tracked || x->size == 0 || end > x->size * QUEUE_INDEX_BLOCK ||
        (x->want_classes && !x->classes_sized)) {
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
    const struct cluster_view *v;
    uint64_t from, to; /* coordinates */
    int64_t room, extra, window;
    uint32_t room_class; /* size_class(room) */
};

/* Whether a job may be one the walk would try; a gap (policy.h) never is. */
static int may_try(const struct query *q, const struct policy_job *job)
{
    int32_t slots = job_slots(job);
    return !job->gap && slots <= q->room && (queue_job_duration(job) <= q->window || slots <= q->extra);
}

/* Whether node k's jobs may hold one: one small enough to fit in the spare
 * slots, or one of a class no larger than the room's that ends in time (the
 * room's class also holds jobs larger than the room, up to twice its
 * lowest size, so this may say yes for one of those; never no for a job
 * that fits). */
static int node_may_try(const struct query *q, uint64_t k)
{
    int32_t slots = q->x->slots[k];
    return slots <= q->room && (slots <= q->extra || q->x->dur[k * q->x->classes + q->room_class] <= q->window);
}

/* The first coordinate in [q->from, q->to) under node k (blocks [lo, hi))
 * whose job the walk would try, or UINT64_MAX. In a block the jobs
 * themselves are read: a block's minima may come from different jobs. */
static uint64_t first_in(const struct query *q, uint64_t k, uint64_t lo, uint64_t hi)
{
    const uint64_t B = QUEUE_INDEX_BLOCK;
    if (hi * B <= q->from || lo * B >= q->to || !node_may_try(q, k))
        return UINT64_MAX;
    if (hi - lo == 1) {
        uint64_t a = lo * B > q->from ? lo * B : q->from, b = hi * B < q->to ? hi * B : q->to;
        for (uint64_t c = a; c < b; c++) {
            const struct policy_job *job = &q->v->queued[c - q->v->queue_origin];
            if (may_try(q, job))
                return c;
        }
        q->x->tally[1]++;
        return UINT64_MAX;
    }
    uint64_t mid = lo + (hi - lo) / 2, c = first_in(q, 2 * k, lo, mid);
    return c != UINT64_MAX ? c : first_in(q, 2 * k + 1, mid, hi);
}

uint32_t queue_index_next(const struct queue_index *x, const struct cluster_view *v, uint32_t from, int64_t room,
                          int64_t extra, int64_t window)
{
    if (from >= v->n_queued)
        return v->n_queued;
    if (x->scanning) {
        struct query q = {x, v, 0, 0, room, extra, window, 0};
        while (from < v->n_queued && !may_try(&q, &v->queued[from]))
            from++;
        return from;
    }
    struct query q = {x, v, v->queue_origin + from, v->queue_origin + v->n_queued, room, extra, window,
                      size_class(x, room)};
    x->tally[0]++;
    uint64_t c = first_in(&q, 1, 0, x->size);
    return c == UINT64_MAX ? v->n_queued : (uint32_t)(c - v->queue_origin);
}
