/* engine: the discrete-event core. A clock in integer microseconds and a
 * priority queue of events ordered by (time, priority class, insertion
 * sequence), so that ties never depend on pointer values or hash order, and
 * failures and completions settle before arrivals at one instant (a host may
 * put a completion after them, in EVENT_CLASS_LATE_COMPLETION).
 *
 * The engine knows nothing of jobs or clusters: an event is a kind, a class and
 * two integer arguments that the host interprets. engine_run_until() pops
 * events, hands each to the host, and after the last event of an instant calls
 * the host's end-of-instant hook once (where the scheduling pass runs); events
 * the hook schedules at the same instant start a new round at that instant.
 *
 * The queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) with
 * 8-bit digits: a pending event lies in the bucket named by the highest
 * digit in which its time differs from the time of the last event popped,
 * and by its own digit there. Times only move forward, so the lowest
 * non-empty bucket holds the earliest event; when the events at the last
 * time are all taken, that bucket is emptied into lower ones relative to
 * its least time, and the events at that time form the "current" set,
 * ordered by (class, sequence) in a small binary heap. An event moves at
 * most 8 times (a level a move), mostly once or twice, where a binary heap
 * compares log2(n) times on every pop, a branch the processor cannot
 * guess. Events live in one pool and buckets are linked lists through it,
 * so moving events between buckets never allocates (a pop cannot fail).
 * Chosen by measurement against the binary heap it replaced (sim/README.md).
 * Keys are unique (the sequence), so the order is exactly the heap's.
 *
 * Cancellation is lazy: a cancelled event stays in the heap and is dropped
 * when it reaches the top. Scheduling into the past is refused.
 */
#ifndef FLEETSIM_SIM_ENGINE_H
#define FLEETSIM_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

typedef int64_t sim_time; /* microseconds of simulated time */

#define SIM_US_PER_S INT64_C(1000000)
#define SIM_TIME_NEVER INT64_MAX

/* Lower classes run first at equal times. */
enum event_class {
    EVENT_CLASS_FAILURE = 0,
    EVENT_CLASS_COMPLETION = 1,
    EVENT_CLASS_CAPACITY = 2,
    EVENT_CLASS_ARRIVAL = 3,
    EVENT_CLASS_LATE_COMPLETION = 4, /* a host that settles some ends after arrivals */
    EVENT_CLASS_TIMER = 5,
    EVENT_CLASS_COUNT
};

struct event {
    sim_time time_us;
    uint64_t order; /* class in the top 8 bits, insertion sequence below */
    int64_t arg;
    int32_t kind;
    int32_t aux;
};

struct cancel_set {
    uint64_t *slots; /* 0 = empty; sequence numbers start at 1 */
    size_t cap, n;
};

/* Radix-heap geometry: 8 levels of 256 buckets, and bucket 0 for the
 * events at the current time. */
enum { ENGINE_DIGIT_BITS = 8, ENGINE_BUCKETS = 1 + (64 / ENGINE_DIGIT_BITS << ENGINE_DIGIT_BITS) };

struct engine {
    struct event *pool;  /* every pending event; free slots chained through next */
    uint32_t *next;      /* in a bucket's list, or the free list */
    uint32_t *current;   /* the events at the current time: a heap of pool slots by order */
    uint32_t *head;      /* ENGINE_BUCKETS list heads (UINT32_MAX: empty); [0] unused */
    uint64_t nonempty[(ENGINE_BUCKETS + 63) / 64]; /* a bit per bucket that holds events */
    uint64_t nonempty_words;                         /* a bit per word of it that is not 0 */
    uint32_t cap;        /* slots in pool, next and current */
    uint32_t free_slot, n_current;
    uint64_t last;       /* the key (time, sign flipped) buckets are relative to */
    /* A peek's answer, kept for the pop: the lowest non-empty bucket (0:
     * not known) and the slot of its earliest live event. */
    uint32_t low_bucket, low_slot;
    size_t n;            /* pending, cancelled ones included */
    sim_time now_us;
    uint64_t next_seq;
    uint64_t events_run;
    struct cancel_set cancelled;
};

struct engine_handlers {
    /* Return non-zero to stop the run (the value is returned). */
    int (*event)(void *ctx, const struct event *ev);
    int (*instant_end)(void *ctx, sim_time now_us);
    void *ctx;
};

void engine_init(struct engine *e, sim_time start_us);
void engine_release(struct engine *e);

/* Returns a handle (> 0) for engine_cancel, or 0 if time_us is before now or
 * memory ran out. */
uint64_t engine_schedule(struct engine *e, sim_time time_us, enum event_class cls, int32_t kind,
                         int64_t arg, int32_t aux);
/* Cancels a pending event in O(1). The handle must be of an event that has
 * neither run nor been cancelled: cancelling one that ran leaks an entry and
 * miscounts engine_pending, and so does cancelling one twice once the queue
 * has dropped it (which it may do before its time, when it files the events
 * around it). Returns 0, or -1 for a handle never issued, one cancelled and
 * not yet dropped, or no memory. */
int engine_cancel(struct engine *e, uint64_t handle);

sim_time engine_now(const struct engine *e);
/* Time of the next live event, or SIM_TIME_NEVER. */
sim_time engine_next_time(struct engine *e);
size_t engine_pending(const struct engine *e);
/* Pops the next live event and advances the clock to it; 0 if none. */
int engine_pop(struct engine *e, struct event *out);

/* Runs events with time <= until_us (SIM_TIME_NEVER: until none are left).
 * Returns 0, or the first non-zero value a handler returned. */
int engine_run_until(struct engine *e, sim_time until_us, const struct engine_handlers *h);

#endif
