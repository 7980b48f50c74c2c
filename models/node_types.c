#include "models/node_types.h"

#include <stdlib.h>
#include <string.h>

static const char *const class_names[JOB_CLASS_COUNT] = {"training", "finetune", "inference"};

void node_catalog_init(struct node_catalog *c)
{
    memset(c, 0, sizeof *c);
}

void node_catalog_release(struct node_catalog *c)
{
    if (!c)
        return;
    free(c->types);
    memset(c, 0, sizeof *c);
}

int node_catalog_find(const struct node_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->types[i].name, name) == 0)
            return (int)i;
    return -1;
}

int node_catalog_put(struct node_catalog *c, const struct node_type *t)
{
    int at = node_catalog_find(c, t->name);
    if (at >= 0) {
        c->types[at] = *t;
        return at;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        struct node_type *types = realloc(c->types, cap * sizeof *types);
        if (!types)
            return -1;
        c->types = types;
        c->cap = cap;
    }
    c->types[c->n] = *t;
    return (int)c->n++;
}

const char *job_class_name(enum job_class k)
{
    return (unsigned)k < JOB_CLASS_COUNT ? class_names[k] : "unknown";
}

int job_class_parse(const char *name, enum job_class *k)
{
    for (int i = 0; i < JOB_CLASS_COUNT; i++) {
        if (strcmp(class_names[i], name) == 0) {
            *k = (enum job_class)i;
            return 0;
        }
    }
    return -1;
}
