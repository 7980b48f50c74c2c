/* promises: what conservative backfilling promised in its last pass, kept
 * with the profile it carved, so that the next pass need not rebuild them.
 *
 * A conservative pass (policies/backfill.h) places the waiting jobs in
 * order of their promised start, each at the earliest start that fits the
 * profile of the running jobs and of the jobs placed before it, then gives
 * newcomers theirs. Rebuilt each pass, that is one profile search and one
 * reservation per waiting job, though from one pass to the next few jobs
 * move. The kept profile F is the running jobs' releases (the base) carved
 * by every promise. When the base only gained slots since (jobs that ended
 * before their estimate) and every promise in the view is one recorded
 * here, the pass may start from F instead: for the job with the k-th
 * promise a, the profile the rebuild would give it equals F, with the
 * moves made so far, before a (every later promise starts at a or after),
 * and from a on it has room for the job for its whole length (F had, and a
 * move only frees what lies at or after the mover's old promise). So the
 * job moves to the earliest t before a at which F has room from t until
 * t + length or a, whichever comes first (profile_earliest_before), and
 * stays at a when there is none: no reservation is touched unless it
 * moves. Newcomers then search the resulting profile as in a rebuild.
 *
 * Most held jobs are not even searched: the last pass left none of them
 * room before its promise, so one that can move now has in its window a
 * span where the profile gained (what the base gained, what a moved
 * promise freed), and none moves before where a promise no larger and no
 * longer placed earlier in the pass settled (before that one's promise
 * the profile only lost room since). Most are not even read: the order
 * lies in blocks that sum up their promises (policies/promise_order.h),
 * and a pass steps over a block none of whose promises may move. Every
 * decision is the rebuild's: tests/unit/test_promises.c runs thousands of
 * random views both ways.
 *
 * promises_resume decides whether the view allows it: the cluster's size
 * unchanged, no GPU shared, the jobs with a promise those recorded here in
 * the same (queue) order, each with the promise, slots and length recorded
 * and not in the past (under FCFS, read only at the ends of the queue that
 * the host's record of the queue says changed, where it can: promises.c,
 * read_changes), and the base, compared release by release with the
 * one recorded, gaining slots only over finite spans. Anything else, and
 * the first pass, rebuild (the pass then records afresh). The record is
 * only a cache, checked against the view each pass, so decide() stays a
 * pure function of the view.
 */
#ifndef FLEETSIM_POLICIES_PROMISES_H
#define FLEETSIM_POLICIES_PROMISES_H

#include <stdint.h>

#include "policies/length_bounds.h"
#include "policies/policy.h"
#include "policies/profile.h"
#include "policies/promise_order.h"

/* A reservation carved into the kept profile. */
struct promise {
    int64_t id;
    int64_t at_us;
    int64_t dur_us; /* queue_job_duration */
    int64_t slots;
    /* the job's coordinate in the host's queue (policy.h, queue_origin):
     * its index in the view is coord - queue_origin. Kept as a coordinate
     * because a job the host did not move keeps it from one view to the
     * next, where its index changes whenever the head of the queue leaves
     * (promises_resume sets it for the jobs it reads; a tombstone's is
     * stale) */
    uint64_t coord;
    uint32_t fate; /* in the pass: PROMISE_HELD, _MOVED or _GONE */
    /* what an order by fixed keys reads besides the length (SJF the
     * request itself, 0 and 1 us apart though both last 1 us; F1 the
     * submit time too): a job whose key changed may rank elsewhere */
    int64_t estimate_us, submit_us;
};

enum { PROMISE_HELD = 0, PROMISE_MOVED = 1, PROMISE_GONE = 2 };

/* promises.kept_rec before the pass keeps a promise */
#define PROMISE_NONE_KEPT UINT32_MAX

/* A running job's slots coming free, as the profile counts it. */
struct promise_release {
    int64_t at_us;
    int64_t slots;
};

/* Shapes (slots, length) whose latest starts a pass remembers
 * (promises_may_move), and the slots of the table that finds a shape's
 * entry (twice as many, so that probes stay short). */
#define PROMISE_BOUNDS 32u
#define PROMISE_BOUND_TABLE 64u
/* The latest settled promises also kept whatever their shape. */
#define PROMISE_RECENT 32u
/* Ranges changed inside the queue (gaps its starts left) that a pass
 * reads; past these, every job is read. */
#define PROMISE_INNER 16u

/* The latest start a held promise of each shape settled at so far: entry
 * k is (slots[k], dur_us[k]) settled at at_us[k]. promises_settled finds a
 * shape's entry through `entry` (it scanned every shape for every promise
 * before); promises_may_move reads them all. */
struct promise_bounds {
    int64_t slots[PROMISE_BOUNDS], dur_us[PROMISE_BOUNDS], at_us[PROMISE_BOUNDS];
    uint8_t entry[PROMISE_BOUND_TABLE]; /* by a hash of the shape: k + 1, or 0 */
    uint32_t n;
    /* The shapes the table above had no room for, by size and band of
     * length (policies/length_bounds.h), for queues whose lengths seldom
     * repeat (the table fills at their first 32 shapes). */
    struct length_bounds bands;
    /* In a pass in another order than arrival's, the last PROMISE_RECENT
     * settled too, whatever their shape: where lengths rise with the
     * promise (SJF) the shapes that bound a promise are those settled just
     * before it, which the table above (the first shapes) and the bands
     * (lengths in a lower band) miss. (Under FCFS they cost a replay of
     * HPC2N 13% more instructions and saved no search worth it.) */
    int64_t recent_slots[PROMISE_RECENT], recent_dur_us[PROMISE_RECENT], recent_at_us[PROMISE_RECENT];
    uint32_t n_recent, recent_next;
};

/* A promise's place in the order a pass places them: by promise, then
 * priority (tie: the job's rank in this pass; under FCFS its place in rec,
 * which is in queue order, as ranks go). */
struct promise_rank {
    int64_t at_us;
    uint32_t rec, tie;
};

struct promises {
    int valid, spoilt;
    int kept; /* the pass in progress resumed (promises_resume said 1) */
    /* the pass in progress read only what the host's record of the queue
     * says changed (promises_resume's read_changes) */
    int read_changes;
    /* the record may be checked against the next view through the host's
     * record of the queue: the last pass resumed in arrival order and
     * gave a promise (or a start) to every job no larger than the
     * cluster */
    int follows_changes;
    int unplaced; /* the pass in progress left such a job */
    /* promises the pass in progress stepped over in blocks none of which
     * may move, moved, moved where they stood in the order (promises_move),
     * and gaps inside the queue its read_changes accepted (for tests and
     * figures) */
    uint32_t stepped_over, moved, moved_in_place, inner_gaps;
    /* what the host's record of the queue said changed since the last
     * pass (promises_track): [origin, head_to) and [tail_from, end) of
     * the view then, and the ranges inside, [inner[2k], inner[2k + 1]) */
    uint64_t head_to, tail_from;
    uint64_t inner[2 * PROMISE_INNER];
    uint32_t n_inner;
    /* the coordinates of the jobs the last pass started, rising: the
     * changes inside the queue read_changes accepts are the gaps they
     * left there (policy.h, policy_job.gap); and those of the pass in
     * progress */
    uint64_t *left, *leaving;
    uint32_t n_left, cap_left, n_leaving, cap_leaving;
    int64_t now_us, total_slots;
    int64_t free_after; /* free slots at now_us once the pass's starts took theirs */
    /* the base: releases by ascending time (the pass's starts among them) */
    struct promise_release *rel;
    uint32_t n_rel, cap_rel;
    /* the view's base (promises_read_base), read once a pass by the first
     * to ask (base_read; after a pass that started nothing it holds the
     * record before, swapped out): each job's end lies behind two
     * indirections, and at 16,384 GPUs reading them twice a pass was a
     * third of a conservative forecast */
    struct promise_release *base;
    uint32_t n_base, cap_base;
    int base_read;
    /* the promises carved, in queue order (which no start or arrival
     * changes), with tombstones (PROMISE_GONE, n_gone of them, never
     * last) where promises left; `order` holds those already in the
     * order a pass places them (by promise, then queue order, as the
     * rebuild sorts; policies/promise_order.h), out[0..n_out) the others,
     * merged in by promises_resume */
    struct promise *rec;
    uint32_t n_rec, cap_rec, n_gone;
    /* rec[0 .. first_live) are tombstones: the jobs at the head start
     * first, and a deep queue's record held thousands of them, which
     * read_changes stepped over in every pass (a quarter of METACENTRUM's
     * replay) */
    uint32_t first_live;
    struct promise_order order;
    struct promise_rank *out;
    uint32_t n_out, cap_out;
    /* from promises_resume: the queue indices of the jobs without a
     * promise, placed after the held ones, in priority order */
    uint32_t *newcomers;
    uint32_t n_newcomers, cap_newcomers;
    /* a pass in another order than arrival's: rank[qi], each queue index's
     * place in the priority order (promises_resume) */
    int ranked;
    uint32_t *rank;
    uint32_t cap_rank;
    /* where the profile may have more room than the last pass left it:
     * [gain_from, gain_to), empty when gain_from is INT64_MAX; and where
     * the held promises settled so far */
    int64_t gain_from, gain_to;
    struct promise_bounds bounds;
    /* the record index of the last promise the pass in progress walked
     * that stays in the order (its promise later than now, not moved out
     * of its place), or PROMISE_NONE_KEPT before the first */
    uint32_t kept_rec;
    /* being recorded by the pass in progress */
    int64_t next_now_us, next_total_slots;
    uint32_t next_n_queued;
    struct promise_release *started;
    uint32_t n_started, cap_started;
    uint64_t origin; /* the view's queue_origin */
    /* the places in the order of the held promises that moved or left,
     * rising (a pass touches them as it walks the order) */
    struct promise_order_place *touched;
    uint32_t n_touched, cap_touched;
    struct promise *fresh; /* new promises */
    uint32_t n_fresh, cap_fresh;
    /* scratch */
    struct promise *next_rec;
    uint32_t cap_next_rec;
    uint32_t *remap, *next_order;
    uint32_t cap_remap, cap_next_order;
    int32_t *fresh_at; /* per queue index, a rebuild's: into fresh, or -1 */
    uint32_t cap_fresh_at;
    struct promise_rank *out_scratch; /* the sorts' */
    struct promise_release *started_scratch;
    struct promise *fresh_scratch;
    uint32_t cap_out_scratch, cap_started_scratch, cap_fresh_scratch;
};

void promises_init(struct promises *pm);
void promises_release(struct promises *pm);

/* What the host's record of the queue (policy.h, queue_tracked) says
 * changed: to be called with every view the instance's decide() is given,
 * even one it decides nothing on (the record covers only the time since
 * the last call), before promises_begin. */
void promises_track(struct promises *pm, const struct cluster_view *v);
/* Starts recording a pass. */
void promises_begin(struct promises *pm, const struct cluster_view *v);
/* After promises_begin: the view's base, as a pass builds its profile
 * from it, in pm->base[0 .. pm->n_base): running job running_by_end[a]'s
 * slots come free at its expected end, or just after now when it is
 * overdue. Read once a pass, by the first to ask: a rebuild, to build its
 * profile; a resume, to find what the base gained; promises_end, to record
 * it. Returns 0 or -1 (memory). */
int promises_read_base(struct promises *pm, const struct cluster_view *v);

/* After promises_begin: 1 when the pass may start from the kept profile
 * (then advanced to now and given back what the base gained;
 * pm->order names the promises to place in order, pm->newcomers the
 * rest), 0 when it must rebuild, -1 (memory). `order` is the pass's
 * priority order (queue indices, highest first), or NULL for arrival
 * order; it must rank any two waiting jobs as every earlier pass did (an
 * ordering by fixed keys: FCFS, SJF, F1), since the promises kept in
 * order stay in it. */
int promises_resume(struct promises *pm, const struct cluster_view *v, struct profile *profile,
                    const uint32_t *order);

/* Whether held promise p might move (it has room somewhere before its
 * promise), and if so the starts it might move to: [*from, *to). */
int promises_may_move(const struct promises *pm, const struct promise *p, int64_t *from, int64_t *to);
/* 0 when no promise of block b of the order may move: asked of the shape
 * that could move most easily, the latest promise, the longest length
 * (the widest window), the fewest slots and the shortest length (the
 * fewest bounds). Every bound that stops that shape bounds each promise
 * of the block, so none has room before its promise, though
 * promises_may_move, which reads the latest settled shapes only up to
 * the first that bounds the promise itself, might search one in vain. A
 * pass steps over such a block, settling none of it: a bound is a help,
 * not a need. */
int promises_block_may_move(const struct promises *pm, const struct promise_order_block *b);
/* Moves the held promise at place `at` of the order to t, in the profile
 * and in the record. A move to a start after now that still goes after
 * every promise the pass kept before it (by promise, then priority) leaves
 * the order right: the promise keeps its place, and its block's first and
 * last promise follow it. Any other is taken out of the order when the
 * pass ends and merged back at its place by the next (promises_resume).
 * (On HPC2N's conservative replay 92% of 1.59 M moves keep their place; each
 * taken out and merged back cost some 340 instructions.) Returns 0 or -1
 * (memory). */
int promises_move(struct promises *pm, struct profile *profile, struct promise_order_place at, int64_t t);
/* Held promise p settled at its promise (moved or not). */
void promises_settled(struct promises *pm, const struct promise *p);
/* The walk steps over block b of the order, none of whose promises may
 * move (promises_block_may_move). */
void promises_step_over(struct promises *pm, uint32_t b);

/* What the pass in progress decided: a start (its end, slots and the
 * job's coordinate in the host's queue); the held promise at place `at`
 * of the order started; a new promise; a decision the record cannot
 * follow (the next pass rebuilds). Return 0 or -1 (memory). */
int promises_started(struct promises *pm, int64_t end_us, int64_t slots, uint64_t coord);
int promises_gone(struct promises *pm, struct promise_order_place at);
int promises_new(struct promises *pm, const struct promise *p);
void promises_spoil(struct promises *pm);
/* The pass found no start for a job no larger than the cluster (the
 * profile never had room for it), which has no promise: the record then
 * names not every job that waits. */
void promises_unplaced(struct promises *pm);

/* Ends the record of the pass over view v: free_after is the free slots once its
 * starts took theirs; valid 0 when the next pass must rebuild whatever
 * it sees. Returns 0 or -1 (memory; the record is then spoilt). */
int promises_end(struct promises *pm, const struct cluster_view *v, int64_t free_after, int valid);

/* 1 when a valid record is whole, for tests: its promises in queue order
 * (rising coordinate, tombstones apart, all before first_live), n_gone the tombstones and none
 * last, the order and `out` naming every promise held once. */
int promises_record_whole(const struct promises *pm);

#endif
