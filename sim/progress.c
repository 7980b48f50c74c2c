#include "sim/progress.h"

int progress_init(struct progress *p)
{
    p->count = 0;
    p->state = PROGRESS_MORE;
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        return -1;
    if (pthread_cond_init(&p->more, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        return -1;
    }
    return 0;
}

void progress_release(struct progress *p)
{
    pthread_cond_destroy(&p->more);
    pthread_mutex_destroy(&p->lock);
}

void progress_tell(struct progress *p, size_t count, int state)
{
    pthread_mutex_lock(&p->lock);
    p->count = count;
    p->state = state;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
}

size_t progress_wait(struct progress *p, size_t want, int *state)
{
    pthread_mutex_lock(&p->lock);
    while (p->count < want && p->state == PROGRESS_MORE)
        pthread_cond_wait(&p->more, &p->lock);
    size_t count = p->count;
    *state = p->state;
    pthread_mutex_unlock(&p->lock);
    return count;
}

int progress_state(struct progress *p)
{
    int state;
    progress_wait(p, 0, &state);
    return state;
}
