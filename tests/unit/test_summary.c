/* Tests of report/summary.c: the wait percentiles, which it takes from a
 * selection of the order statistics rather than a sort, must be what GSL's
 * quantile of the sorted waits gives, bit for bit, on queues full of equal
 * waits (most jobs start at once), tiny ones and wide spreads alike. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/summary.h"
#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

enum { MAX_JOBS = 5000 };

static void test_wait_percentiles_as_sorted(void)
{
    static struct job jobs[MAX_JOBS];
    static struct sim_job_result res[MAX_JOBS];
    static double sorted[MAX_JOBS];
    struct pcg32 r;
    pcg32_seed(&r, 2026, 5);
    int mismatches = 0;
    for (int trial = 0; trial < 400; trial++) {
        size_t n = trial < 12 ? (size_t)trial + 1 : 1 + pcg32_bounded(&r, MAX_JOBS);
        /* from all equal to all distinct: zeros, a few round values, any */
        uint32_t zeros = pcg32_bounded(&r, 101), rounds = pcg32_bounded(&r, 101);
        size_t n_sorted = 0;
        for (size_t i = 0; i < n; i++) {
            sim_time submit = (sim_time)pcg32_bounded(&r, 1000000) * SIM_US_PER_S;
            uint32_t kind = pcg32_bounded(&r, 100);
            sim_time wait = kind < zeros    ? 0
                            : kind < rounds ? (sim_time)(1 + pcg32_bounded(&r, 4)) * 3600 * SIM_US_PER_S
                                            : (sim_time)pcg32_bounded(&r, 2000000000u);
            int started = pcg32_bounded(&r, 20) != 0; /* some never start: not counted */
            jobs[i] = (struct job){.id = (int64_t)i, .submit_us = submit, .slots = 1};
            res[i] = (struct sim_job_result){started ? submit + wait : -1, started ? submit + wait + 1000 : -1,
                                             SIM_JOB_COMPLETED, 1, 0, 0, 0};
            if (started)
                sorted[n_sorted++] = (double)wait / 1e6;
        }
        struct workload w = {.jobs = jobs, .n = n};
        struct sim_result sr = {.jobs = res, .n = n};
        struct replay_summary s;
        struct err err = {0};
        CHECK_INT(summary_compute(&w, &sr, &s, &err), 0);
        double want[3] = {0, 0, 0};
        if (n_sorted) {
            gsl_sort(sorted, 1, n_sorted);
            want[0] = gsl_stats_quantile_from_sorted_data(sorted, 1, n_sorted, 0.50);
            want[1] = gsl_stats_quantile_from_sorted_data(sorted, 1, n_sorted, 0.95);
            want[2] = gsl_stats_quantile_from_sorted_data(sorted, 1, n_sorted, 0.99);
        }
        double got[3] = {s.wait_p50_s, s.wait_p95_s, s.wait_p99_s};
        int same = memcmp(got, want, sizeof got) == 0;
        if (!same && mismatches++ < 3)
            printf("  trial %d (%zu waits): p50 %.17g p95 %.17g p99 %.17g, sorted gives %.17g %.17g %.17g\n", trial,
                   n_sorted, got[0], got[1], got[2], want[0], want[1], want[2]);
        CHECK(same);
    }
}

void suite_summary(void)
{
    test_run("wait percentiles are those of the sorted waits", test_wait_percentiles_as_sorted);
}
