#include "policies/params.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int params_split_spec(const char *spec, struct spec_part *parts, size_t *n, char *err, size_t err_len)
{
    *n = 0;
    const char *s = spec;
    for (;;) {
        if (*n >= SPEC_PARTS_MAX) {
            snprintf(err, err_len, "too many components in policy '%s' (at most %d)", spec, SPEC_PARTS_MAX);
            return -1;
        }
        struct spec_part *p = &parts[*n];
        p->name = s;
        while (*s && *s != '+' && *s != '(' && *s != ')')
            s++;
        p->name_len = (size_t)(s - p->name);
        p->params = "";
        p->params_len = 0;
        if (*s == '(') {
            p->params = ++s;
            while (*s && *s != ')' && *s != '(' && *s != '+')
                s++;
            if (*s != ')') {
                snprintf(err, err_len, "unbalanced parentheses after '%.*s' in policy '%s'", (int)p->name_len,
                         p->name, spec);
                return -1;
            }
            p->params_len = (size_t)(s - p->params);
            s++;
        }
        if (*s == ')') {
            snprintf(err, err_len, "unbalanced parentheses after '%.*s' in policy '%s'", (int)p->name_len, p->name,
                     spec);
            return -1;
        }
        if (p->name_len == 0) {
            snprintf(err, err_len, "empty component in policy '%s'", spec);
            return -1;
        }
        (*n)++;
        if (*s == '\0')
            return 0;
        if (*s != '+') {
            snprintf(err, err_len, "expected '+' after '%.*s' in policy '%s'", (int)p->name_len, p->name, spec);
            return -1;
        }
        s++;
    }
}

size_t params_distance(const char *a, size_t alen, const char *b)
{
    size_t blen = strlen(b);
    if (alen > 63 || blen > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= blen; j++)
        row[j] = j;
    for (size_t i = 1; i <= alen; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= blen; j++) {
            size_t up = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
            size_t best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[blen];
}

const char *params_nearest(const char *word, size_t len, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    size_t limit = len / 3 > 3 ? 3 : len / 3;
    if (limit < 1)
        limit = 1;
    for (size_t i = 0; i < n; i++) {
        size_t d = params_distance(word, len, names[i]);
        if (d <= limit && d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

static int find(const struct params *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->n; i++)
        if (strlen(p->table[i].name) == len && strncmp(p->table[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

int params_parse(struct params *p, const char *component, const struct policy_param *table, size_t n,
                 const char *text, size_t len, char *err, size_t err_len)
{
    memset(p, 0, sizeof *p);
    p->component = component;
    p->table = table;
    p->n = n < PARAMS_MAX ? n : PARAMS_MAX;
    for (size_t i = 0; i < p->n; i++)
        snprintf(p->value[i], sizeof p->value[i], "%s", table[i].default_value ? table[i].default_value : "");
    size_t at = 0;
    while (at < len) {
        size_t end = at;
        while (end < len && text[end] != ',')
            end++;
        const char *item = text + at;
        size_t item_len = end - at;
        const char *eq = memchr(item, '=', item_len);
        if (!eq) {
            snprintf(err, err_len, "parameter '%.*s' of '%s' needs a value (name=value)", (int)item_len, item,
                     component);
            return -1;
        }
        size_t name_len = (size_t)(eq - item);
        int k = find(p, item, name_len);
        if (k < 0) {
            const char *names[PARAMS_MAX];
            for (size_t i = 0; i < p->n; i++)
                names[i] = table[i].name;
            const char *near = params_nearest(item, name_len, names, p->n);
            if (p->n == 0)
                snprintf(err, err_len, "'%s' takes no parameters, not '%.*s'", component, (int)name_len, item);
            else if (near)
                snprintf(err, err_len, "unknown parameter '%.*s' for '%s'; did you mean '%s'?", (int)name_len, item,
                         component, near);
            else
                snprintf(err, err_len, "unknown parameter '%.*s' for '%s' (see 'fleetsim policy describe %s')",
                         (int)name_len, item, component, component);
            return -1;
        }
        if (p->given[k]) {
            snprintf(err, err_len, "parameter '%s' of '%s' given twice", table[k].name, component);
            return -1;
        }
        size_t vlen = item_len - name_len - 1;
        if (vlen >= PARAMS_VALUE_MAX) {
            snprintf(err, err_len, "value of parameter '%s' of '%s' is too long", table[k].name, component);
            return -1;
        }
        memcpy(p->value[k], eq + 1, vlen);
        p->value[k][vlen] = '\0';
        p->given[k] = 1;
        at = end + 1;
    }
    return 0;
}

const char *params_text(const struct params *p, const char *name)
{
    int k = find(p, name, strlen(name));
    return k < 0 ? "" : p->value[k];
}

int params_given(const struct params *p, const char *name)
{
    int k = find(p, name, strlen(name));
    return k >= 0 && p->given[k];
}

static int number(const char *text, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (*end != '\0' || v != v)
        return -1;
    *out = v;
    return 0;
}

int params_number(const struct params *p, const char *name, double lo, double hi, double *out, char *err,
                  size_t err_len)
{
    const char *t = params_text(p, name);
    if (number(t, strlen(t), out) != 0 || *out < lo || *out > hi) {
        snprintf(err, err_len, "parameter '%s' of '%s' is '%s', expected a number from %g to %g", name,
                 p->component, t, lo, hi);
        return -1;
    }
    return 0;
}

int params_list(const struct params *p, const char *name, double lo, double hi, int32_t *keys, double *vals,
                size_t cap, size_t *n, char *err, size_t err_len)
{
    const char *t = params_text(p, name);
    *n = 0;
    while (*t) {
        const char *end = strchr(t, ';');
        size_t len = end ? (size_t)(end - t) : strlen(t);
        const char *colon = memchr(t, ':', len);
        double k, v;
        /* the range first: converting 1e49 to int32_t is undefined (fuzz_policy_spec) */
        if (!colon || number(t, (size_t)(colon - t), &k) != 0 || !(k >= -1 && k <= 2147483647.0) ||
            k != (double)(int32_t)k ||
            number(colon + 1, len - (size_t)(colon - t) - 1, &v) != 0 || v < lo || v > hi) {
            snprintf(err, err_len,
                     "parameter '%s' of '%s': item '%.*s' is not KEY:VALUE with an integer key and a value "
                     "from %g to %g",
                     name, p->component, (int)len, t, lo, hi);
            return -1;
        }
        if (*n >= cap) {
            snprintf(err, err_len, "parameter '%s' of '%s' has more than %zu items", name, p->component, cap);
            return -1;
        }
        for (size_t i = 0; i < *n; i++) {
            if (keys[i] == (int32_t)k) {
                snprintf(err, err_len, "parameter '%s' of '%s' names key %d twice", name, p->component, (int)k);
                return -1;
            }
        }
        keys[*n] = (int32_t)k;
        vals[*n] = v;
        (*n)++;
        t += len;
        if (*t == ';')
            t++;
    }
    return 0;
}

int params_ascending(const struct params *p, const char *name, double lo, double hi, double *vals, size_t cap,
                     size_t *n, char *err, size_t err_len)
{
    const char *t = params_text(p, name);
    *n = 0;
    while (*t) {
        const char *end = strchr(t, ';');
        size_t len = end ? (size_t)(end - t) : strlen(t);
        double v;
        if (number(t, len, &v) != 0 || v < lo || v > hi || (*n > 0 && v <= vals[*n - 1]) || *n >= cap) {
            snprintf(err, err_len,
                     "parameter '%s' of '%s' is '%s', expected at most %zu ascending numbers from %g to %g "
                     "separated by ';'",
                     name, p->component, params_text(p, name), cap, lo, hi);
            return -1;
        }
        vals[(*n)++] = v;
        t += len;
        if (*t == ';')
            t++;
    }
    return 0;
}
