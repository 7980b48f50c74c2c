#include "agent/config.h"
#include "sim/suggest.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const default_env_allow[] = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_*", "TZ", "TERM", "TMPDIR",
    "PYTHONPATH", "VIRTUAL_ENV", "CONDA_*", "HF_*", "TORCH_*", "NCCL_*", "OMP_NUM_THREADS",
};
/* XIDs after which NVIDIA's XID catalogue says the GPU needs a reset or is
 * unusable: double-bit ECC (48), internal micro-controller halt (62), row
 * remap failure (64), NVLink error (74), fallen off the bus (79),
 * uncontained ECC (95), GSP errors (119, 120). */
static const int default_xids[] = {48, 62, 64, 74, 79, 95, 119, 120};

static int set_env_allow(struct agent_config *c, const char *const *items, size_t n)
{
    for (size_t i = 0; i < c->n_env_allow; i++)
        free(c->env_allow[i]);
    free(c->env_allow);
    c->env_allow = NULL;
    c->n_env_allow = 0;
    if (!n)
        return 0;
    c->env_allow = calloc(n, sizeof *c->env_allow);
    if (!c->env_allow)
        return -1;
    for (size_t i = 0; i < n; i++) {
        c->env_allow[i] = strdup(items[i]);
        if (!c->env_allow[i])
            return -1;
        c->n_env_allow++;
    }
    return 0;
}

int config_init(struct agent_config *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->socket_path, sizeof c->socket_path, "/run/fleetsim-agent/agent.sock");
    c->socket_mode = 0666;
    snprintf(c->state_dir, sizeof c->state_dir, "/var/lib/fleetsim-agent");
    snprintf(c->inventory, sizeof c->inventory, "nvml");
    snprintf(c->policy, sizeof c->policy, "fcfs+easy");
    c->kill_grace_us = 10 * 1000000LL;
    c->decide_timeout_us = 10 * 1000000LL;
    c->default_time_us = 3600 * 1000000LL;
    c->max_time_us = 7 * 86400 * 1000000LL;
    c->max_queued = 100000;
    c->health_interval_us = 10 * 1000000LL;
    c->drain_on_ecc = 1;
    c->log_level = LOGL_INFO;
    c->require_cgroup = 1;
    c->max_conns_per_uid = 32;
    c->max_requests_per_uid = 50;
    c->conn_idle_timeout_us = 10 * 1000000LL;
    memcpy(c->xid_drain, default_xids, sizeof default_xids);
    c->n_xid_drain = sizeof default_xids / sizeof *default_xids;
    return set_env_allow(c, default_env_allow, sizeof default_env_allow / sizeof *default_env_allow);
}

void config_release(struct agent_config *c)
{
    if (!c)
        return;
    set_env_allow(c, NULL, 0);
}

int config_parse_duration(const char *text, int64_t *us)
{
    if (!text || !*text)
        return -1;
    if (strchr(text, ':')) {
        /* [D-]HH:MM:SS or MM:SS, as Slurm writes limits */
        long d = 0, h = 0, m = 0, s = 0;
        const char *p = text;
        char *end;
        const char *dash = strchr(text, '-');
        if (dash) {
            errno = 0;
            d = strtol(p, &end, 10);
            if (end != dash || d < 0 || errno)
                return -1;
            p = dash + 1;
        }
        long parts[3];
        int n = 0;
        while (n < 3) {
            if (!isdigit((unsigned char)*p))
                return -1;
            errno = 0;
            parts[n++] = strtol(p, &end, 10);
            if (errno || parts[n - 1] < 0 || parts[n - 1] > 1000000)
                return -1;
            p = end;
            if (*p == ':')
                p++;
            else
                break;
        }
        if (*p || n < 2)
            return -1;
        if (n == 3) {
            h = parts[0];
            m = parts[1];
            s = parts[2];
        } else {
            m = parts[0];
            s = parts[1];
        }
        if (m > 59 && (n == 3 || dash))
            return -1;
        if (s > 59)
            return -1;
        int64_t total = (((int64_t)d * 24 + h) * 60 + m) * 60 + s;
        if (total <= 0 || total > 1000000000LL)
            return -1;
        *us = total * 1000000LL;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || !isfinite(v) || v <= 0)
        return -1;
    double mult;
    if (strcmp(end, "s") == 0 || strcmp(end, "sec") == 0)
        mult = 1;
    else if (strcmp(end, "m") == 0 || strcmp(end, "min") == 0)
        mult = 60;
    else if (strcmp(end, "h") == 0)
        mult = 3600;
    else if (strcmp(end, "d") == 0)
        mult = 86400;
    else if (strcmp(end, "ms") == 0)
        mult = 0.001;
    else
        return -1;
    double total = v * mult * 1e6;
    if (total < 1 || total > 1e15)
        return -1;
    *us = (int64_t)llround(total);
    return 0;
}

int config_env_allowed(const struct agent_config *c, const char *name)
{
    for (size_t i = 0; i < c->n_env_allow; i++) {
        const char *p = c->env_allow[i];
        size_t n = strlen(p);
        if (n && p[n - 1] == '*') {
            if (strncmp(name, p, n - 1) == 0)
                return 1;
        } else if (strcmp(name, p) == 0) {
            return 1;
        }
    }
    return 0;
}

int config_xid_drains(const struct agent_config *c, int xid)
{
    for (size_t i = 0; i < c->n_xid_drain; i++)
        if (c->xid_drain[i] == xid)
            return 1;
    return 0;
}

enum key_type { K_STRING, K_PATH, K_SOCKET, K_MODE, K_BOOL, K_DURATION, K_COUNT, K_ENV, K_XIDS, K_LEVEL,
                K_LISTEN };

struct key_spec {
    const char *name;
    enum key_type type;
    size_t offset;
    size_t size; /* for strings */
};

#define STR(field, type) {#field, type, offsetof(struct agent_config, field), sizeof(((struct agent_config *)0)->field)}
static const struct key_spec keys[] = {
    {"socket", K_SOCKET, offsetof(struct agent_config, socket_path), CONFIG_PATH_MAX},
    {"socket_mode", K_MODE, offsetof(struct agent_config, socket_mode), 0},
    STR(state_dir, K_PATH),
    {"inventory", K_STRING, offsetof(struct agent_config, inventory), CONFIG_PATH_MAX},
    {"policy", K_STRING, offsetof(struct agent_config, policy), CONFIG_PATH_MAX},
    STR(trace, K_PATH),
    STR(admin_group, K_STRING),
    STR(http_listen, K_LISTEN),
    STR(http_token_file, K_PATH),
    {"http_allow_remote", K_BOOL, offsetof(struct agent_config, http_allow_remote), 0},
    STR(node_name, K_STRING),
    {"kill_grace", K_DURATION, offsetof(struct agent_config, kill_grace_us), 0},
    {"decide_timeout", K_DURATION, offsetof(struct agent_config, decide_timeout_us), 0},
    {"default_time", K_DURATION, offsetof(struct agent_config, default_time_us), 0},
    {"max_time", K_DURATION, offsetof(struct agent_config, max_time_us), 0},
    {"max_queued", K_COUNT, offsetof(struct agent_config, max_queued), 0},
    {"health_interval", K_DURATION, offsetof(struct agent_config, health_interval_us), 0},
    {"env_allow", K_ENV, 0, 0},
    {"drain_on_xid", K_XIDS, 0, 0},
    {"drain_on_uncorrectable_ecc", K_BOOL, offsetof(struct agent_config, drain_on_ecc), 0},
    {"log_level", K_LEVEL, 0, 0},
    {"require_cgroup", K_BOOL, offsetof(struct agent_config, require_cgroup), 0},
    {"max_conns_per_uid", K_COUNT, offsetof(struct agent_config, max_conns_per_uid), 0},
    {"max_requests_per_uid", K_COUNT, offsetof(struct agent_config, max_requests_per_uid), 0},
    {"conn_idle_timeout", K_DURATION, offsetof(struct agent_config, conn_idle_timeout_us), 0},
};
#undef STR

static const struct key_spec *find_key(const char *name)
{
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

static const char *nearest_key(const char *name)
{
    const char *best = NULL;
    size_t best_d = 4;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        size_t d = suggest_distance(name, keys[i].name);
        if (d < best_d) {
            best_d = d;
            best = keys[i].name;
        }
    }
    return best;
}

static int split_list(char *value, char **items, size_t max, size_t *n)
{
    *n = 0;
    for (char *tok = strtok(value, " \t,"); tok; tok = strtok(NULL, " \t,")) {
        if (*n == max)
            return -1;
        items[(*n)++] = tok;
    }
    return 0;
}

/* Applies one key; returns NULL or an error message (static or in msg). */
static const char *apply(struct agent_config *c, const struct key_spec *k, char *value, char *msg, size_t len)
{
    char *field = (char *)c + k->offset;
    switch (k->type) {
    case K_STRING:
    case K_PATH:
    case K_SOCKET:
    case K_LISTEN:
        if (strlen(value) >= k->size)
            return "value too long";
        if (k->type == K_PATH && *value && *value != '/')
            return "expected an absolute path";
        if (k->type == K_SOCKET) {
            if (*value != '/')
                return "expected an absolute path";
            if (strlen(value) > CONFIG_SOCKET_MAX)
                return "socket path longer than 107 bytes";
        }
        if (k->type == K_LISTEN && *value) {
            const char *colon = strrchr(value, ':');
            char *end;
            long port = colon ? strtol(colon + 1, &end, 10) : -1;
            if (!colon || colon == value || *end || port < 1 || port > 65535)
                return "expected HOST:PORT, e.g. 127.0.0.1:9401";
        }
        snprintf(field, k->size, "%s", value);
        return NULL;
    case K_MODE: {
        char *end;
        long m = strtol(value, &end, 8);
        if (!*value || *end || m < 0 || m > 0777)
            return "expected an octal mode such as 0660";
        *(int *)field = (int)m;
        return NULL;
    }
    case K_BOOL:
        if (strcmp(value, "true") == 0 || strcmp(value, "yes") == 0 || strcmp(value, "1") == 0)
            *(int *)field = 1;
        else if (strcmp(value, "false") == 0 || strcmp(value, "no") == 0 || strcmp(value, "0") == 0)
            *(int *)field = 0;
        else
            return "expected true or false";
        return NULL;
    case K_DURATION: {
        int64_t us;
        if (config_parse_duration(value, &us) != 0)
            return "expected a duration such as 10s, 5m, 1h or 1:00:00";
        *(int64_t *)field = us;
        return NULL;
    }
    case K_COUNT: {
        char *end;
        errno = 0;
        long long v = strtoll(value, &end, 10);
        if (!*value || *end || errno || v < 1 || v > 100000000)
            return "expected an integer from 1 to 100000000";
        *(int64_t *)field = v;
        return NULL;
    }
    case K_ENV: {
        char *items[256];
        size_t n;
        if (split_list(value, items, 256, &n) != 0)
            return "more than 256 patterns";
        for (size_t i = 0; i < n; i++) {
            for (const char *p = items[i]; *p; p++)
                if (!(isalnum((unsigned char)*p) || *p == '_' || (*p == '*' && p[1] == '\0'))) {
                    snprintf(msg, len, "'%s' is not a variable name (letters, digits, '_', a trailing '*')",
                             items[i]);
                    return msg;
                }
        }
        if (set_env_allow(c, (const char *const *)items, n) != 0)
            return "out of memory";
        return NULL;
    }
    case K_XIDS: {
        char *items[CONFIG_MAX_XIDS];
        size_t n;
        if (split_list(value, items, CONFIG_MAX_XIDS, &n) != 0)
            return "more than 64 XIDs";
        int xids[CONFIG_MAX_XIDS];
        for (size_t i = 0; i < n; i++) {
            char *end;
            long v = strtol(items[i], &end, 10);
            if (*end || v < 1 || v > 100000) {
                snprintf(msg, len, "'%s' is not an XID number", items[i]);
                return msg;
            }
            xids[i] = (int)v;
        }
        memcpy(c->xid_drain, xids, n * sizeof *xids);
        c->n_xid_drain = n;
        return NULL;
    }
    case K_LEVEL:
        if (log_parse_level(value, &c->log_level) != 0)
            return "expected debug, info, warn or error";
        return NULL;
    }
    return "internal: unhandled key type";
}

int config_parse(struct agent_config *c, const char *name, const char *text, struct diag_list *diags,
                 struct err *err)
{
    unsigned char seen[sizeof keys / sizeof *keys] = {0};
    int errors = 0;
    long lineno = 0;
    const char *p = text;
    /* A UTF-8 byte order mark, as some Windows editors write: it says the
     * file is UTF-8 (which it must be anyway), so it is skipped, and
     * columns on line 1 count from after it, as editors show them. */
    if (strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    char line[8192];
    while (*p) {
        lineno++;
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        const char *next = eol ? eol + 1 : p + n;
        if (n >= sizeof line) {
            diag_add(diags, DIAG_ERROR, name, lineno, 1, "line longer than %zu bytes", sizeof line - 1);
            err_set(err, name, lineno, 1, "line longer than %zu bytes", sizeof line - 1);
            errors++;
            p = next;
            continue;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        p = next;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        long key_col = (long)(s - line) + 1;
        char *eq = strchr(s, '=');
        if (!eq) {
            diag_add(diags, DIAG_ERROR, name, lineno, key_col, "expected 'key = value'");
            err_set(err, name, lineno, key_col, "expected 'key = value'");
            errors++;
            continue;
        }
        char *kend = eq;
        while (kend > s && (kend[-1] == ' ' || kend[-1] == '\t'))
            kend--;
        *kend = '\0';
        char *v = eq + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        /* strip a trailing comment only when preceded by a blank */
        for (char *h = v; *h; h++)
            if (*h == '#' && h > v && (h[-1] == ' ' || h[-1] == '\t')) {
                *h = '\0';
                break;
            }
        size_t vl = strlen(v);
        while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
            v[--vl] = '\0';
        if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
            v[vl - 1] = '\0';
            v++;
        }
        long val_col = (long)(v - line) + 1;
        const struct key_spec *k = find_key(s);
        if (!k) {
            const char *near = nearest_key(s);
            if (near) {
                diag_add(diags, DIAG_ERROR, name, lineno, key_col, "unknown key '%s'; did you mean '%s'?", s, near);
                err_set(err, name, lineno, key_col, "unknown key '%s'; did you mean '%s'?", s, near);
            } else {
                diag_add(diags, DIAG_ERROR, name, lineno, key_col, "unknown key '%s'", s);
                err_set(err, name, lineno, key_col, "unknown key '%s'", s);
            }
            errors++;
            continue;
        }
        size_t ki = (size_t)(k - keys);
        if (seen[ki]) {
            diag_add(diags, DIAG_ERROR, name, lineno, key_col, "key '%s' given twice", s);
            err_set(err, name, lineno, key_col, "key '%s' given twice", s);
            errors++;
            continue;
        }
        seen[ki] = 1;
        char msg[256];
        const char *problem = apply(c, k, v, msg, sizeof msg);
        if (problem) {
            diag_add(diags, DIAG_ERROR, name, lineno, val_col, "key '%s': %s, not '%s'", k->name, problem, v);
            err_set(err, name, lineno, val_col, "key '%s': %s, not '%s'", k->name, problem, v);
            errors++;
        }
    }
    if (!errors && c->max_time_us < c->default_time_us) {
        diag_add(diags, DIAG_ERROR, name, 0, 0, "'max_time' is shorter than 'default_time'");
        err_set(err, name, 0, 0, "'max_time' is shorter than 'default_time'");
        errors++;
    }
    return errors ? -1 : 0;
}

int config_load(struct agent_config *c, const char *path, struct diag_list *diags, struct err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(err, NULL, 0, 0, "cannot read config '%s': %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + got + 1 > cap) {
            cap = (len + got + 1) * 2;
            char *t = realloc(text, cap);
            if (!t) {
                free(text);
                fclose(f);
                return err_set(err, NULL, 0, 0, "out of memory reading '%s'", path);
            }
            text = t;
        }
        memcpy(text + len, chunk, got);
        len += got;
        if (len > 1 << 20) {
            free(text);
            fclose(f);
            return err_set(err, path, 0, 0, "config file larger than 1 MiB");
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        return err_set(err, NULL, 0, 0, "cannot read config '%s'", path);
    }
    if (!text)
        return 0;
    text[len] = '\0';
    if (memchr(text, '\0', len)) {
        free(text);
        return err_set(err, path, 0, 0, "config file contains a NUL byte");
    }
    int rc = config_parse(c, path, text, diags, err);
    free(text);
    return rc;
}
