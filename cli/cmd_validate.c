/* fleetsim validate FILE: check a scenario against the schema and summarize
 * it; fleetsim help scenario: the schema reference. */
#include <getopt.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "report/json_doc.h"
#include "scenarios/reader.h"
#include "scenarios/scenario.h"
#include "scenarios/schema.h"
#include "sim/units.h"
#include "traces/synth.h"

static const char validate_usage[] =
    "usage: fleetsim validate [options] FILE\n"
    "\n"
    "Checks the scenario FILE against the schema: unknown keys (with the nearest valid\n"
    "one), types, units, ranges and the rules between keys. Every problem is listed as\n"
    "FILE:LINE:COL: error: ... On success prints a summary: partitions, GPUs by type,\n"
    "fabric, failure categories and expected failures per day, orders and retirements.\n"
    "\n"
    "options:\n"
    "      --json       print the summary (or the errors) as JSON on stdout\n"
    "  -h, --help       this help\n"
    "\n"
    "'fleetsim help scenario' lists every key with its type, unit, range and default.\n"
    "exit codes: 0 valid, 2 usage or invalid scenario, 3 cannot read FILE\n";

int cmd_help_scenario(void)
{
    schema_write_help(stdout);
    return CLI_OK;
}

/* ---- text summary ---- */

static void describe_distribution(char *buf, size_t len, const struct distribution *d)
{
    char a[32], b[32];
    units_format_duration(a, sizeof a, d->a);
    units_format_duration(b, sizeof b, d->b);
    switch (d->kind) {
    case DIST_FIXED:
        snprintf(buf, len, "%s", a);
        break;
    case DIST_UNIFORM:
        snprintf(buf, len, "uniform %s to %s", a, b);
        break;
    case DIST_EXPONENTIAL:
        snprintf(buf, len, "exponential, mean %s", a);
        break;
    case DIST_WEIBULL:
        snprintf(buf, len, "weibull, shape %g, scale %s", d->a, b);
        break;
    case DIST_LOGNORMAL:
        snprintf(buf, len, "lognormal, median %s, sigma %g", a, d->b);
        break;
    }
}

/* "4w" from the start, and the date when there is a start date. */
static void describe_time(char *buf, size_t len, const struct scenario *s, sim_time us)
{
    char off[32];
    units_format_duration(off, sizeof off, (double)us / 1e6);
    if (!s->start_unix_s) {
        snprintf(buf, len, "%s after the start", off);
        return;
    }
    char date[16];
    units_format_date(date, sizeof date, s->start_unix_s + us / SIM_US_PER_S);
    snprintf(buf, len, "%s (%s after the start)", date, off);
}

static void print_inventory(const struct scenario *s)
{
    printf("partitions   %zu\n", s->n_partitions);
    for (size_t i = 0; i < s->n_partitions; i++) {
        const struct partition_spec *p = &s->partitions[i];
        const struct node_type *t = &s->catalog.types[p->type];
        printf("  %-16s %-14s %6lld nodes %8lld GPUs\n", p->name, t->name, (long long)p->nodes,
               (long long)(p->nodes * t->gpus));
    }
    printf("gpus         %lld", (long long)scenario_initial_gpus(s));
    const char *sep = " (";
    for (size_t t = 0; t < s->catalog.n; t++) {
        int64_t g = 0;
        for (size_t i = 0; i < s->n_partitions; i++)
            if ((size_t)s->partitions[i].type == t)
                g += s->partitions[i].nodes * s->catalog.types[t].gpus;
        if (g) {
            printf("%s%s %lld", sep, s->catalog.types[t].name, (long long)g);
            sep = ", ";
        }
    }
    printf("%s\n", *sep == ',' ? ")" : "");
}

static void print_fabric(const struct fabric_spec *f)
{
    if (f->kind == FABRIC_NONE) {
        printf("fabric       none\n");
        return;
    }
    printf("fabric       %s: %d nodes per leaf, %d leaves per pod, oversubscription %g, %g Gbps per GPU\n",
           fabric_kind_name(f->kind), (int)f->nodes_per_leaf, (int)f->leaves_per_pod, f->oversubscription,
           f->link_gbps);
}

static void print_failures(const struct scenario *s)
{
    const struct failure_spec *f = &s->failures;
    if (!f->enabled) {
        printf("failures     none\n");
        return;
    }
    printf("failures     %zu categories, %s; %.2f expected per day on the initial inventory\n", f->n_categories,
           f->weibull_shape > 0 && f->weibull_shape != 1 ? "weibull" : "exponential",
           scenario_expected_failures_per_day(s));
    for (int k = 0; k < JOB_CLASS_COUNT; k++) {
        char iv[32], ov[32];
        units_format_duration(iv, sizeof iv, f->checkpoint[k].interval_s);
        units_format_duration(ov, sizeof ov, f->checkpoint[k].overhead_s);
        if (f->checkpoint[k].interval_s > 0)
            printf("  checkpoint %-10s every %s, %s each\n", job_class_name((enum job_class)k), iv, ov);
        else
            printf("  checkpoint %-10s never\n", job_class_name((enum job_class)k));
    }
}

static void print_procurement(const struct scenario *s)
{
    const struct procurement_spec *p = &s->procurement;
    printf("orders       %zu\n", p->n_orders);
    for (size_t i = 0; i < p->n_orders; i++) {
        const struct purchase_order *o = &p->orders[i];
        char when[128], lead[128], burn[32];
        describe_time(when, sizeof when, s, o->order_us);
        describe_distribution(lead, sizeof lead, &o->lead_time_s);
        units_format_duration(burn, sizeof burn, o->burn_in_s);
        printf("  %lld x %s at %s; lead time %s, burn-in %s\n", (long long)o->count, s->catalog.types[o->type].name,
               when, lead, burn);
    }
    printf("retirements  %zu\n", p->n_retirements);
    for (size_t i = 0; i < p->n_retirements; i++) {
        const struct retirement *r = &p->retirements[i];
        char when[128];
        describe_time(when, sizeof when, s, r->at_us);
        printf("  %lld x %s at %s\n", (long long)r->count, s->catalog.types[r->type].name, when);
    }
}

/* Only for scenarios with a workload, so summaries of hardware-only
 * scenarios read as before. */
static void print_workload(const struct scenario *s)
{
    const struct workload_spec *w = &s->workload;
    if (!s->has_workload)
        return;
    double per_hour = 0;
    for (size_t i = 0; i < w->n_teams; i++)
        per_hour += w->teams[i].jobs_per_hour;
    printf("workload     %zu teams, %g jobs/h at the start", w->n_teams, per_hour);
    if (w->base_trace)
        printf("; base trace %s (growth %g per quarter)", w->base_trace, w->base_growth_per_quarter);
    printf("\n");
    for (size_t i = 0; i < w->n_teams; i++) {
        const struct team_spec *t = &w->teams[i];
        double expect = synth_expected_jobs(t, 0, s->horizon.length_us, s->start_unix_s);
        printf("  %-16s %8g jobs/h, growth %g per quarter, %.0f jobs expected over the horizon\n", t->name,
               t->jobs_per_hour, t->growth_per_quarter, expect);
    }
    char len[32], smp[32];
    units_format_duration(len, sizeof len, (double)s->horizon.length_us / 1e6);
    units_format_duration(smp, sizeof smp, (double)s->horizon.sample_us / 1e6);
    static const char *const periods[] = {"week", "month", "quarter"};
    printf("horizon      %s by %s, sampled every %s; %u replications of %s\n", len, periods[s->horizon.period], smp,
           (unsigned)s->forecast.replications, s->forecast.policy);
    if (s->plan.n_slos) {
        printf("plan         ");
        for (size_t i = 0; i < s->plan.n_slos; i++)
            printf("%s%s", i ? " and " : "", s->plan.slos[i]);
        printf(" with confidence %g\n", s->plan.confidence);
    }
    for (size_t i = 0; i < s->plan.n_policies; i++)
        printf("%s%s\n", i ? "             or " : "  policies   or ", s->plan.policies[i]);
    if (s->plan.has_rent)
        printf("  rent       %s at $%g per GPU-hour\n", s->catalog.types[s->plan.rent_type].name,
               s->plan.rent_usd_per_gpu_hour);
}

static void print_summary(const struct scenario *s)
{
    char date[16] = "not set";
    if (s->start_unix_s)
        units_format_date(date, sizeof date, s->start_unix_s);
    printf("scenario     %s\n", s->path);
    printf("seed         %llu\n", (unsigned long long)s->seed);
    printf("start_date   %s\n", date);
    print_inventory(s);
    print_fabric(&s->fabric);
    printf("runtime      default class %s; comm fraction training %g, finetune %g, inference %g\n",
           job_class_name(s->default_class), s->comm_fraction[0], s->comm_fraction[1], s->comm_fraction[2]);
    print_failures(s);
    print_procurement(s);
    print_workload(s);
}

/* ---- JSON ---- */

/* Parameters named as the scenario names them; durations in seconds. */
static json_t *json_distribution(const struct distribution *d)
{
    int ok = 1;
    static const char *const names[][2] = {
        [DIST_FIXED] = {"value_s", NULL},         [DIST_UNIFORM] = {"lo_s", "hi_s"},
        [DIST_EXPONENTIAL] = {"mean_s", NULL},    [DIST_WEIBULL] = {"shape", "scale_s"},
        [DIST_LOGNORMAL] = {"median_s", "sigma"},
    };
    json_t *o = json_pack("{s:s, s:f}", "kind", distribution_kind_name(d->kind), names[d->kind][0], d->a);
    if (o && names[d->kind][1])
        json_put(o, names[d->kind][1], json_real(d->b), &ok);
    return json_doc_whole(o, ok);
}

static json_t *json_inventory(const struct scenario *s)
{
    int ok = 1;
    json_t *parts = json_array(), *by_type = json_object();
    for (size_t i = 0; i < s->n_partitions; i++) {
        const struct partition_spec *p = &s->partitions[i];
        const struct node_type *t = &s->catalog.types[p->type];
        json_push(parts,
                  json_pack("{s:s, s:s, s:I, s:I}", "name", p->name, "node_type", t->name, "nodes",
                            (json_int_t)p->nodes, "gpus", (json_int_t)(p->nodes * t->gpus)),
                  &ok);
        json_t *old = json_object_get(by_type, t->name);
        json_int_t g = (old ? json_integer_value(old) : 0) + p->nodes * t->gpus;
        json_put(by_type, t->name, json_integer(g), &ok);
    }
    json_t *doc = json_pack("{s:o, s:o, s:I}", "partitions", parts, "gpus_by_type", by_type, "gpus",
                            (json_int_t)scenario_initial_gpus(s));
    return json_doc_whole(doc, ok);
}

static json_t *json_procurement(const struct scenario *s)
{
    int ok = 1;
    json_t *orders = json_array(), *rets = json_array();
    const struct procurement_spec *p = &s->procurement;
    for (size_t i = 0; i < p->n_orders; i++) {
        const struct purchase_order *o = &p->orders[i];
        json_push(orders,
                  json_pack("{s:f, s:s, s:I, s:o, s:f}", "at_s", (double)o->order_us / 1e6, "node_type",
                            s->catalog.types[o->type].name, "count", (json_int_t)o->count, "lead_time",
                            json_distribution(&o->lead_time_s), "burn_in_s", o->burn_in_s),
                  &ok);
    }
    for (size_t i = 0; i < p->n_retirements; i++) {
        const struct retirement *r = &p->retirements[i];
        json_push(rets,
                  json_pack("{s:f, s:s, s:I}", "at_s", (double)r->at_us / 1e6, "node_type",
                            s->catalog.types[r->type].name, "count", (json_int_t)r->count),
                  &ok);
    }
    json_t *doc = json_pack("{s:o, s:o}", "orders", orders, "retirements", rets);
    return json_doc_whole(doc, ok);
}

static int print_json(json_t *root)
{
    return cli_print_json(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
}

static int print_summary_json(const struct scenario *s)
{
    int ok = 1;
    const struct fabric_spec *f = &s->fabric;
    json_t *root =
        json_pack("{s:{s:s, s:s}, s:s, s:b, s:I, s:o, s:{s:s, s:i, s:i, s:f, s:f}, s:{s:b, s:I, s:f}, s:o}", "meta",
                  "tool", "fleetsim", "version", FLEETSIM_VERSION_STRING, "scenario", s->path, "valid", 1, "seed",
                  (json_int_t)s->seed, "inventory", json_inventory(s), "fabric", "kind", fabric_kind_name(f->kind),
                  "nodes_per_leaf", (int)f->nodes_per_leaf, "leaves_per_pod", (int)f->leaves_per_pod,
                  "oversubscription", f->oversubscription, "link_gbps", f->link_gbps, "failures", "enabled",
                  s->failures.enabled, "categories", (json_int_t)s->failures.n_categories, "expected_per_day",
                  scenario_expected_failures_per_day(s), "procurement", json_procurement(s));
    if (root && s->has_workload) {
        json_t *teams = json_array();
        for (size_t i = 0; i < s->workload.n_teams; i++) {
            const struct team_spec *t = &s->workload.teams[i];
            json_push(teams,
                      json_pack("{s:s, s:f, s:f, s:f}", "name", t->name, "jobs_per_hour", t->jobs_per_hour,
                                "growth_per_quarter", t->growth_per_quarter, "expected_jobs",
                                synth_expected_jobs(t, 0, s->horizon.length_us, s->start_unix_s)),
                      &ok);
        }
        json_put(root, "workload",
                 json_pack("{s:o, s:s?, s:f}", "teams", teams, "base_trace", s->workload.base_trace,
                           "base_growth_per_quarter", s->workload.base_growth_per_quarter),
                 &ok);
    }
    return print_json(json_doc_whole(root, ok));
}

static int print_errors_json(const char *path, const struct diag_list *d)
{
    int ok = 1;
    json_t *errors = json_array();
    for (size_t i = 0; i < d->n; i++) {
        const struct diag *g = &d->items[i];
        json_push(errors,
                  json_pack("{s:s, s:s?, s:i, s:i, s:s}", "level", g->level == DIAG_ERROR ? "error" : "warning", "file",
                            g->file, "line", (int)g->line, "col", (int)g->col, "message", g->msg),
                  &ok);
    }
    return print_json(
        json_doc_whole(json_pack("{s:s, s:b, s:o}", "scenario", path, "valid", 0, "diagnostics", errors), ok));
}

/* ---- the command ---- */

static int parse_validate_args(int argc, char **argv, int *json)
{
    enum { OPT_JSON = 256 };
    static const struct option options[] = {
        {"json", no_argument, NULL, OPT_JSON}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (c == OPT_JSON)
            *json = 1;
        else if (c == 'h') {
            fputs(validate_usage, stdout);
            exit(CLI_OK);
        } else
            return cli_usage_error("validate", "unknown option '%s'", argv[optind - 1]);
    }
    if (argc - optind != 1)
        return cli_usage_error("validate", argc - optind ? "validate takes one FILE" : "missing FILE");
    return CLI_OK;
}

int cmd_validate(int argc, char **argv)
{
    int json = 0;
    int rc = parse_validate_args(argc, argv, &json);
    if (rc != CLI_OK)
        return rc;
    const char *path = argv[optind];
    struct scenario s;
    struct diag_list diags;
    struct err err;
    scenario_init(&s);
    diag_list_init(&diags, READER_MAX_ERRORS + 10);
    err_clear(&err);
    int ok = scenario_load(path, &s, &diags, &err) == 0;
    cli_print_diags(&diags, 50, 0);
    if (ok)
        rc = json ? print_summary_json(&s) : (print_summary(&s), CLI_OK);
    else if (!diags.n)
        cli_print_err(&err);
    if (!ok) /* out of memory is no invalid scenario */
        rc = cli_status_for(&err, strstr(err.msg, "cannot read") && !diags.n ? CLI_IO : CLI_USAGE);
    if (!ok && json && rc == CLI_USAGE)
        print_errors_json(path, &diags);
    diag_list_release(&diags);
    scenario_release(&s);
    return rc;
}
