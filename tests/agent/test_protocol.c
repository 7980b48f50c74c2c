/* Unit tests: agent/api (requests), agent/http (parsing, tokens),
 * agent/record (trace lines), agent/metrics (exposition). */
#include <stdlib.h>
#include <string.h>

#include "agent/api.h"
#include "agent/http.h"
#include "agent/metrics.h"
#include "agent/record.h"
#include "tests/unit/test.h"

void suite_agent_protocol(void);

static void expect_refused(const char *text, const char *want)
{
    struct api_request r;
    char msg[512] = "";
    CHECK_INT(api_parse(text, strlen(text), &r, msg, sizeof msg), -1);
    CHECK_STR(msg, want);
    api_request_release(&r);
}

static void test_requests(void)
{
    struct api_request r;
    char msg[512] = "";
    const char *ok = "{\"v\":1,\"op\":\"submit\",\"job\":{\"argv\":[\"sleep\",\"1\"],\"gpus\":2,\"time_s\":1.5,"
                     "\"cwd\":\"/tmp\",\"env\":[\"PATH=/bin\"],\"team\":\"t\"}}";
    CHECK_INT(api_parse(ok, strlen(ok), &r, msg, sizeof msg), 0);
    CHECK_INT(r.op, API_SUBMIT);
    CHECK(r.job != NULL);
    api_request_release(&r);
    const char *cancel = "{\"op\":\"cancel\",\"id\":7}";
    CHECK_INT(api_parse(cancel, strlen(cancel), &r, msg, sizeof msg), 0);
    CHECK_INT(r.id, 7);
    api_request_release(&r);
    expect_refused("{\"op\":\"cancle\",\"id\":7}", "unknown op 'cancle'; did you mean 'cancel'?");
    expect_refused("{\"op\":\"cancel\",\"idd\":7}", "unknown key 'idd'; did you mean 'id'?");
    expect_refused("{\"op\":\"cancel\"}", "missing key 'id'");
    expect_refused("{\"op\":\"cancel\",\"id\":\"7\"}", "key 'id' must be an integer");
    expect_refused("{\"op\":\"cancel\",\"id\":0}", "key 'id' is 0, expected 1 to 9223372036854775807");
    expect_refused("[1]", "request must be a JSON object");
    expect_refused("{\"op\":\"queue\",\"op\":\"queue\"}",
                   "request is not valid JSON: 1:18: duplicate object key near '\"op\"'");
    expect_refused("{\"op\":\"submit\",\"job\":{\"argv\":[],\"gpus\":1,\"cwd\":\"/\"}}",
                   "job: key 'argv' must list 1 to 4096 strings");
    expect_refused("{\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"gpus\":1,\"cwd\":\"tmp\"}}",
                   "job: key 'cwd' must be an absolute path, not 'tmp'");
    expect_refused("{\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"gpus\":1,\"cwd\":\"/\",\"env\":[\"NOEQUALS\"]}}",
                   "job: key 'env': item 0 is not 'NAME=VALUE'");
    expect_refused("{\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"gpus\":1,\"cwd\":\"/\",\"time_s\":-1}}",
                   "job: key 'time_s' is -1, expected more than 0 and at most 1000000000");
    expect_refused("{\"op\":\"submit\",\"job\":{\"argv\":[\"x\"],\"gpu\":1,\"cwd\":\"/\"}}",
                   "job: unknown key 'gpu'; did you mean 'gpus'?");
    char *big = malloc(API_MAX_REQUEST + 10);
    memset(big, ' ', API_MAX_REQUEST + 9);
    big[API_MAX_REQUEST + 9] = '\0';
    CHECK_INT(api_parse(big, strlen(big), &r, msg, sizeof msg), -1);
    CHECK(strstr(msg, "larger than the 262144 allowed") != NULL);
    api_request_release(&r);
    free(big);
}

/* Framing: a request is whole at its '\n', or at the peer's half-close. */
static void test_framing(void)
{
    size_t n;
    CHECK_INT(api_frame("", 0, 0, &n), API_FRAME_MORE);
    CHECK_INT(api_frame("", 0, 1, &n), API_FRAME_EMPTY);
    CHECK_INT(api_frame("{\"op\":", 6, 0, &n), API_FRAME_MORE);
    CHECK_INT(api_frame("{\"op\":\"ping\"}", 13, 1, &n), API_FRAME_WHOLE);
    CHECK_INT(n, 13);
    CHECK_INT(api_frame("{}\n{\"op\"", 8, 0, &n), API_FRAME_WHOLE);
    CHECK_INT(n, 2);
    CHECK_INT(api_frame("\n", 1, 1, &n), API_FRAME_WHOLE);
    CHECK_INT(n, 0);
    char *big = malloc(API_MAX_REQUEST + 1);
    memset(big, ' ', API_MAX_REQUEST + 1);
    CHECK_INT(api_frame(big, API_MAX_REQUEST, 0, &n), API_FRAME_MORE);
    CHECK_INT(api_frame(big, API_MAX_REQUEST + 1, 0, &n), API_FRAME_TOO_LARGE);
    CHECK_INT(api_frame(big, API_MAX_REQUEST + 1, 1, &n), API_FRAME_TOO_LARGE);
    free(big);
}

/* A refusal is always sent: a message cut inside a character (found by
 * fuzz_agent_request) or holding raw bytes is made valid UTF-8. */
static void test_error_line_utf8(void)
{
    char *line = api_error_line("bad_request", "unknown key 'a\xC3\xA9\xC3");
    CHECK(line != NULL);
    if (line)
        CHECK_STR(line, "{\"ok\":false,\"code\":\"bad_request\",\"error\":\"unknown key 'a\xC3\xA9\"}\n");
    free(line);
    line = api_error_line("bad_request", "near '\xFF\xC3(\xED\xA0\x80'");
    CHECK(line != NULL);
    if (line)
        CHECK_STR(line, "{\"ok\":false,\"code\":\"bad_request\",\"error\":\"near '?\?(?\?\?'\"}\n");
    free(line);
}

static void test_http(void)
{
    struct http_request req;
    const char *get = "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer abc\r\n\r\n";
    CHECK_INT(http_parse(get, strlen(get), &req), 1);
    CHECK_STR(req.method, "GET");
    CHECK_STR(req.path, "/metrics");
    CHECK_STR(req.authorization, "Bearer abc");
    CHECK_INT(http_parse(get, 20, &req), 0);
    const char *post = "POST /api HTTP/1.1\r\nContent-Length: 5\r\n\r\n{\"a\":";
    CHECK_INT(http_parse(post, strlen(post), &req), 1);
    CHECK_INT(req.content_length, 5);
    CHECK_INT(http_parse(post, strlen(post) - 1, &req), 0);
    const char *nolen = "POST /api HTTP/1.1\r\n\r\n";
    CHECK_INT(http_parse(nolen, strlen(nolen), &req), 411);
    const char *huge = "POST /api HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n";
    CHECK_INT(http_parse(huge, strlen(huge), &req), 413);
    const char *v2 = "GET / HTTP/2.0\r\n\r\n";
    CHECK_INT(http_parse(v2, strlen(v2), &req), 505);
    CHECK(http_authorized("Bearer 0123456789abcdef", "0123456789abcdef"));
    CHECK(!http_authorized("Bearer 0123456789abcdeg", "0123456789abcdef"));
    CHECK(!http_authorized("Bearer 0123456789abcde", "0123456789abcdef"));
    CHECK(!http_authorized("Basic 0123456789abcdef", "0123456789abcdef"));
    CHECK(http_authorized("bearer 0123456789abcdef", "0123456789abcdef")); /* the scheme in any case */
    CHECK(http_authorized("BEARER 0123456789abcdef", "0123456789abcdef"));
    CHECK(!http_authorized("", "0123456789abcdef"));
}

static void test_record_line(void)
{
    struct agent_job *j = job_new();
    j->id = 7;
    j->state = JOB_COMPLETED;
    snprintf(j->user, sizeof j->user, "alice");
    snprintf(j->team, sizeof j->team, "vision");
    snprintf(j->name, sizeof j->name, "train");
    j->gpus = 2;
    j->limit_us = 60000000;
    j->submit_us = 1000000000 * 1000000LL + 12500000;
    j->start_us = j->submit_us + 500000;
    j->end_us = j->start_us + 30250000;
    j->exit_code = 0;
    const char *pl[] = {"gpu01:0", "gpu01:1"};
    struct buf b;
    buf_init(&b);
    CHECK_INT(record_format(&b, j, 1000000000, pl, 2), 0);
    CHECK_STR(b.data, "{\"id\":7,\"submit_s\":12.5,\"runtime_s\":30.25,\"limit_s\":60,\"gpus\":2,\"user\":\"alice\","
                      "\"team\":\"vision\",\"status\":1,\"start_s\":13,\"end_s\":43.25,\"exit\":0,\"name\":\"train\","
                      "\"placement\":[\"gpu01:0\",\"gpu01:1\"]}\n");
    buf_reset(&b);
    j->state = JOB_TIMEOUT;
    j->exit_code = -1;
    j->term_signal = 9;
    j->team[0] = j->name[0] = '\0';
    CHECK_INT(record_format(&b, j, 1000000000, pl, 0), 0);
    CHECK_STR(b.data, "{\"id\":7,\"submit_s\":12.5,\"runtime_s\":30.25,\"limit_s\":60,\"gpus\":2,\"user\":\"alice\","
                      "\"status\":0,\"start_s\":13,\"end_s\":43.25,\"exit\":137,\"placement\":[]}\n");
    buf_release(&b);
    job_free(j);
}

static void test_metrics_text(void)
{
    struct inventory inv;
    inventory_init(&inv);
    inventory_add_node(&inv, "n\"1", 2);
    snprintf(inv.gpus[0].uuid, sizeof inv.gpus[0].uuid, "GPU-1");
    snprintf(inv.gpus[1].uuid, sizeof inv.gpus[1].uuid, "GPU-2");
    inv.gpus[1].drained = 1;
    snprintf(inv.gpus[1].drain_reason, sizeof inv.gpus[1].drain_reason, "critical xid 79");
    int64_t gpu_job[2] = {17, 0};
    inv.gpus[0].memory_bytes = 1024ULL << 20;
    struct scheduler s;
    memset(&s, 0, sizeof s);
    snprintf(s.ph.spec, sizeof s.ph.spec, "fcfs+easy");
    struct metrics m;
    metrics_init(&m);
    metrics_observe_wait(&m, 0);
    metrics_observe_wait(&m, 7000000);
    metrics_observe_wait(&m, 100000000000LL);
    struct metrics_view v = {&inv, gpu_job, NULL, &s, 3, 1, 5, 1.5, "h", "0.1.0", NULL, 0, NULL};
    struct buf b;
    buf_init(&b);
    CHECK_INT(metrics_render(&b, &m, &v), 0);
    CHECK(strstr(b.data, "fleetsim_job_wait_seconds_bucket{le=\"1\"} 1\n") != NULL);
    CHECK(strstr(b.data, "fleetsim_job_wait_seconds_bucket{le=\"10\"} 2\n") != NULL);
    CHECK(strstr(b.data, "fleetsim_job_wait_seconds_bucket{le=\"+Inf\"} 3\n") != NULL);
    CHECK(strstr(b.data, "fleetsim_job_wait_seconds_count 3\n") != NULL);
    CHECK(strstr(b.data, "fleetsim_gpus{state=\"drained\"} 1\n") != NULL);
    CHECK(strstr(b.data, "node=\"n\\\"1\"") != NULL); /* label escaping */
    /* no NVML: DCGM names all the same, the memory size from the inventory, zeros */
    CHECK(strstr(b.data, "DCGM_FI_DEV_FB_FREE{gpu=\"0\",UUID=\"GPU-1\"") != NULL);
    CHECK(strstr(b.data, "Hostname=\"n\\\"1\",hpc_job=\"17\"} 1024\n") != NULL); /* GPU 0 runs job 17 */
    CHECK(strstr(b.data, "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-2\"") != NULL);
    CHECK(strstr(b.data, "fleetsim_gpu_job{node=\"n\\\"1\",gpu=\"0\",UUID=\"GPU-1\"} 17\n") != NULL);
    CHECK(strstr(b.data, "fleetsim_gpu_drained{node=\"n\\\"1\",gpu=\"1\",UUID=\"GPU-2\"} 1\n") != NULL);
    CHECK(strstr(b.data, "critical xid") == NULL); /* free text never in a label */
    CHECK(b.len > 0 && b.data[b.len - 1] == '\n');
    buf_release(&b);
    inventory_release(&inv);
}

void suite_agent_protocol(void)
{
    test_run("api: requests validated with clear errors", test_requests);
    test_run("api: framing, half-close included", test_framing);
    test_run("api: refusals are valid UTF-8", test_error_line_utf8);
    test_run("http: parsing and bearer tokens", test_http);
    test_run("record: native trace lines", test_record_line);
    test_run("metrics: exposition text", test_metrics_text);
}
