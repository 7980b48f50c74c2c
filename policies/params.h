/* params: reading a policy spec and its components' parameters.
 *
 * A spec is components joined by '+', each a name with optional parameters
 * in parentheses: "fairshare(half_life_s=3600)+easy+pack". A component's
 * parameters are "name=value" pairs separated by ','; values hold no ',' '('
 * ')' or '+'. Lists inside a value use ';' between items and ':' inside one
 * ("guarantee=0:16;1:8"). Every name is checked against the component's
 * table (struct policy_param in policies/policy.h): an unknown name is an
 * error that offers the nearest valid one, a repeated name is an error, and
 * names not given take the table's default. Messages go into a caller's
 * buffer; nothing here allocates.
 */
#ifndef FLEETSIM_POLICIES_PARAMS_H
#define FLEETSIM_POLICIES_PARAMS_H

#include <stddef.h>
#include <stdint.h>

#include "policies/policy.h"

enum { PARAMS_MAX = 16, PARAMS_VALUE_MAX = 256, SPEC_PARTS_MAX = 8 };

struct spec_part {
    const char *name;
    size_t name_len;
    const char *params; /* inside the parentheses, or "" */
    size_t params_len;
};

/* Splits spec at top-level '+'. Returns 0, or -1 with a message (unbalanced
 * parentheses, an empty component, too many components). */
int params_split_spec(const char *spec, struct spec_part *parts, size_t *n, char *err, size_t err_len);

struct params {
    const char *component; /* for messages */
    const struct policy_param *table;
    size_t n;
    char value[PARAMS_MAX][PARAMS_VALUE_MAX];
    uint8_t given[PARAMS_MAX];
};

/* Parses text[0..len) against table (n <= PARAMS_MAX rows). */
int params_parse(struct params *p, const char *component, const struct policy_param *table, size_t n,
                 const char *text, size_t len, char *err, size_t err_len);
/* The value of a parameter (its default when not given). */
const char *params_text(const struct params *p, const char *name);
int params_given(const struct params *p, const char *name);
/* A number in [lo, hi]; -1 with a message naming the parameter otherwise. */
int params_number(const struct params *p, const char *name, double lo, double hi, double *out, char *err,
                  size_t err_len);
/* A list "K:V;K:V" of integer keys >= -1 and numeric values in [lo, hi];
 * at most cap items. An empty value is an empty list. */
int params_list(const struct params *p, const char *name, double lo, double hi, int32_t *keys, double *vals,
                size_t cap, size_t *n, char *err, size_t err_len);
/* A list of numbers "A;B;C" in [lo, hi], strictly ascending. */
int params_ascending(const struct params *p, const char *name, double lo, double hi, double *vals, size_t cap,
                     size_t *n, char *err, size_t err_len);

/* Edit distance, and the nearest of n names that is close enough to be a
 * typo of word (at most 3 edits, at most a third of the word), or NULL. */
size_t params_distance(const char *a, size_t alen, const char *b);
const char *params_nearest(const char *word, size_t len, const char *const *names, size_t n);

#endif
