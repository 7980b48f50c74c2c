/* fit: calibrating a workload description (traces/synth.h) from a trace,
 * with GSL, per group of jobs (team, user, or all), and saying how well the
 * fitted model describes the trace.
 *
 * Per group:
 *  - arrivals: an inhomogeneous Poisson process rate x hourly[h] x weekly[d].
 *    The profiles are the group's arrivals per hour of day (UTC) and per day
 *    of week over the time the trace spends in each (its exposure),
 *    normalised to mean 1; they are kept flat when the trace is too short or
 *    the group too small (under 10 jobs per hour bin, 20 per day bin, or a
 *    window under 2 days / 2 weeks). The rate is then the maximum-likelihood
 *    estimate given the profiles: jobs / integral of the profile over the
 *    trace's window (first to last submission of the whole trace). Growth is
 *    not fitted (0): it is the planner's assumption.
 *    Goodness of fit: by the time-rescaling theorem the gaps between
 *    consecutive arrivals, measured in the fitted cumulative rate, are
 *    Exp(1) if the model is right; ks_interarrival is their KS statistic.
 *    Many jobs submitted in the same second (job arrays) show up here.
 *  - batches: submissions of the group FIT_BATCH_GAP_S or less apart are
 *    one arrival; when arrivals bring more than 1.05 jobs on average, the
 *    means of equal-count bins of their sizes are written as `batch` (synth
 *    draws arrivals at rate / mean batch). Bursts of thousands of jobs
 *    drive the waits on real traces (HPC2N: a quarter of the gaps are 1 s or
 *    less); without them a fit's queue is far calmer than the trace's.
 *  - GPU counts: the empirical weights of every count observed (the shape of
 *    the workload: on KTH the jobs above 16 processors carry 45% of the
 *    work). With max_gpu_values > 0 only that many of the most frequent are
 *    kept and every other count is merged into the kept count nearest to it
 *    on a log scale (ties to the larger); the group records the share of
 *    jobs and of work (GPU-seconds) so merged, for the caller to warn.
 *  - runtimes by size: jobs with a runtime, in power-of-two size classes
 *    (1, 2, 3-4, 5-8, ...) grown until each holds FIT_SIZE_CLASS_MIN
 *    runtimes (the last takes what is left over), written as
 *    runtime_by_gpus with the means of FIT_RUNTIME_BINS equal-count bins of
 *    the sorted runtimes (resampled: the shape as observed and the mean
 *    exactly; a parametric fit of a heavy tail overstated KTH's work by
 *    25%), with the KS statistics of both families for the record. Large
 *    jobs run longer on real traces: one runtime for every size would move
 *    work from large jobs to small ones.
 *  - classes: from the jobs' classes; a job without one counts as training.
 *  - runtimes, per class, of the jobs that ran (runtime > 0): log-normal by
 *    maximum likelihood on log runtime (mu = mean, sigma = standard deviation
 *    with divisor n), Weibull by maximum likelihood (the shape solves the
 *    profile-likelihood equation with GSL's Brent root finder, on runtimes
 *    divided by their geometric mean so that x^k cannot overflow; the scale
 *    follows in closed form). Both KS statistics are reported; the smaller
 *    one is chosen. Fewer than FIT_MIN_PARAMETRIC runtimes: their empirical
 *    list instead.
 *  - limit_factor: the median of limit / runtime over jobs with both (at
 *    least 1; 1 when the trace has no limits); limit_round: the largest of
 *    1d, 1h, 30m, 15m, 5m, 1m that at least 90% of the limits are multiples
 *    of (0 if none).
 *
 * Confidence intervals (level from z, 1.96 = 95%), asymptotic normal:
 *  - rate: Poisson, (n +- z sqrt(n)) / exposure;
 *  - log-normal: mu +- z sigma / sqrt(n), reported on the median exp(mu);
 *    sigma +- z sigma / sqrt(2n);
 *  - Weibull, from the inverse Fisher information of the MLE:
 *    se(k) = k sqrt(6) / (pi sqrt(n)),
 *    se(lambda) = (lambda / k) sqrt(1 + 6 (1 - gamma)^2 / pi^2) / sqrt(n)
 *    (gamma = Euler's constant).
 *
 * Groups with fewer than min_jobs jobs are merged into one group "other".
 * Times on the calendar: the trace's meta.unix_start_s, or, when unknown,
 * time 0 is taken as a Monday 00:00 UTC.
 */
#ifndef FLEETSIM_TRACES_FIT_H
#define FLEETSIM_TRACES_FIT_H

#include <stddef.h>
#include <stdio.h>

#include "models/distribution.h"
#include "models/workload.h"
#include "sim/err.h"
#include "traces/synth.h"

enum { FIT_MIN_PARAMETRIC = 10, FIT_SIZE_CLASS_MIN = 50, FIT_RUNTIME_BINS = 100, FIT_BATCH_GAP_S = 5 };

enum fit_group_by { FIT_BY_TEAM, FIT_BY_USER, FIT_BY_NONE };

struct fit_options {
    enum fit_group_by by;  /* default FIT_BY_TEAM */
    size_t min_jobs;       /* smaller groups merge into "other"; default 50 */
    size_t max_gpu_values; /* 0 (default): every count observed; N: the N most frequent, the rest merged */
    double z;              /* confidence level of the intervals; default 1.96 (95%) */
};

/* An estimate and its confidence interval. */
struct fit_param {
    double value, lo, hi;
};

struct fit_runtime {
    size_t n;               /* runtimes > 0 fitted (0: the class has no jobs) */
    int parametric;         /* 0: fewer than FIT_MIN_PARAMETRIC, written as empirical */
    struct fit_param ln_median_s, ln_sigma;
    struct fit_param wb_shape, wb_scale_s;
    double ks_lognormal, ks_weibull; /* in [0, 1] */
    enum distribution_kind chosen;   /* DIST_LOGNORMAL or DIST_WEIBULL */
};

struct fit_group {
    char name[TEAM_NAME_MAX];
    size_t jobs;
    struct fit_param jobs_per_hour;
    int hourly_fitted, weekly_fitted;
    double ks_interarrival; /* in [0, 1]; 0 with fewer than 2 arrivals */
    size_t n_interarrival;
    struct fit_runtime runtime[JOB_CLASS_COUNT];
    size_t n_limits;        /* jobs with a limit and a runtime */
    size_t gpu_values;      /* distinct GPU counts before merging */
    size_t gpu_values_merged;   /* of them, merged into a kept count */
    size_t batches;             /* arrivals: submissions FIT_BATCH_GAP_S or less apart are one */
    double merged_jobs_share;   /* share of the group's jobs whose count was merged */
    double merged_work_share;   /* and of its work (GPUs x runtime) */
    struct fit_size_class {
        int32_t up_to_gpus;
        struct fit_runtime runtime;
    } *size_classes;            /* n_size_classes, as written to runtime_by_gpus */
    size_t n_size_classes;
};

struct fit_result {
    struct workload_spec spec; /* one team per group, in group order */
    struct fit_group *groups;  /* n = spec.n_teams */
    enum fit_group_by by;
    double window_s;           /* first to last submission */
    int64_t unix_start_s;      /* -1 unknown */
    size_t jobs, runtime_zero; /* jobs read; of them with runtime 0 (not in runtime fits) */
    double z;
};

void fit_options_init(struct fit_options *o);
/* Fits w (borrowed) into r (initialised here; release it whatever the
 * outcome). Returns 0, or -1 with err set (no jobs, out of memory). */
int fit_workload(const struct workload *w, const struct fit_options *o, struct fit_result *r, struct err *err);
void fit_result_release(struct fit_result *r);

/* Fits runtimes x[0..n) (seconds, > 0; reordered in place) as above. */
int fit_runtimes(double *x, size_t n, double z, struct fit_runtime *out);
/* The KS statistic of sorted[0..n) against d (log-normal, Weibull or
 * exponential). */
double fit_ks(const double *sorted, size_t n, const struct distribution *d);
/* The fitted runtime spec of one class (parametric as chosen). */
struct distribution fit_runtime_distribution(const struct fit_runtime *f);

/* Writes r as a scenario `workload:` section (the schema's keys and units),
 * with the goodness of fit in comments. source names the trace. Returns 0,
 * or -1 when the stream failed. */
int fit_write_yaml(FILE *out, const struct fit_result *r, const char *source);

#endif
