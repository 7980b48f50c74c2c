#include "policies/profile.h"

#include <stdlib.h>
#include <string.h>

void profile_init(struct profile *p)
{
    memset(p, 0, sizeof *p);
}

void profile_release(struct profile *p)
{
    if (!p)
        return;
    free(p->time);
    free(p->free);
    memset(p, 0, sizeof *p);
}

static int profile_reserve_room(struct profile *p, uint32_t extra)
{
    if (p->n + extra <= p->cap)
        return 0;
    uint32_t cap = p->cap ? p->cap : 64;
    while (cap < p->n + extra)
        cap *= 2;
    int64_t *time = realloc(p->time, cap * sizeof *time);
    if (!time)
        return -1;
    p->time = time;
    int64_t *free_ = realloc(p->free, cap * sizeof *free_);
    if (!free_)
        return -1;
    p->free = free_;
    p->cap = cap;
    return 0;
}

int profile_reset(struct profile *p, int64_t now, int64_t free_now)
{
    p->n = 0;
    if (profile_reserve_room(p, 1) != 0)
        return -1;
    p->time[0] = now;
    p->free[0] = free_now;
    p->n = 1;
    return 0;
}

int profile_add_release(struct profile *p, int64_t t, int64_t slots)
{
    uint32_t last = p->n - 1;
    if (t <= p->time[last]) {
        p->free[last] += slots;
        return 0;
    }
    if (profile_reserve_room(p, 1) != 0)
        return -1;
    p->time[p->n] = t;
    p->free[p->n] = p->free[last] + slots;
    p->n++;
    return 0;
}

int64_t profile_earliest(const struct profile *p, int64_t slots, int64_t dur)
{
    uint32_t k = 0;
    while (k < p->n) {
        if (p->free[k] < slots) {
            k++;
            continue;
        }
        int64_t end = p->time[k] + dur;
        uint32_t j = k + 1;
        while (j < p->n && p->time[j] < end && p->free[j] >= slots)
            j++;
        if (j == p->n || p->time[j] >= end)
            return p->time[k];
        k = j + 1; /* step j is too small: no start before it can work */
    }
    return INT64_MAX; /* cannot happen when slots <= capacity */
}

/* Index of the step starting exactly at t, inserting a breakpoint if needed. */
static int64_t split_at(struct profile *p, int64_t t)
{
    uint32_t lo = 0, hi = p->n; /* first index with time > t */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (p->time[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t k = lo - 1; /* step containing t (p->time[0] <= t always) */
    if (p->time[k] == t)
        return k;
    if (profile_reserve_room(p, 1) != 0)
        return -1;
    memmove(&p->time[k + 2], &p->time[k + 1], (p->n - k - 1) * sizeof *p->time);
    memmove(&p->free[k + 2], &p->free[k + 1], (p->n - k - 1) * sizeof *p->free);
    p->time[k + 1] = t;
    p->free[k + 1] = p->free[k];
    p->n++;
    return k + 1;
}

int profile_reserve(struct profile *p, int64_t t, int64_t dur, int64_t slots)
{
    int64_t a = split_at(p, t);
    if (a < 0)
        return -1;
    int64_t b = split_at(p, t + dur);
    if (b < 0)
        return -1;
    for (int64_t k = a; k < b; k++)
        p->free[k] -= slots;
    return 0;
}
