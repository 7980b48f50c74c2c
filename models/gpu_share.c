#include "models/gpu_share.h"

#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"

void gpu_share_init(struct gpu_share *s)
{
    memset(s, 0, sizeof *s);
}

void gpu_share_release(struct gpu_share *s)
{
    if (!s)
        return;
    free(s->gpus);
    memset(s, 0, sizeof *s);
}

/* The first position not before (node, gpu). */
static uint32_t lower_bound(const struct gpu_share *s, uint32_t node, int32_t gpu)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if ((uint32_t)s->gpus[mid].node < node || ((uint32_t)s->gpus[mid].node == node && s->gpus[mid].gpu < gpu))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int found(const struct gpu_share *s, uint32_t pos, uint32_t node, int32_t gpu)
{
    return pos < s->n && (uint32_t)s->gpus[pos].node == node && s->gpus[pos].gpu == gpu;
}

int gpu_share_take(struct gpu_share *s, uint32_t node, int32_t gpu, int32_t milli, int *opened)
{
    uint32_t pos = lower_bound(s, node, gpu);
    s->dirty = 1;
    *opened = !found(s, pos, node, gpu);
    if (!*opened) {
        s->gpus[pos].used_milli += milli;
        return 0;
    }
    if (buffers_grow((void **)&s->gpus, &s->cap, s->n + 1, sizeof *s->gpus) != 0)
        return -1;
    memmove(&s->gpus[pos + 1], &s->gpus[pos], (s->n - pos) * sizeof *s->gpus);
    s->gpus[pos] = (struct policy_shared_gpu){(int32_t)node, gpu, milli, 0};
    s->n++;
    return 0;
}

int gpu_share_give(struct gpu_share *s, uint32_t node, int32_t gpu, int32_t milli)
{
    uint32_t pos = lower_bound(s, node, gpu);
    if (!found(s, pos, node, gpu))
        return 0;
    s->dirty = 1;
    s->gpus[pos].used_milli -= milli;
    if (s->gpus[pos].used_milli > 0)
        return 0;
    memmove(&s->gpus[pos], &s->gpus[pos + 1], (s->n - pos - 1) * sizeof *s->gpus);
    s->n--;
    return 1;
}

void gpu_share_index(struct gpu_share *s, struct policy_node *nodes, uint32_t n_nodes)
{
    if (!s->dirty)
        return;
    s->dirty = 0;
    for (uint32_t i = 0; i < n_nodes; i++) {
        nodes[i].shared_first = 0;
        nodes[i].n_shared = 0;
    }
    for (uint32_t k = s->n; k-- > 0;) {
        nodes[s->gpus[k].node].shared_first = k;
        nodes[s->gpus[k].node].n_shared++;
    }
}
