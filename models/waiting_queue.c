#include "models/waiting_queue.h"

#include <stdlib.h>
#include <string.h>

#include "sim/buffers.h"

void waiting_queue_init(struct waiting_queue *q)
{
    memset(q, 0, sizeof *q);
}

void waiting_queue_release(struct waiting_queue *q)
{
    if (!q)
        return;
    free(q->jobs_buf);
    free(q->w_buf);
    free(q->leaving);
    free(q->gaps_at);
    waiting_queue_init(q);
}

/* Notes that coordinates [a, b) may hold other jobs at the next view; past
 * WAITING_QUEUE_RANGES ranges, one covers them all. */
static void changed(struct waiting_queue *q, uint64_t a, uint64_t b)
{
    if (a >= b)
        return;
    if (q->n_dirty == WAITING_QUEUE_RANGES) {
        for (uint32_t k = 0; k < q->n_dirty; k++) {
            if (q->dirty[2 * k] < a)
                a = q->dirty[2 * k];
            if (q->dirty[2 * k + 1] > b)
                b = q->dirty[2 * k + 1];
        }
        q->n_dirty = 0;
    }
    q->dirty[2 * q->n_dirty] = a;
    q->dirty[2 * q->n_dirty + 1] = b;
    q->n_dirty++;
}

/* Moves the queue to the start of its buffers: every coordinate changes. */
static void slide(struct waiting_queue *q)
{
    q->tracked = 0;
    q->n_dirty = 0;
    memmove(q->jobs_buf, q->jobs, q->n * sizeof *q->jobs);
    memmove(q->w_buf, q->w, q->n * sizeof *q->w);
    q->off = 0;
    q->jobs = q->jobs_buf;
    q->w = q->w_buf;
}

/* Room for one more job at the end. The room the head's departures left is
 * reused once it is a quarter of the queue (so a slide costs O(1) a job),
 * otherwise the buffers grow (by at most a quarter wasted) and every job
 * keeps its coordinate. */
static int room(struct waiting_queue *q)
{
    if (q->off + q->n < q->cap)
        return 0;
    if (q->off > 0 && q->off >= q->n / 4) {
        slide(q);
        return 0;
    }
    uint32_t old_cap = q->cap, cap = old_cap;
    struct policy_job *jobs = q->jobs_buf;
    if (buffers_grow((void **)&jobs, &cap, q->off + q->n + 1, sizeof *jobs) != 0)
        return -1;
    q->jobs_buf = jobs;
    q->jobs = jobs + q->off;
    uint32_t *w = realloc(q->w_buf, cap * sizeof *w);
    if (!w)
        return -1; /* cap still the old one: the jobs' buffer is only larger */
    q->w_buf = w;
    q->w = w + q->off;
    uint8_t *leaving = realloc(q->leaving, cap * sizeof *leaving);
    if (!leaving)
        return -1;
    memset(leaving + old_cap, 0, (cap - old_cap) * sizeof *leaving);
    q->leaving = leaving;
    uint32_t *gaps_at = realloc(q->gaps_at, cap * sizeof *gaps_at);
    if (!gaps_at)
        return -1;
    q->gaps_at = gaps_at;
    q->cap = cap;
    return 0;
}

int waiting_queue_insert(struct waiting_queue *q, uint32_t wi, uint32_t *pos)
{
    if (room(q) != 0)
        return -1;
    /* after every job that arrived before it (w[] ascends, gaps included):
     * an arrival lands at the end at once; a requeued job (preempted, or
     * interrupted by a failure) is found by bisection, not by a walk back
     * over a backlog of tens of thousands */
    uint32_t p = q->n;
    if (p > 0 && q->w[p - 1] > wi) {
        uint32_t lo = 0, hi = p - 1; /* the first w > wi lies in [lo, hi] */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (q->w[mid] > wi)
                hi = mid;
            else
                lo = mid + 1;
        }
        p = lo;
    }
    if (p < q->n - p && q->off > 0) {
        /* near the head: the jobs before it move down one */
        q->off--;
        q->jobs--;
        q->w--;
        memmove(q->jobs, q->jobs + 1, p * sizeof *q->jobs);
        memmove(q->w, q->w + 1, p * sizeof *q->w);
        changed(q, q->off, q->off + p + 1);
    } else {
        memmove(&q->jobs[p + 1], &q->jobs[p], (q->n - p) * sizeof *q->jobs);
        memmove(&q->w[p + 1], &q->w[p], (q->n - p) * sizeof *q->w);
        changed(q, q->off + p, q->off + q->n + 1);
    }
    q->w[p] = wi;
    q->n++;
    *pos = p;
    return 0;
}

void waiting_queue_mark(struct waiting_queue *q, uint32_t pos)
{
    if (q->leaving[pos])
        return;
    q->leaving[pos] = 1;
    if (!q->n_leaving || pos < q->first_leaving)
        q->first_leaving = pos;
    if (!q->n_leaving || pos > q->last_leaving)
        q->last_leaving = pos;
    q->n_leaving++;
}

/* Moves the n jobs at [from, from + n) to [to, to + n). */
static void move_run(struct waiting_queue *q, uint32_t to, uint32_t from, uint32_t n)
{
    if (n && to != from) {
        memmove(&q->jobs[to], &q->jobs[from], n * sizeof *q->jobs);
        memmove(&q->w[to], &q->w[from], n * sizeof *q->w);
    }
}

/* The next marked position in [i, end), or end; clears its mark. A pass
 * marks few of a deep queue's jobs, so the gaps are found by memchr and
 * the runs between them move whole (memmove), instead of a test and a
 * copy per job. */
static uint32_t next_mark(struct waiting_queue *q, uint32_t i, uint32_t end)
{
    const uint8_t *m = i < end ? memchr(q->leaving + i, 1, end - i) : NULL;
    if (!m)
        return end;
    uint32_t at = (uint32_t)(m - q->leaving);
    q->leaving[at] = 0;
    return at;
}

/* Jobs that move when the first c of the k gaps g[] close toward the head
 * (what precedes them moves up) and the rest toward the end (what follows
 * them moves down), in a queue of n. */
static uint64_t moved_by(const uint32_t *g, uint32_t k, uint32_t c, uint32_t n)
{
    uint64_t up = c ? (uint64_t)g[c - 1] + 1 - c : 0;
    uint64_t down = c < k ? (uint64_t)n - g[c] - (k - c) : 0;
    return up + down;
}

/* The split c that moves the fewest jobs (moved_by), and that number. */
static uint32_t best_split(const uint32_t *g, uint32_t k, uint32_t n, uint64_t *least)
{
    uint32_t c = 0;
    *least = moved_by(g, k, 0, n);
    for (uint32_t i = 1; i <= k; i++) {
        uint64_t m = moved_by(g, k, i, n);
        if (m < *least) {
            *least = m;
            c = i;
        }
    }
    return c;
}

/* Closes the k gaps at positions g[] (ascending), each toward whichever end
 * moves fewer jobs: the first c of them (by position) toward the head, the
 * rest toward the end, c chosen to move the fewest (best_split). On a saturated cluster
 * one pass may start the head and a newcomer at the end of a queue of tens
 * of thousands: one direction for all the gaps moved (and the queue index
 * then re-read) every job between them. Jobs between the two groups keep
 * their coordinates. */
static void close_at(struct waiting_queue *q, const uint32_t *g, uint32_t k, uint32_t c)
{
    if (c < k) {
        /* toward the end: what follows gap c moves down, run by run */
        changed(q, q->off + g[c], q->off + q->n);
        uint32_t to = g[c];
        for (uint32_t i = c; i < k; i++) {
            uint32_t next = i + 1 < k ? g[i + 1] : q->n;
            move_run(q, to, g[i] + 1, next - g[i] - 1);
            to += next - g[i] - 1;
        }
    }
    if (c > 0) {
        /* toward the head: what precedes gap c - 1 moves up, run by run
         * from the last, and the queue begins c further on */
        changed(q, q->off, q->off + g[c - 1] + 1);
        uint32_t to = g[c - 1] + 1;
        for (uint32_t i = c; i-- > 0;) {
            uint32_t lo = i ? g[i - 1] + 1 : 0, len = g[i] - lo;
            to -= len;
            move_run(q, to, lo, len);
        }
        q->off += c;
        q->jobs += c;
        q->w += c;
    }
    q->n -= k;
}

/* Open gaps at either end leave the queue: no job moves. */
static void trim_gaps(struct waiting_queue *q)
{
    while (q->n_gaps && q->n && q->jobs[0].gap) {
        q->off++;
        q->jobs++;
        q->w++;
        q->n--;
        q->n_gaps--;
    }
    while (q->n_gaps && q->n && q->jobs[q->n - 1].gap) {
        q->n--;
        q->n_gaps--;
    }
}

/* Every open gap closes (close_at): they were an eighth of the queue. */
static void compact(struct waiting_queue *q)
{
    uint32_t k = 0;
    for (uint32_t p = 0; p < q->n && k < q->n_gaps; p++)
        if (q->jobs[p].gap)
            q->gaps_at[k++] = p;
    q->n_gaps = 0;
    uint64_t least;
    close_at(q, q->gaps_at, k, best_split(q->gaps_at, k, q->n, &least));
}

/* A pass's gaps close (close_at) when that moves few jobs, or when the
 * policy reads no gaps. Otherwise those that are cheap to close, near
 * either end, close, and the others stay open (policy.h, policy_job.gap):
 * each marked as a gap, its coordinate noted as changed. Once the open
 * gaps are an eighth of the queue they all close: a start deep in a queue
 * then moves at most 8 jobs, on average, where it moved up to half the
 * queue (a year on 16,384 GPUs whose backlog reaches 75,000 spent half its
 * last quarter moving jobs and re-reading them into the queue index). */
void waiting_queue_close_gaps(struct waiting_queue *q)
{
    uint32_t gone = q->n_leaving, first = q->first_leaving, last = q->last_leaving;
    if (!gone)
        return;
    q->n_leaving = 0;
    uint32_t *g = q->gaps_at, k = 0;
    for (uint32_t gap = next_mark(q, first, last + 1); gap <= last; gap = next_mark(q, gap + 1, last + 1))
        g[k++] = gap;
    uint64_t least;
    uint32_t c = best_split(g, k, q->n, &least);
    if (!q->keep_gaps || least <= WAITING_QUEUE_GAP_MOVES) {
        close_at(q, g, k, c);
        trim_gaps(q);
        return;
    }
    /* the cheap ones: a prefix toward the head, a suffix toward the end */
    uint32_t a = 0, b = k;
    while (a < k && g[a] + 1 - (a + 1) <= WAITING_QUEUE_GAP_MOVES)
        a++;
    while (b > a && q->n - g[b - 1] - (k - b + 1) <= WAITING_QUEUE_GAP_MOVES)
        b--;
    for (uint32_t i = a; i < b; i++) {
        q->jobs[g[i]].gap = 1;
        changed(q, q->off + g[i], q->off + g[i] + 1);
    }
    q->n_gaps += b - a;
    memmove(g + a, g + b, (k - b) * sizeof *g);
    close_at(q, g, a + (k - b), a); /* the prefix toward the head, the suffix toward the end */
    trim_gaps(q);
    if (q->n_gaps > q->n / 8)
        compact(q);
}

uint32_t waiting_queue_waiting(const struct waiting_queue *q)
{
    return q->n - q->n_gaps;
}

void waiting_queue_view(const struct waiting_queue *q, struct cluster_view *v, int record)
{
    v->queued = q->jobs;
    v->n_queued = q->n;
    v->queue_origin = q->off;
    v->queue_dirty = q->dirty;
    v->n_queue_dirty = q->n_dirty;
    v->queue_tracked = q->tracked && record;
    v->n_queue_gaps = q->n_gaps;
}

void waiting_queue_seen(struct waiting_queue *q)
{
    q->n_dirty = 0;
    q->tracked = 1;
}
