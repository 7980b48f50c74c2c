/* promise_order: the held promises of conservative backfilling's record
 * (policies/promises.h) in the order a pass places them (by promise, then
 * priority), as indices into the record, in blocks of at most
 * PROMISE_ORDER_BLOCK.
 *
 * An insertion or a removal moves the indices of one block, not the whole
 * order (a flat array moved up to 88,658 of them for each promise merged
 * in or dropped behind METACENTRUM's queue). Each block sums up its
 * promises: the earliest and latest promise, the fewest slots, the
 * shortest and longest length. A pass that walks the order for promises
 * that may move then steps over a block none of whose promises may
 * (promises_block_may_move) instead of reading each: behind a deep queue
 * the walk read tens of thousands of promises for the few at its head
 * that moved.
 *
 * The summary of a block is kept through insertions and recomputed from
 * the record after removals, a split or a merge, so it is right while
 * the promises in the order hold theirs. A pass leaves every promise at
 * its place until its end, when promises.c takes out the started ones and
 * those moved out of their place (by promise, then priority) at the places
 * the pass found them; a promise moved within its place stays, and
 * promises_move sets its block's first or last promise to it.
 * Adjacent blocks hold more than half a block between them (removals
 * merge two that do not), so the blocks stay at least a quarter full on
 * average.
 */
#ifndef FLEETSIM_POLICIES_PROMISE_ORDER_H
#define FLEETSIM_POLICIES_PROMISE_ORDER_H

#include <stdint.h>

struct promise;
struct promise_rank;

#define PROMISE_ORDER_BLOCK 64u

struct promise_order_block {
    int64_t first_at, last_at;   /* its earliest and latest promise */
    int64_t least_slots;         /* the fewest slots of its promises */
    int64_t least_dur, most_dur; /* their shortest and longest length */
    uint32_t n;                  /* indices */
    uint32_t at;                 /* its indices: item[at * PROMISE_ORDER_BLOCK + i] */
};

struct promise_order {
    struct promise_order_block *block; /* in order */
    uint32_t n_blocks, cap_blocks;
    uint32_t *item;                    /* index storage, PROMISE_ORDER_BLOCK per block */
    uint32_t n_storage, cap_storage;   /* in blocks */
    uint32_t *spare;                   /* storage of dropped blocks, for new ones */
    uint32_t n_spare;
    uint32_t *merged;                  /* promise_order_merge's scratch */
    uint32_t cap_merged;
    uint32_t block_max;                /* indices a block holds at most: PROMISE_ORDER_BLOCK, fewer in tests */
    uint32_t n;                        /* indices in all */
};

/* A place in the order: index i of block `block`. */
struct promise_order_place {
    uint32_t block, i;
};

void promise_order_init(struct promise_order *o);
void promise_order_release(struct promise_order *o);
/* Empties the order, keeping its memory. */
void promise_order_clear(struct promise_order *o);
/* Blocks of at most n indices (2 to PROMISE_ORDER_BLOCK; an empty order
 * only): tests take 4, so that blocks split, empty and merge at nearly
 * every step. */
void promise_order_set_block_max(struct promise_order *o, uint32_t n);

static inline uint32_t *promise_order_items(const struct promise_order *o, uint32_t b)
{
    return &o->item[(uint64_t)o->block[b].at * PROMISE_ORDER_BLOCK];
}

/* Adds record index r last (its promise rec[r] goes after every one in
 * the order). Returns 0 or -1 (memory, the order unchanged). */
int promise_order_append(struct promise_order *o, const struct promise *rec, uint32_t r);
/* How promises of one start are ordered: by rank[rec[r].coord - origin]
 * (a pass in another order than arrival's), or with rank NULL by the
 * record index r itself (the record is in queue order). */
struct promise_order_ties {
    const uint32_t *rank;
    uint64_t origin;
};

/* Record index r's priority among promises of one start (lower first). */
uint32_t promise_order_tie(const struct promise *rec, const struct promise_order_ties *ties, uint32_t r);

/* Puts the record indices add[k].rec in their places: add is sorted by
 * promise (add[k].at_us) and priority (add[k].tie, as
 * promise_order_tie gives it). Each block that takes some is merged with
 * them and split when it overflows. Returns 0 or -1 (memory, the order
 * unchanged). */
int promise_order_merge(struct promise_order *o, const struct promise *rec, const struct promise_order_ties *ties,
                        const struct promise_rank *add, uint32_t n_add);
/* Takes out the indices at places at[0..n), rising (places in the order
 * as it stands before the first goes). */
void promise_order_remove(struct promise_order *o, const struct promise *rec, const struct promise_order_place *at,
                          uint32_t n);
/* 1 when the blocks are none empty, their counts sum to n and each
 * summary is that of its promises in rec (for tests). */
int promise_order_whole(const struct promise_order *o, const struct promise *rec);

#endif
