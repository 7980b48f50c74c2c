/* fill: the procurement section: purchase orders and retirements. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/fill.h"

int fill_time(struct fill *f, yaml_node_t *m, const char *path, const char *shown, sim_time *us)
{
    struct schema_value v;
    if (reader_value(f->r, m, path, &v) != READER_GIVEN)
        return -1;
    yaml_node_t *node = reader_get(f->r, m, schema_key_name(schema_find(path)));
    if (!v.is_date) {
        *us = llround(v.num * 1e6);
        return 0;
    }
    if (!f->has_start) {
        reader_error(f->r, node, "key '%s' is the date '%s', which needs 'start_date' (or write a duration "
                                 "from the start, e.g. '4w')",
                     shown, v.text);
        return -1;
    }
    if (v.i < f->s->start_unix_s) {
        reader_error(f->r, node, "key '%s' is %s, before start_date", shown, v.text);
        return -1;
    }
    *us = (v.i - f->s->start_unix_s) * SIM_US_PER_S;
    return 0;
}

static int order_fill(struct fill *f, yaml_node_t *list, size_t i)
{
    yaml_node_t *m = reader_item(f->r, list, i);
    if (!m || m->type != YAML_MAPPING_NODE)
        return 0;
    char at[READER_PATH_MAX], lead[READER_PATH_MAX];
    fill_shown(at, sizeof at, "procurement.orders", i, "at");
    fill_shown(lead, sizeof lead, "procurement.orders", i, "lead_time");
    struct purchase_order o;
    memset(&o, 0, sizeof o);
    yaml_node_t *type = reader_get(f->r, m, "node_type");
    int ok = fill_time(f, m, "procurement.orders[].at", at, &o.order_us) == 0;
    o.type = type ? fill_node_type_ref(f, type) : -1;
    ok &= o.type >= 0;
    ok &= fill_int(f, m, "procurement.orders[].count", &o.count) == READER_GIVEN;
    ok &= reader_distribution(f->r, m, "procurement.orders[].lead_time", lead, &o.lead_time_s) == READER_GIVEN;
    ok &= fill_number(f, m, "procurement.orders[].burn_in", &o.burn_in_s) >= READER_DEFAULT;
    if (!ok)
        return 0;
    return procurement_add_order(&f->s->procurement, &o);
}

static int64_t initial_nodes(const struct scenario *s, int32_t type)
{
    int64_t n = 0;
    for (size_t i = 0; i < s->n_partitions; i++)
        if (s->partitions[i].type == type)
            n += s->partitions[i].nodes;
    return n;
}

/* Nodes of a type there can be when retirement r starts: the initial ones,
 * those ordered no later, less those retired before it (earlier, or at the
 * same time and listed first). Deliveries are random, so "ordered" is the
 * most there can be, not what is sure to be there; the simulator drains what
 * is present. */
static void retirement_check(struct fill *f, yaml_node_t *m, size_t index)
{
    const struct procurement_spec *p = &f->s->procurement;
    const struct retirement *r = &p->retirements[index];
    int64_t initial = initial_nodes(f->s, r->type), ordered = 0, retired = 0;
    for (size_t i = 0; i < p->n_orders; i++)
        if (p->orders[i].type == r->type && p->orders[i].order_us <= r->at_us)
            ordered += p->orders[i].count;
    for (size_t i = 0; i < p->n_retirements; i++) {
        const struct retirement *o = &p->retirements[i];
        if (i != index && o->type == r->type && (o->at_us < r->at_us || (o->at_us == r->at_us && i < index)))
            retired += o->count;
    }
    int64_t present = initial + ordered - retired;
    if (r->count <= present)
        return;
    reader_error(f->r, reader_get(f->r, m, "count"),
                 "retirement of %lld '%s' nodes is more than the %lld there can be then (%lld initial, %lld ordered, "
                 "%lld retired before)",
                 (long long)r->count, f->s->catalog.types[r->type].name, (long long)present, (long long)initial,
                 (long long)ordered, (long long)retired);
}

static int retirement_fill(struct fill *f, yaml_node_t *list, size_t i)
{
    yaml_node_t *m = reader_item(f->r, list, i);
    if (!m || m->type != YAML_MAPPING_NODE)
        return 0;
    char at[READER_PATH_MAX];
    fill_shown(at, sizeof at, "procurement.retirements", i, "at");
    struct retirement r;
    memset(&r, 0, sizeof r);
    yaml_node_t *type = reader_get(f->r, m, "node_type");
    int ok = fill_time(f, m, "procurement.retirements[].at", at, &r.at_us) == 0;
    r.type = type ? fill_node_type_ref(f, type) : -1;
    ok &= r.type >= 0;
    ok &= fill_int(f, m, "procurement.retirements[].count", &r.count) == READER_GIVEN;
    if (!ok)
        return 0;
    return procurement_add_retirement(&f->s->procurement, &r);
}

int fill_procurement(struct fill *f, yaml_node_t *root)
{
    yaml_node_t *m = reader_get(f->r, root, "procurement");
    yaml_node_t *orders = reader_get(f->r, m, "orders");
    for (size_t i = 0; i < reader_count(orders); i++)
        if (order_fill(f, orders, i) != 0)
            return -1;
    yaml_node_t *rets = reader_get(f->r, m, "retirements");
    size_t n = reader_count(rets);
    yaml_node_t **where = calloc(n ? n : 1, sizeof *where);
    if (!where)
        return -1;
    for (size_t i = 0; i < n; i++) {
        size_t before = f->s->procurement.n_retirements;
        if (retirement_fill(f, rets, i) != 0) {
            free(where);
            return -1;
        }
        if (f->s->procurement.n_retirements > before)
            where[before] = reader_item(f->r, rets, i);
    }
    /* after all are read: a later line may retire earlier; and only when the
     * partitions were read, or every retirement would look too large */
    for (size_t i = 0; f->cluster_ok && i < f->s->procurement.n_retirements; i++)
        retirement_check(f, where[i], i);
    free(where);
    return 0;
}
