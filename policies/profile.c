#include "policies/profile.h"

#include <stdlib.h>
#include <string.h>

enum { NONE = -1 };

void profile_init(struct profile *p)
{
    memset(p, 0, sizeof *p);
    p->root = NONE;
}

void profile_release(struct profile *p)
{
    if (!p)
        return;
    free(p->time);
    free(p->free);
    free(p->node);
    free(p->stack);
    profile_init(p);
}

/* ---- the flat steps: a short profile ---- */

static int flat_room(struct profile *p, uint32_t extra)
{
    if (p->n + extra <= p->cap)
        return 0;
    uint32_t cap = p->cap ? p->cap : 64;
    while (cap < p->n + extra)
        cap *= 2;
    int64_t *time = realloc(p->time, cap * sizeof *time);
    if (!time)
        return -1;
    p->time = time;
    int64_t *free_ = realloc(p->free, cap * sizeof *free_);
    if (!free_)
        return -1;
    p->free = free_;
    p->cap = cap;
    return 0;
}

int profile_reset(struct profile *p, int64_t now, int64_t free_now)
{
    p->n = 0;
    p->n_nodes = 0;
    p->n_bounds = 0;
    p->root = NONE;
    if (flat_room(p, 1) != 0)
        return -1;
    p->time[0] = now;
    p->free[0] = free_now;
    p->n = 1;
    return 0;
}

int profile_add_release(struct profile *p, int64_t t, int64_t slots)
{
    uint32_t last = p->n - 1;
    if (t <= p->time[last]) {
        p->free[last] += slots;
        return 0;
    }
    if (flat_room(p, 1) != 0)
        return -1;
    p->time[p->n] = t;
    p->free[p->n] = p->free[last] + slots;
    p->n++;
    return 0;
}

static int64_t flat_earliest(const struct profile *p, int64_t slots, int64_t dur)
{
    uint32_t k = 0;
    while (k < p->n) {
        if (p->free[k] < slots) {
            k++;
            continue;
        }
        int64_t end = p->time[k] + dur;
        uint32_t j = k + 1;
        while (j < p->n && p->time[j] < end && p->free[j] >= slots)
            j++;
        if (j == p->n || p->time[j] >= end)
            return p->time[k];
        k = j + 1; /* step j is too small: no start before it can work */
    }
    return INT64_MAX; /* cannot happen when slots <= capacity */
}

/* Index of the step starting exactly at t, inserting a breakpoint if needed. */
static int64_t split_at(struct profile *p, int64_t t)
{
    uint32_t lo = 0, hi = p->n; /* first index with time > t */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->time[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t k = lo - 1; /* step containing t (p->time[0] <= t always) */
    if (p->time[k] == t)
        return k;
    if (flat_room(p, 1) != 0)
        return -1;
    memmove(&p->time[k + 2], &p->time[k + 1], (p->n - k - 1) * sizeof *p->time);
    memmove(&p->free[k + 2], &p->free[k + 1], (p->n - k - 1) * sizeof *p->free);
    p->time[k + 1] = t;
    p->free[k + 1] = p->free[k];
    p->n++;
    return k + 1;
}

static int flat_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots)
{
    int64_t a = split_at(p, t);
    if (a < 0)
        return -1;
    int64_t b = split_at(p, t + dur);
    if (b < 0)
        return -1;
    for (int64_t k = a; k < b; k++)
        p->free[k] -= slots;
    return 0;
}

/* ---- the treap: a long profile ---- */

static int node_room(struct profile *p, uint32_t extra)
{
    if (p->n_nodes + extra <= p->cap_nodes)
        return 0;
    uint32_t cap = p->cap_nodes ? p->cap_nodes : 256;
    while (cap < p->n_nodes + extra)
        cap *= 2;
    struct profile_node *node = realloc(p->node, cap * sizeof *node);
    if (!node)
        return -1;
    p->node = node;
    p->cap_nodes = cap;
    return 0;
}

/* xorshift32: the treap's shape only, never an answer. */
static uint32_t next_priority(struct profile *p)
{
    uint32_t x = p->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return p->rng = x;
}

/* Appends a node (no tree links yet); node_room must have been called. */
static int32_t new_step(struct profile *p, int64_t time, int64_t free_slots)
{
    int32_t k = (int32_t)p->n_nodes++;
    p->node[k] = (struct profile_node){time, free_slots, 0, free_slots, free_slots, NONE, NONE, next_priority(p)};
    return k;
}

/* ---- the treap ----
 *
 * A node's `add` applies to its whole subtree, itself included; `free`,
 * `least` and `most` leave out the adds of its ancestors (least and most
 * take its own in), so a step's free slots are its `free` plus the adds on
 * its path from the root. Queries carry that sum down and write nothing;
 * only changes of shape push an add down to the children.
 */

static void shift(struct profile_node *nd, int32_t x, int64_t d)
{
    if (x == NONE)
        return;
    nd[x].pending += d;
    nd[x].least += d;
    nd[x].most += d;
}

static void push(struct profile_node *nd, int32_t x)
{
    int64_t d = nd[x].pending;
    if (d) {
        nd[x].free += d;
        shift(nd, nd[x].left, d);
        shift(nd, nd[x].right, d);
        nd[x].pending = 0;
    }
}

static void pull(struct profile_node *nd, int32_t x)
{
    int64_t lo = nd[x].free, hi = nd[x].free;
    int32_t c[2] = {nd[x].left, nd[x].right};
    for (int i = 0; i < 2; i++) {
        if (c[i] == NONE)
            continue;
        if (nd[c[i]].least < lo)
            lo = nd[c[i]].least;
        if (nd[c[i]].most > hi)
            hi = nd[c[i]].most;
    }
    nd[x].least = lo + nd[x].pending;
    nd[x].most = hi + nd[x].pending;
}

static void pull_all(struct profile_node *nd, int32_t x)
{
    if (x == NONE)
        return;
    pull_all(nd, nd[x].left);
    pull_all(nd, nd[x].right);
    pull(nd, x);
}

/* Moves the flat steps into the treap: a Cartesian tree by priority over
 * them (they are in ascending time), built with a stack of its right spine
 * in linear time. */
static int to_tree(struct profile *p)
{
    p->n_nodes = 0;
    p->rng = 2463534242u; /* the same shape for the same steps, run after run */
    if (node_room(p, p->n + 2) != 0)
        return -1;
    if (p->n > p->cap_stack) {
        int32_t *st = realloc(p->stack, p->n * sizeof *st);
        if (!st)
            return -1;
        p->stack = st;
        p->cap_stack = p->n;
    }
    struct profile_node *nd = p->node;
    uint32_t top = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        new_step(p, p->time[i], p->free[i]);
        int32_t last = NONE;
        while (top > 0 && nd[p->stack[top - 1]].priority < nd[i].priority)
            last = p->stack[--top];
        nd[i].left = last;
        if (top > 0)
            nd[p->stack[top - 1]].right = (int32_t)i;
        p->stack[top++] = (int32_t)i;
    }
    p->root = p->stack[0];
    pull_all(nd, p->root);
    return 0;
}

/* The step holding time t (the last with time <= t) and its free slots. */
static int32_t step_at(const struct profile *p, int64_t t, int64_t *free_slots)
{
    const struct profile_node *nd = p->node;
    int32_t x = p->root, best = NONE;
    int64_t acc = 0;
    while (x != NONE) {
        acc += nd[x].pending;
        if (nd[x].time <= t) {
            best = x;
            *free_slots = nd[x].free + acc;
            x = nd[x].right;
        } else {
            x = nd[x].left;
        }
    }
    return best;
}

/* Splits subtree x into the steps before `key` (*l) and the rest (*r). */
static void split(struct profile_node *nd, int32_t x, int64_t key, int32_t *l, int32_t *r)
{
    if (x == NONE) {
        *l = *r = NONE;
        return;
    }
    push(nd, x);
    if (nd[x].time < key) {
        split(nd, nd[x].right, key, &nd[x].right, r);
        *l = x;
    } else {
        split(nd, nd[x].left, key, l, &nd[x].left);
        *r = x;
    }
    pull(nd, x);
}

static int32_t insert(struct profile_node *nd, int32_t x, int32_t fresh)
{
    if (x == NONE)
        return fresh;
    push(nd, x);
    if (nd[fresh].priority > nd[x].priority) {
        split(nd, x, nd[fresh].time, &nd[fresh].left, &nd[fresh].right);
        pull(nd, fresh);
        return fresh;
    }
    if (nd[fresh].time < nd[x].time)
        nd[x].left = insert(nd, nd[x].left, fresh);
    else
        nd[x].right = insert(nd, nd[x].right, fresh);
    pull(nd, x);
    return x;
}

/* A breakpoint at t (t at or after the first one), splitting the step that
 * holds it; node_room must have been called. */
static void breakpoint(struct profile *p, int64_t t)
{
    int64_t free_slots = 0;
    int32_t at = step_at(p, t, &free_slots);
    if (p->node[at].time == t)
        return;
    int32_t fresh = new_step(p, t, free_slots);
    p->root = insert(p->node, p->root, fresh);
}

/* Adds d to every step with time in [a, b); the keys of subtree x lie in
 * [lo, hi). */
static void add_range(struct profile_node *nd, int32_t x, int64_t a, int64_t b, int64_t d, int64_t lo, int64_t hi)
{
    if (x == NONE || hi <= a || lo >= b)
        return;
    if (a <= lo && hi <= b) {
        shift(nd, x, d);
        return;
    }
    if (nd[x].time >= a && nd[x].time < b)
        nd[x].free += d;
    add_range(nd, nd[x].left, a, b, d, lo, nd[x].time);
    add_range(nd, nd[x].right, a, b, d, nd[x].time + 1, hi);
    pull(nd, x);
}

/* The first step after time `after` with at least `slots` free, or NONE;
 * acc: the adds above x. */
static int32_t first_fit_after(const struct profile_node *nd, int32_t x, int64_t acc, int64_t after, int64_t slots)
{
    while (x != NONE && nd[x].most + acc >= slots) {
        int64_t inner = acc + nd[x].pending;
        if (nd[x].time <= after) {
            x = nd[x].right;
            acc = inner;
            continue;
        }
        int32_t found = first_fit_after(nd, nd[x].left, inner, after, slots);
        if (found != NONE)
            return found;
        if (nd[x].free + inner >= slots)
            return x;
        x = nd[x].right;
        acc = inner;
    }
    return NONE;
}

/* The last step before time `before` with fewer than `slots` free, or NONE. */
static int32_t last_short_before(const struct profile_node *nd, int32_t x, int64_t acc, int64_t before,
                                 int64_t slots)
{
    while (x != NONE && nd[x].least + acc < slots) {
        int64_t inner = acc + nd[x].pending;
        if (nd[x].time >= before) {
            x = nd[x].left;
            acc = inner;
            continue;
        }
        int32_t found = last_short_before(nd, nd[x].right, inner, before, slots);
        if (found != NONE)
            return found;
        if (nd[x].free + inner < slots)
            return x;
        x = nd[x].left;
        acc = inner;
    }
    return NONE;
}

static int64_t tree_earliest(const struct profile *p, int64_t slots, int64_t dur, int64_t from)
{
    const struct profile_node *nd = p->node;
    int64_t after = from == INT64_MIN ? INT64_MIN : from - 1;
    for (;;) {
        int32_t k = first_fit_after(nd, p->root, 0, after, slots);
        if (k == NONE)
            return INT64_MAX;
        int64_t t = nd[k].time;
        /* Every start from t up to the last step too short for the job
         * within [t, t + dur) has that step in its window: skip them all
         * at once, rather than one short run at a time. */
        int32_t short_step = last_short_before(nd, p->root, 0, t + dur, slots);
        if (short_step == NONE || nd[short_step].time < t)
            return t;
        after = nd[short_step].time;
    }
}

static int tree_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots)
{
    if (node_room(p, 2) != 0)
        return -1;
    breakpoint(p, t);
    breakpoint(p, t + dur);
    add_range(p->node, p->root, t, t + dur, -slots, INT64_MIN, INT64_MAX);
    return 0;
}

/* ---- the profile: flat while short, a treap once long ---- */

/* A profile only loses free slots between resets, so a job can start no
 * earlier than a job of its size with a shorter duration could before it:
 * bound[] keeps, per size and power-of-two band of durations, the latest
 * start found, and a search starts at the latest of the shorter bands. */
static struct profile_bound *bound_of(struct profile *p, int64_t slots)
{
    for (uint32_t i = 0; i < p->n_bounds; i++)
        if (p->bound[i].slots == slots)
            return &p->bound[i];
    if (p->n_bounds == PROFILE_BOUNDS)
        return NULL;
    struct profile_bound *b = &p->bound[p->n_bounds++];
    b->slots = slots;
    for (int i = 0; i < 64; i++)
        b->at[i] = INT64_MIN;
    return b;
}

static int band_of(int64_t dur)
{
    int band = 0;
    while (band < 63 && dur >> (band + 1))
        band++;
    return band;
}

int64_t profile_earliest(struct profile *p, int64_t slots, int64_t dur)
{
    if (p->root == NONE)
        return flat_earliest(p, slots, dur); /* short: a scan costs less than the bookkeeping */
    struct profile_bound *b = bound_of(p, slots);
    int band = band_of(dur > 0 ? dur : 1);
    int64_t from = INT64_MIN;
    for (int i = 0; b && i < band; i++)
        if (b->at[i] > from)
            from = b->at[i];
    if (from == INT64_MAX)
        return INT64_MAX;
    int64_t at = tree_earliest(p, slots, dur, from);
    if (b && at > b->at[band])
        b->at[band] = at;
    return at;
}

int profile_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots)
{
    if (p->root == NONE && p->n + 2 > PROFILE_FLAT_STEPS && to_tree(p) != 0)
        return -1;
    return p->root == NONE ? flat_reserve(p, t, dur, slots) : tree_reserve(p, t, dur, slots);
}

int64_t profile_free_at(const struct profile *p, int64_t t)
{
    int64_t free_slots = 0;
    if (p->root != NONE) {
        step_at(p, t, &free_slots);
        return free_slots;
    }
    for (uint32_t k = 0; k < p->n && p->time[k] <= t; k++)
        free_slots = p->free[k];
    return free_slots;
}
