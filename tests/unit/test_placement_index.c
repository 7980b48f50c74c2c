/* The placement's index of nodes by free slots must choose exactly what a
 * scan of the candidates chooses: every strategy, on random views of many
 * nodes (in an unspecified candidate order), through a pass of starts and
 * give-backs, with the index on and off. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/placement.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

enum { N_NODES = 300, MAX_ALLOCS = 4096 };

struct pass_log {
    struct policy_alloc allocs[MAX_ALLOCS];
    uint32_t n;
    int rcs[400];
};

/* One pass: 400 placements of 1 to 600 slots, and every fifth a give-back on a
 * random up node of what running jobs could hold there (its slots not free
 * as the pass left them: a preempted victim's). Same draws whatever the
 * index does, as long as both choose alike. */
static void run_pass(const struct cluster_view *v, enum placement_strategy s, int index_off, uint64_t seed,
                     struct pass_log *log)
{
    struct placement p;
    placement_init(&p);
    p.strategy = s;
    p.idx_off = index_off;
    struct policy_decision items[1];
    struct policy_decisions out = {items, 0, 1, log->allocs, 0, MAX_ALLOCS};
    struct pcg32 r;
    pcg32_seed(&r, seed, 11);
    memset(log->rcs, 0, sizeof log->rcs);
    int32_t held[N_NODES]; /* slots that are not free as this pass left them */
    for (uint32_t i = 0; i < N_NODES; i++)
        held[i] = v->nodes[i].total_slots - v->nodes[i].free_slots;
    if (placement_begin(&p, v) != 0) {
        log->rcs[0] = -9;
        placement_release(&p);
        return;
    }
    for (int k = 0; k < 400; k++) {
        if (k % 5 == 4) {
            uint32_t node = pcg32_bounded(&r, N_NODES);
            int32_t back = (int32_t)pcg32_bounded(&r, 9);
            if (back > held[node])
                back = held[node];
            if (back > 0 && v->nodes[node].state == POLICY_NODE_UP) {
                (void)placement_give_back(&p, v, node, back);
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
        uint32_t first, count;
        log->rcs[k] = placement_place(&p, v, &job, &out, &first, &count);
        if (log->rcs[k] < 0)
            break;
        for (uint32_t a = 0; log->rcs[k] == 0 && a < count; a++)
            held[log->allocs[first + a].node] += log->allocs[first + a].slots;
    }
    log->n = out.n_allocs;
    placement_release(&p);
}

static void test_index_matches_scan(void)
{
    static struct policy_node nodes[N_NODES];
    static uint32_t with_free[N_NODES];
    static struct pass_log a, b;
    struct pcg32 r;
    pcg32_seed(&r, 2026, 3);
    static const enum placement_strategy strategies[] = {PLACEMENT_PACK, PLACEMENT_FIRST_FIT, PLACEMENT_BEST_FIT,
                                                         PLACEMENT_SPREAD};
    int mismatches = 0;
    for (int view = 0; view < 40; view++) {
        struct cluster_view v = {.nodes = nodes, .n_nodes = N_NODES, .nodes_with_free = with_free};
        for (uint32_t i = 0; i < N_NODES; i++) {
            uint32_t st = pcg32_bounded(&r, 10);
            int32_t free_slots = (int32_t)pcg32_bounded(&r, 9);
            nodes[i] = (struct policy_node){0, st == 0 ? POLICY_NODE_DOWN : st == 1 ? POLICY_NODE_DRAINING : POLICY_NODE_UP,
                                            8, free_slots, view % 2 ? (int32_t)(i / 9 * 9) : -1,
                                            view % 3 ? (int32_t)(i / 32) : -1, view % 3 && view % 5 ? (int32_t)(i / 128) : -1,
                                            0, 0, 0};
            v.total_slots += nodes[i].state == POLICY_NODE_UP ? 8 : 0;
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
        for (size_t s = 0; s < sizeof strategies / sizeof *strategies; s++) {
            run_pass(&v, strategies[s], 0, (uint64_t)view * 7 + s, &a);
            run_pass(&v, strategies[s], 1, (uint64_t)view * 7 + s, &b);
            int same = a.n == b.n && memcmp(a.rcs, b.rcs, sizeof a.rcs) == 0 &&
                       memcmp(a.allocs, b.allocs, a.n * sizeof *a.allocs) == 0;
            if (!same && mismatches++ < 3)
                printf("  view %d, %s: the index chose otherwise than the scan\n", view,
                       placement_name(strategies[s]));
            CHECK(same);
            CHECK(a.n > 100); /* the pass placed plenty */
        }
    }
}

void suite_placement_index(void)
{
    test_run("placement index chooses what the scan chooses", test_index_matches_scan);
}
