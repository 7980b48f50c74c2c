#include "tests/unit/reader_case.h"

#include <stdio.h>
#include <string.h>

void reader_case_begin(struct reader_case *c)
{
    workload_init(&c->w);
    diag_list_init(&c->d, 100);
    err_clear(&c->e);
    c->rc = 0;
}

void reader_case_release(struct reader_case *c)
{
    workload_release(&c->w);
    diag_list_release(&c->d);
}

int has_diag(const struct diag_list *d, const char *want)
{
    char buf[1024];
    for (size_t i = 0; i < d->n; i++) {
        diag_format(&d->items[i], buf, sizeof buf);
        if (strcmp(buf, want) == 0)
            return 1;
    }
    printf("  (no diagnostic \"%s\"; have:\n", want);
    for (size_t i = 0; i < d->n; i++) {
        diag_format(&d->items[i], buf, sizeof buf);
        printf("   \"%s\"\n", buf);
    }
    printf("  )\n");
    return 0;
}

int reader_case_same(const struct reader_case *a, const struct reader_case *b)
{
    char x[1024], y[1024];
    if (a->rc != b->rc || a->e.set != b->e.set) {
        printf("  status %d/%d, error set %d/%d\n", a->rc, b->rc, a->e.set, b->e.set);
        return 0;
    }
    if (a->e.set) {
        err_format(&a->e, x, sizeof x);
        err_format(&b->e, y, sizeof y);
        if (strcmp(x, y) != 0) {
            printf("  error \"%s\" / \"%s\"\n", x, y);
            return 0;
        }
    }
    if (a->d.n != b->d.n || a->d.dropped != b->d.dropped) {
        printf("  %zu/%zu diagnostics, %zu/%zu dropped\n", a->d.n, b->d.n, a->d.dropped, b->d.dropped);
        return 0;
    }
    for (size_t i = 0; i < a->d.n; i++) {
        diag_format(&a->d.items[i], x, sizeof x);
        diag_format(&b->d.items[i], y, sizeof y);
        if (strcmp(x, y) != 0) {
            printf("  diagnostic %zu \"%s\" / \"%s\"\n", i, x, y);
            return 0;
        }
    }
    const struct workload_meta *m = &a->w.meta, *n = &b->w.meta;
    if (m->max_nodes != n->max_nodes || m->max_procs != n->max_procs ||
        m->unix_start_s != n->unix_start_s || m->skipped_at_read != n->skipped_at_read) {
        printf("  meta differs\n");
        return 0;
    }
    const struct string_table *ta[] = {&a->w.users, &a->w.teams}, *tb[] = {&b->w.users, &b->w.teams};
    for (int t = 0; t < 2; t++) {
        if (ta[t]->n != tb[t]->n) {
            printf("  %zu/%zu names in table %d\n", ta[t]->n, tb[t]->n, t);
            return 0;
        }
        for (size_t i = 0; i < ta[t]->n; i++)
            if (strcmp(ta[t]->items[i], tb[t]->items[i]) != 0) {
                printf("  name %zu of table %d: %s / %s\n", i, t, ta[t]->items[i], tb[t]->items[i]);
                return 0;
            }
    }
    if (a->w.n != b->w.n) {
        printf("  %zu/%zu jobs\n", a->w.n, b->w.n);
        return 0;
    }
    for (size_t i = 0; i < a->w.n; i++) {
        const struct job *j = &a->w.jobs[i], *k = &b->w.jobs[i];
        if (j->id != k->id || j->submit_us != k->submit_us || j->runtime_us != k->runtime_us ||
            j->limit_us != k->limit_us || j->slots != k->slots || j->user != k->user ||
            j->team != k->team || j->status != k->status || j->source_line != k->source_line ||
            j->job_class != k->job_class || j->wait_us != k->wait_us || j->wait_known != k->wait_known ||
            j->gpu_milli != k->gpu_milli || j->gpu_models != k->gpu_models || j->nodes != k->nodes) {
            printf("  job %zu differs (ids %lld/%lld, lines %ld/%ld)\n", i, (long long)j->id,
                   (long long)k->id, j->source_line, k->source_line);
            return 0;
        }
    }
    return 1;
}
