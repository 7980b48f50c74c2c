/* fill: the failures section: preset, categories, distribution, checkpoints. */
#include <stdio.h>
#include <string.h>

#include "models/distribution.h"
#include "scenarios/fill.h"
#include "sim/units.h"

static int category_name_ok(struct fill *f, yaml_node_t *list, size_t index, yaml_node_t *name)
{
    const char *text = reader_text(name);
    if (strlen(text) >= FAILURE_NAME_MAX) {
        reader_error(f->r, name, "failure category name '%s' is longer than %d characters", text,
                     FAILURE_NAME_MAX - 1);
        return 0;
    }
    for (size_t j = 0; j < index; j++) {
        yaml_node_t *prev = reader_get(f->r, reader_item(f->r, list, j), "name");
        if (prev && strcmp(reader_text(prev), text) == 0) {
            reader_error(f->r, name, "duplicate failure category '%s' (first at line %lu)", text,
                         (unsigned long)prev->start_mark.line + 1);
            return 0;
        }
    }
    return 1;
}

static const struct failure_category *category_find(const struct failure_spec *fs, const char *name)
{
    for (size_t i = 0; i < fs->n_categories; i++)
        if (strcmp(fs->categories[i].name, name) == 0)
            return &fs->categories[i];
    return NULL;
}

/* A new category must say everything; an override (a preset's name) only
 * what it changes. One message lists what is missing. */
static void category_check_new(struct fill *f, yaml_node_t *m, const char *shown)
{
    static const char *const keys[] = {"scope", "rate_per_unit_hour", "repair"};
    char missing[128] = "";
    size_t n = 0;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        if (reader_get(f->r, m, keys[i]))
            continue;
        size_t len = strlen(missing);
        snprintf(missing + len, sizeof missing - len, "%s'%s'", n++ ? ", " : "", keys[i]);
    }
    if (n)
        reader_error(f->r, m,
                     "missing %s %s in '%s' (a new failure category needs scope, rate_per_unit_hour and repair)",
                     n > 1 ? "keys" : "key", missing, shown);
}

static int category_fill(struct fill *f, yaml_node_t *list, size_t index)
{
    yaml_node_t *m = reader_item(f->r, list, index);
    yaml_node_t *name = reader_get(f->r, m, "name");
    if (!m || m->type != YAML_MAPPING_NODE || !name || name->type != YAML_SCALAR_NODE || reader_is_null(name) ||
        !category_name_ok(f, list, index, name))
        return 0;
    char shown[READER_PATH_MAX];
    fill_shown(shown, sizeof shown, "failures.categories", index, NULL);
    struct failure_spec *fs = &f->s->failures;
    const struct failure_category *old = category_find(fs, reader_text(name));
    struct failure_category c;
    memset(&c, 0, sizeof c);
    if (old)
        c = *old;
    else
        category_check_new(f, m, shown);
    snprintf(c.name, sizeof c.name, "%s", reader_text(name));
    struct schema_value v;
    if (reader_value(f->r, m, "failures.categories[].scope", &v) == READER_GIVEN)
        failure_scope_parse(v.text, &c.scope);
    fill_number(f, m, "failures.categories[].rate_per_unit_hour", &c.rate_per_unit_hour);
    char repair[READER_PATH_MAX];
    fill_shown(repair, sizeof repair, "failures.categories", index, "repair");
    reader_distribution(f->r, m, "failures.categories[].repair", repair, &c.repair_s);
    /* where a figure comes from travels with it, as the catalog's do */
    snprintf(c.source, sizeof c.source, "%s%s:%lu", old ? "overridden in " : "", f->r->file,
             (unsigned long)name->start_mark.line + 1);
    return failure_spec_add(fs, &c);
}

static void checkpoint_fill(struct fill *f, yaml_node_t *failures, enum job_class k)
{
    yaml_node_t *cp = reader_get(f->r, reader_get(f->r, failures, "checkpoint"), job_class_name(k));
    char ipath[READER_PATH_MAX], opath[READER_PATH_MAX];
    snprintf(ipath, sizeof ipath, "failures.checkpoint.%s.interval", job_class_name(k));
    snprintf(opath, sizeof opath, "failures.checkpoint.%s.overhead", job_class_name(k));
    struct checkpoint_policy *p = &f->s->failures.checkpoint[k];
    if (fill_number(f, cp, ipath, &p->interval_s) == READER_BAD ||
        fill_number(f, cp, opath, &p->overhead_s) == READER_BAD)
        return;
    yaml_node_t *at = reader_get(f->r, cp, "overhead");
    if (!at)
        at = reader_get(f->r, cp, "interval");
    char iv[32], ov[32];
    units_format_duration(iv, sizeof iv, p->interval_s);
    units_format_duration(ov, sizeof ov, p->overhead_s);
    if (p->interval_s > 0 && p->overhead_s >= p->interval_s)
        reader_error(f->r, at, "key '%s' is %s, expected less than the interval (%s)", opath, ov, iv);
    else if (p->interval_s == 0 && p->overhead_s > 0)
        reader_error(f->r, at, "key '%s' is %s, but the interval is 0 (no checkpoints to write)", opath, ov);
}

/* weibull_shape goes with distribution weibull, both ways. */
static void distribution_fill(struct fill *f, yaml_node_t *m)
{
    struct schema_value kind, shape;
    enum reader_status ks = reader_value(f->r, m, "failures.distribution", &kind);
    enum reader_status ss = reader_value(f->r, m, "failures.weibull_shape", &shape);
    if (ks < READER_DEFAULT || ss == READER_BAD)
        return;
    int weibull = strcmp(kind.text, "weibull") == 0;
    if (weibull && ss == READER_ABSENT)
        reader_error(f->r, m, "missing key 'weibull_shape' in 'failures' (needed with distribution 'weibull')");
    else if (!weibull && ss == READER_GIVEN)
        reader_error(f->r, reader_get(f->r, m, "weibull_shape"),
                     "key 'failures.weibull_shape' applies only with distribution 'weibull', not '%s'", kind.text);
    else if (weibull && !distribution_weibull_shape_ok(shape.num))
        reader_error(f->r, reader_get(f->r, m, "weibull_shape"),
                     "key 'failures.weibull_shape' is %g, too small: the mean time between failures would "
                     "need Gamma(1 + 1/%g), which overflows (use 0.006 or more)",
                     shape.num, shape.num);
    else if (weibull)
        f->s->failures.weibull_shape = shape.num;
}

int fill_failures(struct fill *f, yaml_node_t *root)
{
    if (!reader_key(f->r, root, "failures"))
        return 0; /* no section: no failures */
    yaml_node_t *m = reader_get(f->r, root, "failures");
    struct failure_spec *fs = &f->s->failures;
    struct schema_value v;
    if (reader_value(f->r, m, "failures.preset", &v) == READER_GIVEN && strcmp(v.text, "llama3") == 0 &&
        failure_spec_llama3(fs) != 0)
        return -1;
    distribution_fill(f, m);
    yaml_node_t *list = reader_get(f->r, m, "categories");
    for (size_t i = 0; i < reader_count(list); i++)
        if (category_fill(f, list, i) != 0)
            return -1;
    for (int k = 0; k < JOB_CLASS_COUNT; k++)
        checkpoint_fill(f, m, (enum job_class)k);
    fs->enabled = 1;
    if (reader_value(f->r, m, "failures.enabled", &v) >= READER_DEFAULT)
        fs->enabled = (int)v.i;
    if (fs->enabled && fs->n_categories == 0)
        reader_error(f->r, reader_key(f->r, root, "failures"),
                     "failures are enabled but there are no categories (add 'preset: llama3' or 'categories')");
    return 0;
}
