#include "agent/client.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "agent/api.h"
#include "agent/buf.h"
#include "agent/config.h"

extern char **environ;

enum { CLIENT_TIMEOUT_MS = 60000 };

static const char *const commands[] = {"submit", "queue", "show",   "cancel", "history",
                                       "nodes",  "drain", "resume", "status", NULL};

int client_is_command(const char *cmd)
{
    for (const char *const *c = commands; *c; c++)
        if (strcmp(*c, cmd) == 0)
            return 1;
    return 0;
}

static void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fleetsim-agent: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fleetsim-agent: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fprintf(stderr, "try 'fleetsim-agent %s --help'\n", cmd);
    return AGENT_USAGE;
}

int client_call(const char *socket_path, json_t *request, json_t **response, struct err *err)
{
    *response = NULL;
    json_object_set_new(request, "v", json_integer(API_VERSION));
    char *line = api_line(request);
    if (!line)
        return err_set(err, NULL, 0, 0, "out of memory");
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(socket_path) >= sizeof addr.sun_path) {
        free(line);
        return err_set(err, NULL, 0, 0, "socket path '%s' is too long", socket_path);
    }
    memcpy(addr.sun_path, socket_path, strlen(socket_path));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        free(line);
        return err_set(err, NULL, 0, 0, "cannot reach the agent at '%s': %s (is fleetsim-agent running? "
                                        "--socket or FLEETSIM_AGENT_SOCKET name another socket)",
                       socket_path, strerror(e));
    }
    size_t len = strlen(line), off = 0;
    while (off < len) {
        ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            free(line);
            return err_set(err, NULL, 0, 0, "cannot send to the agent: %s", strerror(e));
        }
        off += (size_t)w;
    }
    free(line);
    struct buf in;
    buf_init(&in);
    char chunk[65536];
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, CLIENT_TIMEOUT_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0) {
            close(fd);
            buf_release(&in);
            return err_set(err, NULL, 0, 0, "the agent did not answer within %d s", CLIENT_TIMEOUT_MS / 1000);
        }
        ssize_t n = recv(fd, chunk, sizeof chunk, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        buf_append(&in, chunk, (size_t)n);
        if (memchr(chunk, '\n', (size_t)n))
            break;
    }
    close(fd);
    if (!in.len) {
        buf_release(&in);
        return err_set(err, NULL, 0, 0, "the agent closed the connection without an answer");
    }
    json_error_t je;
    *response = json_loadb(in.data, in.len, 0, &je);
    buf_release(&in);
    if (!json_is_object(*response)) {
        json_decref(*response);
        *response = NULL;
        return err_set(err, NULL, 0, 0, "the agent's answer is not JSON: %s", je.text);
    }
    return 0;
}

void client_format_duration(char *buf, size_t len, int64_t us)
{
    if (us < 0)
        us = 0;
    int64_t s = (us + 500000) / 1000000;
    int64_t d = s / 86400, h = s / 3600 % 24, m = s / 60 % 60, sec = s % 60;
    if (d)
        snprintf(buf, len, "%lld-%02lld:%02lld:%02lld", (long long)d, (long long)h, (long long)m, (long long)sec);
    else
        snprintf(buf, len, "%lld:%02lld:%02lld", (long long)h, (long long)m, (long long)sec);
}

static void format_time(char *buf, size_t len, int64_t us)
{
    time_t t = (time_t)(us / 1000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t jint(json_t *o, const char *key, int64_t dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

static const char *jstr(json_t *o, const char *key, const char *dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

/* Prints the agent's refusal; returns the exit code it maps to. */
static int refused(json_t *resp)
{
    const char *code = jstr(resp, "code", "internal");
    error_msg("%s", jstr(resp, "error", "the agent refused the request"));
    if (strcmp(code, "bad_request") == 0)
        return AGENT_USAGE;
    if (strcmp(code, "internal") == 0)
        return AGENT_INTERNAL;
    if (strcmp(code, "store_unavailable") == 0)
        return AGENT_IO;
    return AGENT_REFUSED;
}

static int call(const char *sock, json_t *req, json_t **resp)
{
    struct err err;
    err_clear(&err);
    if (client_call(sock, req, resp, &err) != 0) {
        error_msg("%s", err.msg);
        return AGENT_IO;
    }
    if (!json_is_true(json_object_get(*resp, "ok"))) {
        int rc = refused(*resp);
        json_decref(*resp);
        *resp = NULL;
        return rc;
    }
    return AGENT_OK;
}

/* A random idempotency key: "auto-" and 32 hex digits. */
static int random_key(char *out, size_t len)
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, b, sizeof b);
    close(fd);
    if (n != (ssize_t)sizeof b || len < 6 + 2 * sizeof b)
        return -1;
    size_t off = (size_t)snprintf(out, len, "auto-");
    for (size_t i = 0; i < sizeof b; i++)
        off += (size_t)snprintf(out + off, len - off, "%02x", b[i]);
    return 0;
}

/* As call(), for a request that is safe to repeat (a submission with its
 * key): when the request went out but no answer came back (the agent died
 * or stalled), it is sent once more, waiting up to 5 s for the agent to
 * listen again; the agent answers a repeated key with the first job's id. */
static int call_retrying(const char *sock, json_t *req, json_t **resp)
{
    struct err err;
    err_clear(&err);
    /* client_call takes a reference: keep ours for the retry */
    int rc = client_call(sock, json_incref(req), resp, &err);
    if (rc != 0 && strncmp(err.msg, "cannot reach", 12) != 0 && strncmp(err.msg, "socket path", 11) != 0) {
        for (int tries = 0; tries < 50; tries++) {
            struct timespec ts = {0, 100000000};
            nanosleep(&ts, NULL);
            err_clear(&err);
            rc = client_call(sock, json_incref(req), resp, &err);
            if (rc == 0 || strncmp(err.msg, "cannot reach", 12) != 0)
                break; /* answered, or lost again: no second retry */
        }
    }
    json_decref(req);
    if (rc != 0) {
        error_msg("%s", err.msg);
        return AGENT_IO;
    }
    if (!json_is_true(json_object_get(*resp, "ok"))) {
        int r = refused(*resp);
        json_decref(*resp);
        *resp = NULL;
        return r;
    }
    return AGENT_OK;
}

static void print_json(json_t *o)
{
    json_object_del(o, "ok");
    char *s = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (s) {
        puts(s);
        free(s);
    }
}

static void placement_text(json_t *job, char *buf, size_t len)
{
    json_t *pl = json_object_get(job, "placement");
    size_t off = 0;
    buf[0] = '\0';
    /* NODE:I,J,K per node */
    const char *last_node = NULL;
    size_t last_len = 0;
    for (size_t i = 0; i < json_array_size(pl) && off + 16 < len; i++) {
        const char *p = json_string_value(json_array_get(pl, i));
        const char *colon = p ? strrchr(p, ':') : NULL;
        if (!colon)
            continue;
        size_t nl = (size_t)(colon - p);
        if (last_node && nl == last_len && strncmp(p, last_node, nl) == 0)
            off += (size_t)snprintf(buf + off, len - off, ",%s", colon + 1);
        else
            off += (size_t)snprintf(buf + off, len - off, "%s%.*s:%s", off ? " " : "", (int)nl, p, colon + 1);
        last_node = p;
        last_len = nl;
    }
    if (!buf[0])
        snprintf(buf, len, "-");
}

static void print_job_row(json_t *j, int64_t now)
{
    char limit[32], elapsed[32], where[256];
    client_format_duration(limit, sizeof limit, jint(j, "limit_us", 0));
    const char *state = jstr(j, "state", "?");
    int64_t start = jint(j, "start_us", -1), end = jint(j, "end_us", -1), submit = jint(j, "submit_us", 0);
    if (start >= 0)
        client_format_duration(elapsed, sizeof elapsed, (end >= 0 ? end : now) - start);
    else
        client_format_duration(elapsed, sizeof elapsed, (end >= 0 ? end : now) - submit);
    placement_text(j, where, sizeof where);
    if (strcmp(state, "queued") == 0) {
        int64_t res = jint(j, "reserved_us", -1);
        if (res >= 0) {
            char in[32];
            client_format_duration(in, sizeof in, res - now);
            snprintf(where, sizeof where, "(planned in %s)", in);
        } else {
            snprintf(where, sizeof where, "-");
        }
    }
    printf("%-7lld %-9s %-10.10s %-8.8s %-12.12s %4lld %11s %11s  %s\n", (long long)jint(j, "id", 0), state,
           jstr(j, "user", "-"), jstr(j, "team", "-"), jstr(j, "name", "-"), (long long)jint(j, "gpus", 0), limit,
           elapsed, where);
}

static const char *socket_default(void)
{
    const char *s = getenv("FLEETSIM_AGENT_SOCKET");
    return s && *s ? s : AGENT_DEFAULT_SOCKET;
}

/* ---- commands ---- */

static const char submit_usage[] =
    "usage: fleetsim-agent submit [options] [--] COMMAND [ARGS...]\n"
    "\n"
    "Queues COMMAND to run on this node's GPUs. It is executed directly (argv,\n"
    "never through a shell), as you, in the current directory, with\n"
    "CUDA_VISIBLE_DEVICES set to the UUIDs of the GPUs it gets. Your environment\n"
    "is passed through the agent's allowlist (env_allow). Prints the job id.\n"
    "\n"
    "options:\n"
    "  -g, --gpus N       GPUs the job needs (default 1)\n"
    "  -t, --time LIMIT   wall-time limit: 90s, 30m, 1.5h, 2d, 1:30:00 or 2-00:00:00\n"
    "                     (default: the agent's default_time); the job is stopped at it\n"
    "      --team TEAM    team or account, recorded in the trace\n"
    "      --class C      training (default), fine-tune or inference: what the policy\n"
    "                     sees as the job's class (node-type speeds, Gavel)\n"
    "  -J, --name NAME    a name for the job\n"
    "  -o, --output FILE  stdout file (default: ./fleetsim-ID.out)\n"
    "  -e, --error FILE   stderr file (default: ./fleetsim-ID.err; same as -o to merge)\n"
    "      --requeue      if the agent loses the job (its supervisor dies), run it again\n"
    "                     (a job the policy preempts always goes back to the queue; it\n"
    "                     then runs again with FLEETSIM_ATTEMPT one higher)\n"
    "      --key KEY      idempotency key (letters, digits, . _ : -; at most 64): a\n"
    "                     submission repeating one of yours returns the first job's id\n"
    "                     (default: a random key; a lost reply is retried once with it)\n"
    "      --json         print {\"id\": N}\n"
    "      --backend slurm --partition NAME\n"
    "                     submit to a Slurm partition through sbatch instead\n"
    "                     ('fleetsim-agent submit --backend slurm --help')\n"
    "      --socket PATH  the agent's socket (default: $FLEETSIM_AGENT_SOCKET or\n"
    "                     " AGENT_DEFAULT_SOCKET ")\n"
    "  -h, --help         this help\n"
    "\n"
    "example: fleetsim-agent submit --gpus 2 --time 1h --team vision -- python train.py --epochs 3\n";

static int absolute(const char *cwd, const char *path, char *out, size_t len)
{
    int n = path[0] == '/' ? snprintf(out, len, "%s", path) : snprintf(out, len, "%s/%s", cwd, path);
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int cmd_submit(int argc, char **argv)
{
    enum { O_TEAM = 256, O_REQUEUE, O_JSON, O_SOCKET, O_CLASS, O_KEY };
    static const struct option opts[] = {
        {"gpus", required_argument, NULL, 'g'},   {"time", required_argument, NULL, 't'},
        {"team", required_argument, NULL, O_TEAM}, {"name", required_argument, NULL, 'J'},
        {"output", required_argument, NULL, 'o'}, {"error", required_argument, NULL, 'e'},
        {"requeue", no_argument, NULL, O_REQUEUE}, {"json", no_argument, NULL, O_JSON},
        {"socket", required_argument, NULL, O_SOCKET}, {"help", no_argument, NULL, 'h'},
        {"class", required_argument, NULL, O_CLASS}, {"key", required_argument, NULL, O_KEY},
        {NULL, 0, NULL, 0},
    };
    const char *sock = socket_default(), *team = NULL, *name = NULL, *out = NULL, *errf = NULL, *job_class = NULL;
    const char *key = NULL;
    long long gpus = 1;
    int64_t limit_us = -1;
    int requeue = 0, json = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:g:t:J:o:e:h", opts, NULL)) != -1) {
        switch (c) {
        case 'g': {
            char *end;
            errno = 0;
            gpus = strtoll(optarg, &end, 10);
            if (errno || *end || gpus < 1 || gpus > 4096)
                return usage_error("submit", "option '--gpus' needs an integer from 1 to 4096, not '%s'", optarg);
            break;
        }
        case 't':
            if (config_parse_duration(optarg, &limit_us) != 0) {
                char *end;
                double v = strtod(optarg, &end);
                if (!*end && end != optarg && v <= 0)
                    return usage_error("submit", "time '%s' must be more than zero (e.g. 30s, 1h)", optarg);
                if (!*end && end != optarg)
                    return usage_error("submit", "time '%s' has no unit: did you mean '%ss' or '%sm'?", optarg,
                                       optarg, optarg);
                return usage_error("submit", "time '%s' is not a duration (90s, 30m, 1.5h, 2d, 1:30:00)", optarg);
            }
            break;
        case O_TEAM: team = optarg; break;
        case O_CLASS: job_class = optarg; break;
        case O_KEY:
            if (!*optarg || strlen(optarg) > 64 || strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                 "0123456789._:-") != strlen(optarg))
                return usage_error("submit", "key '%s' needs 1 to 64 letters, digits, '.', '_', ':' or '-'", optarg);
            key = optarg;
            break;
        case 'J': name = optarg; break;
        case 'o': out = optarg; break;
        case 'e': errf = optarg; break;
        case O_REQUEUE: requeue = 1; break;
        case O_JSON: json = 1; break;
        case O_SOCKET: sock = optarg; break;
        case 'h': fputs(submit_usage, stdout); return AGENT_OK;
        case ':': return usage_error("submit", "option '%s' needs a value", argv[optind - 1]);
        default: return usage_error("submit", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc)
        return usage_error("submit", "no command given (put it after '--')");
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return usage_error("submit", "cannot tell the current directory: %s", strerror(errno));
    json_t *job = json_object();
    json_t *args = json_array();
    for (int i = optind; i < argc; i++)
        json_array_append_new(args, json_string(argv[i]));
    json_object_set_new(job, "argv", args);
    json_object_set_new(job, "gpus", json_integer(gpus));
    if (limit_us > 0)
        json_object_set_new(job, "time_s", json_real((double)limit_us / 1e6));
    if (team)
        json_object_set_new(job, "team", json_string(team));
    if (name)
        json_object_set_new(job, "name", json_string(name));
    if (job_class)
        json_object_set_new(job, "class", json_string(job_class));
    json_object_set_new(job, "cwd", json_string(cwd));
    char path[PATH_MAX + 8];
    if (out) {
        if (absolute(cwd, out, path, sizeof path) != 0)
            return usage_error("submit", "output path too long");
        json_object_set_new(job, "output", json_string(path));
    }
    if (errf) {
        if (absolute(cwd, errf, path, sizeof path) != 0)
            return usage_error("submit", "error path too long");
        json_object_set_new(job, "error", json_string(path));
    }
    if (requeue)
        json_object_set_new(job, "requeue", json_true());
    json_t *env = json_array();
    for (char **e = environ; *e; e++)
        if (strchr(*e, '=') && strlen(*e) < API_MAX_ARG_BYTES && json_array_size(env) < API_MAX_ENV)
            json_array_append_new(env, json_string(*e));
    json_object_set_new(job, "env", env);
    char auto_key[48];
    if (!key) {
        if (random_key(auto_key, sizeof auto_key) != 0)
            return usage_error("submit", "cannot read /dev/urandom for an idempotency key: give --key");
        key = auto_key;
    }
    json_object_set_new(job, "key", json_string(key));
    json_t *resp;
    int rc = call_retrying(sock, json_pack("{s:s, s:o}", "op", "submit", "job", job), &resp);
    if (rc != AGENT_OK)
        return rc;
    if (json)
        print_json(resp);
    else
        printf("%lld\n", (long long)jint(resp, "id", 0));
    json_decref(resp);
    return AGENT_OK;
}

struct simple_opts {
    const char *sock;
    int json;
    int mine;
    long long limit;
    const char *reason;
};

static const char *usage_of(const char *cmd)
{
    if (strcmp(cmd, "queue") == 0)
        return "usage: fleetsim-agent queue [--json] [--socket PATH]\n\n"
               "Lists running and waiting jobs: id, state, user, team, name, GPUs, time\n"
               "limit, time running (or waiting), and where it runs (NODE:GPU,GPU) or, for\n"
               "a waiting job the policy has planned, when it should start. Anyone may\n"
               "read the queue.\n";
    if (strcmp(cmd, "show") == 0)
        return "usage: fleetsim-agent show [--json] [--socket PATH] ID\n\n"
               "Everything about one job: state, times, GPUs (UUIDs), exit code or signal,\n"
               "reason, and its events. Command line, directory and output files are\n"
               "shown to the job's owner and admins only.\n";
    if (strcmp(cmd, "cancel") == 0)
        return "usage: fleetsim-agent cancel [--socket PATH] ID...\n\n"
               "Cancels jobs: a waiting job leaves the queue; a running job gets SIGTERM,\n"
               "then SIGKILL of its whole process group after the agent's kill_grace.\n"
               "Only the job's owner or an admin (root, admin_group) may cancel it.\n";
    if (strcmp(cmd, "history") == 0)
        return "usage: fleetsim-agent history [--limit N] [--mine] [--json] [--socket PATH]\n\n"
               "Jobs that ended, newest first (default: the last 50): state, exit code,\n"
               "run time, GPUs. --mine shows only your own.\n";
    if (strcmp(cmd, "nodes") == 0)
        return "usage: fleetsim-agent nodes [--json] [--socket PATH]\n\n"
               "The agent's nodes and GPUs: UUID, model, memory, PCI bus id, NVLink domain,\n"
               "the job on it, and drains with their reason (an admin's, or a health rule's:\n"
               "critical XID, uncorrectable ECC).\n";
    if (strcmp(cmd, "drain") == 0)
        return "usage: fleetsim-agent drain [--reason TEXT] [--socket PATH] TARGET\n\n"
               "Stops new jobs from starting on TARGET: a node name, a GPU UUID, or\n"
               "NODE:INDEX for one GPU. Running jobs finish. Admins only. Drains survive\n"
               "restarts; 'resume' ends them.\n";
    if (strcmp(cmd, "resume") == 0)
        return "usage: fleetsim-agent resume [--socket PATH] TARGET\n\n"
               "Ends a drain of a node or GPU (also one a health rule set: the errors seen\n"
               "so far are then taken as acknowledged). Admins only.\n";
    return "usage: fleetsim-agent status [--json] [--socket PATH]\n\n"
           "Is the agent up? Its version, policy, queue and running counts, and whether\n"
           "you are an admin.\n";
}

static int parse_simple(const char *cmd, int argc, char **argv, struct simple_opts *o, int min_args, int max_args)
{
    enum { O_JSON = 256, O_SOCKET, O_MINE, O_LIMIT, O_REASON };
    static const struct option opts[] = {
        {"json", no_argument, NULL, O_JSON},       {"socket", required_argument, NULL, O_SOCKET},
        {"mine", no_argument, NULL, O_MINE},       {"limit", required_argument, NULL, O_LIMIT},
        {"reason", required_argument, NULL, O_REASON}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->sock = socket_default();
    int c;
    optind = 1;
    opterr = 0;
    int is_read = strcmp(cmd, "queue") == 0 || strcmp(cmd, "show") == 0 || strcmp(cmd, "history") == 0 ||
                  strcmp(cmd, "nodes") == 0 || strcmp(cmd, "status") == 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case O_JSON:
            if (!is_read)
                return usage_error(cmd, "'%s' has no --json", cmd);
            o->json = 1;
            break;
        case O_SOCKET: o->sock = optarg; break;
        case O_MINE:
            if (strcmp(cmd, "history") != 0)
                return usage_error(cmd, "--mine applies to 'history' only");
            o->mine = 1;
            break;
        case O_LIMIT: {
            char *end;
            errno = 0;
            o->limit = strtoll(optarg, &end, 10);
            if (strcmp(cmd, "history") != 0)
                return usage_error(cmd, "--limit applies to 'history' only");
            if (errno || *end || o->limit < 1 || o->limit > 1000000)
                return usage_error(cmd, "option '--limit' needs an integer from 1 to 1000000, not '%s'", optarg);
            break;
        }
        case O_REASON:
            if (strcmp(cmd, "drain") != 0)
                return usage_error(cmd, "--reason applies to 'drain' only");
            if (strlen(optarg) > 120)
                return usage_error(cmd, "the reason is longer than 120 bytes");
            o->reason = optarg;
            break;
        case 'h': fputs(usage_of(cmd), stdout); exit(AGENT_OK);
        case ':': return usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        default: return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    int n = argc - optind;
    if (n < min_args)
        return usage_error(cmd, min_args == 1 && max_args == 1 ? "expected one argument" : "missing argument");
    if (n > max_args)
        return usage_error(cmd, "unexpected argument '%s'", argv[optind + max_args]);
    return AGENT_OK;
}

static int parse_id(const char *cmd, const char *text, long long *id)
{
    char *end;
    errno = 0;
    *id = strtoll(text, &end, 10);
    if (errno || *end || *id < 1)
        return usage_error(cmd, "'%s' is not a job id", text);
    return AGENT_OK;
}

/* Sends req (taken) for a read command. With --json the whole answer is
 * printed here and *resp is NULL; otherwise *resp is the caller's to print
 * and release. */
static int request(const struct simple_opts *o, json_t *req, json_t **resp)
{
    int rc = call(o->sock, req, resp);
    if (rc != AGENT_OK)
        return rc;
    if (o->json) {
        print_json(*resp);
        json_decref(*resp);
        *resp = NULL;
    }
    return AGENT_OK;
}

static void print_job_header(const char *time_column, const char *last_column)
{
    printf("%-7s %-9s %-10s %-8s %-12s %4s %11s %11s  %s\n", "ID", "STATE", "USER", "TEAM", "NAME", "GPUS", "LIMIT",
           time_column, last_column);
}

static int cmd_queue(int argc, char **argv)
{
    struct simple_opts o;
    int rc = parse_simple("queue", argc, argv, &o, 0, 0);
    json_t *resp;
    if (rc != AGENT_OK || (rc = request(&o, json_pack("{s:s}", "op", "queue"), &resp)) != AGENT_OK || !resp)
        return rc;
    int64_t now = jint(resp, "now_us", now_us());
    print_job_header("TIME", "WHERE");
    json_t *jobs = json_object_get(resp, "jobs");
    for (size_t i = 0; i < json_array_size(jobs); i++)
        print_job_row(json_array_get(jobs, i), now);
    json_decref(resp);
    return AGENT_OK;
}

static int cmd_history(int argc, char **argv)
{
    struct simple_opts o;
    int rc = parse_simple("history", argc, argv, &o, 0, 0);
    json_t *req = json_pack("{s:s}", "op", "history");
    if (rc != AGENT_OK) {
        json_decref(req);
        return rc;
    }
    if (o.limit)
        json_object_set_new(req, "limit", json_integer(o.limit));
    if (o.mine)
        json_object_set_new(req, "mine", json_true());
    json_t *resp;
    if ((rc = request(&o, req, &resp)) != AGENT_OK || !resp)
        return rc;
    print_job_header("RAN", "EXIT/REASON");
    json_t *jobs = json_object_get(resp, "jobs");
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *j = json_array_get(jobs, i);
        char limit[32], ran[32], why[300];
        client_format_duration(limit, sizeof limit, jint(j, "limit_us", 0));
        int64_t start = jint(j, "start_us", -1), end = jint(j, "end_us", -1);
        if (start >= 0 && end >= 0)
            client_format_duration(ran, sizeof ran, end - start);
        else
            snprintf(ran, sizeof ran, "-");
        if (json_object_get(j, "exit_code"))
            snprintf(why, sizeof why, "exit %lld%s%s", (long long)jint(j, "exit_code", 0),
                     json_object_get(j, "reason") ? ": " : "", jstr(j, "reason", ""));
        else
            snprintf(why, sizeof why, "%s", jstr(j, "reason", "-"));
        printf("%-7lld %-9s %-10.10s %-8.8s %-12.12s %4lld %11s %11s  %s\n", (long long)jint(j, "id", 0),
               jstr(j, "state", "?"), jstr(j, "user", "-"), jstr(j, "team", "-"), jstr(j, "name", "-"),
               (long long)jint(j, "gpus", 0), limit, ran, why);
    }
    json_decref(resp);
    return AGENT_OK;
}

static int cmd_show(int argc, char **argv)
{
    struct simple_opts o;
    long long id;
    int rc = parse_simple("show", argc, argv, &o, 1, 1);
    if (rc != AGENT_OK || (rc = parse_id("show", argv[optind], &id)) != AGENT_OK)
        return rc;
    json_t *resp;
    if ((rc = call(o.sock, json_pack("{s:s, s:I}", "op", "show", "id", (json_int_t)id), &resp)) != AGENT_OK)
        return rc;
    json_t *j = json_object_get(resp, "job");
    if (o.json) {
        print_json(j);
        json_decref(resp);
        return AGENT_OK;
    }
    char t[64], d[32];
    printf("id:          %lld\nstate:       %s\nuser:        %s (uid %lld)\n", (long long)jint(j, "id", 0),
           jstr(j, "state", "?"), jstr(j, "user", "?"), (long long)jint(j, "uid", -1));
    if (json_object_get(j, "team"))
        printf("team:        %s\n", jstr(j, "team", ""));
    if (json_object_get(j, "name"))
        printf("name:        %s\n", jstr(j, "name", ""));
    client_format_duration(d, sizeof d, jint(j, "limit_us", 0));
    printf("gpus:        %lld\nlimit:       %s\n", (long long)jint(j, "gpus", 0), d);
    format_time(t, sizeof t, jint(j, "submit_us", 0));
    printf("submitted:   %s\n", t);
    if (jint(j, "start_us", -1) >= 0) {
        format_time(t, sizeof t, jint(j, "start_us", 0));
        client_format_duration(d, sizeof d, jint(j, "start_us", 0) - jint(j, "submit_us", 0));
        printf("started:     %s (waited %s)\n", t, d);
    }
    if (jint(j, "end_us", -1) >= 0) {
        format_time(t, sizeof t, jint(j, "end_us", 0));
        printf("ended:       %s\n", t);
    }
    if (jint(j, "reserved_us", -1) >= 0) {
        format_time(t, sizeof t, jint(j, "reserved_us", 0));
        printf("planned:     %s\n", t);
    }
    json_t *uu = json_object_get(j, "gpu_uuids"), *pl = json_object_get(j, "placement");
    for (size_t i = 0; i < json_array_size(uu); i++)
        printf("%s %s %s\n", i ? "            " : "gpu:        ", json_string_value(json_array_get(uu, i)),
               json_array_size(pl) > i ? json_string_value(json_array_get(pl, i)) : "");
    if (json_object_get(j, "exit_code"))
        printf("exit code:   %lld\n", (long long)jint(j, "exit_code", 0));
    if (json_object_get(j, "signal"))
        printf("signal:      %lld\n", (long long)jint(j, "signal", 0));
    if (json_object_get(j, "reason"))
        printf("reason:      %s\n", jstr(j, "reason", ""));
    json_t *argvj = json_object_get(j, "argv");
    if (argvj) {
        printf("command:    ");
        for (size_t i = 0; i < json_array_size(argvj); i++)
            printf(" %s", json_string_value(json_array_get(argvj, i)));
        printf("\ncwd:         %s\nstdout:      %s\nstderr:      %s\n", jstr(j, "cwd", ""), jstr(j, "output", ""),
               jstr(j, "error", ""));
    }
    json_t *ev = json_object_get(j, "events");
    for (size_t i = 0; i < json_array_size(ev); i++) {
        json_t *e = json_array_get(ev, i);
        format_time(t, sizeof t, jint(e, "ts_us", 0));
        printf("%s %s %s%s%s\n", i ? "            " : "events:     ", t, jstr(e, "kind", ""),
               *jstr(e, "detail", "") ? ": " : "", jstr(e, "detail", ""));
    }
    json_decref(resp);
    return AGENT_OK;
}

static int cmd_cancel(int argc, char **argv)
{
    struct simple_opts o;
    int rc = parse_simple("cancel", argc, argv, &o, 1, 1000000);
    if (rc != AGENT_OK)
        return rc;
    int worst = AGENT_OK;
    for (int i = optind; i < argc; i++) {
        long long id;
        if ((rc = parse_id("cancel", argv[i], &id)) != AGENT_OK)
            return rc;
        json_t *resp;
        rc = call(o.sock, json_pack("{s:s, s:I}", "op", "cancel", "id", (json_int_t)id), &resp);
        if (rc != AGENT_OK) {
            if (rc > worst)
                worst = rc;
            continue;
        }
        printf("%lld %s\n", id, jstr(resp, "state", "cancelled"));
        json_decref(resp);
    }
    return worst;
}

static int cmd_nodes(int argc, char **argv)
{
    struct simple_opts o;
    int rc = parse_simple("nodes", argc, argv, &o, 0, 0);
    json_t *resp;
    if (rc != AGENT_OK || (rc = request(&o, json_pack("{s:s}", "op", "nodes"), &resp)) != AGENT_OK || !resp)
        return rc;
    json_t *nodes = json_object_get(resp, "nodes");
    for (size_t i = 0; i < json_array_size(nodes); i++) {
        json_t *n = json_array_get(nodes, i);
        printf("%s  %s  %lld GPUs: %lld free, %lld allocated, %lld drained%s%s\n", jstr(n, "name", "?"),
               jstr(n, "state", "?"), (long long)jint(n, "gpus", 0), (long long)jint(n, "free", 0),
               (long long)jint(n, "allocated", 0), (long long)jint(n, "drained", 0),
               json_object_get(n, "drain_reason") ? ": " : "", jstr(n, "drain_reason", ""));
        json_t *gl = json_object_get(n, "gpu_list");
        for (size_t k = 0; k < json_array_size(gl); k++) {
            json_t *g = json_array_get(gl, k);
            char state[200];
            if (json_is_true(json_object_get(g, "drained")))
                snprintf(state, sizeof state, "drained: %s", jstr(g, "drain_reason", ""));
            else if (json_object_get(g, "job"))
                snprintf(state, sizeof state, "job %lld", (long long)jint(g, "job", 0));
            else
                snprintf(state, sizeof state, "free");
            char nv[16] = "-";
            if (json_object_get(g, "nvlink_domain"))
                snprintf(nv, sizeof nv, "nvl%lld", (long long)jint(g, "nvlink_domain", 0));
            printf("  %2lld  %s  %-28.28s %6lld MiB  %-16s %-5s %s\n", (long long)jint(g, "index", 0),
                   jstr(g, "uuid", "?"), jstr(g, "model", "?"), (long long)(jint(g, "memory_bytes", 0) >> 20),
                   jstr(g, "pci_bus_id", "-"), nv, state);
        }
    }
    json_decref(resp);
    return AGENT_OK;
}

static int cmd_drain(const char *cmd, int argc, char **argv)
{
    struct simple_opts o;
    int rc = parse_simple(cmd, argc, argv, &o, 1, 1);
    if (rc != AGENT_OK)
        return rc;
    json_t *req = json_pack("{s:s, s:s}", "op", cmd, "target", argv[optind]);
    if (o.reason)
        json_object_set_new(req, "reason", json_string(o.reason));
    json_t *resp;
    if ((rc = call(o.sock, req, &resp)) != AGENT_OK)
        return rc;
    printf("%s %s\n", jstr(resp, "target", argv[optind]), jstr(resp, "state", ""));
    json_decref(resp);
    return AGENT_OK;
}

static int cmd_status(int argc, char **argv)
{
    struct simple_opts o;
    int rc = parse_simple("status", argc, argv, &o, 0, 0);
    json_t *resp;
    if (rc != AGENT_OK || (rc = request(&o, json_pack("{s:s}", "op", "ping"), &resp)) != AGENT_OK || !resp)
        return rc;
    printf("fleetsim-agent %s up: policy %s, %lld queued, %lld running; you are uid %lld%s\n",
               jstr(resp, "version", "?"), jstr(resp, "policy", "?"), (long long)jint(resp, "queued", 0),
               (long long)jint(resp, "running", 0), (long long)jint(resp, "uid", -1),
               json_is_true(json_object_get(resp, "admin")) ? " (admin)" : "");
    const char *failed = json_string_value(json_object_get(resp, "policy_failed"));
    if (failed)
        printf("POLICY FAILED: %s\nrunning jobs go on; no job starts until the agent is restarted with a working "
               "policy\n",
               failed);
    const char *store = json_string_value(json_object_get(resp, "store_unavailable"));
    if (store)
        printf("STATE STORE CANNOT WRITE: %s\nrunning jobs go on; no job starts and no submission is accepted until "
               "it can (free space in the state folder; the agent resumes by itself)\n",
               store);
    json_decref(resp);
    return AGENT_OK;
}

int client_main(const char *cmd, int argc, char **argv)
{
    if (strcmp(cmd, "submit") == 0)
        return cmd_submit(argc, argv);
    if (strcmp(cmd, "queue") == 0)
        return cmd_queue(argc, argv);
    if (strcmp(cmd, "show") == 0)
        return cmd_show(argc, argv);
    if (strcmp(cmd, "cancel") == 0)
        return cmd_cancel(argc, argv);
    if (strcmp(cmd, "history") == 0)
        return cmd_history(argc, argv);
    if (strcmp(cmd, "nodes") == 0)
        return cmd_nodes(argc, argv);
    if (strcmp(cmd, "drain") == 0 || strcmp(cmd, "resume") == 0)
        return cmd_drain(cmd, argc, argv);
    return cmd_status(argc, argv);
}
