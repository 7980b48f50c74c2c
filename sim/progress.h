/* progress: a count one thread raises and others wait on, with a state
 * that ends it. A reader thread tells how far it has come (bytes
 * inflated, jobs read); the waiter blocks until the count reaches what it
 * wants or the state leaves PROGRESS_MORE (0). Every telling is under the
 * lock, so what the teller wrote before it is seen by the waiter after
 * its wait returns. */
#ifndef FLEETSIM_SIM_PROGRESS_H
#define FLEETSIM_SIM_PROGRESS_H

#include <pthread.h>
#include <stddef.h>

enum { PROGRESS_MORE = 0 }; /* any other state is the teller's own end */

struct progress {
    pthread_mutex_t lock;
    pthread_cond_t more;
    size_t count;
    int state;
};

/* 0, or -1 (nothing to release then). */
int progress_init(struct progress *p);
void progress_release(struct progress *p);
/* Sets the count and the state and wakes every waiter. */
void progress_tell(struct progress *p, size_t count, int state);
/* Blocks until count >= want or the state is not PROGRESS_MORE; returns
 * the count then, with *state. */
size_t progress_wait(struct progress *p, size_t want, int *state);
/* The state now, without waiting. */
int progress_state(struct progress *p);

#endif
