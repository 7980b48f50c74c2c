/* The names of fabric kinds and span levels, as scenario files and reports
 * write them. Kept apart from fabric.c (the bandwidth model) so the names
 * the scenario schema lists and the parser accepts live in one table. */
#include <string.h>

#include "models/fabric.h"

static const char *const kind_names[] = {"none", "fat-tree", "rail-optimized"};
static const char *const span_names[] = {"nvlink", "leaf", "spine"};

const char *fabric_kind_name(enum fabric_kind k)
{
    return (unsigned)k < sizeof kind_names / sizeof *kind_names ? kind_names[k] : "unknown";
}

int fabric_kind_parse(const char *name, enum fabric_kind *k)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof *kind_names; i++) {
        if (strcmp(kind_names[i], name) == 0) {
            *k = (enum fabric_kind)i;
            return 0;
        }
    }
    return -1;
}

const char *span_level_name(enum span_level s)
{
    return (unsigned)s < sizeof span_names / sizeof *span_names ? span_names[s] : "unknown";
}
