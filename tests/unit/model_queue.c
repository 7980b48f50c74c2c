#include "tests/unit/model_queue.h"

#include <string.h>

static void dirty(struct model_queue *m, uint64_t a, uint64_t b)
{
    if (m->n_dirt == MODEL_QUEUE_MAX_DIRT) {
        m->tracked = 0; /* too much to say: a host may say nothing */
        return;
    }
    m->dirt[2 * m->n_dirt] = a;
    m->dirt[2 * m->n_dirt + 1] = b;
    m->n_dirt++;
}

static struct policy_job random_job(struct model_queue *m, struct pcg32 *r)
{
    struct policy_job j = {0};
    j.id = ++m->next_id;
    /* arrivals three at a time (ties for orderings that read it); a job
     * requeued near the head arrived after those behind it */
    j.submit_us = (j.id / 3) * 1000000;
    j.slots = 1 + (int32_t)pcg32_bounded(r, pcg32_bounded(r, 4) == 0 ? 64 : 8);
    j.estimate_us = pcg32_bounded(r, 20) == 0 ? 0 : 1 + (int64_t)pcg32_bounded(r, 1000);
    if (pcg32_bounded(r, 10) == 0) {
        j.slots = 1;
        j.milli = 1 + (int32_t)pcg32_bounded(r, 999);
    }
    /* a quarter ran before (preempted and requeued): service attained,
     * for SRTF and Tiresias (no draw, so the sequence stays the one the
     * other tests were tuned on) */
    j.attained_us = j.id % 4 == 0 ? (j.id % 9) * 50 * (int64_t)j.slots : 0;
    return j;
}

void model_queue_change(struct model_queue *m, struct pcg32 *r)
{
    uint32_t what = pcg32_bounded(r, 10);
    if (what < 4 && m->off + m->n < MODEL_QUEUE_CAP) { /* arrivals at the end */
        uint32_t k = 1 + pcg32_bounded(r, 30);
        if (k > MODEL_QUEUE_CAP - m->off - m->n)
            k = MODEL_QUEUE_CAP - m->off - m->n;
        for (uint32_t i = 0; i < k; i++)
            m->buf[m->off + m->n + i] = random_job(m, r);
        dirty(m, m->off + m->n, m->off + m->n + k);
        m->n += k;
    } else if (what < 8 && m->n > 0) { /* starts: near the head, or anywhere */
        uint8_t gone[MODEL_QUEUE_CAP] = {0};
        uint32_t first = m->n, last = 0, k = 1 + pcg32_bounded(r, 5);
        for (uint32_t i = 0; i < k; i++) {
            uint32_t p = pcg32_bounded(r, 2) ? pcg32_bounded(r, m->n < 8 ? m->n : 8) : pcg32_bounded(r, m->n);
            gone[p] = 1;
            first = p < first ? p : first;
            last = p > last ? p : last;
        }
        uint32_t removed = 0;
        for (uint32_t p = 0; p < m->n; p++)
            removed += gone[p];
        if (m->n - first <= last + 1) { /* close toward the head */
            dirty(m, m->off + first, m->off + m->n);
            uint32_t w = first;
            for (uint32_t p = first; p < m->n; p++)
                if (!gone[p])
                    m->buf[m->off + w++] = m->buf[m->off + p];
        } else { /* toward the end: the queue begins further on */
            dirty(m, m->off, m->off + last + 1);
            uint32_t w = last + 1;
            for (uint32_t p = last + 1; p-- > 0;)
                if (!gone[p])
                    m->buf[m->off + --w] = m->buf[m->off + p];
            m->off += removed;
        }
        m->n -= removed;
    } else if (what == 8 && m->off > 0 && m->n > 0) { /* a requeue near the head */
        uint32_t pos = pcg32_bounded(r, m->n < 4 ? m->n : 4);
        m->off--;
        memmove(&m->buf[m->off], &m->buf[m->off + 1], pos * sizeof m->buf[0]);
        m->buf[m->off + pos] = random_job(m, r);
        m->n++;
        dirty(m, m->off, m->off + pos + 1);
    } else if (what == 9) { /* the queue moves: nothing can be said */
        memmove(&m->buf[0], &m->buf[m->off], m->n * sizeof m->buf[0]);
        m->off = 0;
        m->tracked = 0;
    }
}

void model_queue_view(const struct model_queue *m, struct cluster_view *v)
{
    v->queued = &m->buf[m->off];
    v->n_queued = m->n;
    v->queue_origin = m->off;
    v->queue_dirty = m->dirt;
    v->n_queue_dirty = m->n_dirt;
    v->queue_tracked = m->tracked;
}

void model_queue_passed(struct model_queue *m)
{
    m->n_dirt = 0;
    m->tracked = 1;
}
