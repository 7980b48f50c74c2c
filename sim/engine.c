#include "sim/engine.h"

#include <stdlib.h>
#include <string.h>

static int event_before(const struct event *a, const struct event *b)
{
    /* bitwise, not short-circuit: both halves are cheap, and a branch on
     * which of two events is earlier is one the predictor cannot learn */
    return (a->time_us < b->time_us) | ((a->time_us == b->time_us) & (a->order < b->order));
}

void engine_init(struct engine *e, sim_time start_us)
{
    memset(e, 0, sizeof *e);
    e->now_us = start_us;
    e->next_seq = 1;
}

void engine_release(struct engine *e)
{
    if (!e)
        return;
    free(e->heap);
    free(e->cancelled.slots);
    memset(e, 0, sizeof *e);
}

/* The cancelled set is an open-addressing hash set of sequence numbers; it is
 * empty in most runs, so engine_pop pays one branch for it. */
static uint64_t seq_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static int cancel_set_grow(struct cancel_set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 64;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return -1;
    for (size_t i = 0; i < s->cap; i++) {
        uint64_t v = s->slots[i];
        if (!v)
            continue;
        size_t j = seq_hash(v) & (cap - 1);
        while (slots[j])
            j = (j + 1) & (cap - 1);
        slots[j] = v;
    }
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

static int cancel_set_add(struct cancel_set *s, uint64_t seq)
{
    if ((s->n + 1) * 2 > s->cap && cancel_set_grow(s) != 0)
        return -1;
    size_t j = seq_hash(seq) & (s->cap - 1);
    while (s->slots[j]) {
        if (s->slots[j] == seq)
            return 1;
        j = (j + 1) & (s->cap - 1);
    }
    s->slots[j] = seq;
    s->n++;
    return 0;
}

/* Removes seq if present (backward-shift deletion keeps probe chains intact). */
static int cancel_set_take(struct cancel_set *s, uint64_t seq)
{
    if (!s->n)
        return 0;
    size_t mask = s->cap - 1, j = seq_hash(seq) & mask;
    while (s->slots[j] != seq) {
        if (!s->slots[j])
            return 0;
        j = (j + 1) & mask;
    }
    size_t hole = j;
    for (size_t k = (hole + 1) & mask; s->slots[k]; k = (k + 1) & mask) {
        size_t home = seq_hash(s->slots[k]) & mask;
        /* move k into the hole unless its home lies cyclically in (hole, k] */
        int stays = hole <= k ? (home > hole && home <= k) : (home > hole || home <= k);
        if (!stays) {
            s->slots[hole] = s->slots[k];
            hole = k;
        }
    }
    s->slots[hole] = 0;
    s->n--;
    return 1;
}

static void sift_up(struct event *heap, size_t i)
{
    struct event ev = heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!event_before(&ev, &heap[parent]))
            break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = ev;
}

static void sift_down(struct event *heap, size_t n, size_t i)
{
    struct event ev = heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n)
            child += (size_t)event_before(&heap[child + 1], &heap[child]);
        if (!event_before(&heap[child], &ev))
            break;
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = ev;
}

uint64_t engine_schedule(struct engine *e, sim_time time_us, enum event_class cls, int32_t kind,
                         int64_t arg, int32_t aux)
{
    if (time_us < e->now_us || (unsigned)cls >= EVENT_CLASS_COUNT)
        return 0;
    if (!e->top_taken && e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        struct event *heap = realloc(e->heap, cap * sizeof *heap);
        if (!heap)
            return 0;
        e->heap = heap;
        e->cap = cap;
    }
    uint64_t seq = e->next_seq++;
    struct event ev = {time_us, ((uint64_t)cls << 56) | seq, arg, kind, aux};
    if (e->top_taken) {
        /* the slot the last pop emptied: one sift-down does the removal and
         * the insertion together */
        e->top_taken = 0;
        e->heap[0] = ev;
        sift_down(e->heap, e->n, 0);
    } else {
        e->heap[e->n] = ev;
        sift_up(e->heap, e->n++);
    }
    return seq;
}

int engine_cancel(struct engine *e, uint64_t handle)
{
    if (handle == 0 || handle >= e->next_seq)
        return -1;
    /* The caller vouches that the event is still pending (hosts keep the
     * handle only until the event runs): checking would cost a heap scan. */
    return cancel_set_add(&e->cancelled, handle) == 0 ? 0 : -1;
}

/* Floyd's removal: the hole at the top goes down to a leaf by the earlier
 * child (a compare per level, not two), and the last event, which came
 * from the bottom and mostly belongs near it, rises from there. */
static void heap_remove_top(struct engine *e)
{
    struct event *heap = e->heap;
    size_t n = --e->n, i = 0;
    if (!n)
        return;
    for (size_t child = 1; child < n; child = 2 * i + 1) {
        if (child + 1 < n)
            child += (size_t)event_before(&heap[child + 1], &heap[child]);
        heap[i] = heap[child];
        i = child;
    }
    heap[i] = heap[n];
    sift_up(heap, i);
}

/* Completes the removal a pop deferred (no event was scheduled into its slot),
 * then drops cancelled events sitting at the top. */
static void settle_slow(struct engine *e)
{
    if (e->top_taken) {
        e->top_taken = 0;
        heap_remove_top(e);
    }
    while (e->cancelled.n && e->n &&
           cancel_set_take(&e->cancelled, e->heap[0].order & ((UINT64_C(1) << 56) - 1)))
        heap_remove_top(e);
}

/* The test every event pays: most have nothing to settle. */
static inline void skip_cancelled(struct engine *e)
{
    if (e->top_taken || e->cancelled.n)
        settle_slow(e);
}

/* Takes the top event (the heap must have one): it runs now. */
static inline void take_top(struct engine *e, struct event *out)
{
    *out = e->heap[0];
    e->top_taken = 1; /* removed by the next schedule, peek or pop */
    e->now_us = out->time_us;
    e->events_run++;
}

sim_time engine_now(const struct engine *e)
{
    return e->now_us;
}

sim_time engine_next_time(struct engine *e)
{
    skip_cancelled(e);
    return e->n ? e->heap[0].time_us : SIM_TIME_NEVER;
}

size_t engine_pending(const struct engine *e)
{
    return e->n - (size_t)e->top_taken - e->cancelled.n;
}

int engine_pop(struct engine *e, struct event *out)
{
    skip_cancelled(e);
    if (!e->n)
        return 0;
    take_top(e, out);
    return 1;
}

int engine_run_until(struct engine *e, sim_time until_us, const struct engine_handlers *h)
{
    /* engine_next_time and engine_pop unrolled: every event passes through
     * this loop, and pays one inline test for a removal or a cancellation
     * to settle rather than two calls */
    skip_cancelled(e);
    while (e->n && e->heap[0].time_us <= until_us && e->heap[0].time_us != SIM_TIME_NEVER) {
        sim_time t = e->heap[0].time_us;
        do {
            struct event ev;
            take_top(e, &ev);
            int rc = h->event ? h->event(h->ctx, &ev) : 0;
            if (rc)
                return rc;
            skip_cancelled(e);
        } while (e->n && e->heap[0].time_us == t);
        if (h->instant_end) {
            int rc = h->instant_end(h->ctx, t);
            if (rc)
                return rc;
            skip_cancelled(e);
        }
    }
    if (until_us != SIM_TIME_NEVER && until_us > e->now_us)
        e->now_us = until_us;
    return 0;
}
