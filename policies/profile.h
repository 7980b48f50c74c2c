/* profile: the future availability of slots as a step function, used by
 * conservative backfilling to give every waiting job a reservation.
 *
 * Step k holds `free` slots from its time until the next step's time; the
 * last step lasts forever. Built from the running jobs' expected ends, then
 * carved by each reservation. Only pooled slot counts are modelled here.
 *
 * A pass places every waiting job, and each placement adds up to two steps,
 * so a profile behind a deep queue holds tens of thousands of steps. A
 * short profile stays a flat array (a scan and a shift per job cost less
 * than the tree up to a few thousand steps: measured on HPC2N and a jagged
 * synthetic queue); past PROFILE_FLAT_STEPS it moves
 * into a treap (a binary search tree by time, heap-ordered by a
 * pseudo-random priority) whose nodes carry the least and the most free
 * slots of their subtree and an addition pending for all of it: finding the
 * earliest fit skips whole runs of steps that are too full, and carving a
 * reservation touches O(log steps) nodes. Both give the answers of the
 * same step function, step for step (tests/unit/test_profile.c checks
 * each against a plain one on random profiles, ties and all).
 *
 * Releases are added in ascending time first (profile_add_release), before
 * any reservation.
 */
#ifndef FLEETSIM_POLICIES_PROFILE_H
#define FLEETSIM_POLICIES_PROFILE_H

#include <stdint.h>

/* Steps beyond which a profile moves from the flat array to the treap. */
#define PROFILE_FLAT_STEPS 4096u

struct profile_node {
    int64_t time;
    int64_t free;        /* without the pending of its ancestors */
    int64_t pending;     /* added to this node and everything below it */
    int64_t least, most; /* over the subtree, its own pending in, its ancestors' not */
    int32_t left, right; /* node indices, -1 for none */
    uint32_t priority;   /* heap order: a parent's is at least its children's */
};

/* Sizes whose earliest starts a profile remembers between resets. */
#define PROFILE_BOUNDS 16u

struct profile_bound {
    int64_t slots;
    int64_t at[64]; /* latest earliest start found for a duration in [2^i, 2^(i+1)) */
};

struct profile {
    /* flat: step k holds free[k] slots from time[k] on */
    int64_t *time;
    int64_t *free;
    uint32_t n, cap;
    /* treap, once root >= 0 */
    struct profile_node *node;
    uint32_t n_nodes, cap_nodes;
    int32_t root;
    uint32_t rng;   /* priorities: the shape only, never an answer */
    int32_t *stack; /* building scratch */
    uint32_t cap_stack;
    /* lower bounds on the earliest start, valid until the next reset */
    struct profile_bound bound[PROFILE_BOUNDS];
    uint32_t n_bounds;
};

void profile_init(struct profile *p);
void profile_release(struct profile *p);
/* One step: free_now slots from now on. Returns 0 or -1 (memory). */
int profile_reset(struct profile *p, int64_t now, int64_t free_now);
/* `slots` become free at time t and stay free (t must not precede the last
 * breakpoint: add releases in ascending time, before any query). A release
 * at or before the last breakpoint adds to it. Returns 0 or -1 (memory). */
int profile_add_release(struct profile *p, int64_t t, int64_t slots);
/* Earliest breakpoint t with at least `slots` free throughout [t, t + dur),
 * or INT64_MAX when there is none (more slots than will ever be free). */
int64_t profile_earliest(struct profile *p, int64_t slots, int64_t dur);
/* Takes `slots` out of [t, t + dur). Returns 0 or -1 (memory). */
int profile_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots);
/* Free slots at time t (t at or after the first breakpoint). */
int64_t profile_free_at(const struct profile *p, int64_t t);

#endif
