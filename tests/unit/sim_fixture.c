#include "tests/unit/sim_fixture.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "policies/registry.h"
#include "sim/pcg32.h"
#include "traces/jsonl.h"

void fixture_workload(struct workload *w, const struct fixture_job *jobs, size_t n)
{
    workload_init(w);
    for (size_t i = 0; i < n; i++) {
        struct job j = {(int64_t)i + 1,
                        llround(jobs[i].submit_s * 1e6),
                        llround(jobs[i].runtime_s * 1e6),
                        jobs[i].limit_s < 0 ? -1 : llround(jobs[i].limit_s * 1e6),
                        jobs[i].slots,
                        -1,
                        -1,
                        -1,
                        (long)i + 1,
                        -1,
                        0,
                        0, 0, 0, 0};
        workload_push(w, &j);
    }
    workload_sort_by_submit(w);
}

void fixture_random_workload(struct workload *w, size_t n, int max_slots, uint64_t seed)
{
    struct pcg32 r;
    pcg32_stream(&r, seed, RNG_TEST, 0);
    workload_init(w);
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        t += floor(-log(pcg32_unit_open(&r)) * 30.0); /* whole seconds: ties happen */
        double run = floor(-log(pcg32_unit_open(&r)) * 200.0);
        double limit = floor(run * (1.0 + 2.0 * pcg32_unit(&r)));
        if (pcg32_bounded(&r, 10) == 0)
            limit = floor(run / 2); /* overruns: killed at the limit */
        if (limit < 1)
            limit = 1;
        int slots = 1 + (int)pcg32_bounded(&r, pcg32_bounded(&r, 4) == 0 ? (uint32_t)max_slots : 4);
        struct job j = {(int64_t)i + 1, llround(t * 1e6), llround(run * 1e6), llround(limit * 1e6), slots,
                        -1, -1, -1, (long)i + 1, -1, 0, 0, 0, 0, 0};
        workload_push(w, &j);
    }
}

int fixture_replay(const struct workload *w, int nodes, int slots, const char *spec, double *starts,
                   struct sim_options *opt)
{
    struct cluster c;
    struct err err;
    err_clear(&err);
    if (cluster_init_homogeneous(&c, nodes, slots, &err) != 0)
        return -1;
    const struct policy_ops *ops;
    void *state;
    char msg[256];
    if (policy_registry_create(spec, &ops, &state, msg, sizeof msg) != 0) {
        printf("fixture: %s\n", msg);
        cluster_release(&c);
        return -1;
    }
    struct sim_result res;
    int rc = fixture_run_ops(w, &c, ops, state, opt, &res, &err);
    if (rc == 0 && starts)
        for (size_t i = 0; i < w->n; i++)
            starts[i] = res.jobs[i].start_us < 0 ? -1 : (double)res.jobs[i].start_us / 1e6;
    if (rc != 0)
        printf("fixture: %s\n", err.msg);
    sim_result_release(&res);
    ops->destroy(state);
    cluster_release(&c);
    return rc;
}

int fixture_run_ops(const struct workload *w, const struct cluster *c, const struct policy_ops *ops, void *state,
                    const struct sim_options *opt, struct sim_result *res, struct err *err)
{
    struct policy_host ph;
    policy_host_adopt(&ph, ops, state, ops->name);
    int rc = simulation_run(w, c, &ph, opt, res, err);
    policy_host_close(&ph);
    return rc;
}

int fixture_read_jsonl(struct workload *w, const char *text)
{
    struct diag_list d;
    struct err e;
    diag_list_init(&d, 100);
    err_clear(&e);
    workload_init(w);
    int rc = jsonl_read_buffer("t.jsonl", text, strlen(text), w, &d, &e);
    if (rc != 0)
        printf("fixture_read_jsonl: %s\n", e.msg);
    diag_list_release(&d);
    return rc;
}
