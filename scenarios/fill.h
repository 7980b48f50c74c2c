/* fill: turning a checked scenario document into struct scenario, one
 * function per section (the section table in scenario.c lists them in the
 * order they run). Each reads values through the reader, which applies the
 * schema's defaults, and reports the problems that involve more than one key
 * (cross-field rules) with reader_error(). They return 0, or -1 only when
 * memory runs out; bad input is counted in the reader, not returned.
 */
#ifndef FLEETSIM_SCENARIOS_FILL_H
#define FLEETSIM_SCENARIOS_FILL_H

#include <yaml.h>

#include "scenarios/reader.h"
#include "scenarios/scenario.h"

struct fill {
    struct reader *r;
    struct scenario *s;
    int has_start;  /* start_date was given: dates are allowed */
    int cluster_ok; /* the partitions read cleanly: checks that count nodes make sense */
};

int fill_top(struct fill *f, yaml_node_t *root);
int fill_node_types(struct fill *f, yaml_node_t *root);
int fill_cluster(struct fill *f, yaml_node_t *root);
int fill_runtime(struct fill *f, yaml_node_t *root);
int fill_failures(struct fill *f, yaml_node_t *root);
int fill_procurement(struct fill *f, yaml_node_t *root);
int fill_workload(struct fill *f, yaml_node_t *root);
int fill_horizon(struct fill *f, yaml_node_t *root);
/* The workload against the cluster and the horizon (after both): jobs
 * larger than the whole cluster, growth written as a percentage, workloads
 * too large to synthesize in memory. */
int fill_workload_checks(struct fill *f, yaml_node_t *root);
int fill_forecast(struct fill *f, yaml_node_t *root);
int fill_plan(struct fill *f, yaml_node_t *root);
int fill_sweep(struct fill *f, yaml_node_t *root);

/* The catalog index of the node type named by `value`, or -1 after an error
 * that suggests the nearest known name. */
int fill_node_type_ref(struct fill *f, yaml_node_t *value);
/* Applies a number-like key to *dst if given (or defaulted); returns the
 * reader status. */
enum reader_status fill_number(struct fill *f, yaml_node_t *map, const char *path, double *dst);
enum reader_status fill_int(struct fill *f, yaml_node_t *map, const char *path, int64_t *dst);
/* A SCHEMA_DATE_OR_DURATION key of map m at schema path `path`: a date
 * (needs start_date, not before it) or a duration from the start, as
 * microseconds from the start. Returns 0, or -1 (reported, or absent). */
int fill_time(struct fill *f, yaml_node_t *m, const char *path, const char *shown, sim_time *us);
/* Whether a policy spec names a built-in policy (a path to a plugin, with a
 * '/' or ending in .so, is the host's to load and passes); reports at node. */
int fill_policy_ok(struct fill *f, yaml_node_t *node, const char *shown, const char *spec);
/* "a.b[3].c" from a prefix shown to people and a key. */
void fill_shown(char *buf, size_t len, const char *prefix, size_t index, const char *key);

#endif
