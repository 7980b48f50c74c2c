/* bench: speed and memory figures for `make bench`. Each case runs in its
 * own process (tests/bench/run.sh), so peak RSS is that case's.
 *
 *   bench replay TRACE SPEC    load, then replay; times the replay alone
 *   bench synthetic JOBS SPEC [LOAD [DIURNAL]]  a generated trace on 2,000
 *                              nodes x 8 GPUs at offered load LOAD (default
 *                              0.85), its rate following the day by DIURNAL
 *   bench engine EVENTS PENDING  hold model on the engine vs a bare heap loop
 *   bench decide SPEC REPS     one cold pass over 10,000 queued jobs, REPS times
 *   bench decide-run SPEC HOURS  every pass of a simulation that keeps
 *                              ~10,000 jobs queued, timed one by one
 *   bench whole RUNS CMD [ARG...]  a command's whole process, RUNS times
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "models/cluster.h"
#include "models/failures.h"
#include "models/policy_plugin.h"
#include "models/runtime_model.h"
#include "models/simulation.h"
#include "policies/registry.h"
#include "scenarios/forecast.h"
#include "sim/engine.h"
#include "sim/pcg32.h"
#include "traces/trace.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The engine case times a single-threaded loop by its CPU time, so that
 * other work on a shared machine does not count against it. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static int replay(const struct workload *w, int64_t nodes, int64_t slots, const char *spec, double *seconds,
                  struct sim_result *res)
{
    struct cluster c;
    struct err err;
    err_clear(&err);
    if (cluster_init_homogeneous(&c, nodes, slots, &err) != 0)
        return -1;
    struct policy_host ph;
    if (policy_host_open(&ph, spec, NULL, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return -1;
    }
    double t0 = now_s();
    int rc = simulation_run(w, &c, &ph, NULL, res, &err);
    *seconds = now_s() - t0;
    if (rc)
        fprintf(stderr, "bench: %s\n", err.msg);
    policy_host_close(&ph);
    cluster_release(&c);
    return rc;
}

static int bench_replay(const char *path, const char *spec)
{
    struct workload w;
    struct diag_list d;
    struct err err;
    workload_init(&w);
    diag_list_init(&d, 10);
    err_clear(&err);
    double t0 = now_s();
    if (trace_read(path, TRACE_AUTO, SWF_REPLAY, &w, &d, &err) != 0) {
        fprintf(stderr, "bench: cannot read %s: %s\n", path, err.msg);
        return 1;
    }
    double load_s = now_s() - t0;
    int64_t nodes, slots;
    cluster_shape_from_meta(&w.meta, workload_max_slots(&w), &nodes, &slots);
    struct sim_result res;
    double s;
    if (replay(&w, nodes, slots, spec, &s, &res) != 0)
        return 1;
    printf("replay    %-20s %8zu jobs  load %6.3f s  replay %6.3f s  %9.0f jobs/s  %7.0f events/s  peak RSS %6.1f MiB\n",
           spec, w.n, load_s, s, (double)w.n / s, (double)res.stats.events / s, peak_rss_mib());
    sim_result_release(&res);
    workload_release(&w);
    diag_list_release(&d);
    return 0;
}

/* A GPU-cluster-like workload: Poisson arrivals at `load` offered load
 * (GPU-seconds asked per GPU-second of capacity) on average, log-normal
 * runtimes, sizes drawn from `sizes`. With `diurnal` > 0 the arrival rate
 * follows the day, load * (1 + diurnal * sin(2 pi t / 1 d)), so afternoons ask
 * for more than the cluster has and the queue grows deep. */
static void synthetic_workload_sized(struct workload *w, size_t n, int64_t slots_total, const int *sizes,
                                     size_t n_sizes, double median_s, double load, double diurnal)
{
    struct pcg32 arr, dur, siz;
    pcg32_stream(&arr, 2024, RNG_ARRIVALS, 0);
    pcg32_stream(&dur, 2024, RNG_DURATIONS, 0);
    pcg32_stream(&siz, 2024, RNG_SIZES, 0);
    double mean_size = 0;
    for (size_t k = 0; k < n_sizes; k++)
        mean_size += sizes[k];
    mean_size /= (double)n_sizes;
    double mu = log(median_s), sigma = 1.2;
    double mean_run = exp(mu + sigma * sigma / 2);
    double rate = load * (double)slots_total / (mean_size * mean_run); /* jobs per second */
    workload_init(w);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        double day_factor = diurnal > 0 ? 1 + diurnal * sin(2 * 3.14159265358979323846 * t / 86400.0) : 1;
        t += -log(pcg32_unit_open(&arr)) / (rate * day_factor);
        double u1 = pcg32_unit_open(&dur), u2 = pcg32_unit(&dur);
        double z = sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
        double run = ceil(exp(mu + sigma * z));
        double limit = ceil(run * (1.2 + 2 * pcg32_unit(&dur)));
        int size = sizes[pcg32_bounded(&siz, (uint32_t)n_sizes)];
        struct job j = {(int64_t)i + 1, llround(t * 1e6), llround(run * 1e6), llround(limit * 1e6), size, -1, -1, -1,
                        0, -1, 0, 0, 0, 0, 0};
        workload_push(w, &j);
    }
}

static void synthetic_workload(struct workload *w, size_t n, int64_t slots_total, double load, double diurnal)
{
    static const int sizes[] = {1, 1, 1, 1, 2, 2, 4, 8, 8, 16, 32, 64};
    synthetic_workload_sized(w, n, slots_total, sizes, sizeof sizes / sizeof *sizes, 3600.0, load, diurnal);
}

static int bench_synthetic(size_t n, const char *spec, double load, double diurnal)
{
    struct workload w;
    double t0 = now_s();
    synthetic_workload(&w, n, 2000 * 8, load, diurnal);
    double gen = now_s() - t0;
    struct sim_result res;
    double s;
    if (replay(&w, 2000, 8, spec, &s, &res) != 0)
        return 1;
    printf("synthetic %-20s %8zu jobs  load %.2f%s  gen  %6.3f s  replay %6.3f s  %9.0f jobs/s  max queue %u  peak RSS %6.1f MiB\n",
           spec, n, load, diurnal > 0 ? " (daily cycle)" : "", gen, s, (double)n / s, res.stats.max_queue_len, peak_rss_mib());
    sim_result_release(&res);
    workload_release(&w);
    return 0;
}

/* Hold model: keep `pending` events; each step pops the earliest and
 * schedules one at now + Exp(1 s). The increments come from a table drawn
 * once (the same in both loops), so the figures are the queue's and not
 * libm's log(). The bare loop does the same on an array binary heap of int64
 * keys, replacing the top in place: the least a priority queue can do. */
enum { HOLD_TABLE = 1 << 16 };

static int64_t *hold_table(uint64_t seed)
{
    int64_t *t = malloc(HOLD_TABLE * sizeof *t);
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 1);
    for (size_t i = 0; t && i < HOLD_TABLE; i++)
        t[i] = (int64_t)(-log(pcg32_unit_open(&r)) * 1e6);
    return t;
}

static uint64_t bare_heap_hold(const int64_t *inc, size_t pending, size_t steps)
{
    int64_t *h = malloc(pending * sizeof *h);
    size_t n = 0, next = 0;
    for (size_t i = 0; i < pending; i++) {
        int64_t key = inc[next++ & (HOLD_TABLE - 1)];
        size_t k = n++;
        while (k && h[(k - 1) / 2] > key) {
            h[k] = h[(k - 1) / 2];
            k = (k - 1) / 2;
        }
        h[k] = key;
    }
    uint64_t check = 0;
    for (size_t s = 0; s < steps; s++) {
        int64_t now = h[0];
        check += (uint64_t)now;
        int64_t key = now + inc[next++ & (HOLD_TABLE - 1)];
        size_t k = 0; /* replace the top and sift down */
        for (;;) {
            size_t c = 2 * k + 1;
            if (c >= n)
                break;
            if (c + 1 < n && h[c + 1] < h[c])
                c++;
            if (h[c] >= key)
                break;
            h[k] = h[c];
            k = c;
        }
        h[k] = key;
    }
    free(h);
    return check;
}

struct hold_ctx {
    struct engine *e;
    const int64_t *inc;
    size_t next, left;
    uint64_t check;
};

static int hold_event(void *ctx, const struct event *ev)
{
    struct hold_ctx *c = ctx;
    c->check += (uint64_t)ev->time_us;
    if (!c->left)
        return 1; /* stop: `steps` events ran, as in the bare loop */
    c->left--;
    engine_schedule(c->e, ev->time_us + c->inc[c->next++ & (HOLD_TABLE - 1)], EVENT_CLASS_TIMER, 1, 0, 0);
    return 0;
}

static int bench_engine(size_t steps, size_t pending)
{
    int64_t *inc = hold_table(7);
    if (!inc || !pending)
        return 1;
    double t0 = cpu_s();
    uint64_t bare_check = bare_heap_hold(inc, pending, steps);
    double bare = cpu_s() - t0;

    struct engine e;
    engine_init(&e, 0);
    struct hold_ctx c = {&e, inc, 0, steps - 1, 0};
    for (size_t i = 0; i < pending; i++)
        engine_schedule(&e, inc[c.next++ & (HOLD_TABLE - 1)], EVENT_CLASS_TIMER, 1, 0, 0);
    struct engine_handlers h = {hold_event, NULL, &c};
    t0 = cpu_s();
    engine_run_until(&e, SIM_TIME_NEVER, &h);
    double eng = cpu_s() - t0;
    uint64_t events = e.events_run;
    engine_release(&e);
    free(inc);
    double bare_rate = (double)steps / bare, eng_rate = (double)events / eng;
    printf("engine    hold model, %6zu pending: engine %6.2fM events/s, bare heap %6.2fM events/s, ratio %.2f "
           "(CPU time)%s\n",
           pending, eng_rate / 1e6, bare_rate / 1e6, eng_rate / bare_rate,
           bare_check == c.check ? "" : " (the two loops saw different events!)");
    return 0;
}

/* 12,500 H100 nodes (100,000 GPUs), a rail-optimized fabric (scalable units
 * of 32 nodes, 2:1 oversubscribed to the spine), the Llama 3 failure preset,
 * EASY, and a generated workload at ~85% load for `days`. */
static int bench_fleet(int days)
{
    struct node_catalog cat;
    node_catalog_init(&cat);
    struct node_type t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "H100-SXM");
    t.gpus = 8;
    t.nvlink_domain_gpus = 8;
    t.nvlink_gbps = 7200;
    t.speed[0] = t.speed[1] = t.speed[2] = 1;
    node_catalog_put(&cat, &t);
    struct cluster_group g = {0, 12500, -1};
    struct fabric_spec fab = {FABRIC_RAIL_OPTIMIZED, 32, 8, 2.0, 400};
    struct cluster c;
    struct err err;
    err_clear(&err);
    if (cluster_init_groups(&c, &g, 1, &cat, &fab, &err) != 0)
        return 1;
    struct failure_spec fs;
    failure_spec_init(&fs);
    failure_spec_llama3(&fs);
    struct sim_models m;
    memset(&m, 0, sizeof m);
    m.failures = &fs;
    m.comm_fraction[JOB_CLASS_TRAINING] = 0.2;
    m.seed = 7;
    struct sim_options opt;
    sim_options_init(&opt);
    opt.models = &m;
    opt.until_us = (sim_time)days * 86400 * SIM_US_PER_S;

    static const int sizes[] = {1, 2, 4, 8, 8, 16, 32, 64, 128, 256, 512, 1024};
    /* enough jobs to cover the horizon at ~85% load */
    double mean_size = 171.75, mean_run = 7200.0 * exp(1.2 * 1.2 / 2);
    size_t n = (size_t)(0.85 * 100000.0 / (mean_size * mean_run) * days * 86400.0);
    struct workload w;
    double t0 = now_s();
    synthetic_workload_sized(&w, n, 100000, sizes, sizeof sizes / sizeof *sizes, 7200.0, 0.85, 0);
    double gen = now_s() - t0;
    struct policy_host ph;
    if (policy_host_open(&ph, "fcfs+easy", NULL, &err) != 0)
        return 1;
    struct sim_result res;
    t0 = now_s();
    int rc = simulation_run(&w, &c, &ph, &opt, &res, &err);
    policy_host_close(&ph);
    double s = now_s() - t0;
    if (rc) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    size_t cross = 0;
    for (size_t i = 0; i < w.n; i++)
        cross += res.jobs[i].span == SPAN_SPINE;
    printf("fleet     12,500 nodes x 8 GPUs, %d days: %zu jobs (gen %.2f s)  replay %6.2f s  %.3fM events/s  "
           "failures %llu  interrupted %llu  cross-leaf jobs %zu (%llu max-min solves of %.1f flows each)  max queue %u  "
           "peak RSS %6.1f MiB\n",
           days, w.n, gen, s, (double)res.stats.events / s / 1e6, (unsigned long long)res.stats.failures,
           (unsigned long long)res.stats.interruptions, cross, (unsigned long long)res.stats.contention_updates,
           res.stats.contention_updates ? (double)res.stats.contention_flows / (double)res.stats.contention_updates : 0,
           res.stats.max_queue_len, peak_rss_mib());
    sim_result_release(&res);
    workload_release(&w);
    failure_spec_release(&fs);
    cluster_release(&c);
    node_catalog_release(&cat);
    return 0;
}

/* Policy decision time per scheduling pass: one view of 2,000 nodes x 8
 * GPUs, 95% busy with 1-16 GPU jobs, and 10,000 queued jobs of 4 teams;
 * decide() on it `reps` times with the buffers policy.h promises; the
 * median pass. The same view every time, so every pass does the same work. */
static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int bench_decide(const char *spec, int reps)
{
    enum { NODES = 2000, GPUS = 8, QUEUED = 10000 };
    struct pcg32 r;
    pcg32_stream(&r, 99, RNG_TEST, 5);
    struct policy_node *nodes = calloc(NODES, sizeof *nodes);
    uint32_t *with_free = malloc(NODES * sizeof *with_free);
    struct policy_running *running = malloc(NODES * GPUS * sizeof *running);
    uint32_t *by_end = malloc(NODES * GPUS * sizeof *by_end);
    struct policy_alloc *allocs = malloc(NODES * GPUS * sizeof *allocs);
    struct policy_job *queued = malloc(QUEUED * sizeof *queued);
    int64_t now = 86400LL * 1000000 * 30;
    struct cluster_view v = {.now_us = now, .nodes = nodes, .n_nodes = NODES, .nodes_with_free = with_free,
                             .running = running, .running_by_end = by_end, .allocs = allocs, .queued = queued};
    for (uint32_t i = 0; i < NODES; i++)
        nodes[i] = (struct policy_node){0, POLICY_NODE_UP, GPUS, GPUS, (int32_t)(i / 9 * 9), (int32_t)(i / 32),
                                        (int32_t)(i / 256), 0, 0, 0};
    /* fill 95% of the GPUs with running jobs, node by node */
    uint32_t n_run = 0, n_alloc = 0;
    for (uint32_t i = 0; i < NODES; i++) {
        while (nodes[i].free_slots > 0 && pcg32_bounded(&r, 100) < 95) {
            int32_t g = 1 + (int32_t)pcg32_bounded(&r, (uint32_t)nodes[i].free_slots);
            nodes[i].free_slots -= g;
            int64_t start = now - (int64_t)pcg32_bounded(&r, 36000) * 1000000;
            int64_t est = (600 + (int64_t)pcg32_bounded(&r, 86400)) * 1000000;
            running[n_run] = (struct policy_running){
                {(int64_t)n_run + 1, start - 1000000, est, g, (int32_t)pcg32_bounded(&r, 40), (int32_t)pcg32_bounded(&r, 4),
                 0, 0, -1, 0, 0, 0, 0, 0, 0},
                start, start + est, n_alloc, 1};
            allocs[n_alloc++] = (struct policy_alloc){(int32_t)i, g, 0, 0};
            by_end[n_run] = n_run;
            n_run++;
        }
        v.total_slots += GPUS;
        v.free_slots += nodes[i].free_slots;
        if (nodes[i].free_slots > 0)
            with_free[v.n_nodes_with_free++] = i;
    }
    /* by expected end: insertion sort would be slow; a simple key sort */
    for (uint32_t gap = n_run / 2; gap > 0; gap /= 2)
        for (uint32_t i = gap; i < n_run; i++)
            for (uint32_t j = i; j >= gap && running[by_end[j - gap]].expected_end_us > running[by_end[j]].expected_end_us;
                 j -= gap) {
                uint32_t t = by_end[j];
                by_end[j] = by_end[j - gap];
                by_end[j - gap] = t;
            }
    v.n_running = n_run;
    static const int sizes[] = {1, 1, 2, 4, 8, 8, 16, 32, 64};
    for (uint32_t k = 0; k < QUEUED; k++)
        queued[k] = (struct policy_job){(int64_t)(NODES * GPUS + k + 1), now - (int64_t)(QUEUED - k) * 10000000,
                                        (600 + (int64_t)pcg32_bounded(&r, 86400)) * 1000000,
                                        sizes[pcg32_bounded(&r, 9)], (int32_t)pcg32_bounded(&r, 40),
                                        (int32_t)pcg32_bounded(&r, 4), (int32_t)pcg32_bounded(&r, 3), 0, -1,
                                        pcg32_bounded(&r, 4) == 0 ? (int64_t)pcg32_bounded(&r, 36000) * 1000000 : 0, 0, 0, 0, 0, 0};
    v.n_queued = QUEUED;
    struct policy_decisions out = {0};
    out.cap = v.n_queued + v.n_running;
    out.cap_allocs = (uint32_t)v.free_slots + v.n_queued;
    out.items = malloc(out.cap * sizeof *out.items);
    out.allocs = malloc(out.cap_allocs * sizeof *out.allocs);
    struct policy_host ph;
    struct err err;
    err_clear(&err);
    if (policy_host_open(&ph, spec, NULL, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    double *t = malloc((size_t)reps * sizeof *t);
    uint32_t starts = 0, preempts = 0;
    for (int k = 0; k < reps; k++) {
        double t0 = now_s();
        if (ph.pl.ops->decide(ph.pl.state, &v, &out) != 0) {
            fprintf(stderr, "bench: %s failed to decide\n", spec);
            return 1;
        }
        t[k] = now_s() - t0;
    }
    for (uint32_t k = 0; k < out.n; k++) {
        starts += out.items[k].kind == POLICY_START;
        preempts += out.items[k].kind == POLICY_PREEMPT;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    printf("decide    %-36s 10,000 queued, 2,000 nodes (%u running, %lld GPUs free): %8.3f ms per pass "
           "(median of %d; %u starts, %u preemptions)\n",
           spec, n_run, (long long)v.free_slots, t[reps / 2] * 1e3, reps, starts, preempts);
    policy_host_close(&ph);
    free(t);
    free(out.items);
    free(out.allocs);
    free(nodes);
    free(with_free);
    free(running);
    free(by_end);
    free(allocs);
    free(queued);
    return 0;
}

/* Policy decision time per pass inside a real simulation, where each pass
 * sees what the last one decided carried out: the starts running, a few
 * jobs ended (most before their estimate, as users overestimate) and a few
 * arrived. 11,000 jobs are submitted at once on 2,000 nodes x 8 GPUs, so
 * about 10,000 wait after the first pass; arrivals then keep up with the
 * ends for `hours` simulated hours: under FCFS the queue stays near
 * 10,000 (other orders start more, smaller jobs; the range is printed).
 * Every decide() is timed through a copy of the policy's table whose decide
 * wraps the policy's own (the host checks and applies as in any run). The
 * first pass (a cold one: nothing kept, the cluster empty) is reported
 * apart, and so are passes on a full machine unless the policy preempts
 * (the others return at once there: a median of them says nothing);
 * `bench decide` times a cold pass on a busy cluster. */
struct timed_policy {
    const struct policy_ops *inner;
    void *inner_state;
    double *seconds;
    uint32_t *queued;
    uint8_t *full; /* no GPU free: a pass that cannot start anything */
    size_t n, cap;
};

static int timed_decide(void *state, const struct cluster_view *view, struct policy_decisions *out)
{
    struct timed_policy *tp = state;
    double t0 = now_s();
    int rc = tp->inner->decide(tp->inner_state, view, out);
    double dt = now_s() - t0;
    if (tp->n == tp->cap) {
        size_t cap = tp->cap ? 2 * tp->cap : 4096;
        double *s = realloc(tp->seconds, cap * sizeof *s);
        if (s)
            tp->seconds = s;
        uint32_t *q = realloc(tp->queued, cap * sizeof *q);
        if (q)
            tp->queued = q;
        uint8_t *f = realloc(tp->full, cap * sizeof *f);
        if (f)
            tp->full = f;
        if (!s || !q || !f)
            return rc; /* the pass goes on untimed */
        tp->cap = cap;
    }
    tp->seconds[tp->n] = dt;
    tp->full[tp->n] = view->free_slots <= 0 && view->n_shared == 0;
    tp->queued[tp->n++] = view->n_queued - view->n_queue_gaps;
    return rc;
}

static void timed_observe(void *state, const struct policy_event *ev)
{
    struct timed_policy *tp = state;
    tp->inner->observe(tp->inner_state, ev);
}

static int bench_decide_in_run(const char *spec, double hours)
{
    enum { NODES = 2000, GPUS = 8, BURST = 11000 };
    static const int sizes[] = {1, 1, 2, 4, 8, 8, 16, 32, 64};
    struct pcg32 r;
    pcg32_stream(&r, 99, RNG_TEST, 6);
    struct workload w;
    workload_init(&w);
    static const char *teams[] = {"a", "b", "c", "d"};
    for (int k = 0; k < 4; k++)
        string_table_intern(&w.teams, teams[k]);
    /* estimates 600 s to a day (12.2 h on average); a job runs 5-100% of
     * its estimate, ~0.27 d on average, so 2,000 x 8 GPUs at ~15 GPUs a
     * job end ~0.045 jobs/s */
    double mean_size = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        mean_size += sizes[k];
    mean_size /= (double)(sizeof sizes / sizeof *sizes);
    double rate = (double)NODES * GPUS / mean_size / (43800.0 * 0.525), t = 0;
    for (size_t i = 0; t < hours * 3600; i++) {
        if (i >= BURST)
            t += -log(pcg32_unit_open(&r)) / rate;
        int64_t est = (600 + (int64_t)pcg32_bounded(&r, 86400)) * 1000000;
        int64_t run = (int64_t)((double)est * (0.05 + 0.95 * pcg32_unit(&r)));
        struct job j = {(int64_t)i + 1, llround(t * 1e6), run, est, sizes[pcg32_bounded(&r, 9)],
                        (int32_t)pcg32_bounded(&r, 40), (int32_t)pcg32_bounded(&r, 4), -1, 0, -1, 0, 0, 0, 0, 0};
        workload_push(&w, &j);
    }
    struct cluster c;
    struct err err;
    err_clear(&err);
    struct policy_host ph;
    if (cluster_init_homogeneous(&c, NODES, GPUS, &err) != 0 || policy_host_open(&ph, spec, NULL, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    /* the host calls the copy with the record as the state; the copy calls
     * the policy with its own */
    struct timed_policy timed = {ph.pl.ops, ph.pl.state, NULL, NULL, NULL, 0, 0};
    struct policy_ops ops = *ph.pl.ops;
    ops.decide = timed_decide;
    ops.observe = ph.pl.ops->observe ? timed_observe : NULL;
    ph.pl.ops = &ops;
    ph.pl.state = &timed;
    struct sim_options o;
    sim_options_init(&o);
    o.until_us = llround(hours * 3600 * 1e6);
    struct sim_result res;
    int rc = simulation_run(&w, &c, &ph, &o, &res, &err);
    ph.pl.ops = timed.inner;
    ph.pl.state = timed.inner_state;
    if (rc != 0 || timed.n < 2) {
        fprintf(stderr, "bench: %s\n", rc ? err.msg : "too few passes");
        return 1;
    }
    /* the passes after the first, less those on a full machine when the
     * policy cannot preempt, gathered at the front */
    int preempts = (ph.kinds & POLICY_KINDS_PREEMPT) != 0;
    double first = timed.seconds[0]; /* before the gathering overwrites it */
    uint32_t qmin = UINT32_MAX, qmax = 0;
    size_t n = 0, full = 0;
    double mean = 0;
    for (size_t k = 1; k < timed.n; k++) {
        if (timed.full[k] && !preempts) {
            full++;
            continue;
        }
        qmin = timed.queued[k] < qmin ? timed.queued[k] : qmin;
        qmax = timed.queued[k] > qmax ? timed.queued[k] : qmax;
        mean += timed.seconds[k];
        timed.seconds[n++] = timed.seconds[k];
    }
    if (n == 0) {
        fprintf(stderr, "bench: no pass with a GPU free\n");
        return 1;
    }
    mean /= (double)n;
    qsort(timed.seconds, n, sizeof *timed.seconds, cmp_double);
    printf("decide-run %-35s %zu passes (%zu more on a full machine), %u-%u queued: median %7.3f ms, 90th %7.3f, "
           "max %7.3f, mean %7.3f; first pass (%u queued, cluster empty) %7.3f ms\n",
           spec, n, full, qmin, qmax, timed.seconds[n / 2] * 1e3, timed.seconds[n * 9 / 10] * 1e3,
           timed.seconds[n - 1] * 1e3, mean * 1e3, timed.queued[0], first * 1e3);
    sim_result_release(&res);
    policy_host_close(&ph);
    cluster_release(&c);
    workload_release(&w);
    free(timed.seconds);
    free(timed.queued);
    free(timed.full);
    return 0;
}

/* Where a run's time goes, period by period: the clock and the queue at
 * the first pass of each period, and at the last pass. The wall clock:
 * the CPU clock is a system call, 12% of this run when read every pass. */
#define PERIODS_MAX 64
struct period_clock {
    sim_time period_us;
    uint32_t reached; /* periods whose first pass was seen */
    double at[PERIODS_MAX + 1];
    uint32_t queued_at[PERIODS_MAX + 1];
    double last;
    uint32_t last_queued;
};

static void period_pass(void *ctx, const struct cluster_view *view, const struct policy_decisions *d)
{
    struct period_clock *qc = ctx;
    double t = now_s();
    while (qc->reached <= PERIODS_MAX && view->now_us >= (sim_time)qc->reached * qc->period_us) {
        qc->at[qc->reached] = t;
        qc->queued_at[qc->reached] = view->n_queued - view->n_queue_gaps;
        qc->reached++;
    }
    qc->last = t;
    qc->last_queued = view->n_queued - view->n_queue_gaps;
}

/* One replication of a forecast scenario, its time split by the
 * scenario's periods within the one run (so every period is measured on
 * the same workload, which runs of different horizons would not be),
 * with the jobs submitted in each and the queue at its end. */
static int bench_forecast_periods(const char *path)
{
    struct scenario s;
    scenario_init(&s);
    struct diag_list diags;
    diag_list_init(&diags, 0);
    struct err err;
    err_clear(&err);
    struct forecast_result shape;
    memset(&shape, 0, sizeof shape);
    struct forecast_replication rep;
    memset(&rep, 0, sizeof rep);
    int rc = 1;
    if (scenario_load(path, &s, &diags, &err) != 0 || forecast_result_init(&shape, &s, 0, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        goto done;
    }
    struct period_clock qc = {.period_us = shape.period_us};
    double t0 = now_s();
    if (forecast_run_replication_observed(&s, 0, NULL, period_pass, &qc, &rep, &err) != 0) {
        fprintf(stderr, "bench: %s\n", err.msg);
        goto done;
    }
    double total = now_s() - t0;
    uint32_t n = shape.n_periods < qc.reached ? shape.n_periods : qc.reached;
    for (uint32_t p = 0; p < n; p++) {
        double end = p + 1 < qc.reached ? qc.at[p + 1] : qc.last;
        uint32_t queued = p + 1 < qc.reached ? qc.queued_at[p + 1] : qc.last_queued;
        double cost = end - qc.at[p], jobs = rep.periods[p].jobs_submitted;
        printf("forecast  %s %u: %6.2f s   %7.0f jobs submitted   %5.2f us a job   %6u waiting at its end\n",
               shape.period_name, p + 1, cost, jobs, jobs > 0 ? cost / jobs * 1e6 : 0, queued);
    }
    printf("forecast  one replication, %u %ss: %.2f s (%.2f s before the first pass: the workload synthesized; "
           "%.2f s after the last: the waits summarised); peak RSS %.1f MiB\n",
           shape.n_periods, shape.period_name, total, qc.reached ? qc.at[0] - t0 : 0,
           t0 + total - qc.last, peak_rss_mib());
    rc = 0;
done:
    forecast_replication_release(&rep, shape.n_periods);
    forecast_result_release(&shape);
    diag_list_release(&diags);
    scenario_release(&s);
    return rc;
}

static int seconds_ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The whole process of a command: from just before its fork to its exit
 * seen by waitpid, its output to /dev/null. Timed here rather than by the
 * shell: `t0=$(date); cmd; t1=$(date)` also counts the start of a `date`
 * process (and a subshell), which on these VMs is 5 to 20 ms, more than
 * the margin HPC2N's replay targets leave. */
static int bench_whole(int runs, char **argv)
{
    enum { MAX_RUNS = 50 };
    double took[MAX_RUNS];
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "bench: whole: RUNS must be 1 to %d\n", MAX_RUNS);
        return 2;
    }
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        pid_t pid = fork();
        if (pid < 0) {
            perror("bench: fork");
            return 1;
        }
        if (pid == 0) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
                _exit(127);
            if (fd != STDOUT_FILENO)
                close(fd);
            execvp(argv[0], argv);
            fprintf(stderr, "bench: whole: cannot run '%s': %s\n", argv[0], strerror(errno));
            _exit(127);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0) {
            if (errno != EINTR) {
                perror("bench: waitpid");
                return 1;
            }
        }
        took[r] = now_s() - t0;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            if (WIFEXITED(status))
                fprintf(stderr, "bench: whole: '%s' exited %d\n", argv[0], WEXITSTATUS(status));
            else
                fprintf(stderr, "bench: whole: '%s' killed by signal %d\n", argv[0], WTERMSIG(status));
            return 1;
        }
    }
    qsort(took, (size_t)runs, sizeof *took, seconds_ascending);
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru); /* the largest peak of the runs */
    printf("%.3f s (best of %d; median %.3f s), peak RSS %.1f MiB\n", took[0], runs,
           runs % 2 ? took[runs / 2] : (took[runs / 2 - 1] + took[runs / 2]) / 2,
           (double)ru.ru_maxrss / 1024.0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "whole"))
        return bench_whole(atoi(argv[2]), argv + 3);
    if (argc == 3 && !strcmp(argv[1], "forecast-periods"))
        return bench_forecast_periods(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "decide"))
        return bench_decide(argv[2], atoi(argv[3]));
    if (argc == 4 && !strcmp(argv[1], "decide-run"))
        return bench_decide_in_run(argv[2], atof(argv[3]));
    if (argc == 4 && !strcmp(argv[1], "replay"))
        return bench_replay(argv[2], argv[3]);
    if (argc >= 4 && argc <= 6 && !strcmp(argv[1], "synthetic"))
        return bench_synthetic((size_t)atol(argv[2]), argv[3], argc >= 5 ? atof(argv[4]) : 0.85,
                               argc == 6 ? atof(argv[5]) : 0);
    if (argc == 3 && !strcmp(argv[1], "fleet"))
        return bench_fleet(atoi(argv[2]));
    if (argc == 4 && !strcmp(argv[1], "engine"))
        return bench_engine((size_t)atol(argv[2]), (size_t)atol(argv[3]));
    fprintf(stderr, "usage: bench replay TRACE SPEC | forecast-periods SCENARIO | synthetic JOBS SPEC [LOAD [DIURNAL]] | engine STEPS PENDING | decide SPEC REPS | decide-run SPEC HOURS | fleet DAYS | whole RUNS CMD [ARG...]\n");
    return 2;
}
