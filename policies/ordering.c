#include "policies/ordering.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    if (a->primary != b->primary)
        return a->primary < b->primary ? -1 : 1;
    if (a->secondary != b->secondary)
        return a->secondary < b->secondary ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static inline int key_before(const struct ordering_key *a, const struct ordering_key *b)
{
    if (a->primary != b->primary)
        return a->primary < b->primary;
    if (a->secondary != b->secondary)
        return a->secondary < b->secondary;
    return a->index < b->index;
}

/* Runs this long are put in order by insertion, then merged pairwise. */
#define ORDERING_RUN 16u

void ordering_keys_sort(struct ordering_key *keys, uint32_t n, struct ordering_key *scratch)
{
    for (uint32_t lo = 0; lo < n; lo += ORDERING_RUN) {
        uint32_t hi = n - lo < ORDERING_RUN ? n : lo + ORDERING_RUN;
        for (uint32_t i = lo + 1; i < hi; i++) {
            struct ordering_key k = keys[i];
            uint32_t j = i;
            for (; j > lo && key_before(&k, &keys[j - 1]); j--)
                keys[j] = keys[j - 1];
            keys[j] = k;
        }
    }
    struct ordering_key *src = keys, *dst = scratch;
    for (uint32_t width = ORDERING_RUN; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = n - lo < width ? n : lo + width;
            uint32_t hi = n - mid < width ? n : mid + width;
            uint32_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                dst[o++] = key_before(&src[b], &src[a]) ? src[b++] : src[a++];
            while (a < mid)
                dst[o++] = src[a++];
            while (b < hi)
                dst[o++] = src[b++];
        }
        struct ordering_key *t = src;
        src = dst;
        dst = t;
    }
    if (src != keys)
        memcpy(keys, src, (size_t)n * sizeof *keys);
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
