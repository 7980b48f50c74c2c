#include "policies/profile.h"

#include <stdlib.h>
#include <string.h>

#define B PROFILE_BLOCK

void profile_init(struct profile *p)
{
    memset(p, 0, sizeof *p);
}

void profile_release(struct profile *p)
{
    if (!p)
        return;
    free(p->block);
    free(p->time);
    free(p->free);
    free(p->spare);
    profile_init(p);
}

/* ---- blocks ---- */

/* Inserts an empty block at position pos (time order) with storage of its
 * own; pointers into p->block do not survive it. Returns 0 or -1 (memory). */
static int insert_block(struct profile *p, uint32_t pos)
{
    if (p->n_spare == 0 && p->n_storage == p->cap_storage) {
        uint32_t cap = p->cap_storage ? p->cap_storage * 2 : 4;
        int64_t *time = realloc(p->time, (size_t)cap * B * sizeof *time);
        if (!time)
            return -1;
        p->time = time;
        int64_t *free_ = realloc(p->free, (size_t)cap * B * sizeof *free_);
        if (!free_)
            return -1;
        p->free = free_;
        p->cap_storage = cap;
    }
    if (p->n_blocks == p->cap_blocks) {
        uint32_t cap = p->cap_blocks ? p->cap_blocks * 2 : 4;
        struct profile_block *block = realloc(p->block, (size_t)cap * sizeof *block);
        if (!block)
            return -1;
        p->block = block;
        p->cap_blocks = cap;
    }
    memmove(&p->block[pos + 1], &p->block[pos], (size_t)(p->n_blocks - pos) * sizeof *p->block);
    p->n_blocks++;
    p->block[pos] = (struct profile_block){0, 0, 0, 0, 0, 0, p->n_spare ? p->spare[--p->n_spare] : p->n_storage++};
    return 0;
}

/* Drops blocks [pos, pos + n); their storage serves new blocks. Returns 0
 * or -1 (memory). */
static int drop_blocks(struct profile *p, uint32_t pos, uint32_t n)
{
    if (p->n_spare + n > p->cap_spare) {
        uint32_t cap = p->cap_spare ? p->cap_spare : 16;
        while (cap < p->n_spare + n)
            cap *= 2;
        uint32_t *spare = realloc(p->spare, cap * sizeof *spare);
        if (!spare)
            return -1;
        p->spare = spare;
        p->cap_spare = cap;
    }
    for (uint32_t j = pos; j < pos + n; j++)
        p->spare[p->n_spare++] = p->block[j].at;
    memmove(&p->block[pos], &p->block[pos + n], (size_t)(p->n_blocks - pos - n) * sizeof *p->block);
    p->n_blocks -= n;
    return 0;
}

static size_t base_of(const struct profile_block *b)
{
    return (size_t)b->at * B;
}

/* Recomputes a block's first and last times, least and most from its steps. */
static void summarize(struct profile *p, struct profile_block *b)
{
    const int64_t *fr = &p->free[base_of(b)];
    int64_t lo = fr[0], hi = fr[0];
    for (uint32_t i = 1; i < b->n; i++) {
        if (fr[i] < lo)
            lo = fr[i];
        if (fr[i] > hi)
            hi = fr[i];
    }
    b->first = p->time[base_of(b)];
    b->last = p->time[base_of(b) + b->n - 1];
    b->least = lo + b->add;
    b->most = hi + b->add;
}

/* Splits full block k into two halves (k and k + 1). */
static int split_block(struct profile *p, uint32_t k)
{
    if (insert_block(p, k + 1) != 0)
        return -1;
    struct profile_block *a = &p->block[k], *c = &p->block[k + 1];
    uint32_t half = a->n / 2;
    c->add = a->add;
    c->n = a->n - half;
    memcpy(&p->time[base_of(c)], &p->time[base_of(a) + half], c->n * sizeof *p->time);
    memcpy(&p->free[base_of(c)], &p->free[base_of(a) + half], c->n * sizeof *p->free);
    a->n = half;
    summarize(p, a);
    summarize(p, c);
    return 0;
}

/* The block holding time t: the last whose first step is at or before t
 * (block 0 when t precedes every step). */
static uint32_t block_of(const struct profile *p, int64_t t)
{
    uint32_t lo = 1, hi = p->n_blocks; /* first block starting after t */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->block[mid].first <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* block_of, trying block k first: the block the last search found a
 * start or a window's end in, which the reservation that follows looks
 * up again (a tenth of a pass's instructions went to finding them). k is
 * only a guess, checked here. */
static uint32_t block_near(const struct profile *p, int64_t t, uint32_t k)
{
    if (k < p->n_blocks && p->block[k].first <= t && (k + 1 == p->n_blocks || p->block[k + 1].first > t))
        return k;
    return block_of(p, t);
}

/* In block b, the index of the last step at or before t, or -1. */
static int step_of(const struct profile *p, const struct profile_block *b, int64_t t)
{
    const int64_t *tm = &p->time[base_of(b)];
    if (t >= b->last)
        return (int)b->n - 1; /* the common cases: past the block, or before it */
    if (t < tm[0])
        return -1;
    /* the last of tm[0 .. n - 1) at or before t; halving without a branch
     * the processor must guess (a kept profile asks this some ten times a
     * moved promise) */
    uint32_t lo = 0, len = b->n - 1;
    while (len > 1) {
        uint32_t half = len / 2;
        lo = tm[lo + half] <= t ? lo + half : lo;
        len -= half;
    }
    return (int)lo;
}

/* ---- building and carving ---- */

int profile_reset(struct profile *p, int64_t now, int64_t free_now)
{
    p->n_blocks = 0;
    p->n_storage = 0;
    p->n_spare = 0;
    length_bounds_clear(&p->bounds);
    p->origin = now;
    if (insert_block(p, 0) != 0)
        return -1;
    struct profile_block *b = &p->block[0];
    p->time[base_of(b)] = now;
    p->free[base_of(b)] = free_now;
    b->n = 1;
    summarize(p, b);
    return 0;
}

int profile_add_release(struct profile *p, int64_t t, int64_t slots)
{
    /* Before any reservation the steps only rise with time, and no block
     * has an addition: a block's least is its first step, its most its last. */
    uint32_t k = p->n_blocks - 1;
    size_t last = base_of(&p->block[k]) + p->block[k].n - 1;
    if (t <= p->time[last]) {
        p->free[last] += slots;
        p->block[k].most = p->free[last];
        if (p->block[k].n == 1)
            p->block[k].least = p->free[last];
        return 0;
    }
    int64_t after = p->free[last] + slots;
    if (p->block[k].n == B && insert_block(p, ++k) != 0)
        return -1;
    struct profile_block *b = &p->block[k];
    size_t i = base_of(b) + b->n++;
    p->time[i] = t;
    p->free[i] = after;
    if (b->n == 1) {
        b->first = t;
        b->least = after;
    }
    b->last = t;
    b->most = after;
    return 0;
}

/* Makes sure a step starts exactly at t (t at or after the first one),
 * splitting the step that holds it; *block and *step say where it is. */
static int breakpoint(struct profile *p, int64_t t, uint32_t near, uint32_t *block, size_t *step)
{
    uint32_t k = block_near(p, t, near);
    int i = k == p->found_block && p->found_step < p->block[k].n &&
                    p->time[base_of(&p->block[k]) + p->found_step] == t
                ? (int)p->found_step
                : step_of(p, &p->block[k], t);
    if (p->time[base_of(&p->block[k]) + (size_t)i] != t) {
        if (p->block[k].n == B) {
            if (split_block(p, k) != 0)
                return -1;
            if (t >= p->block[k + 1].first)
                k++;
            i = step_of(p, &p->block[k], t);
        }
        struct profile_block *b = &p->block[k];
        size_t at = base_of(b) + (size_t)i; /* the step holding t: the new one copies it */
        size_t tail = b->n - (size_t)i - 1;
        memmove(&p->time[at + 2], &p->time[at + 1], tail * sizeof *p->time);
        memmove(&p->free[at + 2], &p->free[at + 1], tail * sizeof *p->free);
        p->time[at + 1] = t;
        p->free[at + 1] = p->free[at];
        if (b->last < t)
            b->last = t;
        b->n++; /* a copy of a step changes neither least nor most */
        i++;
    }
    *block = k;
    *step = base_of(&p->block[k]) + (size_t)i;
    return 0;
}

/* Takes `slots` from steps [i, j) of block b (storage indices; gives them
 * back when slots is negative). The bound the change moves follows it;
 * the other stays true (taking lowers no step, giving back raises none)
 * though perhaps loose: a search then reads the block and finds nothing,
 * and the first search that reads a whole block tightens its most. */
static void take_steps(struct profile *p, struct profile_block *b, size_t i, size_t j, int64_t slots)
{
    if (i == j)
        return; /* not only a shortcut: the bound below would add to INT64_MAX */
    int64_t *fr = p->free;
    if (slots > 0) {
        int64_t lo = INT64_MAX;
        for (; i < j; i++) {
            int64_t v = fr[i] - slots;
            fr[i] = v;
            lo = v < lo ? v : lo;
        }
        if (lo + b->add < b->least)
            b->least = lo + b->add;
    } else {
        int64_t hi = INT64_MIN;
        for (; i < j; i++) {
            int64_t v = fr[i] - slots;
            fr[i] = v;
            hi = v > hi ? v : hi;
        }
        if (hi + b->add > b->most)
            b->most = hi + b->add;
    }
}

/* Takes `slots` from every step of block b (its pending addition). */
static void shift_block(struct profile_block *b, int64_t slots)
{
    b->add -= slots;
    b->least -= slots;
    b->most -= slots;
}

/* The free slots of the step before step i of block k (the last of the
 * block before when i is 0, pending additions counted): 0 when there is
 * none, else 1 with *before set. */
static int free_before(const struct profile *p, uint32_t k, uint32_t i, int64_t *before)
{
    const struct profile_block *b = &p->block[k];
    if (i > 0) {
        *before = p->free[base_of(b) + i - 1] + b->add;
        return 1;
    }
    if (k == 0)
        return 0;
    const struct profile_block *a = &p->block[k - 1];
    *before = p->free[base_of(a) + a->n - 1] + a->add;
    return 1;
}

/* Removes step i of block k when it holds what the step before it holds (a
 * reservation that ended where another began, a promise given back), so
 * that a profile kept across passes does not fill with steps that change
 * nothing. The step at the origin stays: queries start there. */
static int merge_at(struct profile *p, uint32_t k, int i)
{
    struct profile_block *b = &p->block[k];
    size_t at = base_of(b) + (size_t)i;
    int64_t before;
    if (p->time[at] <= p->origin || !free_before(p, k, (uint32_t)i, &before) || before != p->free[at] + b->add)
        return 0;
    if (b->n == 1)
        return drop_blocks(p, k, 1);
    size_t tail = b->n - (size_t)i - 1;
    memmove(&p->time[at], &p->time[at + 1], tail * sizeof *p->time);
    memmove(&p->free[at], &p->free[at + 1], tail * sizeof *p->free);
    b->n--; /* least and most still bound what is left */
    b->first = p->time[base_of(b)];
    b->last = p->time[base_of(b) + b->n - 1];
    return 0;
}

/* carve's common case in a kept profile (a promise moved by less than its
 * length carves two short windows, with merges): [t, until] lies in one
 * block with room for two more steps. One search finds t's step, a short
 * walk forward (else a search) until's, and the block is rewritten in one
 * go: the new steps put in and the merged ones taken out by at most one
 * shift of what lies between and one of the tail, where breakpoint() and
 * merge_at() twice each searched and shifted up to four times. The steps
 * left are carve's:
 *  - a step put in at t holds `slots` less than the one before it, and one
 *    at until `slots` more than the window's last: neither is merged;
 *  - a step already at t is merged when, taken, it holds what the step
 *    before it holds (not at or before the origin: queries start there);
 *  - a step already at until when it holds what the window's last holds.
 * It needs until > t (then until's step lies after t's unless a new one is
 * put in). Returns 1 when done, 0 when the window is not such a one, -1
 * (memory). */
static int carve_in_block(struct profile *p, int64_t t, int64_t until, int64_t slots)
{
    uint32_t k = block_near(p, t, p->found_block);
    struct profile_block *b = &p->block[k];
    if (until <= t || slots == 0 || b->n + 2 > B || (k + 1 < p->n_blocks && p->block[k + 1].first <= until) ||
        t < b->first)
        return 0;
    int64_t *tm = &p->time[base_of(b)], *fr = &p->free[base_of(b)];
    uint32_t n = b->n, i = (uint32_t)step_of(p, b, t), j = i;
    for (int walked = 0; walked < 4 && j + 1 < n && tm[j + 1] <= until; walked++)
        j++;
    if (j + 1 < n && tm[j + 1] <= until)
        j = (uint32_t)step_of(p, b, until); /* a long window: search */
    int need_t = tm[i] != t, need_u = tm[j] != until; /* j > i unless need_u */
    int merged_u = !need_u && fr[j] == fr[j - 1] - slots;
    int64_t before;
    int merged_t = !need_t && t > p->origin && free_before(p, k, i, &before) && before == fr[i] - slots + b->add;
    /* old steps: [0, i) stay; i is t's (kept, then a new one at t when
     * need_t; dropped when merged); (i, mid_end) lie inside the window;
     * j is until's unless need_u (then inside, and a new one follows);
     * [j + 1, n) the tail */
    uint32_t mid_end = need_u ? j + 1 : j, len = mid_end > i + 1 ? mid_end - i - 1 : 0;
    uint32_t mid_at = i + 1 + (uint32_t)need_t - (uint32_t)merged_t, u_at = mid_at + len;
    uint32_t tail_at = u_at + (uint32_t)(need_u || !merged_u), tail = n - j - 1;
    int64_t free_i = fr[i], free_j = fr[j];
    if (tail_at > j + 1) { /* the tail moves right: it goes first */
        memmove(&tm[tail_at], &tm[j + 1], tail * sizeof *tm);
        memmove(&fr[tail_at], &fr[j + 1], tail * sizeof *fr);
    }
    if (mid_at != i + 1) {
        memmove(&tm[mid_at], &tm[i + 1], len * sizeof *tm);
        memmove(&fr[mid_at], &fr[i + 1], len * sizeof *fr);
    }
    if (tail_at < j + 1) {
        memmove(&tm[tail_at], &tm[j + 1], tail * sizeof *tm);
        memmove(&fr[tail_at], &fr[j + 1], tail * sizeof *fr);
    }
    if (need_u || !merged_u) {
        tm[u_at] = until;
        fr[u_at] = free_j;
    }
    if (need_t) {
        tm[i + 1] = t;
        fr[i + 1] = free_i;
    }
    b->n = tail_at + tail;
    if (b->n == 0)
        return drop_blocks(p, k, 1) != 0 ? -1 : 1;
    b->first = tm[0];
    b->last = tm[b->n - 1];
    /* the window: t's step, if it stays, and those inside */
    take_steps(p, b, base_of(b) + i + (uint32_t)need_t, base_of(b) + u_at, slots);
    return 1;
}

/* Takes `slots` out of [t, t + dur), or gives -slots back; `merge`: then
 * drops the steps at t and t + dur if they change nothing. */
static int carve(struct profile *p, int64_t t, int64_t dur, int64_t slots, int merge)
{
    uint32_t k;
    size_t i;
    int64_t until = t + dur;
    /* only a kept profile's carves (merge) are short enough to try it: a
     * pass's reservations span many blocks, and a failed try is a search */
    int done = merge ? carve_in_block(p, t, until, slots) : 0;
    if (done != 0)
        return done < 0 ? -1 : 0;
    /* the end's breakpoint first: the start's may split the end's block,
     * and the walk below goes from the start */
    if (breakpoint(p, until, p->found_end_block, &k, &i) != 0 || breakpoint(p, t, p->found_block, &k, &i) != 0)
        return -1;
    int i_t = (int)(i - base_of(&p->block[k])); /* t's step, where it stays */
    /* the end's step lies in the first block from t's on that reaches
     * it; the blocks between lie wholly inside the window, and take the
     * change in their pending addition alone */
    struct profile_block *b = &p->block[k];
    uint32_t k_end = k;
    if (b->last < until) {
        if (i == base_of(b))
            shift_block(b, slots);
        else
            take_steps(p, b, i, base_of(b) + b->n, slots);
        for (k_end = k + 1; p->block[k_end].last < until; k_end++)
            shift_block(&p->block[k_end], slots);
        i = base_of(&p->block[k_end]);
    }
    struct profile_block *e = &p->block[k_end];
    size_t i_end = base_of(e) + (size_t)step_of(p, e, until); /* its step at until */
    take_steps(p, e, i, i_end, slots);
    if (!merge)
        return 0;
    /* the end's step first: removing it, or its block, leaves t's where
     * it is */
    return merge_at(p, k_end, (int)(i_end - base_of(e))) != 0 || merge_at(p, k, i_t) != 0
               ? -1
               : 0;
}

/* A reservation made once leaves at most its two steps, as in any pass:
 * only steps left by slots given back, again and again in a kept profile,
 * are worth the search for a merge. */
int profile_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots)
{
    return carve(p, t, dur, slots, 0);
}

int profile_give_back(struct profile *p, int64_t t, int64_t dur, int64_t slots)
{
    /* the profile gains slots: the starts its bounds remember are no longer
     * lower bounds */
    length_bounds_clear(&p->bounds);
    return carve(p, t, dur, -slots, 1);
}

int profile_move(struct profile *p, int64_t from, int64_t to, int64_t dur, int64_t slots)
{
    length_bounds_clear(&p->bounds);
    /* A move by less than its length changes hands only at the window's
     * ends: [to, from) is taken, [to + dur, from + dur) given back. The
     * same four steps are checked for a merge, each once its jump is final
     * (neither carve changes the other's ends), so the steps left are those
     * of giving the old window back and taking the new one, at a fraction
     * of the steps walked (a conservative replay of HPC2N moves 1.6 M
     * promises, most by less than their length). */
    if (to < from && from < to + dur)
        return carve(p, to, from - to, slots, 1) != 0 || carve(p, to + dur, from - to, -slots, 1) != 0 ? -1 : 0;
    return carve(p, from, dur, -slots, 1) != 0 || carve(p, to, dur, slots, 1) != 0 ? -1 : 0;
}

int profile_advance(struct profile *p, int64_t now)
{
    if (now <= p->origin)
        return 0;
    uint32_t k;
    size_t i;
    if (breakpoint(p, now, 0, &k, &i) != 0)
        return -1;
    if (k > 0 && drop_blocks(p, 0, k) != 0) /* the blocks wholly in the past */
        return -1;
    p->origin = now;
    return 0;
}

/* ---- the earliest fit ---- */

/* The last block after k whose first step comes before t, else k. */
static uint32_t last_block_before(const struct profile *p, uint32_t k, int64_t t)
{
    uint32_t lo = k + 1, hi = p->n_blocks; /* the first block from t on */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->block[mid].first < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* The last step short of `slots` in the part of a window [t, until) after
 * t's block k, which ends in block `last`: 1 with *short_block and
 * *short_step (a storage index) set, or 0 (room throughout). Read backward
 * from until, skipping blocks with room everywhere; a block read whole and
 * found to have room everywhere gets that as its least. */
static int last_short(struct profile *p, uint32_t k, uint32_t last, int64_t until, int64_t slots,
                      uint32_t *short_block, size_t *short_step)
{
    const int64_t *tm = p->time, *fr = p->free;
    for (uint32_t j = last; j > k; j--) {
        struct profile_block *b = &p->block[j];
        if (b->least >= slots)
            continue;
        int64_t need = slots - b->add;
        size_t from = base_of(b), s = from + b->n;
        if (j == last)
            while (s > from && tm[s - 1] >= until)
                s--;
        while (s > from && fr[s - 1] >= need)
            s--;
        if (s > from) {
            *short_block = j;
            *short_step = s - 1;
            return 1;
        }
        if (j != last)
            b->least = slots; /* read whole: a tighter bound */
    }
    return 0;
}

/* The earliest step t after `after` and before `limit` from which `slots`
 * stay free until t + dur or window_limit, whichever comes first, or
 * INT64_MAX.
 * One sweep forward: a candidate is the next step with room (a block with
 * too little room anywhere is skipped); when a step in its window is short
 * of room, every candidate up to that step has it in its window too, so the
 * next candidate comes after it. A window that ends in the candidate's
 * block is read forward to its first short step. One that goes on is read
 * to its last: forward to the block's end, then backward from until
 * (last_short), skipping blocks with room everywhere. A long job's search
 * thus steps over each window it cannot use, where reading forward to the
 * first short step walked every step (SJF places the long jobs last:
 * sjf+conservative's cold pass over 10,000 queued jobs, 844 -> 212 M
 * instructions for 5 passes). */
static int64_t earliest_after(struct profile *p, int64_t slots, int64_t dur, int64_t after, int64_t limit,
                              int64_t window_limit)
{
    /* in locals: the stores below (a tighter most, the answer's place)
     * could otherwise be to any of these */
    const int64_t *tm = p->time, *fr = p->free;
    struct profile_block *block = p->block;
    uint32_t n_blocks = p->n_blocks, k = block_of(p, after);
    struct profile_block *b = &block[k];
    size_t i = base_of(b) + (size_t)(step_of(p, b, after) + 1);
    for (;;) {
        /* the next candidate: a step with room */
        for (;;) {
            size_t end = base_of(b) + b->n;
            if (i < end && b->most >= slots) {
                int64_t need = slots - b->add;
                int whole = i == base_of(b);
                while (i < end && fr[i] < need)
                    i++;
                if (i < end)
                    break;
                if (whole)
                    b->most = slots - 1; /* every step has less: a tighter bound */
            }
            if (++k == n_blocks)
                return INT64_MAX;
            b = &block[k];
            if (b->first >= limit)
                return INT64_MAX;
            i = base_of(b);
        }
        int64_t t = tm[i];
        if (t >= limit)
            return INT64_MAX;
        p->found_block = k;
        p->found_step = (uint32_t)(i - base_of(b));
        int64_t until = dur < window_limit - t ? t + dur : window_limit;
        /* its window: [t, until); a block with room everywhere is not read */
        int64_t need = slots - b->add;
        size_t end = base_of(b) + b->n;
        if (b->last >= until) { /* it ends in t's block: forward to its first short step */
            if (b->least < slots)
                for (i++; i < end && tm[i] < until; i++)
                    if (fr[i] < need) {
                        i++; /* the next candidate comes after it */
                        goto next_candidate;
                    }
            p->found_end_block = k;
            return t;
        }
        /* it goes on: to its last short step, in t's block (read backward
         * from its end: a cold pass's candidates mostly meet a short step
         * soon, and reading forward to the end, without a branch, was a
         * quarter of earliest_after in sjf+conservative's cold pass), then
         * backward from until */
        size_t after_short = 0;
        if (b->least < slots)
            for (size_t j = end; j > i + 1; j--)
                if (fr[j - 1] < need) {
                    after_short = j;
                    break;
                }
        if (after_short) {
            i = after_short;
            goto next_candidate;
        }
        uint32_t last = last_block_before(p, k, until), kf;
        size_t f;
        if (last_short(p, k, last, until, slots, &kf, &f)) {
            k = kf;
            b = &block[k];
            i = f + 1;
            goto next_candidate;
        }
        /* until's block is the next when that starts at until */
        p->found_end_block = last + (last + 1 < n_blocks && block[last + 1].first == until);
        return t;
    next_candidate:;
    }
}

/* A profile only loses free slots between resets, so a job can start no
 * earlier than a job of its size or smaller with a shorter duration could
 * before it: a search starts at the latest such start noted. */
int64_t profile_earliest(struct profile *p, int64_t slots, int64_t dur)
{
    int64_t from = length_bounds_below(&p->bounds, slots, dur);
    if (from == INT64_MAX)
        return INT64_MAX; /* where a smaller job found no room, a larger one finds none */
    from = from > p->origin ? from : p->origin;
    int64_t at = earliest_after(p, slots, dur, from - 1, INT64_MAX, INT64_MAX);
    length_bounds_note(&p->bounds, slots, dur, at);
    return at;
}

int64_t profile_earliest_before(struct profile *p, int64_t slots, int64_t dur, int64_t from, int64_t to,
                                int64_t limit)
{
    return earliest_after(p, slots, dur, (from > p->origin ? from : p->origin) - 1, to < limit ? to : limit, limit);
}

int64_t profile_free_at(const struct profile *p, int64_t t)
{
    const struct profile_block *b = &p->block[block_of(p, t)];
    int i = step_of(p, b, t);
    return i < 0 ? 0 : p->free[base_of(b) + (size_t)i] + b->add;
}

uint32_t profile_steps(const struct profile *p)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_blocks; k++)
        n += p->block[k].n;
    return n;
}
