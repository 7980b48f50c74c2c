#include "models/distribution.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <string.h>

/* Gamma(1 + 1/shape), the Weibull mean's factor; +inf where it overflows
 * (shape below about 0.0059) rather than GSL's error handler. */
static double weibull_gamma(double shape)
{
    if (!(shape > 0))
        return HUGE_VAL;
    /* the _e form still calls GSL's handler, which aborts unless the host
     * turned it off: off for this call, whoever links the library */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_sf_result r;
    int status = gsl_sf_gamma_e(1.0 + 1.0 / shape, &r);
    gsl_set_error_handler(old);
    return status == GSL_SUCCESS && isfinite(r.val) ? r.val : HUGE_VAL;
}

int distribution_weibull_shape_ok(double shape)
{
    return isfinite(weibull_gamma(shape));
}

static const char *const kind_names[] = {"fixed", "uniform", "exponential", "weibull", "lognormal"};

double distribution_sample(const struct distribution *d, struct pcg32 *rng)
{
    double u = pcg32_unit_open(rng);
    switch (d->kind) {
    case DIST_FIXED:
        return d->a;
    case DIST_UNIFORM:
        return d->a + (d->b - d->a) * u;
    case DIST_EXPONENTIAL:
        return -d->a * log(u);
    case DIST_WEIBULL:
        return d->b * pow(-log(u), 1.0 / d->a);
    case DIST_LOGNORMAL:
        return d->a * exp(d->b * gsl_cdf_ugaussian_Pinv(u));
    }
    return 0;
}

double distribution_mean(const struct distribution *d)
{
    switch (d->kind) {
    case DIST_FIXED:
        return d->a;
    case DIST_UNIFORM:
        return (d->a + d->b) / 2;
    case DIST_EXPONENTIAL:
        return d->a;
    case DIST_WEIBULL:
        return d->b * weibull_gamma(d->a);
    case DIST_LOGNORMAL:
        return d->a * exp(d->b * d->b / 2);
    }
    return 0;
}

struct distribution distribution_weibull_with_mean(double shape, double mean)
{
    struct distribution d = {DIST_WEIBULL, shape, mean / weibull_gamma(shape)};
    return d;
}

const char *distribution_kind_name(enum distribution_kind k)
{
    return kind_names[k];
}

int distribution_kind_parse(const char *name, enum distribution_kind *k)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof *kind_names; i++) {
        if (strcmp(kind_names[i], name) == 0) {
            *k = (enum distribution_kind)i;
            return 0;
        }
    }
    return -1;
}
