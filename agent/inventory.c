#include "sim/suggest.h"
#include "agent/inventory.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config.h"

void inventory_init(struct inventory *inv)
{
    memset(inv, 0, sizeof *inv);
}

void inventory_release(struct inventory *inv)
{
    if (!inv)
        return;
    free(inv->nodes);
    free(inv->gpus);
    free(inv->pcie_level);
    memset(inv, 0, sizeof *inv);
}

int inventory_add_node(struct inventory *inv, const char *name, int32_t n_gpus)
{
    if (inv->n_nodes >= INV_MAX_NODES || n_gpus < 0 || n_gpus > INV_MAX_NODE_GPUS ||
        inv->n_gpus + (uint32_t)n_gpus > INV_MAX_GPUS)
        return -1;
    struct inv_node *nodes = realloc(inv->nodes, (inv->n_nodes + 1) * sizeof *nodes);
    if (!nodes)
        return -1;
    inv->nodes = nodes;
    struct inv_gpu *gpus = realloc(inv->gpus, (inv->n_gpus + (uint32_t)n_gpus + 1) * sizeof *gpus);
    if (!gpus)
        return -1;
    inv->gpus = gpus;
    struct inv_node *nd = &inv->nodes[inv->n_nodes];
    memset(nd, 0, sizeof *nd);
    snprintf(nd->name, sizeof nd->name, "%s", name);
    nd->first_gpu = (int32_t)inv->n_gpus;
    nd->n_gpus = n_gpus;
    nd->nvlink_domain = -1;
    nd->leaf = -1;
    nd->pod = -1;
    for (int32_t i = 0; i < n_gpus; i++) {
        struct inv_gpu *g = &inv->gpus[inv->n_gpus + (uint32_t)i];
        memset(g, 0, sizeof *g);
        g->node = (int32_t)inv->n_nodes;
        g->local_index = i;
        g->minor = -1;
        g->nvlink_domain = -1;
        g->ecc_uncorrected = -1;
    }
    inv->n_gpus += (uint32_t)n_gpus;
    return (int)inv->n_nodes++;
}

int inventory_find_node(const struct inventory *inv, const char *name)
{
    for (uint32_t i = 0; i < inv->n_nodes; i++)
        if (strcmp(inv->nodes[i].name, name) == 0)
            return (int)i;
    return -1;
}

int inventory_find_gpu(const struct inventory *inv, const char *text)
{
    for (uint32_t i = 0; i < inv->n_gpus; i++)
        if (strcmp(inv->gpus[i].uuid, text) == 0)
            return (int)i;
    const char *colon = strrchr(text, ':');
    if (!colon)
        return -1;
    char node[INV_NODE_NAME_MAX];
    size_t nl = (size_t)(colon - text);
    if (nl >= sizeof node)
        return -1;
    memcpy(node, text, nl);
    node[nl] = '\0';
    int ni = inventory_find_node(inv, node);
    char *end;
    long li = strtol(colon + 1, &end, 10);
    if (ni < 0 || !colon[1] || *end || li < 0 || li >= inv->nodes[ni].n_gpus)
        return -1;
    return inv->nodes[ni].first_gpu + (int)li;
}

int32_t inventory_node_usable(const struct inventory *inv, uint32_t node)
{
    const struct inv_node *nd = &inv->nodes[node];
    int32_t n = 0;
    for (int32_t i = 0; i < nd->n_gpus; i++)
        n += !inv->gpus[nd->first_gpu + i].drained;
    return n;
}

int inventory_health_update(struct inventory *inv, uint32_t gpu, const struct gpu_health_sample *s,
                            const struct health_rules *rules, char *reason, size_t reason_len)
{
    struct inv_gpu *g = &inv->gpus[gpu];
    char why[INV_REASON_MAX] = "";
    if (s->xid > 0) {
        g->last_xid = s->xid;
        for (size_t i = 0; i < rules->n_xids; i++)
            if (rules->xids[i] == s->xid) {
                snprintf(why, sizeof why, "critical xid %d", s->xid);
                break;
            }
    }
    if (s->ecc_uncorrected >= 0) {
        if (g->ecc_baseline < 0)
            g->ecc_baseline = 0;
        g->ecc_uncorrected = s->ecc_uncorrected;
        if (!why[0] && rules->drain_on_ecc && s->ecc_uncorrected > g->ecc_baseline)
            snprintf(why, sizeof why, "%lld uncorrectable ecc errors", (long long)s->ecc_uncorrected);
    }
    if (!why[0] || g->drained)
        return 0;
    g->drained = 1;
    g->auto_drained = 1;
    snprintf(g->drain_reason, sizeof g->drain_reason, "%s", why);
    if (reason)
        snprintf(reason, reason_len, "%s", why);
    return 1;
}

int inventory_pick_gpus(const struct inventory *inv, uint32_t node, int32_t n, const uint8_t *busy, int32_t *out)
{
    const struct inv_node *nd = &inv->nodes[node];
    int32_t free_in[INV_MAX_NODE_GPUS + 1] = {0}; /* per domain id + 1 (0 = no domain) */
    int32_t total = 0;
    for (int32_t i = 0; i < nd->n_gpus; i++) {
        const struct inv_gpu *g = &inv->gpus[nd->first_gpu + i];
        if (g->drained || busy[nd->first_gpu + i])
            continue;
        int32_t d = g->nvlink_domain >= 0 && g->nvlink_domain < INV_MAX_NODE_GPUS ? g->nvlink_domain + 1 : 0;
        free_in[d]++;
        total++;
    }
    if (n <= 0 || total < n)
        return -1;
    /* one NVLink domain that holds the whole job: the fullest that fits */
    int32_t best = -1;
    for (int32_t d = 1; d <= INV_MAX_NODE_GPUS; d++)
        if (free_in[d] >= n && (best < 0 || free_in[d] < free_in[best]))
            best = d;
    int32_t got = 0;
    uint8_t taken[INV_MAX_NODE_GPUS] = {0};
    if (best >= 0) {
        for (int32_t i = 0; i < nd->n_gpus && got < n; i++) {
            const struct inv_gpu *g = &inv->gpus[nd->first_gpu + i];
            if (!g->drained && !busy[nd->first_gpu + i] && g->nvlink_domain + 1 == best) {
                taken[i] = 1;
                got++;
            }
        }
    } else {
        /* domains with the most free GPUs first, then GPUs without NVLink */
        while (got < n) {
            int32_t dom = -1;
            for (int32_t d = 1; d <= INV_MAX_NODE_GPUS; d++)
                if (free_in[d] > 0 && (dom < 0 || free_in[d] > free_in[dom]))
                    dom = d;
            if (dom < 0)
                dom = 0;
            for (int32_t i = 0; i < nd->n_gpus && got < n; i++) {
                const struct inv_gpu *g = &inv->gpus[nd->first_gpu + i];
                int32_t d = g->nvlink_domain >= 0 && g->nvlink_domain < INV_MAX_NODE_GPUS ? g->nvlink_domain + 1 : 0;
                if (!taken[i] && !g->drained && !busy[nd->first_gpu + i] && d == dom) {
                    taken[i] = 1;
                    got++;
                }
            }
            free_in[dom] = 0;
        }
    }
    int32_t k = 0;
    for (int32_t i = 0; i < nd->n_gpus; i++)
        if (taken[i])
            out[k++] = nd->first_gpu + i;
    return 0;
}

/* ---- the fake inventory file ---- */

static int bad(struct err *err, const char *name, const char *where, const char *what)
{
    return err_set(err, name, 0, 0, "%s: %s", where, what);
}

static int check_keys(json_t *obj, const char *const *allowed, const char *where, const char *name, struct err *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        int ok = 0;
        const char *near = NULL;
        size_t best = 4;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(*a, key) == 0)
                ok = 1;
            size_t d = suggest_distance(key, *a);
            if (d < best) {
                best = d;
                near = *a;
            }
        }
        if (!ok) {
            if (near)
                return err_set(err, name, 0, 0, "%s: unknown key '%s'; did you mean '%s'?", where, key, near);
            return err_set(err, name, 0, 0, "%s: unknown key '%s'", where, key);
        }
    }
    return 0;
}

static int get_int(json_t *obj, const char *key, long long lo, long long hi, long long *out, const char *where,
                   const char *name, struct err *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 1;
    if (!json_is_integer(v))
        return err_set(err, name, 0, 0, "%s: key '%s' must be an integer", where, key);
    long long x = json_integer_value(v);
    if (x < lo || x > hi)
        return err_set(err, name, 0, 0, "%s: key '%s' is %lld, expected %lld to %lld", where, key, x, lo, hi);
    *out = x;
    return 0;
}

static int get_str(json_t *obj, const char *key, char *out, size_t len, const char *where, const char *name,
                   struct err *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return 1;
    if (!json_is_string(v))
        return err_set(err, name, 0, 0, "%s: key '%s' must be a string", where, key);
    const char *s = json_string_value(v);
    if (strlen(s) >= len || !*s)
        return err_set(err, name, 0, 0, "%s: key '%s' must have 1 to %zu characters", where, key, len - 1);
    for (const char *p = s; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\')
            return err_set(err, name, 0, 0, "%s: key '%s' has a control character, quote or backslash", where,
                           key);
    snprintf(out, len, "%s", s);
    return 0;
}

static int parse_node(struct inventory *inv, json_t *jn, size_t ni, const char *name, struct err *err)
{
    static const char *const node_keys[] = {"name", "gpus", "model", "memory_mib", "nvlink_domains", "leaf", "pod",
                                            NULL};
    static const char *const gpu_keys[] = {"uuid", "model", "memory_mib", "pci_bus_id", "nvlink_domain", "xid",
                                           "ecc_uncorrected", NULL};
    char where[128];
    snprintf(where, sizeof where, "nodes[%zu]", ni);
    if (!json_is_object(jn))
        return bad(err, name, where, "expected an object");
    if (check_keys(jn, node_keys, where, name, err))
        return -1;
    char nname[INV_NODE_NAME_MAX];
    int r = get_str(jn, "name", nname, sizeof nname, where, name, err);
    if (r < 0)
        return -1;
    if (r > 0)
        return bad(err, name, where, "missing key 'name'");
    for (const char *p = nname; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_' || *p == '.'))
            return err_set(err, name, 0, 0, "%s: node name '%s' may hold only letters, digits, '-', '_', '.'",
                           where, nname);
    if (inventory_find_node(inv, nname) >= 0)
        return err_set(err, name, 0, 0, "%s: node name '%s' given twice", where, nname);
    snprintf(where, sizeof where, "node '%s'", nname);
    char model[INV_NAME_MAX] = "Fake GPU";
    if (get_str(jn, "model", model, sizeof model, where, name, err) < 0)
        return -1;
    long long mem_mib = 81559;
    if (get_int(jn, "memory_mib", 1, 1LL << 30, &mem_mib, where, name, err) < 0)
        return -1;
    long long leaf = -1, pod = -1;
    if (get_int(jn, "leaf", 0, 1 << 20, &leaf, where, name, err) < 0 ||
        get_int(jn, "pod", 0, 1 << 20, &pod, where, name, err) < 0)
        return -1;
    json_t *jg = json_object_get(jn, "gpus");
    if (!jg)
        return err_set(err, name, 0, 0, "%s: missing key 'gpus'", where);
    long long n;
    if (json_is_integer(jg)) {
        n = json_integer_value(jg);
        if (n < 1 || n > INV_MAX_NODE_GPUS)
            return err_set(err, name, 0, 0, "%s: key 'gpus' is %lld, expected 1 to %d", where, n,
                           INV_MAX_NODE_GPUS);
    } else if (json_is_array(jg)) {
        n = (long long)json_array_size(jg);
        if (n < 1 || n > INV_MAX_NODE_GPUS)
            return err_set(err, name, 0, 0, "%s: key 'gpus' lists %lld GPUs, expected 1 to %d", where, n,
                           INV_MAX_NODE_GPUS);
    } else {
        return err_set(err, name, 0, 0, "%s: key 'gpus' must be a count or a list of GPU objects", where);
    }
    int node = inventory_add_node(inv, nname, (int32_t)n);
    if (node < 0)
        return err_set(err, name, 0, 0, "%s: too many nodes or GPUs (at most %d nodes, %d GPUs)", where,
                       INV_MAX_NODES, INV_MAX_GPUS);
    struct inv_node *nd = &inv->nodes[node];
    nd->leaf = (int32_t)leaf;
    nd->pod = (int32_t)pod;
    for (long long i = 0; i < n; i++) {
        struct inv_gpu *g = &inv->gpus[nd->first_gpu + i];
        snprintf(g->model, sizeof g->model, "%s", model);
        g->memory_bytes = (uint64_t)mem_mib << 20;
        /* a stable, well-formed fake UUID: node number and GPU index in the last group */
        snprintf(g->uuid, sizeof g->uuid, "GPU-fa4e0000-0000-4000-8000-%06d%06lld", node, i);
        snprintf(g->pci_bus_id, sizeof g->pci_bus_id, "00000000:%02llX:00.0", (unsigned long long)(0x18 + i));
        g->minor = (int32_t)i;
        if (!json_is_array(jg))
            continue;
        json_t *jo = json_array_get(jg, (size_t)i);
        char gw[160];
        snprintf(gw, sizeof gw, "%s gpus[%lld]", where, i);
        if (!json_is_object(jo))
            return bad(err, name, gw, "expected an object");
        if (check_keys(jo, gpu_keys, gw, name, err))
            return -1;
        if (get_str(jo, "uuid", g->uuid, sizeof g->uuid, gw, name, err) < 0 ||
            get_str(jo, "model", g->model, sizeof g->model, gw, name, err) < 0 ||
            get_str(jo, "pci_bus_id", g->pci_bus_id, sizeof g->pci_bus_id, gw, name, err) < 0)
            return -1;
        long long v;
        int rr = get_int(jo, "memory_mib", 1, 1LL << 30, &v, gw, name, err);
        if (rr < 0)
            return -1;
        if (rr == 0)
            g->memory_bytes = (uint64_t)v << 20;
        if ((rr = get_int(jo, "nvlink_domain", 0, INV_MAX_NODE_GPUS - 1, &v, gw, name, err)) < 0)
            return -1;
        if (rr == 0)
            g->nvlink_domain = (int32_t)v;
        if ((rr = get_int(jo, "xid", 0, 100000, &v, gw, name, err)) < 0)
            return -1;
        if (rr == 0)
            g->last_xid = (int)v;
        if ((rr = get_int(jo, "ecc_uncorrected", 0, 1LL << 40, &v, gw, name, err)) < 0)
            return -1;
        if (rr == 0)
            g->ecc_uncorrected = v;
    }
    json_t *jd = json_object_get(jn, "nvlink_domains");
    if (jd) {
        if (!json_is_array(jd))
            return err_set(err, name, 0, 0, "%s: key 'nvlink_domains' must be a list of lists of GPU indices",
                           where);
        for (size_t d = 0; d < json_array_size(jd); d++) {
            json_t *dom = json_array_get(jd, d);
            if (!json_is_array(dom) || d >= INV_MAX_NODE_GPUS)
                return err_set(err, name, 0, 0, "%s: nvlink_domains[%zu] must be a list of GPU indices", where, d);
            for (size_t k = 0; k < json_array_size(dom); k++) {
                json_t *x = json_array_get(dom, k);
                long long gi = json_is_integer(x) ? json_integer_value(x) : -1;
                if (gi < 0 || gi >= n)
                    return err_set(err, name, 0, 0, "%s: nvlink_domains[%zu][%zu] is not a GPU index 0 to %lld",
                                   where, d, k, n - 1);
                struct inv_gpu *g = &inv->gpus[nd->first_gpu + gi];
                if (g->nvlink_domain >= 0 && g->nvlink_domain != (int32_t)d)
                    return err_set(err, name, 0, 0, "%s: GPU %lld is in two NVLink domains", where, gi);
                g->nvlink_domain = (int32_t)d;
            }
        }
    }
    /* NVLink peers: all GPUs of the same domain (an NVSwitch fabric) */
    for (long long i = 0; i < n; i++) {
        struct inv_gpu *g = &inv->gpus[nd->first_gpu + i];
        if (g->nvlink_domain < 0)
            continue;
        nd->nvlink_domain = node;
        for (long long k = 0; k < n && g->n_peers < INV_MAX_PEERS; k++)
            if (k != i && inv->gpus[nd->first_gpu + k].nvlink_domain == g->nvlink_domain)
                g->peers[g->n_peers++] = nd->first_gpu + (int32_t)k;
    }
    return 0;
}

int inventory_parse_fake(struct inventory *inv, const char *name, const char *text, size_t len, struct err *err)
{
    static const char *const top_keys[] = {"fleetsim_inventory", "nodes", "driver_version", NULL};
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return err_set(err, name, je.line, je.column, "%s", je.text);
    int rc = -1;
    inventory_release(inv);
    inv->source = INVENTORY_FAKE;
    if (!json_is_object(root)) {
        err_set(err, name, 0, 0, "expected a JSON object with key 'nodes'");
        goto done;
    }
    if (check_keys(root, top_keys, "top level", name, err))
        goto done;
    long long version = 1;
    int r = get_int(root, "fleetsim_inventory", 1, 1000, &version, "top level", name, err);
    if (r < 0)
        goto done;
    if (version != 1) {
        err_set(err, name, 0, 0, "unsupported fleetsim_inventory version %lld (this agent knows 1)", version);
        goto done;
    }
    snprintf(inv->driver_version, sizeof inv->driver_version, "fake");
    if (get_str(root, "driver_version", inv->driver_version, sizeof inv->driver_version, "top level", name, err) < 0)
        goto done;
    json_t *nodes = json_object_get(root, "nodes");
    if (!json_is_array(nodes) || json_array_size(nodes) == 0) {
        err_set(err, name, 0, 0, "key 'nodes' must be a non-empty list");
        goto done;
    }
    for (size_t i = 0; i < json_array_size(nodes); i++)
        if (parse_node(inv, json_array_get(nodes, i), i, name, err) != 0)
            goto done;
    for (uint32_t i = 0; i < inv->n_gpus; i++)
        for (uint32_t k = 0; k < i; k++)
            if (strcmp(inv->gpus[i].uuid, inv->gpus[k].uuid) == 0) {
                err_set(err, name, 0, 0, "GPU UUID '%s' given twice", inv->gpus[i].uuid);
                goto done;
            }
    rc = 0;
done:
    json_decref(root);
    if (rc != 0)
        inventory_release(inv);
    return rc;
}

int inventory_load_fake(struct inventory *inv, const char *path, struct err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(err, NULL, 0, 0, "cannot read inventory '%s': %s", path, strerror(errno));
    char *text = malloc(1 << 20);
    if (!text) {
        fclose(f);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    size_t len = fread(text, 1, 1 << 20, f);
    int too_big = len == 1 << 20;
    int failed = ferror(f);
    fclose(f);
    int rc;
    if (failed)
        rc = err_set(err, NULL, 0, 0, "cannot read inventory '%s'", path);
    else if (too_big)
        rc = err_set(err, path, 0, 0, "inventory file larger than 1 MiB");
    else
        rc = inventory_parse_fake(inv, path, text, len, err);
    free(text);
    return rc;
}
