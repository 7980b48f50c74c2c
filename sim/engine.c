#include "sim/engine.h"

#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"

static int event_before(const struct event *a, const struct event *b)
{
    /* bitwise, not short-circuit: both halves are cheap, and a branch on
     * which of two events is earlier is one the predictor cannot learn */
    return (a->time_us < b->time_us) | ((a->time_us == b->time_us) & (a->order < b->order));
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

/* ---- the radix heap ---- */

#define ENGINE_NIL UINT32_MAX
#define DIGIT_MASK ((UINT64_C(1) << ENGINE_DIGIT_BITS) - 1)
#define SEQ_MASK ((UINT64_C(1) << 56) - 1)

/* Times as unsigned keys in the same order (a start may be negative). */
static inline uint64_t key_of(sim_time t)
{
    return (uint64_t)t ^ (UINT64_C(1) << 63);
}

/* The bucket of key k relative to `last` (k >= last): 0 when equal, else
 * the highest digit in which they differ and k's digit there. A bucket of
 * a lower number holds only earlier keys. */
static inline uint32_t bucket_of(uint64_t k, uint64_t last)
{
    uint64_t x = k ^ last;
    if (!x)
        return 0;
    unsigned level = (unsigned)(63 - __builtin_clzll(x)) / ENGINE_DIGIT_BITS;
    return 1 + (level << ENGINE_DIGIT_BITS) + (uint32_t)((k >> (level * ENGINE_DIGIT_BITS)) & DIGIT_MASK);
}

void engine_init(struct engine *e, sim_time start_us)
{
    memset(e, 0, sizeof *e);
    e->now_us = start_us;
    e->last = key_of(start_us);
    e->free_slot = ENGINE_NIL;
    e->next_seq = 1;
}

void engine_release(struct engine *e)
{
    if (!e)
        return;
    free(e->pool);
    free(e->next);
    free(e->current);
    free(e->head);
    free(e->cancelled.slots);
    memset(e, 0, sizeof *e);
}

/* Doubles the pool; the new slots join the free list. */
static int grow(struct engine *e)
{
    if (e->cap > UINT32_MAX / 4)
        return -1;
    uint32_t want = e->cap ? e->cap * 2 : 256;
    if (!e->head) {
        e->head = malloc(ENGINE_BUCKETS * sizeof *e->head);
        if (!e->head)
            return -1;
        memset(e->head, 0xff, ENGINE_BUCKETS * sizeof *e->head); /* every bucket ENGINE_NIL: empty */
    }
    /* the slot count moves only once all three arrays hold it (one may
     * have grown before another failed: growing it again is a no-op) */
    uint32_t cap_pool = e->cap, cap_next = e->cap, cap_current = e->cap;
    if (buffers_grow((void **)&e->pool, &cap_pool, want, sizeof *e->pool) != 0 ||
        buffers_grow((void **)&e->next, &cap_next, want, sizeof *e->next) != 0 ||
        buffers_grow((void **)&e->current, &cap_current, want, sizeof *e->current) != 0)
        return -1;
    for (uint32_t i = e->cap; i < want; i++)
        e->next[i] = i + 1 < want ? i + 1 : e->free_slot;
    e->free_slot = e->cap;
    e->cap = want;
    return 0;
}

static inline void release_slot(struct engine *e, uint32_t s)
{
    e->next[s] = e->free_slot;
    e->free_slot = s;
    e->n--;
}

/* The current set: a binary heap of slots by order (their times are equal). */
static void current_push(struct engine *e, uint32_t s)
{
    uint32_t *h = e->current;
    uint64_t order = e->pool[s].order;
    uint32_t i = e->n_current++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (e->pool[h[parent]].order < order)
            break;
        h[i] = h[parent];
        i = parent;
    }
    h[i] = s;
}

static void current_pop(struct engine *e)
{
    uint32_t *h = e->current;
    uint32_t n = --e->n_current;
    if (!n)
        return;
    uint32_t s = h[n];
    uint64_t order = e->pool[s].order;
    uint32_t i = 0;
    for (;;) {
        uint32_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && e->pool[h[child + 1]].order < e->pool[h[child]].order)
            child++;
        if (e->pool[h[child]].order > order)
            break;
        h[i] = h[child];
        i = child;
    }
    h[i] = s;
}

static inline void link_into(struct engine *e, uint32_t b, uint32_t s)
{
    e->next[s] = e->head[b];
    e->head[b] = s;
    e->nonempty[b >> 6] |= UINT64_C(1) << (b & 63);
    e->nonempty_words |= UINT64_C(1) << (b >> 6);
}

static inline void mark_empty(struct engine *e, uint32_t b)
{
    uint64_t left = e->nonempty[b >> 6] &= ~(UINT64_C(1) << (b & 63));
    if (!left)
        e->nonempty_words &= ~(UINT64_C(1) << (b >> 6));
}

static inline int cancelled_now(struct engine *e, uint32_t s)
{
    return e->cancelled.n && cancel_set_take(&e->cancelled, e->pool[s].order & SEQ_MASK);
}

/* Drops cancelled events from the current set's top; says whether it still
 * holds one. */
static inline int current_live(struct engine *e)
{
    while (e->n_current) {
        uint32_t top = e->current[0];
        if (!cancelled_now(e, top))
            return 1;
        current_pop(e);
        release_slot(e, top);
    }
    return 0;
}

/* Finds the lowest non-empty bucket and its earliest event (low_bucket,
 * low_slot), dropping cancelled events met on the way. Returns 0 when no
 * bucket holds a live event. The answer stays until a schedule into a
 * lower bucket or a cancel. */
static int find_low(struct engine *e)
{
    if (e->low_bucket)
        return 1;
    while (e->nonempty_words) {
        uint32_t w = (uint32_t)__builtin_ctzll(e->nonempty_words);
        uint32_t b = w * 64 + (uint32_t)__builtin_ctzll(e->nonempty[w]);
        uint32_t best = ENGINE_NIL, *link = &e->head[b];
        while (*link != ENGINE_NIL) {
            uint32_t s = *link;
            if (cancelled_now(e, s)) {
                *link = e->next[s];
                release_slot(e, s);
                continue;
            }
            if (best == ENGINE_NIL || event_before(&e->pool[s], &e->pool[best]))
                best = s;
            link = &e->next[s];
        }
        if (best != ENGINE_NIL) {
            e->low_bucket = b;
            e->low_slot = best;
            return 1;
        }
        mark_empty(e, b); /* it held only cancelled events */
    }
    return 0;
}

/* Makes the earliest live event the current set's top, moving the lowest
 * bucket's events down relative to its earliest time (they all go to lower
 * buckets, or to the current set). Only a pop calls this: `last` then
 * becomes the time the clock moves to. Returns 0 when nothing is pending. */
static int settle_top(struct engine *e)
{
    while (!current_live(e)) {
        if (!e->n || !find_low(e))
            return 0;
        uint32_t b = e->low_bucket;
        uint64_t m = key_of(e->pool[e->low_slot].time_us);
        uint32_t s = e->head[b];
        e->head[b] = ENGINE_NIL;
        mark_empty(e, b);
        e->low_bucket = 0;
        e->last = m;
        while (s != ENGINE_NIL) {
            uint32_t following = e->next[s];
            uint32_t to = bucket_of(key_of(e->pool[s].time_us), m);
            if (to == 0)
                current_push(e, s);
            else
                link_into(e, to, s);
            s = following;
        }
    }
    return 1;
}

/* The earliest live event without moving anything (a schedule may follow,
 * at any time from now on), or NULL. */
static const struct event *peek(struct engine *e)
{
    if (current_live(e))
        return &e->pool[e->current[0]];
    if (!e->n || !find_low(e))
        return NULL;
    return &e->pool[e->low_slot];
}

uint64_t engine_schedule(struct engine *e, sim_time time_us, enum event_class cls, int32_t kind,
                         int64_t arg, int32_t aux)
{
    if (time_us < e->now_us || (unsigned)cls >= EVENT_CLASS_COUNT)
        return 0;
    if (e->free_slot == ENGINE_NIL && grow(e) != 0)
        return 0;
    uint64_t seq = e->next_seq++;
    uint32_t s = e->free_slot;
    e->free_slot = e->next[s];
    e->n++;
    struct event *ev = &e->pool[s];
    *ev = (struct event){time_us, ((uint64_t)cls << 56) | seq, arg, kind, aux};
    uint32_t b = bucket_of(key_of(time_us), e->last);
    if (b == 0) {
        current_push(e, s);
        return seq;
    }
    link_into(e, b, s);
    /* a known lowest bucket stays known: every bucket below it is empty,
     * so one below becomes it with this event alone */
    if (e->low_bucket && (b < e->low_bucket || (b == e->low_bucket && event_before(ev, &e->pool[e->low_slot])))) {
        e->low_bucket = b;
        e->low_slot = s;
    }
    return seq;
}

int engine_cancel(struct engine *e, uint64_t handle)
{
    if (handle == 0 || handle >= e->next_seq)
        return -1;
    /* The caller vouches that the event is still pending (hosts keep the
     * handle only until the event runs): checking would cost a search. */
    if (cancel_set_add(&e->cancelled, handle) != 0)
        return -1;
    e->low_bucket = 0; /* a peek's answer may be the one cancelled */
    return 0;
}

/* Takes the current set's top (settle_top made it the earliest live
 * event): it runs now. */
static inline void take_top(struct engine *e, struct event *out)
{
    uint32_t top = e->current[0];
    *out = e->pool[top];
    current_pop(e);
    release_slot(e, top);
    e->now_us = out->time_us;
    e->events_run++;
}

sim_time engine_now(const struct engine *e)
{
    return e->now_us;
}

sim_time engine_next_time(struct engine *e)
{
    const struct event *ev = peek(e);
    return ev ? ev->time_us : SIM_TIME_NEVER;
}

size_t engine_pending(const struct engine *e)
{
    return e->n - e->cancelled.n;
}

int engine_pop(struct engine *e, struct event *out)
{
    if (!settle_top(e))
        return 0;
    take_top(e, out);
    return 1;
}

int engine_run_until(struct engine *e, sim_time until_us, const struct engine_handlers *h)
{
    for (;;) {
        const struct event *next = peek(e);
        if (!next || next->time_us > until_us || next->time_us == SIM_TIME_NEVER)
            break;
        sim_time t = next->time_us;
        do {
            struct event ev;
            settle_top(e);
            take_top(e, &ev);
            int rc = h->event ? h->event(h->ctx, &ev) : 0;
            if (rc)
                return rc;
            /* the events at t are all in the current set: the next one, if
             * any, is its top (at t unless a handler popped past it) */
        } while (current_live(e) && e->pool[e->current[0]].time_us == t);
        if (h->instant_end) {
            int rc = h->instant_end(h->ctx, t);
            if (rc)
                return rc;
        }
    }
    if (until_us != SIM_TIME_NEVER && until_us > e->now_us)
        e->now_us = until_us;
    return 0;
}
