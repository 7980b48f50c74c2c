/* http: the optional HTTP listener, loopback by default: GET /metrics
 * (Prometheus text) and POST /api (the JSON protocol of agent/api.h, one
 * request per call). Every request needs "Authorization: Bearer TOKEN" with
 * the token from the configured file; without it the answer is 401. A token
 * holder acts as an admin, except that jobs are submitted only over the Unix
 * socket, where the kernel says who the user is.
 *
 * This module parses and formats; the daemon owns the sockets' event loop.
 * Requests are HTTP/1.0 or 1.1, one per connection, headers at most
 * HTTP_MAX_HEADER bytes, bodies at most API_MAX_REQUEST bytes.
 */
#ifndef FLEETSIM_AGENT_HTTP_H
#define FLEETSIM_AGENT_HTTP_H

#include <stddef.h>

#include "agent/buf.h"
#include "sim/err.h"

enum { HTTP_MAX_HEADER = 8192, HTTP_TOKEN_MAX = 256 };

struct http_request {
    char method[8];
    char path[256];
    char authorization[HTTP_TOKEN_MAX + 16];
    size_t content_length;
    const char *body; /* points into the parsed data */
};

/* 0 = incomplete, 1 = complete (req filled), or an HTTP status >= 400. */
int http_parse(const char *data, size_t len, struct http_request *req);
/* Listens on HOST:PORT. A non-loopback address needs allow_remote. */
int http_listen(const char *hostport, int allow_remote, struct err *err);
void http_respond(struct buf *out, int status, const char *content_type, const char *body, size_t len);
/* Constant-time check of "Bearer TOKEN". */
int http_authorized(const char *authorization, const char *token);
/* Reads the token file (first line, at least 16 characters). A file others
 * may read is refused. */
int http_load_token(const char *path, char *token, size_t len, struct err *err);
const char *http_status_text(int status);

#endif
