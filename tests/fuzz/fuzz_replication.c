/* fuzz_replication: libFuzzer target for the scenario-to-replication path:
 * a scenario that loads is synthesized and simulated for one replication
 * (GSL's handler off, as the tools run), which must succeed or fail with a
 * message; never abort in a library. Scenarios too big to run in a fuzzing
 * iteration (many expected jobs or failures, many nodes) are only loaded.
 * Build and run: `make fuzz`. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#include "scenarios/forecast.h"
#include "scenarios/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fuzz_small_enough(const struct scenario *s)
{
    if (s->horizon.length_us <= 0 || s->horizon.length_us > (int64_t)400 * 86400 * 1000000)
        return 0;
    if (s->horizon.sample_us > 0 && s->horizon.length_us / s->horizon.sample_us > 5000)
        return 0;
    if (s->workload.base_trace)
        return 0; /* reads a file */
    double jobs = 0;
    for (size_t i = 0; i < s->workload.n_teams; i++)
        jobs += synth_expected_jobs(&s->workload.teams[i], 0, s->horizon.length_us, s->start_unix_s);
    if (!(jobs < 3000))
        return 0;
    int64_t nodes = 0;
    for (size_t i = 0; i < s->n_partitions; i++)
        nodes += s->partitions[i].nodes;
    for (size_t i = 0; i < s->procurement.n_orders; i++)
        nodes += s->procurement.orders[i].count;
    if (nodes > 2048)
        return 0;
    double fails = scenario_expected_failures_per_day(s) * (double)s->horizon.length_us / 86400e6;
    return fails < 3000;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    struct scenario s;
    struct diag_list d;
    struct err e;
    scenario_init(&s);
    diag_list_init(&d, 64);
    err_clear(&e);
    if (scenario_load_buffer("fuzz.yaml", (const char *)data, size, &s, &d, &e) == 0 && fuzz_small_enough(&s)) {
        struct forecast_replication rep;
        struct err re;
        err_clear(&re);
        struct forecast_result shape;
        if (forecast_result_init(&shape, &s, 1, &re) == 0) {
            int rc = forecast_run_replication(&s, 0, NULL, &rep, &re);
            if ((rc != 0) != (re.set != 0))
                abort();
            if (rc == 0)
                forecast_replication_release(&rep, shape.n_periods);
            forecast_result_release(&shape);
        }
    }
    scenario_release(&s);
    diag_list_release(&d);
    return 0;
}
