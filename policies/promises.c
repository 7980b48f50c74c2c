#include "policies/promises.h"

#include <stdlib.h>
#include <string.h>

#include "policies/grow.h"
#include "policies/merge_sort.h"

void promises_init(struct promises *pm)
{
    memset(pm, 0, sizeof *pm);
    promise_order_init(&pm->order);
}

void promises_release(struct promises *pm)
{
    if (!pm)
        return;
    free(pm->rel);
    free(pm->base);
    free(pm->rec);
    promise_order_release(&pm->order);
    free(pm->out);
    free(pm->newcomers);
    free(pm->started);
    free(pm->left);
    free(pm->leaving);
    free(pm->touched);
    free(pm->fresh);
    free(pm->next_rec);
    free(pm->remap);
    free(pm->next_order);
    free(pm->fresh_at);
    free(pm->out_scratch);
    free(pm->started_scratch);
    free(pm->rank);
    free(pm->fresh_scratch);
    promises_init(pm);
}

/* Swaps two buffers of one type and their capacities: the one filled
 * beside the other takes its place, and the other's memory is filled next
 * time. */
#define SWAP_BUFFERS(a, cap_a, b, cap_b)                                                                   \
    do {                                                                                                   \
        void *swap_buf_ = (a);                                                                             \
        uint32_t swap_cap_ = (cap_a);                                                                      \
        (a) = (b);                                                                                         \
        (cap_a) = (cap_b);                                                                                 \
        (b) = swap_buf_;                                                                                   \
        (cap_b) = swap_cap_;                                                                               \
    } while (0)

void promises_begin(struct promises *pm, const struct cluster_view *v)
{
    pm->next_n_queued = v->n_queued;
    pm->next_now_us = v->now_us;
    pm->next_total_slots = v->total_slots;
    pm->n_started = pm->n_touched = pm->n_fresh = pm->n_newcomers = pm->n_leaving = 0;
    pm->bounds.n = 0;
    length_bounds_clear(&pm->bounds.bands);
    pm->bounds.n_recent = pm->bounds.recent_next = 0;
    memset(pm->bounds.entry, 0, sizeof pm->bounds.entry);
    pm->kept = pm->spoilt = pm->read_changes = pm->unplaced = 0;
    pm->base_read = 0;
    pm->inner_gaps = 0;
    pm->stepped_over = pm->moved = pm->moved_in_place = 0;
    pm->kept_rec = PROMISE_NONE_KEPT;
    pm->origin = v->queue_origin;
    pm->gain_from = INT64_MAX;
    pm->gain_to = INT64_MIN;
}

/* ---- resuming ---- */

/* The profile may have more room in [from, to) than the last pass left. */
static void note_gain(struct promises *pm, int64_t from, int64_t to)
{
    pm->gain_from = from < pm->gain_from ? from : pm->gain_from;
    pm->gain_to = to > pm->gain_to ? to : pm->gain_to;
}

int promises_read_base(struct promises *pm, const struct cluster_view *v)
{
    if (pm->base_read)
        return 0;
    if (policies_grow((void **)&pm->base, &pm->cap_base, v->n_running, sizeof *pm->base) != 0)
        return -1;
    const struct policy_running *running = v->running;
    const uint32_t *by_end = v->running_by_end;
    int64_t now = v->now_us;
    for (uint32_t a = 0; a < v->n_running; a++) {
        const struct policy_running *r = &running[by_end[a]];
        pm->base[a] = (struct promise_release){r->expected_end_us > now ? r->expected_end_us : now + 1, r->job.slots};
    }
    pm->n_base = v->n_running;
    pm->base_read = 1;
    return 0;
}

/* How many releases a[0..n) and b[0..n) have alike from the first: whole
 * runs by memcmp first (two fields of int64_t, no padding), as most of a
 * busy cluster's base is the same from one pass to the next. */
static uint32_t same_releases(const struct promise_release *a, const struct promise_release *b, uint32_t n)
{
    _Static_assert(sizeof *a == 2 * sizeof(int64_t), "memcmp compares padding");
    enum { RUN = 16 };
    uint32_t k = 0;
    while (n - k >= RUN && memcmp(a + k, b + k, RUN * sizeof *a) == 0)
        k += RUN;
    while (k < n && a[k].at_us == b[k].at_us && a[k].slots == b[k].slots)
        k++;
    return k;
}

/* Gives the profile what the base gained since the record: the view's base
 * (promises_read_base, free_now) minus the recorded one, from now on. 1 when
 * that is done, 0 when the base lost slots somewhere or gained them for
 * ever (a rebuild follows), -1 (memory). */
static int give_back_gains(struct promises *pm, const struct cluster_view *v, struct profile *profile)
{
    if (promises_read_base(pm, v) != 0)
        return -1;
    const struct promise_release *base = pm->base;
    const struct promise_release none = {INT64_MAX, 0};
    uint32_t n_base = pm->n_base;
    int64_t now = v->now_us, gain = v->free_slots - pm->free_after;
    uint32_t i = 0, j = 0;
    for (; i < pm->n_rel && pm->rel[i].at_us <= now; i++)
        gain -= pm->rel[i].slots; /* released by now in the record: in free_after's stead */
    int64_t from = now; /* where the current gain began */
    for (;;) {
        /* most releases both bases have, one for one, in the same order:
         * a pair equal in both lies at the earliest time left in each and
         * cancels within that time's change, so gain and from stay as they
         * are (a gain check skipped sees the same gain at the next time).
         * A time whose releases come in another order takes the steps below. */
        uint32_t both = pm->n_rel - i < n_base - j ? pm->n_rel - i : n_base - j;
        uint32_t same = both ? same_releases(&pm->rel[i], &base[j], both) : 0;
        i += same;
        j += same;
        int64_t to = INT64_MAX;
        if (i < pm->n_rel)
            to = pm->rel[i].at_us;
        struct promise_release next = j < n_base ? base[j] : none;
        if (next.at_us < to)
            to = next.at_us;
        if (gain < 0 || (gain > 0 && to == INT64_MAX))
            return 0;
        if (to == INT64_MAX)
            return 1;
        int64_t was = gain;
        for (; i < pm->n_rel && pm->rel[i].at_us == to; i++)
            gain -= pm->rel[i].slots;
        for (; next.at_us == to; next = ++j < n_base ? base[j] : none)
            gain += next.slots;
        if (gain == was)
            continue; /* a release both bases have: the same gain goes on */
        if (was > 0) {
            if (profile_give_back(profile, from, to - from, was) != 0)
                return -1;
            note_gain(pm, from, to);
        }
        from = to;
    }
}

/* How promises of one start are ordered in this pass: by the job's rank,
 * or under FCFS by its place in the record (policies/promise_order.h). */
static struct promise_order_ties order_ties(const struct promises *pm)
{
    return (struct promise_order_ties){pm->ranked ? pm->rank : NULL, pm->origin};
}

/* By promise, then priority: the order a pass places promises in. */
static int rank_before(int64_t at_a, uint32_t tie_a, int64_t at_b, uint32_t tie_b)
{
    return at_a < at_b || (at_a == at_b && tie_a < tie_b);
}

static int rank_goes_first(const struct promise_rank *a, const struct promise_rank *b)
{
    return rank_before(a->at_us, a->tie, b->at_us, b->tie);
}

MERGE_SORT_DEFINE(sort_ranks, struct promise_rank, rank_goes_first)

static int qi_before(const struct promise *a, const struct promise *b)
{
    return a->coord < b->coord;
}

MERGE_SORT_DEFINE(sort_by_queue, struct promise, qi_before)

/* The order becomes the record indices next_order[0..n), in order.
 * Returns 0 or -1 (memory). */
static int order_from(struct promises *pm, uint32_t n)
{
    promise_order_clear(&pm->order);
    for (uint32_t k = 0; k < n; k++)
        if (promise_order_append(&pm->order, pm->rec, pm->next_order[k]) != 0)
            return -1;
    return 0;
}

/* Sorts the promises not yet in order and merges them in, block by block
 * (policies/promise_order.h): only the blocks they join are read. */
static int merge_out(struct promises *pm)
{
    uint32_t n_out = pm->n_out;
    if (n_out == 0)
        return 0;
    if (policies_grow((void **)&pm->out_scratch, &pm->cap_out_scratch, n_out, sizeof *pm->out_scratch) != 0)
        return -1;
    struct promise_order_ties ties = order_ties(pm);
    struct promise_rank *out = pm->out;
    for (uint32_t k = 0; k < n_out; k++) {
        out[k].at_us = pm->rec[out[k].rec].at_us;
        out[k].tie = promise_order_tie(pm->rec, &ties, out[k].rec);
    }
    sort_ranks(out, n_out, pm->out_scratch);
    if (promise_order_merge(&pm->order, pm->rec, &ties, out, n_out) != 0)
        return -1;
    pm->n_out = 0;
    return 0;
}

/* The newcomers in priority order (they were gathered in queue order). */
static int rank_newcomers(struct promises *pm)
{
    uint32_t n = pm->n_newcomers;
    if (!pm->ranked || n < 2)
        return 0;
    if (policies_grow((void **)&pm->out_scratch, &pm->cap_out_scratch, 2 * n, sizeof *pm->out_scratch) != 0)
        return -1;
    struct promise_rank *by_rank = pm->out_scratch + n;
    for (uint32_t k = 0; k < n; k++)
        by_rank[k] = (struct promise_rank){pm->rank[pm->newcomers[k]], pm->newcomers[k], 0}; /* rank, then queue index */
    sort_ranks(by_rank, n, pm->out_scratch);
    for (uint32_t k = 0; k < n; k++)
        pm->newcomers[k] = by_rank[k].rec;
    return 0;
}

/* One waiting job of the view against the record (read_all, read_changes):
 * 1 a promise (the record's rec[r], then its coordinate set), 2 a newcomer,
 * 3 a job never placed (larger than the cluster), 0 a view the record
 * cannot follow. */
static int read_job(struct promise *p, const struct policy_job *job, uint64_t coord, int64_t now,
                    int64_t total_slots, int ranked)
{
    if (job->milli != 0)
        return 0;
    if (job->slots > total_slots)
        return 3;
    if (job->reserved_us < 0)
        return 2;
    if (!p || job->id != p->id || job->reserved_us != p->at_us || job->slots != p->slots ||
        (job->estimate_us > 0 ? job->estimate_us : 1) != p->dur_us ||
        (ranked && (job->estimate_us != p->estimate_us || job->submit_us != p->submit_us)))
        return 0;
    if (p->at_us < now)
        return 0; /* a promise not kept: its job can no longer start then */
    p->coord = coord;
    return 1;
}

/* The record's earliest promise held, or INT64_MAX. */
static int64_t earliest_promise(const struct promises *pm)
{
    int64_t t = pm->order.n ? pm->rec[promise_order_items(&pm->order, 0)[0]].at_us : INT64_MAX;
    for (uint32_t k = 0; k < pm->n_out; k++)
        t = pm->rec[pm->out[k].rec].at_us < t ? pm->rec[pm->out[k].rec].at_us : t;
    return t;
}

void promises_track(struct promises *pm, const struct cluster_view *v)
{
    if (!pm->follows_changes)
        return;
    if (!v->queue_tracked) {
        pm->follows_changes = 0;
        return;
    }
    /* the changes that reach the head [origin, h) and the end [t, end)
     * of the queue, ranges that meet joined (a start that moved the jobs
     * after it down, then arrivals); any other is inside the queue */
    const uint64_t *d = v->queue_dirty;
    uint64_t origin = v->queue_origin, end = origin + v->n_queued, h = origin, t = end;
    for (int grew = 1; grew;) {
        grew = 0;
        for (uint32_t k = 0; k < v->n_queue_dirty; k++) {
            if (d[2 * k] <= h && d[2 * k + 1] > h && h < end) {
                h = d[2 * k + 1] < end ? d[2 * k + 1] : end;
                grew = 1;
            }
            if (d[2 * k + 1] >= t && d[2 * k] < t && t > origin) {
                t = d[2 * k] > origin ? d[2 * k] : origin;
                grew = 1;
            }
        }
    }
    for (uint32_t k = 0; k < v->n_queue_dirty; k++) {
        uint64_t a = d[2 * k] > origin ? d[2 * k] : origin, b = d[2 * k + 1] < end ? d[2 * k + 1] : end;
        if (a < b && a >= h && b <= t) { /* a change inside the queue: read_changes checks it */
            if (pm->n_inner == PROMISE_INNER) {
                pm->follows_changes = 0;
                return;
            }
            pm->inner[2 * pm->n_inner] = a;
            pm->inner[2 * pm->n_inner + 1] = b;
            pm->n_inner++;
        }
    }
    pm->head_to = h > pm->head_to ? h : pm->head_to;
    pm->tail_from = t < pm->tail_from ? t : pm->tail_from;
}

/* Whether every change inside [h, t) since the last pass is a gap that
 * one of its starts left (policy.h, policy_job.gap): a job gone, as the
 * record's promise for it, if it had one, is. Counts them in
 * pm->inner_gaps. */
static int inner_gaps_left(struct promises *pm, const struct cluster_view *v, uint64_t h, uint64_t t)
{
    pm->inner_gaps = 0;
    for (uint32_t k = 0; k < pm->n_inner; k++) {
        uint64_t a = pm->inner[2 * k] > h ? pm->inner[2 * k] : h;
        uint64_t b = pm->inner[2 * k + 1] < t ? pm->inner[2 * k + 1] : t;
        for (uint64_t c = a; c < b; c++) {
            if (!v->queued[c - v->queue_origin].gap)
                return 0;
            uint32_t lo = 0, hi = pm->n_left; /* the first coordinate left from c on */
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (pm->left[mid] < c)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo == pm->n_left || pm->left[lo] != c)
                return 0;
            pm->inner_gaps++;
        }
    }
    return 1;
}

/* The view checked against the record through what the host's record of
 * the queue (policy.h, queue_tracked) says changed since the last pass,
 * gathered by promises_track (this view's too), when the changes lie at
 * the two ends of the queue: a head [origin, h) (the jobs a start near the
 * head moved up) and a tail [t, end) (arrivals, the jobs a start near the
 * end moved down), and between them only gaps the last pass's starts left
 * (inner_gaps_left; a host leaves one where closing it would move many
 * jobs).
 * The jobs between are those of the last pass's view at the same
 * coordinates, unchanged but for those gaps (their jobs, gone, have no
 * promise, as in the record), and the last pass left each of them with the
 * promise it recorded (it resumed, placed every newcomer it could, and
 * its starts were carried out), so only the ends are read. Their promises
 * are the record's first and last ones: the record is in queue order,
 * which no start or arrival changes. The coordinates of the jobs between
 * hold (the record's are the view's); those at the ends are set. On
 * METACENTRUM's queue of up to 88,658 the walk over every job was 60% of
 * the replay. 1 done, 0 a view the record cannot follow (a rebuild), -1
 * changes this does not read (read_all reads every job). */
static int read_changes(struct promises *pm, const struct cluster_view *v)
{
    if (!pm->follows_changes)
        return -1;
    uint64_t origin = v->queue_origin, end = origin + v->n_queued;
    uint64_t h = pm->head_to < origin ? origin : pm->head_to > end ? end : pm->head_to;
    uint64_t t = pm->tail_from > end ? end : pm->tail_from < origin ? origin : pm->tail_from;
    if (h >= t)
        return -1; /* all of it changed */
    if (earliest_promise(pm) < v->now_us)
        return 0; /* a promise not kept */
    if (!inner_gaps_left(pm, v, h, t))
        return -1;
    const struct policy_job *queued = v->queued;
    struct promise *rec = pm->rec;
    uint32_t *newcomers = pm->newcomers, n_newcomers = 0, n_rec = pm->n_rec, r = pm->first_live;
    int64_t now = v->now_us, total_slots = v->total_slots;
    for (uint32_t k = 0; k < (uint32_t)(h - origin); k++) {
        if (queued[k].gap)
            continue;
        while (r < n_rec && rec[r].fate == PROMISE_GONE)
            r++;
        int got = read_job(r < n_rec ? &rec[r] : NULL, &queued[k], origin + k, now, total_slots, 0);
        if (got == 0)
            return 0;
        r += got == 1;
        if (got == 2)
            newcomers[n_newcomers++] = k;
    }
    /* the tail from its end, against the record's last promises; its
     * newcomers are put in queue order after */
    uint32_t r_end = n_rec, first_new = n_newcomers;
    for (uint32_t k = v->n_queued; k-- > (uint32_t)(t - origin);) {
        if (queued[k].gap)
            continue;
        while (r_end > r && rec[r_end - 1].fate == PROMISE_GONE)
            r_end--;
        int got = read_job(r_end > r ? &rec[r_end - 1] : NULL, &queued[k], origin + k, now, total_slots, 0);
        if (got == 0)
            return 0;
        r_end -= got == 1;
        if (got == 2)
            newcomers[n_newcomers++] = k;
    }
    for (uint32_t a = first_new, b = n_newcomers; a + 1 < b; a++, b--) {
        uint32_t x = newcomers[a];
        newcomers[a] = newcomers[b - 1];
        newcomers[b - 1] = x;
    }
    /* the promises left between are those of the jobs between: checked at
     * both ends, which also holds the record to the view should a host
     * misreport */
    while (r < r_end && rec[r].fate == PROMISE_GONE)
        r++;
    while (r_end > r && rec[r_end - 1].fate == PROMISE_GONE)
        r_end--;
    if (r < r_end) {
        const struct promise *first = &rec[r], *last = &rec[r_end - 1];
        if (first->coord < h || last->coord >= t || queued[first->coord - origin].id != first->id ||
            queued[last->coord - origin].id != last->id)
            return 0;
    }
    pm->n_newcomers = n_newcomers;
    return 1;
}

/* Every waiting job of the view against the record: 1 when they match, 0
 * when the record cannot follow the view. */
static int read_all(struct promises *pm, const struct cluster_view *v, const uint32_t *order)
{
    /* the jobs with a promise are those recorded, in the same (queue)
     * order, and the rest newcomers; in locals, as the stores through
     * them could otherwise be any of pm's or v's fields (this walk is a
     * third of a replay with a queue of 88,658) */
    const struct policy_job *queued = v->queued;
    struct promise *rec = pm->rec;
    uint32_t *newcomers = pm->newcomers, n_newcomers = 0, n_queued = v->n_queued, n_rec = pm->n_rec,
             r = pm->first_live;
    uint64_t origin = v->queue_origin;
    int64_t now = v->now_us, total_slots = v->total_slots;
    int ranked = order != NULL;
    for (uint32_t k = 0; k < n_queued; k++) {
        if (queued[k].gap)
            continue; /* a job gone, as its promise */
        while (r < n_rec && rec[r].fate == PROMISE_GONE)
            r++; /* a tombstone (record_in_place) */
        int got = read_job(r < n_rec ? &rec[r] : NULL, &queued[k], origin + k, now, total_slots, ranked);
        if (got == 0)
            return 0;
        r += got == 1;
        if (got == 2)
            newcomers[n_newcomers++] = k;
    }
    pm->n_newcomers = n_newcomers;
    while (r < n_rec && rec[r].fate == PROMISE_GONE)
        r++;
    return r == n_rec;
}

static int resume(struct promises *pm, const struct cluster_view *v, struct profile *profile, const uint32_t *order)
{
    if (!pm->valid || v->now_us < pm->now_us || v->total_slots != pm->total_slots || v->n_shared != 0)
        return 0;
    if (policies_grow((void **)&pm->newcomers, &pm->cap_newcomers, v->n_queued, sizeof *pm->newcomers) != 0)
        return -1;
    pm->ranked = order != NULL;
    if (order) {
        if (policies_grow((void **)&pm->rank, &pm->cap_rank, v->n_queued, sizeof *pm->rank) != 0)
            return -1;
        for (uint32_t k = 0; k < v->n_queued; k++)
            pm->rank[order[k]] = k;
    }
    int rc = order ? -1 : read_changes(pm, v);
    pm->follows_changes = 0; /* until promises_end says again */
    if (rc == 0)
        return 0;
    pm->read_changes = rc == 1;
    if (rc < 0 && read_all(pm, v, order) == 0)
        return 0;
    /* the base: the kept profile must have at least the view's room
     * everywhere before the gains are given back */
    if (profile_advance(profile, v->now_us) != 0)
        return -1;
    rc = give_back_gains(pm, v, profile);
    if (rc != 1)
        return rc;
    return merge_out(pm) != 0 || rank_newcomers(pm) != 0 ? -1 : 1;
}

int promises_resume(struct promises *pm, const struct cluster_view *v, struct profile *profile,
                    const uint32_t *order)
{
    int rc = resume(pm, v, profile, order);
    pm->kept = rc == 1;
    if (rc != 1)
        pm->valid = 0; /* the pass rebuilds, and records every promise afresh */
    return rc;
}

/* Whether a promise at `at` of `slots` for `dur` might move to a start
 * in [*from, *to): its window reaching back `reach` (its length, or for a
 * block of promises the longest). */
static inline int may_move(const struct promises *pm, int64_t at, int64_t slots, int64_t dur, int64_t reach,
                           int64_t *from, int64_t *to)
{
    if (pm->gain_from >= at)
        return 0;
    /* a window [t, t + dur) meets the gains when t lies in (from - dur, to);
     * the settled bound below only narrows that */
    *from = pm->gain_from - reach + 1;
    *to = pm->gain_to < at ? pm->gain_to : at;
    if (*from >= *to)
        return 0;
    const struct promise_bounds *b = &pm->bounds;
    /* the bands, when the shapes overflowed */
    int64_t settled = length_bounds_below(&b->bands, slots, dur);
    if (settled >= *to)
        return 0;
    for (uint32_t k = 0; k < b->n; k++) {
        int64_t t = b->slots[k] <= slots && b->dur_us[k] <= dur ? b->at_us[k] : INT64_MIN;
        if (t >= *to)
            return 0; /* a settled start at or past *to leaves no start in [*from, *to), whatever
                         the other bounds say (about half the promises a pass asks about stop here) */
        settled = t > settled ? t : settled;
    }
    /* the latest settled, newest first, up to the first no larger and no
     * longer (an earlier one seldom settled later) */
    for (uint32_t k = 0; k < b->n_recent; k++) {
        uint32_t i = (b->recent_next + PROMISE_RECENT - 1 - k) % PROMISE_RECENT;
        if (b->recent_slots[i] <= slots && b->recent_dur_us[i] <= dur) {
            if (b->recent_at_us[i] >= *to)
                return 0;
            settled = b->recent_at_us[i] > settled ? b->recent_at_us[i] : settled;
            break;
        }
    }
    if (settled > *from)
        *from = settled;
    return *from < *to;
}

int promises_may_move(const struct promises *pm, const struct promise *p, int64_t *from, int64_t *to)
{
    return may_move(pm, p->at_us, p->slots, p->dur_us, p->dur_us, from, to);
}

int promises_block_may_move(const struct promises *pm, const struct promise_order_block *b)
{
    int64_t from, to;
    return may_move(pm, b->last_at, b->least_slots, b->least_dur, b->most_dur, &from, &to);
}

void promises_settled(struct promises *pm, const struct promise *p)
{
    if (pm->gain_from == INT64_MAX)
        return; /* nothing gained, nothing moves: no search will ask */
    if (p->fate == PROMISE_HELD && p->at_us > pm->next_now_us) { /* it stays in the order: a move after it reads it */
        pm->kept_rec = (uint32_t)(p - pm->rec);
    }
    struct promise_bounds *b = &pm->bounds;
    if (pm->ranked) {
        uint32_t slot = b->recent_next;
        b->recent_slots[slot] = p->slots;
        b->recent_dur_us[slot] = p->dur_us;
        b->recent_at_us[slot] = p->at_us;
        b->recent_next = (slot + 1) % PROMISE_RECENT;
        b->n_recent += b->n_recent < PROMISE_RECENT;
    }
    uint64_t h = ((uint64_t)p->slots * 0x9e3779b97f4a7c15u) ^ ((uint64_t)p->dur_us * 0xc2b2ae3d27d4eb4fu);
    for (uint32_t j = (uint32_t)(h >> 58);; j = (j + 1) % PROMISE_BOUND_TABLE) {
        uint32_t k = b->entry[j];
        if (k == 0) {
            if (b->n == PROMISE_BOUNDS) {
                /* a bound is a help, not a need: a shape the table has no
                 * room for goes to the bands alone (the searches of a queue
                 * whose lengths repeat read no bands) */
                length_bounds_note(&b->bands, p->slots, p->dur_us, p->at_us);
                return;
            }
            k = b->n++;
            b->entry[j] = (uint8_t)(k + 1);
            b->slots[k] = p->slots;
            b->dur_us[k] = p->dur_us;
            b->at_us[k] = p->at_us;
            return;
        }
        k--;
        if (b->slots[k] == p->slots && b->dur_us[k] == p->dur_us) {
            if (p->at_us > b->at_us[k])
                b->at_us[k] = p->at_us;
            return;
        }
    }
}

/* Marks the held promise at place `at` of the order moved or gone, and
 * notes its place the first time (drop_touched takes it out there). */
static int touch(struct promises *pm, struct promise_order_place at, uint32_t fate)
{
    struct promise *p = &pm->rec[promise_order_items(&pm->order, at.block)[at.i]];
    if (p->fate == PROMISE_HELD) {
        if (policies_grow((void **)&pm->touched, &pm->cap_touched, pm->n_touched + 1, sizeof *pm->touched) != 0)
            return -1;
        pm->touched[pm->n_touched++] = at;
    }
    p->fate = fate;
    return 0;
}

void promises_step_over(struct promises *pm, uint32_t b)
{
    const struct promise_order_block *blk = &pm->order.block[b];
    pm->stepped_over += blk->n;
    pm->kept_rec = promise_order_items(&pm->order, b)[blk->n - 1]; /* blocks are never empty */
}

/* Whether record index r's promise, moved to t, still goes after the last
 * promise the pass kept (and so before every one it keeps later: those
 * were at or after its old promise, and move only to go after it). */
static int keeps_place(const struct promises *pm, uint32_t r, int64_t t)
{
    if (t <= pm->next_now_us)
        return 0; /* due now: it starts and leaves the order */
    if (pm->kept_rec == PROMISE_NONE_KEPT)
        return 1;
    int64_t kept_at = pm->rec[pm->kept_rec].at_us; /* settled: the walk does not come back to it */
    if (kept_at != t)
        return kept_at < t;
    struct promise_order_ties ties = order_ties(pm);
    return promise_order_tie(pm->rec, &ties, pm->kept_rec) < promise_order_tie(pm->rec, &ties, r);
}

int promises_move(struct promises *pm, struct profile *profile, struct promise_order_place at, int64_t t)
{
    uint32_t r = promise_order_items(&pm->order, at.block)[at.i];
    struct promise *p = &pm->rec[r];
    int in_place = keeps_place(pm, r, t);
    if (profile_move(profile, p->at_us, t, p->dur_us, p->slots) != 0 ||
        (!in_place && touch(pm, at, PROMISE_MOVED) != 0))
        return -1;
    /* what it freed: its old window, less what its new one still covers */
    note_gain(pm, t + p->dur_us > p->at_us ? t + p->dur_us : p->at_us, p->at_us + p->dur_us);
    p->at_us = t;
    pm->moved++;
    if (in_place) {
        struct promise_order_block *blk = &pm->order.block[at.block];
        blk->first_at = at.i == 0 ? t : blk->first_at;
        blk->last_at = at.i + 1 == blk->n ? t : blk->last_at;
        pm->moved_in_place++;
    }
    return 0;
}

/* ---- recording ---- */

int promises_started(struct promises *pm, int64_t end_us, int64_t slots, uint64_t coord)
{
    /* `left` is read before the pass starts anything, and serves
     * promises_end as the sort's scratch */
    if (policies_grow((void **)&pm->started, &pm->cap_started, pm->n_started + 1, sizeof *pm->started) != 0 ||
        policies_grow((void **)&pm->leaving, &pm->cap_leaving, pm->n_leaving + 1, sizeof *pm->leaving) != 0 ||
        policies_grow((void **)&pm->left, &pm->cap_left, pm->n_leaving + 1, sizeof *pm->left) != 0)
        return -1;
    pm->started[pm->n_started++] = (struct promise_release){end_us, slots};
    pm->leaving[pm->n_leaving++] = coord;
    return 0;
}

int promises_gone(struct promises *pm, struct promise_order_place at)
{
    return touch(pm, at, PROMISE_GONE);
}

int promises_new(struct promises *pm, const struct promise *p)
{
    if (policies_grow((void **)&pm->fresh, &pm->cap_fresh, pm->n_fresh + 1, sizeof *pm->fresh) != 0)
        return -1;
    pm->fresh[pm->n_fresh++] = *p;
    return 0;
}

void promises_unplaced(struct promises *pm)
{
    pm->unplaced = 1;
}

void promises_spoil(struct promises *pm)
{
    pm->spoilt = 1;
    pm->follows_changes = 0;
    /* at once, not only at promises_end: a pass that fails stops before
     * it, and must leave no record that looks whole (its profile may be
     * half carved, its fates half set) for the next pass to resume from */
    pm->valid = 0;
}

static int release_goes_first(const struct promise_release *a, const struct promise_release *b)
{
    return a->at_us < b->at_us;
}

/* stable; the order among equal times does not matter (give_back_gains
 * sums the slots of one time) */
MERGE_SORT_DEFINE(sort_releases, struct promise_release, release_goes_first)
#define COORD_BEFORE(a, b) (*(a) < *(b))
MERGE_SORT_DEFINE(sort_coords, uint64_t, COORD_BEFORE)

/* remap's mark for a held promise that leaves the order (moved or gone) */
#define NOT_KEPT UINT32_MAX

/* record_in_place's part for the held promises the pass touched: the
 * order drops them, at the places the pass touched them (a walk that
 * asked of every promise in the order whether it left was a cache miss
 * per promise, a quarter of METACENTRUM's conservative replay); a gone
 * one stays as a tombstone, a moved one goes to out (from *n_out on).
 * Places not rising would be a pass that did not walk the order: the
 * record is then spoilt (the next pass rebuilds), never patched. */
static void drop_touched(struct promises *pm, uint32_t *n_out)
{
    struct promise *rec = pm->rec;
    const struct promise_order_place *touched = pm->touched;
    uint32_t n_touched = pm->n_touched;
    for (uint32_t i = 1; i < n_touched; i++)
        if (touched[i].block < touched[i - 1].block ||
            (touched[i].block == touched[i - 1].block && touched[i].i <= touched[i - 1].i)) {
            promises_spoil(pm);
            return;
        }
    for (uint32_t i = 0; i < n_touched; i++) {
        uint32_t r = promise_order_items(&pm->order, touched[i].block)[touched[i].i];
        if (rec[r].fate == PROMISE_GONE) {
            pm->n_gone++;
            continue;
        }
        rec[r].fate = PROMISE_HELD;
        pm->out[(*n_out)++].rec = r;
    }
    promise_order_remove(&pm->order, rec, touched, n_touched);
}

/* record_resumed's common case, where the new promises come after the
 * held ones in the queue (arrivals) and few held ones, or none, moved or
 * left: the record is changed where it stands, not copied (the copy, 56
 * bytes a promise each pass, was most of what the record cost behind
 * METACENTRUM's queue of up to 88,658). The new promises join at the end;
 * a promise gone stays as a tombstone that the reads step over (those at
 * the front once, at promises_end: first_live), until
 * record_resumed copies the record again once they are half of it; a
 * moved one waits in out at its place (drop_touched). Every failure
 * returns before the first change. Returns 0 or -1 (memory). */
static int record_in_place(struct promises *pm)
{
    uint32_t n = pm->n_rec + pm->n_fresh;
    if (policies_grow((void **)&pm->rec, &pm->cap_rec, n, sizeof *pm->rec) != 0 ||
        policies_grow((void **)&pm->out, &pm->cap_out, pm->n_touched + pm->n_fresh, sizeof *pm->out) != 0)
        return -1;
    uint32_t n_out = 0;
    if (pm->n_touched > 0)
        drop_touched(pm, &n_out);
    struct promise *rec = pm->rec;
    for (uint32_t k = 0; k < pm->n_fresh; k++) {
        pm->out[n_out++].rec = pm->n_rec;
        rec[pm->n_rec++] = pm->fresh[k];
    }
    while (pm->n_rec > 0 && rec[pm->n_rec - 1].fate == PROMISE_GONE) {
        pm->n_rec--; /* no tombstone last: arrivals join after the last held one */
        pm->n_gone--;
    }
    pm->n_out = n_out;
    return 0;
}

/* A resumed pass: the held promises that stayed keep their order, those
 * that moved and the new ones wait in `out`. */
static int record_resumed(struct promises *pm)
{
    uint32_t n = pm->n_rec + pm->n_fresh;
    if (pm->ranked && pm->n_fresh > 1) { /* made in priority order: the record wants queue order */
        if (policies_grow((void **)&pm->fresh_scratch, &pm->cap_fresh_scratch, pm->n_fresh,
                          sizeof *pm->fresh_scratch) != 0)
            return -1;
        sort_by_queue(pm->fresh, pm->n_fresh, pm->fresh_scratch);
    }
    int fresh_after = pm->n_fresh == 0 || pm->n_rec == 0 || pm->fresh[0].coord > pm->rec[pm->n_rec - 1].coord;
    if (fresh_after && (pm->n_touched == 0 || pm->n_gone + pm->n_touched <= pm->n_rec / 2))
        return record_in_place(pm);
    if (policies_grow((void **)&pm->next_rec, &pm->cap_next_rec, n, sizeof *pm->next_rec) != 0 ||
        policies_grow((void **)&pm->remap, &pm->cap_remap, pm->n_rec, sizeof *pm->remap) != 0 ||
        policies_grow((void **)&pm->next_order, &pm->cap_next_order, n, sizeof *pm->next_order) != 0 ||
        policies_grow((void **)&pm->out, &pm->cap_out, n, sizeof *pm->out) != 0)
        return -1;
    /* the held that stay and the new, by queue index; in locals, as the
     * stores through them could otherwise be any of pm's fields */
    const struct promise *rec = pm->rec, *fresh = pm->fresh;
    struct promise *next = pm->next_rec;
    struct promise_rank *out = pm->out;
    uint32_t *remap = pm->remap, n_rec = pm->n_rec, n_fresh = pm->n_fresh;
    uint32_t a = 0, b = 0, k = 0, n_out = 0;
    while (a < n_rec || b < n_fresh) {
        if (a < n_rec && rec[a].fate == PROMISE_GONE) {
            /* gone in this pass, or a tombstone of an earlier one, whose
             * coordinate is not this view's */
            remap[a++] = NOT_KEPT;
            continue;
        }
        if (b == n_fresh || (a < n_rec && rec[a].coord < fresh[b].coord)) {
            /* the order keeps those held; a moved one waits in out */
            remap[a] = k;
            if (rec[a].fate == PROMISE_MOVED) {
                remap[a] = NOT_KEPT;
                out[n_out++].rec = k;
            }
            next[k] = rec[a++];
        } else {
            out[n_out++].rec = k;
            next[k] = fresh[b++];
        }
        next[k++].fate = PROMISE_HELD;
    }
    /* remap, not rec's fates: the order visits rec out of sequence, and
     * remap is a fourteenth of its size (on METACENTRUM's queue of up to
     * 88,658 the fates were a cache miss each, a sixth of the replay) */
    uint32_t *next_order = pm->next_order, m = 0;
    for (uint32_t blk = 0; blk < pm->order.n_blocks; blk++) {
        const uint32_t *items = promise_order_items(&pm->order, blk);
        for (uint32_t i = 0; i < pm->order.block[blk].n; i++) {
            uint32_t to = remap[items[i]];
            next_order[m] = to;
            m += to != NOT_KEPT;
        }
    }
    SWAP_BUFFERS(pm->rec, pm->cap_rec, pm->next_rec, pm->cap_next_rec);
    pm->n_rec = k;
    pm->n_gone = 0;
    pm->first_live = 0;
    pm->n_out = n_out;
    return order_from(pm, m); /* a failure leaves a record promises_end calls invalid */
}

/* A rebuilt pass: every promise is new, made in placing order; the record
 * wants them in queue order. */
static int record_rebuilt(struct promises *pm)
{
    uint32_t n = pm->n_fresh, nq = pm->next_n_queued;
    if (policies_grow((void **)&pm->rec, &pm->cap_rec, n, sizeof *pm->rec) != 0 ||
        policies_grow((void **)&pm->out, &pm->cap_out, n, sizeof *pm->out) != 0 ||
        policies_grow((void **)&pm->fresh_at, &pm->cap_fresh_at, nq, sizeof *pm->fresh_at) != 0)
        return -1;
    if (nq > 0)
        memset(pm->fresh_at, 0xff, nq * sizeof *pm->fresh_at);
    for (uint32_t k = 0; k < n; k++)
        pm->fresh_at[pm->fresh[k].coord - pm->origin] = (int32_t)k;
    uint32_t r = 0;
    for (uint32_t k = 0; k < nq && r < n; k++)
        if (pm->fresh_at[k] >= 0) {
            pm->out[r].rec = r;
            pm->rec[r++] = pm->fresh[pm->fresh_at[k]];
        }
    pm->n_rec = n;
    pm->n_gone = 0;
    pm->first_live = 0;
    promise_order_clear(&pm->order);
    pm->n_out = n;
    return 0;
}

/* rel: the view's base with the pass's starts merged in, each after the
 * releases at or before its time (the order of the loop this replaced;
 * give_back_gains sums each instant's releases, so among equal times the
 * order matters only to its speed). Runs of the base between starts are
 * copied whole; a pass that started nothing takes the base as it is. */
static void merge_base(struct promises *pm)
{
    if (pm->n_started == 0) {
        SWAP_BUFFERS(pm->rel, pm->cap_rel, pm->base, pm->cap_base);
        pm->base_read = 0; /* base holds the old record now */
        return;
    }
    sort_releases(pm->started, pm->n_started, pm->started_scratch);
    const struct promise_release *base = pm->base;
    uint32_t a = 0, k = 0, n_base = pm->n_base;
    for (uint32_t b = 0; b < pm->n_started; b++) {
        int64_t at = pm->started[b].at_us;
        uint32_t lo = a, hi = n_base; /* the first release of the base after `at` */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (base[mid].at_us <= at)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > a)
            memcpy(&pm->rel[k], &base[a], (lo - a) * sizeof *base);
        k += lo - a;
        a = lo;
        pm->rel[k++] = pm->started[b];
    }
    if (n_base > a)
        memcpy(&pm->rel[k], &base[a], (n_base - a) * sizeof *base);
}

int promises_end(struct promises *pm, const struct cluster_view *v, int64_t free_after, int valid)
{
    /* the base: the view's releases and the pass's starts, merged */
    uint32_t n = v->n_running + pm->n_started;
    if (promises_read_base(pm, v) != 0 || policies_grow((void **)&pm->rel, &pm->cap_rel, n, sizeof *pm->rel) != 0 ||
        policies_grow((void **)&pm->started_scratch, &pm->cap_started_scratch, pm->n_started,
                      sizeof *pm->started_scratch) != 0 ||
        (pm->kept ? record_resumed(pm) : record_rebuilt(pm)) != 0) {
        pm->valid = 0;
        return -1;
    }
    merge_base(pm);
    pm->n_rel = n;
    pm->free_after = free_after;
    pm->now_us = pm->next_now_us;
    pm->total_slots = pm->next_total_slots;
    if (pm->first_live > pm->n_rec)
        pm->first_live = pm->n_rec;
    while (pm->first_live < pm->n_rec && pm->rec[pm->first_live].fate == PROMISE_GONE)
        pm->first_live++;
    pm->valid = valid && !pm->spoilt;
    pm->follows_changes = pm->valid && pm->kept && !pm->ranked && !pm->unplaced;
    pm->head_to = 0;
    pm->tail_from = UINT64_MAX;
    pm->n_inner = 0;
    /* the coordinates its starts leave, for the next pass's read_changes */
    sort_coords(pm->leaving, pm->n_leaving, pm->left);
    SWAP_BUFFERS(pm->left, pm->cap_left, pm->leaving, pm->cap_leaving);
    pm->n_left = pm->n_leaving;
    pm->n_leaving = 0;
    return 0;
}

int promises_record_whole(const struct promises *pm)
{
    if (!pm->valid)
        return 1; /* the next pass rebuilds: nothing to check */
    uint32_t gone = 0, live = 0;
    uint64_t last = 0;
    if (pm->first_live > pm->n_rec)
        return 0;
    for (uint32_t r = 0; r < pm->n_rec; r++) {
        if (r < pm->first_live && pm->rec[r].fate != PROMISE_GONE)
            return 0;
        if (pm->rec[r].fate == PROMISE_GONE) {
            gone++;
            continue;
        }
        if (pm->rec[r].fate != PROMISE_HELD || (live > 0 && pm->rec[r].coord <= last))
            return 0;
        last = pm->rec[r].coord;
        live++;
    }
    if (gone != pm->n_gone || (pm->n_rec > 0 && pm->rec[pm->n_rec - 1].fate == PROMISE_GONE) ||
        pm->order.n + pm->n_out != live || !promise_order_whole(&pm->order, pm->rec))
        return 0;
    uint8_t *seen = calloc(pm->n_rec ? pm->n_rec : 1, 1);
    if (!seen)
        return 0;
    int whole = 1;
    /* in order by promise, then priority (the last pass's ranks, which
     * hold for every job the record names) */
    struct promise_order_ties ties = order_ties(pm);
    int64_t last_at = INT64_MIN;
    uint32_t last_tie = 0;
    for (uint32_t b = 0; b < pm->order.n_blocks && whole; b++) {
        const uint32_t *items = promise_order_items(&pm->order, b);
        for (uint32_t i = 0; i < pm->order.block[b].n && whole; i++) {
            uint32_t r = items[i];
            whole = r < pm->n_rec && pm->rec[r].fate == PROMISE_HELD && !seen[r] && pm->rec[r].at_us >= last_at;
            if (!whole)
                break;
            uint32_t tie = promise_order_tie(pm->rec, &ties, r);
            whole = pm->rec[r].at_us > last_at || tie > last_tie;
            seen[r] = 1;
            last_at = pm->rec[r].at_us;
            last_tie = tie;
        }
    }
    for (uint32_t k = 0; k < pm->n_out && whole; k++) {
        uint32_t r = pm->out[k].rec;
        whole = r < pm->n_rec && pm->rec[r].fate == PROMISE_HELD && !seen[r];
        if (whole)
            seen[r] = 1;
    }
    free(seen);
    return whole;
}
