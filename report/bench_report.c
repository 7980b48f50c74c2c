#include "report/bench_report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/json_doc.h"
#include "report/summary.h"
#include "sim/atomic_file.h"
#include "sim/input_file.h"

const struct bench_metric bench_metrics[] = {
    {"wait_p50_s", "wait p50 (s)", 0, 1.0},
    {"wait_p95_s", "wait p95 (s)", 0, 1.0},
    {"bsld", "bounded slowdown", 0, 0.01},
    {"utilization", "utilization", 1, 0.001},
    {"fairness", "Jain fairness (teams)", 1, 0.001},
    {"preemptions", "preemptions", 0, 0.5},
};
const size_t bench_n_metrics = sizeof bench_metrics / sizeof *bench_metrics;

double bench_cell_metric(const struct bench_cell *c, size_t metric)
{
    switch (metric) {
    case 0:
        return c->wait_p50_s;
    case 1:
        return c->wait_p95_s;
    case 2:
        return c->bsld;
    case 3:
        return c->utilization;
    case 4:
        return c->fairness;
    case 5:
        return c->preemptions;
    }
    return 0;
}

static void set_metric(struct bench_cell *c, size_t metric, double v)
{
    switch (metric) {
    case 0:
        c->wait_p50_s = v;
        break;
    case 1:
        c->wait_p95_s = v;
        break;
    case 2:
        c->bsld = v;
        break;
    case 3:
        c->utilization = v;
        break;
    case 4:
        c->fairness = v;
        break;
    case 5:
        c->preemptions = v;
        break;
    }
}

double bench_jain_over_teams(const struct workload *w, const struct sim_result *r)
{
    int32_t max_team = -1;
    for (size_t i = 0; i < w->n; i++)
        if (w->jobs[i].team > max_team)
            max_team = w->jobs[i].team;
    if (max_team < 1)
        return 1.0;
    size_t nt = (size_t)max_team + 1;
    double *sum = calloc(nt, sizeof *sum);
    size_t *cnt = calloc(nt, sizeof *cnt);
    double jain = NAN; /* out of memory: no figure, not a perfect one */
    if (sum && cnt) {
        jain = 1.0;
        for (size_t i = 0; i < w->n; i++) {
            const struct sim_job_result *jr = &r->jobs[i];
            int32_t t = w->jobs[i].team;
            if (t < 0 || jr->start_us < 0 || jr->end_us < 0)
                continue;
            sum[t] += job_bounded_slowdown(jr->start_us - w->jobs[i].submit_us, jr->end_us - jr->start_us,
                                           10 * 1000000LL);
            cnt[t]++;
        }
        double s = 0, s2 = 0;
        size_t n = 0;
        for (size_t t = 0; t < nt; t++) {
            if (!cnt[t])
                continue;
            double x = (double)cnt[t] / sum[t]; /* 1 / mean bounded slowdown */
            s += x;
            s2 += x * x;
            n++;
        }
        if (n >= 2 && s2 > 0)
            jain = s * s / ((double)n * s2);
    }
    free(sum);
    free(cnt);
    return jain;
}

int bench_cell_measure(struct bench_cell *c, const struct workload *w, const struct sim_result *r, struct err *err)
{
    struct replay_summary s;
    if (summary_compute(w, r, &s, err) != 0)
        return -1;
    c->jobs = s.jobs_run;
    c->wait_p50_s = s.wait_p50_s;
    c->wait_p95_s = s.wait_p95_s;
    c->bsld = s.bsld_mean;
    c->utilization = s.utilization;
    c->fairness = bench_jain_over_teams(w, r);
    c->preemptions = (double)r->stats.preemptions;
    if (isnan(c->fairness))
        return err_set(err, NULL, 0, 0, "out of memory");
    return 0;
}

void bench_write_markdown(FILE *out, const struct bench_cell *cells, size_t n)
{
    fprintf(out, "| policy | workload | jobs |");
    for (size_t m = 0; m < bench_n_metrics; m++)
        fprintf(out, " %s |", bench_metrics[m].title);
    fprintf(out, "\n|---|---|---:|");
    for (size_t m = 0; m < bench_n_metrics; m++)
        fprintf(out, "---:|");
    fputc('\n', out);
    for (size_t i = 0; i < n; i++) {
        const struct bench_cell *c = &cells[i];
        fprintf(out, "| %s | %s |", c->policy, c->workload);
        if (c->status != BENCH_CELL_OK) {
            fprintf(out, " %s: %s |", c->status == BENCH_CELL_SKIPPED ? "skipped" : "failed", c->note);
            for (size_t m = 0; m < bench_n_metrics; m++)
                fprintf(out, " |");
            fputc('\n', out);
            continue;
        }
        fprintf(out, " %llu | %.1f | %.1f | %.2f | %.4f | %.4f | %.0f |\n", (unsigned long long)c->jobs,
                c->wait_p50_s, c->wait_p95_s, c->bsld, c->utilization, c->fairness, c->preemptions);
    }
}

static const char *status_name(int32_t s)
{
    return s == BENCH_CELL_OK ? "ok" : s == BENCH_CELL_SKIPPED ? "skipped" : "failed";
}

int bench_write_json(FILE *out, const char *suite, const struct bench_cell *cells, size_t n, struct err *err)
{
    int ok = 1;
    json_t *arr = json_array();
    for (size_t i = 0; i < n; i++) {
        const struct bench_cell *c = &cells[i];
        json_t *o = json_pack("{s:s, s:s, s:s}", "policy", c->policy, "workload", c->workload, "status",
                              status_name(c->status));
        if (c->status == BENCH_CELL_OK) {
            json_put(o, "jobs", json_integer((json_int_t)c->jobs), &ok);
            for (size_t m = 0; m < bench_n_metrics; m++)
                json_put(o, bench_metrics[m].key, json_real(bench_cell_metric(c, m)), &ok);
        } else {
            json_put(o, "note", json_string(c->note), &ok);
        }
        json_push(arr, o, &ok);
    }
    json_t *root = NULL;
    if (ok)
        root = json_pack("{s:{s:s, s:s, s:s}, s:o}", "meta", "tool", "fleetsim", "version", FLEETSIM_VERSION_STRING,
                         "suite", suite, "cells", arr);
    else
        json_decref(arr);
    int rc = json_doc_write(out, root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12), "the bench JSON",
                            err);
    json_decref(root);
    return rc;
}

int bench_read_json(const char *path, struct bench_cell **cells, size_t *n, struct err *err)
{
    *cells = NULL;
    *n = 0;
    /* read bounded, regular files and pipes only (sim/input_file.h) */
    char *data;
    size_t len;
    if (input_file_read(path, "baseline", input_file_small_max_bytes(), &data, &len, err) != 0)
        return -1;
    json_error_t je;
    json_t *root = json_loadb(data, len, 0, &je);
    free(data);
    if (!root) {
        if (je.line <= 0)
            return err_set(err, path, 0, 0, "cannot read baseline: %s", je.text);
        return err_set(err, path, je.line, je.column, "%s", je.text);
    }
    json_t *arr = json_object_get(root, "cells");
    if (!json_is_array(arr)) {
        json_decref(root);
        return err_set(err, path, 0, 0, "not a fleetsim bench JSON file: no 'cells' array");
    }
    size_t count = json_array_size(arr);
    struct bench_cell *out = calloc(count ? count : 1, sizeof *out);
    if (!out) {
        json_decref(root);
        return err_set(err, path, 0, 0, "out of memory");
    }
    for (size_t i = 0; i < count; i++) {
        json_t *o = json_array_get(arr, i);
        const char *policy = json_string_value(json_object_get(o, "policy"));
        const char *workload = json_string_value(json_object_get(o, "workload"));
        const char *status = json_string_value(json_object_get(o, "status"));
        if (!policy || !workload || !status) {
            free(out);
            json_decref(root);
            return err_set(err, path, 0, 0, "cell %zu lacks 'policy', 'workload' or 'status'", i + 1);
        }
        struct bench_cell *c = &out[i];
        snprintf(c->policy, sizeof c->policy, "%s", policy);
        snprintf(c->workload, sizeof c->workload, "%s", workload);
        c->status = !strcmp(status, "ok") ? BENCH_CELL_OK : !strcmp(status, "skipped") ? BENCH_CELL_SKIPPED
                                                                                         : BENCH_CELL_FAILED;
        if (c->status != BENCH_CELL_OK)
            continue;
        c->jobs = (uint64_t)json_integer_value(json_object_get(o, "jobs"));
        for (size_t m = 0; m < bench_n_metrics; m++) {
            json_t *v = json_object_get(o, bench_metrics[m].key);
            if (!json_is_number(v)) {
                free(out);
                json_decref(root);
                return err_set(err, path, 0, 0, "cell %zu ('%s' on '%s') lacks metric '%s'", i + 1, policy,
                               workload, bench_metrics[m].key);
            }
            set_metric(c, m, json_number_value(v));
        }
    }
    json_decref(root);
    *cells = out;
    *n = count;
    return 0;
}

int bench_compare(const struct bench_cell *base, size_t n_base, const struct bench_cell *cur, size_t n_cur,
                  double tolerance, struct bench_regression **regs, size_t *n_regs, size_t *missing)
{
    *regs = NULL;
    *n_regs = 0;
    *missing = 0;
    size_t cap = 0;
    for (size_t i = 0; i < n_cur; i++) {
        const struct bench_cell *c = &cur[i];
        if (c->status != BENCH_CELL_OK)
            continue;
        const struct bench_cell *b = NULL;
        for (size_t k = 0; k < n_base && !b; k++)
            if (!strcmp(base[k].policy, c->policy) && !strcmp(base[k].workload, c->workload))
                b = &base[k];
        if (!b || b->status != BENCH_CELL_OK) {
            (*missing)++;
            continue;
        }
        for (size_t m = 0; m < bench_n_metrics; m++) {
            double old = bench_cell_metric(b, m), now = bench_cell_metric(c, m);
            double worse = bench_metrics[m].higher_is_better ? old - now : now - old;
            if (!(worse > bench_metrics[m].floor && worse > tolerance * fabs(old)))
                continue;
            if (*n_regs == cap) {
                cap = cap ? cap * 2 : 8;
                struct bench_regression *r = realloc(*regs, cap * sizeof *r);
                if (!r)
                    return -1;
                *regs = r;
            }
            (*regs)[(*n_regs)++] = (struct bench_regression){i, m, old, now};
        }
    }
    return 0;
}

static void xml_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

int bench_write_junit(const char *path, const char *suite, const struct bench_cell *cells, size_t n,
                      const struct bench_regression *regs, size_t n_regs, struct err *err)
{
    struct atomic_file af;
    if (atomic_file_open(&af, path, err) != 0)
        return -1;
    FILE *f = af.fp;
    size_t failures = 0, skipped = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        int failed = 0;
        for (size_t r = 0; r < n_regs; r++)
            failed |= regs[r].cell == i;
        failures += failed;
        skipped += cells[i].status == BENCH_CELL_SKIPPED;
        errors += cells[i].status == BENCH_CELL_FAILED;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"fleetsim bench ");
    xml_escaped(f, suite);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\">\n", n, failures, errors, skipped);
    for (size_t i = 0; i < n; i++) {
        const struct bench_cell *c = &cells[i];
        fputs("  <testcase classname=\"", f);
        xml_escaped(f, c->workload);
        fputs("\" name=\"", f);
        xml_escaped(f, c->policy);
        fputs("\">\n", f);
        if (c->status == BENCH_CELL_SKIPPED) {
            fputs("    <skipped message=\"", f);
            xml_escaped(f, c->note);
            fputs("\"/>\n", f);
        } else if (c->status == BENCH_CELL_FAILED) {
            fputs("    <error message=\"", f);
            xml_escaped(f, c->note);
            fputs("\"/>\n", f);
        }
        for (size_t r = 0; r < n_regs; r++) {
            if (regs[r].cell != i)
                continue;
            char msg[256];
            snprintf(msg, sizeof msg, "%s regressed: %.6g -> %.6g", bench_metrics[regs[r].metric].key,
                     regs[r].baseline, regs[r].current);
            fputs("    <failure message=\"", f);
            xml_escaped(f, msg);
            fputs("\"/>\n", f);
        }
        if (c->status == BENCH_CELL_OK) {
            fprintf(f, "    <system-out>jobs=%llu", (unsigned long long)c->jobs);
            for (size_t m = 0; m < bench_n_metrics; m++)
                fprintf(f, " %s=%.6g", bench_metrics[m].key, bench_cell_metric(c, m));
            fputs("</system-out>\n", f);
        }
        fputs("  </testcase>\n", f);
    }
    fputs("</testsuite>\n</testsuites>\n", f);
    return atomic_file_commit(&af, err);
}
