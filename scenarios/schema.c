#include "scenarios/schema.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim/units.h"
#include "sim/suggest.h"

/* Rows for a distribution at path p: a duration, or a mapping naming the
 * kind and its parameters (models/distribution.h). Which parameters a kind
 * takes is checked where the value is filled (reader_distribution). */
#define DIST_ROWS(p)                                                                                     \
    {p ".distribution", SCHEMA_ENUM, "fixed|uniform|exponential|weibull|lognormal", NAN, NAN, NULL,       \
     SCHEMA_REQUIRED, "kind; its parameters: fixed{value} uniform{lo,hi} exponential{mean} "              \
                      "weibull{shape,scale} lognormal{median,sigma}"},                                    \
        {p ".value", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "fixed: the value"},                        \
        {p ".lo", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "uniform: the lowest value"},                  \
        {p ".hi", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "uniform: the highest value (>= lo)"},         \
        {p ".mean", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE, "exponential: the mean"}, \
        {p ".shape", SCHEMA_NUMBER, NULL, 0, 100, NULL, SCHEMA_MIN_EXCLUSIVE,                            \
         "weibull: shape k (< 1 infant mortality, > 1 wear-out)"},                                       \
        {p ".scale", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE, "weibull: scale"},       \
        {p ".median", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE, "lognormal: the median"}, \
        {p ".sigma", SCHEMA_NUMBER, NULL, 0, 10, NULL, 0, "lognormal: standard deviation of the log"}

#define CHECKPOINT_ROWS(cls, interval, overhead)                                                          \
    {"failures.checkpoint." cls, SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, cls " jobs"},                       \
        {"failures.checkpoint." cls ".interval", SCHEMA_DURATION, NULL, 0, NAN, interval, 0,              \
         "progress between checkpoints; 0 = never (a killed job starts over)"},                           \
        {"failures.checkpoint." cls ".overhead", SCHEMA_DURATION, NULL, 0, NAN, overhead, 0,              \
         "time spent writing one checkpoint (less than the interval)"}

/* A team's runtime for one class: a duration (fixed), a distribution as in
 * DIST_ROWS (but `distribution` is not required: `empirical` may stand
 * instead; fill_workload checks that exactly one is given). */
#define RUNTIME_ROWS(cls)                                                                                \
    {"workload.teams[].runtime." cls, SCHEMA_DISTRIBUTION, NULL, NAN, NAN, NULL, 0,                      \
     cls " jobs: a duration, {distribution: KIND, ...} or {empirical: [durations]}"},                     \
        {"workload.teams[].runtime." cls ".distribution", SCHEMA_ENUM,                                     \
         "fixed|uniform|exponential|weibull|lognormal", NAN, NAN, NULL, 0,                                \
         "kind; its parameters: fixed{value} uniform{lo,hi} exponential{mean} weibull{shape,scale} "      \
         "lognormal{median,sigma}"},                                                                      \
        {"workload.teams[].runtime." cls ".value", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "fixed: the value"}, \
        {"workload.teams[].runtime." cls ".lo", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "uniform: the lowest value"}, \
        {"workload.teams[].runtime." cls ".hi", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0,                    \
         "uniform: the highest value (>= lo)"},                                                           \
        {"workload.teams[].runtime." cls ".mean", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE, \
         "exponential: the mean"},                                                                        \
        {"workload.teams[].runtime." cls ".shape", SCHEMA_NUMBER, NULL, 0, 100, NULL, SCHEMA_MIN_EXCLUSIVE, \
         "weibull: shape k (< 1: many short jobs and a long tail)"},                                      \
        {"workload.teams[].runtime." cls ".scale", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE, \
         "weibull: scale"},                                                                               \
        {"workload.teams[].runtime." cls ".median", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE, \
         "lognormal: the median"},                                                                        \
        {"workload.teams[].runtime." cls ".sigma", SCHEMA_NUMBER, NULL, 0, 10, NULL, 0,                    \
         "lognormal: standard deviation of the log"},                                                     \
        {"workload.teams[].runtime." cls ".empirical", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,               \
         "runtimes to resample uniformly, instead of a distribution"},                                    \
        {"workload.teams[].runtime." cls ".empirical[]", SCHEMA_DURATION, NULL, 0, NAN, NULL,              \
         SCHEMA_MIN_EXCLUSIVE, "one runtime"}

const struct schema_key schema_keys[] = {
    /* top level */
    {"seed", SCHEMA_INT, NULL, 0, 9007199254740992.0, "1", 0,
     "seed of every random stream (failures, lead times, ...): same seed, same run"},
    {"start_date", SCHEMA_DATE, NULL, NAN, NAN, NULL, 0,
     "the calendar day the simulation starts (UTC midnight); needed to write dates elsewhere"},

    /* node_types */
    {"node_types", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "override fields of built-in node types (by name), or add new types"},
    {"node_types[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one node type"},
    {"node_types[].name", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "type name (at most 31 characters); a built-in name overrides only the fields given"},
    {"node_types[].gpus", SCHEMA_INT, NULL, 1, 1024, NULL, 0, "GPUs per node (required for a new type)"},
    {"node_types[].nvlink_domain_gpus", SCHEMA_INT, NULL, 0, 100000, NULL, 0,
     "GPUs in one NVLink domain: 8 on HGX boards, 72 on GB200 NVL72, 0 = none (PCIe); "
     "divides or is a multiple of gpus (default for a new type: 0)"},
    {"node_types[].nvlink_bandwidth", SCHEMA_BANDWIDTH, NULL, 0, 1e6, NULL, SCHEMA_MIN_EXCLUSIVE,
     "NVLink bandwidth per GPU, both directions; with no NVLink, the PCIe bandwidth "
     "(required for a new type)"},
    {"node_types[].gpu_memory", SCHEMA_BYTES, NULL, 0, 1099511627776.0, NULL, SCHEMA_MIN_EXCLUSIVE,
     "memory per GPU, e.g. 80GiB or 141GB (required for a new type)"},
    {"node_types[].power", SCHEMA_POWER, NULL, 0, 1e6, NULL, SCHEMA_MIN_EXCLUSIVE,
     "power per node at full load, e.g. 10.2kW (required for a new type)"},
    {"node_types[].price_usd", SCHEMA_MONEY, NULL, 0, 1e9, NULL, 0,
     "list price per node, e.g. 250000 or $250k: a placeholder to override (default for a new type: 0)"},
    {"node_types[].speed", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "speed per job class relative to an H100-SXM node (1.0); a job runs runtime / speed "
     "(all three required for a new type)"},
    {"node_types[].speed.training", SCHEMA_NUMBER, NULL, 0, 100, NULL, SCHEMA_MIN_EXCLUSIVE, "pre-training"},
    {"node_types[].speed.finetune", SCHEMA_NUMBER, NULL, 0, 100, NULL, SCHEMA_MIN_EXCLUSIVE, "fine-tuning"},
    {"node_types[].speed.inference", SCHEMA_NUMBER, NULL, 0, 100, NULL, SCHEMA_MIN_EXCLUSIVE, "inference"},
    {"node_types[].sources", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "where the figures come from (documentation; not used by the simulator)"},
    {"node_types[].sources[]", SCHEMA_STRING, NULL, NAN, NAN, NULL, 0, "one source"},

    /* cluster */
    {"cluster", SCHEMA_MAP, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED, "the initial inventory and its network"},
    {"cluster.partitions", SCHEMA_LIST, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "groups of nodes of one type (at least one)"},
    {"cluster.partitions[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one partition"},
    {"cluster.partitions[].name", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "unique name (at most 31 characters)"},
    {"cluster.partitions[].node_type", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "a node type of the catalog (built-in or from node_types)"},
    {"cluster.partitions[].nodes", SCHEMA_INT, NULL, 1, 1000000, NULL, SCHEMA_REQUIRED, "how many nodes"},
    {"cluster.fabric", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "the network between nodes (default: none)"},
    {"cluster.fabric.kind", SCHEMA_ENUM, "none|fat-tree|rail-optimized", NAN, NAN, "none", 0,
     "none: jobs never wait on the network; fat-tree: leaf/spine; rail-optimized: one rail switch "
     "per GPU position"},
    {"cluster.fabric.nodes_per_leaf", SCHEMA_INT, NULL, 1, 100000, "32", 0,
     "nodes under one leaf (a scalable unit's rail switches in a rail-optimized fabric)"},
    {"cluster.fabric.leaves_per_pod", SCHEMA_INT, NULL, 1, 100000, "8", 0, "leaves under one spine block"},
    {"cluster.fabric.oversubscription", SCHEMA_NUMBER, NULL, 1, 64, "1", 0,
     "leaf downlink over uplink bandwidth (1 = non-blocking)"},
    {"cluster.fabric.link", SCHEMA_BANDWIDTH, NULL, 0, 100000, "400Gbps", SCHEMA_MIN_EXCLUSIVE,
     "per-GPU NIC rate (one NIC per GPU)"},

    /* runtime */
    {"runtime", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "how job classes run"},
    {"runtime.default_class", SCHEMA_ENUM, "training|finetune|inference", NAN, NAN, "training", 0,
     "the class of a job whose trace does not say"},
    {"runtime.comm_fraction", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "share of a job's runtime spent communicating, per class; the part the fabric slows down"},
    {"runtime.comm_fraction.training", SCHEMA_NUMBER, NULL, 0, 1, "0.2", 0, "pre-training"},
    {"runtime.comm_fraction.finetune", SCHEMA_NUMBER, NULL, 0, 1, "0.1", 0, "fine-tuning"},
    {"runtime.comm_fraction.inference", SCHEMA_NUMBER, NULL, 0, 1, "0", 0, "inference"},

    /* failures */
    {"failures", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "what breaks and how often; no section = no failures"},
    {"failures.enabled", SCHEMA_BOOL, NULL, NAN, NAN, "true", 0, "false keeps the section but simulates no failures"},
    {"failures.preset", SCHEMA_ENUM, "llama3", NAN, NAN, NULL, 0,
     "start from built-in categories: llama3 = the 18 of Meta's Llama 3 report (419 interruptions, "
     "16,384 H100 GPUs, 54 days)"},
    {"failures.distribution", SCHEMA_ENUM, "exponential|weibull", NAN, NAN, "exponential", 0,
     "times between a node's failures"},
    {"failures.weibull_shape", SCHEMA_NUMBER, NULL, 0, 20, NULL, SCHEMA_MIN_EXCLUSIVE,
     "Weibull shape, with distribution weibull only (and required then); the mean stays the "
     "exponential one"},
    {"failures.categories", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "failure categories: add new ones, or override a preset's by name"},
    {"failures.categories[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one category"},
    {"failures.categories[].name", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "name (at most 47 characters); a preset's name overrides only the fields given"},
    {"failures.categories[].scope", SCHEMA_ENUM, "gpu|node|link", NAN, NAN, NULL, 0,
     "what one failure strikes: a GPU, a node, or a network link (one per GPU); required for a "
     "new category"},
    {"failures.categories[].rate_per_unit_hour", SCHEMA_NUMBER, NULL, 0, 1, NULL, 0,
     "failures per unit (GPU, node or link) per hour; required for a new category"},
    {"failures.categories[].repair", SCHEMA_DISTRIBUTION, NULL, NAN, NAN, NULL, 0,
     "how long the node is down: a duration, or a distribution; required for a new category"},
    DIST_ROWS("failures.categories[].repair"),
    {"failures.checkpoint", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "how often each job class checkpoints; a killed job loses the work since its last"},
    CHECKPOINT_ROWS("training", "30m", "1m"),
    CHECKPOINT_ROWS("finetune", "1h", "30s"),
    CHECKPOINT_ROWS("inference", "0", "0"),

    /* procurement */
    {"procurement", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "capacity that arrives and leaves during the run"},
    {"procurement.orders", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0, "purchase orders"},
    {"procurement.orders[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one order"},
    {"procurement.orders[].at", SCHEMA_DATE_OR_DURATION, NULL, 0, NAN, NULL, SCHEMA_REQUIRED,
     "when it is placed: a date (needs start_date) or a duration from the start, e.g. 4w"},
    {"procurement.orders[].node_type", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "a node type of the catalog"},
    {"procurement.orders[].count", SCHEMA_INT, NULL, 1, 1000000, NULL, SCHEMA_REQUIRED, "how many nodes"},
    {"procurement.orders[].lead_time", SCHEMA_DISTRIBUTION, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "order to delivery: a duration (26w), or a distribution, e.g. {distribution: uniform, lo: 20w, hi: 30w}"},
    DIST_ROWS("procurement.orders[].lead_time"),
    {"procurement.orders[].burn_in", SCHEMA_DURATION, NULL, 0, NAN, "0", 0,
     "testing after delivery before the nodes take jobs"},
    {"procurement.retirements", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "nodes drained and removed (running jobs finish first)"},
    {"procurement.retirements[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one retirement"},
    {"procurement.retirements[].at", SCHEMA_DATE_OR_DURATION, NULL, 0, NAN, NULL, SCHEMA_REQUIRED,
     "when draining starts: a date (needs start_date) or a duration from the start"},
    {"procurement.retirements[].node_type", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "a node type present in the cluster"},
    {"procurement.retirements[].count", SCHEMA_INT, NULL, 1, 1000000, NULL, SCHEMA_REQUIRED,
     "how many nodes; at most those of the type present (initial plus ordered before)"},

    /* workload (the planner's job source) */
    {"workload", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "the jobs a forecast simulates: synthetic teams, and optionally a trace replayed as the base load"},
    {"workload.trace", SCHEMA_STRING, NULL, NAN, NAN, NULL, 0,
     "a trace (SWF, native JSONL, sacct -P export) replayed from the start as the base load, repeated "
     "if shorter than the horizon; a relative path is relative to the scenario file"},
    {"workload.base_growth_per_quarter", SCHEMA_NUMBER, NULL, -0.9, 100, "0", 0,
     "growth of the base trace's load per 13 weeks, compounded: copies of its jobs are added (or jobs "
     "dropped, below 0)"},
    {"workload.teams", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "synthetic teams; each draws from its own random streams"},
    {"workload.teams[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one team"},
    {"workload.teams[].name", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "unique name (at most 47 characters); jobs carry it as their team"},
    {"workload.teams[].jobs_per_hour", SCHEMA_NUMBER, NULL, 0, 1e6, NULL, SCHEMA_REQUIRED | SCHEMA_MIN_EXCLUSIVE,
     "mean arrival rate at the start (Poisson), before the profiles, bursts and growth"},
    {"workload.teams[].hourly", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "24 multipliers by hour of day (UTC), normalised to mean 1 (default: flat)"},
    {"workload.teams[].hourly[]", SCHEMA_NUMBER, NULL, 0, 1e6, NULL, 0, "one hour's multiplier"},
    {"workload.teams[].weekly", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "7 multipliers by day of week, Monday first, normalised to mean 1 (default: flat)"},
    {"workload.teams[].weekly[]", SCHEMA_NUMBER, NULL, 0, 1e6, NULL, 0, "one day's multiplier"},
    {"workload.teams[].bursts", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "intervals when the rate is multiplied (overlapping bursts multiply)"},
    {"workload.teams[].bursts[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one burst"},
    {"workload.teams[].bursts[].start", SCHEMA_DATE_OR_DURATION, NULL, 0, NAN, NULL, SCHEMA_REQUIRED,
     "first day (a date; needs start_date) or a duration from the start"},
    {"workload.teams[].bursts[].end", SCHEMA_DATE_OR_DURATION, NULL, 0, NAN, NULL, SCHEMA_REQUIRED,
     "end, exclusive (after start): a date or a duration from the start"},
    {"workload.teams[].bursts[].multiplier", SCHEMA_NUMBER, NULL, 0, 1e6, NULL, SCHEMA_REQUIRED,
     "rate multiplier during the burst"},
    {"workload.teams[].gpus", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "GPU count -> weight, e.g. {1: 0.4, 8: 0.5, 64: 0.1} (default: every job 1 GPU)"},
    {"workload.teams[].gpus.*", SCHEMA_NUMBER, NULL, 0, NAN, NULL, 0,
     "the weight of a GPU count (the key: an integer 1 to 1000000); weights need not sum to 1"},
    {"workload.teams[].classes", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "job class -> weight (default: all jobs of runtime.default_class)"},
    {"workload.teams[].classes.training", SCHEMA_NUMBER, NULL, 0, NAN, NULL, 0, "pre-training"},
    {"workload.teams[].classes.finetune", SCHEMA_NUMBER, NULL, 0, NAN, NULL, 0, "fine-tuning"},
    {"workload.teams[].classes.inference", SCHEMA_NUMBER, NULL, 0, NAN, NULL, 0,
     "inference services (long lifetimes)"},
    {"workload.teams[].runtime", SCHEMA_MAP, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "runtime per job class, on the reference node (H100-SXM); every class with a weight needs one"},
    RUNTIME_ROWS("training"),
    RUNTIME_ROWS("finetune"),
    RUNTIME_ROWS("inference"),
    {"workload.teams[].runtime_by_gpus", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "runtimes by job size, overriding the class runtimes: an entry serves jobs of more GPUs than the previous "
     "entry's up_to and at most its own (larger jobs: the last entry); fleetsim fit writes them"},
    {"workload.teams[].runtime_by_gpus[]", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "one size class"},
    {"workload.teams[].runtime_by_gpus[].up_to", SCHEMA_INT, NULL, 1, 1000000, NULL, SCHEMA_REQUIRED,
     "the largest GPU count of the class (entries in increasing order)"},
    {"workload.teams[].runtime_by_gpus[].runtime", SCHEMA_DISTRIBUTION, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED,
     "the runtime of the class's jobs: a duration, {distribution: KIND, ...} or {empirical: [durations]}"},
    {"workload.teams[].runtime_by_gpus[].runtime.distribution", SCHEMA_ENUM,
     "fixed|uniform|exponential|weibull|lognormal", NAN, NAN, NULL, 0,
     "kind; its parameters: fixed{value} uniform{lo,hi} exponential{mean} weibull{shape,scale} lognormal{median,sigma}"},
    {"workload.teams[].runtime_by_gpus[].runtime.value", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "fixed: the value"},
    {"workload.teams[].runtime_by_gpus[].runtime.lo", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "uniform: the lowest value"},
    {"workload.teams[].runtime_by_gpus[].runtime.hi", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0,
     "uniform: the highest value (>= lo)"},
    {"workload.teams[].runtime_by_gpus[].runtime.mean", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE,
     "exponential: the mean"},
    {"workload.teams[].runtime_by_gpus[].runtime.shape", SCHEMA_NUMBER, NULL, 0, 100, NULL, SCHEMA_MIN_EXCLUSIVE,
     "weibull: shape k"},
    {"workload.teams[].runtime_by_gpus[].runtime.scale", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE,
     "weibull: scale"},
    {"workload.teams[].runtime_by_gpus[].runtime.median", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE,
     "lognormal: the median"},
    {"workload.teams[].runtime_by_gpus[].runtime.sigma", SCHEMA_NUMBER, NULL, 0, 10, NULL, 0,
     "lognormal: standard deviation of the log"},
    {"workload.teams[].runtime_by_gpus[].runtime.empirical", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "runtimes resampled with equal weight (fit writes the means of equal-count bins of the observed ones)"},
    {"workload.teams[].runtime_by_gpus[].runtime.empirical[]", SCHEMA_DURATION, NULL, 0, NAN, NULL, 0, "one runtime"},
    {"workload.teams[].service", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "the team's jobs are long-running services: each arrival deploys replicas that, after a failure, restart "
     "in place (keeping their GPUs) instead of rolling back to a checkpoint and queueing again"},
    {"workload.teams[].service.replicas", SCHEMA_INT, NULL, 1, 100000, "1", 0,
     "replicas per deployment, each with the drawn GPU count and lifetime"},
    {"workload.teams[].service.restart", SCHEMA_DURATION, NULL, 0, NAN, "10min", SCHEMA_MIN_EXCLUSIVE,
     "how long a replica is out after a failure (the GPU time lost to it)"},
    {"workload.teams[].limits", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "requested times as users give them (fit writes 100 quantiles): a job's limit is drawn among those at least "
     "its runtime, else it is its runtime; overrides limit_factor and limit_round"},
    {"workload.teams[].limits[]", SCHEMA_DURATION, NULL, 0, NAN, NULL, SCHEMA_MIN_EXCLUSIVE, "one requested time"},
    {"workload.teams[].batch", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "jobs per arrival (job arrays, scripted submissions), resampled: an arrival brings that many jobs at once "
     "and arrivals come at jobs_per_hour / their mean (default: one job per arrival)"},
    {"workload.teams[].batch[]", SCHEMA_NUMBER, NULL, 1, 1e6, NULL, 0, "one arrival's number of jobs (rounded)"},
    {"workload.teams[].limit_factor", SCHEMA_NUMBER, NULL, 1, 1000, "1", 0,
     "requested time = runtime x this (1 = exact estimates)"},
    {"workload.teams[].limit_round", SCHEMA_DURATION, NULL, 0, NAN, "0", 0,
     "requested times are rounded up to a multiple of this (0 = not rounded)"},
    {"workload.teams[].growth_per_quarter", SCHEMA_NUMBER, NULL, -0.9, 100, "0", 0,
     "arrival-rate growth per 13 weeks, compounded continuously: rate x (1 + g)^(t / 13w)"},
    {"workload.teams[].priority", SCHEMA_INT, NULL, -1000000, 1000000, "0", 0,
     "the team's priority (QoS) for policies that use one; larger is more important"},

    /* horizon */
    {"horizon", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "how far a forecast looks and how it is reported"},
    {"horizon.length", SCHEMA_DURATION, NULL, 0, 100 * 365 * 86400.0, "52w", SCHEMA_MIN_EXCLUSIVE,
     "simulated time from the start (4 quarters of 13 weeks by default)"},
    {"horizon.period", SCHEMA_ENUM, "week|month|quarter", NAN, NAN, "quarter", 0,
     "the reporting period (a month is 365/12 days, a quarter 13 weeks)"},
    {"horizon.sample", SCHEMA_DURATION, NULL, 0, NAN, "1d", SCHEMA_MIN_EXCLUSIVE,
     "step of the time series (capacity, demand, queue) in the report"},

    /* forecast */
    {"forecast", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "Monte Carlo replications of the horizon"},
    {"forecast.replications", SCHEMA_INT, NULL, 1, 10000, "20", 0,
     "independent runs, each with its own derived seed; results show their spread"},
    {"forecast.policy", SCHEMA_STRING, NULL, NAN, NAN, "fcfs+easy", 0,
     "the scheduling policy, as --policy takes it (e.g. fcfs+easy, sjf+easy)"},

    /* plan */
    {"plan", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0, "what `fleetsim plan` may order to meet an SLO"},
    {"plan.slo", SCHEMA_STRING, NULL, NAN, NAN, NULL, 0,
     "'[TEAM:] METRIC <= DURATION', METRIC one of p50_wait, p95_wait, p99_wait, mean_wait, e.g. "
     "'p95_wait <= 2h' (--slo overrides it and plan.slos)"},
    {"plan.confidence", SCHEMA_NUMBER, NULL, 0, 1, "0.9", SCHEMA_MIN_EXCLUSIVE,
     "share of replications that must meet the SLO in every period"},
    {"plan.candidates", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "node types the planner may order (default: the partitions' types)"},
    {"plan.candidates[]", SCHEMA_STRING, NULL, NAN, NAN, NULL, 0, "a node type of the catalog"},
    {"plan.max_nodes", SCHEMA_INT, NULL, 1, 1000000, "1024", 0, "most nodes in one order"},
    {"plan.step_nodes", SCHEMA_INT, NULL, 1, 1000000, "1", 0,
     "order sizes are multiples of this (e.g. a scalable unit; at most max_nodes)"},
    {"plan.lead_time", SCHEMA_DISTRIBUTION, NULL, NAN, NAN, "26w", 0,
     "order to delivery for the orders the planner adds: a duration or a distribution"},
    DIST_ROWS("plan.lead_time"),
    {"plan.burn_in", SCHEMA_DURATION, NULL, 0, NAN, "7d", 0, "testing after delivery before the nodes take jobs"},
    {"plan.slos", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "more SLOs, all of which must hold (with plan.slo): '[TEAM:] METRIC <= DURATION', METRIC one of p50_wait, "
     "p95_wait, p99_wait, mean_wait; a TEAM counts only that team's jobs, e.g. 'research: p95_wait <= 4h'"},
    {"plan.slos[]", SCHEMA_STRING, NULL, NAN, NAN, NULL, 0, "one SLO"},
    {"plan.policies", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "policies the planner may adopt instead of the forecast's: each gets its own cheapest plan, and the "
     "cheapest of them all is recommended"},
    {"plan.policies[]", SCHEMA_STRING, NULL, NAN, NAN, NULL, 0, "one policy, as forecast.policy"},
    {"plan.rent", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "rented capacity (cloud or reserved GPUs) the planner may add for a period instead of buying"},
    {"plan.rent.node_type", SCHEMA_STRING, NULL, NAN, NAN, NULL, SCHEMA_REQUIRED, "the node type rented"},
    {"plan.rent.usd_per_gpu_hour", SCHEMA_NUMBER, NULL, 0, 1e6, NULL, SCHEMA_REQUIRED | SCHEMA_MIN_EXCLUSIVE,
     "price per GPU-hour"},
    {"plan.rent.min_term", SCHEMA_DURATION, NULL, 0, NAN, "30d", 0,
     "shortest rental; a rental lasts the period it is for, or this if longer"},
    {"plan.rent.lead_time", SCHEMA_DURATION, NULL, 0, NAN, "7d", 0, "order to availability"},
    {"plan.budget_per_quarter", SCHEMA_NUMBER, NULL, 0, 1e15, "0", 0,
     "most USD the plan may commit in one quarter (purchases and rentals, by order date); 0: no limit"},
    {"plan.power_usd_per_kwh", SCHEMA_NUMBER, NULL, 0, 100, "0", 0,
     "electricity price; bought nodes draw their node type's power x pue from arrival to the horizon's end"},
    {"plan.pue", SCHEMA_NUMBER, NULL, 1, 5, "1", 0, "power usage effectiveness of the data centre"},
    {"plan.hosting_usd_per_node_year", SCHEMA_NUMBER, NULL, 0, 1e9, "0", 0,
     "space, network and support per bought node and year, from arrival to the horizon's end"},

    /* sweep */
    {"sweep", SCHEMA_MAP, NULL, NAN, NAN, NULL, 0,
     "what-ifs in one scenario: every combination of the values is forecast side by side"},
    {"sweep.growth", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0,
     "values for every team's growth_per_quarter (and the base trace's)"},
    {"sweep.growth[]", SCHEMA_NUMBER, NULL, -0.9, 100, NULL, 0, "one growth per quarter"},
    {"sweep.policy", SCHEMA_LIST, NULL, NAN, NAN, NULL, 0, "policies to compare, as forecast.policy"},
    {"sweep.policy[]", SCHEMA_STRING, NULL, NAN, NAN, NULL, 0, "one policy"},
};

const size_t schema_key_count = sizeof schema_keys / sizeof *schema_keys;

const struct schema_key *schema_find(const char *path)
{
    for (size_t i = 0; i < schema_key_count; i++)
        if (strcmp(schema_keys[i].path, path) == 0)
            return &schema_keys[i];
    return NULL;
}

const struct schema_key *schema_wildcard(const char *parent_path)
{
    char path[512];
    int n = snprintf(path, sizeof path, "%s.*", parent_path);
    return n > 0 && (size_t)n < sizeof path ? schema_find(path) : NULL;
}

const char *schema_key_name(const struct schema_key *k)
{
    const char *dot = strrchr(k->path, '.');
    return dot ? dot + 1 : k->path;
}

static int has_parent(const struct schema_key *k, const char *parent)
{
    size_t n = strlen(parent);
    if (n == 0)
        return strchr(k->path, '.') == NULL && strchr(k->path, '[') == NULL;
    /* a child is "parent.name" with no further dot (list items "parent[]"
     * belong to the list, not to a mapping) */
    return strncmp(k->path, parent, n) == 0 && k->path[n] == '.' && !strchr(k->path + n + 1, '.');
}

const struct schema_key *schema_child(const char *parent_path, size_t i)
{
    for (size_t j = 0; j < schema_key_count; j++)
        if (has_parent(&schema_keys[j], parent_path) && i-- == 0)
            return &schema_keys[j];
    return NULL;
}

const char *schema_type_name(enum schema_type t)
{
    static const char *const names[] = {
        "map", "list", "int", "number", "bool", "string", "enum", "duration", "date",
        "date|duration", "bandwidth", "size", "power", "money", "duration|distribution",
    };
    return (unsigned)t < sizeof names / sizeof *names ? names[t] : "?";
}

const char *schema_unit(const struct schema_key *k)
{
    static const struct {
        const char *suffix, *unit;
    } names[] = {{"_usd", "USD"}, {"_per_unit_hour", "1/(unit h)"}, {"_gpus", "GPUs"}};
    switch (k->type) {
    case SCHEMA_DURATION:
    case SCHEMA_DATE_OR_DURATION:
    case SCHEMA_DISTRIBUTION:
        return "s";
    case SCHEMA_BANDWIDTH:
        return "Gbps";
    case SCHEMA_BYTES:
        return "bytes";
    case SCHEMA_POWER:
        return "W";
    case SCHEMA_MONEY:
        return "USD";
    default:
        break;
    }
    const char *name = schema_key_name(k);
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        size_t m = strlen(names[i].suffix);
        if (n > m && strcmp(name + n - m, names[i].suffix) == 0)
            return names[i].unit;
    }
    return NULL;
}

/* ---- suggestions ---- */

const char *schema_nearest(const char *word, const char *const *candidates, size_t n)
{
    const char *best = NULL;
    size_t best_d = 4;
    for (size_t i = 0; i < n; i++) {
        size_t d = suggest_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    /* at most a third of the word may differ, or "rack" would get "link" */
    return best && best_d * 3 <= strlen(word) ? best : NULL;
}

const char *schema_nearest_key(const char *parent_path, const char *word)
{
    const char *names[64];
    size_t n = 0;
    const struct schema_key *k;
    for (size_t i = 0; (k = schema_child(parent_path, i)) && n < 64; i++)
        if (strcmp(schema_key_name(k), "*") != 0)
            names[n++] = schema_key_name(k);
    return schema_nearest(word, names, n);
}

/* Splits "a|b|c" into names (pointing into buf). */
static size_t enum_split(const char *values, char *buf, size_t len, const char **names, size_t max)
{
    snprintf(buf, len, "%s", values);
    size_t n = 0;
    for (char *p = buf; p && n < max;) {
        names[n++] = p;
        p = strchr(p, '|');
        if (p)
            *p++ = '\0';
    }
    return n;
}

/* ---- conversion ---- */

static void format_number(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.15g", v);
}

/* A value of key k's type in its stored unit, as people write it. */
static void format_in_unit(const struct schema_key *k, double v, char *buf, size_t len)
{
    char num[32];
    format_number(num, sizeof num, v);
    switch (k->type) {
    case SCHEMA_DURATION:
    case SCHEMA_DATE_OR_DURATION:
    case SCHEMA_DISTRIBUTION:
        units_format_duration(buf, len, v);
        return;
    case SCHEMA_BANDWIDTH:
        snprintf(buf, len, "%s Gbps", num);
        return;
    case SCHEMA_BYTES:
        if (v >= 1073741824.0)
            snprintf(buf, len, "%.15g GiB", v / 1073741824.0);
        else
            snprintf(buf, len, "%s B", num);
        return;
    case SCHEMA_POWER:
        snprintf(buf, len, "%s W", num);
        return;
    case SCHEMA_MONEY:
        snprintf(buf, len, "$%s", num);
        return;
    default:
        snprintf(buf, len, "%s", num);
    }
}

/* "expected 1 to 64", "expected more than 0 and at most 1", "expected at least 0" */
static void format_range(const struct schema_key *k, char *buf, size_t len)
{
    char lo[48], hi[48];
    format_in_unit(k, k->min, lo, sizeof lo);
    format_in_unit(k, k->max, hi, sizeof hi);
    int excl = (k->flags & SCHEMA_MIN_EXCLUSIVE) != 0;
    if (!isnan(k->min) && !isnan(k->max))
        snprintf(buf, len, excl ? "more than %s and at most %s" : "%s to %s", lo, hi);
    else if (!isnan(k->min))
        snprintf(buf, len, excl ? "more than %s" : "at least %s", lo);
    else if (!isnan(k->max))
        snprintf(buf, len, "at most %s", hi);
    else
        snprintf(buf, len, "any value");
}

static int in_range(const struct schema_key *k, double v)
{
    if (!isnan(k->min) && ((k->flags & SCHEMA_MIN_EXCLUSIVE) ? v <= k->min : v < k->min))
        return 0;
    return isnan(k->max) || v <= k->max;
}

/* Returns 0, -1 (not an integer) or 1 (an integer too large for int64_t:
 * *out is then clamped, so the range check names the valid range). */
static int parse_int(const char *text, int64_t *out)
{
    const char *p = text;
    if (*p == '-' || *p == '+')
        p++;
    if (!isdigit((unsigned char)*p))
        return -1;
    for (const char *q = p; *q; q++)
        if (!isdigit((unsigned char)*q))
            return -1;
    errno = 0;
    long long v = strtoll(text, NULL, 10);
    *out = v;
    return errno == ERANGE ? 1 : 0;
}

/* A plain decimal number; no "inf", "nan" or hex, which strtod would take. */
static int parse_double(const char *text, double *out)
{
    if (!*text || strspn(text, "0123456789+-.eE") != strlen(text))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int looks_like_date(const char *text)
{
    return strlen(text) == 10 && text[4] == '-' && text[7] == '-' && isdigit((unsigned char)text[0]);
}

static const char *unit_hint(enum schema_type t)
{
    switch (t) {
    case SCHEMA_DURATION:
    case SCHEMA_DISTRIBUTION:
        return "a duration with a unit (us, ms, s, m, min, h, d, w, y), e.g. '90d'";
    case SCHEMA_DATE:
        return "a date YYYY-MM-DD";
    case SCHEMA_DATE_OR_DURATION:
        return "a date YYYY-MM-DD or a duration with a unit (us, ms, s, m, min, h, d, w, y), e.g. '4w'";
    case SCHEMA_BANDWIDTH:
        return "a bandwidth with a unit (bps, Kbps, Mbps, Gbps, Tbps, or bytes: B/s, KB/s, MB/s, GB/s, "
               "TB/s), e.g. '400Gbps'";
    case SCHEMA_BYTES:
        return "a size with a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. '80GiB'";
    case SCHEMA_POWER:
        return "a power with a unit (W, kW, MW), e.g. '10.2kW'";
    case SCHEMA_MONEY:
        return "an amount in US dollars, e.g. '250000' or '$250k'";
    default:
        return "a value";
    }
}

/* "20 weeks" -> "20w": a duration written in words, as people write it.
 * Writes the suggestion into buf and returns 1, or 0 when text is not a
 * number followed by a unit's name. A month has no unit: it becomes days. */
static int duration_in_words(const char *text, char *buf, size_t len)
{
    static const struct {
        const char *word, *unit;
        double scale;
    } words[] = {
        {"microsecond", "us", 1}, {"millisecond", "ms", 1}, {"second", "s", 1}, {"sec", "s", 1},
        {"minute", "min", 1},     {"mins", "min", 1},       {"hour", "h", 1},   {"hr", "h", 1},
        {"hrs", "h", 1},          {"day", "d", 1},          {"week", "w", 1},   {"wk", "w", 1},
        {"wks", "w", 1},          {"month", "d", 365.0 / 12}, {"year", "y", 1}, {"yr", "y", 1},
        {"yrs", "y", 1},
    };
    char *end;
    errno = 0;
    double n = strtod(text, &end);
    if (end == text || errno || !isfinite(n) || n < 0)
        return 0;
    while (*end == ' ' || *end == '\t')
        end++;
    size_t wl = strlen(end);
    if (wl < 2)
        return 0;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        size_t l = strlen(words[i].word);
        int plural = wl == l + 1 && (end[l] == 's' || end[l] == 'S');
        if ((wl != l && !plural) || strncasecmp(end, words[i].word, l) != 0)
            continue;
        double v = n * words[i].scale;
        if (words[i].scale != 1)
            v = round(v);
        snprintf(buf, len, "%.15g%s", v, words[i].unit);
        return 1;
    }
    return 0;
}

static int convert_unit(const struct schema_key *k, const char *text, struct schema_value *v)
{
    switch (k->type) {
    case SCHEMA_DURATION:
    case SCHEMA_DISTRIBUTION:
        return units_parse_duration(text, &v->num);
    case SCHEMA_DATE:
        if (units_parse_date(text, &v->i) != 0)
            return -1;
        v->num = (double)v->i;
        v->is_date = 1;
        return 0;
    case SCHEMA_DATE_OR_DURATION:
        if (looks_like_date(text)) {
            v->is_date = 1;
            return units_parse_date(text, &v->i);
        }
        return units_parse_duration(text, &v->num);
    case SCHEMA_BANDWIDTH:
        return units_parse_bandwidth(text, &v->num);
    case SCHEMA_BYTES:
        return units_parse_size_bytes(text, &v->num);
    case SCHEMA_POWER:
        return units_parse_power(text, &v->num);
    case SCHEMA_MONEY:
        return units_parse_money(text, &v->num);
    default:
        return -1;
    }
}

static int convert_enum(const struct schema_key *k, const char *shown, const char *text, char *msg,
                        size_t len)
{
    char buf[256];
    const char *names[16];
    size_t n = enum_split(k->values, buf, sizeof buf, names, 16);
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], text) == 0)
            return 0;
    char list[300] = "";
    for (size_t i = 0; i < n; i++) {
        size_t at = strlen(list);
        snprintf(list + at, sizeof list - at, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
    }
    const char *near = schema_nearest(text, names, n);
    if (near)
        snprintf(msg, len, "key '%s' is '%s', expected %s; did you mean '%s'?", shown, text, list, near);
    else
        snprintf(msg, len, "key '%s' is '%s', expected %s", shown, text, list);
    return -1;
}

static int convert_plain(const struct schema_key *k, const char *shown, const char *text, int quoted,
                         struct schema_value *v, char *msg, size_t len)
{
    static const char *const what[] = {[SCHEMA_INT] = "an integer", [SCHEMA_NUMBER] = "a number",
                                       [SCHEMA_BOOL] = "true or false"};
    int bad = quoted;
    if (!bad && k->type == SCHEMA_INT) {
        bad = parse_int(text, &v->i) < 0;
        v->num = (double)v->i;
    } else if (!bad && k->type == SCHEMA_NUMBER) {
        bad = parse_double(text, &v->num) != 0;
    } else if (!bad) {
        v->i = strcmp(text, "true") == 0;
        bad = !v->i && strcmp(text, "false") != 0;
    }
    if (bad) {
        snprintf(msg, len, "key '%s' must be %s, not %s'%s'", shown, what[k->type],
                 quoted ? "the string " : "", text);
        return -1;
    }
    return 0;
}

int schema_convert(const struct schema_key *k, const char *shown, const char *text, int quoted,
                   struct schema_value *v, char *msg, size_t len)
{
    memset(v, 0, sizeof *v);
    v->text = text;
    switch (k->type) {
    case SCHEMA_MAP:
    case SCHEMA_LIST:
        snprintf(msg, len, "key '%s' must be a %s, not '%s'", shown, k->type == SCHEMA_MAP ? "mapping" : "list",
                 text);
        return -1;
    case SCHEMA_STRING:
        if (!*text) {
            snprintf(msg, len, "key '%s' is empty", shown);
            return -1;
        }
        return 0;
    case SCHEMA_ENUM:
        return convert_enum(k, shown, text, msg, len);
    case SCHEMA_INT:
    case SCHEMA_NUMBER:
    case SCHEMA_BOOL:
        if (convert_plain(k, shown, text, quoted, v, msg, len) != 0)
            return -1;
        if (k->type == SCHEMA_BOOL)
            return 0;
        break;
    default:
        if (convert_unit(k, text, v) != 0) {
            int datelike = k->type == SCHEMA_DATE || k->type == SCHEMA_DATE_OR_DURATION;
            char near[64];
            int words = (k->type == SCHEMA_DURATION || k->type == SCHEMA_DISTRIBUTION ||
                         k->type == SCHEMA_DATE_OR_DURATION) &&
                        duration_in_words(text, near, sizeof near);
            double num;
            char *end;
            if (datelike && looks_like_date(text))
                snprintf(msg, len, "key '%s' is '%s', not a valid date", shown, text);
            else if (text[0] == '-' && k->type != SCHEMA_DATE)
                snprintf(msg, len, "key '%s' is '%s', a negative amount: expected 0 or more, e.g. '%s'", shown,
                         text, text + 1);
            else if (text[0] >= '0' && text[0] <= '9' && (num = strtod(text, &end), end != text) && !isfinite(num))
                snprintf(msg, len, "key '%s' is '%s', a number too large to hold", shown, text);
            else if (words)
                snprintf(msg, len, "key '%s' is '%s', expected %s; did you mean '%s'?", shown, text,
                         unit_hint(k->type), near);
            else
                snprintf(msg, len, "key '%s' is '%s', expected %s", shown, text, unit_hint(k->type));
            return -1;
        }
        if (v->is_date)
            return 0; /* a date's range depends on start_date: checked when filled */
        break;
    }
    if (!in_range(k, v->num)) {
        char range[128];
        format_range(k, range, sizeof range);
        snprintf(msg, len, "key '%s' is %s, expected %s", shown, text, range);
        return -1;
    }
    return 0;
}

/* ---- help ---- */

static void write_type(FILE *out, const struct schema_key *k)
{
    char type[96];
    const char *unit = schema_unit(k);
    if (k->type == SCHEMA_ENUM)
        snprintf(type, sizeof type, "%s", k->values);
    else if (unit)
        snprintf(type, sizeof type, "%s [%s]", schema_type_name(k->type), unit);
    else
        snprintf(type, sizeof type, "%s", schema_type_name(k->type));
    fprintf(out, "  %-48s %s", k->path, type);
}

static void write_details(FILE *out, const struct schema_key *k)
{
    char range[128] = "";
    int scalar = k->type != SCHEMA_MAP && k->type != SCHEMA_LIST && k->type != SCHEMA_ENUM &&
                 k->type != SCHEMA_STRING && k->type != SCHEMA_BOOL;
    if (scalar && (!isnan(k->min) || !isnan(k->max)))
        format_range(k, range, sizeof range);
    int parts = 0;
    fputs("\n      ", out);
    if (k->flags & SCHEMA_REQUIRED)
        parts += fprintf(out, "required") > 0;
    if (*range)
        parts += fprintf(out, "%s%s", parts ? "; " : "", range) > 0;
    if (k->def)
        parts += fprintf(out, "%sdefault %s", parts ? "; " : "", k->def) > 0;
    fprintf(out, "%s%s\n", parts ? ". " : "", k->help);
}

static void section_of(const struct schema_key *k, char *buf, size_t len)
{
    size_t top = strcspn(k->path, ".[");
    if (k->path[top] == '\0' && k->type != SCHEMA_MAP && k->type != SCHEMA_LIST)
        snprintf(buf, len, "top level");
    else
        snprintf(buf, len, "%.*s", (int)top, k->path);
}

void schema_write_help(FILE *out)
{
    fputs("fleetsim scenario files: every key, its type [unit], range, default and meaning.\n"
          "Paths are written from the top; 'a[]' is one item of the list 'a'.\n"
          "Durations take a unit (us ms s m min h d w y; y = 365 d); '0' needs none.\n"
          "Dates are YYYY-MM-DD (UTC). Bandwidths: bps Kbps Mbps Gbps Tbps, or bytes B/s KB/s\n"
          "MB/s GB/s TB/s. Sizes: B KB MB GB TB (SI) or KiB MiB GiB TiB (binary). Power: W kW MW.\n"
          "Unknown keys and values out of range are errors. See fleetsim-scenario(5).\n",
          out);
    char prev[64] = "", cur[64];
    for (size_t i = 0; i < schema_key_count; i++) {
        const struct schema_key *k = &schema_keys[i];
        section_of(k, cur, sizeof cur);
        if (strcmp(prev, cur) != 0) {
            fprintf(out, "\n%s\n", cur);
            memcpy(prev, cur, sizeof prev);
        }
        write_type(out, k);
        write_details(out, k);
    }
}
