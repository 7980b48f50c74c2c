#include "agent/http.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/api.h"

const char *http_status_text(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

int http_parse(const char *data, size_t len, struct http_request *req)
{
    memset(req, 0, sizeof *req);
    const char *end = NULL;
    for (size_t i = 0; i + 3 < len; i++)
        if (data[i] == '\r' && data[i + 1] == '\n' && data[i + 2] == '\r' && data[i + 3] == '\n') {
            end = data + i;
            break;
        }
    if (!end)
        return len > HTTP_MAX_HEADER ? 431 : 0;
    size_t hlen = (size_t)(end - data);
    if (hlen > HTTP_MAX_HEADER)
        return 431;
    /* request line */
    const char *eol = memchr(data, '\r', hlen + 1);
    char line[512];
    size_t ll = (size_t)(eol - data);
    if (ll >= sizeof line)
        return 400;
    memcpy(line, data, ll);
    line[ll] = '\0';
    char version[16];
    if (sscanf(line, "%7s %255s %15s", req->method, req->path, version) != 3)
        return 400;
    if (strcmp(version, "HTTP/1.1") != 0 && strcmp(version, "HTTP/1.0") != 0)
        return 505;
    int have_length = 0;
    const char *p = eol + 2;
    while (p < end) {
        const char *e = memchr(p, '\r', (size_t)(end - p) + 1);
        size_t n = (size_t)(e - p);
        const char *colon = memchr(p, ':', n);
        if (!colon)
            return 400;
        size_t kl = (size_t)(colon - p);
        const char *v = colon + 1;
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        size_t vl = (size_t)(e - v);
        if (kl == 13 && strncasecmp(p, "authorization", 13) == 0) {
            if (vl >= sizeof req->authorization)
                return 431;
            memcpy(req->authorization, v, vl);
            req->authorization[vl] = '\0';
        } else if (kl == 14 && strncasecmp(p, "content-length", 14) == 0) {
            char num[32];
            if (vl == 0 || vl >= sizeof num)
                return 400;
            memcpy(num, v, vl);
            num[vl] = '\0';
            char *ne;
            errno = 0;
            unsigned long long cl = strtoull(num, &ne, 10);
            if (*ne || errno || num[0] == '-')
                return 400;
            if (cl > API_MAX_REQUEST)
                return 413;
            req->content_length = (size_t)cl;
            have_length = 1;
        } else if (kl == 17 && strncasecmp(p, "transfer-encoding", 17) == 0) {
            return 411; /* no chunked bodies: say how long it is */
        }
        p = e + 2;
    }
    if (strcmp(req->method, "POST") == 0 && !have_length)
        return 411;
    size_t body_at = hlen + 4;
    if (len - body_at < req->content_length)
        return 0;
    if (len - body_at > req->content_length)
        return 400; /* one request per connection */
    req->body = data + body_at;
    return 1;
}

static int is_loopback(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        static const unsigned char loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        return memcmp(a, loop6, 16) == 0;
    }
    return 0;
}

int http_listen(const char *hostport, int allow_remote, struct err *err)
{
    char host[128];
    snprintf(host, sizeof host, "%s", hostport);
    char *colon = strrchr(host, ':');
    if (!colon)
        return err_set(err, NULL, 0, 0, "http_listen '%s': expected HOST:PORT", hostport);
    *colon = '\0';
    const char *port = colon + 1;
    char *h = host;
    size_t hl = strlen(h);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h[hl - 1] = '\0';
        h++;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(h, port, &hints, &res);
    if (rc != 0)
        return err_set(err, NULL, 0, 0, "http_listen '%s': %s", hostport, gai_strerror(rc));
    if (!allow_remote && !is_loopback(res->ai_addr)) {
        freeaddrinfo(res);
        return err_set(err, NULL, 0, 0, "http_listen '%s' is not a loopback address: set http_allow_remote = true "
                                        "to listen there (and put TLS in front)",
                       hostport);
    }
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 64) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        return err_set(err, NULL, 0, 0, "cannot listen on '%s': %s", hostport, strerror(e));
    }
    freeaddrinfo(res);
    return fd;
}

void http_respond(struct buf *out, int status, const char *content_type, const char *body, size_t len)
{
    buf_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n", status,
               http_status_text(status), content_type, len);
    if (status == 401)
        buf_puts(out, "WWW-Authenticate: Bearer realm=\"fleetsim-agent\"\r\n");
    buf_puts(out, "\r\n");
    buf_append(out, body, len);
}

int http_authorized(const char *authorization, const char *token)
{
    /* the scheme is case-insensitive (RFC 9110 11.1): "bearer" is Bearer too */
    if (!token || !*token || strncasecmp(authorization, "Bearer ", 7) != 0)
        return 0;
    const char *given = authorization + 7;
    size_t gl = strlen(given), tl = strlen(token);
    unsigned char diff = (unsigned char)(gl != tl);
    for (size_t i = 0; i < tl; i++)
        diff |= (unsigned char)(token[i] ^ (i < gl ? given[i] : 0));
    return diff == 0;
}

int http_load_token(const char *path, char *token, size_t len, struct err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return err_set(err, NULL, 0, 0, "cannot read http_token_file '%s': %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) == 0 && (sb.st_mode & 077)) {
        fclose(f);
        return err_set(err, NULL, 0, 0, "http_token_file '%s' may be read by others (mode %03o): chmod 600 it",
                       path, (unsigned)(sb.st_mode & 0777));
    }
    char line[HTTP_TOKEN_MAX + 2];
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
    size_t n = strlen(line);
    if (n < 16 || n >= len || n > HTTP_TOKEN_MAX)
        return err_set(err, path, 1, 1, "the token must have 16 to %d characters", HTTP_TOKEN_MAX);
    for (size_t i = 0; i < n; i++)
        if (line[i] <= ' ' || line[i] > '~')
            return err_set(err, path, 1, (long)i + 1, "the token must be printable ASCII without blanks");
    memcpy(token, line, n + 1);
    return 0;
}
