/* reader: a scenario YAML document, checked against the schema table and read
 * back through typed getters.
 *
 * reader_open() parses the whole document with libyaml (a syntax error is one
 * diagnostic at its position); reader_walk() then visits every key and value
 * once, against scenarios/schema.h only: unknown keys (with the nearest valid
 * one), duplicate keys, wrong types, bad units, values out of range, missing
 * required keys. It knows no particular key, so a new section needs rows in
 * the table and a fill function, never a change here.
 *
 * The fill functions (scenario.c and friends) then read converted values with
 * reader_value(), which applies the schema's defaults, and add the errors
 * that need more than one key (cross-field rules) with reader_error().
 * Positions are libyaml's marks plus one (libyaml counts from 0).
 *
 * Errors are capped (READER_MAX_ERRORS); past the cap one last error says so
 * and the rest are dropped. The reader borrows diags and owns the document.
 */
#ifndef FLEETSIM_SCENARIOS_READER_H
#define FLEETSIM_SCENARIOS_READER_H

#include <stddef.h>
#include <yaml.h>

#include "models/distribution.h"
#include "scenarios/schema.h"
#include "sim/err.h"

/* READER_MAX_DEPTH: mappings and lists nested deeper than this are refused
 * while parsing, before libyaml builds a tree (a file of 100,000 '[' took it
 * 25 s); a scenario needs about 6. */
enum { READER_MAX_ERRORS = 50, READER_PATH_MAX = 256, READER_MAX_DEPTH = 64 };

struct reader {
    const char *file;
    yaml_document_t doc;
    int loaded;
    struct diag_list *diags;
    size_t errors;
    size_t visits;    /* nodes walked: aliases can make a small file huge */
    int top_optional; /* a catalog document: top-level keys are not required */
};

/* Parses data (r is initialised here). Returns 0, or -1 after reporting a YAML syntax error or an
 * empty document. Call reader_close() either way. */
int reader_open(struct reader *r, const char *file, const char *data, size_t len, struct diag_list *diags);
void reader_close(struct reader *r);
yaml_node_t *reader_root(struct reader *r);
/* Checks the whole document against the schema, reporting every problem. */
void reader_walk(struct reader *r);

void reader_error(struct reader *r, const yaml_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void reader_warning(struct reader *r, const yaml_node_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of key in mapping map, or NULL (also when map is NULL or not a
 * mapping). reader_key() gives the key node itself, for positions. */
yaml_node_t *reader_get(struct reader *r, const yaml_node_t *map, const char *key);
yaml_node_t *reader_key(struct reader *r, const yaml_node_t *map, const char *key);
/* Items of a sequence (0 for anything else). */
size_t reader_count(const yaml_node_t *seq);
yaml_node_t *reader_item(struct reader *r, const yaml_node_t *seq, size_t i);
/* A scalar's text ("" for other nodes). */
const char *reader_text(const yaml_node_t *n);
int reader_is_null(const yaml_node_t *n);

enum reader_status {
    READER_GIVEN = 1,   /* present and valid */
    READER_DEFAULT = 0, /* absent: the schema's default is in *v */
    READER_BAD = -1,    /* present but invalid (the walk reported it) */
    READER_ABSENT = -2, /* absent, and the key has no default */
};
/* The value of the key at schema path `path` (e.g. "cluster.fabric.link";
 * its last component is looked up in map), converted per the schema. */
enum reader_status reader_value(struct reader *r, const yaml_node_t *map, const char *path,
                                struct schema_value *v);
/* The value of one scalar node (a list item, a value under a "*" row)
 * converted against the row at `path`; READER_BAD when it is not a valid
 * scalar (the walk reported it). */
enum reader_status reader_scalar(struct reader *r, const yaml_node_t *node, const char *path, struct schema_value *v);
/* A SCHEMA_DISTRIBUTION key: a duration (fixed), or a mapping of a kind and
 * its parameters, all in seconds. Reports wrong or missing parameters and
 * lo > hi, naming the key as `shown`. */
enum reader_status reader_distribution(struct reader *r, const yaml_node_t *map, const char *path,
                                       const char *shown, struct distribution *d);

#endif
