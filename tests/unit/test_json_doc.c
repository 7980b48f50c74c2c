/* Unit tests of report/json_doc: a document whole or not at all. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "report/json_doc.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

/* A NULL value (its builder ran out of memory) is remembered, not skipped. */
static void test_put_remembers_a_null(void)
{
    int ok = 1;
    json_t *o = json_object();
    json_put(o, "a", json_integer(1), &ok);
    CHECK_INT(ok, 1);
    json_put(o, "b", NULL, &ok);
    CHECK_INT(ok, 0);
    CHECK_INT(json_object_size(o), 1);
    ok = 1;
    json_t *arr = json_array();
    json_push(arr, json_string("x"), &ok);
    json_push(NULL, json_string("y"), &ok); /* the value is released, not leaked */
    CHECK_INT(ok, 0);
    CHECK_INT(json_array_size(arr), 1);
    json_decref(o);
    json_decref(arr);
}

/* A document that lost a value is no document (released: ASan's leak check
 * sees it); one that lost none is itself. */
static void test_whole_or_null(void)
{
    json_t *o = json_object();
    CHECK(json_doc_whole(o, 1) == o);
    CHECK(json_doc_whole(o, 0) == NULL);
    CHECK(json_doc_whole(NULL, 1) == NULL);
}

/* The text, then a newline; a NULL document writes nothing and says why. */
static void test_write_whole_or_nothing(void)
{
    FILE *f = tmpfile();
    if (!CHECK(f != NULL))
        return;
    struct err err;
    err_clear(&err);
    json_t *doc = json_pack("{s:i, s:[s]}", "b", 2, "a", "x");
    CHECK_INT(json_doc_write(f, doc, JSON_SORT_KEYS | JSON_COMPACT, "f", &err), 0);
    json_decref(doc);
    CHECK_INT(json_doc_write(f, NULL, 0, "f", &err), -1);
    CHECK_STR(err.msg, "out of memory");
    char buf[128] = "";
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    CHECK_STR(buf, "{\"a\":[\"x\"],\"b\":2}\n");
    fclose(f);
}

void suite_json_doc(void)
{
    test_run("json_doc: a NULL value is remembered, not left out", test_put_remembers_a_null);
    test_run("json_doc: a document is written whole, or nothing with the reason", test_write_whole_or_nothing);
    test_run("json_doc: a document that lost a value is none", test_whole_or_null);
}
