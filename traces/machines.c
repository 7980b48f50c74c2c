#include "traces/machines.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "traces/gpufmt.h"
#include "traces/textfile.h"

/* Which column is the name, the GPU count and the model, per layout. */
struct machines_layout {
    const char *name, *gpus, *model;
};
static const struct machines_layout machines_layouts[] = {
    {"sn", "gpu", "model"},
    {"machineId", "number of GPUs", "single GPU mem"},
    {"machine", "cap_gpu", "gpu_type"},
};
enum { MACHINES_LAYOUTS = sizeof machines_layouts / sizeof *machines_layouts };

static int machines_is_alea(const char *line, size_t len);
static int machines_is_vc_table(const struct gpufmt_row *header);

static int machines_layout_of(const struct gpufmt_row *row, int *name, int *gpus, int *model)
{
    for (int l = 0; l < MACHINES_LAYOUTS; l++) {
        *name = gpufmt_find(row, machines_layouts[l].name);
        *gpus = gpufmt_find(row, machines_layouts[l].gpus);
        *model = gpufmt_find(row, machines_layouts[l].model);
        if (*name >= 0 && *gpus >= 0)
            return l;
    }
    return -1;
}

void machines_init(struct machine_list *m)
{
    memset(m, 0, sizeof *m);
}

void machines_release(struct machine_list *m)
{
    if (!m)
        return;
    free(m->gpus);
    free(m->model);
    for (size_t i = 0; i < m->models.n; i++)
        free(m->models.items[i]);
    free(m->models.items);
    free(m->models.index);
    memset(m, 0, sizeof *m);
}

int machines_detect(const char *data, size_t len)
{
    const char *line;
    size_t n;
    if (!gpufmt_first_line(data, len, &line, &n))
        return 0;
    struct gpufmt_row row;
    gpufmt_split(line, n, &row);
    int a, b, c;
    return machines_layout_of(&row, &a, &b, &c) >= 0 || machines_is_vc_table(&row) || machines_is_alea(line, n);
}

static int machines_push(struct machine_list *m, int32_t gpus, int32_t model)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        int32_t *g = realloc(m->gpus, cap * sizeof *g);
        if (!g)
            return -1;
        m->gpus = g;
        int32_t *k = realloc(m->model, cap * sizeof *k);
        if (!k)
            return -1;
        m->model = k;
        m->cap = cap;
    }
    m->gpus[m->n] = gpus;
    m->model[m->n] = model;
    m->n++;
    m->total_gpus += gpus;
    return 0;
}

/* Alea's .machines (beside an SWF log, e.g. wagap-2013.swf.machines): per
 * line "cluster_id name nodes cpus_per_node speed ram_kb", whitespace
 * separated, no header. Fields split in place into f; returns their count. */
static int machines_alea_fields(const char *line, size_t len, const char *f[6], size_t flen[6])
{
    int n = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            i++;
        if (i >= len)
            break;
        size_t start = i;
        while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            i++;
        if (n < 6) {
            f[n] = line + start;
            flen[n] = i - start;
        }
        n++;
    }
    return n;
}

static int machines_is_alea(const char *line, size_t len)
{
    const char *f[6];
    size_t fl[6];
    int64_t v;
    if (memchr(line, ',', len) || machines_alea_fields(line, len, f, fl) != 6 || gpufmt_int(f[2], fl[2], &v) != 0 ||
        gpufmt_int(f[3], fl[3], &v) != 0)
        return 0;
    /* the cluster's name has a letter: a short SWF line has none */
    for (size_t i = 0; i < fl[1]; i++)
        if ((f[1][i] >= 'a' && f[1][i] <= 'z') || (f[1][i] >= 'A' && f[1][i] <= 'Z'))
            return 1;
    return 0;
}

static int machines_read_alea(struct textfile_report *rep, const char *data, size_t len, struct machine_list *m)
{
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    const char *line;
    size_t n;
    while (!rep->stopped && textfile_lines_next(&it, &line, &n)) {
        const char *f[6];
        size_t fl[6];
        int k = machines_alea_fields(line, n, f, fl);
        if (k == 0)
            continue;
        int64_t nodes, cpus;
        if (k != 6) {
            textfile_error(rep, it.line, 1, "%d fields, expected 6 (cluster_id name nodes cpus_per_node speed ram_kb)", k);
            continue;
        }
        if (gpufmt_int(f[2], fl[2], &nodes) != 0 || nodes < 0 || nodes > CLUSTER_MAX_NODES) {
            textfile_error(rep, it.line, (long)(f[2] - line) + 1, "node count is not a whole number from 0 to %d",
                           CLUSTER_MAX_NODES);
            continue;
        }
        if (gpufmt_int(f[3], fl[3], &cpus) != 0 || cpus < 0 || cpus > CLUSTER_MAX_NODE_SLOTS) {
            textfile_error(rep, it.line, (long)(f[3] - line) + 1, "slots per node is not a whole number from 0 to %d",
                           CLUSTER_MAX_NODE_SLOTS);
            continue;
        }
        char name[64];
        size_t nl = fl[1] < sizeof name - 1 ? fl[1] : sizeof name - 1;
        memcpy(name, f[1], nl);
        name[nl] = '\0';
        int32_t model = string_table_intern(&m->models, name);
        for (int64_t i = 0; i < nodes && model >= 0; i++) {
            if (cpus == 0) {
                m->cpu_only++;
                continue;
            }
            if (machines_push(m, (int32_t)cpus, model) != 0)
                model = -1;
        }
        if (model < 0) {
            textfile_out_of_memory(rep, it.line);
            break;
        }
    }
    return rep->errors || rep->no_memory ? -1 : 0;
}

/* Helios' cluster_gpu_number.csv: "date,vc...,total", the GPUs of each VC
 * per day. The cluster is the largest daily total, in nodes of 8 GPUs (every
 * Helios node has 8; every value in the published files is a multiple of 8). */
static int machines_is_vc_table(const struct gpufmt_row *header)
{
    return header->n >= 2 && gpufmt_find(header, "date") == 0 &&
           gpufmt_find(header, "total") == (int)header->n - 1;
}

static int machines_read_vc_table(struct textfile_report *rep, const char *data, size_t len, struct machine_list *m)
{
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    const char *line;
    size_t n, n_cols = 0;
    int64_t largest = 0;
    while (!rep->stopped && textfile_lines_next(&it, &line, &n)) {
        if (n == 0 || (n == 1 && line[0] == '\r'))
            continue;
        struct gpufmt_row row;
        gpufmt_split(line, n, &row);
        if (it.line == 1) {
            n_cols = row.n;
            continue;
        }
        if (row.n != n_cols || row.n > GPUFMT_MAX_FIELDS) {
            textfile_error(rep, it.line, 1, "%zu fields, expected %zu as in the header", row.n, n_cols);
            continue;
        }
        int64_t total;
        size_t k = row.n - 1;
        if (gpufmt_int(row.p[k], row.len[k], &total) != 0 || total < 0 || total > (int64_t)CLUSTER_MAX_NODES * 8) {
            char q[TEXTFILE_QUOTE_CAP];
            textfile_quote(q, sizeof q, row.p[k], row.len[k]);
            textfile_error(rep, it.line, gpufmt_col(&row, k), "total '%s' is not a whole number of GPUs", q);
            continue;
        }
        if (total > largest)
            largest = total;
    }
    if (rep->errors || rep->no_memory)
        return -1;
    int32_t model = string_table_intern(&m->models, "(8-GPU nodes, the largest daily total)");
    for (int64_t i = 0; i < (largest + 7) / 8; i++)
        if (model < 0 || machines_push(m, 8, model) != 0) {
            textfile_out_of_memory(rep, it.line);
            return -1;
        }
    return 0;
}

int machines_read_buffer(const char *name, const char *data, size_t len, struct machine_list *m,
                         struct diag_list *diags, struct err *err)
{
    struct textfile_report rep = {name, diags, err, 0, GPUFMT_MAX_ERRORS, 0, 0};
    struct textfile_lines it;
    textfile_lines_init(&it, data, len);
    const char *line;
    size_t n, n_cols = 0;
    int col_name = -1, col_gpus = -1, col_model = -1, have_header = 0;
    while (!rep.stopped && textfile_lines_next(&it, &line, &n)) {
        if (n == 0 || (n == 1 && line[0] == '\r'))
            continue;
        struct gpufmt_row row;
        gpufmt_split(line, n, &row);
        if (!have_header) {
            have_header = 1;
            n_cols = row.n;
            if (machines_is_vc_table(&row)) {
                if (machines_read_vc_table(&rep, data, len, m) != 0)
                    return -1;
                break;
            }
            if (machines_layout_of(&row, &col_name, &col_gpus, &col_model) < 0 && machines_is_alea(line, n)) {
                m->cpu_slots = 1;
                if (machines_read_alea(&rep, data, len, m) != 0)
                    return -1;
                break;
            }
            if (machines_layout_of(&row, &col_name, &col_gpus, &col_model) < 0) {
                char q[TEXTFILE_QUOTE_CAP];
                textfile_quote(q, sizeof q, line, n);
                textfile_error(&rep, it.line, 1,
                               "unrecognised machine list header '%s' (openb node list, Philly machine list, PAI "
                               "machine spec or Alea .machines expected)",
                               q);
                break;
            }
            continue;
        }
        if (row.n != n_cols) {
            textfile_error(&rep, it.line, 1, "%zu fields, expected %zu as in the header", row.n, n_cols);
            continue;
        }
        int64_t gpus;
        if (gpufmt_int(row.p[col_gpus], row.len[col_gpus], &gpus) != 0 || gpus < 0 || gpus > CLUSTER_MAX_NODE_SLOTS) {
            char q[TEXTFILE_QUOTE_CAP];
            textfile_quote(q, sizeof q, row.p[col_gpus], row.len[col_gpus]);
            textfile_error(&rep, it.line, gpufmt_col(&row, (size_t)col_gpus),
                           "GPU count '%s' is not a whole number from 0 to %d", q, CLUSTER_MAX_NODE_SLOTS);
            continue;
        }
        if (gpus == 0) {
            m->cpu_only++;
            continue;
        }
        int32_t model = -1;
        if (col_model >= 0 && !gpufmt_empty(row.p[col_model], row.len[col_model])) {
            char buf[64];
            const char *p = row.p[col_model];
            size_t k = row.len[col_model];
            while (k && *p == ' ') {
                p++;
                k--;
            }
            if (k > sizeof buf - 1)
                k = sizeof buf - 1;
            memcpy(buf, p, k);
            buf[k] = '\0';
            if ((model = string_table_intern(&m->models, buf)) < 0) {
                textfile_out_of_memory(&rep, it.line);
                break;
            }
        }
        if (machines_push(m, (int32_t)gpus, model) != 0) {
            textfile_out_of_memory(&rep, it.line);
            break;
        }
    }
    if (rep.errors || rep.no_memory)
        return -1;
    if (!have_header)
        return err_set(err, name, 0, 0, "no header line in '%s'", name);
    if (m->n == 0) {
        diag_add(diags, DIAG_ERROR, name, 0, 0, "no machine with GPUs in '%s'", name);
        return err_set(err, name, 0, 0, "no machine with GPUs in '%s'", name);
    }
    return 0;
}

int machines_read(const char *path, struct machine_list *m, struct diag_list *diags, struct err *err)
{
    char *data;
    size_t len;
    if (textfile_load(path, &data, &len, diags, err) != 0)
        return -1;
    int rc = machines_read_buffer(path, data, len, m, diags, err);
    free(data);
    return rc;
}

int machines_build_cluster(const struct machine_list *m, struct cluster *c, struct err *err)
{
    memset(c, 0, sizeof *c);
    if (m->n < 1 || m->n > CLUSTER_MAX_NODES)
        return err_set(err, NULL, 0, 0, "machine list of %zu GPU machines out of range (1 to %d)", m->n,
                       CLUSTER_MAX_NODES);
    c->nodes = malloc(m->n * sizeof *c->nodes);
    if (!c->nodes)
        return err_set(err, NULL, 0, 0, "out of memory for %zu nodes", m->n);
    for (size_t i = 0; i < m->n; i++) {
        /* a node's type is its model, so GPU-model constraints find it;
         * nodes of unknown model get a type without a name */
        int32_t type = m->model[i] >= 0 ? m->model[i] : (int32_t)m->models.n;
        c->nodes[i] = (struct cluster_node){type, m->gpus[i], (int32_t)i, -1, -1, -1};
        c->total_slots += m->gpus[i];
        if (m->gpus[i] > c->max_node_slots)
            c->max_node_slots = m->gpus[i];
    }
    c->n_nodes = (uint32_t)m->n;
    for (size_t t = 0; t < m->models.n; t++)
        if (string_table_intern(&c->type_names, m->models.items[t]) < 0) {
            cluster_release(c);
            return err_set(err, NULL, 0, 0, "out of memory for the machine list's GPU models");
        }
    return 0;
}

void machines_describe(const struct machine_list *m, char *buf, size_t cap)
{
    /* groups of (model, gpus), counted; small lists, so quadratic is fine */
    size_t groups = 0, o = 0;
    int32_t gm[32], gg[32];
    size_t gn[32];
    for (size_t i = 0; i < m->n; i++) {
        size_t k = 0;
        while (k < groups && !(gm[k] == m->model[i] && gg[k] == m->gpus[i]))
            k++;
        if (k == groups) {
            if (groups == 32)
                continue;
            gm[k] = m->model[i];
            gg[k] = m->gpus[i];
            gn[k] = 0;
            groups++;
        }
        gn[k]++;
    }
    buf[0] = '\0';
    for (size_t shown = 0; shown < groups && shown < 6 && o + 1 < cap; shown++) {
        size_t best = 0;
        for (size_t k = 1; k < groups; k++)
            if (gn[k] > gn[best])
                best = k;
        if (gn[best] == 0)
            break;
        const char *model = string_table_get(&m->models, gm[best]);
        int w = snprintf(buf + o, cap - o, "%s%zu x %d%s%s", shown ? ", " : "", gn[best], gg[best],
                         model ? " " : "", model ? model : "");
        if (w < 0 || (size_t)w >= cap - o)
            break;
        o += (size_t)w;
        gn[best] = 0;
    }
    if (groups > 6 && o + 8 < cap)
        snprintf(buf + o, cap - o, ", ...");
}

/* Alea's companion of an SWF log: X.swf or X.swf.gz -> X.swf.machines. */
static int machines_swf_sibling(const char *trace_path, char *buf, size_t cap)
{
    size_t n = strlen(trace_path);
    if (n > 3 && strcmp(trace_path + n - 3, ".gz") == 0)
        n -= 3;
    if (n < 4 || strncmp(trace_path + n - 4, ".swf", 4) != 0 || n + sizeof ".machines" > cap)
        return -1;
    memcpy(buf, trace_path, n);
    strcpy(buf + n, ".machines");
    return access(buf, R_OK) == 0 ? 0 : -1;
}

int machines_sibling(const char *trace_path, char *buf, size_t cap)
{
    const char *base = strrchr(trace_path, '/');
    base = base ? base + 1 : trace_path;
    const char *hit = strstr(base, "pod_list_");
    if (!hit)
        return machines_swf_sibling(trace_path, buf, cap);
    const char *rest = strstr(hit, ".csv");
    if (!rest)
        return -1;
    static const char repl[] = "node_list_gpu_node";
    size_t pre = (size_t)(hit - trace_path);
    if (pre + sizeof repl + strlen(rest) > cap)
        return -1;
    memcpy(buf, trace_path, pre);
    memcpy(buf + pre, repl, sizeof repl - 1);
    strcpy(buf + pre + sizeof repl - 1, rest);
    return access(buf, R_OK) == 0 ? 0 : -1;
}
