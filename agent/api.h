/* api: the agent's request protocol and its local transport.
 *
 * Protocol: one JSON object per line each way. A request names its op and
 * its arguments, e.g.
 *   {"v":1,"op":"submit","job":{"argv":["python","train.py"],"gpus":2,"time_s":3600,...}}
 *   {"v":1,"op":"cancel","id":12}
 * and the answer is {"ok":true,...} or {"ok":false,"code":"not_found","error":"no job '12'"}.
 * Requests are at most API_MAX_REQUEST bytes; unknown ops and keys, wrong
 * types and values out of range are refused with a message that names them
 * (and the nearest valid key). The HTTP listener (agent/http.h) carries the
 * same objects.
 *
 * Transport: a Unix stream socket. Who calls is what the kernel says
 * (SO_PEERCRED), never what the request claims.
 */
#ifndef FLEETSIM_AGENT_API_H
#define FLEETSIM_AGENT_API_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

enum { API_MAX_REQUEST = 256 * 1024, API_VERSION = 1, API_MAX_ARGS = 4096, API_MAX_ARG_BYTES = 65536,
       API_MAX_ENV = 4096 };

enum api_op { API_PING, API_SUBMIT, API_QUEUE, API_SHOW, API_CANCEL, API_HISTORY, API_NODES, API_DRAIN, API_RESUME,
              API_OP_COUNT };

struct api_caller {
    uint32_t uid, gid;
    int32_t pid;
    int via_http; /* authenticated by the bearer token */
};

struct api_request {
    enum api_op op;
    json_t *root;
    int64_t id;         /* show, cancel */
    int64_t limit;      /* history; 0 = default */
    int mine;           /* history: only the caller's jobs */
    const char *target; /* drain, resume: a node, a GPU UUID or NODE:INDEX */
    const char *reason; /* drain */
    json_t *job;        /* submit: validated for shape (see api_parse) */
};

/* Framing: where the request is in what a connection has sent so far.
 * A request is the bytes before the first '\n'; when the peer has shut its
 * sending side (eof: a half-close, as `socat` and `nc -N` do), what it sent
 * without a final '\n' is the request too, so `printf '{...}' | socat`
 * is answered. Bytes after the first line are ignored: one request per
 * connection. */
enum api_frame {
    API_FRAME_MORE,      /* no whole request yet: keep reading */
    API_FRAME_WHOLE,     /* a request of *request_len bytes at the start */
    API_FRAME_TOO_LARGE, /* more than API_MAX_REQUEST bytes without a '\n' */
    API_FRAME_EMPTY,     /* the peer closed without sending anything */
};
enum api_frame api_frame(const char *data, size_t len, int eof, size_t *request_len);

const char *api_op_name(enum api_op op);
/* Parses and validates a request. Returns 0, or -1 with a message. */
int api_parse(const char *text, size_t len, struct api_request *req, char *msg, size_t msg_len);
void api_request_release(struct api_request *req);
/* {"ok":false,"code":CODE,"error":MSG}, as a malloc'd line ending in '\n'. */
char *api_error_line(const char *code, const char *msg);
/* Dumps o (stealing the reference) as a malloc'd line ending in '\n'. */
char *api_line(json_t *o);

/* Listening socket at path (its parent created if missing), mode applied.
 * A stale socket is replaced; a live one is an error. */
int api_listen(const char *path, int mode, struct err *err);
/* Accepts one connection (non-blocking, close-on-exec) and reads the peer's
 * credentials. Returns the fd, or -1 (nothing to accept, or an error). */
int api_accept(int listen_fd, struct api_caller *caller);

#endif
