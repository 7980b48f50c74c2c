#include "policies/queue_policy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfill.h"
#include "policies/kept_order.h"
#include "policies/multifactor.h"
#include "policies/ordering.h"
#include "policies/params.h"
#include "policies/preempt.h"
#include "policies/quota.h"
#include "policies/registry.h"
#include "policies/srtf.h"
#include "policies/tiresias.h"

enum rank_kind { RANK_CLASSIC, RANK_MULTIFACTOR, RANK_TIRESIAS, RANK_SRTF };

struct queue_policy {
    enum rank_kind rank;
    enum ordering_kind ordering; /* RANK_CLASSIC */
    enum backfill_mode mode;
    struct multifactor *mf;
    struct tiresias tiresias;
    struct srtf srtf;
    struct quota *quota;
    int preempting;
    struct preempt preempt;
    struct backfill_hooks hooks;

    struct ordering_key *keys, *keys_scratch;
    uint32_t *order;
    uint32_t cap;
    double *tier_running;
    uint32_t cap_running;
    uint32_t identity_len; /* FCFS: order[0..identity_len) == 0, 1, 2, ... */
    struct placement placement;
    struct profile profile;
    struct promises promises;
    struct queue_index index; /* EASY under FCFS only (indexed) */
    int indexed;
    /* an order whose keys never change while a job waits (keeps_order;
     * a classic FCFS's is the queue's own) */
    struct kept_order kept;
    int keeps_order;
    struct backfill_pass pass;
};

static void queue_policy_destroy(void *state);

/* Ranked by the ordering alone, with no quota or preemption hooks. */
static int classic(const struct queue_policy *q)
{
    return q->rank == RANK_CLASSIC && !q->quota && !q->preempting;
}

/* ---- a waiting job's key and tier ---- */

/* The key of a waiting job in the pass's order; never asked under
 * multifactor, whose keys multifactor_keys gives for the whole queue
 * every pass (rank_queued; keeps_order is 0 for it). */
static struct ordering_key queued_key(const void *ctx, const struct policy_job *job, int64_t now_us, uint32_t index)
{
    const struct queue_policy *q = ctx;
    switch (q->rank) {
    case RANK_TIRESIAS:
        return tiresias_key(&q->tiresias, job, now_us, index);
    case RANK_SRTF:
        return srtf_key(job, index);
    case RANK_CLASSIC:
    case RANK_MULTIFACTOR:
        break;
    }
    return ordering_key_of(q->ordering, job, now_us, 0, index);
}

/* When a waiting job's key next changes with time alone, or INT64_MAX
 * (policies/kept_order.h): given to the kept order only under Tiresias
 * with its starvation rule, the one order whose keys so change. */
static int64_t queued_key_changes(const void *ctx, const struct policy_job *job, int64_t now_us)
{
    const struct queue_policy *q = ctx;
    return tiresias_key_changes(&q->tiresias, job, now_us);
}

/* The tier of a waiting job (policies/preempt.h), asked when a pass would
 * preempt for it: a pass that keeps its order reads only the jobs the
 * host's record names, so it fills no array of every job's tier. */
static double queued_tier(const struct queue_policy *q, const struct cluster_view *v, const struct policy_job *job)
{
    switch (q->rank) {
    case RANK_TIRESIAS:
        return -tiresias_key(&q->tiresias, job, v->now_us, 0).primary; /* its queue: lower goes first */
    case RANK_SRTF:
        return srtf_tier(job, (double)job->attained_us);
    case RANK_CLASSIC:
    case RANK_MULTIFACTOR:
        break;
    }
    return preempt_tier_of(&q->preempt, job);
}

/* ---- the hooks the pass calls ---- */

static int hook_admit(void *ctx, const struct policy_job *job)
{
    struct queue_policy *q = ctx;
    return !q->quota || quota_admit(q->quota, job);
}

static void hook_started(void *ctx, const struct policy_job *job)
{
    struct queue_policy *q = ctx;
    if (q->quota)
        quota_started(q->quota, job);
}

static int hook_may_take(void *ctx, const struct policy_job *job)
{
    struct queue_policy *q = ctx;
    return !q->quota || quota_over(q->quota, job->team);
}

static void hook_account(void *ctx, const struct policy_job *job, int sign)
{
    struct queue_policy *q = ctx;
    if (!q->quota)
        return;
    if (sign < 0)
        quota_stopped(q->quota, job);
    else
        quota_started(q->quota, job);
}

static int hook_make_room(void *ctx, struct backfill_pass *pass, uint32_t qi, int64_t *free_now)
{
    struct queue_policy *q = ctx;
    /* under a quota, reclaiming is for a job that fits its quota now, whose tier is 1 */
    if (q->quota && (!quota_reclaims(q->quota) || !quota_fits(q->quota, &pass->view->queued[qi])))
        return 1;
    double tier = q->quota ? 1 : queued_tier(q, pass->view, &pass->view->queued[qi]);
    return preempt_make_room(&q->preempt, pass, qi, tier, free_now, hook_may_take, hook_account, q);
}

/* ---- create: the spec's components ---- */

static int component_params(const struct policy_component *c, const struct spec_part *part, struct params *p,
                            char *err, size_t err_len)
{
    return params_parse(p, c->name, c->params, c->n_params ? *c->n_params : 0, part->params, part->params_len, err,
                        err_len);
}

static int unknown_component(const char *spec, const struct spec_part *part, int first, char *err, size_t err_len)
{
    char names[512];
    if (first) {
        policy_registry_names(POLICY_COMPONENT_ORDERING, names, sizeof names);
        snprintf(err, err_len, "unknown ordering '%.*s' in policy '%s' (orderings: %s)", (int)part->name_len,
                 part->name, spec, names);
        return -1;
    }
    char fills[256], places[256];
    policy_registry_names(POLICY_COMPONENT_BACKFILL, fills, sizeof fills);
    policy_registry_names(POLICY_COMPONENT_PLACEMENT, places, sizeof places);
    const char *all[64];
    size_t n = 0;
    for (size_t i = 0; i < policy_registry_component_count() && n < 64; i++)
        if (policy_registry_component_at(i)->kind != POLICY_COMPONENT_ORDERING)
            all[n++] = policy_registry_component_at(i)->name;
    const char *near = part->name_len == 8 && strncmp(part->name, "backfill", 8) == 0
                           ? "easy"
                           : params_nearest(part->name, part->name_len, all, n);
    char hint[64] = "";
    if (near)
        snprintf(hint, sizeof hint, "; did you mean '%s'?", near);
    snprintf(err, err_len,
             "unknown backfilling '%.*s' in policy '%s' (backfilling: %s; placement: %s; also preempt, quota)%s",
             (int)part->name_len, part->name, spec, fills, places, hint);
    return -1;
}

static int set_ordering(struct queue_policy *q, const struct policy_component *c, const struct params *p, char *err,
                        size_t err_len)
{
    if (ordering_parse(c->name, strlen(c->name), &q->ordering) == 0) {
        q->rank = RANK_CLASSIC;
        return 0;
    }
    if (!strcmp(c->name, "multifactor") || !strcmp(c->name, "fairshare")) {
        q->rank = RANK_MULTIFACTOR;
        q->mf = multifactor_new(p, err, err_len);
        return q->mf ? 0 : -1;
    }
    if (!strcmp(c->name, "tiresias")) {
        q->rank = RANK_TIRESIAS;
        return tiresias_init(&q->tiresias, p, err, err_len);
    }
    q->rank = RANK_SRTF;
    return srtf_init(&q->srtf, p, err, err_len);
}

static int compose(struct queue_policy *q, const char *spec, char *err, size_t err_len)
{
    struct spec_part parts[SPEC_PARTS_MAX];
    size_t n;
    if (params_split_spec(spec, parts, &n, err, err_len) != 0)
        return -1;
    const struct policy_component *seen[5] = {NULL};
    struct params *p = malloc(sizeof *p);
    if (!p) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    int have_preempt = 0, rc = -1;
    for (size_t i = 0; i < n; i++) {
        const struct policy_component *c = policy_registry_component(parts[i].name, parts[i].name_len);
        if (!c || (i == 0) != (c->kind == POLICY_COMPONENT_ORDERING)) {
            if (c && i > 0)
                snprintf(err, err_len, "ordering '%s' must come first in policy '%s', and only once", c->name, spec);
            else if (c)
                snprintf(err, err_len, "policy '%s' must start with an ordering, not %s '%s'", spec,
                         policy_component_kind_name(c->kind), c->name);
            else
                unknown_component(spec, &parts[i], i == 0, err, err_len);
            goto done;
        }
        if (seen[c->kind]) {
            snprintf(err, err_len, "policy '%s' has two %s components, '%s' and '%s'", spec,
                     policy_component_kind_name(c->kind), seen[c->kind]->name, c->name);
            goto done;
        }
        seen[c->kind] = c;
        if (component_params(c, &parts[i], p, err, err_len) != 0)
            goto done;
        switch (c->kind) {
        case POLICY_COMPONENT_ORDERING:
            if (set_ordering(q, c, p, err, err_len) != 0)
                goto done;
            q->mode = q->rank == RANK_TIRESIAS || q->rank == RANK_SRTF ? BACKFILL_GREEDY : BACKFILL_NONE;
            break;
        case POLICY_COMPONENT_BACKFILL:
            backfill_parse(c->name, strlen(c->name), &q->mode);
            break;
        case POLICY_COMPONENT_PLACEMENT:
            placement_parse(c->name, strlen(c->name), &q->placement.strategy);
            break;
        case POLICY_COMPONENT_PREEMPTION:
            if (preempt_init(&q->preempt, p, err, err_len) != 0)
                goto done;
            have_preempt = 1;
            break;
        case POLICY_COMPONENT_QUOTA:
            q->quota = quota_new(p, err, err_len);
            if (!q->quota)
                goto done;
            break;
        }
    }
    if (!have_preempt)
        preempt_init(&q->preempt, NULL, err, err_len);
    q->preempting = have_preempt || q->rank == RANK_TIRESIAS || q->rank == RANK_SRTF ||
                    (q->quota && quota_reclaims(q->quota));
    if (q->rank == RANK_SRTF && !q->quota)
        q->preempt.margin = srtf_tier_margin(&q->srtf);
    if (q->preempting && q->mode == BACKFILL_CONSERVATIVE) {
        snprintf(err, err_len,
                 "policy '%s': preemption does not combine with conservative backfilling (its reservations "
                 "assume running jobs end at their estimate); use easy or greedy, or drop the preemption",
                 spec);
        goto done;
    }
    rc = 0;
done:
    free(p);
    return rc;
}

/* Whether the pass's order may be kept from pass to pass (policies/kept_order.h):
 * its keys never change while a job waits, or change at a time known when
 * they are read. FCFS's, SJF's and F1's read fixed fields (WFP3's and
 * UNICEP's the time waited, which changes each key at every pass); SRTF's
 * remaining time and Tiresias' queue read the service a job attained,
 * which changes only while it runs (a preempted job is requeued, a change
 * the host records), and Tiresias' starvation rule sends a job back to
 * queue 0 once, at a time known from its service (queued_key_changes). A
 * quota puts the jobs within it first, which changes with what runs. A
 * classic FCFS needs none: its order is the queue's own. */
static int keeps_order(const struct queue_policy *q)
{
    if (q->quota)
        return 0;
    switch (q->rank) {
    case RANK_CLASSIC:
        return !ordering_depends_on_time(q->ordering) && !(classic(q) && q->ordering == ORDERING_FCFS);
    case RANK_SRTF:
    case RANK_TIRESIAS:
        return 1;
    case RANK_MULTIFACTOR:
        break;
    }
    return 0;
}

static int queue_policy_create(const char *params, void **state, char *err, size_t err_len)
{
    const char *spec = params && *params ? params : "fcfs";
    struct queue_policy *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    placement_init(&q->placement);
    profile_init(&q->profile);
    promises_init(&q->promises);
    queue_index_init(&q->index);
    if (compose(q, spec, err, err_len) != 0) {
        queue_policy_destroy(q);
        return -1;
    }
    /* the walk the index serves: EASY's in arrival order (the identity
     * order decide() keeps for a classic FCFS), without hooks */
    q->indexed = q->mode == BACKFILL_EASY && classic(q) && q->ordering == ORDERING_FCFS;
    q->keeps_order = keeps_order(q);
    int starving = q->rank == RANK_TIRESIAS && q->tiresias.starve_factor > 0;
    kept_order_init(&q->kept, queued_key, starving ? queued_key_changes : NULL, q);
    q->hooks = (struct backfill_hooks){q, hook_admit, hook_started, q->preempting ? hook_make_room : NULL};
    *state = q;
    return 0;
}

static void queue_policy_destroy(void *state)
{
    struct queue_policy *q = state;
    if (!q)
        return;
    free(q->keys);
    free(q->keys_scratch);
    free(q->order);
    free(q->tier_running);
    multifactor_free(q->mf);
    quota_free(q->quota);
    preempt_release(&q->preempt);
    placement_release(&q->placement);
    profile_release(&q->profile);
    promises_release(&q->promises);
    queue_index_release(&q->index);
    kept_order_release(&q->kept);
    backfill_pass_release(&q->pass);
    free(q);
}

/* ---- decide ---- */

static int grow_queued(struct queue_policy *q, uint32_t n)
{
    if (n <= q->cap)
        return 0;
    uint32_t cap = q->cap ? q->cap : 256;
    while (cap < n)
        cap *= 2;
    struct ordering_key *keys = realloc(q->keys, cap * sizeof *keys);
    if (!keys)
        return -1;
    q->keys = keys;
    keys = realloc(q->keys_scratch, cap * sizeof *keys);
    if (!keys)
        return -1;
    q->keys_scratch = keys;
    uint32_t *order = realloc(q->order, cap * sizeof *order);
    if (!order)
        return -1;
    q->order = order;
    q->cap = cap;
    return 0;
}

/* Attained GPU microseconds of a running job now. */
static double attained_now(const struct cluster_view *v, const struct policy_running *r)
{
    int64_t ran = v->now_us - r->start_us;
    return (double)r->job.attained_us + (ran > 0 ? (double)r->job.slots * (double)ran : 0);
}

/* Keys of every queued job into q->keys (not sorted). */
static int rank_queued(struct queue_policy *q, const struct cluster_view *v)
{
    if (q->rank == RANK_MULTIFACTOR)
        return multifactor_keys(q->mf, v, q->keys);
    for (uint32_t i = 0; i < v->n_queued; i++)
        q->keys[i] = queued_key(q, &v->queued[i], v->now_us, i);
    return 0;
}

static int rank_running(struct queue_policy *q, const struct cluster_view *v)
{
    if (v->n_running > q->cap_running) {
        double *t = realloc(q->tier_running, v->n_running * sizeof *t);
        if (!t)
            return -1;
        q->tier_running = t;
        q->cap_running = v->n_running;
    }
    for (uint32_t r = 0; r < v->n_running; r++) {
        const struct policy_running *run = &v->running[r];
        switch (q->rank) {
        case RANK_CLASSIC:
        case RANK_MULTIFACTOR:
            q->tier_running[r] = preempt_tier_of(&q->preempt, &run->job);
            break;
        case RANK_TIRESIAS:
            q->tier_running[r] =
                -(double)tiresias_queue(&q->tiresias, attained_now(v, run), 0, run->job.slots);
            break;
        case RANK_SRTF:
            q->tier_running[r] = srtf_tier(&run->job, attained_now(v, run));
            break;
        }
    }
    return 0;
}

/* Under a quota, the order: the jobs within their quota first, each part
 * in key order (q->keys holds every waiting job's, unsorted). Returns 0 or
 * -1 (memory). */
static int order_by_quota(struct queue_policy *q, const struct cluster_view *view)
{
    if (quota_begin(q->quota, view, q->preempting ? q->tier_running : NULL) != 0)
        return -1;
    uint32_t fit = 0, rest = 0;
    for (uint32_t i = 0; i < view->n_queued; i++) {
        if (quota_fits(q->quota, &view->queued[q->keys[i].index]))
            q->keys[fit++] = q->keys[i];
        else
            q->keys_scratch[rest++] = q->keys[i];
    }
    memcpy(q->keys + fit, q->keys_scratch, rest * sizeof *q->keys);
    ordering_keys_order(q->keys, fit, q->keys_scratch, q->order);
    ordering_keys_order(q->keys + fit, rest, q->keys_scratch, q->order + fit);
    return 0;
}

static int queue_policy_decide(void *state, const struct cluster_view *view, struct policy_decisions *out)
{
    struct queue_policy *q = state;
    out->n = 0;
    out->n_allocs = 0;
    /* every pass, even one that decides nothing: the host's record of what
     * changed covers only the time since the last call */
    if (q->indexed && queue_index_update(&q->index, view) != 0)
        return -1;
    if (q->mode == BACKFILL_CONSERVATIVE)
        promises_track(&q->promises, view);
    if (q->keeps_order)
        kept_order_note(&q->kept, view);
    if (view->n_queued == 0)
        return 0;
    /* Nothing can start on a full machine unless something is preempted
     * or a fractional job joins a shared GPU; conservative still has
     * nothing to start, and its reservations are informational. */
    if (view->free_slots <= 0 && view->n_shared == 0 && !q->preempting)
        return 0;
    if (grow_queued(q, view->n_queued) != 0)
        return -1;
    if (classic(q) && q->ordering == ORDERING_FCFS) {
        /* FCFS order is the arrival order: the identity, kept across passes
         * so a pass does not pay for the length of the queue. */
        for (; q->identity_len < view->n_queued; q->identity_len++)
            q->order[q->identity_len] = q->identity_len;
    } else {
        q->identity_len = 0;
        if (q->keeps_order)
            kept_order_write(&q->kept, view, q->keys, q->keys_scratch, q->order);
        else if (classic(q))
            ordering_sort(q->ordering, view, 0, q->keys, q->keys_scratch, q->order);
        else if (rank_queued(q, view) != 0)
            return -1;
        else if (!q->quota)
            ordering_keys_order(q->keys, view->n_queued, q->keys_scratch, q->order);
    }
    /* what the hooks read (a classic pass has none) */
    if (q->preempting && rank_running(q, view) != 0)
        return -1;
    if (q->quota && order_by_quota(q, view) != 0) /* it reads the running jobs' tiers */
        return -1;
    if (q->preempting && preempt_begin(&q->preempt, view, q->tier_running) != 0)
        return -1;
    q->pass.view = view;
    q->pass.order = q->order;
    q->pass.out = out;
    q->pass.placement = &q->placement;
    q->pass.profile = &q->profile;
    q->pass.promises = &q->promises;
    q->pass.arrival_order = classic(q) && q->ordering == ORDERING_FCFS;
    q->pass.fixed_order = classic(q) && !ordering_depends_on_time(q->ordering);
    q->pass.index = q->indexed ? &q->index : NULL;
    q->pass.hooks = q->quota || q->preempting ? &q->hooks : NULL;
    q->pass.skip_running = q->preempting ? q->preempt.taken : NULL;
    return backfill_run(q->mode, &q->pass);
}

static void queue_policy_observe(void *state, const struct policy_event *ev)
{
    struct queue_policy *q = state;
    if (q->mf)
        multifactor_observe(q->mf, ev);
}

uint32_t queue_policy_decision_kinds(const void *state)
{
    const struct queue_policy *q = state;
    uint32_t kinds = POLICY_KINDS_START;
    if (q->mode == BACKFILL_EASY || q->mode == BACKFILL_CONSERVATIVE)
        kinds |= POLICY_KINDS_RESERVE;
    if (q->preempting)
        kinds |= POLICY_KINDS_PREEMPT;
    return kinds;
}

int queue_policy_reads_gaps(const void *state)
{
    const struct queue_policy *q = state;
    return classic(q) && q->ordering == ORDERING_FCFS &&
           (q->mode == BACKFILL_NONE || q->mode == BACKFILL_EASY || q->mode == BACKFILL_CONSERVATIVE);
}

int queue_policy_last_pass_kept(const void *state)
{
    return ((const struct queue_policy *)state)->promises.kept;
}

int queue_policy_last_pass_read_changes(const void *state)
{
    const struct queue_policy *q = state;
    return q->promises.kept && q->promises.read_changes;
}

uint32_t queue_policy_last_pass_stepped_over(const void *state)
{
    return ((const struct queue_policy *)state)->promises.stepped_over;
}

void queue_policy_last_pass_moves(const void *state, uint32_t *moved, uint32_t *in_place)
{
    const struct promises *pm = &((const struct queue_policy *)state)->promises;
    *moved = pm->kept ? pm->moved : 0;
    *in_place = pm->kept ? pm->moved_in_place : 0;
}

uint32_t queue_policy_last_pass_inner_gaps(const void *state)
{
    const struct queue_policy *q = state;
    return q->promises.kept && q->promises.read_changes ? q->promises.inner_gaps : 0;
}

void queue_policy_set_promise_block(void *state, uint32_t n)
{
    promise_order_set_block_max(&((struct queue_policy *)state)->promises.order, n);
}

int queue_policy_record_whole(const void *state)
{
    return promises_record_whole(&((const struct queue_policy *)state)->promises);
}

const struct policy_ops queue_policy_ops = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "queue",
    .summary = "ORDERING[+BACKFILL][+PLACEMENT][+preempt][+quota], each with optional (name=value,...) "
               "parameters, e.g. 'sjf+easy' or 'fairshare(half_life_s=3600)+easy+pack'",
    .create = queue_policy_create,
    .destroy = queue_policy_destroy,
    .decide = queue_policy_decide,
    .observe = queue_policy_observe,
};
