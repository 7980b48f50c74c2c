/* fuzz_agent_request: libFuzzer target for fleetsim-agent's request protocol,
 * as the daemon reads it (agent/api.h, agent/http.h). The input is what a
 * client sends on a connection:
 *
 * - on the Unix socket, it arrives in chunks (sizes drawn from the first
 *   byte) and is framed by api_frame() after each, then once more at the
 *   peer's half-close. The framing must not depend on the chunking: a
 *   request is whole exactly when a '\n' has come (its length is the bytes
 *   before it), or at the half-close; nothing sent means no request.
 * - the request is parsed (api_parse). Every request gets an answer: a
 *   refusal carries a message, and its reply line (api_error_line, as the
 *   daemon sends it) is one line of JSON, {"ok":false,"code":"bad_request",
 *   "error":MSG} with MSG read back intact; a request that parses has the
 *   fields its op needs, and its canonical form (api_line) parses to the
 *   same request.
 * - the same bytes sent to the HTTP listener (http_parse): incomplete,
 *   refused with a status that has a text, or a request whose body lies
 *   inside what was sent and goes through the same checks as a socket
 *   request.
 *
 * No crash, leak or undefined behaviour (ASan + UBSan); a broken invariant
 * aborts. Build and run: `make fuzz` (needs clang). */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/api.h"
#include "agent/buf.h"
#include "agent/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REQUIRE(cond)                                                                                               \
    do {                                                                                                            \
        if (!(cond))                                                                                                \
            abort();                                                                                                \
    } while (0)

/* A reply line: one line of JSON, its only '\n' the last byte, an object. */
static json_t *reply_object(const char *line)
{
    REQUIRE(line != NULL);
    size_t n = strlen(line);
    REQUIRE(n >= 2 && line[n - 1] == '\n' && memchr(line, '\n', n - 1) == NULL);
    json_error_t je;
    json_t *o = json_loadb(line, n - 1, 0, &je);
    REQUIRE(json_is_object(o));
    return o;
}

/* The refusal the daemon sends for msg reads back as exactly that. */
static void check_refusal(const char *msg)
{
    REQUIRE(msg[0] != '\0');
    char *line = api_error_line("bad_request", msg);
    json_t *o = reply_object(line);
    REQUIRE(json_is_false(json_object_get(o, "ok")));
    REQUIRE(json_is_string(json_object_get(o, "code")) &&
            strcmp(json_string_value(json_object_get(o, "code")), "bad_request") == 0);
    const char *said = json_string_value(json_object_get(o, "error"));
    REQUIRE(said != NULL && said[0] != '\0');
    /* made valid UTF-8 (a character cut at the end dropped, an invalid byte
     * shown as '?'), never changed otherwise */
    size_t n = strlen(said);
    REQUIRE(n <= strlen(msg));
    for (size_t i = 0; i < n; i++)
        REQUIRE(said[i] == msg[i] || (said[i] == '?' && ((unsigned char)msg[i] & 0x80)));
    json_decref(o);
    free(line);
}

static int same_text(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* What a parsed request must hold, for its op. */
static void check_request(const struct api_request *r)
{
    REQUIRE(r->op < API_OP_COUNT && strcmp(api_op_name(r->op), "?") != 0);
    REQUIRE(json_is_object(r->root));
    switch (r->op) {
    case API_SHOW:
    case API_CANCEL: REQUIRE(r->id >= 1); break;
    case API_HISTORY: REQUIRE(r->limit >= 0 && r->limit <= 1000000); break;
    case API_DRAIN:
    case API_RESUME: REQUIRE(r->target && r->target[0] && strlen(r->target) <= 128); break;
    case API_SUBMIT: {
        REQUIRE(json_is_object(r->job));
        json_t *argv = json_object_get(r->job, "argv");
        REQUIRE(json_array_size(argv) >= 1 && json_array_size(argv) <= API_MAX_ARGS);
        const char *argv0 = json_string_value(json_array_get(argv, 0));
        REQUIRE(argv0 && argv0[0]);
        json_int_t gpus = json_integer_value(json_object_get(r->job, "gpus"));
        REQUIRE(gpus >= 1 && gpus <= 4096);
        const char *cwd = json_string_value(json_object_get(r->job, "cwd"));
        REQUIRE(cwd && cwd[0] == '/');
        break;
    }
    default: break;
    }
}

/* A request as the daemon handles it: refused with a message, or checked
 * and parsed again from its canonical form to the same request. */
static void check_one_request(const char *text, size_t len)
{
    struct api_request r;
    char msg[512];
    msg[0] = '\0';
    if (api_parse(text, len, &r, msg, sizeof msg) != 0) {
        REQUIRE(memchr(msg, '\0', sizeof msg) != NULL);
        check_refusal(msg);
        api_request_release(&r);
        return;
    }
    check_request(&r);
    char *line = api_line(json_incref(r.root));
    REQUIRE(line != NULL);
    size_t n = strlen(line);
    REQUIRE(n >= 2 && line[n - 1] == '\n' && memchr(line, '\n', n - 1) == NULL);
    struct api_request again;
    char msg2[512];
    REQUIRE(api_parse(line, n - 1, &again, msg2, sizeof msg2) == 0);
    REQUIRE(again.op == r.op && again.id == r.id && again.limit == r.limit && again.mine == r.mine);
    REQUIRE(same_text(again.target, r.target) && same_text(again.reason, r.reason));
    REQUIRE(json_equal(again.root, r.root));
    api_request_release(&again);
    free(line);
    api_request_release(&r);
    REQUIRE(r.root == NULL);
}

/* The socket's framing, chunk by chunk, then at the half-close. Returns the
 * request's length, or -1 when there is none. */
static long frame_stream(const char *text, size_t size)
{
    size_t step = size ? 1 + (unsigned char)text[0] % 61 : 1;
    const char *nl = size ? memchr(text, '\n', size) : NULL;
    size_t got = 0, len = 0;
    enum api_frame f = API_FRAME_MORE;
    while (got < size) {
        got = got + step < size ? got + step : size;
        f = api_frame(text, got, 0, &len);
        if (nl && (size_t)(nl - text) < got) {
            REQUIRE(f == API_FRAME_WHOLE && len == (size_t)(nl - text));
            break; /* the daemon answers now; later bytes are not read */
        }
        REQUIRE(f == (got > API_MAX_REQUEST ? API_FRAME_TOO_LARGE : API_FRAME_MORE));
        if (f == API_FRAME_TOO_LARGE)
            return -1;
    }
    if (f == API_FRAME_WHOLE)
        return (long)len;
    /* the half-close: what came is the request, if anything did */
    f = api_frame(text, size, 1, &len);
    if (size == 0) {
        REQUIRE(f == API_FRAME_EMPTY);
        return -1;
    }
    REQUIRE(f == API_FRAME_WHOLE && len == size);
    return (long)len;
}

static void check_http(const char *text, size_t size)
{
    struct http_request req;
    memset(&req, 0, sizeof req);
    int r = http_parse(text, size, &req);
    REQUIRE(r == 0 || r == 1 || r >= 400);
    if (r >= 400) {
        REQUIRE(http_status_text(r) != NULL);
        struct buf out;
        buf_init(&out);
        http_respond(&out, r, "text/plain", "x\n", 2);
        REQUIRE(out.oom || (out.len > 0 && memchr(out.data, '\n', out.len)));
        buf_release(&out);
        return;
    }
    if (r == 0)
        return;
    REQUIRE(memchr(req.method, '\0', sizeof req.method) && memchr(req.path, '\0', sizeof req.path) &&
            memchr(req.authorization, '\0', sizeof req.authorization));
    /* the daemon hands the body, whatever its length, to the same parser */
    REQUIRE(req.content_length <= API_MAX_REQUEST && req.body != NULL);
    REQUIRE(req.body >= text && req.body + req.content_length == text + size);
    check_one_request(req.body, req.content_length);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    long len = frame_stream(text, size);
    if (len >= 0)
        check_one_request(text, (size_t)len);
    check_http(text, size);
    return 0;
}
