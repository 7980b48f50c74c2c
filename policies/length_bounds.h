/* length_bounds: per job size, the latest start noted for lengths below
 * each power of two, as a prefix maximum over the bands.
 *
 * Where the room a profile offers only shrinks as jobs are placed, a job
 * can start no earlier than a job no larger and no longer placed before it
 * could: conservative's profile notes every earliest start it finds
 * between resets (policies/profile.h), its promises every start a held
 * promise settles at in a pass (policies/promises.h), and each search
 * begins at the latest such start. A length is known only by its band
 * (floor(log2 us)), so only lengths in lower bands count as shorter.
 *
 * up_to[k][i]: the latest start noted for size slots[k] and a length
 * below 2^(i+1), INT64_MIN when none. Written only up to `top`, the
 * highest band noted: those above equal it, so a note rises through the
 * few bands real lengths span (10 minutes to a day lie in bands 29-36)
 * and not through all 64. A bound is a help, not a need: past
 * LENGTH_BOUNDS_SIZES sizes a note of another size is dropped. */
#ifndef FLEETSIM_POLICIES_LENGTH_BOUNDS_H
#define FLEETSIM_POLICIES_LENGTH_BOUNDS_H

#include <stdint.h>

#define LENGTH_BOUNDS_SIZES 16u

struct length_bounds {
    int64_t slots[LENGTH_BOUNDS_SIZES];
    int64_t up_to[LENGTH_BOUNDS_SIZES][64];
    uint32_t n, top;
};

/* floor(log2(length)); 0 for lengths below 2 us. */
static inline uint32_t length_band(int64_t dur_us)
{
    return 63u - (uint32_t)__builtin_clzll((uint64_t)(dur_us > 1 ? dur_us : 1));
}

static inline void length_bounds_clear(struct length_bounds *b)
{
    b->n = 0;
    b->top = 0;
}

/* The latest start noted for a size of at most `slots` and a length in a
 * band below dur's, or INT64_MIN. */
static inline int64_t length_bounds_below(const struct length_bounds *b, int64_t slots, int64_t dur_us)
{
    uint32_t band = b->n ? length_band(dur_us) : 0;
    if (band == 0)
        return INT64_MIN;
    uint32_t i = band - 1 < b->top ? band - 1 : b->top;
    int64_t latest = INT64_MIN;
    for (uint32_t k = 0; k < b->n; k++)
        if (b->slots[k] <= slots && b->up_to[k][i] > latest)
            latest = b->up_to[k][i];
    return latest;
}

/* Notes that a job of `slots` for `dur_us` starts at `at` at the earliest. */
void length_bounds_note(struct length_bounds *b, int64_t slots, int64_t dur_us, int64_t at);

#endif
