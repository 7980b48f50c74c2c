#include "policies/queue_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfill.h"
#include "policies/ordering.h"

struct queue_policy {
    enum ordering_kind ordering;
    enum backfill_mode mode;
    struct ordering_key *keys;
    uint32_t *order;
    uint32_t cap;
    uint32_t identity_len; /* FCFS: order[0..identity_len) == 0, 1, 2, ... */
    struct placement placement;
    struct profile profile;
    struct backfill_pass pass;
};

static int queue_policy_create(const char *params, void **state, char *err, size_t err_len)
{
    const char *spec = params && *params ? params : "fcfs";
    const char *plus = strchr(spec, '+');
    size_t olen = plus ? (size_t)(plus - spec) : strlen(spec);
    enum ordering_kind ordering;
    enum backfill_mode mode = BACKFILL_NONE;
    if (ordering_parse(spec, olen, &ordering) != 0) {
        snprintf(err, err_len,
                 "unknown ordering '%.*s' in policy '%s' (orderings: fcfs, sjf, f1, wfp3, unicep)",
                 (int)olen, spec, spec);
        return -1;
    }
    if (plus) {
        const char *b = plus + 1;
        if (backfill_parse(b, strlen(b), &mode) != 0) {
            snprintf(err, err_len,
                     "unknown backfilling '%s' in policy '%s' (backfilling: none, easy, conservative)%s",
                     b, spec, strcmp(b, "backfill") == 0 ? "; did you mean 'easy'?" : "");
            return -1;
        }
    }
    struct queue_policy *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    q->ordering = ordering;
    q->mode = mode;
    placement_init(&q->placement);
    profile_init(&q->profile);
    *state = q;
    return 0;
}

static void queue_policy_destroy(void *state)
{
    struct queue_policy *q = state;
    if (!q)
        return;
    free(q->keys);
    free(q->order);
    placement_release(&q->placement);
    profile_release(&q->profile);
    free(q->pass.started_end);
    free(q->pass.started_slots);
    free(q->pass.placing);
    free(q);
}

static int queue_policy_decide(void *state, const struct cluster_view *view, struct policy_decisions *out)
{
    struct queue_policy *q = state;
    out->n = 0;
    out->n_allocs = 0;
    if (view->n_queued == 0)
        return 0;
    /* Nothing can start on a full machine; conservative still has nothing to
     * start, and its reservations are informational. */
    if (view->free_slots <= 0)
        return 0;
    if (view->n_queued > q->cap) {
        uint32_t cap = q->cap ? q->cap : 256;
        while (cap < view->n_queued)
            cap *= 2;
        struct ordering_key *keys = realloc(q->keys, cap * sizeof *keys);
        if (!keys)
            return -1;
        q->keys = keys;
        uint32_t *order = realloc(q->order, cap * sizeof *order);
        if (!order)
            return -1;
        q->order = order;
        q->cap = cap;
    }
    if (q->ordering == ORDERING_FCFS) {
        /* FCFS order is the arrival order: the identity, kept across passes
         * so a pass does not pay for the length of the queue. */
        for (; q->identity_len < view->n_queued; q->identity_len++)
            q->order[q->identity_len] = q->identity_len;
    } else {
        q->identity_len = 0;
        ordering_sort(q->ordering, view, 0, q->keys, q->order);
    }
    q->pass.view = view;
    q->pass.order = q->order;
    q->pass.out = out;
    q->pass.placement = &q->placement;
    q->pass.profile = &q->profile;
    return backfill_run(q->mode, &q->pass);
}

const struct policy_ops queue_policy_ops = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "queue",
    .summary = "a queue ordering (fcfs, sjf, f1, wfp3, unicep) with optional backfilling "
               "(none, easy, conservative), e.g. 'sjf+easy'",
    .create = queue_policy_create,
    .destroy = queue_policy_destroy,
    .decide = queue_policy_decide,
    .observe = NULL,
};
