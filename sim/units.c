#include "sim/units.h"

#include <stdio.h>

void units_format_seconds(char *buf, size_t len, int64_t us)
{
    if (us < 0) {
        snprintf(buf, len, "-1");
        return;
    }
    long long whole = us / 1000000, frac = us % 1000000;
    if (!frac) {
        snprintf(buf, len, "%lld", whole);
        return;
    }
    int digits = 6;
    while (frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    snprintf(buf, len, "%lld.%0*lld", whole, digits, frac);
}
