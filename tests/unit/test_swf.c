/* Tests of traces/swf.c (both conventions), traces/trace.c and
 * traces/textfile.c: small inline logs for each rule, then the real logs in
 * ../shared/traces when they are there. */
/* _GNU_SOURCE: sched_setaffinity and CPU_SET under -std=c11. */
#define _GNU_SOURCE 1
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "sim/pcg32.h"
#include "tests/unit/suites.h"
#include "tests/unit/reader_case.h"
#include "tests/unit/test.h"
#include "traces/swf.h"
#include "traces/textfile.h"
#include "traces/trace.h"

/* A tail of 18-field lines needs 13 more fields after the first five. */
#define TAIL13 " -1 -1 -1 -1 -1 1 4 1 -1 -1 1 -1 -1"

static void swf_case_read(struct reader_case *c, const char *text, enum swf_convention conv)
{
    reader_case_begin(c);
    c->rc = swf_read_buffer("t.swf", text, strlen(text), conv, &c->w, &c->d, &c->e);
}

static void test_swf_header_and_fields(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "; Version: 2.2\n"
                  "; MaxNodes: 120\n"
                  ";MaxProcs:\t240  \n"
                  "; UnixStartTime: 1027839845\n"
                  "; Note: a note\n"
                  ";       continued without a key\n"
                  "\n"
                  "   11   342072     32  43306   32  43307    -1   32  43200    -1  1   4   1  -1 -1  1 -1 -1\n"
                  "12\t342343\t5\t553.5\t40\t552.21\t-1\t40\t43200\t-1\t0\t4\t2\t-1\t-1\t1\t-1\t-1\r\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.d.n, 0);
    CHECK_INT(c.w.meta.max_nodes, 120);
    CHECK_INT(c.w.meta.max_procs, 240);
    CHECK_INT(c.w.meta.unix_start_s, 1027839845);
    if (CHECK_INT(c.w.n, 2)) {
        const struct job *a = &c.w.jobs[0], *b = &c.w.jobs[1];
        CHECK_INT(a->id, 11);
        CHECK_INT(a->submit_us, 342072000000LL);
        CHECK_INT(a->runtime_us, 43306000000LL);
        CHECK_INT(a->limit_us, 43200000000LL);
        CHECK_INT(a->slots, 32);
        CHECK_INT(a->status, 1);
        CHECK_STR(string_table_get(&c.w.users, a->user), "4");
        CHECK_STR(string_table_get(&c.w.teams, a->team), "1");
        CHECK_INT(a->source_line, 8);
        CHECK_INT(b->runtime_us, 553500000LL); /* float run time, tab-separated, CRLF */
        CHECK_INT(b->status, 0);
        CHECK_INT(b->user, a->user); /* interned once */
        CHECK_STR(string_table_get(&c.w.teams, b->team), "2");
    }
    reader_case_release(&c);
}

static void test_swf_size_fallback_and_limit(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "1 0 0 100 8 -1 -1 16 200 -1 1 1 1 -1 -1 -1 -1 -1\n" /* f8 wins */
                  "2 5 0 100 8 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n"  /* f8 unknown: f5 */
                  "3 9 0 100 -1 -1 -1 -1 0 -1 1 -1 -1 -1 -1 -1 -1 -1\n" /* neither: skipped */
                  "4 9 0 -1 4 -1 -1 4 10 -1 1 -1 -1 -1 -1 -1 -1 -1\n"   /* no run time */
                  "5 9.25 0 0 4 -1 -1 -5 -7 -1 -3 -2 -9 -1 -1 -1 -1 -1\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.meta.skipped_at_read, 2);
    CHECK(has_diag(&c.d, "t.swf:3:11: warning: job '3' has no processor count: skipped"));
    CHECK(has_diag(&c.d, "t.swf:4:7: warning: job '4' has no run time: skipped"));
    if (CHECK_INT(c.w.n, 3)) {
        CHECK_INT(c.w.jobs[0].slots, 16);
        CHECK_INT(c.w.jobs[0].limit_us, 200000000LL);
        CHECK_INT(c.w.jobs[1].slots, 8);
        CHECK_INT(c.w.jobs[1].limit_us, -1);
        /* anything <= -1 is unknown, whatever the log wrote */
        CHECK_INT(c.w.jobs[2].id, 5);
        CHECK_INT(c.w.jobs[2].submit_us, 9250000LL);
        CHECK_INT(c.w.jobs[2].runtime_us, 0);
        CHECK_INT(c.w.jobs[2].slots, 4);
        CHECK_INT(c.w.jobs[2].limit_us, -1);
        CHECK_INT(c.w.jobs[2].status, -1);
        CHECK_INT(c.w.jobs[2].user, -1);
        CHECK_INT(c.w.jobs[2].team, -1);
    }
    reader_case_release(&c);
}

static void test_swf_short_lines(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "; MaxProcs: 64\n"
                  "1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                  "2 10 0 50 4 -1 -1 4 100 -1\n"
                  "3 20 0\n"
                  "4 30 0 60 2 -1 -1 2 100 -1 1 1 1 -1 -1 -1 -1 -1\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK(has_diag(&c.d, "t.swf:3:1: warning: 10 fields, expected 18: missing fields taken as unknown (-1)"));
    CHECK(has_diag(&c.d, "t.swf:4:1: warning: 3 fields, expected 18: too short to describe a job: skipped"));
    CHECK_INT(c.w.meta.skipped_at_read, 1);
    if (CHECK_INT(c.w.n, 3)) {
        CHECK_INT(c.w.jobs[1].id, 2);
        CHECK_INT(c.w.jobs[1].status, -1); /* field 11 missing */
        CHECK_INT(c.w.jobs[1].user, -1);
        CHECK_INT(c.w.jobs[2].id, 4);
    }
    reader_case_release(&c);
}

static void test_swf_extra_fields(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 -1 -1 -1 -1 {3,3} q_1d 1:ppn=8\n"
                  "2 5 0 100 8 -1 -1 8 200 -1 1 1 1 -1 -1 -1 -1 -1 {4} q_2d 1:ppn=1\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 2);
    CHECK_INT(c.d.n, 1); /* once per file */
    CHECK(has_diag(&c.d, "t.swf:1:49: warning: 21 fields, expected 18: fields after the 18th ignored "
                         "here and on any later line"));
    reader_case_release(&c);
}

static void test_swf_not_a_number(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                  "2 5 abc 100 8 -1 -1 8 nan -1 1 1 1 -1 -1 -1 -1 -1\n"
                  "3 7 0 100 8 -1 -1 8 0x10 -1 1 1 1 -1 -1 -1 -1 -1\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.swf:2:5: error: field 3 ('abc') is not a number"));
    CHECK(has_diag(&c.d, "t.swf:2:23: error: field 9 ('nan') is not a number"));
    CHECK(has_diag(&c.d, "t.swf:3:21: error: field 9 ('0x10') is not a number"));
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 3);
    /* err keeps the first */
    char buf[512];
    err_format(&c.e, buf, sizeof buf);
    CHECK_STR(buf, "t.swf:2:5: error: field 3 ('abc') is not a number");
    CHECK_INT(c.w.n, 1); /* bad lines yield no job */
    reader_case_release(&c);
}

static void test_swf_error_cap(void)
{
    char text[4096] = "";
    for (int i = 0; i < 30; i++)
        strcat(text, "x 0 0 1 1\n");
    struct reader_case c;
    swf_case_read(&c, text, SWF_REPLAY);
    CHECK_INT(c.rc, -1);
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 21);
    CHECK(has_diag(&c.d, "t.swf:20:1: error: field 1 ('x') is not a number"));
    CHECK(has_diag(&c.d, "t.swf:21: error: too many errors, stopping"));
    reader_case_release(&c);
}

static void test_swf_binary_garbage(void)
{
    static const char text[] = "1 0 0 100 8\n7 \x01\x02\x00zz\xff 9\n\x7f\n";
    struct reader_case c;
    workload_init(&c.w);
    diag_list_init(&c.d, 100);
    err_clear(&c.e);
    c.rc = swf_read_buffer("t.swf", text, sizeof text - 1, SWF_REPLAY, &c.w, &c.d, &c.e);
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.swf:2:3: error: unexpected byte 0x01")); /* once per line */
    CHECK(has_diag(&c.d, "t.swf:3:1: error: unexpected byte 0x7f"));
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 2);
    reader_case_release(&c);
}

static void test_swf_high_bytes_quoted(void)
{
    struct reader_case c;
    swf_case_read(&c, "1 0 0 \xc3\xa9 8\n", SWF_REPLAY);
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.swf:1:7: error: field 4 ('\\xc3\\xa9') is not a number"));
    reader_case_release(&c);
}

static void test_swf_out_of_range(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "1 2e12 0 100 8 -1 -1 8 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                  "2 0 0 100 8 -1 -1 3000000000 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                  "3 0 0 100 8 -1 -1 2.5 200 -1 1 1 1 -1 -1 -1 -1 -1\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.swf:1:3: error: field 2 ('2e12') is out of range (more than 1e12 s)"));
    CHECK(has_diag(&c.d, "t.swf:2:19: error: field 8 ('3000000000') is too large (more than 2147483647)"));
    CHECK(has_diag(&c.d, "t.swf:3:19: error: field 8 ('2.5') is not a whole number"));
    CHECK_INT(c.w.n, 0);
    reader_case_release(&c);
}

static void test_swf_empty(void)
{
    struct reader_case c;
    swf_case_read(&c, "", SWF_REPLAY);
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "t.swf: error: no jobs in 't.swf'"));
    reader_case_release(&c);
    swf_case_read(&c, "; MaxNodes: 4\n\n   \n", SWF_RLSCHEDULER);
    CHECK_INT(c.rc, -1);
    CHECK_STR(c.e.msg, "no jobs in 't.swf'");
    reader_case_release(&c);
}

static void test_swf_bad_header_value(void)
{
    struct reader_case c;
    swf_case_read(&c, "; MaxNodes: many\n; MaxProcs: 0\n1 0 0 100 8" TAIL13 "\n", SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK(has_diag(&c.d, "t.swf:1:13: warning: header 'MaxNodes' has a bad value 'many': ignored"));
    CHECK(has_diag(&c.d, "t.swf:2:13: warning: header 'MaxProcs' has a bad value '0': ignored"));
    CHECK_INT(c.w.meta.max_nodes, -1);
    CHECK_INT(c.w.meta.max_procs, -1);
    reader_case_release(&c);
}

static void test_swf_absolute_times(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "; MaxNodes: 49152\n"
                  "35079\t1535348017.5\t102306\t17348\t512\t18000\t-1\t-1\t-1\t-1\t-1\t35012304659472\t-1\t-1\t-1\t-1\t-1\t-1\n"
                  "35088\t1535348020\t102363\t15780\t512\t18000\t-1\t-1\t-1\t-1\t-1\t9007199254740993\t-1\t-1\t-1\t-1\t-1\t-1\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK(has_diag(&c.d, "t.swf:2:7: warning: submit times look absolute (epoch seconds): made "
                         "relative to the first job"));
    CHECK_INT(c.w.meta.unix_start_s, 1535348017);
    if (CHECK_INT(c.w.n, 2)) {
        CHECK_INT(c.w.jobs[0].submit_us, 500000);
        CHECK_INT(c.w.jobs[1].submit_us, 3000000);
        CHECK_STR(string_table_get(&c.w.users, c.w.jobs[0].user), "35012304659472");
        /* past 2^53: kept digit for digit, not rounded through a double */
        CHECK_STR(string_table_get(&c.w.users, c.w.jobs[1].user), "9007199254740993");
    }
    reader_case_release(&c);
    /* with UnixStartTime the log says its times are relative: left alone */
    swf_case_read(&c, "; UnixStartTime: 1000\n1 1500000000 0 1 1" TAIL13 "\n", SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.d.n, 0);
    CHECK_INT(c.w.n ? c.w.jobs[0].submit_us : 0, 1500000000000000LL);
    reader_case_release(&c);
}

static void test_swf_unsorted(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "1 100 0 1 1" TAIL13 "\n"
                  "2 50 0 1 1" TAIL13 "\n"
                  "3 20 0 1 1" TAIL13 "\n",
                  SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.d.n, 1);
    CHECK(has_diag(&c.d, "t.swf:2:3: warning: submit time 50 is earlier than the previous job's 100: "
                         "jobs sorted by submit time"));
    if (CHECK_INT(c.w.n, 3)) {
        CHECK_INT(c.w.jobs[0].id, 3);
        CHECK_INT(c.w.jobs[1].id, 2);
        CHECK_INT(c.w.jobs[2].id, 1);
    }
    reader_case_release(&c);
}

static void test_swf_rlscheduler(void)
{
    struct reader_case c;
    swf_case_read(&c,
                  "; MaxNodes: 256\n"
                  "5 40 -1 100 16 -1 -1 8 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"  /* max(16,8); request = run */
                  "3 10 -1 -1 4 -1 -1 32 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"   /* -1/-1: run 10, no limit */
                  "4 20 -1 0 4 -1 -1 4 300 -1 1 -1 -1 -1 0 -1 -1 -1\n"    /* run 0: dropped */
                  "1 30 -1 50 -1 -1 -1 2 600 -1 1 7 -1 -1 0 -1 -1 -1\n"   /* f5 unknown: f8 */
                  "3 35 -1 60 1 -1 -1 1 70 -1 1 -1 -1 -1 0 -1 -1 -1\n",   /* same id: file order */
                  SWF_RLSCHEDULER);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.d.n, 1); /* only the out-of-order submit */
    CHECK_INT(c.w.meta.skipped_at_read, 1);
    CHECK_INT(c.w.meta.max_procs, 256); /* MaxProcs missing: MaxNodes */
    if (CHECK_INT(c.w.n, 4)) {
        const struct job *j = c.w.jobs;
        CHECK_INT(j[0].id, 1);
        CHECK_INT(j[0].slots, 2);
        CHECK_INT(j[0].limit_us, 600000000LL);
        CHECK_STR(string_table_get(&c.w.users, j[0].user), "7");
        CHECK_INT(j[1].id, 3);
        CHECK_INT(j[1].source_line, 3);
        CHECK_INT(j[1].slots, 32);
        CHECK_INT(j[1].runtime_us, 10000000LL);
        CHECK_INT(j[1].limit_us, -1);
        CHECK_INT(j[2].id, 3);
        CHECK_INT(j[2].source_line, 6);
        CHECK_INT(j[3].id, 5);
        CHECK_INT(j[3].slots, 16);
        CHECK_INT(j[3].runtime_us, 100000000LL);
        CHECK_INT(j[3].limit_us, 100000000LL);
    }
    reader_case_release(&c);
    /* The same lines under SWF_REPLAY: f8 first, sorted by submit time. */
    swf_case_read(&c, "5 40 -1 100 16 -1 -1 8 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n", SWF_REPLAY);
    CHECK_INT(c.w.n ? c.w.jobs[0].slots : 0, 8);
    CHECK_INT(c.w.n ? c.w.jobs[0].limit_us : 0, -1);
    CHECK_INT(c.w.meta.max_procs, -1);
    reader_case_release(&c);
}

static const char *tmp_path(char *buf, size_t cap, const char *suffix)
{
    snprintf(buf, cap, "/tmp/fleetsim-test-swf-%ld%s", (long)getpid(), suffix);
    return buf;
}

static void test_swf_gzip_files(void)
{
    char path[256], bad[256];
    tmp_path(path, sizeof path, ".swf.gz");
    gzFile gz = gzopen(path, "wb");
    if (!CHECK(gz != NULL))
        return;
    gzputs(gz, "; MaxProcs: 8\n1 0 0 10 2" TAIL13 "\n2 3 0 10 4" TAIL13 "\n");
    gzclose(gz);
    struct workload w;
    struct diag_list d;
    struct err e;
    workload_init(&w);
    diag_list_init(&d, 0);
    err_clear(&e);
    CHECK_INT(swf_read(path, SWF_REPLAY, &w, &d, &e), 0);
    CHECK_INT(w.n, 2);
    CHECK_INT(w.meta.max_procs, 8);
    workload_release(&w);
    diag_list_release(&d);
    unlink(path);

    tmp_path(bad, sizeof bad, "-bad.swf.gz");
    FILE *f = fopen(bad, "wb");
    if (!CHECK(f != NULL))
        return;
    fputs("\x1f\x8b junk that is not deflate data at all", f);
    fclose(f);
    workload_init(&w);
    diag_list_init(&d, 0);
    err_clear(&e);
    CHECK_INT(swf_read(bad, SWF_REPLAY, &w, &d, &e), -1);
    char want[512];
    snprintf(want, sizeof want, "corrupt gzip data in '%s': ", bad);
    CHECK(strncmp(e.msg, want, strlen(want)) == 0);
    CHECK_INT(e.line, 0);
    CHECK_INT(diag_count(&d, DIAG_ERROR), 1);
    workload_release(&w);
    diag_list_release(&d);
    unlink(bad);

    workload_init(&w);
    err_clear(&e);
    CHECK_INT(swf_read("/nonexistent/x.swf", SWF_REPLAY, &w, NULL, &e), -1);
    CHECK_STR(e.msg, "cannot read the trace '/nonexistent/x.swf': No such file or directory");
    workload_release(&w);
}

/* Creates the temporary file path (tmp_path with suffix) holding what
 * build writes. Returns 1 when it could. */
static int tmp_file(char *path, size_t cap, const char *suffix, void (*build)(FILE *f))
{
    tmp_path(path, cap, suffix);
    FILE *f = fopen(path, "wb");
    if (!CHECK(f != NULL))
        return 0;
    build(f);
    fclose(f);
    return 1;
}

/* Writes the bytes of one gzip member of text (zlib's deflate, gzip
 * wrapper) to f. */
static void gz_member(FILE *f, const char *text)
{
    unsigned char out[4096];
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return;
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (unsigned)strlen(text);
    z.next_out = out;
    z.avail_out = sizeof out;
    deflate(&z, Z_FINISH);
    fwrite(out, 1, sizeof out - z.avail_out, f);
    deflateEnd(&z);
}

/* textfile_read on a file built by build(f): 0 and the text, or -1 and a
 * message starting with want_err. */
static void check_textfile(const char *what, void (*build)(FILE *f), const char *want_text,
                           const char *want_err)
{
    char path[256];
    if (!tmp_file(path, sizeof path, "-tf.swf.gz", build))
        return;
    char *data = NULL;
    size_t len = 0;
    struct err e;
    err_clear(&e);
    int rc = textfile_read(path, &data, &len, &e);
    if (want_text) {
        if (!CHECK_INT(rc, 0))
            fprintf(stderr, "  %s: %s\n", what, e.msg);
        else if (!CHECK(len == strlen(want_text) && memcmp(data, want_text, len) == 0 && data[len] == '\0'))
            fprintf(stderr, "  %s: read '%.*s'\n", what, (int)len, data);
    } else {
        char want[512];
        snprintf(want, sizeof want, "corrupt gzip data in '%s': %s", path, want_err);
        CHECK_INT(rc, -1);
        if (!CHECK_STR(e.msg, want))
            fprintf(stderr, "  %s\n", what);
    }
    free(data);
    unlink(path);
}

#define TF_A "; MaxProcs: 8\r\n1 0 0 10 2" TAIL13 "\r\n"
#define TF_B "2 3 0 10 4" TAIL13 "\n"

static void tf_one(FILE *f) { gz_member(f, TF_A TF_B); }
static void tf_two(FILE *f) { gz_member(f, TF_A); gz_member(f, TF_B); }
static void tf_three(FILE *f) { gz_member(f, TF_A); gz_member(f, ""); gz_member(f, TF_B); }
static void tf_garbage(FILE *f) { gz_member(f, TF_A TF_B); fputs("not gzip", f); }
static void tf_magic_after(FILE *f) { gz_member(f, TF_A TF_B); fputs("\x1f\x8bxx", f); }

/* A member whose trailer is damaged by flip(trailer) (the CRC at 0..3,
 * ISIZE at 4..7), or cut short by cut bytes. */
static void tf_member_edit(FILE *f, int flip_at, size_t cut)
{
    char tmp[256];
    tmp_path(tmp, sizeof tmp, "-tf-part.gz");
    FILE *m = fopen(tmp, "w+b");
    if (!m)
        return;
    gz_member(m, TF_A TF_B);
    long n = ftell(m);
    unsigned char buf[4096];
    rewind(m);
    size_t got = fread(buf, 1, sizeof buf, m);
    fclose(m);
    unlink(tmp);
    if (got != (size_t)n || got < 8)
        return;
    if (flip_at >= 0)
        buf[got - 8 + (size_t)flip_at] ^= 0x01;
    fwrite(buf, 1, got - cut, f);
}
static void tf_bad_crc(FILE *f) { tf_member_edit(f, 0, 0); }
static void tf_isize_bigger(FILE *f) { tf_member_edit(f, 5, 0); } /* ISIZE + 256 */
static void tf_isize_zero(FILE *f)
{
    tf_member_edit(f, -1, 4);
    fwrite("\0\0\0\0", 1, 4, f);
}
static void tf_truncated(FILE *f) { tf_member_edit(f, -1, 30); }
static void tf_trailer_cut(FILE *f) { tf_member_edit(f, -1, 3); }
static void tf_plain(FILE *f) { fputs(TF_A TF_B, f); }
static void tf_empty(FILE *f) { (void)f; }

/* The one-call inflate and zlib's stream must read every gzip file alike:
 * members concatenated, trailing bytes ignored, a wrong trailer or a cut
 * stream an error with zlib's reason. */
static void test_textfile_gzip_shapes(void)
{
    check_textfile("one member", tf_one, TF_A TF_B, NULL);
    check_textfile("two members", tf_two, TF_A TF_B, NULL);
    check_textfile("an empty member between", tf_three, TF_A TF_B, NULL);
    check_textfile("trailing garbage", tf_garbage, TF_A TF_B, NULL);
    check_textfile("plain text", tf_plain, TF_A TF_B, NULL);
    check_textfile("empty file", tf_empty, "", NULL);
    check_textfile("magic after the member", tf_magic_after, NULL, "unknown compression method");
    check_textfile("bad crc", tf_bad_crc, NULL, "incorrect data check");
    check_textfile("isize too big", tf_isize_bigger, NULL, "incorrect length check");
    check_textfile("isize zero", tf_isize_zero, NULL, "incorrect length check");
    check_textfile("truncated", tf_truncated, NULL, "unexpected end of file");
    check_textfile("trailer cut", tf_trailer_cut, NULL, "unexpected end of file");
}

/* A file opened as "-" may have been partly read already: the rest is what
 * counts, for plain and gzip'd input. */
static void tf_skip_then_member(FILE *f)
{
    fputs("skip me\n", f);
    gz_member(f, TF_B);
}

static void test_textfile_stdin_offset(void)
{
    char path[256];
    if (!tmp_file(path, sizeof path, "-off.swf", tf_skip_then_member))
        return;
    int saved = dup(STDIN_FILENO);
    FILE *in = freopen(path, "rb", stdin);
    if (!CHECK(in != NULL && saved >= 0))
        return;
    CHECK_INT(lseek(STDIN_FILENO, 8, SEEK_SET), 8);
    char *data = NULL;
    size_t len = 0;
    struct err e;
    err_clear(&e);
    CHECK_INT(textfile_read("-", &data, &len, &e), 0);
    CHECK(data && len == strlen(TF_B) && memcmp(data, TF_B, len) == 0);
    free(data);
    dup2(saved, STDIN_FILENO);
    close(saved);
    clearerr(stdin);
    unlink(path);
}

/* Decimals are read without strtod where an exact fast path exists; the
 * value must be strtod's to the last bit. Users and groups that are not
 * plain digits are interned as "%.17g" of the value, which shows it. */
static void test_swf_decimal_values(void)
{
    static const char *const toks[] = {
        "552.21", "0.1", "0.3", "-.5", "5.", ".25", "3.14159265358979", "123456789012345.6",
        "12345678901234.5", "0.000000000000001", "99999999999999.9", "1.0000000000000002",
        "00000000000000000000001.5", "1e-7", "2.5E3", "+1.5", "9007199254740993", "1234567890123456",
        "-0.0", "7.000",
    };
    char text[8192];
    size_t o = 0;
    size_t n = sizeof toks / sizeof *toks;
    for (size_t i = 0; i < n; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%zu 0 0 10 2 -1 -1 2 20 -1 1 %s 1 -1 -1 -1 -1 -1\n",
                              i + 1, toks[i]);
    struct reader_case c;
    swf_case_read(&c, text, SWF_REPLAY);
    CHECK_INT(c.rc, 0);
    if (CHECK_INT(c.w.n, n)) {
        for (size_t i = 0; i < n; i++) {
            double v = strtod(toks[i], NULL);
            char want[64];
            if (v < 0)
                snprintf(want, sizeof want, "(unknown)");
            else if (v == (double)(long long)v && strspn(toks[i], "0123456789") == strlen(toks[i]))
                snprintf(want, sizeof want, "%s", toks[i] + strspn(toks[i], "0") -
                                                     (strspn(toks[i], "0") == strlen(toks[i])));
            else if (v == (double)(long long)v)
                snprintf(want, sizeof want, "%lld", (long long)v);
            else
                snprintf(want, sizeof want, "%.17g", v);
            const char *got = c.w.jobs[i].user < 0 ? "(unknown)" : string_table_get(&c.w.users, c.w.jobs[i].user);
            if (!CHECK_STR(got, want))
                fprintf(stderr, "  token '%s'\n", toks[i]);
        }
    }
    reader_case_release(&c);
}

static void write_one_jsonl_job(FILE *f)
{
    fputs("\n  {\"submit_s\":1,\"runtime_s\":2,\"gpus\":3}\n", f);
}

static void test_trace_format_detection(void)
{
    CHECK_INT(trace_format_from_name("a/b.swf"), TRACE_SWF);
    CHECK_INT(trace_format_from_name("HPC2N.SWF.GZ"), TRACE_SWF);
    CHECK_INT(trace_format_from_name("x.jsonl"), TRACE_JSONL);
    CHECK_INT(trace_format_from_name("x.jsonl.gz"), TRACE_JSONL);
    CHECK_INT(trace_format_from_name("x.ndjson"), TRACE_JSONL);
    CHECK_INT(trace_format_from_name("x.log"), TRACE_AUTO);
    CHECK_INT(trace_format_from_name("swf"), TRACE_AUTO);

    char path[256];
    if (!tmp_file(path, sizeof path, ".trace", write_one_jsonl_job))
        return;
    struct workload w;
    struct err e;
    workload_init(&w);
    err_clear(&e);
    CHECK_INT(trace_read(path, TRACE_AUTO, SWF_RLSCHEDULER, &w, NULL, &e), 0);
    CHECK_INT(w.n ? w.jobs[0].slots : 0, 3);
    workload_release(&w);
    /* forced SWF: the '{' line is then not a number */
    workload_init(&w);
    err_clear(&e);
    CHECK_INT(trace_read(path, TRACE_SWF, SWF_REPLAY, &w, NULL, &e), -1);
    CHECK_INT(e.line, 2);
    workload_release(&w);
    unlink(path);
}

/* ---- the real logs ---- */

static char shared_path[4096]; /* the path of the last read_shared, for messages */

static int read_shared(const char *name, enum swf_convention conv, struct workload *w,
                       struct diag_list *d)
{
    const char *path = test_shared_trace(name);
    if (!path) {
        char why[256];
        snprintf(why, sizeof why, "%s not found in ../shared/traces (set FLEETSIM_SHARED_TRACES)", name);
        test_skip(why);
        return -1;
    }
    snprintf(shared_path, sizeof shared_path, "%s", path);
    struct err e;
    err_clear(&e);
    workload_init(w);
    diag_list_init(d, 100);
    int rc = swf_read(path, conv, w, d, &e);
    CHECK_INT(rc, 0);
    return 0;
}

static void test_real_hpc2n(void)
{
    struct workload w;
    struct diag_list d;
    if (read_shared("HPC2N-2002-2.2-cln.swf.gz", SWF_REPLAY, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 202871);
    CHECK_INT(w.meta.max_procs, 240);
    CHECK_INT(w.meta.max_nodes, 240);
    CHECK_INT(w.meta.unix_start_s, 1027839845);
    CHECK_INT(d.n, 0);
    CHECK_INT(w.jobs[0].id, 11);
    CHECK_INT(w.jobs[1].runtime_us, 553000000LL);
    CHECK_INT(workload_max_slots(&w), 200);
    CHECK_INT(w.users.n, 257);
    workload_release(&w);
    diag_list_release(&d);
}

static void test_real_hpc2n_rlscheduler(void)
{
    struct workload w;
    struct diag_list d;
    if (read_shared("HPC2N-2002-2.2-cln.swf.gz", SWF_RLSCHEDULER, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 202871);
    CHECK_INT(w.meta.max_procs, 240);
    /* the first ids of the published windows (validation/rlscheduler-tables.md) */
    if (CHECK(w.n > 8850)) {
        CHECK_INT(w.jobs[1981].id, 5278);
        CHECK_INT(w.jobs[2756].id, 6736);
        CHECK_INT(w.jobs[4299].id, 28533);
        CHECK_INT(w.jobs[8850].id, 86988);
    }
    workload_release(&w);
    diag_list_release(&d);
}

static void test_real_lublin(void)
{
    struct workload w;
    struct diag_list d;
    if (read_shared("lublin_256.swf.gz", SWF_RLSCHEDULER, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 10000);
    CHECK_INT(w.meta.max_nodes, 256);
    CHECK_INT(w.meta.max_procs, 256);
    CHECK_INT(d.n, 0);
    if (CHECK(w.n > 8850)) {
        CHECK_INT(w.jobs[1981].id, 1982);
        CHECK_INT(w.jobs[2756].id, 2757);
        CHECK_INT(w.jobs[4299].id, 4300);
        CHECK_INT(w.jobs[8850].id, 8851);
        /* field 9 is -1 throughout: the request is the run time */
        CHECK_INT(w.jobs[0].limit_us, w.jobs[0].runtime_us);
    }
    workload_release(&w);
    diag_list_release(&d);
    if (read_shared("lublin_256.swf.gz", SWF_REPLAY, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 10000);
    CHECK_INT(w.meta.max_procs, -1);
    CHECK_INT(w.jobs[0].limit_us, -1);
    workload_release(&w);
    diag_list_release(&d);
}

static void test_real_mira(void)
{
    struct workload w;
    struct diag_list d;
    if (read_shared("ALCF-Mira.swf.gz", SWF_REPLAY, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 22508);
    CHECK_INT(w.meta.unix_start_s, 1535348017);
    CHECK_INT(w.meta.max_procs, 49152);
    CHECK_INT(w.jobs[0].submit_us, 0);
    CHECK_INT(w.jobs[0].id, 35079);
    CHECK_STR(string_table_get(&w.users, w.jobs[0].user), "35012304659472");
    CHECK_INT(w.users.n, 160);
    CHECK_INT(d.n, 1);
    char want[4200];
    snprintf(want, sizeof want,
             "%s:5:7: warning: submit times look absolute (epoch seconds): made relative to the "
             "first job",
             shared_path);
    CHECK(has_diag(&d, want));
    workload_release(&w);
    diag_list_release(&d);
}

static void test_real_metacentrum(void)
{
    struct workload w;
    struct diag_list d;
    if (read_shared("METACENTRUM-2009-2.swf.gz", SWF_REPLAY, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 103656);
    CHECK_INT(w.meta.max_nodes, -1); /* no header at all */
    CHECK_INT(w.meta.max_procs, -1);
    CHECK_INT(w.meta.unix_start_s, -1);
    CHECK_INT(d.n, 0);
    CHECK_INT(workload_max_slots(&w), 60);
    workload_release(&w);
    diag_list_release(&d);
}

static void test_real_others(void)
{
    struct workload w;
    struct diag_list d;
    /* Thunder: 1,190 jobs without a submit time, 1,058 without a size */
    if (read_shared("LLNL-Thunder-2007-1.1-cln.swf.gz", SWF_REPLAY, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 118791);
    CHECK_INT(w.meta.skipped_at_read, 2248);
    CHECK_INT(d.n, 22); /* 10 + 10 shown, 2 summaries */
    workload_release(&w);
    diag_list_release(&d);
    /* wagap: Alea's extended SWF, 21 fields, absolute times, no header */
    if (read_shared("wagap-2013.swf.gz", SWF_REPLAY, &w, &d) != 0)
        return;
    CHECK_INT(w.n, 17898);
    CHECK_INT(w.meta.skipped_at_read, 2);
    CHECK_INT(w.meta.unix_start_s, 1356996147);
    CHECK_INT(d.n, 4);
    workload_release(&w);
    diag_list_release(&d);
}


/* ---- reading in chunks (swf_read_buffer_chunks) against the serial read ---- */

/* Reads text serially and in 2 to 8 chunks under both conventions; whether
 * every chunked read is the serial one. */
static int swf_chunks_agree(const char *text, size_t len)
{
    static const enum swf_convention convs[] = {SWF_REPLAY, SWF_RLSCHEDULER};
    int ok = 1;
    for (size_t v = 0; v < 2 && ok; v++) {
        struct reader_case serial;
        reader_case_begin(&serial);
        serial.rc = swf_read_buffer_chunks("t.swf", text, len, convs[v], 1, &serial.w, &serial.d, &serial.e);
        for (int chunks = 2; chunks <= 8 && ok; chunks++) {
            struct reader_case c;
            reader_case_begin(&c);
            c.rc = swf_read_buffer_chunks("t.swf", text, len, convs[v], chunks, &c.w, &c.d, &c.e);
            ok = reader_case_same(&serial, &c);
            if (!ok)
                printf("  (%d chunks, convention %zu, log:\n%.*s)\n", chunks, v, (int)len, text);
            reader_case_release(&c);
        }
        reader_case_release(&serial);
    }
    return ok;
}

/* text read in 1 to max_chunks chunks: returns rc, n jobs in an array of
 * cap. */
static void check_sized_once(const char *text, size_t len, int max_chunks, int rc, size_t n, size_t cap)
{
    for (int chunks = 1; chunks <= max_chunks; chunks++) {
        struct reader_case c;
        reader_case_begin(&c);
        c.rc = swf_read_buffer_chunks("t.swf", text, len, SWF_REPLAY, chunks, &c.w, &c.d, &c.e);
        CHECK_INT(c.rc, rc);
        CHECK_INT(c.w.n, n);
        if (!CHECK_INT(c.w.cap, cap))
            printf("  %d chunks, %zu bytes\n", chunks, len);
        reader_case_release(&c);
    }
}

/* A read sizes its job array once, by the lines it reads (growing it by
 * doubling copied it at every step: half a replay's page faults on HPC2N),
 * serially and in chunks; the line count it uses, on the shapes a buffer
 * ends in. */
static void test_swf_sizes_array_once(void)
{
    static const struct {
        const char *text;
        size_t lines;
    } shapes[] = {{"", 0}, {"a", 1}, {"a\n", 1}, {"a\nb", 2}, {"\n\n", 2}, {"a\n\nb\n", 3}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        struct textfile_lines it;
        textfile_lines_init_piece(&it, shapes[k].text, 0, strlen(shapes[k].text));
        if (!CHECK_INT(textfile_lines_left(&it), shapes[k].lines))
            printf("  lines of \"%s\"\n", shapes[k].text);
    }
    /* a flood of empty lines: one record per 16 bytes at most */
    char empty[1000];
    memset(empty, '\n', sizeof empty);
    struct textfile_lines it;
    textfile_lines_init_piece(&it, empty, 0, sizeof empty);
    CHECK_INT(textfile_lines_left(&it), 1000);
    CHECK_INT(textfile_records_bound(&it, TEXTFILE_RECORD_MIN), 1000 / TEXTFILE_RECORD_MIN + 1);
    char text[8192];
    size_t o = (size_t)snprintf(text, sizeof text, "; MaxProcs: 64\n;\n");
    for (int i = 0; i < 100; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%d %d 0 10 4" TAIL13 "\n", i + 1, i * 5);
    check_sized_once(text, o, 4, 0, 100, 102); /* 100 jobs and 2 comments: the lines, not a power of two */
    /* the shortest job lines (5 fields of one byte, 10 bytes a line): a
     * bound of one job per 16 bytes left a piece's room short, the read in
     * chunks fell back to the serial one, which grew its array by doubling */
    o = 0;
    for (int i = 0; i < 400; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%d 0 0 1 1\n", i % 10);
    check_sized_once(text, o, 4, 0, 400, 400);
    /* nothing to read, in any number of chunks: no array to point into
     * (clang's UBSan stopped on NULL + 0) */
    check_sized_once("", 0, 8, -1, 0, 0); /* no job: an error */
    check_sized_once("\xEF\xBB\xBF", 3, 8, -1, 0, 0);
}

/* One out-of-order submit, at every line in turn: with 2 to 8 chunks it
 * falls on each side of the cuts and right at them. */
static void test_swf_chunks_order_at_cut(void)
{
    for (int bad = 1; bad < 24; bad++) {
        char text[4096];
        size_t o = 0;
        for (int i = 0; i < 24; i++)
            o += (size_t)snprintf(text + o, sizeof text - o, "%d %d 0 100 4 -1 -1 4 200 -1 1 %d 1 -1 -1 1 -1 -1\n",
                                  i + 1, i == bad ? 3 : 10 * i + 10, i % 5);
        if (!CHECK(swf_chunks_agree(text, o)))
            return;
    }
    /* and what the chunks agree on is the serial read's warning */
    char text[] = "1 10 0 100 4\n2 20 0 100 4\n3 15 0 100 4\n4 30 0 100 4\n";
    struct reader_case c;
    reader_case_begin(&c);
    c.rc = swf_read_buffer_chunks("t.swf", text, strlen(text), SWF_REPLAY, 3, &c.w, &c.d, &c.e);
    CHECK(has_diag(&c.d, "t.swf:3:3: warning: submit time 15 is earlier than the previous job's 20: "
                         "jobs sorted by submit time"));
    reader_case_release(&c);
}

/* How a random log leans: errors per 100 lines; each oddity of a job line
 * comes with a chance of 1 in `odd` (30: a few; 4: most lines, so that a
 * chunk alone passes a warning's cap); submits from `base`. */
struct swf_random_log {
    int error_rate, odd;
    long long base;
};

static int swf_random_odd(struct pcg32 *rng, const struct swf_random_log *how)
{
    return pcg32_bounded(rng, (uint32_t)how->odd) == 0;
}

/* One line of a random log: mostly jobs, and every kind of thing a reader
 * has to carry from line to line or from chunk to chunk. */
static size_t swf_random_line(struct pcg32 *rng, const struct swf_random_log *how, int lineno, char *buf,
                              size_t cap)
{
    static const char *const users[] = {"7", "007", "+7", "12", "3.5", "98765432109876543210", "-1", "0"};
    static const char *const ends[] = {"\n", "\n", "\n", "\r\n", " \t\n"};
    const char *end = ends[pcg32_bounded(rng, 5)];
    if ((int)pcg32_bounded(rng, 100) < how->error_rate) {
        static const char *const bad[] = {"1 2 3 zz 5", "1 2 \x01 4 5", "1 1e13 0 1 1", "1 0 0 1 2.5"};
        return (size_t)snprintf(buf, cap, "%s%s", bad[pcg32_bounded(rng, 4)], end);
    }
    uint32_t k = pcg32_bounded(rng, 100);
    if (k < 3)
        return (size_t)snprintf(buf, cap, "; MaxProcs: %u%s", 1 + pcg32_bounded(rng, 64), end);
    if (k < 5)
        return (size_t)snprintf(buf, cap, "; MaxNodes: %u%s", pcg32_bounded(rng, 16), end);
    if (k < 6 && how->base == 0) /* one would keep absolute submits as they are */
        return (size_t)snprintf(buf, cap, "; UnixStartTime: %u%s", pcg32_bounded(rng, 9), end);
    if (k < 8)
        return (size_t)snprintf(buf, cap, "; a note%s", end);
    if (k < 10)
        return (size_t)snprintf(buf, cap, "%s", end);
    if (swf_random_odd(rng, how))
        return (size_t)snprintf(buf, cap, "%d %lld 0%s", lineno, how->base + 10LL * lineno, end); /* too short */
    if (swf_random_odd(rng, how))
        return (size_t)snprintf(buf, cap, "%d %lld 0 100 4 -1 -1 4%s", lineno, how->base + 10LL * lineno, end);
    /* long long: with base 1200000000 the jump below passes INT_MAX */
    long long submit = how->base + 10LL * lineno;
    if (swf_random_odd(rng, how)) /* out of order */
        submit = how->base + (long long)pcg32_bounded(rng, (uint32_t)(10 * lineno));
    if (swf_random_odd(rng, how)) /* below all before (unknown when negative) */
        submit = how->base - (long long)pcg32_bounded(rng, 100);
    if (swf_random_odd(rng, how))
        submit += 1200000000; /* absolute, or from absolute a jump of 38 years */
    if (swf_random_odd(rng, how))
        submit = -1;
    int run = swf_random_odd(rng, how) ? -1 : swf_random_odd(rng, how) ? 0 : (int)pcg32_bounded(rng, 500);
    int procs = swf_random_odd(rng, how) ? -1 : 1 + (int)pcg32_bounded(rng, 8);
    int id = swf_random_odd(rng, how) ? 5 : lineno;
    const char *request = swf_random_odd(rng, how) ? "-1" : "300";
    size_t o = (size_t)snprintf(buf, cap, "%d %lld 0 %d %d -1 -1 %d %s -1 1 %s %u -1 -1 1 -1 -1%s", id, submit,
                                run, procs, procs, request, users[pcg32_bounded(rng, 8)], pcg32_bounded(rng, 4),
                                swf_random_odd(rng, how) ? " 42 extra" : "");
    return o + (size_t)snprintf(buf + o, cap - o, "%s", end);
}

/* Random logs of every sort (no error, a few, more than the limit; few odd
 * lines or mostly odd ones, so that a chunk alone passes a warning's cap;
 * relative or absolute submits; a byte-order mark, no final newline) read
 * in 2 to 8 chunks. */
static void test_swf_chunks_random_logs(void)
{
    struct pcg32 rng;
    pcg32_stream(&rng, 2024, RNG_TEST, 7);
    enum { CAP = 16384 };
    char *text = malloc(CAP);
    if (!CHECK(text != NULL))
        return;
    for (int round = 0; round < 400; round++) {
        static const int error_rates[] = {0, 0, 0, 2, 40};
        struct swf_random_log how = {error_rates[round % 5], round % 4 == 1 ? 4 : 30,
                                     round % 6 == 2 ? 1200000000 : 0};
        size_t o = round % 7 == 0 ? (size_t)snprintf(text, CAP, "\xEF\xBB\xBF") : 0;
        for (int i = 0; round % 8 == 2 && i < 100; i++) /* the first chunks without a job */
            o += (size_t)snprintf(text + o, CAP - o, "; a note\n");
        int lines = 20 + (int)pcg32_bounded(&rng, 120);
        for (int i = 1; i <= lines && o < CAP - 256; i++)
            o += swf_random_line(&rng, &how, i, text + o, CAP - o);
        if (round % 3 == 0 && o > 0 && text[o - 1] == '\n')
            o--; /* no final newline */
        if (!CHECK(swf_chunks_agree(text, o)))
            break;
    }
    free(text);
}

/* A log of about `bytes` of good job lines after `bad` lines that are
 * errors; NULL if no memory. */
static char *swf_big_log(size_t bytes, int bad, size_t *len)
{
    char *text = malloc(bytes + 256);
    size_t o = 0;
    for (int i = 0; text && i < bad; i++)
        o += (size_t)snprintf(text + o, 256, "%d x 0 100 4\n", i + 1);
    for (long i = 1; text && o < bytes; i++)
        o += (size_t)snprintf(text + o, 256, "%ld %ld 0 %ld 4 -1 -1 4 200 -1 1 %ld %ld -1 -1 1 -1 -1\n", i, 10 * i,
                              i % 300, i % 97, i % 13);
    *len = o;
    return text;
}

/* The chunks follow the processors this process may run on (its affinity
 * mask, as taskset sets it), not all there are. */
static void test_swf_chunks_follow_affinity(void)
{
    cpu_set_t saved, one;
    if (!CHECK(sched_getaffinity(0, sizeof saved, &saved) == 0))
        return;
    size_t big = (size_t)64 << 20;
    if (CPU_COUNT(&saved) > 1)
        CHECK(swf_chunks_for(big) > 1);
    CPU_ZERO(&one);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &saved)) {
            CPU_SET(cpu, &one);
            break;
        }
    if (!CHECK(sched_setaffinity(0, sizeof one, &one) == 0))
        return;
    CHECK_INT(swf_chunks_for(big), 1);
    CHECK(sched_setaffinity(0, sizeof saved, &saved) == 0);
}

/* Stopped after 20 errors at the top, the read in chunks is the serial
 * one, byte for byte, while the chunks' threads are told to stop reading
 * their pieces (that they stop quickly is a speed matter: the closing note
 * of issue #12 gives the figures; a timed unit test would be noise on a
 * shared machine). */
static void test_swf_chunks_stop_early(void)
{
    size_t len;
    char *text = swf_big_log((size_t)24 << 20, 25, &len);
    if (!CHECK(text != NULL))
        return;
    struct reader_case serial, c;
    reader_case_begin(&serial);
    serial.rc = swf_read_buffer_chunks("t.swf", text, len, SWF_REPLAY, 1, &serial.w, &serial.d, &serial.e);
    CHECK(has_diag(&serial.d, "t.swf:21: error: too many errors, stopping"));
    reader_case_begin(&c);
    c.rc = swf_read_buffer_chunks("t.swf", text, len, SWF_REPLAY, 8, &c.w, &c.d, &c.e);
    CHECK(reader_case_same(&serial, &c));
    reader_case_release(&c);
    reader_case_release(&serial);
    free(text);
}

/* ---- a gzip'd log read as it inflates (swf_read_chunks) ---- */

/* Writes text as one gzip member (gzopen's, level 1: these logs are
 * megabytes) to path. Returns 1 when it could. */
static int gz_write_text(const char *path, const char *text, size_t len)
{
    gzFile gz = gzopen(path, "wb1");
    if (!CHECK(gz != NULL))
        return 0;
    int ok = 1;
    for (size_t o = 0; ok && o < len; o += 1 << 20) {
        unsigned n = len - o < (1u << 20) ? (unsigned)(len - o) : 1u << 20;
        ok = gzwrite(gz, text + o, n) == (int)n;
    }
    return CHECK(gzclose(gz) == Z_OK && ok);
}

/* The file at path (text gzip'd) read in `chunks` pieces, parsed as it
 * inflates, against the serial read of text under that name, in both
 * conventions: whether they agree in everything. */
static int swf_stream_agrees(const char *path, const char *text, size_t len, int chunks)
{
    static const enum swf_convention convs[] = {SWF_REPLAY, SWF_RLSCHEDULER};
    int ok = 1;
    for (size_t v = 0; v < 2 && ok; v++) {
        struct reader_case serial, c;
        reader_case_begin(&serial);
        serial.rc = swf_read_buffer_chunks(path, text, len, convs[v], 1, &serial.w, &serial.d, &serial.e);
        reader_case_begin(&c);
        c.rc = swf_read_chunks(path, convs[v], chunks, &c.w, &c.d, &c.e);
        ok = reader_case_same(&serial, &c);
        if (!ok)
            printf("  (%d chunks, convention %zu, %zu bytes)\n", chunks, v, len);
        reader_case_release(&c);
        reader_case_release(&serial);
    }
    return ok;
}

/* Random logs of a few MB (the text arrives in pieces of 256 KB, so lines
 * straddle them, and the first piece's end falls anywhere): errors, odd
 * lines past a warning's cap in the first piece alone, headers, absolute
 * submits, a byte-order mark, no final newline, a line longer than a piece
 * where the first piece ends, and more than the errors allowed at the top
 * (the readers of the later pieces are told to stop), read in 2, 3 and 8
 * pieces. */
static void test_swf_stream_random_logs(void)
{
    char path[256];
    tmp_path(path, sizeof path, "-stream.swf.gz");
    struct pcg32 rng;
    pcg32_stream(&rng, 2026, RNG_TEST, 11);
    size_t cap = (size_t)3 << 20;
    char *text = malloc(cap + 4096);
    if (!CHECK(text != NULL))
        return;
    for (int round = 0; round < 6; round++) {
        static const int error_rates[] = {0, 0, 1, 0, 0, 0};
        struct swf_random_log how = {error_rates[round], round == 1 ? 4 : 30, round == 3 ? 1200000000 : 0};
        size_t o = round == 4 ? (size_t)snprintf(text, cap, "\xEF\xBB\xBF") : 0;
        size_t size = ((size_t)1 << 20) + pcg32_bounded(&rng, 2u << 20);
        for (int i = 1; o < size; i++) {
            if (round == 5 && i == 20000) { /* a comment longer than a piece, about where the first ends */
                o += (size_t)snprintf(text + o, 8, "; ");
                memset(text + o, 'x', (size_t)600 << 10);
                o += (size_t)600 << 10;
                text[o++] = '\n';
            }
            if (o + 512 > cap)
                break;
            o += swf_random_line(&rng, &how, i, text + o, 512);
        }
        if (round == 2 && text[o - 1] == '\n')
            o--; /* no final newline */
        if (!gz_write_text(path, text, o))
            break;
        for (int chunks = 2; chunks <= 8; chunks += chunks == 3 ? 5 : 1)
            if (!CHECK(swf_stream_agrees(path, text, o, chunks)))
                goto done;
    }
    size_t len;
    char *top_bad = swf_big_log((size_t)3 << 20, 25, &len);
    if (CHECK(top_bad != NULL) && gz_write_text(path, top_bad, len))
        CHECK(swf_stream_agrees(path, top_bad, len, 2));
    free(top_bad);
done:
    free(text);
    unlink(path);
}

/* A small log is inflated before the reading thread runs on, and the tail
 * read at once by the inflating thread: all it reads must be set before it
 * starts (its array was set just after, and CI's bench suite crashed). Many
 * reads, to meet the moment. */
static void test_swf_stream_small_log_often(void)
{
    char path[256];
    tmp_path(path, sizeof path, "-small.swf.gz");
    char text[4096];
    size_t o = (size_t)snprintf(text, sizeof text, "; MaxProcs: 8\n");
    for (int i = 1; i <= 40; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%d %d 0 10 2" TAIL13 "\n", i, 3 * i);
    if (!gz_write_text(path, text, o))
        return;
    for (int k = 0; k < 3000; k++) {
        struct workload w;
        struct err e;
        workload_init(&w);
        err_clear(&e);
        int rc = swf_read_chunks(path, SWF_REPLAY, 2 + k % 7, &w, NULL, &e);
        int ok = rc == 0 && w.n == 40 && w.jobs[39].id == 40;
        workload_release(&w);
        if (!CHECK(ok))
            break;
    }
    unlink(path);
}

/* Every gzip file the stream cannot take (several members, trailing bytes,
 * a wrong trailer, a cut or corrupt stream, plain text, nothing) is read
 * the usual way: the result, and the error with zlib's reason, are those
 * of a read in one piece. */
static void test_swf_stream_falls_back(void)
{
    static const struct {
        const char *what;
        void (*build)(FILE *f);
    } shapes[] = {{"one member", tf_one},         {"two members", tf_two},
                  {"an empty member", tf_three},  {"trailing garbage", tf_garbage},
                  {"magic after", tf_magic_after}, {"bad crc", tf_bad_crc},
                  {"isize too big", tf_isize_bigger}, {"isize zero", tf_isize_zero},
                  {"truncated", tf_truncated},    {"trailer cut", tf_trailer_cut},
                  {"plain text", tf_plain},       {"empty file", tf_empty}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        char path[256];
        if (!tmp_file(path, sizeof path, "-fb.swf.gz", shapes[k].build))
            return;
        struct reader_case one, two;
        reader_case_begin(&one);
        one.rc = swf_read_chunks(path, SWF_REPLAY, 1, &one.w, &one.d, &one.e);
        reader_case_begin(&two);
        two.rc = swf_read_chunks(path, SWF_REPLAY, 2, &two.w, &two.d, &two.e);
        if (!CHECK(reader_case_same(&one, &two)))
            printf("  %s\n", shapes[k].what);
        reader_case_release(&one);
        reader_case_release(&two);
        unlink(path);
    }
}

/* A log read through a feed as a replay would (every job told waited for),
 * against the read in one piece: the same result, error and messages,
 * whether the feed stands (the jobs told are the workload's) or breaks, and
 * for gzip files it cannot take at all. */
static void swf_feed_check_file(const char *what, const char *path, int want_kept)
{
    struct reader_case one, fed;
    reader_case_begin(&one);
    one.rc = swf_read_chunks(path, SWF_REPLAY, 1, &one.w, &one.d, &one.e);
    reader_case_begin(&fed);
    struct workload_feed feed;
    struct swf_feed *f = swf_feed_start(path, &fed.w, &fed.d, &fed.e, &feed);
    int kept = -1, header = -2;
    if (f) {
        struct workload_meta head;
        header = swf_feed_header(f, &head); /* what a replay sizes its machine by */
        if (header == 0)
            CHECK(head.max_procs > 0);
        enum workload_feed_state state = WORKLOAD_FEED_MORE;
        size_t told = 0;
        while (state == WORKLOAD_FEED_MORE) {
            size_t now = feed.wait(feed.ctx, told + 1, &state);
            CHECK(now >= told); /* a count told never shrinks */
            told = now;
        }
        fed.rc = swf_feed_finish(f, &kept);
        if (kept == 1) {
            CHECK_INT(told, fed.w.n);
            CHECK_INT(header, 0); /* a feed that stands gave its header */
        }
    } else {
        fed.rc = swf_read_chunks(path, SWF_REPLAY, 1, &fed.w, &fed.d, &fed.e);
    }
    if (!CHECK(reader_case_same(&one, &fed)) || (want_kept >= 0 && !CHECK_INT(kept, want_kept)))
        printf("  %s\n", what);
    reader_case_release(&one);
    reader_case_release(&fed);
}

static void test_swf_feed(void)
{
    static const struct {
        const char *what;
        void (*build)(FILE *f);
        int kept; /* -1: not a file a feed starts on, or either way */
    } shapes[] = {{"one member", tf_one, 1},         {"two members", tf_two, 0},
                  {"an empty member", tf_three, 0},  {"trailing garbage", tf_garbage, 0},
                  {"magic after", tf_magic_after, 0}, {"bad crc", tf_bad_crc, 0},
                  {"isize too big", tf_isize_bigger, 0}, {"isize zero", tf_isize_zero, -1},
                  {"truncated", tf_truncated, 0},    {"trailer cut", tf_trailer_cut, 0},
                  {"plain text", tf_plain, -1},      {"empty file", tf_empty, -1}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        char path[256];
        if (!tmp_file(path, sizeof path, "-feed.swf.gz", shapes[k].build))
            return;
        swf_feed_check_file(shapes[k].what, path, shapes[k].kept);
        unlink(path);
    }
    /* a few MB: jobs told piece by piece; out of order, absolute, an error */
    char path[256];
    tmp_path(path, sizeof path, "-feed-big.swf.gz");
    static const char *const kinds[] = {"in order", "one out of order", "absolute", "an error"};
    for (int kind = 0; kind < 4; kind++) {
        size_t cap = (size_t)3 << 20, o = 0;
        char *text = malloc(cap + 256);
        if (!CHECK(text != NULL))
            return;
        o += (size_t)snprintf(text, 256, "; MaxProcs: 64\n");
        for (long i = 1; o < cap; i++) {
            long long submit = (kind == 2 ? 1300000000LL : 0) + 10 * i;
            if (kind == 1 && i == 20000)
                submit = 5;
            o += (size_t)snprintf(text + o, 256, kind == 3 && i == 30000 ? "%ld x 0 10 4\n"
                                  : "%ld %lld 0 %ld 4 -1 -1 4 200 -1 1 %ld 1 -1 -1 1 -1 -1\n",
                                  i, submit, i % 300, i % 97);
        }
        if (gz_write_text(path, text, o))
            swf_feed_check_file(kinds[kind], path, kind == 0);
        free(text);
    }
    unlink(path);
}

void suite_swf(void)
{
    test_run("swf header and fields", test_swf_header_and_fields);
    test_run("swf size fallback and limit", test_swf_size_fallback_and_limit);
    test_run("swf short lines", test_swf_short_lines);
    test_run("swf extra fields", test_swf_extra_fields);
    test_run("swf not a number", test_swf_not_a_number);
    test_run("swf error cap", test_swf_error_cap);
    test_run("swf binary garbage", test_swf_binary_garbage);
    test_run("swf high bytes quoted", test_swf_high_bytes_quoted);
    test_run("swf out of range", test_swf_out_of_range);
    test_run("swf empty", test_swf_empty);
    test_run("swf bad header value", test_swf_bad_header_value);
    test_run("swf absolute times", test_swf_absolute_times);
    test_run("swf unsorted", test_swf_unsorted);
    test_run("swf sizes its job array once", test_swf_sizes_array_once);
    test_run("swf chunks: order at the cut", test_swf_chunks_order_at_cut);
    test_run("swf chunks: random logs", test_swf_chunks_random_logs);
    test_run("swf chunks: follow the affinity mask", test_swf_chunks_follow_affinity);
    test_run("swf chunks: stop early", test_swf_chunks_stop_early);
    test_run("swf stream: random logs", test_swf_stream_random_logs);
    test_run("swf stream: falls back", test_swf_stream_falls_back);
    test_run("swf stream: a small log, often", test_swf_stream_small_log_often);
    test_run("swf feed: as a replay reads it", test_swf_feed);
    test_run("swf rlscheduler convention", test_swf_rlscheduler);
    test_run("swf gzip files", test_swf_gzip_files);
    test_run("textfile gzip shapes", test_textfile_gzip_shapes);
    test_run("textfile stdin offset", test_textfile_stdin_offset);
    test_run("swf decimal values", test_swf_decimal_values);
    test_run("trace format detection", test_trace_format_detection);
    test_run("swf real hpc2n", test_real_hpc2n);
    test_run("swf real hpc2n rlscheduler", test_real_hpc2n_rlscheduler);
    test_run("swf real lublin", test_real_lublin);
    test_run("swf real mira", test_real_mira);
    test_run("swf real metacentrum", test_real_metacentrum);
    test_run("swf real thunder and wagap", test_real_others);
}
