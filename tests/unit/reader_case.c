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
