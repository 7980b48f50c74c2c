/* policy.h: THE seam between a scheduling policy and its host.
 *
 * Two hosts run the same policy object code: the simulator (models/simulation)
 * builds the view from its cluster model, and the live agent builds it from
 * NVML or a fake inventory plus its state store. Neither host knows which
 * policy it runs; a policy knows nothing of either host.
 *
 * Contract:
 *  - A policy is a `const struct policy_ops` table. All per-instance state lives
 *    behind the pointer that create() returns; no globals, no I/O, no clock.
 *  - decide() reads a `struct cluster_view`, valid only during the call, and
 *    writes decisions into the caller-owned `struct policy_decisions`. It is a
 *    pure function of (state, view): the same view gives the same decisions,
 *    so a host may call it speculatively and tests can replay recorded views.
 *    State may cache work (scratch buffers, sorted copies) but must not change
 *    what is decided.
 *  - The host checks every decision (the job is queued, the allocation is on
 *    up nodes of a type the job may use, within their free slots, and adds
 *    up to the job's request; a fractional job's share fits its GPU; a
 *    shaped job gets its nodes x slots) and refuses the whole pass if one
 *    is wrong.
 *  - Times are integer microseconds on the host's clock.
 *
 * A user's own policy is a shared object exporting
 *     const struct policy_ops *fleetsim_policy_entry(void);
 * whose abi_version lies in [POLICY_ABI_OLDEST, POLICY_ABI_VERSION].
 */
#ifndef FLEETSIM_POLICIES_POLICY_H
#define FLEETSIM_POLICIES_POLICY_H

#include <stddef.h>
#include <stdint.h>

/* 2: GPU fractions and GPU-model constraints (policy_job.milli and
 * type_mask, policy_alloc.milli and gpu, policy_node.shared_first and
 * n_shared, cluster_view.shared).
 * 3: a job's node shape (policy_job.nodes, in what was 2's padding: the
 * layout is 2's). A plugin built against an earlier version is refused: it
 * would place a shaped job as it pleases and have its passes refused.
 * 4: how the queue changed since the last pass (cluster_view.queue_origin,
 * queue_dirty, n_queue_dirty, queue_tracked, after 3's fields), so a
 * policy may keep per-job state across passes. Only added information: a
 * plugin built against 3 is still loaded (it never reads them). */
#define POLICY_ABI_VERSION 4u
/* The oldest plugin version hosts still load. */
#define POLICY_ABI_OLDEST 3u

enum policy_node_state {
    POLICY_NODE_UP = 0,
    POLICY_NODE_DRAINING = 1, /* running jobs finish; nothing new starts */
    POLICY_NODE_DOWN = 2
};

struct policy_node {
    int32_t type;          /* index of the node type; 0 on a homogeneous cluster */
    int32_t state;         /* enum policy_node_state */
    int32_t total_slots;   /* GPUs (or processors) on the node */
    int32_t free_slots;
    int32_t nvlink_domain; /* -1 when the node has no NVLink domain */
    int32_t leaf;          /* fabric leaf switch, -1 when not modelled */
    int32_t pod;           /* group of leaves under one spine block, -1 when not modelled */
    int32_t reserved;
    /* GPUs shared by fractional jobs: view.shared[shared_first..+n_shared),
     * by ascending gpu. They are not free_slots, whatever is left on them. */
    uint32_t shared_first;
    uint32_t n_shared;
};

/* A GPU that fractional jobs share (ABI 2). A GPU's used share never
 * exceeds 1000 milli; when its last job ends it is a free slot again. */
struct policy_shared_gpu {
    int32_t node;       /* index into view.nodes */
    int32_t gpu;        /* its index on the node, 0 .. total_slots - 1 */
    int32_t used_milli; /* 1 .. 1000 */
    int32_t reserved;
};

/* Thousandths of a GPU: a whole GPU. */
#define POLICY_MILLI_PER_GPU 1000

/* A job as a policy sees it: what the user asked for, never what it will do. */
struct policy_job {
    int64_t id;
    int64_t submit_us;
    int64_t estimate_us; /* requested wall time; hosts always fill it */
    int32_t slots;       /* requested GPUs / processors */
    int32_t user;        /* host's user index, -1 = unknown */
    int32_t team;        /* host's team index, -1 = unknown */
    int32_t priority;    /* QoS / user priority input; 0 = default */
    /* 1: a gap, not a job. The job that stood here has left the queue (it
     * started) and the host has not closed its place yet: a start deep in a
     * queue of tens of thousands would otherwise move every job on one side
     * of it, each pass. Only built-in policies that say they read gaps
     * (policies/registry.h, policy_registry_reads_gaps) are ever shown one;
     * a plugin's view holds none, and the field is 0 there (it was padding
     * before, so the layout is ABI 4's). A gap keeps the id and arrival of
     * the job that left, so the queue stays in arrival order; deciding on it
     * breaks the contract. */
    int32_t gap;
    /* The start the policy promised this job in an earlier pass (its last
     * POLICY_RESERVE), or -1. Hosts keep it, so a policy that honours its
     * promises (conservative backfilling) stays a pure function of the view. */
    int64_t reserved_us;
    /* Service so far, over earlier attempts and the current one: GPU
     * microseconds (slots x time run). Tiresias-style policies rank by it. */
    int64_t attained_us;
    int32_t preemptions; /* times it was preempted so far */
    int32_t job_class;   /* 0 training, 1 fine-tune, 2 inference (POLICY_JOB_CLASSES) */
    /* ABI 2. The node types the job may run on (its GPU-model constraint):
     * bit t for type t; 0 = any node. */
    uint64_t type_mask;
    /* 1..999: the job needs this share of one GPU (slots is 1) and may
     * share that GPU with other fractional jobs; 0: whole GPUs. */
    int32_t milli;
    /* ABI 3. Its shape: 0 = any (slots are pooled: the allocation may
     * split them over nodes as it likes, as HPC logs count processors);
     * n >= 1 = exactly n distinct nodes with slots / n slots on each (a Slurm
     * job `-N n --gres=gpu:G`: slots is n x G). Hosts only pass n that
     * divides slots. */
    int32_t nodes;
};

#define POLICY_JOB_CLASSES 3

struct policy_alloc {
    int32_t node;  /* index into view.nodes */
    int32_t slots; /* > 0 */
    /* ABI 2. 0 for whole GPUs (gpu is then ignored). A fractional job has one
     * allocation of 1 slot with milli = its share, on GPU `gpu` of the node:
     * one of the node's shared GPUs (joining it), or a GPU index that no
     * shared GPU of the node has, which takes one of its free slots and
     * makes it shared (later STARTs of the same pass may join it). A
     * PREEMPT frees its share for the STARTs after it; when that was its
     * GPU's last share, the GPU is a free slot again. */
    int32_t milli;
    int32_t gpu;
};

struct policy_running {
    struct policy_job job;
    int64_t start_us;
    int64_t expected_end_us; /* start + estimate */
    uint32_t alloc_first;    /* into view.allocs */
    uint32_t alloc_count;
};

struct cluster_view {
    int64_t now_us;

    const struct policy_node *nodes;
    uint32_t n_nodes;
    /* Indices of the nodes that are up and have a free slot. The order is
     * deterministic but unspecified: policies that care sort it. */
    const uint32_t *nodes_with_free;
    uint32_t n_nodes_with_free;
    int64_t total_slots; /* on up nodes */
    int64_t free_slots;  /* on up nodes */

    /* Waiting jobs in arrival order (submit time, then arrival sequence);
     * for a policy that reads gaps, entries with gap set lie among them. */
    const struct policy_job *queued;
    uint32_t n_queued;

    /* Running jobs, in unspecified order, and the same jobs by ascending
     * (expected_end_us, submit_us, id) as indices into running[]: every
     * host orders them with models/policy_host.h's one rule. */
    const struct policy_running *running;
    const uint32_t *running_by_end;
    uint32_t n_running;
    const struct policy_alloc *allocs;

    /* Relative speed of each node type for each job class (1 = the reference
     * hardware): type_speed[type * POLICY_JOB_CLASSES + class]. NULL when the
     * host has no node types (every node runs at 1). */
    const double *type_speed;
    uint32_t n_types;

    /* ABI 2: the GPUs fractional jobs share, grouped by node (see
     * policy_node.shared_first); NULL / 0 when none is shared. */
    const struct policy_shared_gpu *shared;
    uint32_t n_shared;

    /* ABI 4: how the queue changed since this policy's previous decide(),
     * so a policy can keep what it learnt of each waiting job instead of
     * reading the whole queue every pass. queued[i] lies at coordinate
     * queue_origin + i of the host's queue. When queue_tracked is 1, an
     * entry whose coordinate lies in no range [queue_dirty[2k],
     * queue_dirty[2k + 1]) holds the same job with the same fields (all
     * but reserved_us, which follows the policy's RESERVEs) as that
     * coordinate held in the previous call's view; entries new to the
     * queue always lie in a range. Ranges may overlap, may reach past
     * either end of the queue, and may name coordinates the queue no
     * longer holds: what lies outside [queue_origin, queue_origin +
     * n_queued) is simply not queued any more. Coordinates have no fixed
     * bound (size what you keep from queue_origin + n_queued); queue_dirty
     * may be NULL when n_queue_dirty is 0. A host that says 1 has also
     * carried out every decision of the previous call (its starts left
     * the queue, its RESERVEs are in reserved_us): one that refused a
     * pass says 0 at the next. When queue_tracked is 0 (the
     * first pass, a host that does not track, one that moved its queue
     * in memory or refused a pass), nothing is promised. The record covers the time since
     * the previous call, so a policy that keeps state reads it on every
     * call, including those where it decides nothing. */
    uint64_t queue_origin;
    const uint64_t *queue_dirty;
    uint32_t n_queue_dirty;
    int32_t queue_tracked;

    /* How many entries of queued[] are gaps (policy_job.gap): the jobs
     * waiting are n_queued - n_queue_gaps. 0 in every view a plugin sees. */
    uint32_t n_queue_gaps;
};

/* Whether a job may run on a node of type t (its GPU-model constraint). */
static inline int policy_job_may_use(const struct policy_job *j, int32_t t)
{
    return j->type_mask == 0 || (t >= 0 && t < 64 && (j->type_mask >> t & 1u));
}

enum policy_decision_kind {
    POLICY_START = 1,   /* start queued[job_index] on allocs[alloc_first..+alloc_count] */
    POLICY_PREEMPT = 2, /* stop running[job_index] and requeue it: it keeps its place in
                         * arrival order and loses the work since its last checkpoint;
                         * its slots are free for the STARTs after it in the same pass */
    POLICY_RESERVE = 3  /* informational: queued[job_index] is planned to start at at_us; the
                         * host keeps the last one in reserved_us, so a promise that holds
                         * need not be repeated (conservative says only what changed) */
};

/* Decision kinds as bits: what a policy may emit, what a host carries out. */
#define POLICY_KINDS_START (1u << POLICY_START)
#define POLICY_KINDS_PREEMPT (1u << POLICY_PREEMPT)
#define POLICY_KINDS_RESERVE (1u << POLICY_RESERVE)
#define POLICY_KINDS_ALL (POLICY_KINDS_START | POLICY_KINDS_PREEMPT | POLICY_KINDS_RESERVE)

struct policy_decision {
    int32_t kind;
    uint32_t job_index;
    int64_t job_id;
    int64_t at_us;
    uint32_t alloc_first;
    uint32_t alloc_count;
};

/* Caller-owned output. The host sizes it so that any sane pass fits:
 * cap >= n_queued + n_running and cap_allocs >= total slots + n_queued. */
struct policy_decisions {
    struct policy_decision *items;
    uint32_t n, cap;
    struct policy_alloc *allocs;
    uint32_t n_allocs, cap_allocs;
};

enum policy_event_kind {
    POLICY_EVENT_STARTED = 1,
    POLICY_EVENT_FINISHED = 2,
    POLICY_EVENT_PREEMPTED = 3,
    POLICY_EVENT_FAILED = 4
};

struct policy_event {
    int32_t kind;
    int64_t now_us;
    const struct policy_job *job;
    int64_t ran_us; /* for FINISHED / PREEMPTED / FAILED */
};

struct policy_ops {
    uint32_t abi_version; /* POLICY_ABI_VERSION */
    const char *name;
    const char *summary;
    /* params: the policy's own parameter string (may be NULL or ""). On error
     * returns non-zero and writes a message into err. */
    int (*create)(const char *params, void **state, char *err, size_t err_len);
    void (*destroy)(void *state);
    /* Returns 0, or non-zero if out is too small or the state is unusable. */
    int (*decide)(void *state, const struct cluster_view *view, struct policy_decisions *out);
    /* Optional (may be NULL): told what happened, e.g. for usage accounting.
     * Anything it learns must also be derivable by a host that replays. */
    void (*observe)(void *state, const struct policy_event *ev);
};

typedef const struct policy_ops *(*policy_entry_fn)(void);
#define POLICY_ENTRY_SYMBOL "fleetsim_policy_entry"

/* One row of a policy's parameter table: what `fleetsim policy describe`
 * prints and what create() accepts in its params string
 * ("name=value,name=value"). Names carry their unit (half_life_s). A
 * built-in lists its rows in the registry (policies/registry.h); a plugin may
 * export `const struct policy_param *fleetsim_policy_params(size_t *n)` for
 * the same purpose. policy_ops itself is unchanged, so plugins built before
 * this struct existed still load. */
struct policy_param {
    const char *name;
    const char *type;          /* "number", "integer", "0|1", "list T:V;T:V", ... */
    const char *default_value; /* as text, as the user would write it */
    const char *summary;
};

typedef const struct policy_param *(*policy_params_fn)(size_t *n);
#define POLICY_PARAMS_SYMBOL "fleetsim_policy_params"

/* A plugin may also export
 *     uint32_t fleetsim_policy_decision_kinds(void *state);
 * returning the POLICY_KINDS_* bits its instance may emit (all when absent),
 * so that a host that cannot carry out a kind (a backend without
 * preemption) refuses it when it is created rather than mid-run. */
typedef uint32_t (*policy_kinds_fn)(void *state);
#define POLICY_KINDS_SYMBOL "fleetsim_policy_decision_kinds"

#endif
