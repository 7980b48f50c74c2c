/* _GNU_SOURCE: SO_PEERCRED / struct ucred, accept4. */
#define _GNU_SOURCE
#include "sim/suggest.h"
#include "agent/api.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/config.h"

static const char *const op_names[API_OP_COUNT] = {"ping", "submit", "queue",  "show",  "cancel",
                                                   "history", "nodes", "drain", "resume"};

const char *api_op_name(enum api_op op)
{
    return op < API_OP_COUNT ? op_names[op] : "?";
}

enum api_frame api_frame(const char *data, size_t len, int eof, size_t *request_len)
{
    *request_len = 0;
    const char *nl = len ? memchr(data, '\n', len) : NULL;
    if (nl) {
        *request_len = (size_t)(nl - data);
        return API_FRAME_WHOLE;
    }
    if (len > API_MAX_REQUEST)
        return API_FRAME_TOO_LARGE;
    if (!eof)
        return API_FRAME_MORE;
    if (!len)
        return API_FRAME_EMPTY;
    *request_len = len;
    return API_FRAME_WHOLE;
}

enum ftype { F_INT, F_NUMBER, F_STRING, F_BOOL, F_STRINGS, F_OBJECT };

struct field {
    const char *key;
    enum ftype type;
    int required;
    int64_t lo, hi; /* integers; string byte lengths */
};

static const char *type_name(enum ftype t)
{
    static const char *const n[] = {"an integer", "a number", "a string", "true or false", "a list of strings",
                                    "an object"};
    return n[t];
}

/* Checks obj against fields: unknown keys (with a suggestion), types, ranges. */
static int check_fields(json_t *obj, const struct field *fields, const char *where, char *msg, size_t len)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        const struct field *f = NULL;
        const char *near = NULL;
        size_t best = 4;
        for (const struct field *x = fields; x->key; x++) {
            if (strcmp(x->key, key) == 0)
                f = x;
            size_t d = suggest_distance(key, x->key);
            if (d < best) {
                best = d;
                near = x->key;
            }
        }
        if (!f) {
            if (near)
                snprintf(msg, len, "%sunknown key '%s'; did you mean '%s'?", where, key, near);
            else
                snprintf(msg, len, "%sunknown key '%s'", where, key);
            return -1;
        }
        int ok;
        switch (f->type) {
        case F_INT:
            ok = json_is_integer(v) && json_integer_value(v) >= f->lo && json_integer_value(v) <= f->hi;
            if (json_is_integer(v) && !ok) {
                snprintf(msg, len, "%skey '%s' is %lld, expected %lld to %lld", where, key,
                         (long long)json_integer_value(v), (long long)f->lo, (long long)f->hi);
                return -1;
            }
            break;
        case F_NUMBER:
            ok = json_is_number(v) && isfinite(json_number_value(v)) && json_number_value(v) > 0 &&
                 json_number_value(v) <= (double)f->hi;
            if (json_is_number(v) && !ok) {
                snprintf(msg, len, "%skey '%s' is %g, expected more than 0 and at most %lld", where, key,
                         json_number_value(v), (long long)f->hi);
                return -1;
            }
            break;
        case F_STRING:
            ok = json_is_string(v);
            if (ok && (json_string_length(v) != strlen(json_string_value(v)) ||
                       (int64_t)json_string_length(v) < f->lo || (int64_t)json_string_length(v) > f->hi)) {
                snprintf(msg, len, "%skey '%s' must be %lld to %lld bytes without NUL", where, key, (long long)f->lo,
                         (long long)f->hi);
                return -1;
            }
            break;
        case F_BOOL:
            ok = json_is_boolean(v);
            break;
        case F_STRINGS: {
            ok = json_is_array(v);
            if (!ok)
                break;
            size_t n = json_array_size(v);
            if ((int64_t)n < f->lo || (int64_t)n > f->hi) {
                snprintf(msg, len, "%skey '%s' must list %lld to %lld strings", where, key, (long long)f->lo,
                         (long long)f->hi);
                return -1;
            }
            for (size_t i = 0; i < n; i++) {
                json_t *s = json_array_get(v, i);
                if (!json_is_string(s) || json_string_length(s) != strlen(json_string_value(s)) ||
                    json_string_length(s) > API_MAX_ARG_BYTES) {
                    snprintf(msg, len, "%skey '%s': item %zu must be a string of at most %d bytes without NUL",
                             where, key, i, API_MAX_ARG_BYTES);
                    return -1;
                }
            }
            break;
        }
        case F_OBJECT:
            ok = json_is_object(v);
            break;
        default:
            ok = 0;
        }
        if (!ok) {
            snprintf(msg, len, "%skey '%s' must be %s", where, key, type_name(f->type));
            return -1;
        }
    }
    for (const struct field *x = fields; x->key; x++)
        if (x->required && !json_object_get(obj, x->key)) {
            snprintf(msg, len, "%smissing key '%s'", where, x->key);
            return -1;
        }
    return 0;
}

static const struct field f_plain[] = {{"v", F_INT, 0, 1, 1}, {"op", F_STRING, 1, 1, 16}, {NULL, 0, 0, 0, 0}};
static const struct field f_id[] = {
    {"v", F_INT, 0, 1, 1}, {"op", F_STRING, 1, 1, 16}, {"id", F_INT, 1, 1, INT64_MAX}, {NULL, 0, 0, 0, 0}};
static const struct field f_history[] = {{"v", F_INT, 0, 1, 1},
                                         {"op", F_STRING, 1, 1, 16},
                                         {"limit", F_INT, 0, 1, 1000000},
                                         {"mine", F_BOOL, 0, 0, 0},
                                         {NULL, 0, 0, 0, 0}};
static const struct field f_drain[] = {{"v", F_INT, 0, 1, 1},
                                       {"op", F_STRING, 1, 1, 16},
                                       {"target", F_STRING, 1, 1, 128},
                                       {"reason", F_STRING, 0, 1, 120},
                                       {NULL, 0, 0, 0, 0}};
static const struct field f_submit[] = {
    {"v", F_INT, 0, 1, 1}, {"op", F_STRING, 1, 1, 16}, {"job", F_OBJECT, 1, 0, 0}, {NULL, 0, 0, 0, 0}};
static const struct field f_job[] = {{"argv", F_STRINGS, 1, 1, API_MAX_ARGS},
                                     {"gpus", F_INT, 1, 1, 4096},
                                     {"time_s", F_NUMBER, 0, 0, 1000000000},
                                     {"team", F_STRING, 0, 1, 63},
                                     {"name", F_STRING, 0, 1, 127},
                                     {"cwd", F_STRING, 1, 1, 4095},
                                     {"env", F_STRINGS, 0, 0, API_MAX_ENV},
                                     {"requeue", F_BOOL, 0, 0, 0},
                                     {"output", F_STRING, 0, 1, 4095},
                                     {"error", F_STRING, 0, 1, 4095},
                                     {"class", F_STRING, 0, 1, 32},
                                     {"key", F_STRING, 0, 1, 64},
                                     {NULL, 0, 0, 0, 0}};

int api_parse(const char *text, size_t len, struct api_request *req, char *msg, size_t msg_len)
{
    memset(req, 0, sizeof *req);
    if (len > API_MAX_REQUEST) {
        snprintf(msg, msg_len, "request of %zu bytes is larger than the %d allowed", len, API_MAX_REQUEST);
        return -1;
    }
    json_error_t je;
    req->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!req->root) {
        snprintf(msg, msg_len, "request is not valid JSON: %d:%d: %s", je.line, je.column, je.text);
        return -1;
    }
    if (!json_is_object(req->root)) {
        snprintf(msg, msg_len, "request must be a JSON object");
        return -1;
    }
    json_t *jop = json_object_get(req->root, "op");
    if (!json_is_string(jop)) {
        snprintf(msg, msg_len, "missing key 'op' (a string)");
        return -1;
    }
    const char *op = json_string_value(jop);
    int found = -1;
    const char *near = NULL;
    size_t best = 4;
    for (int i = 0; i < API_OP_COUNT; i++) {
        if (strcmp(op_names[i], op) == 0)
            found = i;
        size_t d = suggest_distance(op, op_names[i]);
        if (d < best) {
            best = d;
            near = op_names[i];
        }
    }
    if (found < 0) {
        if (near)
            snprintf(msg, msg_len, "unknown op '%s'; did you mean '%s'?", op, near);
        else
            snprintf(msg, msg_len, "unknown op '%s'", op);
        return -1;
    }
    req->op = (enum api_op)found;
    const struct field *fields = f_plain;
    switch (req->op) {
    case API_SHOW:
    case API_CANCEL: fields = f_id; break;
    case API_HISTORY: fields = f_history; break;
    case API_DRAIN:
    case API_RESUME: fields = f_drain; break;
    case API_SUBMIT: fields = f_submit; break;
    default: break;
    }
    if (check_fields(req->root, fields, "", msg, msg_len) != 0)
        return -1;
    json_t *v;
    if ((v = json_object_get(req->root, "id")))
        req->id = json_integer_value(v);
    if ((v = json_object_get(req->root, "limit")))
        req->limit = json_integer_value(v);
    req->mine = json_is_true(json_object_get(req->root, "mine"));
    if ((v = json_object_get(req->root, "target")))
        req->target = json_string_value(v);
    if ((v = json_object_get(req->root, "reason")))
        req->reason = json_string_value(v);
    if (req->op == API_SUBMIT) {
        req->job = json_object_get(req->root, "job");
        if (check_fields(req->job, f_job, "job: ", msg, msg_len) != 0)
            return -1;
        json_t *env = json_object_get(req->job, "env");
        for (size_t i = 0; env && i < json_array_size(env); i++) {
            const char *kv = json_string_value(json_array_get(env, i));
            const char *eq = strchr(kv, '=');
            if (!eq || eq == kv) {
                snprintf(msg, msg_len, "job: key 'env': item %zu is not 'NAME=VALUE'", i);
                return -1;
            }
        }
        const char *cwd = json_string_value(json_object_get(req->job, "cwd"));
        if (cwd[0] != '/') {
            snprintf(msg, msg_len, "job: key 'cwd' must be an absolute path, not '%s'", cwd);
            return -1;
        }
        static const char *const paths[] = {"output", "error"};
        for (size_t i = 0; i < 2; i++) {
            const char *p = json_string_value(json_object_get(req->job, paths[i]));
            if (p && p[0] != '/') {
                snprintf(msg, msg_len, "job: key '%s' must be an absolute path, not '%s'", paths[i], p);
                return -1;
            }
        }
        const char *argv0 = json_string_value(json_array_get(json_object_get(req->job, "argv"), 0));
        if (!*argv0) {
            snprintf(msg, msg_len, "job: the command (argv[0]) is empty");
            return -1;
        }
    }
    return 0;
}

void api_request_release(struct api_request *req)
{
    json_decref(req->root);
    memset(req, 0, sizeof *req);
}

char *api_line(json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    char *t = realloc(s, n + 2);
    if (!t) {
        free(s);
        return NULL;
    }
    t[n] = '\n';
    t[n + 1] = '\0';
    return t;
}

/* Length of the valid UTF-8 sequence at s (n bytes there), or 0: JSON's
 * rules, as jansson checks them (no overlong forms, no surrogates, nothing
 * past U+10FFFF). */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, cp = c & 0x07;
    else
        return 0;
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* A message cut to fit its buffer may end inside a character (a long key in
 * Cyrillic), and a parser's message may quote raw bytes; JSON carries only
 * UTF-8, and a refusal that cannot be sent reads as "out of memory". So a
 * character cut at the end is dropped and any other invalid byte becomes
 * '?'. */
char *api_error_line(const char *code, const char *msg)
{
    size_t n = strlen(msg), at = 0;
    char *clean = malloc(n + 1);
    if (!clean)
        return NULL;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_sequence((const unsigned char *)msg + i, n - i);
        if (k) {
            memcpy(clean + at, msg + i, k);
            at += k, i += k;
            continue;
        }
        /* a lead byte whose continuation bytes all run to the end: cut */
        size_t rest = i + 1;
        while (rest < n && ((unsigned char)msg[rest] & 0xC0) == 0x80)
            rest++;
        if (rest == n && (unsigned char)msg[i] >= 0xC2 && n - i < 4)
            break;
        clean[at++] = '?';
        i++;
    }
    clean[at] = '\0';
    char *line = api_line(json_pack("{s:b, s:s, s:s}", "ok", 0, "code", code, "error", clean));
    free(clean);
    return line;
}

int api_listen(const char *path, int mode, struct err *err)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path)
        return err_set(err, NULL, 0, 0, "socket path '%s' is longer than %zu bytes", path, sizeof addr.sun_path - 1);
    memcpy(addr.sun_path, path, strlen(path));
    /* the parent folder: create it (0755) if missing */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return err_set(err, NULL, 0, 0, "cannot create socket folder '%s': %s", dir, strerror(errno));
    }
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!S_ISSOCK(sb.st_mode))
            return err_set(err, NULL, 0, 0, "'%s' exists and is not a socket", path);
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof addr) == 0) {
            close(probe);
            return err_set(err, NULL, 0, 0, "another agent is listening on '%s'", path);
        }
        if (probe >= 0)
            close(probe);
        unlink(path);
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return err_set(err, NULL, 0, 0, "cannot create a socket: %s", strerror(errno));
    mode_t old = umask(0177);
    int rc = bind(fd, (struct sockaddr *)&addr, sizeof addr);
    umask(old);
    if (rc != 0 || chmod(path, (mode_t)mode) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        return err_set(err, NULL, 0, 0, "cannot listen on '%s': %s", path, strerror(e));
    }
    return fd;
}

int api_accept(int listen_fd, struct api_caller *caller)
{
    int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return -1;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) {
        close(fd);
        return -1;
    }
    memset(caller, 0, sizeof *caller);
    caller->uid = cred.uid;
    caller->gid = cred.gid;
    caller->pid = cred.pid;
    return fd;
}
