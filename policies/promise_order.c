#include "policies/promise_order.h"

#include <stdlib.h>
#include <string.h>

#include "policies/promises.h"

#define B PROMISE_ORDER_BLOCK

void promise_order_init(struct promise_order *o)
{
    memset(o, 0, sizeof *o);
    o->block_max = B;
}

void promise_order_set_block_max(struct promise_order *o, uint32_t n)
{
    if (o->n == 0 && n >= 2 && n <= B)
        o->block_max = n;
}

void promise_order_release(struct promise_order *o)
{
    if (!o)
        return;
    free(o->block);
    free(o->item);
    free(o->spare);
    free(o->merged);
    promise_order_init(o);
}

void promise_order_clear(struct promise_order *o)
{
    o->n_blocks = o->n_storage = o->n_spare = o->n = 0;
}

/* Room for `blocks` more blocks, so that inserting them cannot fail. The
 * spare list has room for every block's storage, so that dropping a
 * block never fails. Returns 0 or -1 (memory, the order unchanged). */
static int reserve(struct promise_order *o, uint32_t blocks)
{
    while (o->n_spare + (o->cap_storage - o->n_storage) < blocks) {
        uint32_t cap = o->cap_storage ? o->cap_storage * 2 : 4;
        uint32_t *item = realloc(o->item, (size_t)cap * B * sizeof *item);
        if (!item)
            return -1;
        o->item = item;
        uint32_t *spare = realloc(o->spare, (size_t)cap * sizeof *spare);
        if (!spare)
            return -1;
        o->spare = spare;
        o->cap_storage = cap;
    }
    if (o->n_blocks + blocks > o->cap_blocks) {
        uint32_t cap = o->cap_blocks ? o->cap_blocks : 4;
        while (cap < o->n_blocks + blocks)
            cap *= 2;
        struct promise_order_block *block = realloc(o->block, (size_t)cap * sizeof *block);
        if (!block)
            return -1;
        o->block = block;
        o->cap_blocks = cap;
    }
    return 0;
}

/* Inserts an empty block at position pos with storage of its own (room
 * reserved); pointers into o->block do not survive it. */
static void insert_block(struct promise_order *o, uint32_t pos)
{
    memmove(&o->block[pos + 1], &o->block[pos], (size_t)(o->n_blocks - pos) * sizeof *o->block);
    o->n_blocks++;
    o->block[pos] = (struct promise_order_block){0, 0, 0, 0, 0, 0, o->n_spare ? o->spare[--o->n_spare] : o->n_storage++};
}

static void drop_block(struct promise_order *o, uint32_t pos)
{
    o->spare[o->n_spare++] = o->block[pos].at;
    memmove(&o->block[pos], &o->block[pos + 1], (size_t)(o->n_blocks - pos - 1) * sizeof *o->block);
    o->n_blocks--;
}

/* A block's fewest slots and shortest and longest length once promise p
 * joined it (its first: p's own). */
static void note(struct promise_order_block *blk, const struct promise *p, int first)
{
    blk->least_slots = first || p->slots < blk->least_slots ? p->slots : blk->least_slots;
    blk->least_dur = first || p->dur_us < blk->least_dur ? p->dur_us : blk->least_dur;
    blk->most_dur = first || p->dur_us > blk->most_dur ? p->dur_us : blk->most_dur;
}

/* Block b's summary from its promises in rec. */
static struct promise_order_block summary_of(const struct promise_order *o, const struct promise *rec, uint32_t b)
{
    struct promise_order_block sum = o->block[b];
    const uint32_t *items = promise_order_items(o, b);
    for (uint32_t i = 0; i < sum.n; i++)
        note(&sum, &rec[items[i]], i == 0);
    sum.first_at = rec[items[0]].at_us;
    sum.last_at = rec[items[sum.n - 1]].at_us;
    return sum;
}

static void summarize(struct promise_order *o, const struct promise *rec, uint32_t b)
{
    o->block[b] = summary_of(o, rec, b);
}

int promise_order_append(struct promise_order *o, const struct promise *rec, uint32_t r)
{
    if (o->n_blocks == 0 || o->block[o->n_blocks - 1].n == o->block_max) {
        if (reserve(o, 1) != 0)
            return -1;
        insert_block(o, o->n_blocks);
    }
    uint32_t b = o->n_blocks - 1;
    struct promise_order_block *blk = &o->block[b];
    promise_order_items(o, b)[blk->n++] = r;
    note(blk, &rec[r], blk->n == 1);
    if (blk->n == 1)
        blk->first_at = rec[r].at_us;
    blk->last_at = rec[r].at_us;
    o->n++;
    return 0;
}

uint32_t promise_order_tie(const struct promise *rec, const struct promise_order_ties *ties, uint32_t r)
{
    return ties->rank ? ties->rank[rec[r].coord - ties->origin] : r;
}

/* Whether record index r goes before a promise at at_us of priority tie. */
static int goes_before(const struct promise *rec, const struct promise_order_ties *ties, uint32_t r, int64_t at_us,
                       uint32_t tie)
{
    return rec[r].at_us != at_us ? rec[r].at_us < at_us : promise_order_tie(rec, ties, r) < tie;
}

/* The last block from `from` on whose first index goes before a promise
 * at at_us of priority tie, or `from` when none does. */
static uint32_t block_for(const struct promise_order *o, const struct promise *rec,
                          const struct promise_order_ties *ties, uint32_t from, int64_t at_us, uint32_t tie)
{
    uint32_t lo = from, len = o->n_blocks - from;
    while (len > 0) {
        uint32_t half = len / 2;
        const struct promise_order_block *blk = &o->block[lo + half];
        int before = blk->first_at != at_us ? blk->first_at < at_us
                                            : promise_order_tie(rec, ties, promise_order_items(o, lo + half)[0]) < tie;
        if (before) {
            lo += half + 1;
            len -= half + 1;
        } else {
            len = half;
        }
    }
    return lo > from ? lo - 1 : from;
}

int promise_order_merge(struct promise_order *o, const struct promise *rec, const struct promise_order_ties *ties,
                        const struct promise_rank *add, uint32_t n_add)
{
    if (n_add == 0)
        return 0;
    /* every failure before the first change: a group of g indices into a
     * block adds at most ceil(g / max) blocks (one more into an empty
     * order), and the groups are at most the blocks, plus one */
    uint32_t groups = o->n_blocks + 1 < n_add ? o->n_blocks + 1 : n_add;
    if (reserve(o, groups + n_add / o->block_max + 1) != 0)
        return -1;
    if (o->cap_merged < n_add + B) {
        uint32_t *merged = realloc(o->merged, ((size_t)n_add + B) * sizeof *merged);
        if (!merged)
            return -1;
        o->merged = merged;
        o->cap_merged = n_add + B;
    }
    int empty = o->n_blocks == 0;
    if (empty)
        insert_block(o, 0);
    for (uint32_t k = 0, b = 0; k < n_add;) {
        if (!empty) /* an empty block has no first index to compare */
            b = block_for(o, rec, ties, b, add[k].at_us, add[k].tie);
        /* the group: those that go before the next block's first */
        uint32_t m = k + 1;
        if (b + 1 < o->n_blocks) {
            uint32_t next = promise_order_items(o, b + 1)[0];
            while (m < n_add && !goes_before(rec, ties, next, add[m].at_us, add[m].tie))
                m++;
        } else {
            m = n_add;
        }
        /* block b and the group, merged */
        const uint32_t *items = promise_order_items(o, b);
        uint32_t n_items = o->block[b].n, i = 0, j = k, len = 0;
        while (i < n_items || j < m) {
            int take_item = j == m || (i < n_items && goes_before(rec, ties, items[i], add[j].at_us, add[j].tie));
            o->merged[len++] = take_item ? items[i++] : add[j++].rec;
        }
        /* written back over as few blocks as hold it, evenly */
        uint32_t c = (len + o->block_max - 1) / o->block_max;
        if (c == 1) {
            /* one block: it keeps its summary, noting what joined */
            memcpy(promise_order_items(o, b), o->merged, len * sizeof *o->merged);
            struct promise_order_block *blk = &o->block[b];
            for (uint32_t x = k; x < m; x++)
                note(blk, &rec[add[x].rec], n_items == 0 && x == k);
            blk->n = len;
            blk->first_at = rec[o->merged[0]].at_us;
            blk->last_at = rec[o->merged[len - 1]].at_us;
        } else {
            for (uint32_t x = 1; x < c; x++)
                insert_block(o, b + x);
            for (uint32_t x = 0, at = 0; x < c; x++) {
                uint32_t n = len / c + (x < len % c);
                memcpy(promise_order_items(o, b + x), &o->merged[at], n * sizeof *o->merged);
                o->block[b + x].n = n;
                summarize(o, rec, b + x);
                at += n;
            }
        }
        o->n += m - k;
        b += c - 1;
        k = m;
    }
    return 0;
}

void promise_order_remove(struct promise_order *o, const struct promise *rec, const struct promise_order_place *at,
                          uint32_t n)
{
    if (n == 0)
        return;
    /* from the last: a removal moves no place before it */
    int extreme = 0; /* a promise taken from the block held its fewest slots or an extreme length */
    for (uint32_t k = n; k-- > 0;) {
        uint32_t b = at[k].block;
        struct promise_order_block *blk = &o->block[b];
        uint32_t *items = promise_order_items(o, b);
        const struct promise *p = &rec[items[at[k].i]];
        extreme |= p->slots == blk->least_slots || p->dur_us == blk->least_dur || p->dur_us == blk->most_dur;
        memmove(&items[at[k].i], &items[at[k].i + 1], (blk->n - at[k].i - 1) * sizeof *items);
        blk->n--;
        o->n--;
        if (k > 0 && at[k - 1].block == b)
            continue; /* more to take from this block */
        if (blk->n == 0) {
            drop_block(o, b);
        } else if (extreme) {
            summarize(o, rec, b);
        } else {
            blk->first_at = rec[items[0]].at_us;
            blk->last_at = rec[items[blk->n - 1]].at_us;
        }
        extreme = 0;
    }
    /* two neighbours holding half a block or less merge, from the first
     * block that lost an index (or the one before it) to the last (drops
     * and merges only lower its place) */
    for (uint32_t b = at[0].block > 0 ? at[0].block - 1 : 0; b + 1 < o->n_blocks && b <= at[n - 1].block;) {
        if (o->block[b].n + o->block[b + 1].n > o->block_max / 2) {
            b++;
            continue;
        }
        memcpy(promise_order_items(o, b) + o->block[b].n, promise_order_items(o, b + 1),
               o->block[b + 1].n * sizeof *o->item);
        o->block[b].n += o->block[b + 1].n;
        drop_block(o, b + 1);
        summarize(o, rec, b);
    }
}

int promise_order_whole(const struct promise_order *o, const struct promise *rec)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < o->n_blocks; b++) {
        const struct promise_order_block *blk = &o->block[b];
        if (blk->n == 0 || blk->n > o->block_max || (b > 0 && o->block[b - 1].n + blk->n <= o->block_max / 2))
            return 0;
        struct promise_order_block sum = summary_of(o, rec, b);
        if (memcmp(&sum, blk, sizeof sum) != 0)
            return 0;
        n += blk->n;
    }
    return n == o->n;
}
