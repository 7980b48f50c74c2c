/* backfill: the three ways a queue policy fills the machine once the order of
 * the waiting jobs is known.
 *
 *  none          start jobs in priority order while they fit; stop at the
 *                first that does not (it waits, and so does everyone behind it).
 *  easy          EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001): the
 *                first job that does not fit gets a reservation at the shadow
 *                time, recomputed at every pass from the running jobs'
 *                expected ends; a later job may start now if it fits now and
 *                either ends by the shadow time or only uses slots the
 *                reserved job will not need ("extra" slots).
 *  conservative  every waiting job gets a reservation when it first sees a
 *                pass (in priority order, the earliest start that disturbs no
 *                earlier reservation) and keeps it: each pass re-places the
 *                reserved jobs in order of their promised start, each at the
 *                earliest start no later than its promise (Mu'alem & Feitelson's
 *                compression), then gives newcomers theirs; those due now
 *                start. A promise never moves later while estimates hold.
 *                Under an order by fixed keys (FCFS, SJF, F1) a pass
 *                starts from the profile the last one left when the view
 *                allows it, and searches only the
 *                promises that might move (policies/promises.h): the same
 *                decisions, without rebuilding.
 *  greedy        start every job that fits, in priority order, skipping those
 *                that do not; no reservations (work-conserving, as Tiresias
 *                and most GPU-cluster schedulers run; large jobs can starve
 *                unless the ordering or preemption prevents it).
 *
 * All decide with pooled slot counts and place with placement_place() (the
 * placement's strategy; pack by default). A shaped head (policy_job.nodes)
 * gets EASY's reservation node by node: its shadow is the first expected end
 * at which n nodes each have slots / n free (a running job's share of a GPU
 * is not counted free: the GPU frees only with its last share), and a job
 * that would outlast the shadow backfills only off n such nodes kept for
 * it, a fractional one included. Conservative's
 * profile counts pooled slots: a shaped job's reservation is an estimate
 * (placement refuses it when its shape is not free, and it waits). Optional hooks let a composed
 * policy hold jobs back (quotas), count what starts, and make room by
 * preemption when a job does not fit (none, easy and greedy only).
 */
#ifndef FLEETSIM_POLICIES_BACKFILL_H
#define FLEETSIM_POLICIES_BACKFILL_H

#include <stddef.h>
#include <stdint.h>

#include "policies/placement.h"
#include "policies/policy.h"
#include "policies/profile.h"
#include "policies/promises.h"
#include "policies/queue_index.h"

enum backfill_mode { BACKFILL_NONE, BACKFILL_EASY, BACKFILL_CONSERVATIVE, BACKFILL_GREEDY };

int backfill_parse(const char *name, size_t len, enum backfill_mode *mode);
const char *backfill_name(enum backfill_mode mode);

struct reserve_order;
struct backfill_pass;

struct backfill_hooks {
    void *ctx;
    /* May job start now under the policy's rules (quotas)? A job held back
     * is skipped: it neither starts nor blocks the jobs behind it. */
    int (*admit)(void *ctx, const struct policy_job *job);
    /* job started in this pass */
    void (*started)(void *ctx, const struct policy_job *job);
    /* queued[qi] does not fit in *free_now: preempt to make room. Returns 0
     * when it made room (and raised *free_now), 1 when it cannot, -1 on error. */
    int (*make_room)(void *ctx, struct backfill_pass *pass, uint32_t qi, int64_t *free_now);
};

/* A job started in this pass: its expected end, slots and allocations
 * (out->allocs[first .. first + count)). */
struct backfill_started {
    int64_t end;
    int32_t slots;
    uint32_t first, count;
};

/* What a pass needs besides the view: the priority order, and scratch. */
struct backfill_pass {
    const struct cluster_view *view;
    const uint32_t *order; /* queue indices, highest priority first */
    struct policy_decisions *out;
    struct placement *placement;
    struct profile *profile;
    /* EASY under FCFS (order is the identity, no hooks): the queue's index,
     * so the walk behind the head visits only jobs that might start; NULL
     * to read every job */
    const struct queue_index *index;
    /* jobs started earlier in this pass, in the order they started (EASY's
     * shadow walk sorts them by expected end) */
    struct backfill_started *started, *started_scratch;
    uint32_t n_started, cap_started;
    /* EASY with a shaped head: free slots per node as the shadow walk
     * frees them, and the nodes kept for the head (placement.avoid) */
    int32_t *node_free;
    uint8_t *node_kept;
    uint32_t cap_nodes;
    /* conservative: queue indices in the order reservations are placed */
    struct reserve_order *placing, *placing_scratch; /* the scratch: its sort's */
    uint32_t n_placing, cap_placing;
    /* conservative: the promises and their profile kept from the last
     * pass, which serve the next only when the order ranks any two
     * waiting jobs as every pass before did (fixed_order: keys that do not
     * change while a job waits, as FCFS's, SJF's and F1's) and no hook
     * holds jobs back; arrival_order: order is the identity (FCFS) */
    struct promises *promises;
    int fixed_order, arrival_order;
    /* optional (NULL: none) */
    const struct backfill_hooks *hooks;
    const uint8_t *skip_running; /* per running index: preempted this pass */
};

/* Frees the scratch a pass grew (not what it points into). */
void backfill_pass_release(struct backfill_pass *pass);

/* Each returns 0, or -1 if out is too small or memory ran out. */
int backfill_run(enum backfill_mode mode, struct backfill_pass *pass);

#endif
