#include "policies/length_bounds.h"

void length_bounds_note(struct length_bounds *b, int64_t slots, int64_t dur_us, int64_t at)
{
    uint32_t k = 0;
    while (k < b->n && b->slots[k] != slots)
        k++;
    if (k == b->n) {
        if (k == LENGTH_BOUNDS_SIZES)
            return;
        b->n++;
        b->slots[k] = slots;
        for (uint32_t i = 0; i <= b->top; i++)
            b->up_to[k][i] = INT64_MIN;
    }
    uint32_t band = length_band(dur_us);
    for (; b->top < band; b->top++) /* the bands above the top hold the top's */
        for (uint32_t j = 0; j < b->n; j++)
            b->up_to[j][b->top + 1] = b->up_to[j][b->top];
    /* the prefix maximum from its band on stops rising where an entry
     * already holds as late a start (entries only rise with the band) */
    int64_t *up_to = b->up_to[k];
    for (uint32_t i = band; i <= b->top && up_to[i] < at; i++)
        up_to[i] = at;
}
