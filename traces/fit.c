#include "traces/fit.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>
#include <gsl/gsl_roots.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIT_HOUR_S 3600.0
#define FIT_DAY_S 86400.0
#define FIT_WEEK_S (7 * 86400.0)

void fit_options_init(struct fit_options *o)
{
    o->by = FIT_BY_TEAM;
    o->min_jobs = 50;
    o->max_gpu_values = 0;
    o->z = 1.96;
}

void fit_result_release(struct fit_result *r)
{
    if (!r)
        return;
    for (size_t i = 0; r->groups && i < r->spec.n_teams; i++)
        free(r->groups[i].size_classes);
    workload_spec_release(&r->spec);
    free(r->groups);
    memset(r, 0, sizeof *r);
}

/* ---- goodness of fit ---- */

static double fit_cdf(const struct distribution *d, double x)
{
    if (x <= 0)
        return 0;
    switch (d->kind) {
    case DIST_LOGNORMAL:
        return d->b > 0 ? gsl_cdf_lognormal_P(x, log(d->a), d->b) : (x >= d->a);
    case DIST_WEIBULL:
        return gsl_cdf_weibull_P(x, d->b, d->a);
    case DIST_EXPONENTIAL:
        return gsl_cdf_exponential_P(x, d->a);
    case DIST_FIXED:
        return x >= d->a;
    case DIST_UNIFORM:
        return x <= d->a ? 0 : x >= d->b ? 1 : (x - d->a) / (d->b - d->a);
    }
    return 0;
}

double fit_ks(const double *sorted, size_t n, const struct distribution *d)
{
    double D = 0;
    for (size_t i = 0; i < n; i++) {
        double F = fit_cdf(d, sorted[i]);
        double above = (double)(i + 1) / (double)n - F, below = F - (double)i / (double)n;
        D = fmax(D, fmax(above, below));
    }
    return fmin(1, fmax(0, D));
}

/* ---- runtimes ---- */

struct weibull_data {
    const double *logy; /* log of runtime / geometric mean: mean 0 */
    size_t n;
};

/* The profile-likelihood equation of the shape k with mean(log y) = 0:
 * sum(y^k log y) / sum(y^k) - 1/k; increasing in k. */
static double weibull_eq(double k, void *p)
{
    const struct weibull_data *d = p;
    double s = 0, sl = 0;
    for (size_t i = 0; i < d->n; i++) {
        double yk = exp(k * d->logy[i]);
        s += yk;
        sl += yk * d->logy[i];
    }
    return sl / s - 1 / k;
}

/* The shape k that solves it: 0; -1 when the data give no root (the fit
 * keeps the lognormal); -2 out of memory. */
static int weibull_shape(const double *logy, size_t n, double *k_out)
{
    struct weibull_data d = {logy, n};
    gsl_function F = {weibull_eq, &d};
    double lo = 0.5, hi = 2;
    for (int i = 0; i < 60 && weibull_eq(lo, &d) > 0; i++)
        lo /= 2;
    for (int i = 0; i < 60 && weibull_eq(hi, &d) < 0; i++)
        hi *= 2;
    if (weibull_eq(lo, &d) > 0 || weibull_eq(hi, &d) < 0)
        return -1;
    gsl_root_fsolver *s = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
    if (!s)
        return -2; /* memory: not a fit that failed, which would quietly choose the lognormal */
    /* a NaN from odd data would make the bracket invalid: GSL says so (its
     * handler is off) and the fit falls back */
    if (gsl_root_fsolver_set(s, &F, lo, hi) != GSL_SUCCESS) {
        gsl_root_fsolver_free(s);
        return -1;
    }
    int status = GSL_CONTINUE;
    for (int iter = 0; iter < 200 && status == GSL_CONTINUE; iter++) {
        if (gsl_root_fsolver_iterate(s) != GSL_SUCCESS)
            break;
        status = gsl_root_test_interval(gsl_root_fsolver_x_lower(s), gsl_root_fsolver_x_upper(s), 0, 1e-12);
    }
    *k_out = gsl_root_fsolver_root(s);
    gsl_root_fsolver_free(s);
    return status == GSL_SUCCESS ? 0 : -1;
}

static struct fit_param fit_interval(double value, double se, double z)
{
    return (struct fit_param){value, value - z * se, value + z * se};
}

int fit_runtimes(double *x, size_t n, double z, struct fit_runtime *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    out->chosen = DIST_LOGNORMAL;
    if (n == 0)
        return 0;
    gsl_sort(x, 1, n);
    out->parametric = n >= FIT_MIN_PARAMETRIC;
    double *logx = malloc(n * sizeof *logx);
    if (!logx)
        return -1;
    for (size_t i = 0; i < n; i++)
        logx[i] = log(x[i]);
    double mu = gsl_stats_mean(logx, 1, n);
    double sigma = n > 1 ? sqrt(gsl_stats_variance_m(logx, 1, n, mu) * (double)(n - 1) / (double)n) : 0;
    double rn = sqrt((double)n);
    struct fit_param m = fit_interval(mu, sigma / rn, z);
    out->ln_median_s = (struct fit_param){exp(mu), exp(m.lo), exp(m.hi)};
    out->ln_sigma = fit_interval(sigma, sigma / sqrt(2.0 * (double)n), z);
    if (out->ln_sigma.lo < 0)
        out->ln_sigma.lo = 0;
    struct distribution ln = {DIST_LOGNORMAL, exp(mu), sigma};
    out->ks_lognormal = fit_ks(x, n, &ln);
    out->ks_weibull = 1;
    double k;
    if (sigma > 0) {
        for (size_t i = 0; i < n; i++)
            logx[i] -= mu; /* runtimes over their geometric mean */
        int shape = weibull_shape(logx, n, &k);
        if (shape == -2) {
            free(logx);
            return -1;
        }
        if (shape == 0) {
            double s = 0;
            for (size_t i = 0; i < n; i++)
                s += exp(k * logx[i]);
            double lambda = exp(mu) * pow(s / (double)n, 1 / k);
            double euler = 0.57721566490153286;
            out->wb_shape = fit_interval(k, k * sqrt(6.0) / (M_PI * rn), z);
            out->wb_scale_s = fit_interval(
                lambda, lambda / k * sqrt(1 + 6 * (1 - euler) * (1 - euler) / (M_PI * M_PI)) / rn, z);
            struct distribution wb = {DIST_WEIBULL, k, lambda};
            out->ks_weibull = fit_ks(x, n, &wb);
        }
    }
    free(logx);
    out->chosen = out->ks_weibull < out->ks_lognormal ? DIST_WEIBULL : DIST_LOGNORMAL;
    return 0;
}

struct distribution fit_runtime_distribution(const struct fit_runtime *f)
{
    if (f->chosen == DIST_WEIBULL)
        return (struct distribution){DIST_WEIBULL, f->wb_shape.value, f->wb_scale_s.value};
    return (struct distribution){DIST_LOGNORMAL, f->ln_median_s.value, f->ln_sigma.value};
}

/* ---- grouping ---- */

struct fit_ctx {
    const struct workload *w;
    const struct fit_options *o;
    int32_t *group_of; /* per job */
    size_t n_groups;
    double t0_s, t1_s;   /* the window */
    double cal0_s;       /* calendar seconds since a Monday 00:00 of trace time 0 */
};

static double fit_cal(const struct fit_ctx *c, double t_s)
{
    return c->cal0_s + t_s;
}

static int fit_mod(double x, int m)
{
    long long k = (long long)floor(x) % m;
    return (int)(k < 0 ? k + m : k);
}

static const char *fit_key_name(const struct workload *w, enum fit_group_by by, int32_t k)
{
    const char *s = by == FIT_BY_USER ? string_table_get(&w->users, k) : string_table_get(&w->teams, k);
    return s ? s : "unknown";
}

/* Assigns each job a group: its team's (or user's) index among the groups
 * with at least min_jobs jobs, in order of first appearance, or "other". */
static int fit_group_jobs(struct fit_ctx *c, struct fit_result *r)
{
    const struct workload *w = c->w;
    enum fit_group_by by = c->o->by;
    size_t n_keys = by == FIT_BY_USER ? w->users.n : by == FIT_BY_TEAM ? w->teams.n : 0;
    size_t *count = calloc(n_keys + 1, sizeof *count);
    int32_t *slot = malloc((n_keys + 1) * sizeof *slot);
    c->group_of = malloc((w->n ? w->n : 1) * sizeof *c->group_of);
    if (!count || !slot || !c->group_of) {
        free(count);
        free(slot);
        return -1;
    }
    /* key n_keys = unknown */
    for (size_t i = 0; i < w->n; i++) {
        int32_t k = by == FIT_BY_USER ? w->jobs[i].user : by == FIT_BY_TEAM ? w->jobs[i].team : -1;
        c->group_of[i] = k < 0 || (size_t)k >= n_keys ? (int32_t)n_keys : k;
        count[c->group_of[i]]++;
    }
    for (size_t k = 0; k <= n_keys; k++)
        slot[k] = -1;
    size_t n = 0, small = 0;
    int32_t other = -1;
    for (size_t i = 0; i < w->n; i++) {
        int32_t k = c->group_of[i];
        if (slot[k] >= 0)
            continue;
        if (count[k] < c->o->min_jobs && by != FIT_BY_NONE) {
            small += count[k];
            if (other < 0)
                other = (int32_t)n++;
            slot[k] = other;
        } else {
            slot[k] = (int32_t)n++;
        }
    }
    r->groups = calloc(n ? n : 1, sizeof *r->groups);
    if (!r->groups) {
        free(count);
        free(slot);
        return -1;
    }
    for (size_t k = 0; k <= n_keys; k++) {
        if (slot[k] < 0)
            continue;
        struct fit_group *g = &r->groups[slot[k]];
        if (slot[k] == other)
            snprintf(g->name, sizeof g->name, "other");
        else if (by == FIT_BY_NONE)
            snprintf(g->name, sizeof g->name, "all");
        else
            snprintf(g->name, sizeof g->name, "%s", k == n_keys ? "unknown" : fit_key_name(w, by, (int32_t)k));
    }
    /* names must be unique: a real group called "other", or two long names
     * cut to the same prefix, get a suffix */
    for (size_t a = 0; a < n; a++) {
        for (size_t b = 0; b < a; b++) {
            if (strcmp(r->groups[a].name, r->groups[b].name) != 0)
                continue;
            char suffix[24];
            int len = snprintf(suffix, sizeof suffix, "-%zu", a + 1);
            size_t keep = strlen(r->groups[a].name);
            if (keep + (size_t)len >= TEAM_NAME_MAX)
                keep = TEAM_NAME_MAX - 1 - (size_t)len;
            snprintf(r->groups[a].name + keep, TEAM_NAME_MAX - keep, "%s", suffix);
            b = (size_t)-1; /* check again from the start */
        }
    }
    for (size_t i = 0; i < w->n; i++)
        c->group_of[i] = slot[c->group_of[i]];
    c->n_groups = n;
    (void)small;
    free(count);
    free(slot);
    return 0;
}

/* ---- arrivals ---- */

/* Seconds of the window [t0, t1] in each hour of day and day of week. */
static void fit_exposure(const struct fit_ctx *c, double *hours, double *days)
{
    memset(hours, 0, 24 * sizeof *hours);
    memset(days, 0, 7 * sizeof *days);
    double t = c->t0_s;
    while (t < c->t1_s) {
        double cal = fit_cal(c, t);
        double next = (floor(cal / FIT_HOUR_S) + 1) * FIT_HOUR_S - c->cal0_s;
        if (next <= t)
            next = t + FIT_HOUR_S;
        if (next > c->t1_s)
            next = c->t1_s;
        hours[fit_mod(cal / FIT_HOUR_S, 24)] += next - t;
        days[fit_mod(cal / FIT_DAY_S, 7)] += next - t;
        t = next;
    }
}

/* rate_per_s(t) / base for the team's profiles */
static double fit_shape(const struct fit_ctx *c, const struct team_spec *t, double t_s)
{
    double cal = fit_cal(c, t_s);
    return t->hourly[fit_mod(cal / FIT_HOUR_S, 24)] * t->weekly[fit_mod(cal / FIT_DAY_S, 7)];
}

/* The integral of the profile shape from t0 to t_s. Computed with hourly
 * bins from a table, so n arrivals cost O(n + hours). */
struct fit_cum {
    double *cum; /* at the start of each calendar hour after t0 */
    size_t n;
    double first_edge; /* the first hour edge after t0 (trace seconds) */
};

static int fit_cum_build(const struct fit_ctx *c, const struct team_spec *t, struct fit_cum *fc)
{
    double cal0 = fit_cal(c, c->t0_s);
    fc->first_edge = (floor(cal0 / FIT_HOUR_S) + 1) * FIT_HOUR_S - c->cal0_s;
    size_t n = (size_t)ceil((c->t1_s - fc->first_edge) / FIT_HOUR_S) + 2;
    fc->n = n;
    fc->cum = malloc(n * sizeof *fc->cum);
    if (!fc->cum)
        return -1;
    fc->cum[0] = fit_shape(c, t, c->t0_s) * (fc->first_edge - c->t0_s);
    for (size_t i = 1; i < n; i++)
        fc->cum[i] = fc->cum[i - 1] + fit_shape(c, t, fc->first_edge + (double)(i - 1) * FIT_HOUR_S) * FIT_HOUR_S;
    return 0;
}

static double fit_cum_at(const struct fit_ctx *c, const struct team_spec *t, const struct fit_cum *fc, double t_s)
{
    if (t_s < fc->first_edge)
        return fit_shape(c, t, c->t0_s) * (t_s - c->t0_s);
    size_t i = (size_t)floor((t_s - fc->first_edge) / FIT_HOUR_S);
    if (i + 1 >= fc->n)
        i = fc->n - 2;
    double edge = fc->first_edge + (double)i * FIT_HOUR_S;
    return fc->cum[i] + fit_shape(c, t, edge) * (t_s - edge);
}

/* Profiles, rate and the KS statistic of the rescaled gaps of group g,
 * whose submit times (sorted, seconds) are times[0..n). */
static int fit_arrivals(const struct fit_ctx *c, const double *times, size_t n, struct team_spec *t,
                        struct fit_group *g, double z)
{
    double hours[24], days[7], ch[24] = {0}, cd[7] = {0};
    fit_exposure(c, hours, days);
    for (size_t i = 0; i < n; i++) {
        double cal = fit_cal(c, times[i]);
        ch[fit_mod(cal / FIT_HOUR_S, 24)]++;
        cd[fit_mod(cal / FIT_DAY_S, 7)]++;
    }
    double window = c->t1_s - c->t0_s;
    g->hourly_fitted = window >= 2 * FIT_DAY_S && n >= 24 * 10;
    g->weekly_fitted = window >= 2 * FIT_WEEK_S && n >= 7 * 20;
    struct {
        int on;
        double *count, *expo, *out;
        int m;
    } prof[2] = {{g->hourly_fitted, ch, hours, t->hourly, 24}, {g->weekly_fitted, cd, days, t->weekly, 7}};
    for (int p = 0; p < 2; p++) {
        if (!prof[p].on)
            continue;
        double rate[24], sum = 0;
        int m = prof[p].m, covered = 0;
        for (int i = 0; i < m; i++) {
            rate[i] = prof[p].expo[i] > 0 ? prof[p].count[i] / prof[p].expo[i] : 0;
            sum += rate[i];
            covered += prof[p].expo[i] > 0;
        }
        for (int i = 0; i < m; i++)
            prof[p].out[i] = sum > 0 && prof[p].expo[i] > 0 ? rate[i] * covered / sum : 1;
    }
    struct fit_cum fc;
    if (fit_cum_build(c, t, &fc) != 0)
        return -1;
    double total = fit_cum_at(c, t, &fc, c->t1_s);
    double expo_s = total > 0 ? total : window;
    double per_s = expo_s > 0 ? (double)n / expo_s : 0;
    double se = expo_s > 0 ? sqrt((double)n) / expo_s : 0;
    g->jobs_per_hour = (struct fit_param){per_s * 3600, fmax(0, (per_s - z * se) * 3600), (per_s + z * se) * 3600};
    t->jobs_per_hour = per_s * 3600;
    g->n_interarrival = n > 1 ? n - 1 : 0;
    g->ks_interarrival = 0;
    if (n > 1 && per_s > 0) {
        double *gaps = malloc((n - 1) * sizeof *gaps);
        if (!gaps) {
            free(fc.cum);
            return -1;
        }
        double prev = fit_cum_at(c, t, &fc, times[0]);
        for (size_t i = 1; i < n; i++) {
            double cur = fit_cum_at(c, t, &fc, times[i]);
            gaps[i - 1] = (cur - prev) * per_s;
            prev = cur;
        }
        gsl_sort(gaps, 1, n - 1);
        struct distribution e1 = {DIST_EXPONENTIAL, 1, 0};
        /* a gap of 0 (simultaneous submissions) has F = 0: fit_ks sees it */
        double D = 0;
        for (size_t i = 0; i < n - 1; i++) {
            double F = gaps[i] > 0 ? fit_cdf(&e1, gaps[i]) : 0;
            D = fmax(D, fmax((double)(i + 1) / (double)(n - 1) - F, F - (double)i / (double)(n - 1)));
        }
        g->ks_interarrival = fmin(1, D);
        free(gaps);
    }
    free(fc.cum);
    return 0;
}

/* ---- GPU counts ---- */

struct fit_count {
    int32_t gpus;
    size_t n;
    double work; /* GPUs x runtime, seconds */
};

static int fit_count_by_n(const void *pa, const void *pb)
{
    const struct fit_count *a = pa, *b = pb;
    if (a->n != b->n)
        return a->n > b->n ? -1 : 1;
    return a->gpus < b->gpus ? -1 : a->gpus > b->gpus;
}

static int fit_count_by_gpus(const void *pa, const void *pb)
{
    const struct fit_count *a = pa, *b = pb;
    return a->gpus < b->gpus ? -1 : a->gpus > b->gpus;
}

/* A job's size and runtime, for the GPU counts and the size classes. */
struct fit_sized {
    int32_t gpus;
    double run_s;
};

static int fit_sized_cmp(const void *pa, const void *pb)
{
    const struct fit_sized *a = pa, *b = pb;
    if (a->gpus != b->gpus)
        return a->gpus < b->gpus ? -1 : 1;
    return (a->run_s > b->run_s) - (a->run_s < b->run_s);
}

/* sized[0..n) sorted by size. keep = 0: every count. */
static int fit_gpus(const struct fit_sized *sized, size_t n, size_t keep, struct team_spec *t, struct fit_group *g)
{
    struct fit_count *c = calloc(n ? n : 1, sizeof *c);
    if (!c)
        return -1;
    size_t m = 0;
    double work = 0;
    for (size_t i = 0; i < n; i++) {
        double wk = (double)sized[i].gpus * (sized[i].run_s > 0 ? sized[i].run_s : 0);
        work += wk;
        if (m && c[m - 1].gpus == sized[i].gpus) {
            c[m - 1].n++;
            c[m - 1].work += wk;
        } else {
            c[m++] = (struct fit_count){sized[i].gpus, 1, wk};
        }
    }
    g->gpu_values = m;
    qsort(c, m, sizeof *c, fit_count_by_n);
    size_t k = keep && m > keep ? keep : m;
    size_t merged_jobs = 0;
    double merged_work = 0;
    for (size_t i = k; i < m; i++) {
        size_t best = 0;
        double bd = INFINITY;
        for (size_t j = 0; j < k; j++) {
            double d = fabs(log((double)c[i].gpus) - log((double)c[j].gpus));
            if (d < bd || (d == bd && c[j].gpus > c[best].gpus)) {
                bd = d;
                best = j;
            }
        }
        c[best].n += c[i].n;
        merged_jobs += c[i].n;
        merged_work += c[i].work;
    }
    g->gpu_values_merged = m - k;
    g->merged_jobs_share = n ? (double)merged_jobs / (double)n : 0;
    g->merged_work_share = work > 0 ? merged_work / work : 0;
    qsort(c, k, sizeof *c, fit_count_by_gpus);
    free(t->gpus);
    free(t->gpu_weights);
    t->gpus = malloc((k ? k : 1) * sizeof *t->gpus);
    t->gpu_weights = malloc((k ? k : 1) * sizeof *t->gpu_weights);
    if (!t->gpus || !t->gpu_weights) {
        free(c);
        return -1;
    }
    for (size_t i = 0; i < k; i++) {
        t->gpus[i] = c[i].gpus;
        t->gpu_weights[i] = (double)c[i].n / (double)n;
    }
    t->n_gpus = k;
    free(c);
    return 0;
}

/* The smallest power of two at least g. */
static int32_t fit_pow2_at_least(int32_t g)
{
    int64_t p = 1;
    while (p < g)
        p *= 2;
    return p > INT32_MAX ? INT32_MAX : (int32_t)p;
}

/* Runtimes by size class (see fit.h): sized[0..n) sorted by size, only
 * jobs with a runtime. x is scratch of n doubles. */
static int fit_size_classes(const struct fit_sized *sized, size_t n, double z, double *x, struct team_spec *t,
                            struct fit_group *g)
{
    size_t cap = 64, nc = 0;
    struct fit_size_class *cls = calloc(cap, sizeof *cls);
    size_t *first = calloc(cap + 1, sizeof *first);
    if (!cls || !first) {
        free(cls);
        free(first);
        return -1;
    }
    size_t from = 0;
    while (from < n && nc < cap) {
        int32_t up = fit_pow2_at_least(sized[from].gpus);
        size_t to = from;
        for (;;) {
            while (to < n && sized[to].gpus <= up)
                to++;
            if (to - from >= FIT_SIZE_CLASS_MIN || to == n || up == INT32_MAX)
                break;
            up = up > INT32_MAX / 2 ? INT32_MAX : up * 2;
        }
        if (to - from < FIT_SIZE_CLASS_MIN && nc > 0) {
            cls[nc - 1].up_to_gpus = up; /* too few left: into the class before */
        } else {
            first[nc] = from;
            cls[nc++].up_to_gpus = up;
        }
        from = to;
    }
    first[nc] = n;
    int rc = 0;
    if (nc >= 1) {
        /* the last class serves every larger job too: its bound is the largest size seen */
        if (sized[n - 1].gpus > cls[nc - 1].up_to_gpus || nc == 1)
            cls[nc - 1].up_to_gpus = sized[n - 1].gpus;
        t->by_size = calloc(nc, sizeof *t->by_size);
        if (!t->by_size)
            rc = -1;
        for (size_t k = 0; !rc && k < nc; k++) {
            size_t m = first[k + 1] - first[k];
            for (size_t i = 0; i < m; i++)
                x[i] = sized[first[k] + i].run_s;
            if (fit_runtimes(x, m, z, &cls[k].runtime) != 0) { /* sorts x */
                rc = -1;
                break;
            }
            /* the means of equal-count bins: the shape as observed, and its
             * mean (the work) exactly, which a parametric fit of a heavy
             * tail does not keep */
            size_t bins = m < FIT_RUNTIME_BINS ? m : FIT_RUNTIME_BINS;
            double *v = malloc((bins ? bins : 1) * sizeof *v);
            if (!v) {
                rc = -1;
                break;
            }
            for (size_t b = 0; b < bins; b++) {
                size_t lo = b * m / bins, hi = (b + 1) * m / bins;
                double sum = 0;
                for (size_t i = lo; i < hi; i++)
                    sum += x[i];
                v[b] = hi > lo ? sum / (double)(hi - lo) : x[lo];
            }
            t->by_size[k].up_to_gpus = cls[k].up_to_gpus;
            t->by_size[k].runtime.empirical_s = v;
            t->by_size[k].runtime.n_empirical = bins;
            t->n_by_size++;
        }
        g->size_classes = cls;
        g->n_size_classes = nc;
        cls = NULL;
    }
    free(cls);
    free(first);
    return rc;
}

/* ---- limits ---- */

static void fit_limits(const double *ratio, size_t n, const double *limits_s, struct team_spec *t,
                       struct fit_group *g, double *work)
{
    g->n_limits = n;
    t->limit_factor = 1;
    t->limit_round_s = 0;
    if (!n)
        return;
    memcpy(work, ratio, n * sizeof *work);
    gsl_sort(work, 1, n);
    double med = gsl_stats_median_from_sorted_data(work, 1, n);
    t->limit_factor = med > 1 ? (med < 1000 ? med : 1000) : 1;
    static const double rounds[] = {86400, 3600, 1800, 900, 300, 60};
    for (size_t r = 0; r < sizeof rounds / sizeof *rounds; r++) {
        size_t multiples = 0;
        for (size_t i = 0; i < n; i++) {
            double q = limits_s[i] / rounds[r];
            multiples += fabs(q - floor(q + 0.5)) < 1e-6;
        }
        if ((double)multiples >= 0.9 * (double)n) {
            t->limit_round_s = rounds[r];
            break;
        }
    }
}

/* ---- one group ---- */

struct fit_scratch {
    double *times, *runtimes[JOB_CLASS_COUNT], *ratios, *limits, *work;
    struct fit_sized *sized;
};

static int fit_one(const struct fit_ctx *c, int32_t gi, struct fit_result *r, struct fit_scratch *s)
{
    const struct workload *w = c->w;
    struct fit_group *g = &r->groups[gi];
    struct team_spec *t = &r->spec.teams[gi];
    snprintf(t->name, sizeof t->name, "%s", g->name);
    size_t n = 0, nr[JOB_CLASS_COUNT] = {0}, nl = 0, nclass[JOB_CLASS_COUNT] = {0};
    for (size_t i = 0; i < w->n; i++) {
        if (c->group_of[i] != gi)
            continue;
        const struct job *j = &w->jobs[i];
        int cls = j->job_class >= 0 && j->job_class < JOB_CLASS_COUNT ? j->job_class : JOB_CLASS_TRAINING;
        s->times[n] = (double)j->submit_us / 1e6;
        s->sized[n] = (struct fit_sized){j->slots > 0 ? j->slots : 1, (double)j->runtime_us / 1e6};
        n++;
        nclass[cls]++;
        if (j->runtime_us > 0) {
            s->runtimes[cls][nr[cls]++] = (double)j->runtime_us / 1e6;
            if (j->limit_us > 0) {
                s->ratios[nl] = (double)j->limit_us / (double)j->runtime_us;
                s->limits[nl++] = (double)j->limit_us / 1e6;
            }
        }
    }
    g->jobs = n;
    gsl_sort(s->times, 1, n);
    /* batches: submissions FIT_BATCH_GAP_S or less apart */
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || s->times[i] - s->times[i - 1] > FIT_BATCH_GAP_S)
            s->work[nb++] = 0;
        s->work[nb - 1] += 1;
    }
    g->batches = nb;
    if (nb && (double)n / (double)nb > 1.05) { /* else: one job per arrival */
        gsl_sort(s->work, 1, nb);
        size_t bins = nb < FIT_RUNTIME_BINS ? nb : FIT_RUNTIME_BINS;
        t->batch_sizes = malloc(bins * sizeof *t->batch_sizes);
        if (!t->batch_sizes)
            return -1;
        for (size_t b = 0; b < bins; b++) {
            size_t lo = b * nb / bins, hi = (b + 1) * nb / bins;
            double sum = 0;
            for (size_t i = lo; i < hi; i++)
                sum += s->work[i];
            t->batch_sizes[b] = hi > lo ? sum / (double)(hi - lo) : s->work[lo];
        }
        t->n_batch = bins;
    }
    qsort(s->sized, n, sizeof *s->sized, fit_sized_cmp);
    if (fit_arrivals(c, s->times, n, t, g, r->z) != 0 || fit_gpus(s->sized, n, c->o->max_gpu_values, t, g) != 0)
        return -1;
    size_t ns = 0; /* the sizes of jobs with a runtime, still sorted */
    for (size_t i = 0; i < n; i++)
        if (s->sized[i].run_s > 0)
            s->sized[ns++] = s->sized[i];
    if (fit_size_classes(s->sized, ns, r->z, s->work, t, g) != 0)
        return -1;
    for (int k = 0; k < JOB_CLASS_COUNT; k++) {
        t->class_weights[k] = (double)nclass[k] / (double)(n ? n : 1);
        if (fit_runtimes(s->runtimes[k], nr[k], r->z, &g->runtime[k]) != 0)
            return -1;
        struct runtime_spec *rs = &t->runtime[k];
        if (g->runtime[k].parametric) {
            rs->dist = fit_runtime_distribution(&g->runtime[k]);
        } else if (nr[k]) {
            rs->empirical_s = malloc(nr[k] * sizeof *rs->empirical_s);
            if (!rs->empirical_s)
                return -1;
            memcpy(rs->empirical_s, s->runtimes[k], nr[k] * sizeof *rs->empirical_s);
            rs->n_empirical = nr[k];
        } else if (nclass[k]) {
            /* every job of the class ran 0 s: the shortest runtime synth makes */
            rs->dist = (struct distribution){DIST_FIXED, 1, 0};
        }
    }
    fit_limits(s->ratios, nl, s->limits, t, g, s->work);
    if (nl >= FIT_MIN_PARAMETRIC) {
        /* quantiles of the requested times: they sit on round values
         * (1 h, 4 h, the queue's maximum), which quantiles keep */
        gsl_sort(s->limits, 1, nl);
        size_t q = nl < FIT_RUNTIME_BINS ? nl : FIT_RUNTIME_BINS;
        t->limits_s = malloc(q * sizeof *t->limits_s);
        if (!t->limits_s)
            return -1;
        for (size_t i = 0; i < q; i++)
            t->limits_s[i] = s->limits[(size_t)(((double)i + 0.5) * (double)nl / (double)q)];
        t->n_limits = q;
    }
    return 0;
}

int fit_workload(const struct workload *w, const struct fit_options *o, struct fit_result *r, struct err *err)
{
    memset(r, 0, sizeof *r);
    workload_spec_init(&r->spec);
    r->by = o->by;
    r->z = o->z > 0 ? o->z : 1.96;
    r->unix_start_s = w->meta.unix_start_s;
    r->jobs = w->n;
    if (w->n == 0)
        return err_set(err, NULL, 0, 0, "no jobs to fit");
    gsl_set_error_handler_off();
    struct fit_ctx c = {w, o, NULL, 0, 0, 0, 0};
    c.t0_s = c.t1_s = (double)w->jobs[0].submit_us / 1e6;
    for (size_t i = 0; i < w->n; i++) {
        double t = (double)w->jobs[i].submit_us / 1e6;
        c.t0_s = fmin(c.t0_s, t);
        c.t1_s = fmax(c.t1_s, t);
        r->runtime_zero += w->jobs[i].runtime_us <= 0;
    }
    r->window_s = c.t1_s - c.t0_s;
    if (c.t1_s <= c.t0_s)
        c.t1_s = c.t0_s + 1; /* all at once: a one-second window */
    c.cal0_s = w->meta.unix_start_s >= 0 ? (double)w->meta.unix_start_s + 3 * FIT_DAY_S : 0;
    struct fit_scratch s;
    memset(&s, 0, sizeof s);
    int rc = fit_group_jobs(&c, r);
    size_t n = w->n;
    s.times = malloc(n * sizeof *s.times);
    s.ratios = malloc(n * sizeof *s.ratios);
    s.limits = malloc(n * sizeof *s.limits);
    s.work = malloc(n * sizeof *s.work);
    s.sized = malloc(n * sizeof *s.sized);
    int ok = rc == 0 && s.times && s.ratios && s.limits && s.work && s.sized;
    for (int k = 0; k < JOB_CLASS_COUNT; k++)
        ok &= (s.runtimes[k] = malloc(n * sizeof *s.runtimes[k])) != NULL;
    for (size_t g = 0; ok && g < c.n_groups; g++)
        ok = workload_spec_add_team(&r->spec) != NULL;
    for (size_t g = 0; ok && g < c.n_groups; g++)
        ok = fit_one(&c, (int32_t)g, r, &s) == 0;
    free(s.times);
    free(s.ratios);
    free(s.limits);
    free(s.work);
    free(s.sized);
    for (int k = 0; k < JOB_CLASS_COUNT; k++)
        free(s.runtimes[k]);
    free(c.group_of);
    return ok ? 0 : err_set(err, NULL, 0, 0, "out of memory fitting the workload");
}

/* ---- writing ---- */

/* A duration in seconds with a unit the scenario parser reads: "21600s",
 * "0.5s" (no exponent, trailing zeros dropped). */
static void fit_duration(char *buf, size_t len, double s)
{
    snprintf(buf, len, "%.3f", s);
    char *dot = strchr(buf, '.');
    if (dot) {
        char *end = buf + strlen(buf) - 1;
        while (end > dot && *end == '0')
            *end-- = '\0';
        if (end == dot)
            *end = '\0';
    }
    size_t n = strlen(buf);
    snprintf(buf + n, len - n, "s");
}

static void fit_put_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\x%02x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void fit_put_profile(FILE *out, const char *key, const double *v, int n)
{
    fprintf(out, "      %s: [", key);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%.4f", i ? ", " : "", v[i]);
    fputs("]\n", out);
}

static void fit_put_runtime(FILE *out, const struct team_spec *t, const struct fit_group *g, int k)
{
    const struct runtime_spec *rs = &t->runtime[k];
    const struct fit_runtime *fr = &g->runtime[k];
    char a[48], b[48];
    fprintf(out, "        %s: ", job_class_name((enum job_class)k));
    if (rs->empirical_s) {
        fputs("{empirical: [", out);
        for (size_t i = 0; i < rs->n_empirical; i++) {
            fit_duration(a, sizeof a, rs->empirical_s[i]);
            fprintf(out, "%s%s", i ? ", " : "", a);
        }
        fprintf(out, "]}  # %zu runtimes: too few to fit\n", rs->n_empirical);
        return;
    }
    if (!fr->n) {
        fit_duration(a, sizeof a, rs->dist.a);
        fprintf(out, "%s  # every job ran 0 s\n", a);
        return;
    }
    if (rs->dist.kind == DIST_WEIBULL) {
        fit_duration(b, sizeof b, rs->dist.b);
        fprintf(out, "{distribution: weibull, shape: %.6g, scale: %s}", rs->dist.a, b);
    } else {
        fit_duration(a, sizeof a, rs->dist.a);
        fprintf(out, "{distribution: lognormal, median: %s, sigma: %.6g}", a, rs->dist.b);
    }
    fprintf(out, "  # n %zu, KS lognormal %.4f, weibull %.4f\n", fr->n, fr->ks_lognormal, fr->ks_weibull);
}

int fit_write_yaml(FILE *out, const struct fit_result *r, const char *source)
{
    static const char *const by[] = {"team", "user", "none"};
    fprintf(out, "# fitted by fleetsim fit from %s: %zu jobs over %.1f days, grouped by %s\n", source, r->jobs,
            r->window_s / 86400, by[r->by]);
    fputs("# growth_per_quarter is not fitted: set your assumption. KS statistics: 0 = perfect fit.\n", out);
    fputs("workload:\n  teams:\n", out);
    for (size_t i = 0; i < r->spec.n_teams; i++) {
        const struct team_spec *t = &r->spec.teams[i];
        const struct fit_group *g = &r->groups[i];
        fputs("    - name: ", out);
        fit_put_string(out, t->name);
        fprintf(out, "\n      jobs_per_hour: %.6g  # %zu jobs; %.0f%% CI %.6g to %.6g; KS inter-arrival %.4f\n",
                t->jobs_per_hour > 0 ? t->jobs_per_hour : 1e-6, g->jobs, 100 * gsl_cdf_ugaussian_P(r->z) * 2 - 100,
                g->jobs_per_hour.lo, g->jobs_per_hour.hi, g->ks_interarrival);
        if (t->n_batch) {
            fprintf(out, "      # %zu arrivals (submissions %gs apart or less are one), %.2f jobs each on average\n"
                         "      batch: [",
                    g->batches, (double)FIT_BATCH_GAP_S, (double)g->jobs / (double)(g->batches ? g->batches : 1));
            for (size_t k = 0; k < t->n_batch; k++)
                fprintf(out, "%s%.4g", k ? ", " : "", t->batch_sizes[k]);
            fputs("]\n", out);
        }
        if (g->hourly_fitted)
            fit_put_profile(out, "hourly", t->hourly, 24);
        if (g->weekly_fitted)
            fit_put_profile(out, "weekly", t->weekly, 7);
        fputs("      gpus: {", out);
        for (size_t k = 0; k < t->n_gpus; k++)
            fprintf(out, "%s%d: %.6g", k ? ", " : "", (int)t->gpus[k], t->gpu_weights[k]);
        fputs("}\n      classes: {", out);
        int first = 1;
        for (int k = 0; k < JOB_CLASS_COUNT; k++) {
            if (t->class_weights[k] <= 0)
                continue;
            fprintf(out, "%s%s: %.6g", first ? "" : ", ", job_class_name((enum job_class)k), t->class_weights[k]);
            first = 0;
        }
        fputs("}\n      runtime:\n", out);
        for (int k = 0; k < JOB_CLASS_COUNT; k++)
            if (t->class_weights[k] > 0)
                fit_put_runtime(out, t, g, k);
        if (g->n_size_classes) {
            fputs("      runtime_by_gpus:  # jobs of more GPUs than the entry before, up to up_to\n", out);
            for (size_t k = 0; k < g->n_size_classes && k < t->n_by_size; k++) {
                const struct fit_runtime *fr = &g->size_classes[k].runtime;
                const struct runtime_spec *rs = &t->by_size[k].runtime;
                char a[48];
                fprintf(out, "        # %zu runtimes, as %zu bin means; KS of a lognormal fit %.4f, weibull %.4f\n",
                        fr->n, rs->n_empirical, fr->ks_lognormal, fr->ks_weibull);
                fprintf(out, "        - {up_to: %d, runtime: {empirical: [", (int)t->by_size[k].up_to_gpus);
                for (size_t e = 0; e < rs->n_empirical; e++) {
                    fit_duration(a, sizeof a, rs->empirical_s[e]);
                    fprintf(out, "%s%s", e ? ", " : "", a);
                }
                fputs("]}}\n", out);
            }
        }
        char round[48];
        fit_duration(round, sizeof round, t->limit_round_s);
        fprintf(out, "      limit_factor: %.6g  # median of limit / runtime over %zu jobs\n", t->limit_factor,
                g->n_limits);
        fprintf(out, "      limit_round: %s\n", t->limit_round_s > 0 ? round : "0");
        if (t->n_limits) {
            fprintf(out, "      # requested times, %zu quantiles: a job draws one at least its runtime\n      limits: [",
                    t->n_limits);
            for (size_t k = 0; k < t->n_limits; k++) {
                fit_duration(round, sizeof round, t->limits_s[k]);
                fprintf(out, "%s%s", k ? ", " : "", round);
            }
            fputs("]\n", out);
        }
        fputs("      growth_per_quarter: 0\n", out);
    }
    return fflush(out) != 0 || ferror(out) ? -1 : 0;
}
