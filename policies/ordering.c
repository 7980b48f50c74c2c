#include "policies/ordering.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/merge_sort.h"

static const char *const ordering_names[] = {
    [ORDERING_FCFS] = "fcfs",
    [ORDERING_SJF] = "sjf",
    [ORDERING_F1] = "f1",
    [ORDERING_WFP3] = "wfp3",
    [ORDERING_UNICEP] = "unicep",
};

int ordering_parse(const char *name, size_t len, enum ordering_kind *kind)
{
    for (size_t k = 0; k < sizeof ordering_names / sizeof *ordering_names; k++) {
        if (strlen(ordering_names[k]) == len && strncmp(ordering_names[k], name, len) == 0) {
            *kind = (enum ordering_kind)k;
            return 0;
        }
    }
    return -1;
}

const char *ordering_name(enum ordering_kind kind)
{
    return ordering_names[kind];
}

int ordering_depends_on_time(enum ordering_kind kind)
{
    return kind == ORDERING_WFP3 || kind == ORDERING_UNICEP;
}

struct ordering_key ordering_key_of(enum ordering_kind kind, const struct policy_job *job,
                                    int64_t now_us, int compat_wait, uint32_t index)
{
    double s = (double)job->submit_us / 1e6;
    double r = (double)job->estimate_us / 1e6;
    double n = (double)job->slots;
    double w = compat_wait ? -1.0 - s : (double)(now_us - job->submit_us) / 1e6;
    struct ordering_key key = {0.0, 0.0, index};
    switch (kind) {
    case ORDERING_FCFS:
        key.primary = s;
        break;
    case ORDERING_SJF:
        key.primary = r;
        key.secondary = s;
        break;
    case ORDERING_F1:
        key.primary = log10(r <= 0 ? 0.1 : r) * n + 870.0 * log10(s <= 0 ? 0.1 : s);
        break;
    case ORDERING_WFP3:
        key.primary = -pow(w / r, 3) * n;
        break;
    case ORDERING_UNICEP:
        key.primary = -(w + 1e-15) / (log2(n + 1e-15) * r);
        break;
    }
    return key;
}

static inline int key_before(const struct ordering_key *a, const struct ordering_key *b)
{
    if (a->primary != b->primary)
        return a->primary < b->primary;
    if (a->secondary != b->secondary)
        return a->secondary < b->secondary;
    return a->index < b->index;
}

int ordering_key_compare(const struct ordering_key *a, const struct ordering_key *b)
{
    return key_before(b, a) - key_before(a, b);
}

MERGE_SORT_DEFINE(merge_keys, struct ordering_key, key_before)

/* An image of a double whose unsigned order is the double's: the sign bit
 * set for the positives, every bit flipped for the negatives; -0.0 taken
 * as 0.0, which key_before holds equal to it. */
static inline uint64_t ordered_bits(double x)
{
    if (x == 0)
        x = 0.0;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 63 ? ~u : u | UINT64_C(1) << 63;
}

/* Byte b of the image of the key's primary. */
static inline unsigned primary_byte(const struct ordering_key *k, unsigned b)
{
    return (unsigned)(ordered_bits(k->primary) >> (8 * b)) & 0xffu;
}

/* Below this a merge sort is as fast (the radix sort reads every key
 * nine times or more whatever n is). */
#define RADIX_MIN_KEYS 512u

/* The radix sort applies when it gives the merge sort's order: without a
 * NaN, key_before is a total order and == groups exactly the keys whose
 * images are equal. (The order the keys come in does not matter: every
 * run of equal primaries is sorted by key_before whole.) */
static int radix_applies(const struct ordering_key *keys, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (keys[i].primary != keys[i].primary || keys[i].secondary != keys[i].secondary)
            return 0;
    return 1;
}

/* By the primary, least significant byte first, stable, skipping the
 * bytes every key shares; then each run of equal primaries by the merge
 * sort, which orders it by secondary and index (short runs for SRTF's
 * remaining times; long ones for Tiresias' few queues, where a radix sort
 * of the secondary within them measured no faster). An
 * SRTF pass over 10,000 queued jobs spent 30% of its time in the merge
 * sort alone, whose every step waits on the compare before it. */
static void radix_keys(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch)
{
    uint32_t count[8][256]; /* on the stack: passes may run in parallel threads */
    memset(count, 0, sizeof count);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t bits = ordered_bits(keys[i].primary);
        for (unsigned b = 0; b < 8; b++)
            count[b][(bits >> (8 * b)) & 0xffu]++;
    }
    struct ordering_key *src = keys, *dst = scratch;
    for (unsigned b = 0; b < 8; b++) {
        uint32_t *c = count[b], sum = 0;
        if (c[primary_byte(&src[0], b)] == n)
            continue; /* every key has this byte */
        for (unsigned v = 0; v < 256; v++) {
            uint32_t here = c[v];
            c[v] = sum;
            sum += here;
        }
        for (uint32_t i = 0; i < n; i++)
            dst[c[primary_byte(&src[i], b)]++] = src[i];
        struct ordering_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, (size_t)n * sizeof *keys);
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && keys[j].primary == keys[i].primary; j++)
            ;
        if (j - i > 1)
            merge_keys(keys + i, j - i, scratch);
    }
}

void ordering_keys_sort(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch)
{
    if (n >= RADIX_MIN_KEYS && radix_applies(keys, n))
        radix_keys(keys, n, scratch);
    else
        merge_keys(keys, n, scratch);
}

void ordering_sort(enum ordering_kind kind, const struct cluster_view *view, int compat_wait,
                   struct ordering_key *keys, struct ordering_key *scratch, uint32_t *order)
{
    uint32_t n = view->n_queued;
    if (kind == ORDERING_FCFS) {
        /* The queue is in arrival order, which is FCFS order by definition. */
        for (uint32_t i = 0; i < n; i++)
            order[i] = i;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        keys[i] = ordering_key_of(kind, &view->queued[i], view->now_us, compat_wait, i);
    ordering_keys_sort(keys, n, scratch);
    for (uint32_t i = 0; i < n; i++)
        order[i] = keys[i].index;
}
