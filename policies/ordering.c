#include "policies/ordering.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/merge_sort.h"
#include "policies/radix_sort.h"

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

int ordering_key_compare(const struct ordering_key *a, const struct ordering_key *b)
{
    return ordering_key_before(b, a) - ordering_key_before(a, b);
}

MERGE_SORT_DEFINE(merge_keys, struct ordering_key, ordering_key_before)

/* Below this a merge sort is as fast (the radix sort reads every key
 * nine times or more whatever n is). */
#define RADIX_MIN_KEYS 512u

/* The radix sort applies when it gives the merge sort's order: without a
 * NaN, ordering_key_before is a total order and == groups exactly the
 * keys whose images are equal. (The order the keys come in does not
 * matter: every run of equal primaries is sorted by ordering_key_before
 * whole.) */
static int radix_applies(const struct ordering_key *keys, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (keys[i].primary != keys[i].primary || keys[i].secondary != keys[i].secondary)
            return 0;
    return 1;
}

/* By the primary (policies/radix_sort.h: its image sorted with each key's
 * place, the keys then gathered in that order), then each run of equal
 * primaries by the merge sort, which orders it by secondary and index
 * (short runs for SRTF's remaining times; long ones for Tiresias' few
 * queues, where a radix sort of the secondary within them measured no
 * faster). An SRTF pass over 10,000 queued jobs spent 30% of its time in
 * the merge sort alone, whose every step waits on the compare before it.
 * Out of memory, the merge sort gives the same order. */
static void radix_keys(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch)
{
    uint64_t *image = malloc(4 * (size_t)n * sizeof *image);
    if (!image) {
        merge_keys(keys, n, scratch);
        return;
    }
    uint64_t *place = image + n;
    for (uint32_t i = 0; i < n; i++) {
        /* -0.0 as 0.0, which ordering_key_before holds equal to it */
        image[i] = radix_key_double(keys[i].primary == 0 ? 0.0 : keys[i].primary);
        place[i] = i;
    }
    radix_sort_u64(image, place, n, image + 2 * (size_t)n, image + 3 * (size_t)n);
    for (uint32_t i = 0; i < n; i++)
        scratch[i] = keys[place[i]];
    memcpy(keys, scratch, (size_t)n * sizeof *keys);
    free(image);
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

void ordering_keys_order(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch, uint32_t *order)
{
    ordering_keys_sort(keys, n, scratch);
    for (uint32_t i = 0; i < n; i++)
        order[i] = keys[i].index;
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
    ordering_keys_order(keys, n, scratch, order);
}
