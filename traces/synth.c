#include "traces/synth.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/pcg32.h"
#include "traces/trace.h"

#define SYNTH_QUARTER_S (13.0 * 7 * 86400)
#define SYNTH_WEEK_S (7 * INT64_C(86400))
/* Sampled runtimes are kept within [1 s, ~3 years]: a heavy log-normal tail
 * would otherwise overflow the microsecond clock. */
#define SYNTH_MIN_RUNTIME_S 1.0
#define SYNTH_MAX_RUNTIME_S 1e8

void workload_spec_init(struct workload_spec *s)
{
    memset(s, 0, sizeof *s);
}

static void team_spec_release(struct team_spec *t)
{
    free(t->bursts);
    free(t->gpus);
    free(t->gpu_weights);
    for (int c = 0; c < JOB_CLASS_COUNT; c++)
        free(t->runtime[c].empirical_s);
    for (size_t k = 0; k < t->n_by_size; k++)
        free(t->by_size[k].runtime.empirical_s);
    free(t->by_size);
    free(t->limits_s);
    free(t->batch_sizes);
}

void workload_spec_release(struct workload_spec *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_teams; i++)
        team_spec_release(&s->teams[i]);
    free(s->teams);
    free(s->base_trace);
    memset(s, 0, sizeof *s);
}

void team_spec_init(struct team_spec *t, enum job_class cls)
{
    memset(t, 0, sizeof *t);
    for (int h = 0; h < 24; h++)
        t->hourly[h] = 1;
    for (int d = 0; d < 7; d++)
        t->weekly[d] = 1;
    t->class_weights[cls] = 1;
    for (int c = 0; c < JOB_CLASS_COUNT; c++)
        t->runtime[c].dist = (struct distribution){DIST_FIXED, 3600, 0};
    t->limit_factor = 1;
    t->replicas = 1;
}

struct team_spec *workload_spec_add_team(struct workload_spec *s)
{
    struct team_spec *teams = realloc(s->teams, (s->n_teams + 1) * sizeof *teams);
    if (!teams)
        return NULL;
    s->teams = teams;
    struct team_spec *t = &teams[s->n_teams++];
    team_spec_init(t, JOB_CLASS_TRAINING);
    return t;
}

/* ---- the rate ---- */

/* Seconds since a Monday 00:00 UTC of simulated time t_s. 1970-01-01 was a
 * Thursday: three days after a Monday. */
static double synth_calendar_s(double t_s, int64_t start_unix_s)
{
    return start_unix_s ? (double)start_unix_s + 3 * 86400.0 + t_s : t_s;
}

static int synth_floor_mod(double x, int m)
{
    double q = floor(x);
    long long k = (long long)q % m;
    return (int)(k < 0 ? k + m : k);
}

static double synth_profile(const struct team_spec *t, double t_s, int64_t start_unix_s)
{
    double cal = synth_calendar_s(t_s, start_unix_s);
    return t->hourly[synth_floor_mod(cal / 3600, 24)] * t->weekly[synth_floor_mod(cal / 86400, 7)];
}

static double synth_bursts(const struct team_spec *t, sim_time at_us)
{
    double m = 1;
    for (size_t i = 0; i < t->n_bursts; i++)
        if (at_us >= t->bursts[i].start_us && at_us < t->bursts[i].end_us)
            m *= t->bursts[i].multiplier;
    return m;
}

static double synth_growth(double g, double t_s)
{
    return g == 0 ? 1 : exp(log1p(g) * t_s / SYNTH_QUARTER_S);
}

double synth_rate_per_hour(const struct team_spec *t, sim_time at_us, int64_t start_unix_s)
{
    double t_s = (double)at_us / 1e6;
    return t->jobs_per_hour * synth_profile(t, t_s, start_unix_s) * synth_bursts(t, at_us) *
           synth_growth(t->growth_per_quarter, t_s);
}

/* The integral of the growth factor over [a_s, b_s], in seconds. */
static double synth_growth_integral(double g, double a_s, double b_s)
{
    if (g == 0)
        return b_s - a_s;
    double k = log1p(g) / SYNTH_QUARTER_S;
    return (exp(k * b_s) - exp(k * a_s)) / k;
}

double synth_expected_jobs(const struct team_spec *t, sim_time start_us, sim_time end_us, int64_t start_unix_s)
{
    double total = 0;
    sim_time at = start_us;
    while (at < end_us) {
        /* the next edge: an hour boundary of the calendar, or a burst edge */
        double cal = synth_calendar_s((double)at / 1e6, start_unix_s);
        double to_hour = (floor(cal / 3600) + 1) * 3600 - cal;
        sim_time next = at + (sim_time)ceil(to_hour * 1e6);
        if (next <= at)
            next = at + 1;
        for (size_t i = 0; i < t->n_bursts; i++) {
            if (t->bursts[i].start_us > at && t->bursts[i].start_us < next)
                next = t->bursts[i].start_us;
            if (t->bursts[i].end_us > at && t->bursts[i].end_us < next)
                next = t->bursts[i].end_us;
        }
        if (next > end_us)
            next = end_us;
        double a_s = (double)at / 1e6, b_s = (double)next / 1e6;
        double c = t->jobs_per_hour / 3600 * synth_profile(t, a_s, start_unix_s) * synth_bursts(t, at);
        total += c * synth_growth_integral(t->growth_per_quarter, a_s, b_s);
        at = next;
    }
    /* a service deployment brings its replicas (a batch's jobs are in the rate already) */
    return t->is_service && t->replicas > 1 ? total * t->replicas : total;
}

/* An upper bound of the rate over [start_us, end_us) in jobs per second: the
 * largest hourly and weekly multipliers, the largest product of bursts active
 * at once (it can only change at a burst start), the growth at whichever end
 * is larger. */
static double synth_peak_per_s(const struct team_spec *t, sim_time start_us, sim_time end_us)
{
    double h = 0, d = 0;
    for (int i = 0; i < 24; i++)
        h = fmax(h, t->hourly[i]);
    for (int i = 0; i < 7; i++)
        d = fmax(d, t->weekly[i]);
    double b = fmax(1, synth_bursts(t, start_us));
    for (size_t i = 0; i < t->n_bursts; i++)
        if (t->bursts[i].start_us >= start_us && t->bursts[i].start_us < end_us)
            b = fmax(b, synth_bursts(t, t->bursts[i].start_us));
    double g = fmax(synth_growth(t->growth_per_quarter, (double)start_us / 1e6),
                    synth_growth(t->growth_per_quarter, (double)end_us / 1e6));
    return t->jobs_per_hour / 3600 * h * d * b * g;
}

/* ---- generation ---- */

/* A job with its sort key: (submit, origin, seq). Origins: 0 base replay,
 * 1 base growth copies, 2 + i team i. */
struct synth_job {
    struct job j;
    uint32_t origin;
    uint64_t seq;
    int keep_id;
};

struct synth_out {
    struct synth_job *jobs;
    size_t n, cap;
};

static int synth_push(struct synth_out *o, const struct job *j, uint32_t origin, uint64_t seq, int keep_id)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 4096;
        struct synth_job *p = realloc(o->jobs, cap * sizeof *p);
        if (!p)
            return -1;
        o->jobs = p;
        o->cap = cap;
    }
    o->jobs[o->n++] = (struct synth_job){*j, origin, seq, keep_id};
    return 0;
}

static int synth_job_cmp(const void *pa, const void *pb)
{
    const struct synth_job *a = pa, *b = pb;
    if (a->j.submit_us != b->j.submit_us)
        return a->j.submit_us < b->j.submit_us ? -1 : 1;
    if (a->origin != b->origin)
        return a->origin < b->origin ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Index i with probability weights[i] / sum, from one uniform. */
static size_t synth_pick(const double *weights, size_t n, double u)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += weights[i];
    double x = u * sum, acc = 0;
    size_t last = 0;
    for (size_t i = 0; i < n; i++) {
        if (weights[i] <= 0)
            continue;
        last = i;
        acc += weights[i];
        if (x < acc)
            return i;
    }
    return last;
}

static double synth_runtime_s(const struct runtime_spec *r, struct pcg32 *rng)
{
    double s;
    if (r->empirical_s && r->n_empirical) {
        size_t i = (size_t)(pcg32_unit_open(rng) * (double)r->n_empirical);
        s = r->empirical_s[i < r->n_empirical ? i : r->n_empirical - 1];
    } else {
        s = distribution_sample(&r->dist, rng);
    }
    if (!(s >= SYNTH_MIN_RUNTIME_S))
        s = SYNTH_MIN_RUNTIME_S;
    return s > SYNTH_MAX_RUNTIME_S ? SYNTH_MAX_RUNTIME_S : s;
}

static sim_time synth_limit_us(const struct team_spec *t, double runtime_s, sim_time runtime_us)
{
    double lim = runtime_s * (t->limit_factor >= 1 ? t->limit_factor : 1);
    if (t->limit_round_s > 0)
        lim = ceil(lim / t->limit_round_s - 1e-9) * t->limit_round_s;
    sim_time us = llround(lim * 1e6);
    return us < runtime_us ? runtime_us : us;
}

static int synth_team(const struct team_spec *t, size_t index, int32_t team_id, sim_time start_us,
                      sim_time end_us, int64_t start_unix_s, uint64_t seed, struct synth_out *o)
{
    struct pcg32 arrivals, sizes, durations;
    pcg32_stream(&arrivals, seed, RNG_ARRIVALS, index);
    pcg32_stream(&sizes, seed, RNG_SIZES, index);
    pcg32_stream(&durations, seed, RNG_DURATIONS, index);
    double peak = synth_peak_per_s(t, start_us, end_us);
    if (!(peak > 0))
        return 0;
    double end_s = (double)end_us / 1e6, t_s = (double)start_us / 1e6;
    uint64_t seq = 0;
    /* batches: arrivals come at rate / mean batch, so jobs_per_hour stays jobs */
    double mean_batch = 0;
    for (size_t b = 0; b < t->n_batch; b++)
        mean_batch += (t->batch_sizes[b] >= 1 ? t->batch_sizes[b] : 1) / (double)t->n_batch;
    double step = t->n_batch ? peak / mean_batch : peak;
    for (;;) {
        t_s += -log(pcg32_unit_open(&arrivals)) / step;
        double u = pcg32_unit(&arrivals);
        if (t_s >= end_s)
            break;
        sim_time at = (sim_time)floor(t_s * 1e6);
        if (at < start_us || at >= end_us)
            continue;
        if (u * peak * 3600 >= synth_rate_per_hour(t, at, start_unix_s))
            continue;
        int64_t batch = 1;
        if (t->n_batch) {
            size_t b = (size_t)(pcg32_unit(&arrivals) * (double)t->n_batch);
            double v = t->batch_sizes[b < t->n_batch ? b : t->n_batch - 1];
            batch = v >= 1 ? llround(v) : 1;
        }
        double ug = pcg32_unit(&sizes); /* drawn even with one choice: two uniforms per job */
        int32_t gpus = t->n_gpus ? t->gpus[synth_pick(t->gpu_weights, t->n_gpus, ug)] : 1;
        size_t c = synth_pick(t->class_weights, JOB_CLASS_COUNT, pcg32_unit(&sizes));
        const struct runtime_spec *rs = &t->runtime[c];
        if (t->n_by_size) {
            size_t k = 0;
            while (k + 1 < t->n_by_size && gpus > t->by_size[k].up_to_gpus)
                k++;
            rs = &t->by_size[k].runtime;
        }
        double rt = synth_runtime_s(rs, &durations);
        struct job j = {.id = -1, .submit_us = at, .user = -1, .team = team_id, .status = -1,
                        .job_class = (int32_t)c};
        j.runtime_us = llround(rt * 1e6);
        j.limit_us = synth_limit_us(t, rt, j.runtime_us);
        if (t->n_limits) {
            /* among the observed limits at least the runtime, uniformly */
            size_t lo = 0, hi = t->n_limits;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (t->limits_s[mid] < rt)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            double ul = pcg32_unit(&durations);
            if (lo < t->n_limits) {
                size_t k = lo + (size_t)(ul * (double)(t->n_limits - lo));
                sim_time us = llround(t->limits_s[k < t->n_limits ? k : t->n_limits - 1] * 1e6);
                j.limit_us = us < j.runtime_us ? j.runtime_us : us;
            } else {
                j.limit_us = j.runtime_us;
            }
        }
        j.slots = gpus;
        /* a batch is a job array (copies of one job); a service deployment, its replicas */
        int64_t copies = t->is_service && t->replicas > 1 ? t->replicas : batch;
        for (int64_t r = 0; r < copies; r++)
            if (synth_push(o, &j, 2 + (uint32_t)index, seq++, 0) != 0)
                return -1;
    }
    return 0;
}

/* Maps an index of the base trace's string table into w's. */
static int32_t synth_remap(struct string_table *dst, const struct string_table *src, int32_t k, int *oom)
{
    const char *s = string_table_get(src, k);
    if (!s)
        return -1;
    int32_t r = string_table_intern(dst, s);
    if (r < 0)
        *oom = 1;
    return r;
}

static int synth_base(const struct workload_spec *spec, sim_time start_us, sim_time end_us, uint64_t seed,
                      struct workload *w, struct synth_out *o, int64_t *max_id, struct err *err)
{
    struct workload base;
    struct diag_list diags;
    workload_init(&base);
    diag_list_init(&diags, 50);
    int rc = trace_read(spec->base_trace, TRACE_AUTO, SWF_REPLAY, &base, &diags, err);
    diag_list_release(&diags);
    if (rc != 0) {
        workload_release(&base);
        return -1;
    }
    sim_time first = base.jobs[0].submit_us, last = first;
    for (size_t i = 0; i < base.n; i++) {
        first = base.jobs[i].submit_us < first ? base.jobs[i].submit_us : first;
        last = base.jobs[i].submit_us > last ? base.jobs[i].submit_us : last;
        *max_id = base.jobs[i].id > *max_id ? base.jobs[i].id : *max_id;
    }
    sim_time week_us = SYNTH_WEEK_S * SIM_US_PER_S;
    sim_time cycle = ((last - first) / week_us + 1) * week_us;
    struct pcg32 rng;
    pcg32_stream(&rng, seed, RNG_ARRIVALS, SYNTH_BASE_STREAM);
    double g = spec->base_growth_per_quarter;
    uint64_t seq = 0, copy_seq = 0;
    int oom = 0;
    for (sim_time shift = start_us - first, rep = 0; !oom && first + shift < end_us; shift += cycle, rep++) {
        for (size_t i = 0; i < base.n && !oom; i++) {
            struct job j = base.jobs[i];
            j.submit_us += shift;
            if (j.submit_us >= end_us)
                continue;
            j.user = synth_remap(&w->users, &base.users, j.user, &oom);
            j.team = synth_remap(&w->teams, &base.teams, j.team, &oom);
            /* gpu_models is 1 + an index, 0 for none */
            if (j.gpu_models > 0)
                j.gpu_models = synth_remap(&w->gpu_models, &base.gpu_models, j.gpu_models - 1, &oom) + 1;
            double f = g == 0 ? 1 : synth_growth(g, (double)j.submit_us / 1e6);
            if (g != 0 && f < 1 && pcg32_unit(&rng) >= f)
                continue; /* shrinking: kept with probability f */
            if (synth_push(o, &j, 0, seq++, rep == 0) != 0)
                oom = 1;
            if (g <= 0)
                continue;
            double extra = f - 1, u = pcg32_unit(&rng);
            long copies = (long)floor(extra) + (u < extra - floor(extra));
            for (long k = 0; k < copies && !oom; k++) {
                struct job c = j;
                c.submit_us += (sim_time)floor(pcg32_unit(&rng) * 3600e6);
                if (c.submit_us < end_us && synth_push(o, &c, 1, copy_seq++, 0) != 0)
                    oom = 1;
            }
        }
    }
    workload_release(&base);
    return oom ? err_set(err, NULL, 0, 0, "out of memory synthesizing the base load") : 0;
}

int synth_generate(const struct workload_spec *spec, sim_time start_us, sim_time end_us, int64_t start_unix_s,
                   uint64_t seed, struct workload *w, struct err *err)
{
    struct synth_out o = {0};
    int64_t max_id = 0;
    int32_t *team_ids = calloc(spec->n_teams ? spec->n_teams : 1, sizeof *team_ids);
    if (!team_ids)
        return err_set(err, NULL, 0, 0, "out of memory synthesizing the workload");
    for (size_t i = 0; i < spec->n_teams; i++) {
        team_ids[i] = string_table_intern(&w->teams, spec->teams[i].name);
        if (team_ids[i] < 0) {
            free(team_ids);
            return err_set(err, NULL, 0, 0, "out of memory synthesizing the workload");
        }
    }
    int rc = 0;
    if (spec->base_trace && end_us > start_us)
        rc = synth_base(spec, start_us, end_us, seed, w, &o, &max_id, err);
    for (size_t i = 0; rc == 0 && i < spec->n_teams && end_us > start_us; i++)
        if (synth_team(&spec->teams[i], i, team_ids[i], start_us, end_us, start_unix_s, seed, &o) != 0)
            rc = err_set(err, NULL, 0, 0, "out of memory synthesizing the workload");
    free(team_ids);
    if (rc == 0) {
        if (o.n) /* qsort(NULL, 0) is undefined */
            qsort(o.jobs, o.n, sizeof *o.jobs, synth_job_cmp);
        int64_t next = max_id + 1;
        for (size_t i = 0; i < o.n && rc == 0; i++) {
            struct job *j = &o.jobs[i].j;
            if (!o.jobs[i].keep_id)
                j->id = next++;
            if (!workload_push(w, j))
                rc = err_set(err, NULL, 0, 0, "out of memory synthesizing the workload");
        }
        if (start_unix_s && w->meta.unix_start_s < 0)
            w->meta.unix_start_s = start_unix_s;
    }
    free(o.jobs);
    return rc;
}
