/* schema: every key a scenario file may hold, in one table. The table is the
 * single source for validation (types, units, ranges, allowed values),
 * defaults, `fleetsim help scenario` and nearest-key suggestions; the loader's
 * walk (scenarios/reader.c) knows nothing of particular keys.
 *
 * Paths name keys from the top: "cluster.fabric.link"; the items of a list
 * add "[]": "cluster.partitions[]" is one partition, and
 * "cluster.partitions[].nodes" its node count. A key's parent is its path
 * without the last component, and the keys valid inside a mapping are
 * exactly the rows whose parent is that mapping's path.
 *
 * A row whose last component is "*" ("workload.teams[].gpus.*") stands for
 * any key of that mapping: mappings whose keys are data (GPU count ->
 * weight). The walk checks their values against the row; the fill function
 * checks the keys.
 *
 * Values are stored in one unit per type: durations and date offsets in
 * seconds, bandwidths in Gbps, sizes in bytes, power in watts, money in US
 * dollars. Ranges (min, max) are in those units; NAN means unbounded.
 *
 * To add a section: add its rows here, in the order `help scenario` should
 * list them, and a fill function to the section table in scenario.c.
 */
#ifndef FLEETSIM_SCENARIOS_SCHEMA_H
#define FLEETSIM_SCENARIOS_SCHEMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum schema_type {
    SCHEMA_MAP,
    SCHEMA_LIST,
    SCHEMA_INT,
    SCHEMA_NUMBER,
    SCHEMA_BOOL,
    SCHEMA_STRING,
    SCHEMA_ENUM,
    SCHEMA_DURATION,
    SCHEMA_DATE,
    SCHEMA_DATE_OR_DURATION,
    SCHEMA_BANDWIDTH,
    SCHEMA_BYTES,
    SCHEMA_POWER,
    SCHEMA_MONEY,
    /* a duration (a fixed value) or a mapping {distribution: KIND, ...} */
    SCHEMA_DISTRIBUTION,
};

enum {
    SCHEMA_REQUIRED = 1u << 0,      /* must be present in its mapping */
    SCHEMA_MIN_EXCLUSIVE = 1u << 1, /* value > min rather than >= min */
};

struct schema_key {
    const char *path;
    enum schema_type type;
    const char *values; /* SCHEMA_ENUM: "a|b|c" */
    double min, max;
    const char *def; /* default as a scenario would write it; NULL = none */
    unsigned flags;
    const char *help;
};

/* A converted scalar. */
struct schema_value {
    double num;       /* numbers, and every unit type in its stored unit */
    int64_t i;        /* SCHEMA_INT, SCHEMA_BOOL, and a date's Unix time */
    int is_date;      /* SCHEMA_DATE_OR_DURATION: 1 if written as a date */
    const char *text; /* the text as written (borrowed) */
};

extern const struct schema_key schema_keys[];
extern const size_t schema_key_count;

const struct schema_key *schema_find(const char *path);
/* The "*" row of the mapping at parent_path, or NULL. */
const struct schema_key *schema_wildcard(const char *parent_path);
/* The i-th key directly inside the mapping at parent_path ("" = top), or NULL
 * past the last. */
const struct schema_key *schema_child(const char *parent_path, size_t i);
/* The last component of a path: "link" for "cluster.fabric.link". */
const char *schema_key_name(const struct schema_key *k);
const char *schema_type_name(enum schema_type t);
/* The unit a key's value is stored in (and its range given in), or NULL for
 * unitless values: from the type ("Gbps" for bandwidths), else from a unit
 * in the key's name ("USD" for price_usd), as house style names quantities. */
const char *schema_unit(const struct schema_key *k);

/* Converts and range-checks text for key k (quoted: the YAML scalar was
 * quoted, which numbers and booleans must not be). On failure writes a
 * message naming `shown` (the key as the user should read it) into msg and
 * returns -1; *v is then unspecified. */
int schema_convert(const struct schema_key *k, const char *shown, const char *text, int quoted,
                   struct schema_value *v, char *msg, size_t len);

/* The nearest of n candidates (sim/suggest.h's edit distance) that is
 * close enough to be a typo of word, or NULL: at most 3 edits and at most a
 * third of the word, so "rack" is not offered "link". */
const char *schema_nearest(const char *word, const char *const *candidates, size_t n);
/* The nearest key inside parent_path, or NULL. */
const char *schema_nearest_key(const char *parent_path, const char *word);

/* Writes the reference `fleetsim help scenario` shows: every key grouped by
 * section, with type, range, default and help. */
void schema_write_help(FILE *out);

#endif
