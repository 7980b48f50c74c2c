#include "models/failures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/pcg32.h"

static const char *const scope_names[] = {"gpu", "node", "link"};

void checkpoint_defaults(struct checkpoint_policy out[JOB_CLASS_COUNT])
{
    /* Assumptions, not measurements: a training job checkpoints every 30 min
     * and spends 1 min on it; fine-tuning hourly, 30 s; inference services
     * keep no state worth restoring. Scenarios override them. */
    out[JOB_CLASS_TRAINING] = (struct checkpoint_policy){1800, 60};
    out[JOB_CLASS_FINETUNE] = (struct checkpoint_policy){3600, 30};
    out[JOB_CLASS_INFERENCE] = (struct checkpoint_policy){0, 0};
}

void failure_spec_init(struct failure_spec *f)
{
    memset(f, 0, sizeof *f);
    checkpoint_defaults(f->checkpoint);
}

void failure_spec_release(struct failure_spec *f)
{
    if (!f)
        return;
    free(f->categories);
    f->categories = NULL;
    f->n_categories = 0;
}

int failure_spec_add(struct failure_spec *f, const struct failure_category *c)
{
    for (size_t i = 0; i < f->n_categories; i++) {
        if (strcmp(f->categories[i].name, c->name) == 0) {
            f->categories[i] = *c;
            return 0;
        }
    }
    struct failure_category *cats = realloc(f->categories, (f->n_categories + 1) * sizeof *cats);
    if (!cats)
        return -1;
    f->categories = cats;
    f->categories[f->n_categories++] = *c;
    return 0;
}

/* Llama 3 405B pre-training: 16,384 H100 GPUs (2,048 nodes), 54 days =
 * 1,296 h, 419 unexpected interruptions (Meta, "The Llama 3 Herd of Models",
 * 2024, Table 5; ../shared/reference/failures-and-lead-times.md). A count c
 * of scope GPU or link becomes c / (16,384 x 1,296) per unit-hour, of scope
 * node c / (2,048 x 1,296). Repair times are not in the report: they are
 * fleetsim's assumptions (log-normal, median as given, sigma 1). */
static const struct {
    const char *name;
    enum failure_scope scope;
    int count;
    double repair_median_h;
} llama3_table[] = {
    {"faulty gpu", FAILURE_SCOPE_GPU, 148, 8},
    {"gpu hbm3 memory", FAILURE_SCOPE_GPU, 72, 8},
    {"software bug", FAILURE_SCOPE_NODE, 54, 0.25},
    {"network switch or cable", FAILURE_SCOPE_LINK, 35, 2},
    {"host maintenance", FAILURE_SCOPE_NODE, 32, 4},
    {"gpu sram memory", FAILURE_SCOPE_GPU, 19, 8},
    {"gpu system processor", FAILURE_SCOPE_GPU, 17, 8},
    {"nic", FAILURE_SCOPE_LINK, 7, 4},
    {"nccl watchdog timeout", FAILURE_SCOPE_NODE, 7, 0.25},
    {"silent data corruption", FAILURE_SCOPE_GPU, 6, 8},
    {"gpu thermal interface or sensor", FAILURE_SCOPE_GPU, 6, 8},
    {"ssd", FAILURE_SCOPE_NODE, 3, 4},
    {"power supply", FAILURE_SCOPE_NODE, 3, 4},
    {"server chassis", FAILURE_SCOPE_NODE, 2, 8},
    {"io expansion board", FAILURE_SCOPE_NODE, 2, 8},
    {"dependency", FAILURE_SCOPE_NODE, 2, 0.25},
    {"cpu", FAILURE_SCOPE_NODE, 2, 8},
    {"system memory", FAILURE_SCOPE_NODE, 2, 4},
};

int failure_spec_llama3(struct failure_spec *f)
{
    const double hours = 54.0 * 24.0, gpus = 16384.0, nodes = 2048.0;
    for (size_t i = 0; i < sizeof llama3_table / sizeof *llama3_table; i++) {
        struct failure_category c;
        memset(&c, 0, sizeof c);
        snprintf(c.name, sizeof c.name, "%s", llama3_table[i].name);
        c.scope = llama3_table[i].scope;
        double units = c.scope == FAILURE_SCOPE_NODE ? nodes : gpus;
        c.rate_per_unit_hour = llama3_table[i].count / (units * hours);
        c.repair_s = (struct distribution){DIST_LOGNORMAL, llama3_table[i].repair_median_h * 3600.0, 1.0};
        snprintf(c.source, sizeof c.source,
                 "Llama 3 report, Table 5: %d of 419 interruptions, 16,384 H100 GPUs, 54 days; "
                 "repair time assumed",
                 llama3_table[i].count);
        if (failure_spec_add(f, &c) != 0)
            return -1;
    }
    f->enabled = 1;
    return 0;
}

const char *failure_scope_name(enum failure_scope s)
{
    return scope_names[s];
}

int failure_scope_parse(const char *name, enum failure_scope *s)
{
    for (size_t i = 0; i < sizeof scope_names / sizeof *scope_names; i++) {
        if (strcmp(scope_names[i], name) == 0) {
            *s = (enum failure_scope)i;
            return 0;
        }
    }
    return -1;
}

int32_t failure_scope_units(enum failure_scope s, int32_t gpus)
{
    return s == FAILURE_SCOPE_NODE ? 1 : gpus;
}

double failure_node_rate_per_hour(const struct failure_spec *f, int32_t gpus)
{
    double per_hour = 0;
    for (size_t i = 0; i < f->n_categories; i++)
        per_hour += f->categories[i].rate_per_unit_hour * failure_scope_units(f->categories[i].scope, gpus);
    return per_hour;
}

double failure_next_gap_us(const struct failure_spec *f, double rate_per_us, struct pcg32 *rng)
{
    double mean_us = 1.0 / rate_per_us;
    double k = f->weibull_shape;
    struct distribution d = k > 0 && k != 1 ? distribution_weibull_with_mean(k, mean_us)
                                            : (struct distribution){DIST_EXPONENTIAL, mean_us, 0};
    return ceil(distribution_sample(&d, rng));
}

size_t failure_pick_category(const struct failure_spec *f, int32_t gpus, double rate_per_us, struct pcg32 *rng)
{
    /* the same sum as failure_node_rate_per_hour, walked until it passes
     * the draw; the last category takes what rounding leaves over */
    double pick = pcg32_unit(rng) * rate_per_us * 3.6e9, acc = 0;
    for (size_t i = 0; i < f->n_categories; i++) {
        acc += f->categories[i].rate_per_unit_hour * failure_scope_units(f->categories[i].scope, gpus);
        if (pick < acc)
            return i;
    }
    return f->n_categories - 1;
}

double failure_repair_s(const struct failure_spec *f, size_t category, struct pcg32 *rng)
{
    return distribution_sample(&f->categories[category].repair_s, rng);
}

double checkpoint_kept_us(const struct checkpoint_policy *cp, double before_us, double done_us)
{
    double interval_us = cp->interval_s * 1e6;
    if (interval_us <= 0)
        return before_us;
    return before_us + floor((done_us - before_us) / interval_us) * interval_us;
}
