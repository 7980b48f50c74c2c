/* example_policy: a complete fleetsim policy plugin, "smallest-first".
 * Waiting jobs go smallest first (fewest slots, then shortest estimate,
 * then arrival); each starts if it fits, on the node with the fewest free
 * slots that holds it, else across the fullest nodes, only nodes of the
 * GPU models the job may use; a job of n nodes (policy.h ABI 3) takes the
 * n fullest nodes that each hold its slots / n; a job asking for a share of
 * a GPU takes a free GPU of its own (sharing is left to the built-in
 * placements). Build:
 *   cc -std=c11 -O2 -fPIC -shared -I. policies/examples/example_policy.c -o example_policy.so
 * Run: fleetsim replay --policy ./example_policy.so TRACE
 */
#include <stdlib.h>
#include <string.h>

#include "policies/policy.h"

struct pick { int32_t slots; int64_t est; uint32_t i; };

static int pick_cmp(const void *pa, const void *pb)
{
    const struct pick *a = pa, *b = pb;
    if (a->slots != b->slots) return a->slots < b->slots ? -1 : 1;
    if (a->est != b->est) return a->est < b->est ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The k-th GPU index that node n does not share yet (policy.h ABI 2). */
static int32_t unshared_gpu(const struct cluster_view *v, uint32_t n, int32_t k)
{
    const struct policy_node *nd = &v->nodes[n];
    for (int32_t g = 0; g < nd->total_slots; g++) {
        int shared = 0;
        for (uint32_t s = 0; s < nd->n_shared && !shared; s++) shared = v->shared[nd->shared_first + s].gpu == g;
        if (!shared && k-- == 0) return g;
    }
    return -1;
}

static int create(const char *params, void **state, char *err, size_t len) { *state = NULL; return 0; }
static void destroy(void *state) { free(state); }

static int decide(void *state, const struct cluster_view *v, struct policy_decisions *out)
{
    out->n = out->n_allocs = 0;
    struct pick *q = malloc((v->n_queued + 1) * sizeof *q);
    int32_t *left = malloc((v->n_nodes + 1) * sizeof *left);
    int32_t *opened = calloc(v->n_nodes + 1, sizeof *opened); /* GPUs made shared this pass */
    if (!q || !left || !opened) { free(q); free(left); free(opened); return -1; }
    for (uint32_t i = 0; i < v->n_queued; i++) q[i] = (struct pick){v->queued[i].slots, v->queued[i].estimate_us, i};
    qsort(q, v->n_queued, sizeof *q, pick_cmp);
    for (uint32_t n = 0; n < v->n_nodes; n++) left[n] = v->nodes[n].state == POLICY_NODE_UP ? v->nodes[n].free_slots : 0;
    int64_t free_slots = v->free_slots;
    for (uint32_t k = 0; k < v->n_queued && free_slots > 0; k++) {
        const struct policy_job *job = &v->queued[q[k].i];
        int32_t need = q[k].slots;
        int64_t mine = 0; /* free slots on the nodes of its GPU models */
        for (uint32_t n = 0; n < v->n_nodes; n++) if (policy_job_may_use(job, v->nodes[n].type)) mine += left[n];
        if (need > mine || out->n >= out->cap) continue;
        uint32_t first = out->n_allocs;
        if (job->nodes > 0) { /* shaped: n distinct nodes, slots / n on each, fullest first */
            int32_t per = need / job->nodes, got = 0;
            while (got < job->nodes) {
                int64_t best = -1;
                for (uint32_t n = 0; n < v->n_nodes; n++) {
                    int chosen = 0; /* a node once */
                    for (uint32_t a = first; a < out->n_allocs && !chosen; a++) chosen = out->allocs[a].node == (int32_t)n;
                    if (!chosen && left[n] >= per && policy_job_may_use(job, v->nodes[n].type) &&
                        (best < 0 || left[n] < left[best])) best = n;
                }
                if (best < 0 || out->n_allocs >= out->cap_allocs) break;
                out->allocs[out->n_allocs++] = (struct policy_alloc){(int32_t)best, per, 0, 0};
                left[best] -= per; got++;
            }
            if (got < job->nodes) { /* no room in that shape: give the nodes back, the job waits */
                while (out->n_allocs > first) { out->n_allocs--; left[out->allocs[out->n_allocs].node] += per; }
                continue;
            }
            need = 0;
        }
        while (need > 0) { /* fullest node that holds the rest, else the fullest with any */
            int64_t best = -1;
            for (uint32_t n = 0; n < v->n_nodes; n++)
                if (left[n] > 0 && policy_job_may_use(job, v->nodes[n].type) &&
                    (best < 0 || (left[n] >= need) > (left[best] >= need) ||
                    ((left[n] >= need) == (left[best] >= need) && left[n] < left[best]))) best = n;
            int32_t use = left[best] < need ? left[best] : need;
            if (out->n_allocs >= out->cap_allocs) { free(q); free(left); free(opened); return -1; }
            struct policy_alloc a = {(int32_t)best, use, 0, 0};
            if (job->milli > 0) { a.milli = job->milli; a.gpu = unshared_gpu(v, (uint32_t)best, opened[best]++); }
            out->allocs[out->n_allocs++] = a;
            left[best] -= use; need -= use;
        }
        free_slots -= q[k].slots;
        out->items[out->n++] = (struct policy_decision){POLICY_START, q[k].i, v->queued[q[k].i].id, v->now_us,
                                                        first, out->n_allocs - first};
    }
    free(q); free(left); free(opened);
    return 0;
}

static const struct policy_ops ops = {POLICY_ABI_VERSION, "smallest-first", "smallest job first, best-fit nodes",
                                      create, destroy, decide, NULL};

const struct policy_ops *fleetsim_policy_entry(void);
const struct policy_ops *fleetsim_policy_entry(void) { return &ops; }
