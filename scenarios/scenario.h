/* scenario: a what-if scenario as the models need it, loaded from YAML and
 * checked against the schema table (scenarios/schema.h), which is the single
 * source for validation, defaults, units and `fleetsim help scenario`.
 *
 * Sections so far: seed, start_date, node_types (overrides and additions to
 * the built-in catalog), cluster (partitions, fabric), runtime (job classes'
 * communication fractions), failures (preset, categories, distribution,
 * checkpoints), procurement (orders, retirements), and the planner's
 * workload (teams and a base trace, traces/synth.h), horizon, forecast, plan
 * and sweep. Sections that are absent take the schema's defaults
 * (scenario_init sets the same values); has_workload says whether the file
 * had a workload at all.
 *
 * Durations and dates become microseconds relative to start_date; sizes and
 * bandwidths their SI value (the unit is in the field name). The scenario
 * owns everything it points to.
 */
#ifndef FLEETSIM_SCENARIOS_SCENARIO_H
#define FLEETSIM_SCENARIOS_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "models/fabric.h"
#include "models/failures.h"
#include "models/node_types.h"
#include "models/procurement.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "traces/synth.h"

enum { PARTITION_NAME_MAX = 32 };

struct partition_spec {
    char name[PARTITION_NAME_MAX];
    int32_t type; /* index into catalog */
    int64_t nodes;
};

/* The planner's sections (issue #4). */
enum period_kind { PERIOD_WEEK, PERIOD_MONTH, PERIOD_QUARTER };
enum { POLICY_SPEC_MAX = 128, PLAN_SLO_TEXT_MAX = 128 };

struct horizon_spec {
    sim_time length_us;       /* default 4 quarters */
    enum period_kind period;  /* default quarter; a month is 365/12 days, a quarter 13 weeks */
    sim_time period_us;
    sim_time sample_us;       /* time series step, default 1 day */
};

struct forecast_spec {
    uint32_t replications;          /* default 20 */
    char policy[POLICY_SPEC_MAX];   /* default "fcfs+easy"; or a plugin path */
    double decide_timeout_s;        /* per decide() call; 0: the host's default (not a scenario key) */
};

struct plan_spec {
    int has_slo;
    char slo_metric[16];      /* "p50_wait", "p95_wait", "p99_wait" */
    double slo_threshold_s;
    double confidence;        /* share of replications that must meet the SLO, default 0.9 */
    int32_t *candidate_types; /* catalog indices the planner may order; default: the partitions' types */
    size_t n_candidates;
    int64_t max_nodes;        /* per order, default 1024 */
    int64_t step_nodes;       /* order sizes are multiples of this, default 1 */
    struct distribution lead_time_s;     /* for the orders the planner adds; default fixed 26w */
    double burn_in_s;                    /* default 7d */
    /* more SLOs, each "[TEAM:] METRIC <= DURATION" (plan.slos); all must hold */
    char (*slos)[PLAN_SLO_TEXT_MAX];
    size_t n_slos;
    /* policies the planner may adopt instead of (or as well as) buying */
    char (*policies)[POLICY_SPEC_MAX];
    size_t n_policies;
    /* rented capacity (plan.rent): nodes of rent_type at $/GPU-hour, for at
     * least rent_min_term_s, arriving rent_lead_time_s after the order */
    int has_rent;
    int32_t rent_type;
    double rent_usd_per_gpu_hour;
    double rent_min_term_s;
    double rent_lead_time_s;
    double budget_per_quarter_usd; /* 0: no limit; purchases and rentals, by order date */
    /* running costs of bought nodes from their arrival to the horizon's end */
    double power_usd_per_kwh;      /* default 0 */
    double pue;                    /* default 1 */
    double hosting_usd_per_node_year; /* default 0 */
};

struct sweep_spec {
    double *growth;           /* values for every team's growth_per_quarter */
    size_t n_growth;
    char (*policies)[POLICY_SPEC_MAX];
    size_t n_policies;
};

struct scenario {
    char *path;
    /* per team: how long a service team's replica takes to restart in place
     * after a failure, 0 for batch teams (from workload.teams[].service) */
    sim_time *service_restart_us;
    uint64_t seed;
    int64_t start_unix_s; /* start_date as a Unix time (UTC midnight); 0 if not given */
    struct node_catalog catalog;
    struct partition_spec *partitions;
    size_t n_partitions;
    struct fabric_spec fabric;
    enum job_class default_class;
    double comm_fraction[JOB_CLASS_COUNT];
    struct failure_spec failures;
    struct procurement_spec procurement;
    /* planner sections; has_workload is 0 when the file has no workload */
    int has_workload;
    struct workload_spec workload;
    struct horizon_spec horizon;
    struct forecast_spec forecast;
    struct plan_spec plan;
    struct sweep_spec sweep;
};

void scenario_init(struct scenario *s);
void scenario_release(struct scenario *s);
/* Loads and validates path into s, which must be initialised (release it
 * whatever the outcome). The built-in catalog comes first; the file's
 * node_types then override or add. Every problem found goes to diags as
 * "file:line:col: error: ..." (naming the key, the valid range or the nearest
 * valid key), at most READER_MAX_ERRORS of them; returns 0, or -1 with err
 * set to the first. A file that cannot be read sets err only, with
 * "cannot read" in its message. */
int scenario_load(const char *path, struct scenario *s, struct diag_list *diags, struct err *err);
int scenario_load_buffer(const char *name, const char *data, size_t len, struct scenario *s,
                         struct diag_list *diags, struct err *err);
/* Total GPUs of the initial inventory. */
int64_t scenario_initial_gpus(const struct scenario *s);
/* Failures per day the initial inventory should see on average (the sum of
 * category rates x units x 24 h); 0 with failures disabled. */
double scenario_expected_failures_per_day(const struct scenario *s);
/* Reads a node-type catalog document (only a `node_types` list, as
 * models/catalog/node-types.yaml) into c, adding or overriding types; the
 * same schema rows and checks as a scenario's node_types. Returns 0 or -1. */
int scenario_read_catalog(const char *name, const char *data, size_t len, struct node_catalog *c,
                          struct diag_list *diags, struct err *err);

#endif
