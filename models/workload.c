#include "models/workload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"

void workload_init(struct workload *w)
{
    memset(w, 0, sizeof *w);
    w->meta.max_nodes = -1;
    w->meta.max_procs = -1;
    w->meta.unix_start_s = -1;
}

void string_table_release(struct string_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->items[i]);
    free(t->items);
    free(t->index);
    memset(t, 0, sizeof *t);
}

void workload_release(struct workload *w)
{
    if (!w)
        return;
    free(w->jobs);
    string_table_release(&w->users);
    string_table_release(&w->teams);
    string_table_release(&w->gpu_models);
    memset(w, 0, sizeof *w);
}

/* Room for n jobs (n above the capacity); the part not yet filled asks
 * for huge pages. Returns 0 or -1 (memory, the array as it was). */
static int workload_grow_to(struct workload *w, size_t n)
{
    if (n > SIZE_MAX / sizeof *w->jobs)
        return -1;
    struct job *jobs = w->jobs ? realloc(w->jobs, n * sizeof *jobs) : buffers_alloc_large(n * sizeof *jobs);
    if (!jobs)
        return -1;
    if (w->jobs)
        buffers_prefer_huge_pages(jobs + w->n, (n - w->n) * sizeof *jobs);
    w->jobs = jobs;
    w->cap = n;
    return 0;
}

struct job *workload_push(struct workload *w, const struct job *j)
{
    if (w->n == w->cap && workload_grow_to(w, w->cap ? w->cap * 2 : 1024) != 0)
        return NULL;
    w->jobs[w->n] = *j;
    return &w->jobs[w->n++];
}

void workload_reserve(struct workload *w, size_t n)
{
    if (n > w->cap)
        (void)workload_grow_to(w, n); /* a hint: without it the pushes grow the array */
}

static int job_submit_cmp(const void *pa, const void *pb)
{
    const struct job *a = pa, *b = pb;
    if (a->submit_us != b->submit_us)
        return a->submit_us < b->submit_us ? -1 : 1;
    if (a->id != b->id)
        return a->id < b->id ? -1 : 1;
    return a->source_line < b->source_line ? -1 : a->source_line > b->source_line;
}

int workload_in_arrival_order(const struct job *a, const struct job *b)
{
    return job_submit_cmp(a, b) <= 0;
}

void workload_sort_by_submit(struct workload *w)
{
    /* Already sorted is the common case for real logs: check before sorting. */
    for (size_t i = 1; i < w->n; i++) {
        if (!workload_in_arrival_order(&w->jobs[i - 1], &w->jobs[i])) {
            qsort(w->jobs, w->n, sizeof *w->jobs, job_submit_cmp);
            return;
        }
    }
}

int32_t workload_max_slots(const struct workload *w)
{
    int32_t m = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->jobs[i].slots > m)
            m = w->jobs[i].slots;
    return m;
}

static uint64_t string_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int string_table_reindex(struct string_table *t, size_t cap)
{
    int32_t *index = malloc(cap * sizeof *index);
    if (!index)
        return -1;
    for (size_t i = 0; i < cap; i++)
        index[i] = -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = string_hash(t->items[i]) & (cap - 1);
        while (index[j] >= 0)
            j = (j + 1) & (cap - 1);
        index[j] = (int32_t)i;
    }
    free(t->index);
    t->index = index;
    t->index_cap = cap;
    return 0;
}

int32_t string_table_intern(struct string_table *t, const char *s)
{
    if ((t->n + 1) * 2 > t->index_cap &&
        string_table_reindex(t, t->index_cap ? t->index_cap * 2 : 64) != 0)
        return -1;
    size_t mask = t->index_cap - 1, j = string_hash(s) & mask;
    while (t->index[j] >= 0) {
        if (strcmp(t->items[t->index[j]], s) == 0)
            return t->index[j];
        j = (j + 1) & mask;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **items = realloc(t->items, cap * sizeof *items);
        if (!items)
            return -1;
        t->items = items;
        t->cap = cap;
    }
    size_t len = strlen(s) + 1;
    char *copy = malloc(len);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    t->items[t->n] = copy;
    t->index[j] = (int32_t)t->n;
    return (int32_t)t->n++;
}

const char *string_table_get(const struct string_table *t, int32_t index)
{
    if (index < 0 || (size_t)index >= t->n)
        return NULL;
    return t->items[index];
}

double job_bounded_slowdown(sim_time wait_us, sim_time run_us, sim_time bound_us)
{
    double run = (double)(run_us > bound_us ? run_us : bound_us);
    double v = ((double)wait_us + (double)run_us) / run;
    return v > 1.0 ? v : 1.0;
}

const char *workload_job_models(const struct workload *w, const struct job *j)
{
    return j->gpu_models > 0 ? string_table_get(&w->gpu_models, j->gpu_models - 1) : NULL;
}

double job_gpu_share(const struct job *j)
{
    if (j->gpu_milli > 0 && j->gpu_milli < 1000)
        return (double)j->gpu_milli / 1000.0;
    return (double)j->slots;
}
