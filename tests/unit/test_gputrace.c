/* Tests of the GPU-cluster trace readers (traces/philly.c, helios.c, pai.c,
 * openb.c, itp.c, machines.c, gpufmt.c) and of traces/gpustats.c: small
 * inline files in each documented format, with the messy rows real logs
 * have (missing attempts, empty GPU lists, unparseable times, duplicate ids),
 * every diagnostic checked word for word with its line and column, and
 * detection by trace_read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/cluster.h"
#include "tests/unit/reader_case.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"
#include "traces/gpufmt.h"
#include "traces/gpustats.h"
#include "traces/helios.h"
#include "traces/itp.h"
#include "traces/jsonl.h"
#include "traces/machines.h"
#include "traces/openb.h"
#include "traces/pai.h"
#include "traces/philly.h"
#include "traces/trace.h"

#define S(x) ((sim_time)(x) * SIM_US_PER_S)

/* ---- gpufmt ---- */

static void test_gpufmt_split_and_times(void)
{
    struct gpufmt_row row;
    const char *line = "a,\"b,c\",, d \r";
    gpufmt_split(line, strlen(line), &row);
    CHECK_INT(row.n, 4);
    CHECK_INT(row.len[1], 3);
    CHECK(memcmp(row.p[1], "b,c", 3) == 0);
    CHECK_INT(row.len[2], 0);
    CHECK_INT(gpufmt_col(&row, 3), 10);
    CHECK_INT(gpufmt_find(&row, "D"), 3);
    int64_t t;
    CHECK_INT(gpufmt_datetime("2017-10-07 01:12:09", 19, &t), 0);
    CHECK_INT(t, 1507338729);
    CHECK_INT(gpufmt_datetime("2017-13-07 01:12:09", 19, &t), -1);
    CHECK_INT(gpufmt_datetime("2017-10-07 01:12", 16, &t), -1);
    double v;
    CHECK_INT(gpufmt_time("None", 4, &v), 0);
    CHECK_INT(gpufmt_time("12.5", 4, &v), 1);
    CHECK_NEAR(v, 12.5, 1e-9);
    CHECK_INT(gpufmt_time("0x10", 4, &v), -1);
    CHECK_INT(gpufmt_time("inf", 3, &v), -1);
}

/* ---- ITP ---- */

static void itp_case(struct reader_case *c, const char *text)
{
    reader_case_begin(c);
    c->rc = itp_read_buffer("c.csv", text, strlen(text), &c->w, &c->d, &c->e);
}

static void test_itp_reads(void)
{
    struct reader_case c;
    itp_case(&c, "job_id,submission_time,duration,num_gpu\n"
                 "965d744f-0445,1932025,2429,64\n"
                 "fb10987f-20ac,2000581,1532,1\n"
                 "77,1000,600,8\n"
                 "aa,1500,700,0\n"
                 "fb10987f-20ac,2000600,99,1"); /* no newline at the end, as the release */
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 3);
    CHECK_INT(c.w.meta.skipped_at_read, 2);
    CHECK_INT(c.w.meta.unix_start_s, -1);
    if (c.w.n == 3) {
        CHECK_INT(c.w.jobs[0].id, 77); /* a numeric job_id is kept; sorted by submit */
        CHECK_INT(c.w.jobs[0].submit_us, S(1000));
        CHECK_INT(c.w.jobs[1].id, 1); /* a UUID: the row number */
        CHECK_INT(c.w.jobs[1].submit_us, S(1932025));
        CHECK_INT(c.w.jobs[1].runtime_us, S(2429));
        CHECK_INT(c.w.jobs[1].slots, 64);
        CHECK_INT(c.w.jobs[1].status, -1);
        CHECK_INT(c.w.jobs[1].wait_known, 0);
        CHECK_INT(c.w.jobs[2].source_line, 3);
    }
    CHECK(has_diag(&c.d, "c.csv:5: warning: job with 0 GPUs (a CPU-only job): skipped"));
    CHECK(has_diag(&c.d, "c.csv:6: warning: job 'fb10987f-20ac' appeared before, at line 3: skipped"));
    reader_case_release(&c);
}

static void test_itp_errors(void)
{
    struct reader_case c;
    itp_case(&c, "num_gpu,job_id,duration,submission_time\n"
                 "8,a,600,12O0\n"
                 "x,b,-5,1\n"
                 "1,c,600\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "c.csv:2:9: error: submission_time '12O0' is not seconds from 0 to 1e12"));
    CHECK(has_diag(&c.d, "c.csv:3:5: error: duration '-5' is not seconds from 0 to 1e12"));
    CHECK(has_diag(&c.d, "c.csv:3:1: error: num_gpu 'x' is not a whole number of GPUs from 0 to 1000000"));
    CHECK(has_diag(&c.d, "c.csv:4:1: error: 3 fields, expected 4 as in the header"));
    CHECK_INT(c.e.line, 2);
    reader_case_release(&c);
    itp_case(&c, "job_id,submission_time,duration,num_gpu\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "c.csv: error: no jobs in 'c.csv'"));
    reader_case_release(&c);
}

/* ---- Philly ---- */

static void philly_case(struct reader_case *c, const char *text)
{
    reader_case_begin(c);
    c->rc = philly_read_buffer("p.json", text, strlen(text), &c->w, &c->d, &c->e);
}

/* The official cluster_job_log shape, with the rows the README warns about. */
static const char philly_log[] =
    "[\n"
    " {\"status\": \"Pass\", \"vc\": \"ee9e8c\", \"jobid\": \"application_1_1\",\n"
    "  \"submitted_time\": \"2017-10-07 01:11:39\", \"user\": \"u1\",\n"
    "  \"attempts\": [{\"start_time\": \"2017-10-07 01:12:09\", \"end_time\": \"2017-10-07 01:13:23\",\n"
    "                \"detail\": [{\"ip\": \"m1\", \"gpus\": [\"gpu0\", \"gpu1\"]}]},\n"
    "               {\"start_time\": \"2017-10-07 01:13:30\", \"end_time\": \"2017-10-07 02:13:30\",\n"
    "                \"detail\": [{\"ip\": \"m2\", \"gpus\": [\"gpu0\", \"gpu1\", \"gpu2\", \"gpu3\"]}]}]},\n"
    " {\"status\": \"Killed\", \"vc\": \"b436b2\", \"jobid\": \"application_1_2\",\n"
    "  \"submitted_time\": \"2017-10-07 01:00:00\", \"user\": \"u2\", \"attempts\": []},\n"
    " {\"status\": \"Failed\", \"vc\": \"b436b2\", \"jobid\": \"application_1_3\",\n"
    "  \"submitted_time\": \"2017-10-07 00:00:00\", \"user\": \"u2\",\n"
    "  \"attempts\": [{\"start_time\": \"2017-10-07 00:10:00\", \"end_time\": \"2017-10-07 00:20:00\",\n"
    "                \"detail\": [{\"ip\": \"m3\", \"gpus\": [\"gpu0\"]}]}]},\n"
    " {\"status\": \"Pass\", \"vc\": \"b436b2\", \"jobid\": \"application_1_4\",\n"
    "  \"submitted_time\": \"2017-10-07 03:00:00\", \"user\": \"u3\",\n"
    "  \"attempts\": [{\"start_time\": \"2017-10-07 03:00:00\", \"end_time\": \"2017-10-07 04:00:00\",\n"
    "                \"detail\": [{\"ip\": \"m3\", \"gpus\": []}]}]},\n"
    " {\"status\": \"Pass\", \"vc\": \"b436b2\", \"jobid\": \"application_1_5\",\n"
    "  \"submitted_time\": \"2017-10-07 03:00:00\", \"user\": \"u3\",\n"
    "  \"attempts\": [{\"start_time\": \"2017-10-07 03:00:00\", \"end_time\": null,\n"
    "                \"detail\": [{\"ip\": \"m3\", \"gpus\": [\"gpu0\"]}]}]},\n"
    " {\"status\": \"Pass\", \"vc\": \"b436b2\", \"jobid\": \"application_1_3\",\n"
    "  \"submitted_time\": \"2017-10-07 05:00:00\", \"attempts\": []}\n"
    "]\n";

static void test_philly_log(void)
{
    struct reader_case c;
    philly_case(&c, philly_log);
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 2);
    CHECK_INT(c.w.meta.skipped_at_read, 4);
    CHECK_INT(c.w.meta.unix_start_s, 1507334400); /* 2017-10-07 00:00:00, the earliest submission */
    if (c.w.n == 2) {
        const struct job *f = &c.w.jobs[0], *p = &c.w.jobs[1];
        CHECK_INT(f->id, 3);
        CHECK_INT(f->submit_us, 0);
        CHECK_INT(f->runtime_us, S(600));
        CHECK_INT(f->wait_us, S(600));
        CHECK_INT(f->wait_known, 1);
        CHECK_INT(f->slots, 1);
        CHECK_INT(f->status, 0);
        CHECK_INT(f->source_line, 10);
        CHECK_INT(p->id, 1);
        CHECK_INT(p->submit_us, S(4299));     /* 01:11:39 */
        CHECK_INT(p->runtime_us, S(74 + 3600)); /* the attempts summed, not the gap */
        CHECK_INT(p->wait_us, S(30));
        CHECK_INT(p->slots, 4); /* the last attempt's GPUs */
        CHECK_INT(p->status, 1);
        CHECK_STR(string_table_get(&c.w.teams, p->team), "ee9e8c");
        CHECK_STR(string_table_get(&c.w.users, p->user), "u1");
        CHECK_STR(string_table_get(&c.w.teams, f->team), "b436b2");
    }
    CHECK(has_diag(&c.d, "p.json:8: warning: job 'application_1_2' has no attempt that started: skipped"));
    CHECK(has_diag(&c.d, "p.json:14: warning: job 'application_1_4' has no GPUs (empty GPU lists): skipped"));
    CHECK(has_diag(&c.d, "p.json:18: warning: job 'application_1_5' has no end_time on its last attempt (still "
                         "running): skipped"));
    CHECK(has_diag(&c.d, "p.json:22: warning: job 'application_1_3' appeared before, at line 10: skipped"));
    CHECK(has_diag(&c.d, "p.json:2: warning: 1 jobs ran in more than one attempt: each replays as one run, its "
                         "attempts' run times summed (the first here)"));
    CHECK(has_diag(&c.d, "p.json:2: warning: 1 jobs ran attempts on different GPU counts: each replays on its last "
                         "attempt's count (the first here)"));
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 0);
    reader_case_release(&c);
}

static void test_philly_subset_shape(void)
{
    /* marwage's jobs.json: id and num_gpus, no status, vc, user or detail */
    struct reader_case c;
    philly_case(&c, "[\n    {\n        \"id\": \"application_9_1\",\n        \"num_gpus\": 8,\n"
                    "        \"runtime\": 2.0,\n        \"attempts\": [\n            {\n"
                    "                \"start_time\": \"2017-10-07 01:12:09\",\n"
                    "                \"end_time\": \"2017-10-07 01:14:09\"\n            }\n        ],\n"
                    "        \"submitted_time\": \"2017-10-07 01:11:39\"\n    }\n]");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 1);
    if (c.w.n == 1) {
        CHECK_INT(c.w.jobs[0].slots, 8);
        CHECK_INT(c.w.jobs[0].runtime_us, S(120));
        CHECK_INT(c.w.jobs[0].status, -1);
        CHECK_INT(c.w.jobs[0].team, -1);
        CHECK_INT(c.w.jobs[0].source_line, 2);
    }
    reader_case_release(&c);
}

static void test_philly_errors(void)
{
    struct reader_case c;
    philly_case(&c, "[{\"jobid\": \"a\", \"status\": \"Pass\", \"submitted_time\": \"2017-10-07 1:11\",\n"
                    "  \"attempts\": []},\n"
                    " {\"jobid\": \"b\", \"status\": \"Done\", \"submitted_time\": \"2017-10-07 01:11:39\",\n"
                    "  \"attempts\": [{\"start_time\": \"2017-10-07 01:12:09\", \"end_time\": \"yesterday\"}]},\n"
                    " {\"status\": \"Pass\", \"submitted_time\": \"2017-10-07 01:11:39\"},\n"
                    " {\"jobid\": \"d\", \"submitted_time\": \"2017-10-07 01:11:39\", \"attempts\": 3, \"num_gpus\": 1.5}\n"
                    "]");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "p.json:1:53: error: submitted_time '2017-10-07 1:11' is not a time (YYYY-MM-DD HH:MM:SS)"));
    CHECK(has_diag(&c.d, "p.json:3:27: error: status 'Done' is not Pass, Killed or Failed"));
    CHECK(has_diag(&c.d, "p.json:4:66: error: end_time 'yesterday' is not a time (YYYY-MM-DD HH:MM:SS)"));
    CHECK(has_diag(&c.d, "p.json:5:2: error: missing key 'jobid'"));
    CHECK(has_diag(&c.d, "p.json:6:85: error: num_gpus must be an integer from 0 to 1000000"));
    CHECK(has_diag(&c.d, "p.json:6:70: error: attempts must be an array"));
    CHECK_INT(diag_count(&c.d, DIAG_WARNING), 0); /* a job with an error is not judged further */
    reader_case_release(&c);
    philly_case(&c, "[{\"jobid\": \"a\",\n \"submitted_time\": }]");
    CHECK_INT(c.rc, -1);
    CHECK_INT(c.e.line, 2);
    CHECK(strstr(c.e.msg, "bad JSON") != NULL);
    reader_case_release(&c);
    philly_case(&c, "{\"jobid\": 1}");
    CHECK(has_diag(&c.d, "p.json:1:1: error: a Philly job log is one JSON array of jobs: '[' expected"));
    reader_case_release(&c);
}

/* ---- Helios / Acme ---- */

static void helios_case(struct reader_case *c, const char *text)
{
    reader_case_begin(c);
    c->rc = helios_read_buffer("h.csv", text, strlen(text), &c->w, &c->d, &c->e);
}

static void test_helios_reads(void)
{
    struct reader_case c;
    helios_case(&c, "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                    "10,u1,vcA,8,64,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:01:00,2020-04-01 01:01:00,3600,60\n"
                    "11,u2,vcB,0,4,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:00:10,2020-04-01 00:10:10,600,0\n"
                    "12,u2,vcB,2,8,1,CANCELLED,2020-04-01 00:00:20,,,,\n"
                    "13,u3,vcB,16,8,2,FAILED,2020-04-01 00:00:30,2020-04-01 00:00:40,2020-04-01 00:01:40,,\n"
                    "14,u3,vcA,1,1,1,TIMEOUT,2020-04-01 00:00:50,2020-04-01 00:00:50,,,\n"
                    "10,u1,vcA,8,64,1,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:01:00,2020-04-01 01:01:00,3600,60\n");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 2);
    CHECK_INT(c.w.meta.skipped_at_read, 4);
    CHECK_INT(c.w.meta.unix_start_s, 1585699200);
    if (c.w.n == 2) {
        CHECK_INT(c.w.jobs[0].id, 10);
        CHECK_INT(c.w.jobs[0].runtime_us, S(3600));
        CHECK_INT(c.w.jobs[0].wait_us, S(60));
        CHECK_INT(c.w.jobs[0].status, 1);
        CHECK_STR(string_table_get(&c.w.teams, c.w.jobs[0].team), "vcA");
        CHECK_INT(c.w.jobs[1].id, 13);
        CHECK_INT(c.w.jobs[1].submit_us, S(30));
        CHECK_INT(c.w.jobs[1].runtime_us, S(60)); /* end - start without a duration */
        CHECK_INT(c.w.jobs[1].wait_us, S(10));
        CHECK_INT(c.w.jobs[1].slots, 16);
        CHECK_INT(c.w.jobs[1].status, 0);
    }
    CHECK(has_diag(&c.d, "h.csv:3: warning: job with 0 GPUs (a CPU-only job): skipped"));
    CHECK(has_diag(&c.d, "h.csv:4: warning: job never started: skipped"));
    CHECK(has_diag(&c.d, "h.csv:6: warning: job has no end_time (still running): skipped"));
    CHECK(has_diag(&c.d, "h.csv:7: warning: job '10' appeared before, at line 2: skipped"));
    reader_case_release(&c);
}

static void test_helios_acme_and_errors(void)
{
    /* Acme's columns in another order, no vc */
    struct reader_case c;
    helios_case(&c, "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue\n"
                    "dlc1,u1,1,8,32,Pretrain,COMPLETED,2023-05-01 00:00:00,2023-05-01 00:00:05,2023-05-01 00:10:05,600,5\n");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 1);
    if (c.w.n == 1) {
        CHECK_INT(c.w.jobs[0].id, 1);
        CHECK_INT(c.w.jobs[0].team, -1);
        CHECK_INT(c.w.jobs[0].runtime_us, S(600));
    }
    reader_case_release(&c);
    helios_case(&c, "job_id,user,vc,gpu_num,state,submit_time,start_time,end_time\n"
                    "1,u,v,2,COMPLETED,2020-04-01 25:00:00,2020-04-01 00:00:00,2020-04-01 00:00:01\n"
                    "2,u,v,two,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:00,2020-04-01 00:00:01\n"
                    "3,u,v,2,COMPLETED,2020-04-01 00:00:00,2020-04-01 00:00:09,2020-04-01 00:00:01\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "h.csv:2:19: error: submit_time '2020-04-01 25:00:00' is not a time (YYYY-MM-DD HH:MM:SS "
                         "or seconds)"));
    CHECK(has_diag(&c.d, "h.csv:3:7: error: gpu_num 'two' is not a number from 0 to 1000000"));
    CHECK(has_diag(&c.d, "h.csv:4:59: error: end_time is before start_time"));
    reader_case_release(&c);
    helios_case(&c, "job_id,user,vc,gpu_num,submit_time,duration\n1,u,v,1,0,1\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "h.csv:1:1: error: no column 'state' in the header"));
    reader_case_release(&c);
}

/* ---- openb ---- */

static const char openb_header[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

static void openb_case(struct reader_case *c, const char *rows)
{
    reader_case_begin(c);
    char buf[4096];
    snprintf(buf, sizeof buf, "%s%s", openb_header, rows);
    c->rc = openb_read_buffer("o.csv", buf, strlen(buf), &c->w, &c->d, &c->e);
}

static void test_openb_reads(void)
{
    struct reader_case c;
    openb_case(&c, "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"
                   "openb-pod-0001,6000,12288,1,460,,LS,Succeeded,427061,427961,427161\n"
                   "openb-pod-0002,88000,327680,8,1000,V100M16|V100M32,Burstable,Failed,500,1500,600\n"
                   "openb-pod-0003,4000,8192,0,0,,BE,Running,10,100,10\n"
                   "openb-pod-0004,4000,8192,1,1000,,BE,Pending,20,100,\n"
                   "openb-pod-0005,4000,8192,1,250,T4,BE,Running,30,100,40\n"
                   "openb-pod-0001,6000,12288,1,460,,LS,Succeeded,427061,427961,427161\n");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 4);
    CHECK_INT(c.w.meta.skipped_at_read, 3);
    if (c.w.n == 4) {
        CHECK_INT(c.w.jobs[0].id, 1);
        CHECK_INT(c.w.jobs[0].runtime_us, S(12537496));
        CHECK_INT(c.w.jobs[0].status, -1);
        CHECK_INT(c.w.jobs[1].id, 6);
        CHECK_INT(c.w.jobs[1].wait_us, S(10));
        CHECK_INT(c.w.jobs[2].id, 3);
        CHECK_INT(c.w.jobs[2].slots, 8);
        CHECK_INT(c.w.jobs[2].status, 0);
        CHECK_INT(c.w.jobs[2].runtime_us, S(900));
        CHECK_INT(c.w.jobs[3].status, 1);
        CHECK_INT(c.w.jobs[3].slots, 1);
        CHECK_INT(c.w.jobs[3].gpu_milli, 460); /* a share of one GPU */
        CHECK_INT(c.w.jobs[3].gpu_models, 0);
        CHECK_INT(c.w.jobs[2].gpu_milli, 0);
        CHECK_STR(workload_job_models(&c.w, &c.w.jobs[2]), "V100M16|V100M32");
        CHECK_INT(c.w.jobs[3].wait_us, S(100));
    }
    CHECK(has_diag(&c.d, "o.csv:5: warning: pod with 0 GPUs (a CPU-only pod): skipped"));
    CHECK(has_diag(&c.d, "o.csv:6: warning: pod never scheduled (Pending): skipped"));
    CHECK(has_diag(&c.d, "o.csv:8: warning: job 'openb-pod-0001' appeared before, at line 3: skipped"));
    CHECK(has_diag(&c.d, "o.csv:3: warning: 2 jobs ask for a fraction of one GPU: each shares a GPU with other "
                         "fractional jobs (gpu_milli) (the first here, '460')"));
    CHECK(has_diag(&c.d, "o.csv:4: warning: 2 jobs are constrained to GPU models: each runs only on nodes of those "
                         "models (gpu_model) (the first here, 'V100M16|V100M32')"));
    /* the once-per-file notes come first, so a front end that shows only the
     * first warnings still shows them */
    CHECK(c.d.n >= 2 && strstr(c.d.items[0].msg, "fraction of one GPU") && strstr(c.d.items[1].msg, "GPU models"));
    reader_case_release(&c);
}

static void test_openb_errors(void)
{
    struct reader_case c;
    openb_case(&c, "p0,1,1,1,1500,,LS,Running,0,10,0\n"
                   "p1,1,1,1,1000,,LS,Running,abc,10,0\n"
                   "p2,1,1,1,1000,,LS,Running,0,10,20\n"
                   "p3,1,1,-1,1000,,LS,Running,0,10,0\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "o.csv:2:10: error: gpu_milli '1500' is not thousandths of a GPU from 0 to 1000"));
    CHECK(has_diag(&c.d, "o.csv:3:27: error: creation_time 'abc' is not seconds from 0 to 1e12"));
    CHECK(has_diag(&c.d, "o.csv:4:29: error: deletion_time is before scheduled_time"));
    CHECK(has_diag(&c.d, "o.csv:5:8: error: num_gpu '-1' is not a whole number of GPUs from 0 to 1000000"));
    reader_case_release(&c);
}

/* ---- PAI 2020 ---- */

static void pai_case(struct reader_case *c, const char *jobs, const char *tasks)
{
    reader_case_begin(c);
    c->rc = pai_read_buffers("pai_job_table.csv", jobs, strlen(jobs), "pai_task_table.csv", tasks, strlen(tasks),
                             &c->w, &c->d, &c->e);
}

static void test_pai_join(void)
{
    struct reader_case c;
    pai_case(&c,
             "j1,i1,u1,Terminated,1000,5000\n"
             "j2,i2,u2,Failed,1100,1300\n"
             "j3,i3,u1,Running,1200,\n"
             "j4,i4,u3,Terminated,1300,1400\n"
             "j5,i5,u3,Terminated,1400,1500\n"
             "j1,i6,u1,Terminated,1000,5000\n",
             "j1,worker,4,Terminated,1100,5000,600,29.3,100,V100\n"
             "j1,ps,1,Terminated,1050,5000,600,29.3,50,MISC\n"
             "j2,tensorflow,1,Failed,1200,1300,600,29.3,25,MISC\n"
             "j3,worker,1,Running,1300,,600,29.3,100,T4\n"
             "j4,worker,1,Terminated,1310,1400,600,29.3,,\n"
             "j9,worker,1,Terminated,1310,1400,600,29.3,100,\n");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.w.n, 2);
    CHECK_INT(c.w.meta.skipped_at_read, 4);
    if (c.w.n == 2) {
        const struct job *a = &c.w.jobs[0], *b = &c.w.jobs[1];
        CHECK_INT(a->id, 1);
        CHECK_INT(a->submit_us, S(1000));
        CHECK_INT(a->wait_us, S(50)); /* the earliest task start */
        CHECK_INT(a->runtime_us, S(3950));
        CHECK_INT(a->slots, 5); /* 4 x 100% + 1 x 50% = 4.5, rounded up */
        CHECK_INT(a->status, 1);
        CHECK_STR(string_table_get(&c.w.users, a->user), "u1");
        CHECK_INT(b->slots, 1);
        CHECK_INT(b->gpu_milli, 250); /* one task at 25%: a share of one GPU */
        CHECK_INT(a->gpu_milli, 0);   /* 4.5 GPUs: whole GPUs */
        CHECK_STR(workload_job_models(&c.w, a), "V100");
        CHECK(workload_job_models(&c.w, b) == NULL); /* MISC is no constraint */
        CHECK_INT(b->status, 0);
        CHECK_INT(b->runtime_us, S(100));
    }
    CHECK(has_diag(&c.d, "pai_job_table.csv:3: warning: job 'j3' has no end (Running or Waiting): skipped"));
    CHECK(has_diag(&c.d, "pai_job_table.csv:4: warning: job 'j4' plans no GPU (a CPU-only job): skipped"));
    CHECK(has_diag(&c.d, "pai_job_table.csv:5: warning: job 'j5' has no task in the task table: skipped"));
    CHECK(has_diag(&c.d, "pai_job_table.csv:6: warning: job 'j1' appeared before, at line 1: skipped"));
    CHECK(has_diag(&c.d, "pai_task_table.csv:6: warning: 1 tasks belong to no job in the job table: ignored (the "
                         "first here, of job 'j9')"));
    CHECK(has_diag(&c.d, "pai_job_table.csv:2: warning: 1 jobs ask for a fraction of one GPU: each shares a GPU "
                         "with other fractional jobs (gpu_milli) (the first here)"));
    CHECK(has_diag(&c.d, "pai_job_table.csv:1: warning: 1 jobs ask for fractions of several GPUs: each replays on "
                         "whole GPUs (the first here)"));
    CHECK(has_diag(&c.d, "pai_job_table.csv:1: warning: 1 jobs are constrained to GPU models: each runs only on "
                         "nodes of those models (gpu_model) (the first here, 'V100')"));
    reader_case_release(&c);
}

static void test_pai_errors(void)
{
    struct reader_case c;
    pai_case(&c, "job_name,inst_id,user,status,start_time,end_time\nj1,i1,u1,Done,1000,5000\nj2,i2,u2,Failed,x,1\n",
             "j1,w,1,Terminated,1100,5000,600,29.3,100\n");
    CHECK_INT(c.rc, -1);
    CHECK(has_diag(&c.d, "pai_job_table.csv:2:10: error: status 'Done' is not Terminated, Failed, Running or Waiting"));
    CHECK(has_diag(&c.d, "pai_job_table.csv:3:17: error: start_time 'x' is not a time in seconds"));
    CHECK(has_diag(&c.d, "pai_task_table.csv:1:1: error: 9 fields, expected 10 (job_name,task_name,inst_num,status,"
                         "start_time,end_time,plan_cpu,plan_mem,plan_gpu,gpu_type)"));
    reader_case_release(&c);
    char path[64];
    CHECK_INT(pai_task_path("d/pai_job_table.csv.gz", path, sizeof path), 0);
    CHECK_STR(path, "d/pai_task_table.csv.gz");
    CHECK_INT(pai_task_path("job_table/x.csv", path, sizeof path), -1);
}

/* ---- machine lists ---- */

static void test_machines(void)
{
    struct machine_list m;
    struct diag_list d;
    struct err e;
    machines_init(&m);
    diag_list_init(&d, 100);
    err_clear(&e);
    const char *philly = "machineId, number of GPUs, single GPU mem\nm0,2, 12GB\nm1,8, 24GB\nm2,0, 12GB\n";
    CHECK_INT(machines_read_buffer("m.csv", philly, strlen(philly), &m, &d, &e), 0);
    CHECK_INT(m.n, 2);
    CHECK_INT(m.cpu_only, 1);
    CHECK_INT(m.total_gpus, 10);
    struct cluster c;
    CHECK_INT(machines_build_cluster(&m, &c, &e), 0);
    CHECK_INT(c.n_nodes, 2);
    CHECK_INT(c.total_slots, 10);
    CHECK_INT(c.max_node_slots, 8);
    CHECK_INT(c.nodes[0].slots, 2);
    char desc[128];
    machines_describe(&m, desc, sizeof desc);
    CHECK_STR(desc, "1 x 2 12GB, 1 x 8 24GB");
    cluster_release(&c);
    machines_release(&m);
    const char *openb = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,64000,262144,x,P100\n";
    CHECK_INT(machines_read_buffer("n.csv", openb, strlen(openb), &m, &d, &e), -1);
    CHECK(has_diag(&d, "n.csv:3:17: error: GPU count 'x' is not a whole number from 0 to 4096"));
    machines_release(&m);
    /* a Helios VC table: the largest daily total, in 8-GPU nodes */
    const char *vc = "date,vcA,vcB,total\n2020-04-01,8,16,24\n2020-04-02,16,24,40\n2020-04-03,8,8,16\n";
    CHECK_INT(machines_read_buffer("v.csv", vc, strlen(vc), &m, &d, &e), 0);
    CHECK_INT(m.n, 5);
    CHECK_INT(m.total_gpus, 40);
    machines_release(&m);
    diag_list_release(&d);
}

/* ---- detection through trace_read ---- */

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static void test_gpu_detection(void)
{
    char dir[] = "/tmp/fleetsim-gputrace-XXXXXX";
    if (!mkdtemp(dir)) {
        test_skip("no temporary folder");
        return;
    }
    static const struct {
        const char *file, *text;
        enum trace_format want;
    } cases[] = {
        {"a.csv", "job_id,submission_time,duration,num_gpu\n1,0,600,1\n", TRACE_ITP},
        {"b.json", "[{\"jobid\":\"x\",\"submitted_time\":\"2017-10-07 01:11:39\",\"attempts\":[{\"start_time\":"
                   "\"2017-10-07 01:12:09\",\"end_time\":\"2017-10-07 01:13:09\",\"detail\":[{\"ip\":\"m\",\"gpus\":"
                   "[\"gpu0\"]}]}]}]",
         TRACE_PHILLY},
        {"c.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                  "scheduled_time\np,1,1,1,1000,,LS,Running,0,10,0\n",
         TRACE_OPENB},
        {"d.csv", "job_id,user,vc,gpu_num,state,submit_time,start_time,end_time\n1,u,v,1,COMPLETED,0,0,10\n",
         TRACE_HELIOS},
        {"pai_job_table.csv", "j1,i1,u1,Terminated,1000,5000\n", TRACE_PAI},
    };
    char path[256], task[256];
    snprintf(task, sizeof task, "%s/pai_task_table.csv", dir);
    CHECK_INT(write_file(task, "j1,w,1,Terminated,1100,5000,600,29.3,100,\n"), 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, cases[i].file);
        CHECK_INT(write_file(path, cases[i].text), 0);
        struct reader_case c;
        reader_case_begin(&c);
        enum trace_format used = TRACE_AUTO;
        c.rc = trace_read_format(path, TRACE_AUTO, SWF_REPLAY, &c.w, &c.d, &c.e, &used);
        CHECK_INT(c.rc, 0);
        CHECK_INT(used, cases[i].want);
        CHECK_INT(c.w.n, 1);
        reader_case_release(&c);
        unlink(path);
    }
    /* an unknown CSV is refused with the formats named, not read as SWF */
    snprintf(path, sizeof path, "%s/e.csv", dir);
    CHECK_INT(write_file(path, "time,machineId,gpu0_util\n2017-10-03 14:47:00 PDT,m1,NA\n"), 0);
    struct reader_case c;
    reader_case_begin(&c);
    c.rc = trace_read(path, TRACE_AUTO, SWF_REPLAY, &c.w, &c.d, &c.e);
    CHECK_INT(c.rc, -1);
    CHECK_INT(diag_count(&c.d, DIAG_ERROR), 1);
    CHECK(strstr(c.e.msg, "unrecognised CSV header 'time,machineId,gpu0_util'") != NULL);
    reader_case_release(&c);
    unlink(path);
    unlink(task);
    rmdir(dir);
    enum trace_format f;
    CHECK_INT(trace_format_parse("acme", &f), 0);
    CHECK_INT(f, TRACE_HELIOS);
    CHECK_INT(trace_format_parse("philly", &f), 0);
    CHECK_INT(f, TRACE_PHILLY);
    CHECK_INT(trace_format_parse("alibaba", &f), -1);
    CHECK_STR(trace_format_name(TRACE_OPENB), "openb");
}

/* ---- gpustats ---- */

static void test_gpustats(void)
{
    struct reader_case c;
    helios_case(&c, "job_id,user,vc,gpu_num,state,submit_time,start_time,end_time\n"
                    "1,u,a,1,COMPLETED,0,10,110\n"
                    "2,u,a,8,CANCELLED,0,20,3620\n"
                    "3,u,b,2,FAILED,0,0,3600\n"
                    "4,u,b,0,FAILED,0,0,3600\n"
                    "5,u,b,64,NODE_FAIL,0,30,60\n");
    CHECK_INT(c.rc, 0);
    struct gpustats g;
    struct err e;
    err_clear(&e);
    CHECK_INT(gpustats_compute(&c.w, &g, &e), 0);
    CHECK_INT(g.jobs_in_file, 5);
    CHECK_INT(g.skipped_at_read, 1);
    CHECK_INT(g.all.jobs, 4);
    CHECK_INT(g.all.multi_gpu_jobs, 3);
    /* 1x100 + 8x3600 + 2x3600 + 64x30 GPU-seconds */
    CHECK_NEAR(g.all.gpu_hours, (100.0 + 8 * 3600 + 2 * 3600 + 64 * 30) / 3600, 1e-9);
    /* a share of one GPU counts as its share: job 1 at 250 milli */
    c.w.jobs[0].gpu_milli = 250;
    struct gpustats g2;
    CHECK_INT(gpustats_compute(&c.w, &g2, &e), 0);
    CHECK_NEAR(g2.all.gpu_hours, (25.0 + 8 * 3600 + 2 * 3600 + 64 * 30) / 3600, 1e-9);
    gpustats_release(&g2);
    CHECK_NEAR(g.all.runtime_p50_s, 100, 1e-9);
    CHECK_NEAR(g.all.runtime_p95_s, 3600, 1e-9);
    CHECK_INT(g.all.queue_n, 4);
    CHECK_NEAR(g.all.queue_mean_s, 15, 1e-9);
    CHECK_NEAR(g.all.queue_p50_s, 10, 1e-9);
    CHECK_INT(g.all.gpus[0], 1);
    CHECK_INT(g.all.gpus[1], 1);
    CHECK_INT(g.all.gpus[3], 1);
    CHECK_INT(g.all.gpus[6], 1);
    CHECK_INT(g.all.completed, 1);
    CHECK_INT(g.all.killed, 1);
    CHECK_INT(g.all.failed, 2);
    CHECK_INT(g.n_teams, 2);
    if (g.n_teams == 2) {
        CHECK_STR(g.teams[0].name, "a");
        CHECK_INT(g.teams[0].jobs, 2);
        CHECK_STR(g.teams[1].name, "b");
        CHECK_INT(g.teams[1].failed, 2);
        CHECK_NEAR(g.teams[1].runtime_mean_s, (3600 + 30) / 2.0, 1e-9);
    }
    gpustats_release(&g);
    reader_case_release(&c);
}

/* The recorded queue time survives a JSONL round trip (start_s). */
static void test_gpu_jsonl_round_trip(void)
{
    struct reader_case c;
    openb_case(&c, "p0,1,1,2,1000,,LS,Succeeded,5,100,7\np1,1,1,1,1000,,LS,Running,3,50,3\n");
    CHECK_INT(c.rc, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct err e;
    err_clear(&e);
    CHECK_INT(jsonl_write("-", f, &c.w, &e), 0);
    fclose(f);
    CHECK(strstr(buf, "{\"id\":1,\"submit_s\":5,\"runtime_s\":93,\"gpus\":2,\"status\":1,\"start_s\":7}") != NULL);
    struct reader_case back;
    reader_case_begin(&back);
    back.rc = jsonl_read_buffer("rt.jsonl", buf, len, &back.w, &back.d, &back.e);
    CHECK_INT(back.rc, 0);
    CHECK_INT(back.w.n, c.w.n);
    for (size_t i = 0; i < back.w.n && i < c.w.n; i++) {
        CHECK_INT(back.w.jobs[i].submit_us, c.w.jobs[i].submit_us);
        CHECK_INT(back.w.jobs[i].runtime_us, c.w.jobs[i].runtime_us);
        CHECK_INT(back.w.jobs[i].slots, c.w.jobs[i].slots);
        CHECK_INT(back.w.jobs[i].wait_known, 1);
        CHECK_INT(back.w.jobs[i].wait_us, c.w.jobs[i].wait_us);
    }
    free(buf);
    reader_case_release(&back);
    reader_case_release(&c);
}

void suite_gputrace(void)
{
    test_run("gpufmt split and times", test_gpufmt_split_and_times);
    test_run("itp reads", test_itp_reads);
    test_run("itp errors", test_itp_errors);
    test_run("philly job log", test_philly_log);
    test_run("philly subset shape", test_philly_subset_shape);
    test_run("philly errors", test_philly_errors);
    test_run("helios reads", test_helios_reads);
    test_run("helios acme and errors", test_helios_acme_and_errors);
    test_run("openb reads", test_openb_reads);
    test_run("openb errors", test_openb_errors);
    test_run("pai join", test_pai_join);
    test_run("pai errors", test_pai_errors);
    test_run("machine lists", test_machines);
    test_run("gpu format detection", test_gpu_detection);
    test_run("gpustats", test_gpustats);
    test_run("gpu jsonl round trip", test_gpu_jsonl_round_trip);
}
