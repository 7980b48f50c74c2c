/* A plugin that misbehaves on purpose, for the tests of how hosts contain a
 * policy. Parameters: "MODE[@SLOTS]".
 *   crash   dereferences NULL in decide()
 *   abort   calls abort() in decide()
 *   loop    never returns from decide()
 *   double  starts the same job twice in one pass (a contract breach)
 * With "@SLOTS" it misbehaves only on passes where a queued job asks for
 * exactly SLOTS slots (a "poison" job); otherwise it is plain first-come
 * first-served on the first node with room, so a host runs other jobs first. */
#include <stdlib.h>
#include <string.h>

#include "policies/policy.h"

enum mode { MODE_CRASH, MODE_ABORT, MODE_LOOP, MODE_DOUBLE };

struct misbehave {
    enum mode mode;
    int poison_slots; /* 0: every pass with a queued job */
};

static int create(const char *params, void **state, char *err, size_t len)
{
    static const char *const names[] = {"crash", "abort", "loop", "double"};
    struct misbehave *m = calloc(1, sizeof *m);
    if (!m)
        return -1;
    const char *at = params ? strchr(params, '@') : NULL;
    size_t n = params ? (at ? (size_t)(at - params) : strlen(params)) : 0;
    int found = 0;
    for (int k = 0; k < 4; k++) {
        if (strlen(names[k]) == n && strncmp(params, names[k], n) == 0) {
            m->mode = (enum mode)k;
            found = 1;
        }
    }
    if (!found) {
        /* fills the whole buffer without a NUL, as a careless plugin would */
        memset(err, 'x', len);
        free(m);
        return -1;
    }
    m->poison_slots = at ? atoi(at + 1) : 0;
    *state = m;
    return 0;
}

static void destroy(void *state)
{
    free(state);
}

static int poisoned(const struct misbehave *m, const struct cluster_view *v)
{
    if (m->poison_slots == 0)
        return v->n_queued > 0;
    for (uint32_t i = 0; i < v->n_queued; i++)
        if (v->queued[i].slots == m->poison_slots)
            return 1;
    return 0;
}

static int decide(void *state, const struct cluster_view *v, struct policy_decisions *out)
{
    const struct misbehave *m = state;
    out->n = out->n_allocs = 0;
    if (poisoned(m, v)) {
        switch (m->mode) {
        case MODE_CRASH: {
            volatile int *nowhere = NULL;
            return *nowhere;
        }
        case MODE_ABORT:
            abort();
        case MODE_LOOP:
            for (volatile unsigned long spin = 0;; spin++)
                ;
        case MODE_DOUBLE:
            break;
        }
    }
    /* first come, first served, each job on the first node with room */
    int32_t used[4096] = {0};
    for (uint32_t q = 0; q < v->n_queued && out->n + 2 <= out->cap; q++) {
        const struct policy_job *j = &v->queued[q];
        uint32_t node = UINT32_MAX;
        for (uint32_t i = 0; i < v->n_nodes && i < 4096; i++) {
            if (v->nodes[i].state == POLICY_NODE_UP && v->nodes[i].free_slots - used[i] >= j->slots) {
                node = i;
                break;
            }
        }
        if (node == UINT32_MAX || out->n_allocs >= out->cap_allocs)
            break; /* the head waits, and so does everyone behind it */
        used[node] += j->slots;
        out->allocs[out->n_allocs] = (struct policy_alloc){(int32_t)node, j->slots, 0, 0};
        out->items[out->n++] = (struct policy_decision){POLICY_START, q, j->id, v->now_us, out->n_allocs, 1};
        if (m->mode == MODE_DOUBLE && poisoned(m, v))
            out->items[out->n++] = (struct policy_decision){POLICY_START, q, j->id, v->now_us, out->n_allocs, 1};
        out->n_allocs++;
    }
    return 0;
}

static const struct policy_ops ops = {POLICY_ABI_VERSION, "misbehave", "misbehaves on purpose (tests only)", create,
                                      destroy, decide, NULL};

const struct policy_ops *fleetsim_policy_entry(void);
const struct policy_ops *fleetsim_policy_entry(void)
{
    return &ops;
}
