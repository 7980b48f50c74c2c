/* Tests of traces/jsonl.c (reader and writer) and traces/stats.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/suites.h"
#include "tests/unit/reader_case.h"
#include "tests/unit/test.h"
#include "traces/jsonl.h"
#include "traces/stats.h"
#include "traces/swf.h"

static void jsonl_case_read(struct reader_case *c, const char *text)
{
    reader_case_begin(c);
    c->rc = jsonl_read_buffer("t.jsonl", text, strlen(text), &c->w, &c->d, &c->e);
}

static void test_jsonl_read_basic(void)
{
    struct reader_case c;
    jsonl_case_read(&c,
                    "{\"fleetsim_trace\":1,\"max_nodes\":30,\"max_procs\":240,\"unix_start_s\":1027839845}\n"
                    "\n"
                    "{\"id\":7,\"submit_s\":10.5,\"runtime_s\":3600,\"limit_s\":7200,\"gpus\":8,"
                    "\"user\":\"u4\",\"team\":\"g1\",\"status\":1}\r\n"
                    "   \n"
                    "{\"submit_s\":2,\"runtime_s\":0.000001,\"gpus\":1,\"start_s\":3,\"end_s\":4,"
                    "\"exit\":-9,\"name\":\"train\",\"placement\":[\"n1:0\",\"n1:1\"],\"user\":\"u4\"}\n");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.d.n, 0);
    CHECK_INT(c.w.meta.max_nodes, 30);
    CHECK_INT(c.w.meta.max_procs, 240);
    CHECK_INT(c.w.meta.unix_start_s, 1027839845);
    if (CHECK_INT(c.w.n, 2)) {
        const struct job *a = &c.w.jobs[0], *b = &c.w.jobs[1]; /* sorted by submit */
        CHECK_INT(a->id, 5); /* no id: the line number */
        CHECK_INT(a->submit_us, 2000000);
        CHECK_INT(a->runtime_us, 1);
        CHECK_INT(a->limit_us, -1);
        CHECK_INT(a->team, -1);
        CHECK_INT(a->status, -1);
        CHECK_INT(b->id, 7);
        CHECK_INT(b->submit_us, 10500000);
        CHECK_INT(b->runtime_us, 3600000000LL);
        CHECK_INT(b->limit_us, 7200000000LL);
        CHECK_INT(b->slots, 8);
        CHECK_INT(b->status, 1);
        CHECK_INT(b->source_line, 3);
        CHECK_STR(string_table_get(&c.w.users, b->user), "u4");
        CHECK_STR(string_table_get(&c.w.teams, b->team), "g1");
        CHECK_INT(a->user, b->user);
    }
    reader_case_release(&c);
}

static void test_jsonl_unknown_key(void)
{
    struct reader_case c;
    jsonl_case_read(&c,
                    "{\"submit_s\":0,\"runtime_s\":1,\"gpu\":2}\n"
                    "{\"submit_s\":0,\"runtime_s\":1,\"gpus\":2,\"walltime\":5}\n"
                    "{\"fleetsim_trace\":1}\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.jsonl:1:29: error: unknown key 'gpu'; did you mean 'gpus'?"));
    CHECK(has_diag(&c.d, "t.jsonl:2:38: error: unknown key 'walltime'"));
    CHECK(has_diag(&c.d, "t.jsonl:3:1: error: header ('fleetsim_trace') allowed on the first line only"));
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 3); /* no "missing key 'gpus'": the typo said it */
    char buf[512];
    err_format(&c.e, buf, sizeof buf);
    CHECK_STR(buf, "t.jsonl:1:29: error: unknown key 'gpu'; did you mean 'gpus'?");
    reader_case_release(&c);
    jsonl_case_read(&c, "{\"fleetsim_trace\":1,\"max_node\":4}\n{\"submit_s\":0,\"runtime_s\":1,\"gpus\":2}\n");
    CHECK(has_diag(&c.d, "t.jsonl:1:21: error: unknown key 'max_node'; did you mean 'max_nodes'?"));
    reader_case_release(&c);
    jsonl_case_read(&c, "{\"submit\":0,\"runtime_s\":1,\"gpus\":2}\n");
    CHECK(has_diag(&c.d, "t.jsonl:1:2: error: unknown key 'submit'; did you mean 'submit_s'?"));
    CHECK_INT(c.d.n, 1);
    reader_case_release(&c);
    jsonl_case_read(&c, "{\"id\":1,\"submit_s\":0,\"gpus\":8}\n");
    CHECK(has_diag(&c.d, "t.jsonl:1:1: error: missing key 'runtime_s'"));
    CHECK_INT(c.d.n, 1);
    reader_case_release(&c);
}

static void test_jsonl_types_and_ranges(void)
{
    struct reader_case c;
    jsonl_case_read(&c,
                    "{\"submit_s\":0,\"runtime_s\":1,\"gpus\":2.5}\n"
                    "{\"submit_s\":0,\"runtime_s\":1,\"gpus\":0}\n"
                    "{\"submit_s\":-1,\"runtime_s\":\"1\",\"gpus\":1}\n"
                    "{\"submit_s\":0,\"runtime_s\":1,\"gpus\":1,\"limit_s\":0,\"user\":4}\n"
                    "{\"submit_s\":0, \"runtime_s\":1,\"gpus\" : 2000000}\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.jsonl:1:36: error: key 'gpus' must be an integer"));
    CHECK(has_diag(&c.d, "t.jsonl:2:36: error: key 'gpus' is 0, expected 1 to 1000000"));
    CHECK(has_diag(&c.d, "t.jsonl:3:13: error: key 'submit_s' is -1, expected 0 to 1000000000000"));
    CHECK(has_diag(&c.d, "t.jsonl:3:28: error: key 'runtime_s' must be a number"));
    CHECK(has_diag(&c.d, "t.jsonl:4:48: error: key 'limit_s' is 0, expected more than 0 and at "
                         "most 1000000000000"));
    CHECK(has_diag(&c.d, "t.jsonl:4:57: error: key 'user' must be a string"));
    CHECK(has_diag(&c.d, "t.jsonl:5:39: error: key 'gpus' is 2000000, expected 1 to 1000000"));
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 7);
    CHECK_INT(c.w.n, 0);
    reader_case_release(&c);
}

static void test_jsonl_syntax_and_header(void)
{
    struct reader_case c;
    jsonl_case_read(&c,
                    "{\"submit_s\":0,\"runtime_s\":1,\"gpus\":2,}\n"
                    "{\"submit_s\":0,\"runtime_s\":1,\"gpus\":2\n"
                    "[1,2]\n"
                    "{\"submit_s\":0,\"submit_s\":1,\"runtime_s\":1,\"gpus\":2}\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.jsonl:1:38: error: invalid json: string or '}' expected near '}'"));
    CHECK(has_diag(&c.d, "t.jsonl:2:36: error: invalid json: '}' expected near end of line"));
    CHECK(has_diag(&c.d, "t.jsonl:3:1: error: expected a json object (one job per line)"));
    CHECK(has_diag(&c.d, "t.jsonl:4:24: error: invalid json: duplicate object key near '\"submit_s\"'"));
    reader_case_release(&c);
    jsonl_case_read(&c, "{\"user\":\"\x01\"}\n{\"a\":\xff}\n{\"a\":\"\xc3\xa9\n");
    CHECK(has_diag(&c.d, "t.jsonl:1:9: error: invalid json: control character 0x1 near '\"'"));
    CHECK(has_diag(&c.d, "t.jsonl:2:5: error: invalid json: unable to decode byte 0xff"));
    CHECK(has_diag(&c.d, "t.jsonl:3:8: error: invalid json: premature end of input near '\"\\xc3\\xa9'"));
    reader_case_release(&c);
    jsonl_case_read(&c, "{\"fleetsim_trace\":2}\n{\"submit_s\":0,\"runtime_s\":1,\"gpus\":2}\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.jsonl:1:19: error: unsupported fleetsim_trace version 2 (this reader knows 1)"));
    reader_case_release(&c);
    jsonl_case_read(&c, "{\"fleetsim_trace\":1}\n\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.jsonl: error: no jobs in 't.jsonl'"));
    reader_case_release(&c);
}

static void test_jsonl_error_cap(void)
{
    char text[4096] = "";
    for (int i = 0; i < 25; i++)
        strcat(text, "{\"gpu\":1,\"submit_s\":0,\"runtime_s\":0}\n");
    struct reader_case c;
    jsonl_case_read(&c, text);
    CHECK_INT(c.rc, -1);
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 21);
    CHECK(has_diag(&c.d, "t.jsonl:21: error: too many errors, stopping"));
    reader_case_release(&c);
}

/* ---- writing ---- */

static void fill_workload(struct workload *w)
{
    workload_init(w);
    w->meta.max_nodes = 16;
    w->meta.max_procs = 128;
    int32_t u1 = string_table_intern(&w->users, "alice");
    int32_t u2 = string_table_intern(&w->users, "b\"o\\b\x01");
    int32_t t1 = string_table_intern(&w->teams, "vision");
    struct job jobs[] = {
        {1, 0, 3600000000LL, 7200000000LL, 8, u1, t1, 1, 0, -1, 0, 0, 0, 0, 0},
        {2, 500000, 1, -1, 1, u2, -1, -1, 0, -1, 0, 0, 0, 0, 0},
        {4, 12000001, 100000000000LL, -1, 1000000, u1, -1, 5, 0, -1, 0, 0, 0, 0, 0},
        {9000000000LL, 12000001, 1500000, 1250000, 64, -1, t1, 0, 0, -1, 0, 0, 0, 0, 0}, /* same submit: id order */
    };
    for (size_t i = 0; i < sizeof jobs / sizeof *jobs; i++)
        workload_push(w, &jobs[i]);
}

static const char expected_text[] =
    "{\"fleetsim_trace\":1,\"max_nodes\":16,\"max_procs\":128}\n"
    "{\"id\":1,\"submit_s\":0,\"runtime_s\":3600,\"limit_s\":7200,\"gpus\":8,\"user\":\"alice\","
    "\"team\":\"vision\",\"status\":1}\n"
    "{\"id\":2,\"submit_s\":0.5,\"runtime_s\":0.000001,\"gpus\":1,\"user\":\"b\\\"o\\\\b\\u0001\"}\n"
    "{\"id\":4,\"submit_s\":12.000001,\"runtime_s\":100000,\"gpus\":1000000,\"user\":\"alice\","
    "\"status\":5}\n"
    "{\"id\":9000000000,\"submit_s\":12.000001,\"runtime_s\":1.5,\"limit_s\":1.25,\"gpus\":64,"
    "\"team\":\"vision\",\"status\":0}\n";

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_jsonl_write_exact(void)
{
    struct workload w;
    fill_workload(&w);
    FILE *f = tmpfile();
    struct err e;
    err_clear(&e);
    CHECK_INT(jsonl_write("-", f, &w, &e), 0);
    rewind(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    CHECK_STR(buf, expected_text);
    workload_release(&w);
}

static void test_jsonl_round_trip(void)
{
    struct workload w, back;
    fill_workload(&w);
    char path[256];
    snprintf(path, sizeof path, "/tmp/fleetsim-test-jsonl-%ld.jsonl", (long)getpid());
    struct err e;
    err_clear(&e);
    CHECK_INT(jsonl_write(path, NULL, &w, &e), 0);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    CHECK(access(tmp, F_OK) != 0); /* renamed away */
    workload_init(&back);
    struct diag_list d;
    diag_list_init(&d, 0);
    CHECK_INT(jsonl_read(path, &back, &d, &e), 0);
    CHECK_INT(d.n, 0);
    CHECK_INT(back.meta.max_nodes, 16);
    CHECK_INT(back.meta.max_procs, 128);
    CHECK_INT(back.meta.unix_start_s, -1);
    if (CHECK_INT(back.n, w.n)) {
        for (size_t i = 0; i < w.n; i++) {
            const struct job *a = &w.jobs[i], *b = &back.jobs[i];
            CHECK_INT(b->id, a->id);
            CHECK_INT(b->submit_us, a->submit_us);
            CHECK_INT(b->runtime_us, a->runtime_us);
            CHECK_INT(b->limit_us, a->limit_us);
            CHECK_INT(b->slots, a->slots);
            CHECK_INT(b->status, a->status);
            CHECK_INT(b->source_line, (long)i + 2);
            const char *ua = string_table_get(&w.users, a->user);
            const char *ub = string_table_get(&back.users, b->user);
            CHECK((ua == NULL) == (ub == NULL));
            if (ua && ub)
                CHECK_STR(ub, ua);
            const char *ta = string_table_get(&w.teams, a->team);
            const char *tb = string_table_get(&back.teams, b->team);
            CHECK((ta == NULL) == (tb == NULL));
            if (ta && tb)
                CHECK_STR(tb, ta);
        }
    }
    /* writing what was read gives the same bytes */
    CHECK_INT(jsonl_write(path, NULL, &back, &e), 0);
    const char *again = slurp(path);
    CHECK_STR(again, expected_text);
    unlink(path);
    workload_release(&w);
    workload_release(&back);
    diag_list_release(&d);
}

static void test_jsonl_write_failure(void)
{
    struct workload w;
    fill_workload(&w);
    struct err e;
    err_clear(&e);
    CHECK_INT(jsonl_write("/nonexistent-dir/x.jsonl", NULL, &w, &e), -1);
    char buf[512];
    err_format(&e, buf, sizeof buf);
    CHECK_STR(buf, "/nonexistent-dir/x.jsonl: error: cannot write: No such file or directory");
    /* a target that cannot be replaced (a directory) is left as it was */
    char dir[256];
    snprintf(dir, sizeof dir, "/tmp/fleetsim-test-jsonl-dir-%ld", (long)getpid());
    mkdir(dir, 0700);
    char inner[300];
    snprintf(inner, sizeof inner, "%s/keep", dir);
    mkdir(inner, 0700);
    err_clear(&e);
    CHECK_INT(jsonl_write(dir, NULL, &w, &e), -1);
    char tmp[400];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dir, (long)getpid());
    CHECK(access(tmp, F_OK) != 0); /* the temporary is gone */
    CHECK(access(inner, F_OK) == 0);
    rmdir(inner);
    rmdir(dir);
    workload_release(&w);
}

static void test_swf_to_jsonl(void)
{
    const char *swf = "; MaxNodes: 4\n; UnixStartTime: 100\n"
                      "1 0 3 10.5 2 -1 -1 2 20 -1 1 3 1 -1 -1 -1 -1 -1\n"
                      "2 4 3 7 1 -1 -1 -1 -1 -1 0 4 -1 -1 -1 -1 -1 -1\n";
    struct workload w;
    workload_init(&w);
    struct err e;
    err_clear(&e);
    CHECK_INT(swf_read_buffer("t.swf", swf, strlen(swf), SWF_REPLAY, &w, NULL, &e), 0);
    FILE *f = tmpfile();
    CHECK_INT(jsonl_write("-", f, &w, &e), 0);
    rewind(f);
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    CHECK_STR(buf, "{\"fleetsim_trace\":1,\"max_nodes\":4,\"unix_start_s\":100}\n"
                   "{\"id\":1,\"submit_s\":0,\"runtime_s\":10.5,\"limit_s\":20,\"gpus\":2,\"user\":\"3\","
                   "\"team\":\"1\",\"status\":1}\n"
                   "{\"id\":2,\"submit_s\":4,\"runtime_s\":7,\"gpus\":1,\"user\":\"4\",\"status\":0}\n");
    workload_release(&w);
}

/* ---- stats ---- */

static void test_trace_stats(void)
{
    struct workload w;
    workload_init(&w);
    int32_t u = string_table_intern(&w.users, "a");
    string_table_intern(&w.users, "unused");
    for (int i = 1; i <= 20; i++) {
        struct job j = {i, (sim_time)(20 - i) * 1000000, (sim_time)i * 1000000, i % 2 ? 2 * i * 1000000 : -1,
                        i % 4 + 1, u, -1, 1, i, -1, 0, 0, 0, 0, 0};
        workload_push(&w, &j);
    }
    struct trace_stats s;
    struct err e;
    err_clear(&e);
    CHECK_INT(trace_stats_compute(&w, &s, &e), 0);
    CHECK_INT(s.jobs, 20);
    CHECK_INT(s.first_submit_us, 0);
    CHECK_INT(s.last_submit_us, 19000000);
    CHECK_INT(s.min_slots, 1);
    CHECK_INT(s.max_slots, 4);
    CHECK_NEAR(s.mean_slots, 2.5, 1e-12);
    CHECK_NEAR(s.runtime_mean_s, 10.5, 1e-12);
    CHECK_NEAR(s.runtime_p50_s, 10, 1e-12); /* rank ceil(0.5*20) = 10 */
    CHECK_NEAR(s.runtime_p95_s, 19, 1e-12); /* rank ceil(0.95*20) = 19 */
    CHECK_NEAR(s.limit_known_fraction, 0.5, 1e-12);
    CHECK_NEAR(s.mean_limit_accuracy, 0.5, 1e-12);
    CHECK_INT(s.users, 1);
    CHECK_INT(s.teams, 0);
    double slot_s = 0;
    for (int i = 1; i <= 20; i++)
        slot_s += (double)(i % 4 + 1) * i;
    CHECK_NEAR(s.offered_slot_hours, slot_s / 3600, 1e-9);
    workload_release(&w);

    workload_init(&w);
    CHECK_INT(trace_stats_compute(&w, &s, &e), 0);
    CHECK_INT(s.jobs, 0);
    CHECK_NEAR(s.runtime_p95_s, 0, 0);
    workload_release(&w);
}

void suite_jsonl(void)
{
    test_run("jsonl read basic", test_jsonl_read_basic);
    test_run("jsonl unknown key", test_jsonl_unknown_key);
    test_run("jsonl types and ranges", test_jsonl_types_and_ranges);
    test_run("jsonl syntax and header", test_jsonl_syntax_and_header);
    test_run("jsonl error cap", test_jsonl_error_cap);
    test_run("jsonl write exact", test_jsonl_write_exact);
    test_run("jsonl round trip", test_jsonl_round_trip);
    test_run("jsonl write failure", test_jsonl_write_failure);
    test_run("jsonl from swf", test_swf_to_jsonl);
    test_run("trace stats", test_trace_stats);
}
