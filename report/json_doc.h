/* json_doc: a JSON document built and written whole or not at all.
 *
 * jansson's json_object_set_new and json_array_append_new take a NULL value
 * (its builder ran out of memory) as a failure and carry on: the document
 * then lacks a key and nothing says so. json_put and json_push remember
 * such a failure in *ok. json_doc_write encodes a document before writing
 * any of it, so a failure leaves nothing behind on the stream.
 */
#ifndef FLEETSIM_REPORT_JSON_DOC_H
#define FLEETSIM_REPORT_JSON_DOC_H

#include <jansson.h>
#include <stdio.h>

#include "sim/err.h"

/* obj[key] = v, taking v; *ok = 0 when obj or v is NULL or the set fails. */
void json_put(json_t *obj, const char *key, json_t *v, int *ok);
/* Appends v to arr, taking v; *ok = 0 as json_put. */
void json_push(json_t *arr, json_t *v, int *ok);
/* doc, or NULL (doc released) when ok is 0: a document that lost a value
 * is no document, rather than one with a key left out. */
json_t *json_doc_whole(json_t *doc, int ok);
/* Writes root (not taken; NULL means it could not be built) encoded with
 * flags, then a newline, to out, which is the file `what`. Returns 0, or -1
 * with err set: "out of memory" (nothing written), or as
 * atomic_file_write_error words a failed write of `what`. */
int json_doc_write(FILE *out, const json_t *root, size_t flags, const char *what, struct err *err);

#endif
