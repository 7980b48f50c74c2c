/* policy_host: everything a host does around a policy that does not depend
 * on where its state lives, written once for the simulator
 * (models/simulation), the live agent (agent/scheduler) and the contract
 * suite (tests/policy). A second copy of any of this is how "the same policy
 * live" quietly stops being true.
 *
 *  - Creating: a built-in spec or a plugin (models/policy_plugin.h: ABI
 *    checked before anything else in the library is touched). The spec the
 *    user gave is kept and named in every message.
 *  - What the host can carry out: a host declares the decision kinds it
 *    serves (POLICY_KINDS_*); a policy that may emit a kind the host cannot
 *    serve is refused when it is created, never mid-run. Built-ins declare
 *    theirs through the registry; a plugin through the optional
 *    `fleetsim_policy_decision_kinds` export (all kinds when absent).
 *  - Calling: decide(), create() and observe() of a plugin run guarded. A
 *    crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) or a decide() that has
 *    not returned after decide_timeout_s of wall-clock time is caught, named
 *    (plugin, signal or limit, the host's time), and the instance is marked
 *    failed: it is never called again, not even destroyed (its state cannot
 *    be trusted). Built-ins are our own tested code and run unguarded except
 *    for the time limit. The guard is in process (sigsetjmp/siglongjmp on an
 *    alternate stack, a watchdog thread for the limit): a plugin that
 *    corrupts the heap before it crashes can still take the process down;
 *    see policies/README.md.
 *  - Checking: policy_host_check() is the one decision checker. It is pure:
 *    given a view and decisions it names the first rule broken and the
 *    decision that broke it, in one wording for every host.
 *  - The view: running_by_end order (policy_running_end_before: expected end,
 *    then submit time, then id: the queue's own arrival order), and the
 *    decision buffers sized as policy.h promises.
 *
 * Ownership: the host owns the instance (and the plugin's library); close
 * destroys it unless it failed.
 */
#ifndef FLEETSIM_MODELS_POLICY_HOST_H
#define FLEETSIM_MODELS_POLICY_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "models/policy_plugin.h"
#include "policies/policy.h"
#include "sim/err.h"

/* The default wall-clock limit on one decide() call, in seconds. */
#define POLICY_HOST_DEFAULT_TIMEOUT_S 10.0

enum policy_host_status {
    POLICY_HOST_OK = 0,
    POLICY_HOST_BROKE = 1,  /* the decisions break the contract: the pass is refused */
    POLICY_HOST_FAILED = 2, /* the policy crashed, hung or returned an error: it is done */
    POLICY_HOST_NO_MEMORY = 3 /* no memory to check the decisions: the pass is refused, the
                               * policy not blamed */
};

struct policy_host_share {
    int32_t node, gpu, used_milli;
    int32_t free; /* not shared now: its last share was preempted, or the view had it not */
};

struct policy_host {
    struct policy_plugin pl;  /* ops, state, library */
    char spec[1024];          /* as the user gave it */
    uint32_t kinds;           /* the decision kinds the policy may emit */
    int reads_gaps;           /* a built-in that reads gaps in the queue (policy.h, policy_job.gap) */
    double decide_timeout_s;  /* <= 0: no limit */
    int guarded;              /* a plugin: crashes are caught */
    int failed;               /* crashed or hung: never called again */
    /* the checker's scratch: entries stamped with the pass that set them, so
     * a check costs what the decisions touch, not the size of the view */
    uint32_t check_stamp;
    int32_t *room;
    uint32_t *room_stamp, cap_room, cap_room_stamp;
    uint32_t *started, *preempted;
    uint32_t cap_started, cap_preempted;
    /* a shaped start's nodes, stamped per start (not per pass): each once */
    uint32_t *shape_seen, cap_shape_seen, shape_stamp;
    /* the shared GPUs a pass touches: (node, gpu) and the share in use */
    struct policy_host_share *shares;
    uint32_t n_shares, cap_shares;
};

struct policy_host_options {
    const char *extra_params;  /* --policy-params, or NULL */
    uint32_t host_kinds;       /* what the host carries out; 0 = POLICY_KINDS_ALL */
    const char *host_name;     /* for the refusal: "the simulator", "the agent" */
    double decide_timeout_s;   /* 0: POLICY_HOST_DEFAULT_TIMEOUT_S; < 0: none */
};

/* Creates the policy named by spec. Returns 0, or -1 with err set (and h
 * zeroed). opt may be NULL. */
int policy_host_open(struct policy_host *h, const char *spec, const struct policy_host_options *opt,
                     struct err *err);
/* Hosts an instance that was created elsewhere (tests' own policy tables).
 * The host does not destroy it. */
void policy_host_adopt(struct policy_host *h, const struct policy_ops *ops, void *state, const char *label);
/* Destroys the instance (unless it failed) and closes the library; a zeroed
 * h is a no-op. */
void policy_host_close(struct policy_host *h);

/* Sizes out for view as policy.h promises (cap >= n_queued + n_running,
 * cap_allocs >= total slots + n_queued) and empties it. Returns 0 or -1
 * (memory). The buffers are the caller's (realloc'ed). */
int policy_host_size_decisions(struct policy_decisions *out, const struct cluster_view *view);

/* One pass: calls decide() (guarded) and checks what it wrote. Unless OK,
 * err holds the message; after FAILED the instance is not called again. */
enum policy_host_status policy_host_decide(struct policy_host *h, const struct cluster_view *view,
                                           struct policy_decisions *out, struct err *err);
/* Tells the policy an event (guarded). Returns POLICY_HOST_OK, or FAILED
 * with err set. A failed instance is not told. */
enum policy_host_status policy_host_observe(struct policy_host *h, const struct policy_event *ev, struct err *err);

/* The one decision checker. Returns NULL when the decisions keep the
 * contract, else the rule broken, with *bad set to the decision's index,
 * or POLICY_HOST_CHECK_NO_MEMORY (this very pointer) when its scratch could
 * not grow. Pure apart from h's scratch (h may be any host, even an
 * adopted one). */
extern const char POLICY_HOST_CHECK_NO_MEMORY[];
const char *policy_host_check(struct policy_host *h, const struct cluster_view *view,
                              const struct policy_decisions *out, uint32_t *bad);

/* The node-derived parts of a view: nodes_with_free (into with_free, in
 * node order), total_slots and free_slots over the up nodes. */
void policy_host_tally_nodes(struct cluster_view *view, uint32_t *with_free);

/* Running jobs by expected end, the documented tie rule: expected end, then
 * submit time, then id. Inline: the simulator's binary searches over
 * running_by_end call it a dozen times per start and per end. */
static inline int policy_running_end_before(const struct policy_running *a, const struct policy_running *b)
{
    if (a->expected_end_us != b->expected_end_us)
        return a->expected_end_us < b->expected_end_us;
    if (a->job.submit_us != b->job.submit_us)
        return a->job.submit_us < b->job.submit_us;
    return a->job.id < b->job.id;
}
/* Fills by_end[0..n) with the indices of running[] in that order. */
void policy_host_order_by_end(const struct policy_running *running, uint32_t n, uint32_t *by_end);

#endif
