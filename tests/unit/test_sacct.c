/* Tests of traces/sacct.c: an inline `sacct -P` export in both time formats,
 * what is skipped and why, the errors with their positions, and detection
 * by trace_read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/suites.h"
#include "tests/unit/reader_case.h"
#include "tests/unit/test.h"
#include "traces/sacct.h"
#include "traces/trace.h"

static void sacct_case_read(struct reader_case *c, const char *text)
{
    reader_case_begin(c);
    c->rc = sacct_read_buffer("x.sacct", text, strlen(text), &c->w, &c->d, &c->e);
}

/* SLURM_TIME_FORMAT=%s sacct -a -X -P --format=JobIDRaw,JobID,User,Account,Partition,Submit,Start,End,
 * Elapsed,Timelimit,NNodes,AllocTRES,State (plus one step line and a CPU-only job, as exports have). */
static const char epoch_export[] =
    "JobIDRaw|JobID|User|Account|Partition|Submit|Start|End|Elapsed|Timelimit|NNodes|AllocTRES|State\n"
    "1001|1001|alice|vision|gpu|1704067200|1704067260|1704070860|01:00:00|02:00:00|1|"
    "billing=16,cpu=16,gres/gpu=8,mem=500G,node=1|COMPLETED\n"
    "1001.batch|1001.batch|||gpu|1704067260|1704067260|1704070860|01:00:00||1|cpu=16,gres/gpu=8,mem=500G,node=1|COMPLETED\n"
    "1002|1000_2|bob|nlp|gpu|1704067500|1704070000|1704243600|2-00:13:20|3-00:00:00|2|"
    "cpu=32,gres/gpu:a100=16,mem=1T,node=2|TIMEOUT\n"
    "1003|1003|carol|vision|cpu|1704067600|1704067600|1704067700|00:01:40|UNLIMITED|1|cpu=4,mem=8G,node=1|COMPLETED\n"
    "1004|1004|dave|nlp|gpu|1704067800|Unknown|Unknown|00:00:00|01:00:00|1|gres/gpu=1|PENDING\n"
    "1005|1005|erin|vision|gpu|1704067900|1704068000|Unknown|00:10:00|01:00:00|1|gres/gpu=4|RUNNING\n"
    "1006|1006|frank|nlp|gpu|1704068000|1704068100|1704068200|00:01:40|Partition_Limit|1|gres/gpu=2|CANCELLED by 1000\n";

static void test_sacct_epoch(void)
{
    struct reader_case c;
    sacct_case_read(&c, epoch_export);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 3);
    CHECK_INT(c.w.meta.unix_start_s, 1704067200);
    if (c.w.n == 3) {
        const struct job *a = &c.w.jobs[0], *b = &c.w.jobs[1], *f = &c.w.jobs[2];
        CHECK_INT(a->id, 1001);
        CHECK_INT(a->submit_us, 0);
        CHECK_INT(a->runtime_us, 3600 * SIM_US_PER_S);
        CHECK_INT(a->limit_us, 7200 * SIM_US_PER_S);
        CHECK_INT(a->slots, 8);
        CHECK_STR(string_table_get(&c.w.users, a->user), "alice");
        CHECK_STR(string_table_get(&c.w.teams, a->team), "vision");
        CHECK_INT(a->status, 1);
        CHECK_INT(a->job_class, -1);
        CHECK_INT(b->id, 1002); /* JobIDRaw, not the array's 1000_2 */
        CHECK_INT(b->submit_us, 300 * SIM_US_PER_S);
        CHECK_INT(b->runtime_us, (2 * 86400 + 800) * SIM_US_PER_S);
        CHECK_INT(b->limit_us, 3 * 86400 * SIM_US_PER_S);
        CHECK_INT(b->slots, 16); /* typed gres/gpu:a100 */
        CHECK_INT(b->status, 0);
        CHECK_INT(f->id, 1006);
        CHECK_INT(f->limit_us, -1);
        CHECK_INT(f->status, 5);
    }
    CHECK(has_diag(&c.d, "x.sacct:3:1: warning: job step skipped (export with -X for allocations only)"));
    CHECK(has_diag(&c.d, "x.sacct:5:1: warning: no gres/gpu in the job's TRES (a CPU-only job): skipped"));
    CHECK(has_diag(&c.d, "x.sacct:6:1: warning: job never started: skipped"));
    CHECK(has_diag(&c.d, "x.sacct:7:1: warning: job still running: skipped"));
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 0);
    reader_case_release(&c);
}

static void test_sacct_iso_times(void)
{
    /* sacct's default format is local time; the reader takes it as UTC and
     * says so once. Start/End without Elapsed give the runtime; TimelimitRaw
     * is minutes; Group stands in for Account. */
    struct reader_case c;
    sacct_case_read(&c, "JobID|Group|Submit|Start|End|TimelimitRaw|ReqTRES\r\n"
                        "7|g1|2024-01-01T10:00:00|2024-01-01T10:05:00|2024-01-01T11:05:00|90|gres/gpu=2\r\n"
                        "8|g2|2024-01-01T09:00:00|2024-01-01T09:00:00|2024-01-01T09:00:30|UNLIMITED|gres/gpu=1\r\n");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 2);
    CHECK_INT(c.w.meta.unix_start_s, 1704099600); /* 2024-01-01T09:00:00Z */
    if (c.w.n == 2) {
        CHECK_INT(c.w.jobs[0].id, 8);
        CHECK_INT(c.w.jobs[0].runtime_us, 30 * SIM_US_PER_S);
        CHECK_INT(c.w.jobs[0].limit_us, -1);
        CHECK_INT(c.w.jobs[1].submit_us, 3600 * SIM_US_PER_S);
        CHECK_INT(c.w.jobs[1].runtime_us, 3600 * SIM_US_PER_S);
        CHECK_INT(c.w.jobs[1].limit_us, 90 * 60 * SIM_US_PER_S);
        CHECK_STR(string_table_get(&c.w.teams, c.w.jobs[1].team), "g1");
    }
    CHECK(has_diag(&c.d, "x.sacct:2:1: warning: times like '2024-01-01T10:00:00' are the exporting host's local time "
                         "with no zone: read as UTC (export with SLURM_TIME_FORMAT=%s for exact times)"));
    CHECK_INT(diag_count(&c.d, DIAG_WARNING), 1);
    reader_case_release(&c);
}

static void test_sacct_errors(void)
{
    struct reader_case c;
    sacct_case_read(&c, "JobIDRaw|Submit|Elapsed|AllocTRES\n"
                        "1|17040672OO|01:00:00|gres/gpu=1\n"
                        "2|1704067200|1:xx|gres/gpu=1\n"
                        "3|1704067200|01:00:00\n"
                        "4|1704067200|01:00:00|gres/gpu=eight\n");
    CHECK(c.rc != 0);
    CHECK(has_diag(&c.d, "x.sacct:2:3: error: Submit '17040672OO' is not a time (epoch seconds or YYYY-MM-DDTHH:MM:SS)"));
    CHECK(has_diag(&c.d, "x.sacct:3:14: error: Elapsed '1:xx' is not a duration ([D-]HH:MM:SS)"));
    CHECK(has_diag(&c.d, "x.sacct:4:1: error: 3 fields, expected 4 as in the header (a '|' inside a field?)"));
    CHECK(has_diag(&c.d, "x.sacct:5:23: error: AllocTRES 'gres/gpu=eight' is not a TRES list with a whole gres/gpu count"));
    CHECK(c.e.set);
    reader_case_release(&c);
    sacct_case_read(&c, "JobID|User|Start\n1|a|1704067200\n");
    CHECK(c.rc != 0);
    CHECK(has_diag(&c.d, "x.sacct:1:1: error: no column 'Submit' in the sacct header (export it with --format)"));
    reader_case_release(&c);
    /* no job has a GPU count: the accounting does not track gres/gpu */
    sacct_case_read(&c, "JobID|Submit|Elapsed|AllocTRES\n1|1704067200|00:10:00|cpu=4,mem=1G\n");
    CHECK(c.rc != 0);
    CHECK(has_diag(&c.d, "x.sacct: error: no jobs in 'x.sacct' (no job has a gres/gpu count: is gres/gpu in "
                         "AccountingStorageTRES?)"));
    reader_case_release(&c);
}

static void test_sacct_detect(void)
{
    CHECK(sacct_detect("JobIDRaw|Submit\n", 16));
    CHECK(sacct_detect("\xEF\xBB\xBFJobID|x", 11));
    CHECK(!sacct_detect("JobID Submit\n1|2\n", 17));
    CHECK(!sacct_detect("; SWF\n", 6));
    char path[256];
    snprintf(path, sizeof path, "/tmp/fleetsim-test-sacct-%ld.txt", (long)getpid());
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL))
        return;
    fputs(epoch_export, f);
    fclose(f);
    struct workload w;
    struct diag_list d;
    struct err e;
    workload_init(&w);
    diag_list_init(&d, 100);
    err_clear(&e);
    CHECK_INT(trace_read(path, TRACE_AUTO, SWF_REPLAY, &w, &d, &e), 0);
    CHECK_INT(w.n, 3);
    workload_release(&w);
    diag_list_release(&d);
    unlink(path);
}

void suite_sacct(void)
{
    test_run("sacct epoch export", test_sacct_epoch);
    test_run("sacct iso times", test_sacct_iso_times);
    test_run("sacct errors", test_sacct_errors);
    test_run("sacct detect", test_sacct_detect);
}
