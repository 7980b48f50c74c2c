#include "policies/registry.h"

#include <stdio.h>
#include <string.h>

#include "policies/multifactor.h"
#include "policies/preempt.h"
#include "policies/queue_policy.h"
#include "policies/quota.h"
#include "policies/srtf.h"
#include "policies/tiresias.h"

static const struct policy_ops *const builtin_policies[] = {
    &queue_policy_ops,
};

static const struct policy_component components[] = {
    {"fcfs", POLICY_COMPONENT_ORDERING, "first come, first served: arrival order", "", NULL, NULL, 0, 0},
    {"sjf", POLICY_COMPONENT_ORDERING, "shortest requested time first, ties by submission", "", NULL, NULL, 0, 0},
    {"f1", POLICY_COMPONENT_ORDERING, "log10(r) * n + 870 * log10(s), learned from simulation",
     "Carastan-Santos & de Camargo, SC'17", NULL, NULL, 0, 0},
    {"wfp3", POLICY_COMPONENT_ORDERING, "-(wait / r)^3 * n: favors jobs that waited long relative to their size",
     "Tang et al., IPDPS'09", NULL, NULL, 0, 0},
    {"unicep", POLICY_COMPONENT_ORDERING, "-wait / (log2(n) * r)", "Tang et al., IPDPS'09", NULL, NULL, 0, 0},
    {"multifactor", POLICY_COMPONENT_ORDERING,
     "Slurm multifactor priority: weighted age, job size, fair-share (decayed team usage, share tree) and QoS",
     "Slurm priority/multifactor", multifactor_params, &multifactor_n_params, 0, 1},
    {"fairshare", POLICY_COMPONENT_ORDERING,
     "multifactor with fair-share dominant: the team furthest below its share goes first",
     "Slurm priority/multifactor (classic fair-share)", fairshare_params, &fairshare_n_params, 0, 1},
    {"tiresias", POLICY_COMPONENT_ORDERING,
     "discretized 2D-LAS: least attained GPU service first, in queues; preemptive; default backfill greedy",
     "Gu et al., Tiresias, NSDI'19", tiresias_params, &tiresias_n_params, 1, 0},
    {"srtf", POLICY_COMPONENT_ORDERING,
     "shortest remaining (estimated) time first; preemptive; default backfill greedy", "", srtf_params,
     &srtf_n_params, 1, 0},
    {"none", POLICY_COMPONENT_BACKFILL, "start in order while jobs fit; stop at the first that does not", "", NULL,
     NULL, 0, 0},
    {"easy", POLICY_COMPONENT_BACKFILL,
     "EASY: the first job that does not fit gets a reservation; later jobs start if they do not delay it",
     "Lifka 1995; Mu'alem & Feitelson 2001", NULL, NULL, 0, 0},
    {"conservative", POLICY_COMPONENT_BACKFILL,
     "every job keeps a reservation; later jobs start only if they delay none", "Mu'alem & Feitelson 2001", NULL,
     NULL, 0, 0},
    {"greedy", POLICY_COMPONENT_BACKFILL, "start every job that fits, in order; no reservations (work-conserving)",
     "", NULL, NULL, 0, 0},
    {"pack", POLICY_COMPONENT_PLACEMENT,
     "best-fit node, else the tightest NVLink domain, leaf or pod, leaf by leaf (the default)", "", NULL, NULL, 0, 0},
    {"first-fit", POLICY_COMPONENT_PLACEMENT, "lowest-index node that holds the job, else lowest-index nodes in turn",
     "", NULL, NULL, 0, 0},
    {"best-fit", POLICY_COMPONENT_PLACEMENT, "fullest node that holds the job, else fullest nodes first", "", NULL,
     NULL, 0, 0},
    {"spread", POLICY_COMPONENT_PLACEMENT, "emptiest node that holds the job, else emptiest nodes first", "", NULL,
     NULL, 0, 0},
    {"gavel", POLICY_COMPONENT_PLACEMENT,
     "heterogeneity-aware: the node type with the best speed for the job's class, packed; else pack",
     "Narayanan et al., Gavel, OSDI'20", NULL, NULL, 0, 0},
    {"preempt", POLICY_COMPONENT_PREEMPTION,
     "priority tiers: a waiting job preempts running jobs of a lower tier (requeued, back to their checkpoint)",
     "", preempt_params, &preempt_n_params, 0, 0},
    {"quota", POLICY_COMPONENT_QUOTA,
     "guaranteed GPUs per team; borrowing of idle capacity; reclaiming by preemption",
     "Kueue cohorts, Volcano queues", quota_params, &quota_n_params, 0, 1},
};

const struct policy_ops *policy_registry_find(const char *spec, const char **params, char *err,
                                              size_t err_len)
{
    if (!spec || !*spec) {
        snprintf(err, err_len, "empty policy spec");
        return NULL;
    }
    /* a control byte would reach messages (and terminals) as it is */
    for (size_t i = 0; spec[i]; i++) {
        unsigned char c = (unsigned char)spec[i];
        if (c < 0x20 || c == 0x7f) {
            snprintf(err, err_len, "policy spec has a control character (byte 0x%02x) at offset %zu", c, i);
            return NULL;
        }
    }
    /* Every built-in spec is a composition of components. */
    *params = spec;
    return &queue_policy_ops;
}

int policy_registry_create(const char *spec, const struct policy_ops **ops, void **state, char *err,
                           size_t err_len)
{
    const char *params;
    const struct policy_ops *found = policy_registry_find(spec, &params, err, err_len);
    if (!found)
        return -1;
    if (found->create(params, state, err, err_len) != 0)
        return -1;
    *ops = found;
    return 0;
}

uint32_t policy_registry_decision_kinds(const struct policy_ops *ops, const void *state)
{
    if (ops == &queue_policy_ops)
        return queue_policy_decision_kinds(state);
    return POLICY_KINDS_ALL;
}

int policy_registry_reads_gaps(const struct policy_ops *ops, const void *state)
{
    return ops == &queue_policy_ops && queue_policy_reads_gaps(state);
}

size_t policy_registry_count(void)
{
    return sizeof builtin_policies / sizeof *builtin_policies;
}

const struct policy_ops *policy_registry_at(size_t index)
{
    return index < policy_registry_count() ? builtin_policies[index] : NULL;
}

size_t policy_registry_component_count(void)
{
    return sizeof components / sizeof *components;
}

const struct policy_component *policy_registry_component_at(size_t index)
{
    return index < policy_registry_component_count() ? &components[index] : NULL;
}

const struct policy_component *policy_registry_component(const char *name, size_t len)
{
    for (size_t i = 0; i < policy_registry_component_count(); i++)
        if (strlen(components[i].name) == len && strncmp(components[i].name, name, len) == 0)
            return &components[i];
    return NULL;
}

const char *policy_component_kind_name(enum policy_component_kind kind)
{
    switch (kind) {
    case POLICY_COMPONENT_ORDERING:
        return "ordering";
    case POLICY_COMPONENT_BACKFILL:
        return "backfilling";
    case POLICY_COMPONENT_PLACEMENT:
        return "placement";
    case POLICY_COMPONENT_PREEMPTION:
        return "preemption";
    case POLICY_COMPONENT_QUOTA:
        return "quota";
    }
    return "?";
}

void policy_registry_names(enum policy_component_kind kind, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < policy_registry_component_count(); i++) {
        if (components[i].kind != kind)
            continue;
        int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", components[i].name);
        if (n < 0 || (size_t)n >= len - at)
            return;
        at += (size_t)n;
    }
}
