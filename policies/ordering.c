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

void ordering_keys_sort(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch)
{
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
