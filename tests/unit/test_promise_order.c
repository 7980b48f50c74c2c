/* The order of conservative's held promises (policies/promise_order)
 * against a plain sorted array of record indices written for this test:
 * random batches merged in (promises at one instant, ties broken by the
 * record index or by a rank table, batches that land before, between and
 * after every block), random places taken out (whole blocks emptied,
 * neighbours left small enough to merge), a clear and a rebuild by
 * appends. After every step the order must hold the same indices in the
 * same sequence, and promise_order_whole must find every block's summary
 * equal to its promises' and no two neighbours at half a block or less.
 * On blocks of 64 as in a replay, and of 4, where blocks split, empty and
 * merge at nearly every step and a batch spreads over several new ones. */
#include <stdio.h>
#include <stdlib.h>

#include "policies/promise_order.h"
#include "policies/promises.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

enum { CASE_RECORDS = 3000 };

struct order_case {
    struct promise rec[CASE_RECORDS];
    uint32_t rank[CASE_RECORDS];
    struct promise_order_ties ties;
    uint32_t plain[CASE_RECORDS]; /* the indices in order */
    uint32_t n_plain;
    uint8_t in[CASE_RECORDS];
};

static uint32_t case_tie(const struct order_case *c, uint32_t r)
{
    return c->ties.rank ? c->rank[r] : r;
}

static int case_before(const struct order_case *c, uint32_t a, uint32_t b)
{
    return c->rec[a].at_us != c->rec[b].at_us ? c->rec[a].at_us < c->rec[b].at_us : case_tie(c, a) < case_tie(c, b);
}

/* 1 when the order holds plain[] in sequence and is whole. */
static int case_matches(const struct order_case *c, const struct promise_order *o)
{
    if (o->n != c->n_plain || !promise_order_whole(o, c->rec))
        return 0;
    uint32_t k = 0;
    for (uint32_t b = 0; b < o->n_blocks; b++)
        for (uint32_t i = 0; i < o->block[b].n; i++)
            if (promise_order_items(o, b)[i] != c->plain[k++])
                return 0;
    return 1;
}

static int rank_cmp(const void *a, const void *b)
{
    const struct promise_rank *x = a, *y = b;
    if (x->at_us != y->at_us)
        return x->at_us < y->at_us ? -1 : 1;
    return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* Merges up to `most` records not in the order, promises drawn from
 * [0, spread) (few values: many at one instant). */
static int case_merge(struct order_case *c, struct promise_order *o, struct pcg32 *rng, uint32_t most, int64_t spread)
{
    static struct promise_rank add[CASE_RECORDS];
    uint32_t n = 0, want = 1 + pcg32_bounded(rng, most);
    for (uint32_t tries = 0; n < want && tries < 4 * want; tries++) {
        uint32_t r = pcg32_bounded(rng, CASE_RECORDS);
        if (c->in[r])
            continue;
        c->in[r] = 1;
        c->rec[r].at_us = (int64_t)pcg32_bounded(rng, (uint32_t)spread);
        c->rec[r].slots = 1 + (int64_t)pcg32_bounded(rng, 16);
        c->rec[r].dur_us = 1 + (int64_t)pcg32_bounded(rng, 1000);
        add[n++] = (struct promise_rank){c->rec[r].at_us, r, case_tie(c, r)};
    }
    qsort(add, n, sizeof *add, rank_cmp);
    if (promise_order_merge(o, c->rec, &c->ties, add, n) != 0)
        return 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t r = add[k].rec, j = c->n_plain;
        while (j > 0 && case_before(c, r, c->plain[j - 1])) {
            c->plain[j] = c->plain[j - 1];
            j--;
        }
        c->plain[j] = r;
        c->n_plain++;
    }
    return 1;
}

/* Takes out each index with probability 1/every, or a run of them. */
static void case_remove(struct order_case *c, struct promise_order *o, struct pcg32 *rng, uint32_t every)
{
    static struct promise_order_place at[CASE_RECORDS];
    static uint8_t out[CASE_RECORDS];
    uint32_t n = 0, k = 0, run_from = UINT32_MAX, run_to = 0;
    if (c->n_plain > 0 && pcg32_bounded(rng, 4) == 0) {
        run_from = pcg32_bounded(rng, c->n_plain);
        run_to = run_from + 1 + pcg32_bounded(rng, 40);
    }
    for (uint32_t b = 0; b < o->n_blocks; b++)
        for (uint32_t i = 0; i < o->block[b].n; i++, k++) {
            out[k] = pcg32_bounded(rng, every) == 0 || (k >= run_from && k < run_to);
            if (out[k])
                at[n++] = (struct promise_order_place){b, i};
        }
    promise_order_remove(o, c->rec, at, n);
    uint32_t m = 0;
    for (uint32_t j = 0; j < c->n_plain; j++) {
        if (out[j])
            c->in[c->plain[j]] = 0;
        else
            c->plain[m++] = c->plain[j];
    }
    c->n_plain = m;
}

static void run_order_case(uint64_t seed, int ranked, uint32_t block)
{
    static struct order_case c;
    memset(&c, 0, sizeof c);
    struct pcg32 rng;
    pcg32_seed(&rng, seed, 99);
    for (uint32_t r = 0; r < CASE_RECORDS; r++)
        c.rank[r] = (r * 7919u) % CASE_RECORDS; /* a priority unlike the record's order */
    c.ties = (struct promise_order_ties){ranked ? c.rank : NULL, 0};
    for (uint32_t r = 0; r < CASE_RECORDS; r++)
        c.rec[r].coord = r; /* the rank table is read at coord - origin */
    struct promise_order o;
    promise_order_init(&o);
    promise_order_set_block_max(&o, block);
    int64_t spread = 1 + (int64_t)pcg32_bounded(&rng, 2000);
    for (uint32_t step = 0; step < 400; step++) {
        uint32_t what = pcg32_bounded(&rng, 10);
        if (what < 5) {
            if (!CHECK(case_merge(&c, &o, &rng, what == 0 ? 300 : 12, spread)))
                break;
        } else if (what < 9) {
            case_remove(&c, &o, &rng, what == 5 ? 2 : 20);
        } else {
            /* a rebuild: cleared, then every index appended in order */
            promise_order_clear(&o);
            for (uint32_t k = 0; k < c.n_plain; k++)
                if (!CHECK_INT(promise_order_append(&o, c.rec, c.plain[k]), 0))
                    break;
        }
        if (!CHECK(case_matches(&c, &o))) {
            printf("  seed %llu%s, blocks of %u, step %u (%u): %u indices, %u blocks\n", (unsigned long long)seed,
                   ranked ? " (ranked)" : "", block, step, what, c.n_plain, o.n_blocks);
            break;
        }
    }
    promise_order_release(&o);
}

static void test_order_random(void)
{
    for (uint64_t seed = 1; seed <= 30; seed++) {
        run_order_case(seed, 0, PROMISE_ORDER_BLOCK);
        run_order_case(seed, 0, 4);
    }
}

static void test_order_random_ranked(void)
{
    for (uint64_t seed = 1; seed <= 30; seed++) {
        run_order_case(seed, 1, PROMISE_ORDER_BLOCK);
        run_order_case(seed, 1, 4);
    }
}

void suite_promise_order(void)
{
    test_run("promise order: random merges and removals against a sorted array (ties by record), blocks of 64 and 4",
             test_order_random);
    test_run("promise order: random merges and removals against a sorted array (ties by rank), blocks of 64 and 4",
             test_order_random_ranked);
}
