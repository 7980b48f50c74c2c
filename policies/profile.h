/* profile: the future availability of slots as a step function, used by
 * conservative backfilling to give every waiting job a reservation.
 *
 * Step k holds `free` slots from its time until the next step's time; the
 * last step lasts forever. Built from the running jobs' expected ends, then
 * carved by each reservation. Only pooled slot counts are modelled here.
 *
 * A pass places every waiting job, and each placement adds up to two steps,
 * so a profile behind a deep queue holds tens of thousands of steps. They
 * are kept in time order in blocks of at most PROFILE_BLOCK steps; each
 * block carries its first and last times, bounds on its least and most
 * free slots and an addition pending for all its steps. Finding the
 * earliest fit is one sweep forward that skips whole blocks too full to
 * hold a start (most) and, inside a job's window, whole blocks with room
 * everywhere (least); a reservation adds to the blocks it covers whole and
 * touches steps only in the two at its ends; a new breakpoint shifts at
 * most a block. The blocks' summaries lie in one array in time order, so
 * every walk reads memory in sequence. Against the treap this replaced
 * (O(log steps) per operation, but a cache miss per level and five walks
 * per job), measured in the same minutes: a pass over 10,000 queued jobs
 * on 2,000 x 8 GPUs 13.0 -> 4.7 ms, HPC2N's whole conservative replay
 * 1.9 -> 1.55 s; 64 steps a block beat 32, 128 and 256 on both.
 * tests/unit/test_profile.c checks every answer against a plain step
 * function on random profiles, ties, reuse across resets and all.
 *
 * Releases are added in ascending time first (profile_add_release), before
 * any reservation. A profile may also be kept from one pass to the next
 * (conservative backfilling's promises, policies/promises.h): profile_advance moves
 * its origin to the new now, dropping the blocks wholly before it, and
 * profile_give_back returns slots (a running job's that ended before its
 * estimate) and profile_move moves a reservation, both merging away a step
 * that comes to hold what the step before it holds (else a kept profile
 * fills with steps that change nothing). No query answers before the
 * origin.
 */
#ifndef FLEETSIM_POLICIES_PROFILE_H
#define FLEETSIM_POLICIES_PROFILE_H

#include <stdint.h>

#include "policies/length_bounds.h"

/* Steps a block holds at most; a full block splits in two halves.
 * tests/unit/test_profile_tiny_blocks.c builds the profile again with
 * blocks of 4 steps, so that its random cases split and drop blocks at
 * every few changes. */
#ifndef PROFILE_BLOCK
#define PROFILE_BLOCK 64u
#endif

struct profile_block {
    int64_t first, last;  /* times of its first and last steps */
    int64_t add;          /* added to every step in it */
    int64_t least, most;  /* over its steps, add included */
    uint32_t n;           /* steps */
    uint32_t at;          /* its steps: time[at * PROFILE_BLOCK + i], free[...] */
};

struct profile {
    struct profile_block *block; /* in time order */
    uint32_t n_blocks, cap_blocks;
    int64_t *time, *free;        /* step storage, PROFILE_BLOCK per block; free without the block's add */
    uint32_t n_storage, cap_storage; /* in blocks */
    uint32_t *spare;             /* storage of blocks dropped by profile_advance, for new ones */
    uint32_t n_spare, cap_spare;
    int64_t origin;              /* now: the earliest start a query gives */
    /* lower bounds on the earliest start, valid until the next reset or a
     * gain (policies/length_bounds.h) */
    struct length_bounds bounds;
    /* where the last search's answer lay: its block and step there, and
     * the block its window ended in; guesses, checked where used */
    uint32_t found_block, found_step, found_end_block;
};

void profile_init(struct profile *p);
void profile_release(struct profile *p);
/* One step: free_now slots from now on, now the origin. Returns 0 or -1
 * (memory). */
int profile_reset(struct profile *p, int64_t now, int64_t free_now);
/* `slots` become free at time t and stay free (t must not precede the last
 * breakpoint: add releases in ascending time, before any query). A release
 * at or before the last breakpoint adds to it. Returns 0 or -1 (memory). */
int profile_add_release(struct profile *p, int64_t t, int64_t slots);
/* Earliest breakpoint t with at least `slots` free throughout [t, t + dur),
 * or INT64_MAX when there is none (more slots than will ever be free). */
int64_t profile_earliest(struct profile *p, int64_t slots, int64_t dur);
/* Earliest breakpoint t in [from, min(to, limit)) (and not before the origin) with
 * at least `slots` free throughout [t, min(t + dur, limit)), or
 * INT64_MAX: where a job promised `limit` could move (what lies from limit
 * on is its own), among the starts [from, to) that might. */
int64_t profile_earliest_before(struct profile *p, int64_t slots, int64_t dur, int64_t from, int64_t to,
                                int64_t limit);
/* Takes `slots` out of [t, t + dur). Returns 0 or -1 (memory). */
int profile_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots);
/* Gives `slots` back to [t, t + dur) (t at or after the origin). Returns 0
 * or -1 (memory). */
int profile_give_back(struct profile *p, int64_t t, int64_t dur, int64_t slots);
/* Moves a reservation of `slots` for `dur` from `from` to `to` (both at or
 * after the origin). Returns 0 or -1 (memory). */
int profile_move(struct profile *p, int64_t from, int64_t to, int64_t dur, int64_t slots);
/* Moves the origin to `now` (not before it): a breakpoint at now, the
 * blocks wholly before it dropped. Returns 0 or -1 (memory). */
int profile_advance(struct profile *p, int64_t now);
/* Free slots at time t (t at or after the first breakpoint). */
int64_t profile_free_at(const struct profile *p, int64_t t);
/* Steps in the profile (for tests and figures). */
uint32_t profile_steps(const struct profile *p);

#endif
