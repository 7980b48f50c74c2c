/* distribution: the random durations the models draw (times between
 * failures, repair times, lead times), sampled by inverting the CDF so each
 * draw takes exactly one uniform from its PCG stream: a model that draws more
 * or fewer times never shifts another purpose's sequence.
 *
 * Parameters are seconds:
 *   fixed       value
 *   uniform     lo, hi
 *   exponential mean
 *   weibull     shape k, scale lambda       (mean lambda * Gamma(1 + 1/k))
 *   lognormal   median, sigma (of the log)  (mean median * exp(sigma^2 / 2))
 */
#ifndef FLEETSIM_MODELS_DISTRIBUTION_H
#define FLEETSIM_MODELS_DISTRIBUTION_H

#include "sim/pcg32.h"

enum distribution_kind { DIST_FIXED, DIST_UNIFORM, DIST_EXPONENTIAL, DIST_WEIBULL, DIST_LOGNORMAL };

struct distribution {
    enum distribution_kind kind;
    double a; /* value | lo | mean | shape | median */
    double b; /* -     | hi | -    | scale | sigma  */
};

double distribution_sample(const struct distribution *d, struct pcg32 *rng);
double distribution_mean(const struct distribution *d);
/* A Weibull with the given shape and mean. */
struct distribution distribution_weibull_with_mean(double shape, double mean);
/* Whether a Weibull of this shape has a finite mean factor Gamma(1 + 1/shape)
 * (false below about 0.0059, where it overflows a double). */
int distribution_weibull_shape_ok(double shape);
const char *distribution_kind_name(enum distribution_kind k);
int distribution_kind_parse(const char *name, enum distribution_kind *k);

#endif
