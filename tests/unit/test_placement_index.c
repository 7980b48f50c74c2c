/* The placement's index of nodes by free slots must choose exactly what a
 * scan of the candidates chooses: every strategy, on random views of many
 * nodes (in an unspecified candidate order), through passes of starts and
 * give-backs, with the index on and off. One placement per strategy lives
 * across all the views, as in a host: the node count changes now and then,
 * nodes sometimes have more free slots than the largest node had when the
 * index was sized, and the jobs mix in node shapes, GPU-model constraints
 * and nodes kept out of reach (EASY's avoid mask), which place by scanning
 * while the index must follow what they take. Some views have nodes of one
 * slot. And pack's one-node choices, by the index or by the candidates in
 * index order, must be the fullest node a plain scan finds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/placement.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

enum { MAX_NODES = 300, MAX_ALLOCS = 8192, PLACEMENTS = 400 };

struct pass_log {
    struct policy_alloc allocs[MAX_ALLOCS];
    uint32_t n;
    int rcs[PLACEMENTS];
    int wrong_fits; /* pack's one-node choices that were not the fullest */
};

/* What pack must choose for a job that one node holds, with no filter: the
 * fullest candidate (the view's list, then the extras) that holds it,
 * lowest index on ties; UINT32_MAX when none does. */
static uint32_t fullest_by_scan(const struct placement *p, const struct cluster_view *v, int32_t slots)
{
    uint32_t best = UINT32_MAX;
    int32_t best_free = 0;
    for (uint32_t k = 0; k < v->n_nodes_with_free + p->n_extra; k++) {
        uint32_t node = k < v->n_nodes_with_free ? v->nodes_with_free[k] : p->extra[k - v->n_nodes_with_free];
        int32_t f = placement_free(p, v, node);
        if (f >= slots && (best == UINT32_MAX || f < best_free || (f == best_free && node < best))) {
            best = node;
            best_free = f;
        }
    }
    return best;
}

/* One pass: 400 placements of 1 to 600 slots, and every fifth a give-back
 * on a random up node of what running jobs could hold there (its slots not
 * free as the pass left them: a preempted victim's). Same draws whatever
 * the index does, as long as both choose alike. */
static void run_pass(struct placement *p, const struct cluster_view *v, uint64_t seed, struct pass_log *log)
{
    struct policy_decision items[1];
    struct policy_decisions out = {items, 0, 1, log->allocs, 0, MAX_ALLOCS};
    struct pcg32 r;
    pcg32_seed(&r, seed, 11);
    memset(log->rcs, 0, sizeof log->rcs);
    log->wrong_fits = 0;
    int32_t held[MAX_NODES]; /* slots that are not free as this pass left them */
    uint8_t avoid[MAX_NODES];
    for (uint32_t i = 0; i < v->n_nodes; i++) {
        held[i] = v->nodes[i].total_slots - v->nodes[i].free_slots;
        avoid[i] = pcg32_bounded(&r, 4) == 0;
    }
    if (placement_begin(p, v) != 0) {
        log->rcs[0] = -9;
        return;
    }
    for (int k = 0; k < PLACEMENTS; k++) {
        if (k % 5 == 4) {
            uint32_t node = pcg32_bounded(&r, v->n_nodes);
            int32_t back = (int32_t)pcg32_bounded(&r, 9);
            if (back > held[node])
                back = held[node];
            if (back > 0 && v->nodes[node].state == POLICY_NODE_UP) {
                (void)placement_give_back(p, v, node, back);
                held[node] -= back;
            }
            continue;
        }
        /* mostly one node, some a domain or a leaf, a few a pod or more */
        uint32_t kind = pcg32_bounded(&r, 20);
        int32_t slots = kind == 0 ? 100 + (int32_t)pcg32_bounded(&r, 500)
                        : kind < 5 ? 1 + (int32_t)pcg32_bounded(&r, 40)
                                   : 1 + (int32_t)pcg32_bounded(&r, 8);
        struct policy_job job = {.id = k, .slots = slots, .user = -1, .team = -1, .reserved_us = -1};
        uint32_t extra = pcg32_bounded(&r, 12);
        if (extra == 0)
            job.nodes = slots <= 8 ? 1 : 0; /* shaped: placed by a scan */
        else if (extra == 1)
            job.type_mask = 1u; /* type 0 only: a scan */
        p->avoid = extra == 2 ? avoid : NULL;
        uint32_t first, count;
        int plain_pack = p->strategy == PLACEMENT_PACK && !job.nodes && !job.type_mask && !p->avoid;
        uint32_t fullest = plain_pack && slots <= p->max_slots ? fullest_by_scan(p, v, slots) : UINT32_MAX;
        log->rcs[k] = placement_place(p, v, &job, &out, &first, &count);
        if (fullest != UINT32_MAX && (log->rcs[k] != 0 || count != 1 || log->allocs[first].node != (int32_t)fullest))
            log->wrong_fits++;
        p->avoid = NULL;
        if (log->rcs[k] < 0)
            break;
        for (uint32_t a = 0; log->rcs[k] == 0 && a < count; a++)
            held[log->allocs[first + a].node] += log->allocs[first + a].slots;
    }
    log->n = out.n_allocs;
}

static void test_index_matches_scan(void)
{
    static struct policy_node nodes[MAX_NODES];
    static uint32_t with_free[MAX_NODES];
    static struct pass_log a, b;
    struct pcg32 r;
    pcg32_seed(&r, 2026, 3);
    static const enum placement_strategy strategies[] = {PLACEMENT_PACK, PLACEMENT_FIRST_FIT, PLACEMENT_BEST_FIT,
                                                         PLACEMENT_SPREAD, PLACEMENT_GAVEL};
    enum { N_STRATEGIES = sizeof strategies / sizeof *strategies };
    struct placement on[N_STRATEGIES], off[N_STRATEGIES];
    for (int s = 0; s < N_STRATEGIES; s++) {
        placement_init(&on[s]);
        placement_init(&off[s]);
        on[s].strategy = off[s].strategy = strategies[s];
        off[s].idx_off = 1;
    }
    double speed[2 * POLICY_JOB_CLASSES] = {1, 1, 1, 2, 2, 2};
    int mismatches = 0, indexed = 0;
    for (int view = 0; view < 60; view++) {
        /* the node count changes now and then; the topology follows it */
        uint32_t n = view % 7 == 6 ? 200 : MAX_NODES;
        /* some views have fat nodes: more free than the index was sized for;
         * some have nodes of one slot (HPC logs count processors) */
        int fat = view % 5 == 2, flat = view % 5 == 4;
        struct cluster_view v = {.nodes = nodes, .n_nodes = n, .nodes_with_free = with_free, .type_speed = speed,
                                 .n_types = 2};
        for (uint32_t i = 0; i < n; i++) {
            uint32_t st = pcg32_bounded(&r, 10);
            int32_t total = flat ? 1 : fat && pcg32_bounded(&r, 10) == 0 ? 16 : 8;
            int32_t free_slots = (int32_t)pcg32_bounded(&r, (uint32_t)total + 1);
            nodes[i] = (struct policy_node){(int32_t)(i % 3 == 0),
                                            st == 0 ? POLICY_NODE_DOWN : st == 1 ? POLICY_NODE_DRAINING : POLICY_NODE_UP,
                                            total, free_slots, (int32_t)(i / 9 * 9), (int32_t)(i / 32),
                                            (int32_t)(i / 128), 0, 0, 0};
            v.total_slots += nodes[i].state == POLICY_NODE_UP ? total : 0;
            if (nodes[i].state == POLICY_NODE_UP && free_slots > 0) {
                with_free[v.n_nodes_with_free++] = i;
                v.free_slots += free_slots;
            }
        }
        /* the candidates in a shuffled order, as a host's swap-removals leave them */
        for (uint32_t i = v.n_nodes_with_free; i > 1; i--) {
            uint32_t j = pcg32_bounded(&r, i);
            uint32_t t = with_free[i - 1];
            with_free[i - 1] = with_free[j];
            with_free[j] = t;
        }
        for (int s = 0; s < N_STRATEGIES; s++) {
            run_pass(&on[s], &v, (uint64_t)view * 7 + (uint64_t)s, &a);
            indexed += on[s].idx_view == &v && !on[s].idx_overflow;
            run_pass(&off[s], &v, (uint64_t)view * 7 + (uint64_t)s, &b);
            int same = a.n == b.n && memcmp(a.rcs, b.rcs, sizeof a.rcs) == 0 &&
                       memcmp(a.allocs, b.allocs, a.n * sizeof *a.allocs) == 0;
            if (!same && mismatches++ < 3)
                printf("  view %d, %s: the index chose otherwise than the scan\n", view,
                       placement_name(strategies[s]));
            CHECK(same);
            CHECK(a.n > 100); /* the pass placed plenty */
            CHECK_INT(a.wrong_fits, 0);
            CHECK_INT(b.wrong_fits, 0);
        }
    }
    CHECK(indexed > 150); /* most passes ran on the index to the end */
    for (int s = 0; s < N_STRATEGIES; s++) {
        placement_release(&on[s]);
        placement_release(&off[s]);
    }
}

void suite_placement_index(void)
{
    test_run("placement index chooses what the scan chooses", test_index_matches_scan);
}
