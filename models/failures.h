/* failures: what breaks, how often, and for how long.
 *
 * Each category (faulty GPU, HBM3, network cable, ...) has a scope (it
 * strikes per GPU, per node or per network link; a node has one link per
 * GPU), a rate per unit-hour and a repair-time distribution. A node's failure
 * process is the sum of its categories: exponential times between failures
 * with rate sum(rate x units), or Weibull with the same mean and the given
 * shape (shape < 1: infant mortality, > 1: wear-out); which category struck
 * is drawn in proportion to its share of the node's rate. A failure takes the
 * node down for the repair time; the jobs on it are killed, lose the work
 * since their last checkpoint, and are requeued. The node's failure clock
 * runs only while it is up. Each node draws from its own PCG stream
 * (RNG_FAILURES, node index), so node N's failures do not depend on how many
 * nodes there are or what the policy does.
 *
 * Checkpoints, per job class: every `interval` seconds of progress a job
 * spends `overhead` seconds writing one; killed, it restarts from the last.
 */
#ifndef FLEETSIM_MODELS_FAILURES_H
#define FLEETSIM_MODELS_FAILURES_H

#include <stddef.h>
#include <stdint.h>

#include "models/distribution.h"
#include "models/node_types.h"
#include "sim/err.h"

enum failure_scope { FAILURE_SCOPE_GPU, FAILURE_SCOPE_NODE, FAILURE_SCOPE_LINK };

enum { FAILURE_NAME_MAX = 48, FAILURE_SOURCE_MAX = 160 };

struct failure_category {
    char name[FAILURE_NAME_MAX];
    enum failure_scope scope;
    double rate_per_unit_hour;
    struct distribution repair_s;
    char source[FAILURE_SOURCE_MAX];
};

struct checkpoint_policy {
    double interval_s; /* 0 = never checkpoints: a killed job starts over */
    double overhead_s;
};

struct failure_spec {
    int enabled;
    double weibull_shape; /* 0 or 1 = exponential */
    struct failure_category *categories;
    size_t n_categories;
    struct checkpoint_policy checkpoint[JOB_CLASS_COUNT];
};

void failure_spec_init(struct failure_spec *f);
/* The checkpoint defaults (assumptions, not measurements): training every
 * 30 min with 1 min overhead, fine-tuning hourly with 30 s, inference none. */
void checkpoint_defaults(struct checkpoint_policy out[JOB_CLASS_COUNT]);
void failure_spec_release(struct failure_spec *f);
int failure_spec_add(struct failure_spec *f, const struct failure_category *c);
/* The built-in preset "llama3": the 18 categories of Meta's Llama 3 report
 * (419 unexpected interruptions in 54 days on 16,384 H100 GPUs), as rates per
 * unit-hour, with repair times. Returns 0 or -1 (memory). */
int failure_spec_llama3(struct failure_spec *f);
const char *failure_scope_name(enum failure_scope s);
int failure_scope_parse(const char *name, enum failure_scope *s);
/* Units of a scope on a node with `gpus` GPUs. */
int32_t failure_scope_units(enum failure_scope s, int32_t gpus);

/* ---- sampling a node's failures (the simulation host draws, per node,
 * from that node's own stream) ---- */
struct pcg32;
/* A node's failure rate per hour: the sum of its categories' rate x units. */
double failure_node_rate_per_hour(const struct failure_spec *f, int32_t gpus);
/* Microseconds of up time to the node's next failure (rounded up), for a
 * node failing at rate_per_us on average: exponential, or Weibull with that
 * mean and the spec's shape. One draw. */
double failure_next_gap_us(const struct failure_spec *f, double rate_per_us, struct pcg32 *rng);
/* Which category struck a node with `gpus` GPUs failing at rate_per_us, in
 * proportion to its share of the rate; then its repair time in seconds. Two
 * draws, in that order. */
size_t failure_pick_category(const struct failure_spec *f, int32_t gpus, double rate_per_us, struct pcg32 *rng);
double failure_repair_s(const struct failure_spec *f, size_t category, struct pcg32 *rng);

/* A job killed after `done_us` of reference work, of which `before_us` was
 * already checkpointed when the attempt started, keeps the work of its last
 * checkpoint: before + whole intervals since (all of it is lost without
 * checkpoints). */
double checkpoint_kept_us(const struct checkpoint_policy *cp, double before_us, double done_us);

#endif
