#include "report/json_doc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/atomic_file.h"

/* (set_new and append_new release v themselves when they fail) */
void json_put(json_t *obj, const char *key, json_t *v, int *ok)
{
    if (!obj || !v) {
        json_decref(v);
        *ok = 0;
    } else if (json_object_set_new(obj, key, v) != 0) {
        *ok = 0;
    }
}

void json_push(json_t *arr, json_t *v, int *ok)
{
    if (!arr || !v) {
        json_decref(v);
        *ok = 0;
    } else if (json_array_append_new(arr, v) != 0) {
        *ok = 0;
    }
}

json_t *json_doc_whole(json_t *doc, int ok)
{
    if (ok)
        return doc;
    json_decref(doc);
    return NULL;
}

/* The encoding's text, with every failure to grow it remembered: jansson
 * 2.14 ignores the callback's failure while it writes an object's key, and
 * would return a document without the key as a success. */
struct encoded {
    char *text;
    size_t n, cap;
    int failed;
};

static int encoded_append(const char *bytes, size_t n, void *data)
{
    struct encoded *e = data;
    if (e->cap - e->n < n + 1) {
        size_t cap = e->cap ? e->cap : 4096;
        while (cap - e->n < n + 1)
            cap *= 2;
        char *p = realloc(e->text, cap);
        if (!p) {
            e->failed = 1;
            return -1;
        }
        e->text = p;
        e->cap = cap;
    }
    memcpy(e->text + e->n, bytes, n);
    e->n += n;
    e->text[e->n] = '\n'; /* room kept for the final newline */
    return 0;
}

int json_doc_write(FILE *out, const json_t *root, size_t flags, const char *what, struct err *err)
{
    struct encoded e = {NULL, 0, 0, 0};
    if (!root || json_dump_callback(root, encoded_append, &e, flags) != 0 || e.failed || !e.text) {
        free(e.text);
        return err_set(err, NULL, 0, 0, "out of memory");
    }
    errno = 0;
    int rc = fwrite(e.text, 1, e.n + 1, out) == e.n + 1 ? 0 : -1;
    free(e.text);
    return rc == 0 ? 0 : atomic_file_write_error(err, what, errno);
}
