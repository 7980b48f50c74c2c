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
 * The queue is a binary heap. A pop leaves the top slot empty and the next
 * schedule fills it with one sift-down, so the common pattern of an event
 * that schedules its successor (the next arrival, a timer) costs one heap
 * pass instead of two; a peek or pop finishes the removal when nothing was
 * scheduled. Measured against a 4-ary heap, an 8-ary one, keys apart from
 * payloads and a calendar queue on recorded event streams and the hold model
 * (sim/README.md): this won or tied on every stream of a real run. Keys are
 * unique (the sequence), so any structure pops in the same order.
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

struct engine {
    struct event *heap;
    size_t n, cap;
    sim_time now_us;
    uint64_t next_seq;
    uint64_t events_run;
    int top_taken; /* heap[0] was popped; its removal waits for the next call */
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
 * not run yet (cancelling one that ran leaks an entry and miscounts
 * engine_pending). Returns 0, or -1 for a handle never issued, one already
 * cancelled, or no memory. */
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
