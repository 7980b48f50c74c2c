#include "policies/backfill.h"

#include <stdlib.h>
#include <string.h>

#include "policies/merge_sort.h"

static const char *const backfill_names[] = {
    [BACKFILL_NONE] = "none",
    [BACKFILL_EASY] = "easy",
    [BACKFILL_CONSERVATIVE] = "conservative",
    [BACKFILL_GREEDY] = "greedy",
};

int backfill_parse(const char *name, size_t len, enum backfill_mode *mode)
{
    for (size_t k = 0; k < sizeof backfill_names / sizeof *backfill_names; k++) {
        if (strlen(backfill_names[k]) == len && strncmp(backfill_names[k], name, len) == 0) {
            *mode = (enum backfill_mode)k;
            return 0;
        }
    }
    return -1;
}

const char *backfill_name(enum backfill_mode mode)
{
    return backfill_names[mode];
}

static int emit(struct policy_decisions *out, int32_t kind, uint32_t index, const struct policy_job *job,
                int64_t at_us, uint32_t first, uint32_t count)
{
    if (out->n >= out->cap)
        return -1;
    out->items[out->n++] = (struct policy_decision){kind, index, job->id, at_us, first, count};
    return 0;
}

/* Appends a job started in this pass; EASY's shadow walk sorts them by
 * end (run_easy). Returns 0 or -1 (memory). */
static int remember_start(struct backfill_pass *pass, int64_t end, int32_t slots, uint32_t first, uint32_t count)
{
    if (pass->n_started == pass->cap_started) {
        uint32_t cap = pass->cap_started ? pass->cap_started * 2 : 64;
        struct backfill_started *st = realloc(pass->started, cap * sizeof *st);
        if (!st)
            return -1;
        pass->started = st;
        struct backfill_started *scratch = realloc(pass->started_scratch, cap * sizeof *scratch);
        if (!scratch)
            return -1;
        pass->started_scratch = scratch;
        pass->cap_started = cap;
    }
    pass->started[pass->n_started++] = (struct backfill_started){end, slots, first, count};
    return 0;
}

/* The jobs started in a pass by expected end, ties in the order they
 * started (stable). */
#define STARTED_BEFORE(x, y) ((x)->end < (y)->end)
MERGE_SORT_DEFINE(sort_started, struct backfill_started, STARTED_BEFORE)

/* The free slots a job would take now: none for a fractional job that can
 * join a shared GPU (so it delays no reservation, which count whole slots). */
static int32_t slots_taken(const struct backfill_pass *pass, const struct policy_job *job)
{
    /* the test for whole-GPU jobs first: EASY asks it of every job in a
     * deep queue, every pass */
    if (job->milli == 0)
        return job->slots;
    return placement_can_join(pass->placement, pass->view, job) ? 0 : job->slots;
}

/* Starts queued[qi] now; returns 0, 1 if it does not fit, -1 on overflow. */
static int start_now(struct backfill_pass *pass, uint32_t qi, int64_t *free_now)
{
    const struct policy_job *job = &pass->view->queued[qi];
    if (job->slots > *free_now && job->milli == 0)
        return 1; /* a fractional job may join a shared GPU: placement tells */
    if (pass->skip_running) {
        /* Slots freed by preemption are beyond what the host sized the
         * allocation buffer for (free slots + queued jobs): start only what
         * surely fits in it (a job takes at most one allocation per node). */
        const struct policy_decisions *o = pass->out;
        uint32_t worst = (uint32_t)job->slots < pass->view->n_nodes ? (uint32_t)job->slots : pass->view->n_nodes;
        if (o->cap_allocs - o->n_allocs < worst)
            return 1;
    }
    uint32_t first, count;
    int64_t pool_before = placement_pool(pass->placement, pass->view);
    int rc = placement_place(pass->placement, pass->view, job, pass->out, &first, &count);
    if (rc != 0)
        return rc;
    if (emit(pass->out, POLICY_START, qi, job, pass->view->now_us, first, count) != 0)
        return -1;
    /* the free slots it took: a fractional job takes one only when it opens a GPU */
    *free_now -= job->milli == 0 ? job->slots : pool_before - placement_pool(pass->placement, pass->view);
    if (pass->hooks && pass->hooks->started)
        pass->hooks->started(pass->hooks->ctx, job);
    return remember_start(pass, pass->view->now_us + queue_job_duration(job), job->slots, first, count);
}

static int admitted(const struct backfill_pass *pass, uint32_t qi)
{
    return !pass->hooks || !pass->hooks->admit || pass->hooks->admit(pass->hooks->ctx, &pass->view->queued[qi]);
}

/* start_now, and when the job does not fit, preemption's try at making room. */
static int start_or_preempt(struct backfill_pass *pass, uint32_t qi, int64_t *free_now)
{
    int rc = start_now(pass, qi, free_now);
    if (rc != 1 || !pass->hooks || !pass->hooks->make_room)
        return rc;
    int room = pass->hooks->make_room(pass->hooks->ctx, pass, qi, free_now);
    if (room != 0)
        return room;
    return start_now(pass, qi, free_now);
}

/* Starts jobs in order while they fit; *head is the position of the first
 * that does not (n_queued if all started). Jobs held back by the hooks are
 * skipped. */
static int run_none(struct backfill_pass *pass, int64_t *free_now, uint32_t *head)
{
    const struct cluster_view *v = pass->view;
    for (uint32_t k = 0; k < v->n_queued; k++) {
        if (v->queued[pass->order[k]].gap || !admitted(pass, pass->order[k]))
            continue;
        int rc = start_or_preempt(pass, pass->order[k], free_now);
        if (rc < 0)
            return -1;
        if (rc == 1) {
            *head = k;
            return 0;
        }
    }
    *head = v->n_queued;
    return 0;
}

static int run_greedy(struct backfill_pass *pass, int64_t free_now)
{
    const struct cluster_view *v = pass->view;
    for (uint32_t k = 0; k < v->n_queued; k++) {
        if (!admitted(pass, pass->order[k]))
            continue;
        if (start_or_preempt(pass, pass->order[k], &free_now) < 0)
            return -1;
    }
    return 0;
}

/* Shadow time and extra slots for a job of `need` slots, the textbook way:
 * walk the running jobs (and those started earlier in this pass) by expected
 * end until enough slots are free; that end is the shadow time, and the extra
 * slots are all those free then (every job whose expected end is at or
 * before it counts, not only the one that tipped the balance) minus `need`.
 * A job past its expected end still holds its slots: its release is "as soon
 * as possible", so its end counts as now, never earlier. */
struct shadow_walk {
    const struct backfill_pass *pass;
    uint32_t a, b;    /* next running job (by end), next job started this pass */
    int from_running; /* where the job shadow_next found comes from */
};

/* The next job to free its slots, by expected end: 1 with its end (never
 * before now) and its slots, or 0 when none is left. shadow_take moves past
 * it. */
static int shadow_next(struct shadow_walk *w, int64_t *end, int32_t *slots)
{
    const struct backfill_pass *pass = w->pass;
    const struct cluster_view *v = pass->view;
    while (w->a < v->n_running && pass->skip_running && pass->skip_running[v->running_by_end[w->a]])
        w->a++; /* preempted this pass: its slots are already in free_now */
    int have_a = w->a < v->n_running, have_b = w->b < pass->n_started;
    if (!have_a && !have_b)
        return 0;
    const struct policy_running *r = have_a ? &v->running[v->running_by_end[w->a]] : NULL;
    const struct backfill_started *st = have_b ? &pass->started[w->b] : NULL;
    w->from_running = have_a && (!have_b || r->expected_end_us <= st->end);
    if (w->from_running) {
        *end = r->expected_end_us > v->now_us ? r->expected_end_us : v->now_us;
        *slots = r->job.slots;
    } else {
        *end = st->end;
        *slots = st->slots;
    }
    return 1;
}

static void shadow_take(struct shadow_walk *w)
{
    if (w->from_running)
        w->a++;
    else
        w->b++;
}

/* The slots of running job r on the nodes head may use (its GPU-model
 * types); a share of a GPU counts as the GPU it frees in the end. */
static int32_t slots_of_types(const struct cluster_view *v, const struct policy_running *r,
                              const struct policy_job *head)
{
    int32_t n = 0;
    for (uint32_t a = 0; a < r->alloc_count; a++) {
        const struct policy_alloc *al = &v->allocs[r->alloc_first + a];
        if (al->node >= 0 && (uint32_t)al->node < v->n_nodes && policy_job_may_use(head, v->nodes[al->node].type))
            n += al->slots;
    }
    return n;
}

static void easy_shadow(struct backfill_pass *pass, int64_t free_now, const struct policy_job *head,
                        int64_t *shadow, int64_t *extra)
{
    struct shadow_walk w = {pass, 0, 0, 0};
    int32_t need = head->slots;
    int64_t end;
    int32_t slots;
    /* a head held to GPU models waits for slots of those types: what is free
     * of them, and what the running jobs hold on them */
    int64_t avail = head->type_mask ? placement_pool_for(pass->placement, pass->view, head) : free_now;
    *shadow = pass->view->now_us;
    /* until the head fits, then every job ending at that same instant */
    while (shadow_next(&w, &end, &slots) && (avail < need || end <= *shadow)) {
        if (head->type_mask && w.from_running)
            slots = slots_of_types(pass->view, &pass->view->running[pass->view->running_by_end[w.a]], head);
        avail += slots;
        *shadow = end;
        shadow_take(&w);
    }
    *extra = avail - need;
}

/* A shaped head (n nodes x per slots): the shadow is the first expected end
 * at which n nodes of its types each have per slots free (then every job
 * ending at that same instant), walking the running jobs and those started
 * earlier in this pass node by node. The n lowest-index such nodes are kept
 * for it (pass->node_kept); 1 when no instant gives it n nodes (nothing is
 * kept then: the caller lets no job outlast the shadow), 0, or -1 (memory). */
static int easy_shadow_shaped(struct backfill_pass *pass, const struct policy_job *head, int64_t *shadow)
{
    const struct cluster_view *v = pass->view;
    if (v->n_nodes > pass->cap_nodes) {
        int32_t *nf = realloc(pass->node_free, v->n_nodes * sizeof *nf);
        if (!nf)
            return -1;
        pass->node_free = nf;
        uint8_t *kept = realloc(pass->node_kept, v->n_nodes);
        if (!kept)
            return -1;
        pass->node_kept = kept;
        pass->cap_nodes = v->n_nodes;
    }
    int32_t n = head->nodes, per = head->slots / head->nodes;
    struct placement *pl = pass->placement;
    pl->job_types = head->type_mask;
    int32_t holding = 0;
    for (uint32_t i = 0; i < v->n_nodes; i++) {
        pass->node_free[i] = placement_free(pl, v, i); /* 0 on nodes it may not use or that are not up */
        pass->node_kept[i] = 0;
        holding += pass->node_free[i] >= per;
    }
    pl->job_types = 0;
    struct shadow_walk w = {pass, 0, 0, 0};
    int64_t end;
    int32_t slots;
    *shadow = v->now_us;
    /* until it has its n nodes, then every job ending at that same instant */
    while (shadow_next(&w, &end, &slots) && (holding < n || end <= *shadow)) {
        const struct policy_alloc *al;
        uint32_t count;
        if (w.from_running) {
            const struct policy_running *r = &v->running[v->running_by_end[w.a]];
            al = &v->allocs[r->alloc_first];
            count = r->alloc_count;
        } else {
            al = &pass->out->allocs[pass->started[w.b].first];
            count = pass->started[w.b].count;
        }
        for (uint32_t a = 0; a < count; a++) {
            int32_t node = al[a].node;
            if (node < 0 || (uint32_t)node >= v->n_nodes || v->nodes[node].state != POLICY_NODE_UP ||
                !policy_job_may_use(head, v->nodes[node].type))
                continue;
            if (al[a].milli > 0)
                continue; /* a share frees its GPU only with the last one, which this walk does not follow */
            int was = pass->node_free[node] >= per;
            pass->node_free[node] += al[a].slots;
            holding += !was && pass->node_free[node] >= per;
        }
        *shadow = end;
        shadow_take(&w);
    }
    if (holding < n)
        return 1;
    for (uint32_t i = 0; i < v->n_nodes && n > 0; i++)
        if (pass->node_free[i] >= per) {
            pass->node_kept[i] = 1;
            n--;
        }
    return 0;
}

static int run_easy(struct backfill_pass *pass, int64_t free_now)
{
    const struct cluster_view *v = pass->view;
    uint32_t head;
    if (run_none(pass, &free_now, &head) != 0)
        return -1;
    if (head >= v->n_queued)
        return 0;

    const struct policy_job *hj = &v->queued[pass->order[head]];
    int64_t shadow, extra;
    /* the shadow walk reads the starts by end: sorted once, here, rather
     * than kept in order as they start (a conservative or F1 pass starting
     * a thousand jobs spent a sixth of its time moving them one by one) */
    sort_started(pass->started, pass->n_started, pass->started_scratch);
    int shaped = hj->nodes > 0 && hj->milli == 0;
    if (shaped) {
        int rc = easy_shadow_shaped(pass, hj, &shadow);
        if (rc < 0)
            return -1;
        /* its nodes are kept from what outlasts the shadow; none can, if
         * no instant ahead gives it its shape */
        extra = rc == 0 ? INT64_MAX : -1;
    } else {
        easy_shadow(pass, free_now, hj, &shadow, &extra);
    }
    if (emit(pass->out, POLICY_RESERVE, pass->order[head], hj, shadow, 0, 0) != 0)
        return -1;

    /* ends_in_time below is now + duration <= shadow */
    int64_t window = shadow == INT64_MAX ? INT64_MAX : shadow - v->now_us;
    for (uint32_t k = head + 1; k < v->n_queued && (free_now > 0 || v->n_shared > 0); k++) {
        if (pass->index) {
            /* past the jobs the tests below would skip, with what is free now */
            k = queue_index_next(pass->index, v, k, free_now, extra, window);
            if (k >= v->n_queued)
                break;
        }
        uint32_t qi = pass->order[k];
        const struct policy_job *job = &v->queued[qi]; /* never a gap: only indexed walks read gaps */
        int32_t takes = slots_taken(pass, job);
        if (takes > free_now || !admitted(pass, qi))
            continue;
        int ends_in_time = v->now_us + queue_job_duration(job) <= shadow;
        if (!ends_in_time && takes > extra)
            continue;
        if (shaped && !ends_in_time)
            pass->placement->avoid = pass->node_kept;
        int rc = start_now(pass, qi, &free_now);
        pass->placement->avoid = NULL;
        if (rc < 0)
            return -1;
        if (rc == 0 && !ends_in_time && !shaped)
            extra -= takes;
    }
    return 0;
}

struct reserve_order {
    int64_t promised; /* INT64_MAX for jobs without a reservation yet */
    uint32_t rank;    /* position in the priority order */
    uint32_t queue_index;
};

/* By promise, then priority: a total order (ranks differ), so any sort
 * gives the same. */
static int reserve_goes_first(const struct reserve_order *a, const struct reserve_order *b)
{
    return a->promised < b->promised || (a->promised == b->promised && a->rank < b->rank);
}

/* qsort, and its comparison through a pointer, was 7.5% of a
 * wfp3+conservative replay of HPC2N, whose priorities change from one
 * pass to the next */
MERGE_SORT_DEFINE(sort_placing, struct reserve_order, reserve_goes_first)

/* How many jobs ahead conservative_order and a rebuild ask for a job's
 * record: the order's loop reads two fields a job, a rebuild searches the
 * profile for each (a few hundred ns), so the first needs the longer lead. */
enum { PREFETCH_AHEAD_ORDER = 32, PREFETCH_AHEAD_PLACING = 8 };

/* Reserved jobs by promised start, then newcomers by priority. */
static int conservative_order(struct backfill_pass *pass)
{
    const struct cluster_view *v = pass->view;
    if (v->n_queued > pass->cap_placing) {
        uint32_t cap = pass->cap_placing ? pass->cap_placing : 256;
        while (cap < v->n_queued)
            cap *= 2;
        struct reserve_order *p = realloc(pass->placing, cap * sizeof *p);
        if (!p)
            return -1;
        pass->placing = p;
        p = realloc(pass->placing_scratch, cap * sizeof *p);
        if (!p)
            return -1;
        pass->placing_scratch = p;
        pass->cap_placing = cap;
    }
    uint32_t n = 0;
    for (uint32_t k = 0; k < v->n_queued; k++) {
        uint32_t qi = pass->order[k];
        /* in priority order the jobs lie anywhere in a queue larger than
         * the caches: asked for ahead of need (here and in the rebuild:
         * sjf+conservative's cold pass over 10,000, medians of 61 passes
         * in five alternated runs, 4.12 -> 3.74 ms) */
        if (k + PREFETCH_AHEAD_ORDER < v->n_queued)
            __builtin_prefetch(&v->queued[pass->order[k + PREFETCH_AHEAD_ORDER]]);
        if (v->queued[qi].gap)
            continue; /* a job gone (policy.h) */
        int64_t promised = v->queued[qi].reserved_us;
        pass->placing[n++] = (struct reserve_order){promised >= 0 ? promised : INT64_MAX, k, qi};
    }
    pass->n_placing = n;
    /* often in order already (no reservations yet, or promises that follow
     * the priority order): a look costs less than the sort */
    for (uint32_t k = 1; k < n; k++)
        if (reserve_goes_first(&pass->placing[k], &pass->placing[k - 1])) {
            sort_placing(pass->placing, n, pass->placing_scratch);
            break;
        }
    return 0;
}

/* Once job qi's start is known: starts it now or tells its promise.
 * Returns 0 (told), 1 (started), 2 (placement refused to start it), -1. */
static int conservative_settle(struct backfill_pass *pass, uint32_t qi, int64_t at, int64_t *free_now)
{
    const struct cluster_view *v = pass->view;
    const struct policy_job *job = &v->queued[qi];
    if (at == v->now_us) {
        int rc = start_now(pass, qi, free_now);
        if (rc == 1) {
            /* its reservation stays in the profile, as in any pass, but no
             * promise in the view will say so */
            promises_spoil(pass->promises);
            return 2;
        }
        if (rc < 0 || promises_started(pass->promises, at + queue_job_duration(job), job->slots,
                                       v->queue_origin + qi) != 0)
            return -1;
        return 1;
    }
    /* the host keeps the last promise in reserved_us (policy.h): told again
     * only when it changes, a pass over a deep queue whose promises all
     * hold says nothing of them */
    if (job->reserved_us == at)
        return 0;
    return emit(pass->out, POLICY_RESERVE, qi, job, at, 0, 0) != 0 ? -1 : 0;
}

/* Places job qi (no promise, or a rebuild) at the earliest start the
 * profile has for it. */
static int conservative_place(struct backfill_pass *pass, uint32_t qi, int64_t *free_now)
{
    const struct policy_job *job = &pass->view->queued[qi];
    int64_t dur = queue_job_duration(job);
    int64_t at = profile_earliest(pass->profile, job->slots, dur);
    if (at == INT64_MAX) {
        promises_unplaced(pass->promises);
        return 0;
    }
    if (profile_reserve(pass->profile, at, dur, job->slots) != 0)
        return -1;
    int rc = conservative_settle(pass, qi, at, free_now);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    struct promise p = {job->id, at, dur, job->slots, pass->view->queue_origin + qi, PROMISE_HELD, job->estimate_us,
                        job->submit_us};
    return promises_new(pass->promises, &p);
}

/* The pass from scratch: the base from the running jobs, then every job
 * in order of its promise (newcomers last, by priority). */
static int conservative_rebuild(struct backfill_pass *pass, int64_t *free_now)
{
    const struct cluster_view *v = pass->view;
    struct profile *pr = pass->profile;
    if (profile_reset(pr, v->now_us, *free_now) != 0 || conservative_order(pass) != 0)
        return -1;
    struct promises *pm = pass->promises;
    if (promises_read_base(pm, v) != 0) /* promises_end records it: read once */
        return -1;
    for (uint32_t a = 0; a < pm->n_base; a++)
        if (profile_add_release(pr, pm->base[a].at_us, pm->base[a].slots) != 0)
            return -1;
    for (uint32_t k = 0; k < pass->n_placing; k++) {
        uint32_t qi = pass->placing[k].queue_index;
        if (k + PREFETCH_AHEAD_PLACING < pass->n_placing)
            __builtin_prefetch(&v->queued[pass->placing[k + PREFETCH_AHEAD_PLACING].queue_index]);
        const struct policy_job *job = &v->queued[qi];
        if (job->slots > v->total_slots || !admitted(pass, qi))
            continue; /* can never run here (the host reports it), or held back */
        if (slots_taken(pass, job) == 0) {
            /* joins a shared GPU: takes no slot any reservation counts on */
            promises_spoil(pass->promises);
            if (start_now(pass, qi, free_now) < 0)
                return -1;
            continue;
        }
        if (conservative_place(pass, qi, free_now) != 0)
            return -1;
    }
    return 0;
}

/* The pass from the profile kept (policies/promises.h): the held promises
 * in order, each moving if the profile has room for it before its
 * promise and starting if due, stepping over each block of them none of
 * which may move (nothing there is due: the first is later than now);
 * then the newcomers, placed as in a rebuild. */
static int conservative_resume(struct backfill_pass *pass, int64_t *free_now)
{
    const struct cluster_view *v = pass->view;
    struct promises *pm = pass->promises;
    struct profile *pr = pass->profile;
    const struct promise_order *order = &pm->order;
    for (uint32_t b = 0; b < order->n_blocks; b++) {
        const struct promise_order_block *blk = &order->block[b];
        if (blk->first_at > v->now_us && pm->gain_from != INT64_MAX && !promises_block_may_move(pm, blk)) {
            promises_step_over(pm, b);
            continue;
        }
        const uint32_t *items = promise_order_items(order, b);
        for (uint32_t i = 0; i < blk->n; i++) {
            struct promise_order_place at = {b, i};
            const struct promise *p = &pm->rec[items[i]];
            /* Nothing gained (a pass for arrivals, or ends on their
             * estimate): no promise moves (gains come only from moves,
             * which need gains), and past those due now every one holds
             * and was told: resume refused any view whose reserved_us is
             * not its recorded promise. The rest of the walk would decide
             * nothing. */
            if (p->at_us > v->now_us && pm->gain_from == INT64_MAX)
                goto newcomers;
            int64_t t = INT64_MAX, from, to;
            if (p->at_us > v->now_us && promises_may_move(pm, p, &from, &to))
                t = profile_earliest_before(pr, p->slots, p->dur_us, from, to, p->at_us);
            if (t != INT64_MAX && promises_move(pm, pr, at, t) != 0)
                return -1;
            promises_settled(pm, p);
            if (t == INT64_MAX && p->at_us > v->now_us)
                continue; /* held, not due: the view says it already (resume checked reserved_us, or the
                             host's record of the queue vouches for it: policy.h, queue_tracked) */
            int rc = conservative_settle(pass, (uint32_t)(p->coord - v->queue_origin), p->at_us, free_now);
            if (rc < 0 || (rc == 1 && promises_gone(pm, at) != 0))
                return -1;
        }
    }
newcomers:
    for (uint32_t k = 0; k < pm->n_newcomers; k++)
        if (conservative_place(pass, pm->newcomers[k], free_now) != 0)
            return -1;
    return 0;
}

static int run_conservative(struct backfill_pass *pass, int64_t free_now)
{
    struct promises *pm = pass->promises;
    promises_begin(pm, pass->view);
    /* the kept profile serves only passes in an order that never changes
     * between passes and that admit every job (a quota's admission changes
     * within a pass) */
    int keeps = pass->fixed_order && !pass->hooks;
    int kept = keeps ? promises_resume(pm, pass->view, pass->profile, pass->arrival_order ? NULL : pass->order) : 0;
    if (kept < 0)
        return -1;
    int rc = kept ? conservative_resume(pass, &free_now) : conservative_rebuild(pass, &free_now);
    if (rc != 0) {
        promises_spoil(pm);
        return -1;
    }
    return promises_end(pm, pass->view, free_now, keeps);
}

void backfill_pass_release(struct backfill_pass *pass)
{
    free(pass->started);
    free(pass->started_scratch);
    free(pass->node_free);
    free(pass->node_kept);
    free(pass->placing);
    free(pass->placing_scratch);
}

int backfill_run(enum backfill_mode mode, struct backfill_pass *pass)
{
    pass->n_started = 0;
    if (placement_begin(pass->placement, pass->view) != 0)
        return -1;
    int64_t free_now = pass->view->free_slots;
    switch (mode) {
    case BACKFILL_NONE: {
        uint32_t head;
        return run_none(pass, &free_now, &head);
    }
    case BACKFILL_EASY:
        return run_easy(pass, free_now);
    case BACKFILL_CONSERVATIVE:
        return run_conservative(pass, free_now);
    case BACKFILL_GREEDY:
        return run_greedy(pass, free_now);
    }
    return -1;
}
