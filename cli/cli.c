#include "cli/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_doc.h"
#include "sim/atomic_file.h"

void cli_print_diags(const struct diag_list *d, size_t max_warnings, int quiet)
{
    size_t shown = 0, hidden = d->dropped;
    char line[ERR_MSG_MAX + ERR_FILE_MAX + 64];
    for (size_t i = 0; i < d->n; i++) {
        const struct diag *g = &d->items[i];
        if (g->level == DIAG_WARNING && (quiet || shown >= max_warnings)) {
            hidden++;
            continue;
        }
        if (g->level == DIAG_WARNING)
            shown++;
        diag_format(g, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    if (hidden && !quiet)
        fprintf(stderr, "fleetsim: %zu more warnings not shown\n", hidden);
}

void cli_print_err(const struct err *e)
{
    char line[ERR_MSG_MAX + ERR_FILE_MAX + 64];
    if (e->file[0]) {
        err_format(e, line, sizeof line);
        fprintf(stderr, "%s\n", line);
    } else {
        fprintf(stderr, "fleetsim: error: %s\n", e->msg);
    }
}

int cli_status_for(const struct err *e, int status)
{
    return strstr(e->msg, "out of memory") ? CLI_INTERNAL : status;
}

int cli_fail(const struct err *e, int status)
{
    cli_print_err(e);
    return cli_status_for(e, status);
}

int cli_print_json(json_t *root, size_t flags)
{
    struct err err;
    err_clear(&err);
    int rc = json_doc_write(stdout, root, flags, "stdout", &err);
    json_decref(root);
    return rc == 0 ? CLI_OK : cli_fail(&err, CLI_IO);
}

static void vreport(const char *level, const char *fmt, va_list ap)
{
    fprintf(stderr, "fleetsim: %s: ", level);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
}

void cli_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("warning", fmt, ap);
    va_end(ap);
}

int cli_check_output(const char *output, const char *input, const char *other_input)
{
    struct err err;
    err_clear(&err);
    if (atomic_file_check_input(output, input, &err) != 0 || atomic_file_check_input(output, other_input, &err) != 0) {
        return cli_fail(&err, CLI_USAGE);
    }
    if (strcmp(output, "-") != 0 && atomic_file_probe(output, &err) != 0) {
        return cli_fail(&err, CLI_IO);
    }
    return CLI_OK;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vreport("error", fmt, ap);
    va_end(ap);
    fprintf(stderr, "try 'fleetsim %s --help'\n", cmd);
    return CLI_USAGE;
}

int cli_parse_int(const char *option, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end) {
        cli_error("option '%s' needs an integer, not '%s'", option, text);
        return -1;
    }
    if (v < lo || v > hi) {
        cli_error("option '%s' is %lld, expected %lld to %lld", option, v, (long long)lo, (long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_seconds(const char *option, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v > 0) || v > 86400) {
        cli_error("option '%s' needs seconds, more than 0 and at most 86400, not '%s'", option, text);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_read_machines(const char *path, int quiet, struct machine_list *m)
{
    struct diag_list diags;
    struct err err;
    machines_init(m);
    diag_list_init(&diags, 100);
    err_clear(&err);
    return cli_finish_load(machines_read(path, m, &diags, &err), &diags, &err, quiet);
}

int cli_load_scenario(const char *path, struct scenario *s, int quiet)
{
    struct diag_list diags;
    struct err err;
    diag_list_init(&diags, 100);
    err_clear(&err);
    int rc = scenario_load(path, s, &diags, &err);
    return cli_finish_load(rc, &diags, &err, quiet);
}

int cli_policy_open(const char *spec, const char *params, double decide_timeout_s, struct policy_host *ph,
                    struct err *err)
{
    struct policy_host_options opt = {.extra_params = params, .host_name = "the simulator",
                                      .decide_timeout_s = decide_timeout_s};
    return policy_host_open(ph, spec, &opt, err);
}

int cli_open_policy(const char *spec, const char *params, double decide_timeout_s, struct policy_host *ph)
{
    struct err err;
    err_clear(&err);
    if (cli_policy_open(spec, params, decide_timeout_s, ph, &err) != 0) {
        /* a plugin that cannot be read is I/O; one that is wrong, bad input */
        return cli_fail(&err, strstr(err.msg, "cannot load policy plugin") ? CLI_IO : CLI_USAGE);
    }
    return CLI_OK;
}

int cli_parse_format(const char *cmd, const char *text, enum trace_format *fmt)
{
    if (trace_format_parse(text, fmt) != 0)
        return cli_usage_error(cmd, "unknown format '%s' (" TRACE_FORMAT_NAMES ")", text);
    return CLI_OK;
}

int cli_read_trace(const char *path, enum trace_format fmt, enum swf_convention conv, int quiet,
                   struct workload *w)
{
    struct diag_list diags;
    struct err err;
    diag_list_init(&diags, 1000);
    err_clear(&err);
    workload_init(w);
    int rc = trace_read(path, fmt, conv, w, &diags, &err);
    return cli_finish_load(rc, &diags, &err, quiet);
}

int cli_finish_load(int rc, struct diag_list *diags, const struct err *err, int quiet)
{
    cli_print_diags(diags, 20, quiet);
    size_t errors = diag_count(diags, DIAG_ERROR);
    diag_list_release(diags);
    if (rc == 0)
        return CLI_OK;
    if (!errors)
        cli_print_err(err);
    int status = strstr(err->msg, "cannot read") || strstr(err->msg, "cannot open") ? CLI_IO : CLI_USAGE;
    return cli_status_for(err, status);
}

/* The cluster from a machine list; *desc says where it came from. */
int cli_cluster_from_machines(const char *path, int quiet, struct cluster *c, char *desc, size_t len)
{
    struct machine_list m;
    struct err err;
    err_clear(&err);
    int rc = cli_read_machines(path, quiet, &m);
    if (rc == CLI_OK) {
        if (machines_build_cluster(&m, c, &err) != 0) {
            rc = cli_fail(&err, CLI_USAGE);
        } else {
            char groups[200];
            machines_describe(&m, groups, sizeof groups);
            snprintf(desc, len, "%zu nodes, %lld %s (%.120s: %.150s; %zu machines without any left out)", m.n,
                     (long long)m.total_gpus, m.cpu_slots ? "slots" : "GPUs", path, groups, m.cpu_only);
        }
    }
    machines_release(&m);
    return rc;
}
